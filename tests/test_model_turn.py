"""The model turn: a run that builds its own context pack, streams the model's reply, and
runs the model's tool calls as skills (issue 10), against the scripted provider."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest
from pydantic import BaseModel

import agrun
from agrun import CancelToken, FunctionSkill, SkillContext, SkillHelpers
from agrun.chat import (
    ChatMessage,
    ModelReply,
    ModelRequest,
    ProviderHttpError,
    TextDelta,
    Usage,
)
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime


class AddArgs(BaseModel):
    a: int
    b: int


async def add(input: str, context: SkillContext, helpers: SkillHelpers) -> int:
    args = context.arguments
    assert isinstance(args, AddArgs)
    helpers.append_memory({"kind": "fact", "text": f"{args.a}+{args.b} was asked"})
    return args.a + args.b


ADD = FunctionSkill("add", add, description="Adds two integers.", input_model=AddArgs)


def weather(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    return f"sunny in {context.arguments['city']}"


WEATHER = FunctionSkill(
    "weather",
    weather,
    description="Today's weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
SHOUT = FunctionSkill("shout", lambda input, context, helpers: input.upper(), description="Shouts.")


def agent(script: Any, *skills: Any, **options: Any) -> tuple[agrun.Runtime, ScriptedProvider]:
    """A runtime on a scripted model; its turns' memory is extracted by the rules, so the
    provider sees the turn's own calls only (tests/test_continuity.py covers extraction)."""
    provider = ScriptedProvider(script)
    chosen = skills or (ADD, WEATHER, SHOUT)
    options.setdefault("memory_extraction", "rules")
    return make_runtime(*chosen, provider=provider, model="scripted", **options), provider


def last_user(request: ModelRequest) -> str:
    return next(m.content or "" for m in reversed(request.messages) if m.role == "user")


async def test_a_plain_answer_streams_and_becomes_the_turn() -> None:
    runtime, provider = agent(lambda request: "Hello there, friend.")
    tokens: list[str] = []
    result = await runtime.run("hi", on_token=tokens.append)
    assert result.ok and result.output == "Hello there, friend."
    assert len(tokens) > 1 and "".join(tokens) == "Hello there, friend."
    assert [(m.role, m.content) for m in result.messages] == [
        ("user", "hi"),
        ("assistant", "Hello there, friend."),
    ]
    assert runtime.history == result.messages
    kinds = [event.kind for event in result.events]
    assert kinds.index("ModelCallStarted") < kinds.index("ModelCallFinished")
    started = next(e for e in result.events if e.kind == "ModelCallStarted")
    finished = next(e for e in result.events if e.kind == "ModelCallFinished")
    assert started.pack_id == finished.pack_id == provider.requests[0].pack_id
    assert finished.usage is not None and finished.usage.prompt_tokens > 0
    last = runtime.state.last_run
    assert last is not None and last.model_calls == 1 and last.usage == finished.usage


async def test_the_request_holds_the_system_prompt_the_history_and_the_tools() -> None:
    runtime, provider = agent(lambda request: f"answer to {last_user(request)}",
                              system_prompt="Be brief.")  # fmt: skip
    await runtime.run("first question")
    await runtime.run("second question")
    request = provider.requests[1]
    assert request.messages[0].role == "system"
    assert (request.messages[0].content or "").startswith("Be brief.")
    assert [(m.role, m.content) for m in request.messages[1:]] == [
        ("user", "first question"),
        ("assistant", "answer to first question"),
        ("user", "second question"),
    ]
    tools = {spec.name: spec.parameters for spec in request.tools}
    # The built-in echo is not a tool; read_content is, once an answer is in the content store.
    assert set(tools) == {"add", "weather", "shout", "read_content"}
    assert "read_content" not in {spec.name for spec in provider.requests[0].tools}
    assert tools["add"]["required"] == ["a", "b"]
    assert tools["weather"]["properties"] == {"city": {"type": "string"}}
    assert tools["shout"]["required"] == ["input"]


def calls_then_answers(*calls: Any) -> Any:
    def script(request: ModelRequest) -> ModelReply | str:
        if request.messages[-1].role == "tool":
            results = [m.content for m in request.messages if m.role == "tool"]
            return f"done: {'; '.join(r or '' for r in results)}"
        return ModelReply(tool_calls=calls)

    return script


