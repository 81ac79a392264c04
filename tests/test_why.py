"""Why an answer was given (issue 22.1-22.2): a trace per run, kept with the session and
bounded, read back after a reload; and which of the pack's entries the answer used."""

from __future__ import annotations

import asyncio
import hashlib
import re
import zlib
from typing import Any

import pytest

import agrun
from agrun import FunctionSkill, TraceNotFound
from agrun.chat import ModelReply, ModelRequest
from agrun.content import ContentRefNotFound
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider, tool_call
from agrun.trace import SIMILARITY, RunTrace, TraceStore
from conftest import make_runtime
from planted_secrets import PLANTED, hits

FACTS = {
    "paris": "Paris is the capital of France and sits on the Seine.",
    "tokyo": "Tokyo hosted the summer olympics twice, in 1964 and 2021.",
}


def answer(request: ModelRequest) -> str:
    asked = next(m.content or "" for m in reversed(request.messages) if m.role == "user")
    if "France" in asked:
        return "The capital of France is Paris, which sits on the Seine. Nice weather too."
    return "Noted."


def agent(
    script: Any = answer, *, storage: Any = None, skills: Any = (), **options: Any
) -> tuple[agrun.Runtime, ScriptedProvider]:
    provider = ScriptedProvider(script)
    options.setdefault("memory_extraction", "rules")
    runtime = make_runtime(*skills, provider=provider, model="scripted", storage=storage, **options)
    return runtime, provider


async def test_each_model_call_is_traced_with_its_pack_usage_and_factor() -> None:
    runtime, provider = agent()
    first = await runtime.run(FACTS["paris"])
    factor_then = runtime.token_factors["scripted"]
    second = await runtime.run("What is the capital of France?")
    trace = runtime.why(second.state.run_id)
    assert trace.run_id == second.state.run_id and trace.status == "succeeded"
    (call,) = trace.calls
    pack = runtime.last_pack
    assert pack is not None
    assert call.pack_digest == hashlib.sha256(pack.to_json().encode()).hexdigest()
    assert call.pack_id == provider.requests[-1].pack_id == call.pack_digest[:16]
    assert [(e.id, e.layer, e.sources, e.tokens, e.compressed) for e in call.entries] == [
        (e.id, e.layer, e.sources, e.tokens, e.compressed) for e in pack.entries()
    ]
    assert call.tokens_per_layer == dict(pack.metrics.tokens_per_layer)
    # The factor the second pack was sized with is what the first call taught.
    assert call.factor == factor_then != runtime.why(first.state.run_id).calls[0].factor
    assert call.usage is not None
    assert call.usage.prompt_tokens > 0 and call.estimated == pack.budget_used
    assert call.reply is not None and call.reply.text == second.output


async def test_the_trace_of_a_tool_loop_has_one_call_per_cycle() -> None:
    def script(request: ModelRequest) -> Any:
        if not any(m.role == "tool" for m in request.messages):
            return ModelReply(tool_calls=(tool_call("shout", {}),))
        return "done"

    shout = FunctionSkill("shout", lambda i, c, h: i.upper(), description="Shouts.")
    runtime, _ = agent(script, skills=(shout,))
    result = await runtime.run("hello")
    trace = runtime.why(result.state.run_id)
    assert [c.cycle for c in trace.calls] == [1, 2]
    assert trace.calls[0].reply is not None
    assert [name for _, name, _ in trace.calls[0].reply.tool_calls] == ["shout"]
    assert trace.calls[0].pack_digest != trace.calls[1].pack_digest
    assert trace.attribution is not None and trace.attribution.call == 1


async def test_why_answers_after_a_reload_and_calibration_is_not_forgotten() -> None:
    storage = MemoryStorage()
    runtime, _ = agent(storage=storage)
    first = await runtime.run(FACTS["paris"])
    second = await runtime.run("What is the capital of France?")
    learned = runtime.token_factors
    assert learned["scripted"] != 1.0

    again, _ = agent(storage=storage)
    await again.open()
    assert again.why(first.state.run_id) == runtime.why(first.state.run_id)
    assert again.why(second.state.run_id) == runtime.why(second.state.run_id)
    assert again.token_factors == learned
    third = await again.run("And Tokyo?")
    # Sized as if nothing was lost: the first pack after the reload uses the learned factor.
    assert again.why(third.state.run_id).calls[0].factor == learned["scripted"]


async def test_traces_are_bounded_oldest_evicted_first_and_counted(monkeypatch: Any) -> None:
    monkeypatch.setattr("agrun.kernel._assemble.TRACE_BYTES", 9_000)
    storage = MemoryStorage()
    runtime, _ = agent(storage=storage)
    runs = [await runtime.run(f"Note number {n}: {FACTS['tokyo']}") for n in range(8)]
    ids = [r.state.run_id for r in runs]
    counters = runtime.trace_counters()
    assert counters["evictions"] > 0 and counters["bytesHeld"] <= 9_000
    kept = [run_id for run_id in ids if _has(runtime, run_id)]
    assert kept == ids[len(ids) - len(kept) :] and 0 < len(kept) < len(ids)
    with pytest.raises(TraceNotFound, match="evicted") as caught:
        runtime.why(ids[0])
    assert caught.value.code == "trace_not_found"
    # The store holds exactly the traces still kept.
    export = await runtime.export_session()
    assert f'"trace:{ids[0]}"' not in export and f'"trace:{kept[0]}"' in export


