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
from agrun.testing import ReplayDiverged, ScriptedProvider, replay_provider, tool_call
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