async def test_every_rendered_message_is_what_validating_it_gives(monkeypatch: Any) -> None:
    # The window's plain messages are made without validating them again: each must be,
    # type for type, the message validation makes (tool calls and results included).
    from agrun.kernel import _model_run

    rendered: list[ChatMessage] = []
    render = _model_run.render_messages

    def keep(*args: Any, **kwargs: Any) -> tuple[ChatMessage, ...]:
        messages = render(*args, **kwargs)
        rendered.extend(messages)
        return messages

    monkeypatch.setattr(_model_run, "render_messages", keep)
    runtime, _ = agent(calls_then_answers(tool_call("add", {"a": 2, "b": 3}, id="c1")))
    await runtime.run("what is 2 + 3?")
    await runtime.run("and 4 + 5?")
    assert {m.role for m in rendered} == {"system", "user", "assistant", "tool"}
    for message in rendered:
        assert repr(ChatMessage.model_validate(message.model_dump())) == repr(message)


async def test_tool_calls_run_as_skills_and_their_results_go_back_paired() -> None:
    runtime, provider = agent(calls_then_answers(tool_call("add", {"a": 2, "b": 3}, id="c1")))
    result = await runtime.run("what is 2 + 3?")
    assert result.ok and result.output == "done: 5"
    roles = [(m.role, m.tool_call_id) for m in result.messages]
    assert roles == [("user", None), ("assistant", None), ("tool", "c1"), ("assistant", None)]
    assert result.messages[1].tool_calls[0].name == "add"
    second = provider.requests[1]
    assert [m.role for m in second.messages][-2:] == ["assistant", "tool"]
    assert second.messages[-1].tool_call_id == "c1" and second.messages[-1].content == "5"
    assert [e.text for e in runtime.memory.read_all() if e.kind == "fact"] == ["2+3 was asked"]
    assert result.state.cycle_count == 2
    assert result.state.oodae.cycles[0].act is not None
    assert result.state.oodae.cycles[0].act.tool_calls == ("add:returned",)


async def test_parallel_tool_calls_run_together_and_stay_in_call_order() -> None:
    started: list[str] = []
    both = asyncio.Event()

    async def slow(name: str) -> str:
        started.append(name)
        if len(started) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)
        return f"{name} done"

    first = FunctionSkill("first", lambda i, c, h: slow("first"), description="one")
    second = FunctionSkill("second", lambda i, c, h: slow("second"), description="two")
    script = calls_then_answers(
        tool_call("second", {"input": "x"}, id="b"), tool_call("first", {"input": "y"}, id="a")
    )
    runtime, _ = agent(script, first, second)
    result = await runtime.run("do both")
    assert result.ok and result.output == "done: second done; first done"
    assert [m.tool_call_id for m in result.messages if m.role == "tool"] == ["b", "a"]


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        (tool_call("add", {"a": "two", "b": 3}), "invalid_tool_arguments"),
        (tool_call("add", "{not json"), "invalid_tool_arguments"),
        (tool_call("weather", {"town": "Paris"}), "invalid_tool_arguments"),
        (tool_call("teleport", {"to": "Mars"}), "unknown_tool"),
    ],
)
async def test_a_refused_tool_call_goes_back_as_a_correction_and_fails_past_the_bound(
    bad: Any, code: str
) -> None:
    corrected = agent(
        lambda r: (
            "fixed"
            if any(m.role == "user" and "not run" in (m.content or "") for m in r.messages)
            else ModelReply(tool_calls=(bad,))
        )
    )
    runtime, provider = corrected
    result = await runtime.run("try it")
    assert result.ok and result.output == "fixed"
    frame = next(m for m in result.messages if m.author == "schema_correction")
    assert frame.role == "user" and bad.name in frame.content
    tool = next(m for m in result.messages if m.role == "tool")
    assert tool.tool_call_id == bad.id and (tool.content or "").startswith("error: ")
    # The frame is the library's: the pack still anchors on what the person said.
    assert provider.requests[1].messages[-1].content == frame.content

    store = MemoryStorage()
    stubborn, _ = agent(lambda r: ModelReply(tool_calls=(bad,)), storage=store, max_cycles=8)
    failed = await stubborn.run("try it")
    assert failed.state.status == "failed" and failed.error is not None
    assert failed.error.code == code
    # The person's words stay, marked failed; the refused calls and frames do not.
    assert [(m.role, m.content, m.run_status, m.error_code) for m in stubborn.history] == [
        ("user", "try it", "failed", code)
    ]
    assert failed.messages == stubborn.history
    snapshot = await store.load_session("default")
    assert snapshot is not None and snapshot.memory_entries == []
    assert snapshot.messages == [m.to_wire() for m in stubborn.history]


