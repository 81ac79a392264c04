"""Recurgent's logging cases, in agrun's terms.

Recurgent appends one JSONL entry per call to a log file; agrun writes no log file: every
change is a typed event (``RunResult.events``, ``Runtime.subscribe``, ``on_event``), and the
run's ``steps`` and ``lastRun`` say what happened. So "the log entry has field X" becomes
"the run's events or summary carry X".
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from _peers import agent, fails_once_then_says

from agrun import FunctionSkill, SkillContext, SkillHelpers
from agrun.chat import ModelReply, ModelRequest
from agrun.testing import tool_call
from conftest import make_runtime

PEER_REPO = "kulesh/recurgent"
PEER_FILE = "runtimes/ruby/spec/agent/logging_spec.rb"

SYSTEM = "You are the calculator; this prompt must not be logged."


def answer_after(*first: Any, answer: str = "42") -> Any:
    def script(request: ModelRequest) -> ModelReply | str:
        if any(m.role == "tool" or "were not run" in (m.content or "") for m in request.messages):
            return answer
        return ModelReply(tool_calls=first)

    return script


def repeat(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    return input


REPEAT = FunctionSkill("repeat", repeat, description="Repeats.")


def of(events: Any, kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


async def test_one_call_gives_one_start_one_end_and_no_prompt_text() -> None:
    """Case "writes a JSONL entry with correct fields on method call"."""
    runtime, _, _ = agent(lambda request: "1", system_prompt=SYSTEM)
    result = await runtime.run("increment")
    events = result.events
    assert len(of(events, "RunStarted")) == len(of(events, "RunFinished")) == 1
    assert {e.run_id for e in events} == {result.state.run_id}
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    (finished,) = of(events, "ModelCallFinished")
    assert finished.model == "scripted" and finished.usage is not None
    wire = json.dumps([e.to_wire() for e in events])
    assert "this prompt must not be logged" not in wire
    last = runtime.state.last_run
    assert last is not None and last.status == "succeeded" and last.model_calls == 1


async def test_a_refused_call_that_is_then_corrected_is_recorded() -> None:
    """Case "logs validation-stage attempt failures for guardrail recovery that later
    succeeds"."""
    runtime, _, _ = agent(answer_after(tool_call("nothing", {}, id="c1")), REPEAT)
    result = await runtime.run("latest news")
    assert result.ok and result.output == "42"
    (refused,) = of(result.events, "ToolCallFinished")
    assert (refused.call_id, refused.tool, refused.outcome) == ("c1", "nothing", "refused")
    assert "no tool" in refused.detail
    assert [s.action for s in result.steps].count("correct_tool_call") == 1


async def test_a_tool_that_raised_then_returned_is_recorded() -> None:
    """Case "logs execution-stage attempt failures for fresh execution repair retries"."""
    runtime, _, _ = agent(*fails_once_then_says())
    result = await runtime.run("latest news")
    assert result.ok and result.output == "x"
    outcomes = [(e.call_id, e.outcome) for e in of(result.events, "ToolCallFinished")]
    assert outcomes == [("c0", "raised"), ("c1", "returned")]
    assert "undefined method" in of(result.events, "ToolCallFinished")[0].detail


async def test_the_history_grows_by_the_turn_and_usage_is_summed() -> None:
    """Case "logs conversation history append and usage telemetry fields"."""
    runtime, _, _ = agent(lambda request: "hello back")
    result = await runtime.run("hello")
    assert [(m.role, m.content) for m in runtime.history] == [
        ("user", "hello"),
        ("assistant", "hello back"),
    ]
    last = runtime.state.last_run
    (finished,) = of(result.events, "ModelCallFinished")
    assert last is not None and last.usage == finished.usage
    assert last.usage is not None and last.usage.total_tokens > 0


async def test_content_store_reads_are_counted() -> None:
    """Case "logs content store read telemetry when generated code resolves content(ref)"."""

    def script(request: ModelRequest) -> ModelReply | str:
        results = [m.content or "" for m in request.messages if m.role == "tool"]
        if results:
            return results[-1]
        if "read_content" in {t.name for t in request.tools}:
            ref = (request.messages[0].content or "").split("- content:", 1)[1].split(" ", 1)[0]
            return ModelReply(tool_calls=(tool_call("read_content", {"ref": f"content:{ref}"}),))
        return "hello"

    runtime, _, events = agent(script, content_store=True)
    await runtime.run("first")
    await runtime.run("follow-up")
    (retrieved,) = of(events, "ContentRetrieved")
    assert retrieved.found and retrieved.counters["hits"] == 1
    assert retrieved.counters["misses"] == 0
    started = of(events, "ModelCallStarted")
    assert started[-1].content_store is not None and started[-1].content_store["hits"] == 1


