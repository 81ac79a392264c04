"""Inference-skipping replay (issue 22.4, spec 001 section 13): a session export answers
its own model calls again, with no model, to byte-identical packs, events and export; a
request that differs is a typed error naming the first call and how."""

from __future__ import annotations

import json
from typing import Any

import pytest

import agrun
from agrun import FunctionSkill
from agrun.chat import ModelReply, ModelRequest
from agrun.storage import ImportRejected, MemoryStorage
from agrun.testing import (
    ReplayDiverged,
    ScriptedProvider,
    SequentialIds,
    replay_provider,
    tool_call,
)
from agrun.trace import RecordedCall, request_shape
from conftest import make_runtime

SHOUT = FunctionSkill("shout", lambda i, c, h: i.upper(), description="Shouts the input.")
INPUTS = [
    "My cat is called Miso and she is grey.",
    "Shout hello for me.",
    "What colour is Miso?",
]


def script(request: ModelRequest) -> Any:
    asked = next(m.content or "" for m in reversed(request.messages) if m.role == "user")
    if "Shout" in asked and not any(m.role == "tool" for m in request.messages[-2:]):
        return ModelReply(tool_calls=(tool_call("shout", {}, id="call-1"),))
    if "colour" in asked:
        return "Miso is grey."
    return f"Noted ({len(request.messages)} messages)."


def runtime_on(provider: Any, **options: Any) -> agrun.Runtime:
    options.setdefault("memory_extraction", "rules")
    return make_runtime(
        SHOUT, provider=provider, model="scripted", storage=MemoryStorage(), **options
    )


async def record(**options: Any) -> tuple[str, list[list[dict[str, Any]]]]:
    runtime = runtime_on(ScriptedProvider(script), **options)
    events = await run_all(runtime, INPUTS)
    return await runtime.export_session(), events


async def run_all(runtime: agrun.Runtime, inputs: list[str]) -> list[list[dict[str, Any]]]:
    """Run each input; each turn's events, as their wire form."""
    events: list[list[dict[str, Any]]] = []
    unsubscribe = runtime.subscribe(lambda e: events[-1].append(e.to_wire()))
    for said in inputs:
        events.append([])
        await runtime.run(said)
        await runtime.idle()  # a model extraction closes the turn after its answer
    unsubscribe()
    return events


async def test_an_export_replays_to_the_same_packs_events_and_export() -> None:
    export, events = await record()
    provider = replay_provider(export)
    assert provider.inputs == INPUTS
    assert len(provider.calls) == 4  # the shout turn takes two calls
    again = runtime_on(provider)
    replayed = await run_all(again, provider.inputs)
    assert provider.position == len(provider.calls)
    assert replayed == events
    assert await again.export_session() == export
    digests = [c.call.pack_digest for c in provider.calls]
    assert len(set(digests)) == len(digests)


async def test_a_changed_setting_diverges_at_the_first_call_and_says_how() -> None:
    export, _ = await record()
    provider = replay_provider(export)
    again = runtime_on(provider, system_prompt="You are terse.")
    with pytest.raises(ReplayDiverged) as caught:
        await again.run(provider.inputs[0])
    error = caught.value
    assert error.code == "replay_diverged" and error.number == 1
    assert error.run_id == "run-1" and error.cycle == 1
    assert error.how == "message 0 (system) differs in its content from the recording's (system)"


async def test_a_changed_input_diverges_on_its_own_call() -> None:
    export, _ = await record()
    provider = replay_provider(export)
    again = runtime_on(provider)
    await again.run(provider.inputs[0])
    with pytest.raises(ReplayDiverged) as caught:
        await again.run("Whisper hello for me.")
    assert caught.value.number == 2 and "message" in caught.value.how


async def test_a_tool_set_change_is_named() -> None:
    export, _ = await record()
    provider = replay_provider(export)
    quiet = FunctionSkill("whisper", lambda i, c, h: i.lower(), description="Whispers.")
    again = make_runtime(
        SHOUT,
        quiet,
        provider=provider,
        model="scripted",
        storage=MemoryStorage(),
        memory_extraction="rules",
    )
    with pytest.raises(ReplayDiverged, match=r"tools is \('shout', 'whisper'\)"):
        await again.run(provider.inputs[0])


async def test_past_the_recording_is_a_divergence_and_junk_is_refused() -> None:
    export, _ = await record()
    provider = replay_provider(export)
    again = runtime_on(provider)
    for said in provider.inputs:
        await again.run(said)
    with pytest.raises(ReplayDiverged, match="holds 4 calls"):
        await again.run("one more")
    with pytest.raises(ImportRejected):
        replay_provider(json.dumps({"format": "nope"}))


# -- the memory extraction's calls (memory_extraction="model") ---------------------------


def extracting(request: ModelRequest) -> Any:
    """The answers of ``script``, and the extraction's: refused once on the first turn (so
    the correction call is recorded too), then what the person said as a fact."""
    if request.response_format is None:
        return script(request)
    asked = request.messages[1].content or ""
    if len(request.messages) == 2 and "Miso and she" in asked:
        return "not json"
    fact = "My cat is called Miso." if "Miso" in asked else "I like shouting."
    return json.dumps({"facts": [fact], "preferences": [], "decisions": []})


