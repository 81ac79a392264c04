"""Bounds on what the network (or a provider, or a skill) can make a turn hold or wait for
(issue 20): a reply far past max_reply_tokens, a tool result of megabytes, a stream that
never ends, JSON nested 30,000 deep. Each ends in a typed error (or a typed cut) with the
session as it was; the real-server tests run tools/openai_double.py on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agrun import FunctionSkill, SkillContext, SkillHelpers
from agrun.adapters.openai import ReplyDecoder, completion_events, embedding_vectors
from agrun.adapters.openai._failures import http_failure
from agrun.adapters.openai._json import MAX_DEPTH, parse_json
from agrun.adapters.openai._scrub import Scrubber
from agrun.chat import (
    ModelReply,
    ModelRequest,
    ProviderProtocolError,
    ProviderReplyTooLong,
    TextDelta,
    ToolCallDelta,
)
from agrun.context import EstimatingTokenizer
from agrun.kernel._reply_cap import ReplyCap, cap_tool_result, tool_result_limit
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime

ROOT = Path(__file__).resolve().parent.parent
DEEP = "[" * 30_000 + "]" * 30_000


# -- the reply cap (pure) ---------------------------------------------------------------


def test_a_reply_within_its_tokens_passes_and_one_far_past_them_is_ended() -> None:
    tokenizer = EstimatingTokenizer()
    cap = ReplyCap(tokenizer, max_reply_tokens=100)
    assert (cap.max_tokens, cap.max_bytes) == (1424, 16 * 1424)
    word = "token "
    sent = 0
    while tokenizer.count(word * (sent + 1)) <= 100:  # what a server honouring 100 sends
        cap.add(TextDelta(text=word))
        sent += 1
    with pytest.raises(ProviderReplyTooLong, match="max_reply_tokens=100"):
        for _ in range(30 * sent):
            cap.add(TextDelta(text=word))


def test_tool_call_arguments_count_and_a_long_token_trips_the_byte_bound() -> None:
    cap = ReplyCap(EstimatingTokenizer(), max_reply_tokens=10)
    cap.add(ToolCallDelta(index=0, id="c", name="get_weather", arguments='{"city": "'))
    with pytest.raises(ProviderReplyTooLong, match="bytes"):
        cap.add(ToolCallDelta(index=0, arguments="x" * 50_000))
    # The delta that crossed the bound is not counted in: the reply stays what came before.
    cap.add(ToolCallDelta(index=0, arguments='"}'))


class CountsPerChar:
    """A tokenizer counting a token per character, and how many times it was asked."""

    calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text)


def test_the_reply_is_recounted_a_bounded_number_of_times() -> None:
    tokenizer = CountsPerChar()
    cap = ReplyCap(tokenizer, max_reply_tokens=5_000)
    for _ in range(20_000):
        cap.add(TextDelta(text="a"))
    # 20,000 deltas: counted from 21,024 characters on only (the cap's tokens), never per
    # delta, then again each time the reply grew by a quarter.
    assert tokenizer.calls == 0
    with pytest.raises(ProviderReplyTooLong, match="about 26,280 tokens"):
        for _ in range(10_000):
            cap.add(TextDelta(text="a"))
    assert tokenizer.calls == 2


def test_a_tool_result_is_cut_on_a_character_boundary_with_a_note() -> None:
    limit = tool_result_limit(8192)
    assert limit == 65_536 and tool_result_limit(131_072) == 8 * 131_072
    assert cap_tool_result("short", limit) == ("short", None)
    text = "é" * 40_000  # 80,000 bytes
    cut, size = cap_tool_result(text, limit)
    assert size == 80_000
    kept, note = cut.split("\n[agrun: ")
    assert kept == "é" * (limit // 2)
    assert note == "this result was cut to its first 65,536 of 80,000 bytes]"


# -- JSON from the network is depth-checked before it is parsed (pure) -------------------


def test_every_parse_of_provider_bytes_refuses_deep_nesting_typed() -> None:
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(ProviderProtocolError, match="deeper than 64"):
        parse_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    decoder = ReplyDecoder()
    with pytest.raises(ProviderProtocolError, match="nested deeper"):
        decoder.feed(f'data: {{"choices": [], "x": {DEEP}}}\n\n'.encode())
    with pytest.raises(ProviderProtocolError, match="nested deeper"):
        completion_events(f'{{"choices": {DEEP}}}'.encode())
    with pytest.raises(ProviderProtocolError, match="nested deeper"):
        embedding_vectors(f'{{"data": {DEEP}}}'.encode(), 1)
    refused = http_failure(
        400, f'{{"error": {DEEP}}}'.encode(), attempts=1, retry_after=None, scrub=Scrubber()
    )
    assert isinstance(refused, ProviderProtocolError) and "HTTP 400" in str(refused)


# -- through the runtime, any provider ----------------------------------------------------


async def test_a_reply_far_past_max_reply_tokens_fails_the_turn_with_the_session_as_it_was() -> (
    None
):
    flood = [TextDelta(text="x" * 50_000)] * 1000  # 50,000,000 characters, one object

    def script(request: ModelRequest) -> Any:
        return "fine" if request.messages[-1].content == "hello" else flood

    store = MemoryStorage()
    runtime = make_runtime(
        provider=ScriptedProvider(script), storage=store, memory_extraction="rules"
    )
    assert (await runtime.run("hello")).ok
    before = json.loads(await store.export_session("default"))["session"]["turns"]
    tokens: list[str] = []
    failed = await runtime.run("flood me", on_token=tokens.append)
    assert failed.error is not None and failed.error.code == "provider_reply_too_long"
    event = next(e for e in failed.events if e.kind == "ModelCallFailed")
    assert event.code == "provider_reply_too_long" and "max_reply_tokens=512" in event.message
    assert len(event.partial_text) <= 16 * 3072 and "".join(tokens) == event.partial_text
    after = json.loads(await store.export_session("default"))["session"]["turns"]
    assert after[0] == before[0]
    kept = next(t for t in after if t["turnId"] == failed.state.run_id)
    assert [(m["content"], m["errorCode"]) for m in kept["messages"]] == [
        ("flood me", "provider_reply_too_long")
    ]
    assert len(await store.export_session("default")) < 100_000


async def test_a_huge_tool_result_is_cut_in_history_with_a_typed_note() -> None:
    def dump(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        return "z" * 5_000_000

    def script(request: ModelRequest) -> Any:
        if request.messages[-1].role == "tool":
            return "done"
        return ModelReply(tool_calls=(tool_call("dump", {"input": "x"}),))

    skill = FunctionSkill("dump", dump, description="Dumps a lot.")
    runtime = make_runtime(skill, provider=ScriptedProvider(script), memory_extraction="rules")
    result = await runtime.run("dump it")
    assert result.ok, result.error
    (finished,) = [e for e in result.events if e.kind == "ToolCallFinished"]
    assert finished.outcome == "returned" and finished.cut_from_bytes == 5_000_000
    (tool_message,) = [m for m in runtime.history if m.role == "tool"]
    assert len(tool_message.content.encode()) < 66_000
    assert tool_message.content.endswith("cut to its first 65,536 of 5,000,000 bytes]")


# -- OpenAIProvider on httpx against a real misbehaving server (CPython) -------------------


def served_runtime(double: Any, scenario: str, **provider_options: Any) -> Any:
    from agrun.adapters.openai import HttpxTransport, OpenAIProvider

    async def no_sleep(seconds: float) -> None:
        pass

    provider_options.setdefault("timeout_s", 10.0)
    provider = OpenAIProvider(
        double.url_for(scenario),
        "double-1",
        transport=HttpxTransport(),
        max_retries=0,
        sleep=no_sleep,
        **provider_options,
    )
    store = MemoryStorage()
    runtime = make_runtime(provider=provider, storage=store, memory_extraction="rules")
    return runtime, store


async def failed_turn(double: Any, scenario: str, code: str, **options: Any) -> Any:
    """One turn against ``scenario``: it fails with ``code``, keeping only the person's
    message (marked), and the double saw the client go or finish."""
    runtime, store = served_runtime(double, scenario, **options)
    result = await runtime.run("go")
    assert result.error is not None and result.error.code == code, result.error
    turns = json.loads(await store.export_session("default"))["session"]["turns"]
    assert [(m["role"], m["content"], m["errorCode"]) for t in turns for m in t["messages"]] == [
        ("user", "go", code)
    ]
    assert double.wait_until_done(scenario)
    return result


@pytest.mark.cpython_only
async def test_a_50_mb_stream_is_ended_at_the_cap_and_the_connection_dropped(double: Any) -> None:
    result = await failed_turn(double, "huge_stream", "provider_reply_too_long")
    event = next(e for e in result.events if e.kind == "ModelCallFailed")
    # The first 50 KB delta is already past the 49,152 bytes: nothing of it is kept.
    assert event.partial_text == "" and "49,152 bytes" in event.message
    assert double.requests_for("huge_stream")[0].disconnected


@pytest.mark.cpython_only
async def test_tool_arguments_streaming_without_end_are_capped_too(double: Any) -> None:
    await failed_turn(double, "huge_tool_call", "provider_reply_too_long")
    assert double.requests_for("huge_tool_call")[0].disconnected


@pytest.mark.cpython_only
async def test_a_20_mb_whole_completion_is_not_read_whole(double: Any) -> None:
    result = await failed_turn(double, "huge_completion", "provider_reply_too_long")
    assert "longer than 8,388,608 bytes" in result.error.message


@pytest.mark.cpython_only
async def test_keep_alive_comments_do_not_hold_off_the_idle_deadline(double: Any) -> None:
    result = await failed_turn(double, "keepalive_forever", "provider_timeout", idle_timeout_s=1.0)
    assert "nothing of the model's reply came for 1 s" in result.error.message
    assert double.requests_for("keepalive_forever")[0].disconnected


@pytest.mark.cpython_only
async def test_deltas_that_never_stop_meet_the_whole_call_deadline(double: Any) -> None:
    result = await failed_turn(
        double, "slow_stream", "provider_timeout", timeout_s=1.5, idle_timeout_s=30.0
    )
    assert "took longer than 1.5 s in all" in result.error.message
    event = next(e for e in result.events if e.kind == "ModelCallFailed")
    assert event.partial_text.startswith("tick 0 tick 1 ")
    assert double.requests_for("slow_stream")[0].disconnected


@pytest.mark.cpython_only
@pytest.mark.parametrize("scenario", ["deep_chunk", "deep_completion", "deep_error"])
async def test_json_nested_30000_deep_is_a_protocol_error(double: Any, scenario: str) -> None:
    result = await failed_turn(double, scenario, "provider_protocol_error")
    assert "nested deeper than 64 levels" in result.error.message
