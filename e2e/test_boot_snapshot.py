"""Memory snapshots (web/boot/snapshot.js, docs/performance.md): the one the build ships (made
under Node by tools/make_snapshot.mjs), which a first visit restores and keeps, and the one a
visit saves when it boots afresh; a later visit restores the kept one. What a snapshot restores
works as a fresh boot does — pydantic-core's extension included, which lives outside the memory
a snapshot holds. A snapshot that does not restore, or a shipped one that is not this build's
or not the file its manifest describes, is refused, and the page boots afresh without failing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Page, Route

from conftest import DIST, boot_runtime

MANIFEST = json.loads((DIST / "pyodide" / "agrun-snapshot.json").read_text(encoding="utf-8"))

SAVED = """async () => {
    const cache = await caches.open('agrun-snapshots');
    return (await cache.keys()).map((r) => new URL(r.url).pathname);
}"""


def wait_for_saved_snapshot(page: Page) -> list[str]:
    """The first visit writes its snapshot in the background, a second after its boot: wait
    until it is there (wait_for_function would take the promise itself for a true value)."""
    for _ in range(150):
        keys: list[str] = page.evaluate(SAVED)
        if keys:
            return keys
        page.wait_for_timeout(200)
    raise AssertionError("no snapshot was saved within 30 s")


def rewrite_kept(page: Page, key: str, change: str) -> None:
    """Rewrite the kept entry ``key`` with its header as it was and its bytes changed by
    ``change``, a JS function body given ``bytes``."""
    page.evaluate(
        """async ([key, change]) => {
            const cache = await caches.open('agrun-snapshots');
            const saved = await cache.match(key);
            const bytes = new Function('bytes', change)(new Uint8Array(await saved.arrayBuffer()));
            await cache.put(key, new Response(bytes, { headers: saved.headers }));
        }""",
        [key, change],
    )


# A skill whose helper call pydantic refuses: Python catches pydantic-core's ValidationError
# and answers with a typed error. After a restore that reset the extension's statics, the
# error raised was a new class that `except ValidationError` missed (an untyped PythonError).
PROBE = """{ skills: [{ name: 'probe', description: 'appends a bad entry', run(input, context, helpers) {
    try { helpers.appendMemory({ kind: 'note' }); return 'appended'; } catch (e) { return String(e.code); }
} }] }"""


def boot(page: Page, options: str = "{}") -> None:
    """A runtime that restores the build's snapshot on a first visit (`shippedSnapshot`)."""
    boot_runtime(page, f"{{ ...{PROBE}, shippedSnapshot: true, ...{options} }}")


def turn_and_validation(page: Page) -> dict[str, Any]:
    """A turn (its records are pydantic models: pydantic-core's compiled validators), an
    import refused with its typed error, and a helper's entry that pydantic refuses."""
    result: dict[str, Any] = page.evaluate(
        """async () => {
            const refusedEntry = (await rt.run('probe', { skill: 'probe' })).output;
            const turn = await rt.run('hello');
            let refused = null;
            try {
                const data = JSON.parse(await rt.exportSession());
                data.session.turns[0].messages[0].role = 'wizard';
                await rt.importSession(JSON.stringify(data), { replace: true });
            } catch (error) { refused = error.code; }
            return { ok: turn.state.status === 'succeeded', output: turn.output, refused, refusedEntry,
                     history: rt.history().length, boot: rt.diagnostics().boot };
        }"""
    )
    return result


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_second_visit_restores_the_snapshot_and_works_as_a_fresh_boot(
    page: Page, worker: bool
) -> None:
    options = "{ worker: true }" if worker else "{}"
    boot(page, options)
    first = turn_and_validation(page)
    assert first["boot"] == "shipped-snapshot"
    # The shipped snapshot is kept, so the next visit need not fetch it.
    keys = wait_for_saved_snapshot(page)
    scope = "worker" if worker else "page"
    assert len(keys) == 1 and f"/agrun-snapshot/{scope}/" in keys[0]

    page.reload()
    boot(page, options)
    second = turn_and_validation(page)
    assert second["boot"] == "snapshot"
    assert {k: v for k, v in second.items() if k != "boot"} == {
        k: v for k, v in first.items() if k != "boot"
    }
    assert second["ok"] and second["refused"] == "import_rejected"
    assert first["refusedEntry"] == second["refusedEntry"] == "invalid_memory_entry"


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_warm_visit_puts_the_packages_files_back_instead_of_installing_the_wheels(
    page: Page, worker: bool
) -> None:
    options = "worker: true," if worker else ""
    boot(page, f"{{ {options} }}")
    wait_for_saved_snapshot(page)
    wheels: list[str] = []
    page.on("request", lambda r: wheels.append(r.url) if r.url.endswith(".whl") else None)
    page.reload()
    # The test model's Python (agrun._testmodel) is imported when a runtime first uses it: no
    # snapshot holds it, so it is read from its file, one of those the visit put back.
    boot(page, f"{{ {options} provider: agrun.testModel() }}")
    result = page.evaluate(
        """async () => {
            const turn = await rt.run('hello');
            const { boot, bootMarks } = rt.diagnostics();
            return { ok: turn.state.status === 'succeeded', output: turn.output, boot,
                     marks: bootMarks.map(([name]) => name) };
        }"""
    )
    assert result["ok"] and result["output"], result
    assert result["boot"] == "snapshot"
    assert "files-kept" in result["marks"]
    assert wheels == []
    # The entry is the snapshot, then its files: the validation a restore needs still works.
    assert turn_and_validation(page)["refusedEntry"] == "invalid_memory_entry"


