"""The memory snapshot a first visit saves (web/boot/snapshot.js, docs/performance.md): a second
visit restores the interpreter from it, and what it restores works as a fresh boot does —
pydantic-core's extension included, which lives outside the memory a snapshot holds. A
snapshot that does not restore is dropped, and the page boots afresh without failing."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from conftest import boot_runtime

SAVED = """async () => {
    const cache = await caches.open('agrun-snapshots');
    return (await cache.keys()).map((r) => new URL(r.url).pathname);
}"""


def wait_for_saved_snapshot(page: Page) -> list[str]:
    """The first visit writes its snapshot in the background: wait until it is there."""
    page.wait_for_function(f"({SAVED})().then((keys) => keys.length > 0)")
    keys: list[str] = page.evaluate(SAVED)
    return keys


def turn_and_validation(page: Page) -> dict[str, Any]:
    """A turn (its records are pydantic models: pydantic-core's compiled validators), and an
    import refused with its typed error."""
    result: dict[str, Any] = page.evaluate(
        """async () => {
            const turn = await rt.run('hello');
            let refused = null;
            try {
                const data = JSON.parse(await rt.exportSession());
                data.session.turns[0].messages[0].role = 'wizard';
                await rt.importSession(JSON.stringify(data), { replace: true });
            } catch (error) { refused = error.code; }
            return { ok: turn.state.status === 'succeeded', output: turn.output, refused,
                     history: rt.history().length, boot: rt.diagnostics().boot };
        }"""
    )
    return result


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_second_visit_restores_the_snapshot_and_works_as_a_fresh_boot(
    page: Page, worker: bool
) -> None:
    options = "{ worker: true }" if worker else "{}"
    boot_runtime(page, options)
    first = turn_and_validation(page)
    assert first["boot"] in ("saved-snapshot", "fresh")
    keys = wait_for_saved_snapshot(page)
    scope = "worker" if worker else "page"
    assert len(keys) == 1 and f"/agrun-snapshot/{scope}/" in keys[0]

    page.reload()
    boot_runtime(page, options)
    second = turn_and_validation(page)
    assert second["boot"] == "snapshot"
    assert {k: v for k, v in second.items() if k != "boot"} == {
        k: v for k, v in first.items() if k != "boot"
    }
    assert second["ok"] and second["refused"] == "import_rejected"


def test_a_snapshot_that_does_not_restore_is_dropped_and_the_page_boots_afresh(
    page: Page, problems: Any
) -> None:
    boot_runtime(page)
    (key,) = wait_for_saved_snapshot(page)
    # Keep the entry's header (so it passes as agrun's) but spoil the memory image.
    page.evaluate(
        """async (key) => {
            const cache = await caches.open('agrun-snapshots');
            const saved = await cache.match(key);
            const bytes = new Uint8Array(await saved.arrayBuffer());
            bytes.fill(0xff, 0, Math.min(bytes.length, 1 << 20));
            await cache.put(key, new Response(bytes, { headers: saved.headers }));
        }""",
        key,
    )
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    page.reload()
    boot_runtime(page)
    after = turn_and_validation(page)
    assert after["ok"] and after["refused"] == "import_rejected"
    assert after["boot"] == "saved-snapshot"  # booted afresh, and saved a good one again
    assert any("did not restore" in w for w in warnings)
    wait_for_saved_snapshot(page)
    page.reload()
    boot_runtime(page)
    assert page.evaluate("rt.diagnostics().boot") == "snapshot"
