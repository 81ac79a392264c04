"""A real model behind the OpenAI adapter (issue 10): llama-server, built from the pinned
llama.cpp source, running the committed test model on 127.0.0.1, driven by create_runtime.

The model is tiny, so these tests assert the protocol (streamed deltas that make the answer,
a tool call checked and run, the tool-result turn, usage, cancellation reaching the server),
not the words. Decoding is greedy: a run is the same every time. The model picks a tool from
the words of the request, but copies values badly (models/README.md): the requests here are
phrased as it was trained to read them, and its arguments are checked for shape only."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

import agrun
from agrun import FunctionSkill, SkillContext, SkillHelpers

pytestmark = pytest.mark.cpython_only

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from llama_process import llama_server_running  # noqa: E402


class City(BaseModel):
    city: str


def weather(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    assert isinstance(context.arguments, City)
    CALLS.append(context.arguments.city)
    return "Sunny, 21 degrees"


CALLS: list[str] = []
WEATHER = FunctionSkill(
    "get_weather", weather, description="Get the current weather for a city.", input_model=City
)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with llama_server_running(window=2048) as url:
        yield url


def runtime(url: str, **options: object) -> agrun.Runtime:
    from agrun.adapters.openai import llama_server

    return agrun.create_runtime(
        provider=llama_server(url),
        skills=[WEATHER],
        context_window=2048,
        max_reply_tokens=160,
        temperature=0.0,
        token_factor=3.0,
        memory_extraction="rules",
        **options,  # type: ignore[arg-type]
    )


async def test_a_streamed_answer_is_its_tokens_and_its_usage_is_kept(server: str) -> None:
    rt = runtime(server)
    tokens: list[str] = []
    result = await rt.run("Hello there!", on_token=tokens.append)
    assert result.ok and isinstance(result.output, str) and result.output.strip()
    assert len(tokens) > 1 and "".join(tokens) == result.output
    last = rt.state.last_run
    assert last is not None and last.model_calls == 1 and last.usage is not None
    assert last.usage.prompt_tokens > 0 and last.usage.completion_tokens > 0
    assert "None" in rt.token_factors  # calibrated from the server's own count


async def test_a_tool_call_is_checked_run_and_answered_and_the_chat_goes_on(server: str) -> None:
    CALLS.clear()
    rt = runtime(server)
    result = await rt.run("Get the current weather for a city: Paris.")
    roles = [m.role for m in result.messages]
    assert result.ok, result.error
    assert roles == ["user", "assistant", "tool", "assistant"]
    (call,) = result.messages[1].tool_calls
    assert call.name == "get_weather"
    assert len(CALLS) == 1 and CALLS[0].strip()  # arguments the skill's model accepted
    tool = result.messages[2]
    assert tool.tool_call_id == call.id and tool.content == "Sunny, 21 degrees"
    assert isinstance(result.output, str) and result.output.strip()
    last = rt.state.last_run
    assert last is not None and last.model_calls == 2
    # The next turn goes on from the stored pair: a multi-turn chat.
    again = await rt.run("Hello there!")
    assert again.ok and len(rt.history) == 6
    assert [m.role for m in rt.history[:4]] == roles


async def test_a_cancelled_stream_ends_the_request_and_keeps_the_ask_and_the_partial_answer(
    server: str,
) -> None:
    rt = runtime(server)
    await rt.run("Hello!")
    before = rt.history
    seen = []
    # Closed as the loop is left (not when the generator is collected): the run is cancelled
    # then, its HTTP request included.
    async with contextlib.aclosing(rt.stream("Hello there, how are you today?")) as stream:
        async for item in stream:
            seen.append(item)
            if isinstance(item, agrun.TokenItem):
                break
    assert any(isinstance(item, agrun.TokenItem) for item in seen)
    # The person's words stay, marked cancelled (issue 18.1), and so does the answer as far
    # as it streamed, marked cancelled too (issue 23: Stop keeps the partial answer).
    streamed = "".join(item.text for item in seen if isinstance(item, agrun.TokenItem))
    assert rt.history[:-2] == before
    ask, partial = rt.history[-2:]
    assert (ask.role, ask.content, ask.run_status) == (
        "user",
        "Hello there, how are you today?",
        "cancelled",
    )
    assert (partial.role, partial.run_status) == ("assistant", "cancelled")
    assert streamed.strip() and partial.content.startswith(streamed.strip())
    # The server serves again: a cancelled generation does not hold its slot. On a busy
    # machine the first call after the cut can still meet the connection the cut closed
    # (seen twice in ~10 full runs, as provider_unavailable): a second try must then work.
    outcomes = []
    for _ in range(2):
        again = await asyncio.wait_for(rt.run("Hello again!"), timeout=60)
        outcomes.append(again.error.code if again.error else "ok")
        if again.ok:
            break
    assert outcomes[-1] == "ok" and set(outcomes) <= {"ok", "provider_unavailable"}, outcomes
