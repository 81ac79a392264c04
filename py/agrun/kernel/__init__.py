"""The run machinery: a `Runtime` runs skills through OODAE cycles, or a model turn with the
skills as its tools, and keeps the session (its memory is `agrun.memory`, its stored
replies `agrun.content`)."""

from .._base._cancel import CancelToken
from ._assemble import assemble_runtime
from ._events import (
    INPUT_PREVIEW,
    ContentRetrieved,
    CycleRequested,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallStarted,
    ObservationDerived,
    PhaseEntered,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    SessionDamaged,
    SkillSelected,
    ToolCallFinished,
    parse_event,
)
from ._function_tools import FunctionTool, ToolContext, tool
from ._limits import UsageLimits
from ._models import (
    CycleRecord,
    LastRun,
    Observation,
    Oodae,
    Phase,
    RunError,
    RunState,
    RunStatus,
    RuntimeState,
    Step,
)
from ._options import RuntimeConfig, RuntimeOptions, page_options
from ._result import RunFailedError, RunResult, UsageLimitExceeded
from ._runtime import Runtime
from ._skill_view import SkillContext, SkillHelpers
from ._skills import EchoSkill, FunctionSkill, Skill
from ._streaming import EventItem, ResultItem, StreamItem, TokenItem
from ._sync import SyncResult, gate_push

__all__ = [
    "INPUT_PREVIEW",
    "CancelToken",
    "ContentRetrieved",
    "CycleRecord",
    "CycleRequested",
    "EchoSkill",
    "EventItem",
    "FunctionSkill",
    "FunctionTool",
    "LastRun",
    "ModelCallFailed",
    "ModelCallFinished",
    "ModelCallStarted",
    "Observation",
    "ObservationDerived",
    "Oodae",
    "Phase",
    "PhaseEntered",
    "ResultItem",
    "RunCancelled",
    "RunError",
    "RunFailed",
    "RunFailedError",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "RunState",
    "RunStatus",
    "Runtime",
    "RuntimeConfig",
    "RuntimeEvent",
    "RuntimeOptions",
    "RuntimeState",
    "SessionDamaged",
    "Skill",
    "SkillContext",
    "SkillHelpers",
    "SkillSelected",
    "Step",
    "StreamItem",
    "SyncResult",
    "TokenItem",
    "ToolCallFinished",
    "ToolContext",
    "UsageLimitExceeded",
    "UsageLimits",
    "assemble_runtime",
    "gate_push",
    "page_options",
    "parse_event",
    "tool",
]
