"""Sessions that survive reloads, storage faults and two tabs, through createRuntime (issue 5)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

import agrun
from conftest import PageProblems, guard_page

REMEMBERING = """{ sessionId: 's1', dbName: 'agrun-e2e',
  onStorageDegraded: (e) => (window.degraded ??= []).push({ reason: e.reason, method: e.method }),
  skills: [{ name: 'note', description: 'remembers', applies: (i) => i.startsWith('note'),
             run: async (input, context, helpers) => {
               helpers.appendMemory({ text: input });
               return 'noted ' + context.memory.readAll().filter((e) => e.kind === 'note').length; } }] }"""


def open_runtime(page: Page, options: str = REMEMBERING) -> None:
    page.goto("/blank.html")
    page.evaluate(
        f"""async () => {{
            const {{ createRuntime }} = await import('/agrun.js');
            window.rt = await createRuntime({options});
        }}"""
    )


def run(page: Page, text: str) -> Any:
    return page.evaluate("(text) => window.rt.run(text)", text)


def snapshot(page: Page) -> dict[str, Any]:
    return page.evaluate(
        """() => ({ history: window.rt.history().map((m) => m.role + ':' + m.content),
                    memory: window.rt.memory().filter((e) => e.kind === 'note').map((e) => e.text),
                    lastRun: window.rt.state().lastRun,
                    status: window.rt.storageStatus() })"""
    )


def test_a_reloaded_page_resumes_history_memory_and_last_run(page: Page) -> None:
    open_runtime(page)
    run(page, "note one")
    run(page, "note two")
    run(page, "plain")
    before = snapshot(page)
    assert before["history"][:2] == ["user:note one", "assistant:noted 0"]
    assert before["status"]["persistent"] is True and before["status"]["degraded"] is False
    page.reload()
    open_runtime(page)
    after = snapshot(page)
    assert after["history"] == before["history"]
    assert after["memory"] == before["memory"]
    assert "note two" in after["memory"]
    assert after["lastRun"] == before["lastRun"]
    assert run(page, "note three")["output"] == f"noted {len(before['memory'])}"


def test_the_chat_page_shows_the_conversation_after_a_reload(page: Page) -> None:
    page.goto("/index.html")
    chat = page.locator("agrun-chat")
    status = chat.locator("#status")
    expect(status).to_have_text("Ready")
    for text in ("first words", "second words"):
        chat.get_by_label("Message").fill(text)
        chat.get_by_role("button", name="Send").click()
    expect(chat.locator("#transcript li.agent .parts")).to_have_count(2)
    page.reload()
    expect(status).to_have_text("Ready")
    expect(chat.locator("#transcript li.user .said")).to_have_text(["first words", "second words"])
    expect(chat.locator("#transcript li.agent .parts")).to_have_text(
        ["echo: first words", "echo: second words"]
    )


@pytest.mark.parametrize("name", ["QuotaExceededError", "InvalidStateError", "UnknownError"])
def test_a_store_that_breaks_mid_session_degrades_once_and_loses_no_turn(
    page: Page, name: str
) -> None:
    open_runtime(page)
    run(page, "note before")
    page.evaluate(
        """(name) => {
            IDBDatabase.prototype.transaction = function () {
                throw new DOMException('injected by the test', name);
            };
        }""",
        name,
    )
    during = run(page, "note during")
    assert during["state"]["status"] == "succeeded"
    run(page, "note after")
    state = snapshot(page)
    degraded = page.evaluate("window.degraded")
    assert len(degraded) == 1, "onStorageDegraded fires exactly once"
    assert degraded[0]["reason"] == name
    assert state["status"]["degraded"] is True
    assert state["status"]["pending"] == 0
    assert [h for h in state["history"] if h.startswith("user:")] == [
        "user:note before",
        "user:note during",
        "user:note after",
    ]
    assert state["memory"] == ["note before", "note during", "note after"]


def test_a_database_that_cannot_open_still_gives_a_working_runtime(page: Page) -> None:
    page.goto("/blank.html")
    page.evaluate(
        """() => { indexedDB.open = () => { throw new DOMException('private mode', 'SecurityError'); }; }"""
    )
    page.evaluate(
        f"""async () => {{
            const {{ createRuntime }} = await import('/agrun.js');
            window.rt = await createRuntime({REMEMBERING});
        }}"""
    )
    assert run(page, "note hello")["state"]["status"] == "succeeded"
    degraded = page.evaluate("window.degraded")
    assert len(degraded) == 1 and degraded[0]["reason"] == "SecurityError"
    assert snapshot(page)["status"]["degraded"] is True


def test_two_tabs_on_one_session_lose_and_interleave_no_turn(
    context: BrowserContext, page: Page, problems: PageProblems
) -> None:
    second = context.new_page()
    guard_page(second, problems)
    open_runtime(page)
    open_runtime(second)
    # Both tabs send at once, several times; each turn runs under the session's lock.
    page.evaluate(
        """() => { window.sent = Promise.all(['a1', 'a2', 'a3'].map((t) => window.rt.run('note ' + t))); }"""
    )
    second.evaluate(
        """() => { window.sent = Promise.all(['b1', 'b2', 'b3'].map((t) => window.rt.run('note ' + t))); }"""
    )
    page.evaluate("window.sent")
    second.evaluate("window.sent")
    run(page, "plain")  # the first tab takes up what the second committed
    history = snapshot(page)["history"]
    users = [h for h in history if h.startswith("user:")]
    assert sorted(users) == sorted(
        [f"user:note {t}" for t in ("a1", "a2", "a3", "b1", "b2", "b3")] + ["user:plain"]
    )
    # Every person's message is followed by its own reply: no turn is interleaved.
    for person, reply in zip(history[::2], history[1::2], strict=True):
        assert person.startswith("user:") and reply.startswith("assistant:")
    memory = snapshot(page)["memory"]
    assert sorted(memory) == sorted(f"note {t}" for t in ("a1", "a2", "a3", "b1", "b2", "b3"))
    # The n-th noted turn saw exactly n-1 entries before it: the tabs never raced.
    counts = [int(h.split()[-1]) for h in history if h.startswith("assistant:noted")]
    assert counts == list(range(6))


def test_disabled_global_memory_is_never_read(page: Page) -> None:
    page.goto("/blank.html")
    reads = page.evaluate(
        """async () => {
            const { createRuntime } = await import('/agrun.js');
            const { createMemorySessionStore } = await import('/storage/index.js');
            const counted = (inner) => {
                const store = Object.create(inner);
                store.reads = 0;
                store.readGlobalMemory = (...args) => { store.reads++; return inner.readGlobalMemory(...args); };
                return store;
            };
            const inner = createMemorySessionStore();
            await inner.appendGlobalMemory([{ id: 'g1', text: 'likes tea' }]);
            const off = counted(inner);
            const rtOff = await createRuntime({ storage: off, globalMemory: { enabled: false } });
            await rtOff.run('hello');
            const on = counted(inner);
            const rtOn = await createRuntime({ storage: on, globalMemory: { enabled: true } });
            await rtOn.run('hello');
            return { off: off.reads, on: on.reads, kept: (await inner.readGlobalMemory()).length };
        }"""
    )
    assert reads["off"] == 0
    assert reads["on"] >= 1
    assert reads["kept"] == 1


def test_closing_the_page_mid_turn_leaves_the_session_whole(
    context: BrowserContext, problems: PageProblems
) -> None:
    for round_ in range(4):
        page = context.new_page()
        open_runtime(page)
        # Start a turn and close the page without waiting for its commit.
        page.evaluate("(n) => { window.rt.run('note r' + n); }", round_)
        page.wait_for_timeout(5 * round_)
        page.close()
    page = context.new_page()
    guard_page(page, problems)
    open_runtime(page)
    history = snapshot(page)["history"]
    assert len(history) % 2 == 0
    for person, reply in zip(history[::2], history[1::2], strict=True):
        assert person.startswith("user:note r") and reply.startswith("assistant:noted")
    assert len(snapshot(page)["memory"]) == len(history) // 2


def test_a_conversation_moves_between_the_browser_and_cpython(page: Page, tmp_path: Path) -> None:
    options = "{ sessionId: 'moving', dbName: 'agrun-move' }"
    open_runtime(page, options)
    run(page, "said in the browser")
    exported = page.evaluate("() => window.rt.exportSession()")

    async def continue_in_python() -> tuple[list[str], str]:
        runtime = agrun.create_runtime(storage=str(tmp_path / "moved.db"), session_id="moving")
        await runtime.import_session(exported)
        await runtime.run("said in CPython")
        return [m.content for m in runtime.history], await runtime.export_session()

    # Playwright's sync API owns this thread's event loop; CPython's runtime gets its own.
    with ThreadPoolExecutor(1) as thread:
        history, back = thread.submit(asyncio.run, continue_in_python()).result()
    assert history == ["said in the browser", "echo: said in the browser",
                       "said in CPython", "echo: said in CPython"]  # fmt: skip

    outcome = page.evaluate(
        """async (back) => {
            const rt = window.rt;
            let hostile;
            try { await rt.importSession('{"format": "agrun.session", "formatVersion": 1}', { replace: true }); }
            catch (e) { hostile = e.code; }
            const unchanged = rt.history().length;
            await rt.importSession(back, { replace: true });
            return { hostile, unchanged, history: rt.history().map((m) => m.content) };
        }""",
        back,
    )
    assert outcome["hostile"] == "import_rejected"
    assert outcome["unchanged"] == 2
    assert outcome["history"] == history
