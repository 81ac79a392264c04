"""Recurgent's method-call cases, in agrun's terms.

A Recurgent call (``obj.foo(args)``) asks the model for a Ruby program and runs it, returning
an ``Outcome``; an agrun call is ``runtime.run(input)``: the model answers or calls the
skills as tools, and the run returns a ``RunResult`` (``ok`` and ``output``, or a typed
``error``). The program the model writes is agrun's tool call; Recurgent's retries after a
bad program are agrun's corrections of a refused tool call (bounded by ``max_corrections``)
and the tool results a model reads before it tries again. Cases about Ruby programs
themselves are listed in docs/context.md.
"""

from __future__ import annotations

import json
from typing import Any

from _peers import agent, fails_once_then_says
from pydantic import BaseModel

from agrun import ContentRefNotFound, FunctionSkill, SkillContext, SkillHelpers
from agrun.chat import ModelReply, ModelRequest, ProviderTimeout, ProviderUnavailable
from agrun.testing import tool_call
from conftest import make_runtime

PEER_REPO = "kulesh/recurgent"
PEER_FILE = "runtimes/ruby/spec/agent/method_calls_spec.rb"


class Amount(BaseModel):
    amount: int


def set_value(input: str, context: SkillContext, helpers: SkillHelpers) -> int:
    args = context.arguments
    assert isinstance(args, Amount)
    return args.amount


SET = FunctionSkill("set", set_value, description="Sets the value.", input_model=Amount)
ECHO = FunctionSkill("repeat", lambda input, context, helpers: input, description="Echoes.")


