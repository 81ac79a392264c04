"""Why an answer was given, in Chromium (issue 22): a run's trace read back after a page
reload and from a runtime in a worker, a what-if there, and a recorded session replayed
across the two: made in Chromium and replayed in CPython, and the other way round."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from playwright.sync_api import Page

import agrun
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider, replay_provider

# Answers from what the person said before, with the provider's own usage.
PROVIDER = """async (request) => {
    const said = request.messages.filter((m) => m.role === 'user').map((m) => m.content);
    const last = said.at(-1);
    const text = /colour/.test(last) ? 'Miso the cat is grey.' : 'Noted: ' + last.split(' ').length + ' words.';
    return { text, usage: { promptTokens: 7 * request.messages.length, completionTokens: 5 } };
}"""
SAID = ["My cat is called Miso and she is grey.", "I also have a dog.", "What colour is Miso?"]


def open_runtime(page: Page, extra: str = "") -> None:
    page.goto("/blank.html")
    page.evaluate(
        f"""async () => {{
            const agrun = await import('/agrun.js');
            window.agrun = agrun;
            window.rt = await agrun.createRuntime({{ provider: {PROVIDER}, sessionId: 'why',
                dbName: 'agrun-why', memoryExtraction: 'rules', contentStore: false, {extra} }});
        }}"""
    )


def run_all(page: Page) -> list[str]:
    return page.evaluate(
        """async (said) => {
            const ids = [];
            for (const text of said) ids.push((await window.rt.run(text)).state.runId);
            return ids;
        }""",
        SAID,
    )


def test_why_is_read_back_after_a_reload_and_in_a_worker(page: Page) -> None:
    open_runtime(page)
    ids = run_all(page)
    before = page.evaluate("(ids) => Promise.all(ids.map((id) => window.rt.why(id)))", ids)
    answer = before[-1]
    assert [t["runId"] for t in before] == ids
    assert answer["calls"][0]["usage"]["completionTokens"] == 5
    assert answer["calls"][0]["factor"] != 1  # the earlier calls taught calibration
    marks = {e["id"]: e for e in answer["attribution"]["entries"]}
    assert marks[f"message:{ids[0]}:user"]["used"] is True
    assert marks[f"message:{ids[1]}:user"]["used"] is False

    page.reload()
    open_runtime(page)
    after = page.evaluate("(ids) => Promise.all(ids.map((id) => window.rt.why(id)))", ids)
    assert after == before
    missing = page.evaluate(
        "() => window.rt.why('run-404').then(() => null, (e) => [e.name, e.code])"
    )
    assert missing == ["AgrunError", "trace_not_found"]

    page.evaluate("() => window.rt.close()")
    open_runtime(page, "worker: true")
    assert page.evaluate("() => window.rt.diagnostics().worker") is True
    in_worker = page.evaluate("(ids) => Promise.all(ids.map((id) => window.rt.why(id)))", ids)
    assert in_worker == before
    diff = page.evaluate("(id) => window.rt.whatIf(id, { budget: 60 })", ids[-1])
    assert diff["faithful"] is True and diff["budgetAfter"][1] == 60
    recorded = {e["id"] for e in answer["calls"][-1]["entries"]}
    assert {c["id"] for c in diff["kept"]} | {c["id"] for c in diff["dropped"]} == recorded
    reasons = {c["id"]: c["reason"] for c in diff["dropped"]}
    assert "over_budget" in reasons.values()
    assert set(reasons.values()) <= {"over_budget", "moved_to_l3"}
    assert {f"memory:{i}" for i in diff["mergedIntoL3"]} <= set(reasons)


def test_a_session_replays_across_chromium_and_cpython(page: Page) -> None:
    open_runtime(page, "storage: 'memory'")
    ids = run_all(page)
    made_in_chromium = page.evaluate("() => window.rt.exportSession()")
    said_there = page.evaluate("() => window.rt.history().map((m) => m.content)")
    digests_there = page.evaluate(
        "(ids) => Promise.all(ids.map(async (id) => (await window.rt.why(id)).calls.map((c) => c.request.digest)))",
        ids,
    )

    async def in_cpython() -> tuple[list[str], list[list[str]], str]:
        provider = replay_provider(made_in_chromium)
        replaying = agrun.create_runtime(
            provider=provider,
            storage=MemoryStorage(),
            session_id="why",
            memory_extraction="rules",
            content_store=False,
        )
        runs = [await replaying.run(said) for said in provider.inputs]
        assert provider.position == len(provider.calls)
        digests = [[c.request.digest for c in replaying.why(r.state.run_id).calls] for r in runs]
        # And a session made in CPython, for Chromium to replay.
        scripted = agrun.create_runtime(
            provider=ScriptedProvider(lambda request: f"{len(request.messages)} messages seen."),
            storage=MemoryStorage(),
            session_id="why",
            memory_extraction="rules",
            content_store=False,
        )
        for said in SAID:
            await scripted.run(said)
        said_here = [m.content for m in replaying.history]
        return said_here, digests, await scripted.export_session()

    # Playwright's sync API owns this thread's event loop; CPython's runtime gets its own.
    with ThreadPoolExecutor(1) as thread:
        said_here, digests_here, made_in_cpython = thread.submit(asyncio.run, in_cpython()).result()
    assert said_here == said_there
    assert digests_here == digests_there

    replayed: dict[str, Any] = page.evaluate(
        """async (text) => {
            window.rt.close();
            const rt = await window.agrun.createRuntime({ provider: window.agrun.replayProvider(text),
                storage: 'memory', sessionId: 'why', memoryExtraction: 'rules', contentStore: false });
            const outputs = [];
            for (const said of ['My cat is called Miso and she is grey.', 'I also have a dog.', 'What colour is Miso?'])
                outputs.push((await rt.run(said)).output);
            let diverged;
            try { await rt.run('one more'); } catch (e) { diverged = [e.code, e.message]; }
            return { outputs, diverged };
        }""",
        made_in_cpython,
    )
    assert replayed["outputs"] == ["2 messages seen.", "4 messages seen.", "6 messages seen."]
    assert replayed["diverged"][0] == "replay_diverged"
    assert "holds 3 calls" in replayed["diverged"][1]
