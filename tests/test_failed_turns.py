"""A failed or cancelled turn keeps what the person asked, and nothing else (issue 18.1).

The person's message stays in the history marked with how its run ended (``run_status``,
``error_code``); the next turn's window sees it, so "try again" reaches the model with the
request it refers to. No partial answer, tool traffic, memory entry or extraction is kept.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import agrun
from agrun.chat import ModelReply, ModelRequest, ProviderHttpError, ProviderUnavailable, Usage
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime

ASK = "Summarize the Q3 sales report in three bullet points."


def flaky_model(fail_first: int) -> ScriptedProvider:
    """A model whose first ``fail_first`` calls fail (the server is unavailable), then answer."""
    calls = {"n": 0}

    def script(request: ModelRequest) -> str | ModelReply:
        calls["n"] += 1
        if calls["n"] <= fail_first:
            raise ProviderUnavailable("the server is overloaded")
        return "Here are the three points."

    return ScriptedProvider(script)


async def test_try_again_after_a_provider_error_sees_what_was_asked() -> None:
    provider = flaky_model(fail_first=1)
    store = MemoryStorage()
    runtime = make_runtime(provider=provider, model="scripted", storage=store)
    failed = await runtime.run(ASK)
    assert failed.state.status == "failed" and failed.error is not None
    assert [(m.content, m.run_status, m.error_code) for m in runtime.history] == [
        (ASK, "failed", failed.error.code)
    ]
    # No extraction ran for the failed turn: the provider saw one call, the answer's.
    assert len(provider.requests) == 1
    assert runtime.session_memory is None and runtime.memory.read_all() == ()

    retried = await runtime.run("try again")
    assert retried.ok
    sent = provider.requests[1].messages
    # One user message carries both (roles still alternate), the failure said in words.
    assert [m.role for m in sent] == ["system", "user"]
    said = sent[1].content or ""
    assert said.startswith(ASK) and said.endswith("try again")
    assert "not answered" in said and failed.error.code in said


async def test_raise_for_status_turns_a_failed_run_into_a_typed_error() -> None:
    runtime = make_runtime(provider=flaky_model(fail_first=1), model="scripted")
    failed = await runtime.run(ASK)
    with pytest.raises(agrun.RunFailedError, match="provider_unavailable") as raised:
        failed.raise_for_status()
    error = raised.value
    assert isinstance(error, agrun.AgrunError)
    assert (error.code, error.status, error.result) == ("provider_unavailable", "failed", failed)
    # A run that succeeded passes through, so the call chains.
    answered = await runtime.run("try again")
    assert answered.raise_for_status() is answered
    assert answered.raise_for_status().output == "Here are the three points."


async def test_a_failed_turn_keeps_no_partial_answer_or_tool_traffic() -> None:
    def script(request: ModelRequest) -> ModelReply:
        if not any(m.role == "tool" for m in request.messages):
            return ModelReply(text="Let me check", tool_calls=(tool_call("nope", {}),))
        raise ProviderHttpError(400, "bad request")

    provider = ScriptedProvider(script)
    runtime = make_runtime(provider=provider, model="scripted", memory_extraction="rules")
    result = await runtime.run("check the stock")
    assert result.state.status == "failed"
    assert [(m.role, m.author, m.content) for m in runtime.history] == [
        ("user", "person", "check the stock")
    ]
    assert result.messages == runtime.history


async def test_the_mark_survives_export_import_and_resume() -> None:
    store = MemoryStorage()
    runtime = make_runtime(provider=flaky_model(fail_first=1), model="scripted", storage=store)
    await runtime.run(ASK)
    exported = await runtime.export_session()
    messages = json.loads(exported)["session"]["turns"][0]["messages"]
    assert [(m["runStatus"], m["errorCode"]) for m in messages] == [
        ("failed", "provider_unavailable")
    ]

    other = make_runtime(provider=flaky_model(fail_first=0), storage=MemoryStorage())
    await other.import_session(exported)
    assert [(m.content, m.run_status) for m in other.history] == [(ASK, "failed")]

    resumed = make_runtime(provider=flaky_model(fail_first=0), storage=store)
    await resumed.open()
    assert resumed.history == runtime.history


async def test_a_cancelled_skill_run_keeps_the_ask_marked_cancelled() -> None:
    runtime = make_runtime(storage=MemoryStorage())
    token = agrun.CancelToken()
    token.cancel("the person left")
    result = await runtime.run("never mind", signal=token)
    assert result.state.status == "cancelled"
    assert [(m.content, m.run_status, m.error_code) for m in runtime.history] == [
        ("never mind", "cancelled", "cancelled")
    ]
    # A later successful turn follows it; the kept ask is not taken for its request.
    ok = await runtime.run("hello")
    assert ok.ok and ok.output == "echo: hello"
    assert [m.content for m in runtime.history] == ["never mind", "hello", "echo: hello"]


# -- every model call counted, the extraction off the answer's path (issue 18.4, 18.7) ------


def gated_extraction() -> tuple[ScriptedProvider, asyncio.Event]:
    """A model that answers at once and whose extraction calls wait for ``gate``."""
    gate = asyncio.Event()
    facts = json.dumps({"facts": ["My name is Ann."], "preferences": [], "decisions": []})

    async def script(request: ModelRequest) -> ModelReply:
        if request.response_format is None:
            return ModelReply(text="Hello Ann.", usage=Usage(prompt_tokens=10, completion_tokens=3))
        await gate.wait()
        return ModelReply(text=facts, usage=Usage(prompt_tokens=50, completion_tokens=20))

    return ScriptedProvider(script, extraction=True), gate


async def test_the_answer_returns_before_the_extraction_call_and_last_run_counts_both() -> None:
    provider, gate = gated_extraction()
    store = MemoryStorage()
    runtime = make_runtime(provider=provider, model="scripted", storage=store)
    tokens: list[str] = []
    result = await runtime.run("My name is Ann.", on_token=tokens.append)
    # Answered and committed while the extraction still waits.
    assert result.ok and "".join(tokens) == "Hello Ann."
    assert not gate.is_set() and runtime.session_memory is None
    last = runtime.state.last_run
    assert last is not None and (last.model_calls, last.calls_by_purpose) == (1, {"answer": 1})
    stored = await store.load_session("default")
    assert stored is not None and [m["content"] for m in stored.messages] == [
        "My name is Ann.",
        "Hello Ann.",
    ]

    gate.set()
    await runtime.idle()
    assert runtime.session_memory is not None
    assert [f.text for f in runtime.session_memory.facts] == ["My name is Ann."]
    last = runtime.state.last_run
    assert last is not None and last.model_calls == 2
    assert last.calls_by_purpose == {"answer": 1, "extraction": 1}
    assert last.usage == Usage(prompt_tokens=60, completion_tokens=23)
    # What the close made is committed too, and a resumed runtime reads it.
    resumed = make_runtime(provider=provider, model="scripted", storage=store)
    await resumed.open()
    assert resumed.session_memory == runtime.session_memory
    assert resumed.state.last_run == last


async def test_the_next_turn_waits_for_the_close_of_the_one_before() -> None:
    provider, gate = gated_extraction()
    runtime = make_runtime(provider=provider, model="scripted")
    await runtime.run("My name is Ann.")
    second = asyncio.ensure_future(runtime.run("And you?"))
    await asyncio.sleep(0.01)
    assert not second.done()  # queued behind the first turn's memory close
    gate.set()
    assert (await asyncio.wait_for(second, 5)).ok
    first_close = next(i for i, r in enumerate(provider.requests) if r.response_format)
    second_answer = next(
        i for i, r in enumerate(provider.requests) if r.response_format is None and i > 0
    )
    assert first_close < second_answer


@pytest.mark.parametrize("mode", ["model", "auto"])
async def test_global_memory_off_skips_the_extraction_call_in_every_mode(mode: str) -> None:
    provider, gate = gated_extraction()
    gate.set()
    runtime = make_runtime(
        provider=provider, model="scripted", memory_extraction=mode, global_memory=False
    )
    result = await runtime.run("My name is Ann.")
    await runtime.idle()
    assert all(r.response_format is None for r in provider.requests)
    assert len(provider.requests) == 1
    # Session memory is extracted by the rules instead.
    assert runtime.session_memory is not None
    assert [f.text for f in runtime.session_memory.facts] == ["My name is Ann."]
    assert result.state.status == "succeeded"
    last = runtime.state.last_run
    assert last is not None and last.calls_by_purpose == {"answer": 1}