# When this visit's boot asked for pyodide.asm.wasm and for the lock, in ms of its clock.
WASM_AND_LOCK = """() => {
    const asked = (end) => performance.getEntriesByType('resource')
        .filter((e) => e.name.endsWith(end)).map((e) => e.startTime);
    return { wasm: asked('/pyodide.asm.wasm'), lock: asked('/pyodide-lock.json'),
             boot: rt.diagnostics().boot };
}"""


def test_every_boot_fetches_the_interpreters_wasm_once_as_it_starts(page: Page) -> None:
    """The wasm, a boot's longest download, is compiled as it arrives from the boot's first
    step, not from loadPyodide's after the lock and the snapshot lookup; and Pyodide's own
    fetch of it is held, so it is downloaded once. Both for a first visit (a fresh boot) and
    a warm one (a restore)."""
    wasm: list[str] = []
    page.on("request", lambda r: wasm.append(r.url) if r.url.endswith(".wasm") else None)
    boot_runtime(page, "{ provider: agrun.testModel() }")
    first = page.evaluate(WASM_AND_LOCK)
    wait_for_saved_snapshot(page)
    page.reload()
    boot_runtime(page, "{ provider: agrun.testModel() }")
    second = page.evaluate(WASM_AND_LOCK)
    assert (first["boot"], second["boot"]) == ("saved-snapshot", "snapshot")
    for visit in (first, second):
        assert len(visit["wasm"]) == 1 and len(visit["lock"]) == 1, visit
        assert visit["wasm"][0] <= visit["lock"][0], visit
    assert len(wasm) == 2, wasm
    assert page.evaluate("async () => (await rt.run('hello')).state.status") == "succeeded"


def test_kept_files_that_do_not_read_back_leave_the_wheels_to_install(
    page: Page, problems: Any
) -> None:
    boot(page)
    (key,) = wait_for_saved_snapshot(page)
    # The snapshot stays whole; the files' section after it loses its last byte.
    rewrite_kept(page, key, "return bytes.subarray(0, bytes.length - 1);")
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    wheels: list[str] = []
    page.on("request", lambda r: wheels.append(r.url) if r.url.endswith(".whl") else None)
    page.reload()
    boot(page)
    after = turn_and_validation(page)
    assert after["boot"] == "snapshot" and after["ok"]
    assert after["refusedEntry"] == "invalid_memory_entry"
    assert any("did not read back" in w for w in warnings)
    assert len(wheels) == 6


def test_a_snapshot_that_does_not_restore_is_dropped_and_the_page_boots_afresh(
    page: Page, problems: Any
) -> None:
    boot(page)
    (key,) = wait_for_saved_snapshot(page)
    # Keep the entry's header (so it passes as agrun's) but spoil the memory image.
    rewrite_kept(page, key, "return bytes.fill(0xff, 0, Math.min(bytes.length, 1 << 20));")
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    page.reload()
    boot(page)
    after = turn_and_validation(page)
    assert after["ok"] and after["refused"] == "import_rejected"
    # Booted afresh (not from the shipped one: a failed restore falls back to the surest
    # boot), and saved a good snapshot again.
    assert after["boot"] == "saved-snapshot"
    assert any("did not restore" in w for w in warnings)
    wait_for_saved_snapshot(page)
    page.reload()
    boot(page)
    assert page.evaluate("rt.diagnostics().boot") == "snapshot"


