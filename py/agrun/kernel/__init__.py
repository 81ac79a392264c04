"""The run machinery: a `Runtime` runs skills through OODAE cycles and keeps the session."""

from ._assemble import RuntimeOptions, assemble_runtime
from ._cancel import CancelToken
from ._events import (
    INPUT_PREVIEW,
    CycleRequested,
    MemoryAppended,
    MemoryRequestDropped,
    ObservationDerived,
    PhaseEntered,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    SessionDamaged,
    SkillSelected,
    parse_event,
)
from ._memory import MemoryEntry, MemoryEntryRequest, MemoryView
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
from ._result import RunResult
from ._runtime import Runtime
from ._skill_view import SkillContext, SkillHelpers
from ._skills import EchoSkill, FunctionSkill, Skill

__all__ = [
    "INPUT_PREVIEW",
    "CancelToken",
    "CycleRecord",
    "CycleRequested",
    "EchoSkill",
    "FunctionSkill",
    "LastRun",
    "MemoryAppended",
    "MemoryEntry",
    "MemoryEntryRequest",
    "MemoryRequestDropped",
    "MemoryView",
    "Observation",
    "ObservationDerived",
    "Oodae",
    "Phase",
    "PhaseEntered",
    "RunCancelled",
    "RunError",
    "RunFailed",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "RunState",
    "RunStatus",
    "Runtime",
    "RuntimeEvent",
    "RuntimeOptions",
    "RuntimeState",
    "SessionDamaged",
    "Skill",
    "SkillContext",
    "SkillHelpers",
    "SkillSelected",
    "Step",
    "assemble_runtime",
    "parse_event",
]