async def test_near_the_cycle_limit_the_model_is_asked_to_wrap_up_without_tools() -> None:
    def script(request: ModelRequest) -> ModelReply | str:
        if not request.tools:
            return "wrapping up"
        return ModelReply(tool_calls=(tool_call("shout", {"input": "again"}),))

    runtime, provider = agent(script, max_cycles=3)
    result = await runtime.run("loop")
    assert result.ok and result.output == "wrapping up"
    assert [len(r.tools) > 0 for r in provider.requests] == [True, True, False]
    frames = [m for m in result.messages if m.author == "budget_wrap_up"]
    assert len(frames) == 1 and provider.requests[2].messages[-1].content == frames[0].content


async def test_a_run_token_budget_asks_for_the_wrap_up_too() -> None:
    def script(request: ModelRequest) -> ModelReply:
        if not request.tools:
            return ModelReply(text="ok", usage=Usage(prompt_tokens=10, completion_tokens=1))
        return ModelReply(
            tool_calls=(tool_call("shout", {"input": "x"}),),
            usage=Usage(prompt_tokens=900, completion_tokens=10),
        )

    runtime, provider = agent(script, run_token_budget=1000)
    result = await runtime.run("go")
    assert result.ok and len(provider.requests) == 2 and provider.requests[1].tools == ()
    assert result.state.oodae.cycles[-1].orient is not None
    last = runtime.state.last_run
    assert last is not None and last.usage == Usage(prompt_tokens=910, completion_tokens=11)


async def test_a_provider_error_fails_the_run_typed_and_leaves_the_session_as_it_was() -> None:
    store = MemoryStorage()

    def script(request: ModelRequest) -> str:
        if last_user(request) == "break":
            raise ProviderHttpError(401, "invalid api key")
        return "fine"

    runtime, _ = agent(script, storage=store)
    assert (await runtime.run("hello")).ok
    before = await store.export_session("default")
    failed = await runtime.run("break")
    assert failed.state.status == "failed" and failed.error is not None
    assert failed.error.code == "provider_http_error" and "HTTP 401" in failed.error.message
    assert [e.kind for e in failed.events if e.kind.startswith("ModelCall")] == [
        "ModelCallStarted",
        "ModelCallFailed",
    ]
    after = json.loads(await store.export_session("default"))["session"]
    kept = json.loads(before)["session"]
    assert after["turns"][0] == kept["turns"][0]
    kept_ask = next(t for t in after["turns"] if t["turnId"] == failed.state.run_id)["messages"]
    assert [(m["content"], m["runStatus"], m["errorCode"]) for m in kept_ask] == [
        ("break", "failed", "provider_http_error")
    ]
    assert [m.content for m in runtime.history] == ["hello", "fine", "break"]


async def test_a_cut_stream_keeps_its_partial_text_in_the_events_only() -> None:
    runtime, _ = agent(lambda request: [TextDelta(text="The answer is "), TextDelta(text="4")])
    result = await runtime.run("2+2?")
    assert result.error is not None and result.error.code == "provider_stream_cut"
    failed = next(e for e in result.events if e.kind == "ModelCallFailed")
    assert failed.partial_text == "The answer is 4"
    # The partial answer is not kept: only what the person asked, marked failed.
    assert [(m.role, m.content, m.run_status) for m in runtime.history] == [
        ("user", "2+2?", "failed")
    ]
    assert result.output is None