def fresh_turn(page: Page) -> dict[str, Any]:
    """What a page that boots afresh does: a turn, a refused import, and a saved snapshot."""
    boot(page)
    result = turn_and_validation(page)
    assert result["ok"] and result["output"] == "echo: hello"
    assert result["refused"] == "import_rejected"
    assert result["refusedEntry"] == "invalid_memory_entry"
    wait_for_saved_snapshot(page)
    return result


@pytest.mark.parametrize("spoil", ["bytes", "truncated"])
def test_a_shipped_snapshot_that_is_not_its_manifests_file_is_refused(
    page: Page, spoil: str
) -> None:
    def spoiled(route: Route) -> None:
        body = bytearray(route.fetch().body())
        if spoil == "bytes":
            body[1 << 20] ^= 0xFF  # one byte of the memory image: only the sha256 shows it
        else:
            del body[len(body) // 2 :]
        route.fulfill(status=200, body=bytes(body), content_type="application/octet-stream")

    page.route(f"**/pyodide/{MANIFEST['file']}", spoiled)
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    assert fresh_turn(page)["boot"] == "saved-snapshot"
    assert any("is not the file its manifest describes" in w for w in warnings)


def test_a_shipped_manifest_whose_zero_runs_do_not_fit_its_file_is_refused(page: Page) -> None:
    # The file is the manifest's (length, sha256), but one zero run too few: restored, the
    # memory after it would sit a run too early.
    holes = MANIFEST["holes"]
    assert holes, "the build's snapshot was kept with its zero runs"
    other = {**MANIFEST, "holes": holes[:-1]}
    page.route(
        "**/pyodide/agrun-snapshot.json",
        lambda route: route.fulfill(status=200, json=other),
    )
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    assert fresh_turn(page)["boot"] == "saved-snapshot"
    assert any("is not one agrun wrote" in w for w in warnings)


# A snapshot as makeSnapshot makes it (a header whose second word is where the memory starts,
# then a memory of 64 KiB pages) with zeros in pages 1-2, 5 and 7 (the last), and a lone zero
# byte in page 4; kept without its zero runs, then written into memory that held 0xaa
# everywhere.
ZERO_RUNS = """async () => {
    const { withoutZeroRuns, putImage } = await import('/boot/snapshot.js');
    const page = 1 << 16, start = 32, memory = 8 * page;
    const bytes = new Uint8Array(start + memory);
    for (let i = start; i < bytes.length; i++) bytes[i] = (i % 251) + 1;
    new Uint32Array(bytes.buffer, 0, 2)[1] = start;
    for (const [from, pages] of [[1, 2], [5, 1], [7, 1]]) {
        bytes.fill(0, start + from * page, start + (from + pages) * page);
    }
    bytes[start + 4 * page + 5] = 0;
    const made = { bytes, meta: { format: 2, length: bytes.length, memory, holes: [], libraries: [] } };
    const kept = withoutZeroRuns(made);
    const heap = new Uint8Array(memory).fill(0xaa);
    putImage(heap, kept.bytes, kept.meta);
    return {
        holes: kept.meta.holes, length: kept.bytes.length, metaLength: kept.meta.length,
        header: Array.from(kept.bytes.subarray(0, start)).join() === Array.from(bytes.subarray(0, start)).join(),
        same: heap.every((byte, i) => byte === bytes[start + i]),
        keptAsItIs: withoutZeroRuns(kept) === kept,
    };
}"""


def test_a_snapshot_is_kept_without_its_zero_runs_and_written_back_with_them(
    page: Page,
) -> None:
    page.goto("/blank.html")
    result = page.evaluate(ZERO_RUNS)
    page_size = 1 << 16
    assert result["holes"] == [
        [page_size, 2 * page_size],
        [5 * page_size, page_size],
        [7 * page_size, page_size],
    ]
    assert result["length"] == result["metaLength"] == 32 + 4 * page_size
    assert result["header"] and result["same"] and result["keptAsItIs"]


# Three files packed as a boot keeps them (packSiteFiles reads them from a stand-in FS), read
# back, and then the same section with its index naming a path that climbs out of
# site-packages, or a file longer than the section holds.
SITE_FILES = """async () => {
    const { packSiteFiles, unpackSiteFiles } = await import('/boot/site-files.js');
    const site = '/lib/python3.14/site-packages';
    const files = { [`${site}/a/__init__.pyc`]: [1, 2, 3], [`${site}/a/py.typed`]: [],
                    [`${site}/a-1.0.dist-info/METADATA`]: [77, 101, 116, 97] };
    const FS = { readFile: (path) => Uint8Array.from(files[path]) };
    const { bytes, meta } = packSiteFiles({ FS }, Object.keys(files));
    const back = unpackSiteFiles(bytes, meta, site).map(([path, data]) => [path, Array.from(data)]);
    const tampered = (index) => {
        const text = new TextEncoder().encode(JSON.stringify(index));
        const data = bytes.subarray(meta.index);
        const section = new Uint8Array(text.length + data.length);
        section.set(text);
        section.set(data, text.length);
        try {
            unpackSiteFiles(section, { index: text.length, length: section.length }, site);
            return 'read';
        } catch (error) { return error.message; }
    };
    return {
        back, same: JSON.stringify(back) === JSON.stringify(Object.entries(files)),
        climbs: tampered([[`${site}/a/../../../etc/passwd`, 3], [`${site}/a/py.typed`, 0], [`${site}/m`, 4]]),
        outside: tampered([['/tmp/a', 3], [`${site}/a/py.typed`, 0], [`${site}/m`, 4]]),
        longer: tampered([[`${site}/a`, 3], [`${site}/b`, 0], [`${site}/m`, 5]]),
        short: tampered([[`${site}/a`, 3], [`${site}/b`, 0], [`${site}/m`, 3]]),
    };
}"""


def test_kept_files_read_back_as_packed_and_a_section_that_names_another_place_is_refused(
    page: Page,
) -> None:
    page.goto("/blank.html")
    result = page.evaluate(SITE_FILES)
    assert result["same"], result["back"]
    assert "not a file of /lib/python3.14/site-packages" in result["climbs"]
    assert "not a file of /lib/python3.14/site-packages" in result["outside"]
    assert "not a file of" in result["longer"]
    assert "do not fill their section" in result["short"]


def test_a_shipped_snapshot_of_another_build_is_not_fetched(page: Page) -> None:
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if MANIFEST["file"] in r.url else None)
    other = {**MANIFEST, "identity": "0" * 64}
    page.route(
        "**/pyodide/agrun-snapshot.json",
        lambda route: route.fulfill(status=200, json=other),
    )
    assert fresh_turn(page)["boot"] == "saved-snapshot"
    assert fetched == []


