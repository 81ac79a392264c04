"""Per-run usage limits (issue 24.3): model requests, tool calls and tokens, counted over
every model call of the run; passing one fails the run ``usage_limit_exceeded``."""

from __future__ import annotations

import json
from typing import Any

import pytest

import agrun
from agrun import ConfigError, UsageLimitExceeded, UsageLimits
from agrun.chat import Finish, ModelReply, ModelRequest, TextDelta, ToolCallRequest, Usage
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


ADD = agrun.tool(add)


def agent(script: Any, **options: Any) -> tuple[agrun.Runtime, ScriptedProvider]:
    provider = ScriptedProvider(script)
    options.setdefault("memory_extraction", "rules")
    return make_runtime(ADD, provider=provider, model="scripted", **options), provider


def calls(*requests: ToolCallRequest) -> ModelReply:
    return ModelReply(tool_calls=requests, finish_reason="tool_calls")


def in_turn(*answers: Any) -> Any:
    """A script that gives ``answers`` one call after another."""
    left = iter(answers)
    return lambda request: next(left)


def adds_forever(request: ModelRequest) -> Any:
    return calls(tool_call("add", {"a": 1, "b": 2}))


async def test_the_request_limit_stops_the_run_before_the_call_past_it() -> None:
    runtime, provider = agent(adds_forever)
    result = await runtime.run("add a lot", usage_limits=UsageLimits(request_limit=3))
    assert result.state.status == "failed" and result.error is not None
    assert result.error.code == "usage_limit_exceeded"
    assert "request_limit of 3 (requests=3)" in result.error.message
    assert len(provider.requests) == 3  # the fourth call was never made
    # As for any failed turn, the person's message is kept, marked.
    (kept,) = result.messages
    assert (kept.content, kept.run_status, kept.error_code) == (
        "add a lot",
        "failed",
        "usage_limit_exceeded",
    )
    assert runtime.history[-1].error_code == "usage_limit_exceeded"
    with pytest.raises(UsageLimitExceeded) as raised:
        result.raise_for_status()
    assert isinstance(raised.value, agrun.RunFailedError)
    assert raised.value.code == "usage_limit_exceeded"


async def test_a_run_within_its_limits_answers() -> None:
    runtime, provider = agent(in_turn(calls(tool_call("add", {"a": 1, "b": 2})), "It is 3."))
    limits = UsageLimits(request_limit=2, tool_calls_limit=1, total_tokens_limit=100_000)
    result = await runtime.run("1+2?", usage_limits=limits)
    assert result.ok and result.output == "It is 3." and len(provider.requests) == 2


async def test_the_tool_call_limit_runs_none_of_a_batch_past_it() -> None:
    ran: list[int] = []

    def note(a: int) -> int:
        """Notes a number."""
        ran.append(a)
        return a

    batch = ModelReply(
        tool_calls=(
            ToolCallRequest(id="c1", name="note", arguments='{"a": 1}'),
            ToolCallRequest(id="c2", name="note", arguments='{"a": 2}'),
        ),
        finish_reason="tool_calls",
    )
    provider = ScriptedProvider(in_turn(calls(tool_call("note", {"a": 0})), batch, "done"))
    runtime = make_runtime(
        agrun.tool(note), provider=provider, model="m", memory_extraction="rules"
    )
    result = await runtime.run("note", usage_limits={"tool_calls_limit": 2})
    assert result.error is not None and result.error.code == "usage_limit_exceeded"
    assert "2 tool call(s) would exceed the tool_calls_limit of 2 (tool_calls=1)" in (
        result.error.message
    )
    assert ran == [0]


COST = Usage(prompt_tokens=100, completion_tokens=15)


@pytest.mark.parametrize(
    ("limit", "used"),
    [
        ("input_tokens_limit", "input_tokens=200"),
        ("output_tokens_limit", "output_tokens=30"),
        ("total_tokens_limit", "total_tokens=230"),
    ],
)
async def test_token_limits_count_the_sums_of_every_call(limit: str, used: str) -> None:
    # Each call costs 100 prompt and 15 reply tokens: one call is within every limit
    # below, the second passes the one under test.
    def costly(request: ModelRequest) -> ModelReply:
        first = len(provider.requests) == 1
        if first:
            call = ToolCallRequest(id="c", name="add", arguments='{"a": 1, "b": 2}')
            return ModelReply(tool_calls=(call,), finish_reason="tool_calls", usage=COST)
        return ModelReply(text="3", usage=COST)

    runtime, provider = agent(costly)
    bound = {"input_tokens_limit": 150, "output_tokens_limit": 20, "total_tokens_limit": 200}
    result = await runtime.run("1+2?", usage_limits={limit: bound[limit]})
    assert result.error is not None and result.error.code == "usage_limit_exceeded"
    assert f"{limit} of {bound[limit]} ({used})" in result.error.message
    assert len(provider.requests) == 2
    # Within the same limit times two, the run answers.
    runtime, provider = agent(costly)
    result = await runtime.run("1+2?", usage_limits={limit: 2 * bound[limit] + 30})
    assert result.ok


