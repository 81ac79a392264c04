"""Why an answer was given, in Chromium (issue 22): a run's trace read back after a page
reload and from a runtime in a worker, a what-if there (with the page's own tokenizer and
ranker), attribution by the page's embedder, and a recorded session replayed across the
two, content store and model memory extraction on: made in Chromium and replayed in
CPython, and the other way round."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from playwright.sync_api import Page

import agrun
from agrun.chat import ModelRequest
from agrun.storage import MemoryStorage
from agrun.testing import FixedClock, ScriptedProvider, SequentialIds, replay_provider

# Answers from what the person said before, with the provider's own usage.
PROVIDER = """async (request) => {
    const said = request.messages.filter((m) => m.role === 'user').map((m) => m.content);
    const last = said.at(-1);
    const text = /colour/.test(last) ? 'Miso the cat is grey.' : 'Noted: ' + last.split(' ').length + ' words.';
    return { text, usage: { promptTokens: 7 * request.messages.length, completionTokens: 5 } };
}"""
SAID = ["My cat is called Miso and she is grey.", "I also have a dog.", "What colour is Miso?"]


BASE = f"provider: {PROVIDER}, dbName: 'agrun-why', memoryExtraction: 'rules', contentStore: false"


def open_runtime(page: Page, extra: str = "", *, options: str = BASE) -> None:
    page.goto("/blank.html")
    page.evaluate(
        f"""async () => {{
            const agrun = await import('/agrun.js');
            window.agrun = agrun;
            window.rt = await agrun.createRuntime({{ sessionId: 'why', {options}, {extra} }});
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


# The same, and the memory extraction's calls (asked for JSON): the fact is the last thing said.
EXTRACTING = (
    """async (request) => {
    if (request.responseFormat) {
        const said = request.messages.at(-1).content.split('\\n')[0].replace(/^user: /, '');
        return { text: JSON.stringify({ facts: [said], preferences: [], decisions: [] }) };
    }
    return ("""
    + PROVIDER
    + ")(request);\n}"
)


def test_a_session_replays_across_chromium_and_cpython(page: Page) -> None:
    # The content store is on (its refs are named by run id), and the model extracts memory.
    open_runtime(
        page, options=f"provider: {EXTRACTING}, storage: 'memory', memoryExtraction: 'model'"
    )
    ids = run_all(page)
    made_in_chromium = page.evaluate("() => window.rt.exportSession()")
    there = page.evaluate(
        """(ids) => Promise.all(ids.map(async (id) => {
            const trace = await window.rt.why(id);
            return [...trace.calls, ...trace.extractions].map((c) => c.request.digest);
        }))""",
        ids,
    )
    refs_there = page.evaluate("() => window.rt.history().map((m) => m.contentRef ?? null)")

    def scripted(request: ModelRequest) -> str:
        if request.response_format is not None:
            said = (request.messages[-1].content or "").split("\n")[0].removeprefix("user: ")
            return json.dumps({"facts": [said], "preferences": [], "decisions": []})
        return f"{len(request.messages)} messages seen."

    async def in_cpython() -> tuple[list[list[str]], list[str | None], int, str]:
        provider = replay_provider(made_in_chromium)
        # The clock steps 1 ms a reading: no two stored replies share a millisecond.
        replaying = agrun.create_runtime(
            provider=provider,
            storage=MemoryStorage(),
            session_id="why",
            memory_extraction="model",
            clock=FixedClock(),
        )
        for said in provider.inputs:
            await replaying.run(said)
            await replaying.idle()
        assert provider.position == len(provider.calls)
        digests = [
            [c.request.digest for c in [*t.calls, *t.extractions]]
            for t in map(replaying.why, provider.run_ids)
        ]
        refs = [m.content_ref for m in replaying.history]
        # And a session made in CPython, for Chromium to replay.
        recording = agrun.create_runtime(
            provider=ScriptedProvider(scripted, extraction=True),
            storage=MemoryStorage(),
            session_id="why",
            memory_extraction="model",
            clock=FixedClock(),
            ids=SequentialIds(),
        )
        for said in SAID:
            await recording.run(said)
        await recording.idle()  # the last turn's extraction runs after its answer
        extractions = sum(len(recording.why(f"run-{n}").extractions) for n in (1, 2, 3))
        return digests, refs, extractions, await recording.export_session()

    # Playwright's sync API owns this thread's event loop; CPython's runtime gets its own.
    with ThreadPoolExecutor(1) as thread:
        here, refs_here, extractions, made_in_cpython = thread.submit(
            asyncio.run, in_cpython()
        ).result()
    # Every request the model was sent, answers and extractions, and every stored reply's ref.
    assert here == there and all(len(calls) == 2 for calls in here)
    assert refs_here == refs_there and any(refs_there)
    assert extractions == 3

    replayed: dict[str, Any] = page.evaluate(
        """async (text) => {
            window.rt.close();
            const rt = await window.agrun.createRuntime({ provider: window.agrun.replayProvider(text),
                storage: 'memory', sessionId: 'why', memoryExtraction: 'model' });
            const outputs = [], runIds = [];
            for (const said of ['My cat is called Miso and she is grey.', 'I also have a dog.', 'What colour is Miso?']) {
                const result = await rt.run(said);
                outputs.push(result.output);
                runIds.push(result.state.runId);
            }
            await rt.idle();
            const facts = rt.sessionMemory().facts.map((f) => f.text);
            let diverged;
            try { await rt.run('one more'); } catch (e) { diverged = [e.code, e.message]; }
            return { outputs, runIds, facts, diverged };
        }""",
        made_in_cpython,
    )
    assert replayed["outputs"] == ["2 messages seen.", "4 messages seen.", "6 messages seen."]
    assert replayed["runIds"] == ["run-1", "run-2", "run-3"]  # the recording's
    assert SAID[0] in replayed["facts"]
    assert replayed["diverged"][0] == "replay_diverged"
    assert "holds 6 calls" in replayed["diverged"][1]


def test_what_if_takes_the_pages_tokenizer_and_ranker(page: Page) -> None:
    open_runtime(page, "storage: 'memory', countTokens: (text) => text.length")
    ids = run_all(page)
    result = page.evaluate(
        """async (id) => {
            let ranked = 0;
            const doubled = await window.rt.whatIf(id, { tokenizer: (text) => 2 * text.length });
            const ranker = (query, documents) => { ranked += 1; return documents.map((d, i) => -i); };
            const reranked = await window.rt.whatIf(id, { ranker });
            const bad = await window.rt.whatIf(id, { ranker: () => 'no' }).then(() => null, (e) => [e.code, e.message]);
            const notAFunction = await window.rt.whatIf(id, { tokenizer: 3 }).then(() => null, (e) => e.code);
            return { doubled, reranked, ranked, bad, notAFunction };
        }""",
        ids[-1],
    )
    doubled = result["doubled"]
    assert doubled["setting"] == {"tokenizer": "JsTokenizer"} and doubled["faithful"] is True
    changes = [*doubled["kept"], *doubled["compressed"]]
    assert changes and all(c["tokensAfter"] == 2 * c["tokensBefore"] for c in changes)
    reranked = result["reranked"]
    assert reranked["setting"] == {"ranker": "JsRanker"} and result["ranked"] >= 1
    assert result["bad"][0] == "context_building_failed" and "ranker" in result["bad"][1]
    assert result["notAFunction"] == "config_error"

    page.evaluate("() => window.rt.close()")
    open_runtime(page, "storage: 'memory', worker: true")
    refused = page.evaluate(
        """(id) => window.rt.whatIf(id, { tokenizer: (t) => t.length }).then(() => null, (e) => [e.name, e.code])""",
        ids[-1],
    )
    assert refused == ["AgrunConfigError", "worker_unsupported"]


# A page's own embedder, small and deterministic: words that mean the same share an axis,
# any other word one of 64 by a hash of its characters.
EMBEDDER = """async (texts) => texts.map((text) => {
    const same = { flight: 0, plane: 0, leaves: 1, departs: 1, nine: 2, '09': 2, '00': 2 };
    const vector = new Array(67).fill(0);
    for (const word of text.toLowerCase().match(/\\w+/g) ?? []) {
        let hash = 0;
        for (const c of word) hash = (Math.imul(hash, 31) + c.charCodeAt(0)) >>> 0;
        vector[same[word] ?? 3 + (hash % 64)] += 1;
    }
    return vector;
})"""


def test_attribution_uses_the_pages_embedder(page: Page) -> None:
    page.goto("/blank.html")
    marks = page.evaluate(
        f"""async () => {{
            const agrun = await import('/agrun.js');
            const provider = async (request) => {{
                const asked = request.messages.at(-1).content;
                return {{ text: /When/.test(asked) ? 'Your flight leaves at nine. Have a good trip.' : 'Noted.' }};
            }};
            const rt = await agrun.createRuntime({{ provider, embedder: {EMBEDDER}, storage: 'memory',
                memoryExtraction: 'rules' }});
            const said = ['The plane departs at 09:00 from gate 4.', 'I booked a hotel near the station.'];
            const ids = [];
            for (const text of [...said, 'When is it?']) ids.push((await rt.run(text)).state.runId);
            const attribution = (await rt.why(ids[2])).attribution;
            const mark = (id) => attribution.entries.find((e) => e.id === `message:${{id}}:user`);
            return {{ threshold: attribution.similarityThreshold, plane: mark(ids[0]), hotel: mark(ids[1]) }};
        }}"""
    )
    assert marks["threshold"] == 0.5
    assert marks["plane"]["used"] is True and marks["plane"]["via"] == ["similarity"]
    assert marks["plane"]["similarity"] >= 0.5
    assert marks["hotel"]["used"] is False and marks["hotel"]["similarity"] < 0.5