def test_without_the_option_a_first_visit_imports_and_fetches_no_shipped_snapshot(
    page: Page,
) -> None:
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "agrun-snapshot" in r.url else None)
    boot_runtime(page, PROBE)
    result = turn_and_validation(page)
    assert result["ok"] and result["refusedEntry"] == "invalid_memory_entry"
    # Booted afresh (agrun imported) and saved its own snapshot for the next visit.
    assert result["boot"] == "saved-snapshot"
    assert fetched == []


# What Python's `js` hands out, and any JS object an agrun module holds at module level. While
# a snapshot can be made, `js` is Pyodide's proxy that records how each object was reached;
# an object taken through it stays behind that proxy, and every call through it costs.
SEES_THE_PAGE = """async () => {
    const { bootPyodide, resolveIndexURL } = await import('/boot/boot.js');
    const py = await bootPyodide(resolveIndexURL(), () => {});
    const held = py.runPython(`
import sys
from pyodide.ffi import JsProxy
[f"{name}.{key}" for name, module in list(sys.modules.items()) if name.startswith("agrun")
 for key, value in list(vars(module).items()) if isinstance(value, JsProxy)]`);
    return { json: py.runPython('import js\\njs.JSON') === JSON,
             fetch: py.runPython('from js import fetch\\nfetch') === fetch,
             held: held.toJs(), boot: rt.diagnostics().boot };
}"""


@pytest.mark.parametrize("shipped", [False, True], ids=["saved", "shipped"])
def test_after_every_kind_of_boot_python_sees_the_pages_own_globals(
    page: Page, shipped: bool
) -> None:
    """A first visit that makes a snapshot, one that restores the shipped one, and a later
    visit that restores the kept one: `js` gives the page's own objects, not the recording
    proxy, and no agrun module keeps a JS object from boot (the adapters look them up when
    they run). A restored `js` was that proxy (a turn start's read 1.9 ms against 1.4)."""

    def visit() -> dict[str, Any]:
        if shipped:
            boot(page)
        else:
            boot_runtime(page, PROBE)
        seen: dict[str, Any] = page.evaluate(SEES_THE_PAGE)
        assert page.evaluate("async () => (await rt.run('hello')).output") == "echo: hello"
        return seen

    first = visit()
    assert first == {
        "json": True,
        "fetch": True,
        "held": [],
        "boot": "shipped-snapshot" if shipped else "saved-snapshot",
    }
    wait_for_saved_snapshot(page)
    page.reload()
    assert visit() == {"json": True, "fetch": True, "held": [], "boot": "snapshot"}