async def test_a_model_extraction_is_traced_and_replayed_with_no_model() -> None:
    recorder = ScriptedProvider(extracting, extraction=True)
    runtime = runtime_on(recorder, memory_extraction="model")
    events = await run_all(runtime, INPUTS)
    export = await runtime.export_session()
    sent = [r for r in recorder.requests if r.response_format is not None]
    traced = [e for n in (1, 2, 3) for e in runtime.why(f"run-{n}").extractions]
    # Each extraction call is traced with its request's digest and the reply.
    assert [t.request.digest for t in traced] == [request_shape(r).digest for r in sent]
    assert len(traced) == 4 and traced[0].reply is not None
    assert traced[0].reply.text == "not json" and '"facts"' in (traced[1].reply.text or "")
    memory = runtime.session_memory
    assert memory is not None and [f.text for f in memory.facts]

    provider = replay_provider(export)
    assert [c.purpose for c in provider.calls].count("extraction") == 4
    assert provider.answers_extraction is True
    again = runtime_on(provider, memory_extraction="model")
    assert await run_all(again, provider.inputs) == events
    assert provider.position == len(provider.calls)
    assert again.session_memory == memory
    assert await again.export_session() == export
    # In "auto" a replay extracts as the recording did, with no setting to match.
    auto = replay_provider(export)
    await run_all(runtime_on(auto, memory_extraction="auto"), auto.inputs)
    assert auto.position == len(auto.calls)


async def test_rules_where_the_recording_extracted_with_the_model_diverge_there() -> None:
    runtime = runtime_on(ScriptedProvider(extracting, extraction=True), memory_extraction="model")
    await run_all(runtime, INPUTS)
    provider = replay_provider(await runtime.export_session())
    again = runtime_on(provider, memory_extraction="rules")
    await again.run(provider.inputs[0])
    with pytest.raises(ReplayDiverged) as caught:
        await again.run(provider.inputs[1])
    error = caught.value
    assert error.number == 2 and error.run_id == "run-1" and error.cycle is None
    assert "memory extraction" in str(error)


# -- the content store's refs, named by run id ---------------------------------------------


class ElsewhereIds(SequentialIds):
    """Another environment's ids: the same kinds, other names."""

    def new_id(self, prefix: str) -> str:
        return "x" + super().new_id(prefix)


async def test_a_session_with_the_content_store_replays_under_other_ids() -> None:
    made = make_runtime(
        SHOUT,
        provider=ScriptedProvider(script),
        model="scripted",
        storage=MemoryStorage(),
        memory_extraction="rules",
        ids=ElsewhereIds(),
    )
    await run_all(made, INPUTS)
    export = await made.export_session()
    listed = made.why("xrun-3").calls[-1].entries
    assert "extension:content:xrun-1" in {e.id for e in listed}  # the store's refs, listed
    provider = replay_provider(export)
    again = runtime_on(provider)  # SequentialIds: run-1, run-2... were it not for the replay
    runs = [await again.run(said) for said in provider.inputs]
    assert provider.position == len(provider.calls)
    assert [r.state.run_id for r in runs] == ["xrun-1", "xrun-2", "xrun-3"]
    assert [m.content_ref for m in again.history] == [m.content_ref for m in made.history]

    class Wrapped:
        """The same replies behind a provider of the user's own: the run ids are not driven."""

        def __init__(self, inner: Any) -> None:
            self.stream = inner.stream

    bare = replay_provider(export)
    other = runtime_on(Wrapped(bare))
    await other.run(bare.inputs[0])
    with pytest.raises(ReplayDiverged, match="message"):  # the listing names run-1, not xrun-1
        await other.run(bare.inputs[1])


async def test_a_divergence_in_an_extraction_reaches_the_next_run() -> None:
    runtime = runtime_on(ScriptedProvider(extracting, extraction=True), memory_extraction="model")
    await run_all(runtime, INPUTS)
    provider = replay_provider(await runtime.export_session())
    # As if the extraction had been sent something else when it was recorded.
    at = next(n for n, c in enumerate(provider.calls) if c.purpose == "extraction")
    recorded = provider.calls[at]
    other = recorded.call.request.model_copy(update={"digest": "0" * 64, "max_tokens": 9})
    provider.calls[at] = RecordedCall(
        recorded.run_id, recorded.call.model_copy(update={"request": other})
    )
    again = runtime_on(provider, memory_extraction="model")
    assert (await again.run(provider.inputs[0])).ok  # the answer is out before the extraction
    with pytest.raises(ReplayDiverged) as caught:
        await again.idle()
    with pytest.raises(ReplayDiverged) as later:
        await again.run(provider.inputs[1])
    assert later.value is caught.value is provider.diverged
    error = caught.value
    assert error.number == at + 1 and error.run_id == "run-1" and error.cycle is None
    assert str(error).startswith(f"replay diverged at model call {at + 1} (run 'run-1', its memory")
    assert "max_tokens is 256, the recording has 9" in error.how