def boom(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    helpers.append_memory({"text": "polluted"})
    raise RuntimeError("boom")


BOOM = FunctionSkill("boom", boom, description="Always fails.")


def call_then_answer(*first: Any, answer: str | None = None) -> Any:
    """A script that makes the calls ``first`` once, then answers with the last tool result
    (or ``answer``)."""

    def script(request: ModelRequest) -> ModelReply | str:
        results = [m for m in request.messages if m.role == "tool"]
        corrected = any(
            m.role == "user" and "were not run" in (m.content or "") for m in request.messages
        )
        if results or corrected:
            return answer if answer is not None else (results[-1].content or "")
        return ModelReply(tool_calls=first)

    return script


def always(*calls: Any) -> Any:
    return lambda request: ModelReply(tool_calls=calls)


async def test_an_ok_result_with_the_models_answer() -> None:
    """Case "returns an ok outcome with the generated result"."""
    runtime, _, _ = agent(lambda request: "1")
    result = await runtime.run("increment")
    assert result.ok and result.error is None and result.output == "1"


async def test_the_input_reaches_the_tool() -> None:
    """Case "passes positional arguments to generated code": a tool's ``input``."""
    runtime, _, _ = agent(call_then_answer(tool_call("repeat", {"input": "3"})), ECHO)
    result = await runtime.run("increment by 3")
    assert result.ok and result.output == "3"


async def test_named_arguments_reach_the_tool_checked() -> None:
    """Case "passes keyword arguments to generated code"."""
    runtime, _, _ = agent(call_then_answer(tool_call("set", {"amount": 10})), SET)
    result = await runtime.run("set it to 10")
    assert result.ok and result.output == "10"


async def test_what_is_remembered_is_read_back_without_the_model() -> None:
    """Case "returns context-backed readers without provider generation"."""
    runtime, provider, _ = agent(lambda request: "the model")
    await runtime.run("remember: memory is 5")
    result = await runtime.run("what do you remember?")
    assert result.ok and result.output == "I remember:\n- memory is 5"
    assert provider.requests == []


async def test_a_failing_skill_is_a_typed_error() -> None:
    """Case "returns execution error outcome on execution failure"."""
    runtime = make_runtime(BOOM)
    result = await runtime.run("increment", skill="boom")
    assert not result.ok and result.error is not None
    assert result.error.code == "skill_error" and "boom" in result.error.message
    assert (await runtime.run("again")).ok  # the runtime stays usable


async def test_a_provider_failure_is_a_typed_error() -> None:
    """Case "returns provider error outcome on provider failure"."""

    def down(request: ModelRequest) -> str:
        raise ProviderUnavailable("API error")

    runtime, _, _ = agent(down)
    result = await runtime.run("increment")
    assert result.error is not None and result.error.code == "provider_unavailable"
    assert "API error" in result.error.message
    # Only what the person asked stays, marked (issue 18.1).
    assert [(m.content, m.run_status) for m in runtime.history] == [("increment", "failed")]


async def test_a_call_to_no_tool_fails_past_the_bound() -> None:
    """Case "returns invalid_code outcome when provider returns nil code": a call naming no
    tool is refused, corrected, and past ``max_corrections`` fails the run, typed."""
    runtime, provider, _ = agent(always(tool_call("nothing", {})), ECHO)
    result = await runtime.run("increment")
    assert result.error is not None and result.error.code == "unknown_tool"
    assert len(provider.requests) == 3  # max_corrections (2) + 1


async def test_blank_arguments_fail_past_the_bound() -> None:
    """Case "returns invalid_code outcome when provider returns blank code"."""
    runtime, _, _ = agent(always(tool_call("set", "  \n\t")), SET)
    result = await runtime.run("increment")
    assert result.error is not None and result.error.code == "invalid_tool_arguments"


async def test_unparseable_arguments_fail_past_the_bound() -> None:
    """Case "returns invalid_code outcome when generated code has invalid syntax"."""
    runtime, _, _ = agent(always(tool_call("set", "def broken(")), SET)
    result = await runtime.run("increment")
    assert result.error is not None and result.error.code == "invalid_tool_arguments"


async def test_a_failed_tool_goes_back_to_the_model_which_tries_again() -> None:
    """Case "retries fresh generation once after execution error with runtime feedback"."""
    runtime, provider, _ = agent(*fails_once_then_says())
    result = await runtime.run("say x")
    assert result.ok and result.output == "x"
    assert len(provider.requests) == 3
    feedback = [m.content or "" for m in provider.requests[1].messages if m.role == "tool"]
    assert feedback and "undefined method" in feedback[-1]


async def test_a_tool_that_keeps_failing_is_bounded() -> None:
    """Case "returns execution error when fresh execution repair budget is exhausted"."""
    runtime, provider, _ = agent(always(tool_call("boom", {"input": "x"})), BOOM, max_cycles=3)
    result = await runtime.run("say x")
    assert result.error is not None and result.error.code == "cycle_limit"
    assert len(provider.requests) == 3


async def test_the_error_names_the_skill_and_where() -> None:
    """Case "fills tool context for Agent::Outcome.error when tool_role/method_name are
    omitted": the runtime fills which skill failed and in which phase."""
    timer = FunctionSkill("set_timer", boom, description="Sets a timer.")
    result = await make_runtime(timer).run("in five minutes", skill="set_timer")
    assert result.error is not None
    assert (result.error.code, result.error.skill, result.error.phase) == (
        "skill_error",
        "set_timer",
        "act",
    )


async def test_a_refused_call_is_corrected_and_the_turn_recovers() -> None:
    """Case "recovers from a guardrail violation on the next regeneration attempt"."""
    runtime, provider, _ = agent(
        call_then_answer(tool_call("set", {"amount": "lots"}), answer="42"), SET
    )
    result = await runtime.run("latest news")
    assert result.ok and result.output == "42"
    assert len(provider.requests) == 2


async def test_a_call_refused_again_and_again_fails_typed() -> None:
    """Case "returns guardrail_retry_exhausted when generated code repeatedly defines
    singleton methods on delegated tools"."""
    runtime, _, _ = agent(always(tool_call("set", {"amount": "lots"})), SET)
    result = await runtime.run("latest news")
    assert result.error is not None and result.error.code == "invalid_tool_arguments"
    assert "refused 3 times (the bound is 2)" in result.error.message


async def test_one_history_record_for_one_call_across_corrections() -> None:
    """Case "appends one conversation history record for one logical call across guardrail
    retries"."""
    runtime, _, _ = agent(call_then_answer(tool_call("set", {"amount": "lots"}), answer="42"), SET)
    await runtime.run("latest news")
    people = [m for m in runtime.history if m.role == "user" and m.author == "person"]
    assert [m.content for m in people] == ["latest news"]
    assert runtime.state.last_run is not None and runtime.state.last_run.status == "succeeded"


async def test_a_failed_attempt_leaves_nothing_behind() -> None:
    """Case "rolls back attempt-local context mutations before guardrail retry": a run that
    fails keeps none of its memory requests."""
    runtime = make_runtime(BOOM)
    before = runtime.memory.read_all()
    result = await runtime.run("latest news", skill="boom")
    assert not result.ok
    assert runtime.memory.read_all() == before
    assert any(e.kind == "MemoryRequestDropped" for e in result.events)


async def test_the_answer_is_stored_behind_a_content_ref() -> None:
    """Case "stores content continuity refs in conversation history summaries for successful
    outcomes"."""
    runtime, _, _ = agent(lambda request: json.dumps({"message": "hello", "items": [1, 2, 3]}),
                          content_store=True)  # fmt: skip
    await runtime.run("hello")
    answer = runtime.history[-1]
    assert answer.content_ref is not None and answer.content_ref.startswith("content:")
    assert answer.content_kind and answer.content_bytes and answer.content_bytes > 0
    assert answer.content_digest is not None and answer.content_digest.startswith("sha256:")


async def _tool_outputs_stored(keep: bool) -> list[Any]:
    options: dict[str, Any] = {"content_store": {"keep_tool_outputs": True} if keep else True}
    runtime, _, _ = agent(call_then_answer(tool_call("repeat", {"input": "nested"}, id="c1")),
                          ECHO, **options)  # fmt: skip
    result = await runtime.run("run nested")
    try:
        entry = runtime.content(f"content:{result.state.run_id}:c1")
    except ContentRefNotFound:
        return []
    return [entry.body, entry.depth]


async def test_tool_outputs_are_not_stored_by_default() -> None:
    """Case "does not store depth>=1 content refs by default when nested capture is
    disabled"."""
    assert await _tool_outputs_stored(keep=False) == []


async def test_tool_outputs_are_stored_when_asked() -> None:
    """Case "stores depth>=1 content refs when nested capture is explicitly enabled in
    runtime config"."""
    assert await _tool_outputs_stored(keep=True) == ["nested", 1]


async def test_a_later_turn_reads_an_earlier_answer_by_its_ref() -> None:
    """Case "allows generated code to resolve prior payloads via content(ref)"."""
    body = "QuickSort implementation in Smalltalk"

    def script(request: ModelRequest) -> ModelReply | str:
        results = [m.content or "" for m in request.messages if m.role == "tool"]
        if results:
            return results[-1]
        if "read_content" in {t.name for t in request.tools}:
            system = request.messages[0].content or ""
            ref = system.split("- content:", 1)[1].split(" ", 1)[0]
            return ModelReply(tool_calls=(tool_call("read_content", {"ref": f"content:{ref}"}),))
        return body

    runtime, _, _ = agent(script, content_store=True)
    assert (await runtime.run("write quicksort in smalltalk")).output == body
    result = await runtime.run("format that in markdown")
    assert result.ok and body in (result.output or "")


async def test_a_missing_ref_is_a_typed_miss() -> None:
    """Case "supports typed content_ref_not_found handling when content(ref) misses"."""

    def script(request: ModelRequest) -> ModelReply | str:
        results = [m.content or "" for m in request.messages if m.role == "tool"]
        if results:
            return results[-1]
        if "read_content" in {t.name for t in request.tools}:
            return ModelReply(tool_calls=(tool_call("read_content", {"ref": "content:missing"}),))
        return "first answer"

    runtime, _, _ = agent(script, content_store=True)
    await runtime.run("first")
    result = await runtime.run("format previous response")
    # The typed miss (ContentRefNotFound, code content_ref_not_found) went back to the model.
    assert "ContentRefNotFound" in (result.output or "")
    assert "no content is stored under 'content:missing'" in (result.output or "")


async def test_a_call_to_no_tool_then_a_good_answer() -> None:
    """Case "retries when provider returns nil code and succeeds on next attempt"."""
    runtime, provider, _ = agent(call_then_answer(tool_call("nothing", {}), answer="42"), ECHO)
    result = await runtime.run("answer")
    assert result.ok and result.output == "42"
    assert len(provider.requests) == 2


async def test_unparseable_arguments_then_a_good_answer() -> None:
    """Case "retries when provider returns syntactically invalid code and succeeds on next
    attempt"."""
    runtime, provider, _ = agent(call_then_answer(tool_call("set", "def broken("), answer="42"),
                                 SET)  # fmt: skip
    result = await runtime.run("answer")
    assert result.ok and result.output == "42"
    assert len(provider.requests) == 2


async def test_the_correction_is_said_after_a_refused_call_only() -> None:
    """Case "adds corrective retry instructions after an invalid provider payload"."""
    runtime, provider, _ = agent(call_then_answer(tool_call("nothing", {}), answer="42"), ECHO)
    await runtime.run("answer")
    first, last = provider.requests

    def frames(request: ModelRequest) -> list[str]:
        return [m.content or "" for m in request.messages if "were not run" in (m.content or "")]

    assert frames(first) == []
    (frame,) = frames(last)
    assert "nothing" in frame and "answer without it" in frame


async def test_refused_calls_past_a_smaller_bound_fail() -> None:
    """Case "returns invalid_code outcome after retry budget is exhausted"."""
    runtime, provider, _ = agent(always(tool_call("nothing", {})), ECHO, max_corrections=1)
    result = await runtime.run("answer")
    assert result.error is not None and result.error.code == "unknown_tool"
    assert len(provider.requests) == 2


async def test_a_provider_timeout_is_a_timeout() -> None:
    """Case "classifies timeout failures as timeout outcomes"."""

    def slow(request: ModelRequest) -> str:
        raise ProviderTimeout("execution expired")

    runtime, _, _ = agent(slow)
    result = await runtime.run("answer")
    assert result.error is not None and result.error.code == "provider_timeout"