async def test_correction_calls_count_as_requests() -> None:
    # A refused call goes back to the model as a correction frame: that is a model call too.
    script = (calls(tool_call("nope", {})), calls(tool_call("nope", {})), "fine")
    runtime, provider = agent(in_turn(*script), max_corrections=5)
    result = await runtime.run("go", usage_limits=UsageLimits(request_limit=2))
    assert result.error is not None and result.error.code == "usage_limit_exceeded"
    assert len(provider.requests) == 2
    said = [m.content or "" for m in provider.requests[1].messages if m.role == "user"]
    assert any("These tool calls were not run" in text for text in said)
    runtime, provider = agent(in_turn(*script), max_corrections=5)
    assert (await runtime.run("go", usage_limits=UsageLimits(request_limit=3))).ok


async def test_a_provider_without_usage_is_counted_by_estimate() -> None:
    # The events themselves: a reply of 200 words and a finish with no usage at all.
    provider = ScriptedProvider(
        lambda request: [TextDelta(text="word " * 200), Finish(reason="stop")]
    )
    runtime = make_runtime(provider=provider, model="m", memory_extraction="rules")
    result = await runtime.run("talk", usage_limits=UsageLimits(output_tokens_limit=50))
    assert result.error is not None and result.error.code == "usage_limit_exceeded"
    assert "output_tokens_limit of 50" in result.error.message


async def test_the_extraction_after_the_answer_does_not_count() -> None:
    # One request allowed: the answer takes it; the model extraction runs after run()
    # returned and is not the run's.
    provider = ScriptedProvider(lambda request: "Noted, you like tea.", extraction=True)
    runtime = make_runtime(provider=provider, model="m", memory_extraction="model")
    result = await runtime.run("I like tea", usage_limits=UsageLimits(request_limit=1))
    assert result.ok
    await runtime.idle()
    last = runtime.state.last_run
    assert last is not None and last.calls_by_purpose is not None
    # (the scripted reply is no extraction JSON, so the extraction asks again: two calls)
    assert last.calls_by_purpose["answer"] == 1 and last.calls_by_purpose["extraction"] >= 1
    assert len(provider.requests) == 1 + last.calls_by_purpose["extraction"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"request_limit": 0}, "usage_limits.request_limit"),
        ({"requestLimit": "3"}, "usage_limits.requestLimit"),
        ({"request_limit": True}, "usage_limits.request_limit"),
        ({"tokens": 3}, "usage_limits.tokens"),
        (3, "usage_limits must be an agrun.UsageLimits"),
    ],
)
async def test_bad_limits_are_refused_naming_them(value: Any, problem: str) -> None:
    runtime, provider = agent("hi")
    with pytest.raises(ConfigError, match=problem):
        await runtime.run("hi", usage_limits=value)
    assert provider.requests == []


async def test_camel_case_limits_as_a_page_gives_them() -> None:
    runtime, provider = agent(adds_forever)
    result = await runtime.run("go", usage_limits=json.loads('{"requestLimit": 1}'))
    assert result.error is not None and "request_limit of 1" in result.error.message
    assert len(provider.requests) == 1


@pytest.mark.cpython_only
async def test_limits_hold_against_the_real_http_double(double: Any) -> None:
    from agrun.adapters.openai import HttpxTransport, OpenAIProvider

    # The double's "tools" scenario calls get_weather and get_time (40 prompt and 22 reply
    # tokens); the tool-call limit stops the run before either runs.
    def get_weather(city: str, unit: str) -> str:
        """Today's weather."""
        raise AssertionError("past the limit, no tool runs")

    def get_time(timezone: str) -> str:
        """The time."""
        raise AssertionError("past the limit, no tool runs")

    provider = OpenAIProvider(
        double.url_for("tools"), "double-1", "sk-test", transport=HttpxTransport()
    )
    runtime = make_runtime(
        agrun.tool(get_weather),
        agrun.tool(get_time),
        provider=provider,
        memory_extraction="rules",
    )
    result = await runtime.run("weather?", usage_limits=UsageLimits(tool_calls_limit=1))
    assert result.error is not None and result.error.code == "usage_limit_exceeded"
    assert "2 tool call(s) would exceed the tool_calls_limit of 1" in result.error.message
    # The provider's own usage is what the token limits count.
    result = await runtime.run("weather?", usage_limits=UsageLimits(output_tokens_limit=21))
    assert result.error is not None
    assert "output_tokens_limit of 21 (output_tokens=22)" in result.error.message
    assert len(double.requests_for("tools")) == 2
