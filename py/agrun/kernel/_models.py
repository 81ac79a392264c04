"""The kernel's data for one run and for the runtime (spec 000, "State Model").

State is not memory: `RunState` lives for one ``run()`` and `RuntimeState` keeps only a
small summary of the last run. Output, observation and memory entry are three layers:
the skill's output goes to `RunResult` only, the runtime's `Observation` of it goes to
state, and memory lives in `agrun.memory`.

Every model derives from the model base (`agrun._base.Model`): immutable, snake_case in
Python, camelCase on the wire.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .._base import Model
from ..chat import Usage
from ..memory import ContextSnapshot, ReadAttemptSignal

__all__ = [
    "ActRecord",
    "CycleRecord",
    "DecideRecord",
    "ErrorCode",
    "EvaluateRecord",
    "LastRun",
    "Observation",
    "ObserveRecord",
    "Oodae",
    "OrientRecord",
    "Phase",
    "RunError",
    "RunState",
    "RunStatus",
    "RuntimeState",
    "Step",
    "StepAction",
]

RunStatus = Literal["running", "succeeded", "failed", "cancelled"]
Phase = Literal["observe", "orient", "decide", "act", "evaluate"]
ErrorCode = Literal[
    "skill_error",
    "skill_timeout",
    "output_not_serializable",
    "matcher_error",
    "cycle_limit",
    "cancelled",
    # A model turn's own outcomes: the provider's errors (`agrun.chat`), a pack that could
    # not be built, and tool calls the model kept getting wrong past the bound.
    "provider_error",
    "provider_http_error",
    "provider_rate_limited",
    "provider_unavailable",
    "provider_timeout",
    "provider_stream_cut",
    "provider_reply_too_long",
    "provider_protocol_error",
    "context_building_failed",
    "unknown_tool",
    "invalid_tool_arguments",
    # A per-run usage limit (`UsageLimits`) was passed.
    "usage_limit_exceeded",
    # A typed run's answer (`output_type` / `outputSchema`) kept failing its check.
    "output_validation_failed",
]
StepAction = Literal[
    "build_context",
    "call_model",
    "call_tool",
    "correct_tool_call",
    "correct_output",
    "wrap_up",
    "limit",
    "observe",
    "orient",
    "select_skill",
    "run_skill",
    "evaluate",
    "request_cycle",
    "append_memory",
    "drop_memory_request",
    "finish",
    "fail",
    "cancel",
]


class RunError(Model):
    """Why a run did not succeed: a named outcome, not an exception."""

    code: ErrorCode
    """What went wrong, as a stable code a host can branch on."""
    message: str
    """What went wrong, for a person, naming the bad value."""
    skill: str | None = None
    """The skill that was selected when it went wrong, if any."""
    phase: Phase | None = None
    """The OODAE phase that was active when it went wrong."""
    cycle: int = 0
    """The cycle (1-based) it went wrong in."""


class Observation(Model):
    """The runtime's own reading of what one cycle's skill run came to."""

    cycle: int
    """The cycle this observation closes."""
    skill: str | None
    """The skill whose run was observed."""
    outcome: Literal["succeeded", "failed", "cancelled"]
    """How the cycle ended."""
    summary: str
    """Short text: the output as text (truncated), or the error message."""
    output_kind: Literal["none", "text", "number", "boolean", "list", "object"] | None = None
    """The JSON type of the output; None when there was no output."""
    error_code: ErrorCode | None = None
    """The error code when the cycle did not succeed."""


class ObserveRecord(Model):
    """What the observe phase saw."""

    input_chars: int
    """Length of the run's input."""
    memory_count: int
    """How many memory entries the runtime held."""
    previous: Observation | None = None
    """The previous cycle's observation (None in the first cycle)."""


def _unset(value: Any) -> bool:
    return value is None or value == ()


# A field only a model turn fills: left out of the wire form when unset, so a skill run's
# records keep their shape.
def _model_only(default: Any = None) -> Any:
    return Field(default, exclude_if=_unset)


class OrientRecord(Model):
    """What the orient phase found."""

    requested_skill: str | None
    """The skill the caller named, if any."""
    candidates: tuple[str, ...]
    """Skills whose matcher applies to the input (the tools offered, in a model turn)."""
    pack_id: str | None = _model_only()
    """In a model turn: the digest of the context pack built for the call."""
    budget_used: int | None = _model_only()
    """In a model turn: the pack's tokens, reservation included."""
    budget_limit: int | None = _model_only()
    """In a model turn: the limit that applied."""


