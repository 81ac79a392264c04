"""rt.listSessions / renameSession / clearSession / deleteSession (issue 23.6) in the page and
in worker mode, on IndexedDB: what the runtime holds after each, what the store holds after a
reload, the typed errors, and global memory staying."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

SCRIPT = """async (worker) => {
    const agrun = await import('/agrun.js');
    const make = (sessionId) => agrun.createRuntime({
        worker, storage: 'indexeddb', dbName: 'e2e-conversations-' + worker, sessionId });
    const mine = await make('mine');
    const other = await make('other');
    await mine.run('plan a trip');
    await other.run('buy bread');
    await mine.promoteToGlobalMemory(['prefers trains']);
    await mine.renameSession('mine', 'Trip');
    const listed = await mine.listSessions();
    const failures = {};
    for (const [name, call] of [
        ['unknown', () => mine.deleteSession('never')],
        ['blank', () => mine.renameSession('mine', '   ')],
        ['notString', () => mine.clearSession(7)],
    ]) {
        try { await call(); failures[name] = 'no error'; } catch (e) { failures[name] = e.code; }
    }
    await mine.clearSession('mine');
    const cleared = { history: mine.history().length, memory: mine.memory().length,
        lastRun: mine.state().lastRun, global: mine.globalMemory().map((e) => e.text),
        listed: await mine.listSessions() };
    await mine.run('again');
    await mine.deleteSession('other');
    const afterDelete = await mine.listSessions();
    // `other` still holds what it had; its next turn stores the session from that turn on.
    const otherHeld = other.history().length;
    mine.close();
    other.close();
    const reloaded = await make('mine');
    await reloaded.open();
    const result = { listed, failures, cleared, afterDelete, otherHeld,
        reloaded: reloaded.history().map((m) => m.content),
        reloadedGlobal: reloaded.globalMemory().map((e) => e.text),
        sessionsAfterReload: await reloaded.listSessions() };
    reloaded.close();
    return result;
}"""


def rows(listed: list[dict[str, Any]]) -> list[tuple[str, int, str | None]]:
    return [(s["sessionId"], s["turnCount"], s["title"]) for s in listed]


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_conversations_in_the_page_and_in_a_worker(warm_page: Page, worker: bool) -> None:
    result = warm_page.evaluate(SCRIPT, worker)
    assert rows(result["listed"]) == [("mine", 1, "Trip"), ("other", 1, None)]
    assert result["failures"] == {
        "unknown": "session_not_found",
        "blank": "config_error",
        "notString": "config_error",
    }
    cleared = result["cleared"]
    assert (cleared["history"], cleared["memory"], cleared["lastRun"]) == (0, 0, None)
    assert cleared["global"] == ["prefers trains"]
    assert rows(cleared["listed"]) == [("mine", 0, "Trip"), ("other", 1, None)]
    assert rows(result["afterDelete"]) == [("mine", 1, "Trip")]
    assert result["otherHeld"] == 2
    assert result["reloaded"] == ["again", "echo: again"]
    assert result["reloadedGlobal"] == ["prefers trains"]
    assert rows(result["sessionsAfterReload"]) == [("mine", 1, "Trip")]