async def test_cancelling_the_run_reaches_the_provider() -> None:
    reached = asyncio.Event()
    closed: list[str] = []

    class Hanging:
        async def stream(self, request: ModelRequest) -> Any:
            try:
                yield TextDelta(text="thinking")
                reached.set()
                await asyncio.sleep(30)
            finally:
                closed.append("closed")

    runtime = make_runtime(provider=Hanging())
    token = CancelToken()
    task = asyncio.ensure_future(runtime.run("slow", signal=token))
    await asyncio.wait_for(reached.wait(), 5)
    token.cancel("the person left")
    result = await asyncio.wait_for(task, 5)
    assert result.state.status == "cancelled" and closed == ["closed"]
    # The ask and what had streamed, both marked (tests/test_stopped_answers.py).
    assert [(m.content, m.run_status) for m in runtime.history] == [
        ("slow", "cancelled"),
        ("thinking", "cancelled"),
    ]


async def test_stream_yields_tokens_and_events_and_the_result_last() -> None:
    runtime, _ = agent(lambda request: "one two three")
    items = [item async for item in runtime.stream("count")]
    tokens = [item.text for item in items if item.kind == "token"]
    assert "".join(tokens) == "one two three" and len(tokens) == 3
    assert items[-1].kind == "result" and items[-1].result.output == "one two three"
    assert "ModelCallFinished" in [item.event.kind for item in items if item.kind == "event"]


async def test_the_budget_follows_what_the_provider_really_counted() -> None:
    def script(request: ModelRequest) -> ModelReply:
        # This model's tokenizer counts three times what the estimate says.
        return ModelReply(text="ok", usage=Usage(prompt_tokens=3 * 400, completion_tokens=1))

    runtime, _ = agent(script, context_window=4096, max_reply_tokens=96)
    first = await runtime.run("one")
    second = await runtime.run("two")
    limit = [r.state.oodae.cycles[0].orient.budget_limit for r in (first, second)]  # type: ignore[union-attr]
    assert limit[0] == 4000 and limit[1] is not None and limit[1] < 4000 / 2
    assert runtime.token_factors["scripted"] > 1.0


async def test_a_named_skill_still_runs_alone_when_there_is_a_provider() -> None:
    runtime, provider = agent(lambda request: "model")
    result = await runtime.run("quiet", skill="shout")
    assert result.output == "QUIET" and provider.requests == []


async def test_without_a_provider_skills_work_as_before() -> None:
    runtime = make_runtime(SHOUT)
    assert (await runtime.run("hi")).output == "echo: hi"


async def test_cancelling_the_run_stops_its_embedder() -> None:
    reached = asyncio.Event()
    closed: list[str] = []

    class Hanging:
        """An embedder (a page's function, say) that stops answering once told to."""

        hang = False

        async def embed(self, texts: Any) -> Any:
            if not self.hang:
                return [[1.0, 0.0] for _ in texts]
            try:
                reached.set()
                await asyncio.sleep(30)
            finally:
                closed.append("closed")

    embedder = Hanging()
    runtime = make_runtime(provider=ScriptedProvider(lambda r: "hi"), embedder=embedder)
    # The first turn has no older turn to compare; its answer's attribution embeds.
    assert (await runtime.run("hello")).output == "hi" and not reached.is_set()
    embedder.hang = True
    token = CancelToken()
    task = asyncio.ensure_future(runtime.run("and again", signal=token))
    await asyncio.wait_for(reached.wait(), 5)
    token.cancel("the person left")
    result = await asyncio.wait_for(task, 5)
    assert result.state.status == "cancelled" and closed == ["closed"]
    assert result.error is not None and result.error.message == "the person left"
    assert [m.run_status for m in runtime.history] == [None, None, "cancelled"]


def test_stream_takes_the_keywords_of_run_but_on_token() -> None:
    """`stream()` is typed like `run()` (so mypy checks its callers), not ``**options``."""
    run = inspect.signature(agrun.Runtime.run).parameters
    stream = inspect.signature(agrun.Runtime.stream).parameters
    expected = [
        (p.name, p.kind, p.annotation, p.default) for p in run.values() if p.name != "on_token"
    ]
    assert [(p.name, p.kind, p.annotation, p.default) for p in stream.values()] == expected
