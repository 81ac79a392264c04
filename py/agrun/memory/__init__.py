"""Memory (spec 000): what a session remembers, and the loop that keeps it.

    the memory log        append-only entries a run asks for           `MemoryLog`, `MemoryEntry`
    history               the session's messages, and recall over them `History`, `SimilarTurns`
    session memory        facts, preferences, decisions, summary       `SessionMemory`
    extraction            what a turn stated, by the model or rules    `Extraction`
    inquiry               goal, topic, query, sources, clarification   `InquiryContext`
    clarification         asking as a last resort                      `ClarificationAsk`
    global memory         what outlives the session                    `GlobalMemory`
    the continuity loop   starts and closes each turn                  `Continuity`, `TurnStart`,
                                                                       `TurnClose`
    a run's view of it    the snapshot a run starts from, its reads    `ContextSnapshot`
    their events          built here, stamped by the runtime's bus     `MemoryEvent`

Memory imports no part of the run machinery: the runtime hands it plain turn data and an
`Emit` callable, and takes back what it made.
"""

from ._clarification import ClarificationAsk, ClarificationDecision, decide_clarification
from ._command_grammar import FORGET, REMEMBER, is_memory_command
from ._continuity import Continuity, ExtractionCall, ExtractionMode, TurnClose
from ._events import (
    Emit,
    GlobalMemoryPromoted,
    MemoryAppended,
    MemoryEvent,
    MemoryRequestDropped,
    SessionMemoryKept,
    SessionMemoryRebuilt,
)
from ._extraction import Extraction, extract_by_rules, parse_extraction
from ._global_memory import GlobalEntry, GlobalKind, GlobalMemory, Promotion
from ._history import History, failure_note, noted_failures
from ._inquiry import (
    Clarification,
    ClarificationResolution,
    InquiryContext,
    InquiryNotes,
    SourceRef,
)
from ._log import (
    MemoryEntry,
    MemoryEntryRequest,
    MemoryLog,
    MemoryView,
    live_entries,
    parse_request,
)
from ._session_memory import Evidence, SessionMemory, rebuild
from ._similar import SimilarTurns
from ._snapshot import ContextSnapshot, ReadAttemptSignal
from ._turn_start import TurnStart

__all__ = [
    "FORGET",
    "REMEMBER",
    "Clarification",
    "ClarificationAsk",
    "ClarificationDecision",
    "ClarificationResolution",
    "ContextSnapshot",
    "Continuity",
    "Emit",
    "Evidence",
    "Extraction",
    "ExtractionCall",
    "ExtractionMode",
    "GlobalEntry",
    "GlobalKind",
    "GlobalMemory",
    "GlobalMemoryPromoted",
    "History",
    "InquiryContext",
    "InquiryNotes",
    "MemoryAppended",
    "MemoryEntry",
    "MemoryEntryRequest",
    "MemoryEvent",
    "MemoryLog",
    "MemoryRequestDropped",
    "MemoryView",
    "Promotion",
    "ReadAttemptSignal",
    "SessionMemory",
    "SessionMemoryKept",
    "SessionMemoryRebuilt",
    "SimilarTurns",
    "SourceRef",
    "TurnClose",
    "TurnStart",
    "decide_clarification",
    "extract_by_rules",
    "failure_note",
    "is_memory_command",
    "live_entries",
    "noted_failures",
    "parse_extraction",
    "parse_request",
    "rebuild",
]