class DecideRecord(Model):
    """What the decide phase chose, and why."""

    skill: str
    """The skill chosen to act."""
    reason: str
    """Why it was chosen (explicit, matched, default, continued)."""


class ActRecord(Model):
    """What happened when the skill ran."""

    skill: str
    """The skill that ran."""
    outcome: Literal["returned", "raised", "timed_out", "cancelled"]
    """How its run ended."""
    memory_requests: int
    """How many memory appends it requested in this cycle."""
    cycle_request: str | None = None
    """The reason it gave for asking for another cycle, if it asked."""
    tool_calls: tuple[str, ...] = _model_only(())
    """In a model turn: each tool call as ``name:outcome`` (``returned``, ``raised``,
    ``timed_out``, ``refused`` for arguments that did not fit), in call order."""


class EvaluateRecord(Model):
    """What the evaluate phase judged."""

    outcome: Literal["succeeded", "failed", "cancelled"]
    """The observation's outcome."""
    next: Literal["finish", "continue", "fail", "cancel"]
    """What the run does next."""


class CycleRecord(Model):
    """One OODAE cycle: each phase's record, None until that phase has run."""

    cycle: int
    observe: ObserveRecord | None = None
    orient: OrientRecord | None = None
    decide: DecideRecord | None = None
    act: ActRecord | None = None
    evaluate: EvaluateRecord | None = None


class Oodae(Model):
    """The run's OODAE cycles, one record each, in order."""

    cycles: tuple[CycleRecord, ...] = ()


class Step(Model):
    """One entry of a run's steps trace: what the runtime did, in order."""

    index: int
    """1-based position in the trace."""
    cycle: int
    """The cycle it belongs to."""
    phase: Phase | None
    """The phase it happened in; None for the run's closing steps."""
    action: StepAction
    """What was done."""
    detail: str
    """A short sentence for a person reading the trace."""
    skill: str | None = None
    """The skill concerned, if any."""


class RunState(Model):
    """What one ``run()`` is doing now. Per run, not a history, and no output field."""

    run_id: str
    status: RunStatus
    """running, then succeeded, failed or cancelled."""
    step_count: int = 0
    """How many steps the trace holds so far."""
    cycle_count: int = 0
    """How many OODAE cycles have begun."""
    phase: Phase | None = None
    """The active OODAE phase while running; None once the run is over."""
    selected_skill: str | None = None
    """The skill chosen by the last decide phase."""
    observation: Observation | None = None
    """The latest observation."""
    error: RunError | None = None
    """Why the run failed or was cancelled."""
    oodae: Oodae = Oodae()
    """One record per cycle."""
    context_snapshot: ContextSnapshot = ContextSnapshot()
    """The session memory and inquiry context the run started from (the canonical
    continuity model; ``session_context_view`` is only a debug alias of it)."""
    read_attempt_signal: ReadAttemptSignal | None = None
    """Set when the run tried to read session evidence, a source or stored content."""

    @property
    def session_context_view(self) -> dict[str, Any]:
        """A read-only, flattened view of ``context_snapshot`` for debug consumers that
        still read it. Compatibility only: never read it as truth."""
        snapshot = self.context_snapshot.to_wire()
        return {**(snapshot["sessionMemory"] or {}), **(snapshot["inquiryContext"] or {})}


class LastRun(Model):
    """A small summary of the most recent run. Never a history."""

    run_id: str
    status: RunStatus
    selected_skill: str | None
    cycle_count: int
    step_count: int
    observation: Observation | None
    error: RunError | None
    started_at: int
    """Clock milliseconds when the run started."""
    finished_at: int
    """Clock milliseconds when the run ended."""
    usage: Usage | None = _model_only()
    """In a model turn: the tokens of every model call of the run, summed."""
    model_calls: int | None = _model_only()
    """How many model calls the turn made, every one: the answer's and the memory
    extraction's (which runs after the answer is out; ``lastRun`` counts it once done)."""
    calls_by_purpose: dict[Literal["answer", "extraction"], int] | None = _model_only()
    """``model_calls`` by what each call was for."""


class RuntimeState(Model):
    """What the runtime instance keeps between runs: the last run's summary."""

    last_run: LastRun | None = None