def _has(runtime: agrun.Runtime, run_id: str) -> bool:
    try:
        runtime.why(run_id)
    except TraceNotFound:
        return False
    return True


async def test_a_skill_run_has_no_trace_and_a_bad_id_is_refused() -> None:
    say = FunctionSkill("say", lambda i, c, h: i, description="Says it back.")
    runtime, _ = agent(skills=(say,))
    result = await runtime.run("hi", skill="say")
    assert result.ok
    with pytest.raises(TraceNotFound):
        runtime.why(result.state.run_id)
    with pytest.raises(TraceNotFound):
        runtime.why("run-404")
    with pytest.raises(agrun.ConfigError):
        runtime.why(3)  # type: ignore[arg-type]


async def test_a_trace_is_not_content_the_model_can_read() -> None:
    runtime, _ = agent(storage=MemoryStorage())
    result = await runtime.run(FACTS["paris"])
    runtime.why(result.state.run_id)
    with pytest.raises(ContentRefNotFound):
        runtime.content(f"trace:{result.state.run_id}")
    assert all(not e.ref.startswith("trace:") for e in runtime.content_entries)


async def test_secrets_never_reach_a_stored_trace() -> None:
    planted = " ".join(shown for shown, _ in PLANTED.values())
    runtime, _ = agent(lambda request: f"Here it is again: {planted}", storage=MemoryStorage())
    result = await runtime.run("Repeat my keys please")
    trace = runtime.why(result.state.run_id)
    assert trace.calls[0].reply is not None
    assert hits(trace.model_dump_json()) == []
    assert hits(await runtime.export_session()) == []


async def test_attribution_marks_the_entries_the_answer_used_with_their_spans() -> None:
    runtime, _ = agent()
    await runtime.run(FACTS["paris"])
    await runtime.run(FACTS["tokyo"])
    result = await runtime.run("What is the capital of France?")
    trace = runtime.why(result.state.run_id)
    attribution = trace.attribution
    assert attribution is not None
    marks = {e.id: e for e in attribution.entries}
    entries = {e.id for e in trace.calls[attribution.call].entries}
    assert set(marks) == entries
    paris = marks[f"message:{_user_of(runtime, FACTS['paris'])}"]
    tokyo = marks[f"message:{_user_of(runtime, FACTS['tokyo'])}"]
    assert paris.used and not tokyo.used
    text = result.output
    assert isinstance(text, str)
    # The first sentence (Paris, the Seine) is what the Paris note backs; the second is not.
    first, second = attribution.sentences
    assert text[first[0] : first[1]].startswith("The capital of France is Paris")
    assert text[second[0] : second[1]] == "Nice weather too."
    assert paris.spans == (first,)
    assert "overlap" in paris.via and paris.score >= attribution.threshold
    assert marks["system:system"].used is False


async def test_an_entry_the_model_cites_by_its_id_is_marked_cited() -> None:
    def script(request: ModelRequest) -> str:
        return "See run-1:user for that." if len(request.messages) > 2 else "ok"

    runtime, _ = agent(script)
    await runtime.run("zebra quagga okapi")
    result = await runtime.run("Where did I say it?")
    attribution = runtime.why(result.state.run_id).attribution
    assert attribution is not None
    cited = {e.id: e for e in attribution.entries}["message:run-1:user"]
    assert cited.used and cited.via == ("citation",)
    text = result.output
    assert isinstance(text, str)
    assert [text[a:b] for a, b in cited.spans] == ["run-1:user"]


def _user_of(runtime: agrun.Runtime, text: str) -> str:
    return next(m.id for m in runtime.history if m.role == "user" and m.content == text)


# -- attribution by meaning: the runtime's embedder --------------------------------------

# A user's own embedder, small and deterministic: words that mean the same share an axis
# (a real embedding model places them near each other); any other word gets one of 16 axes
# by its CRC. Given through the public `embedder` option, as a page or server would.
SAME = {"flight": 0, "plane": 0, "leaves": 1, "departs": 1, "nine": 2, "09": 2, "00": 2}


class WordAxes:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.texts: list[str] = []

    async def embed(self, texts: Any) -> list[list[float]]:
        if self.fail:
            raise agrun.ProviderError("the embedding server is down")
        self.texts.extend(texts)
        return [self._vector(text) for text in texts]

    @staticmethod
    def _vector(text: str) -> list[float]:
        vector = [0.0] * (len(set(SAME.values())) + 16)
        for word in re.findall(r"\w+", text.lower()):
            axis = SAME.get(word)
            vector[axis if axis is not None else 3 + zlib.crc32(word.encode()) % 16] += 1.0
        return vector