async def test_an_output_that_cannot_cross_is_a_typed_failure() -> None:
    """Case "logs inspect fallback for non-JSON outcome values in debug mode": agrun does
    not fall back to an inspect string; the run fails, naming where the output went wrong."""
    runtime = make_runtime(FunctionSkill("answer", lambda i, c, h: {"value": object()}))
    result = await runtime.run("answer", skill="answer")
    assert result.error is not None and result.error.code == "output_not_serializable"
    assert "$.value" in result.error.message


async def test_the_number_of_model_calls_counts_the_retry() -> None:
    """Case "logs generation_attempt as retry count when provider succeeds on second
    attempt"."""
    runtime, _, _ = agent(answer_after(tool_call("nothing", {}), answer="7"), REPEAT)
    result = await runtime.run("answer")
    assert result.ok and result.output == "7"
    assert runtime.state.last_run is not None and runtime.state.last_run.model_calls == 2


async def test_a_failing_observer_does_not_break_the_caller() -> None:
    """Case "does not break the caller when logging fails"."""

    def broken(event: Any) -> None:
        raise OSError("/dev/null/impossible/path.jsonl")

    runtime, _, _ = agent(lambda request: "1")
    runtime.subscribe(broken)
    result = await runtime.run("increment")
    assert result.ok and result.output == "1"


async def test_a_failing_observer_is_reported_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """Case "surfaces logging failures in debug mode via stderr": reported to logger
    ``agrun``."""

    def broken(event: Any) -> None:
        raise OSError("AGENT LOG ERROR")

    runtime, _, _ = agent(lambda request: "1")
    runtime.subscribe(broken)
    with caplog.at_level(logging.ERROR, logger="agrun"):
        await runtime.run("increment")
    assert any("subscriber" in r.getMessage() for r in caplog.records if r.name == "agrun")
    assert any(r.exc_info and "AGENT LOG ERROR" in str(r.exc_info[1]) for r in caplog.records)


async def test_two_calls_append_to_one_stream() -> None:
    """Case "appends multiple entries to the same file"."""
    runtime, _, events = agent(lambda request: "1")
    first = await runtime.run("increment")
    second = await runtime.run("increment")
    started = of(events, "RunStarted")
    assert [e.run_id for e in started] == [first.state.run_id, second.state.run_id]
    assert first.state.run_id != second.state.run_id
    assert max(e.seq for e in first.events) < min(e.seq for e in second.events)


async def test_a_failed_call_is_recorded_with_its_error() -> None:
    """Case "logs calls when execution returns error outcomes"."""

    def boom(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        raise RuntimeError("boom")

    runtime = make_runtime(FunctionSkill("increment", boom))
    result = await runtime.run("increment", skill="increment")
    (failed,) = of(result.events, "RunFailed")
    assert failed.error.code == "skill_error" and "boom" in failed.error.message
    assert of(result.events, "RunStarted")


async def test_tool_calls_are_linked_to_their_run() -> None:
    """Case "logs parent-child trace linkage for delegated calls"."""
    runtime, _, _ = agent(answer_after(tool_call("repeat", {"input": "5"}, id="add-1")), REPEAT)
    result = await runtime.run("compute")
    (call,) = of(result.events, "ToolCallFinished")
    assert call.run_id == result.state.run_id
    assert (call.call_id, call.tool, call.outcome, call.cycle) == ("add-1", "repeat", "returned", 1)
    (asked,) = [c for c in of(result.events, "ModelCallFinished") if c.tool_calls]
    assert asked.tool_calls == ("repeat",) and asked.cycle == call.cycle


async def test_the_calls_are_counted_when_the_retries_run_out() -> None:
    """Case "logs generation_attempt when provider retries are exhausted"."""
    runtime, _, _ = agent(lambda request: ModelReply(tool_calls=(tool_call("nothing", {}),)),
                          REPEAT, max_corrections=1)  # fmt: skip
    result = await runtime.run("answer")
    assert result.error is not None and result.error.code == "unknown_tool"
    last = runtime.state.last_run
    assert last is not None and last.status == "failed" and last.model_calls == 2
    assert of(result.events, "RunFailed")[0].error.code == "unknown_tool"
