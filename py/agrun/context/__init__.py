"""Context synthesis: token-budgeted context packs with window guards (specs 001, 003).

One door: `build_context` turns a `ContextRequest` (or its camelCase dict) into a
`ContextPack`. It is pure and deterministic: no clock (except to time itself through an
injected `Clock`), no randomness, no I/O.
"""

from ..ports import Compressor, Ranker, Redactor, Tokenizer
from ._build import build_context, validate_request
from ._calibration import TokenCalibration
from ._compress import HeadCompressor, KeyLinesCompressor, apply_spans
from ._errors import (
    ContextBuildCancelled,
    ContextBuildingFailed,
    ContextPackIncomplete,
    ContextRequestInvalid,
)
from ._events import (
    CompressionApplied,
    ContextBuildingFailedEvent,
    ContextBuildingStarted,
    ContextEvent,
    ContextPackBuilt,
    LayerTruncated,
)
from ._layer import ContextLayer
from ._memo import BuildMemo
from ._pack import (
    CompressionMetadata,
    CompressionRecord,
    ContextEntry,
    ContextMetrics,
    ContextPack,
    DroppedItem,
    RecallHit,
    RecallMetrics,
    render_entry,
)
from ._rank import BM25Ranker
from ._recall_index import RecallIndex, is_recallable
from ._recall_text import term_set, terms_of
from ._redact import DEFAULT_SECRET_PATTERNS, PatternRedactor
from ._request import (
    SESSION_L2_SHARE,
    Approval,
    Artifact,
    Author,
    Budget,
    ContextOptions,
    ContextRequest,
    Direction,
    EventRecord,
    MemoryItem,
    Message,
    Policy,
    RecallSignal,
    RouterContextRequest,
    SteeringNote,
    ToolCall,
    ToolOutput,
)
from ._router import build_router_context
from ._similarity import NEAREST, nearest, unit_vector
from ._tokens import EstimatingTokenizer, ExactTokenizer, default_tokenizer
from ._window import current_request_index, is_said_by_person, wire_units

__all__ = [
    "DEFAULT_SECRET_PATTERNS",
    "NEAREST",
    "SESSION_L2_SHARE",
    "Approval",
    "Artifact",
    "Author",
    "BM25Ranker",
    "Budget",
    "BuildMemo",
    "CompressionApplied",
    "CompressionMetadata",
    "CompressionRecord",
    "Compressor",
    "ContextBuildCancelled",
    "ContextBuildingFailed",
    "ContextBuildingFailedEvent",
    "ContextBuildingStarted",
    "ContextEntry",
    "ContextEvent",
    "ContextLayer",
    "ContextMetrics",
    "ContextOptions",
    "ContextPack",
    "ContextPackBuilt",
    "ContextPackIncomplete",
    "ContextRequest",
    "ContextRequestInvalid",
    "Direction",
    "DroppedItem",
    "EstimatingTokenizer",
    "EventRecord",
    "ExactTokenizer",
    "HeadCompressor",
    "KeyLinesCompressor",
    "LayerTruncated",
    "MemoryItem",
    "Message",
    "PatternRedactor",
    "Policy",
    "Ranker",
    "RecallHit",
    "RecallIndex",
    "RecallMetrics",
    "RecallSignal",
    "Redactor",
    "RouterContextRequest",
    "SteeringNote",
    "TokenCalibration",
    "Tokenizer",
    "ToolCall",
    "ToolOutput",
    "apply_spans",
    "build_context",
    "build_router_context",
    "current_request_index",
    "default_tokenizer",
    "is_recallable",
    "is_said_by_person",
    "nearest",
    "render_entry",
    "term_set",
    "terms_of",
    "unit_vector",
    "validate_request",
    "wire_units",
]