PLANE = "The plane departs at 09:00 from gate 4."
HOTEL = "I booked a hotel near the station."


def flight(request: ModelRequest) -> str:
    asked = next(m.content or "" for m in reversed(request.messages) if m.role == "user")
    return "Your flight leaves at nine. Have a good trip." if "When" in asked else "Noted."


async def ask_flight(**options: Any) -> tuple[agrun.Runtime, Any]:
    runtime, _ = agent(flight, **options)
    for said in (PLANE, HOTEL, "When is it?"):
        result = await runtime.run(said)
    return runtime, runtime.why(result.state.run_id)


async def test_the_embedders_similarity_marks_an_entry_said_in_other_words() -> None:
    embedder = WordAxes()
    runtime, trace = await ask_flight(embedder=embedder)
    attribution = trace.attribution
    assert attribution is not None and attribution.similarity_threshold == SIMILARITY
    marks = {e.id: e for e in attribution.entries}
    plane = marks[f"message:{_user_of(runtime, PLANE)}"]
    hotel = marks[f"message:{_user_of(runtime, HOTEL)}"]
    # Too few content words in common: only the embedder's similarity says it backs the answer.
    assert plane.used and plane.via == ("similarity",) and plane.score < attribution.threshold
    assert plane.similarity is not None and plane.similarity >= SIMILARITY
    assert plane.spans == (attribution.sentences[0],)
    assert not hotel.used and hotel.similarity is not None and hotel.similarity < SIMILARITY
    assert marks["system:system"].used is False and marks["system:system"].similarity is None
    assert "Your flight leaves at nine." in embedder.texts  # the answer's sentence was embedded
    # The same answer, pack and embedder give the same marks; without one, no mark.
    _, again = await ask_flight(embedder=WordAxes())
    assert again.attribution == attribution
    _, words_only = await ask_flight()
    assert words_only.attribution is not None
    unmarked = {e.id: e for e in words_only.attribution.entries}[plane.id]
    assert not unmarked.used and unmarked.similarity is None
    assert words_only.attribution.similarity_threshold is None


async def test_a_trace_as_made_is_what_validating_it_gives(monkeypatch: Any) -> None:
    # A call's entries and the answer's marks are made without validating each one (one
    # per pack entry, every turn): each must be what validating it gives, type for type
    # (a list for a tuple, an int for a float would show in the repr).
    made: list[RunTrace] = []
    put = TraceStore.put

    def keep(self: TraceStore, trace: RunTrace, now_ms: int) -> bool:
        made.append(trace)
        return put(self, trace, now_ms)

    monkeypatch.setattr(TraceStore, "put", keep)
    used = []
    for options in ({}, {"embedder": WordAxes()}):
        _, stored = await ask_flight(**options)
        trace = made[-1]
        assert trace == stored and trace.attribution is not None
        used += [r for r in trace.attribution.entries if r.used]
        for record in (*trace.calls[-1].entries, *trace.attribution.entries):
            assert repr(type(record).model_validate(record.model_dump())) == repr(record)
    assert any(r.similarity is not None and r.spans for r in used)


async def test_an_embedder_that_fails_leaves_attribution_by_words() -> None:
    runtime, _ = agent(flight, embedder=WordAxes(fail=True))
    await runtime.run(PLANE)
    result = await runtime.run("When is it?")
    assert result.ok
    attribution = runtime.why(result.state.run_id).attribution
    assert attribution is not None and attribution.similarity_threshold is None
    notes = [s.detail for s in result.steps if s.action == "evaluate"]
    assert any("attribution goes on by words alone" in note for note in notes)


async def test_cancelling_while_the_answer_is_attributed_stops_the_embedder_not_the_answer() -> (
    None
):
    reached = asyncio.Event()
    closed: list[str] = []

    class HangsOnAnswers(WordAxes):
        """Answers recall's texts; never the answer's sentences."""

        async def embed(self, texts: Any) -> list[list[float]]:
            if "Your flight leaves at nine." not in texts:
                return await super().embed(texts)
            try:
                reached.set()
                await asyncio.sleep(30)
            finally:
                closed.append("closed")
            return []

    runtime, _ = agent(flight, embedder=HangsOnAnswers())
    await runtime.run(PLANE)
    token = agrun.CancelToken()
    task = asyncio.ensure_future(runtime.run("When is it?", signal=token))
    await asyncio.wait_for(reached.wait(), 5)
    token.cancel("the person left")
    result = await asyncio.wait_for(task, 5)
    assert closed == ["closed"]
    assert result.ok and result.output.startswith("Your flight leaves at nine.")
    attribution = runtime.why(result.state.run_id).attribution
    assert attribution is not None and attribution.similarity_threshold is None
    assert any("cancelled while attributing" in s.detail for s in result.steps)
