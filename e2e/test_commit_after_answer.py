"""A page keeps a turn after its answer (`commitAfterAnswer`, on by default: issue 25.5,
docs/storage.md): `settled()`, `rt.idle()` and `rt.close()` resolve once IndexedDB holds it,
in the page and in a worker; with the option off, `run()` resolves with it stored."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from conftest import boot_runtime

# Turns, then what the session's store holds at each point (a store of its own).
SCRIPT = """async ([db, how]) => {
    const stored = async () => {
        const store = (await import('/storage.js')).createSessionStore({ dbName: db });
        const snapshot = await store.loadSession('kept');
        store.close?.();
        return (snapshot?.turns ?? []).flatMap((turn) => turn.messages.map((m) => m.content));
    };
    const first = await rt.run('hello');
    const answered = rt.history().map((m) => m.content);
    if (how === 'settled') await agrun.settled();
    if (how === 'idle') await rt.idle();
    if (how === 'close') await rt.close();
    return { output: first.output, answered, kept: await stored() };
}"""


def options(db: str, worker: bool, extra: str = "") -> str:
    return (
        f"{{ storage: 'indexeddb', dbName: '{db}', sessionId: 'kept', "
        f"worker: {'true' if worker else 'false'}{extra} }}"
    )


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
@pytest.mark.parametrize("how", ["settled", "idle", "close"])
def test_the_turn_is_stored_once_the_page_waits_for_it(
    warm_page: Page, worker: bool, how: str
) -> None:
    db = f"e2e-kept-{how}-{'worker' if worker else 'page'}"
    boot_runtime(warm_page, options(db, worker))
    seen = warm_page.evaluate(SCRIPT, [db, how])
    assert seen["output"] == "echo: hello"
    assert seen["answered"] == ["hello", "echo: hello"]
    assert seen["kept"] == ["hello", "echo: hello"]


def test_with_the_option_off_run_resolves_with_the_turn_stored(warm_page: Page) -> None:
    db = "e2e-kept-before"
    boot_runtime(warm_page, options(db, False, ", commitAfterAnswer: false"))
    seen = warm_page.evaluate(SCRIPT, [db, "none"])
    assert seen["kept"] == ["hello", "echo: hello"]
    assert warm_page.evaluate("rt.diagnostics().liveProxies") == 0
