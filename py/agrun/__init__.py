"""agrun: a pure-Python agent runtime for web pages (Pyodide) and CPython."""

from ._cancel import CancelToken
from ._context import SkillContext, SkillHelpers
from ._errors import (
    AgrunError,
    ConfigError,
    DuplicateSkillError,
    HelpersClosedError,
    InputError,
    MemoryEntryError,
    OutputNotSerializableError,
    ReadOnlyError,
    StorageError,
    TransitionError,
    UnknownSkillError,
)
from ._events import (
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
from ._ports import Clock, Ids
from ._result import RunResult
from ._runtime import Runtime, create_runtime
from ._skills import EchoSkill, FunctionSkill, Skill

__all__ = [
    "AgrunError",
    "CancelToken",
    "Clock",
    "ConfigError",
    "CycleRecord",
    "CycleRequested",
    "DuplicateSkillError",
    "EchoSkill",
    "FunctionSkill",
    "HelpersClosedError",
    "Ids",
    "InputError",
    "LastRun",
    "MemoryAppended",
    "MemoryEntry",
    "MemoryEntryError",
    "MemoryEntryRequest",
    "MemoryRequestDropped",
    "MemoryView",
    "Observation",
    "ObservationDerived",
    "Oodae",
    "OutputNotSerializableError",
    "Phase",
    "PhaseEntered",
    "ReadOnlyError",
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
    "RuntimeState",
    "Skill",
    "SkillContext",
    "SkillHelpers",
    "SkillSelected",
    "Step",
    "StorageError",
    "TransitionError",
    "UnknownSkillError",
    "create_runtime",
    "parse_event",
]
__version__ = "0.1.0"
