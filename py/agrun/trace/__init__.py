"""Why an answer came out as it did (issue 22): each run's trace, attribution, replay, what-if.

    _trace         RunTrace / CallTrace: what each model call of a run was sent and answered
                   (the pack's entries, never their text), and which entries the answer used
    _traces        TraceStore: the session's traces, bounded, persisted as content records
    _attribution   attribute(): which pack entries an answer's sentences drew on
    _replay        replay_provider(): a recorded session's replies, checked call by call
    _what_if       what a recorded pack becomes under another budget, window or ranker

The kernel records and asks; nothing here imports it.
"""

from ._attribution import SIMILARITY, attribute, similarities
from ._replay import RecordedCall, ReplayDiverged, ReplayProvider, replay_provider
from ._trace import (
    AttributedEntry,
    Attribution,
    CallTrace,
    ExtractionTrace,
    RecordedReply,
    RequestShape,
    RunTrace,
    TraceEntry,
    TraceRecipe,
    call_trace,
    extraction_trace,
    request_shape,
)
from ._traces import TRACE_BYTES, TRACE_PREFIX, TraceNotFound, TraceStore, is_trace
from ._what_if import EntryChange, WhatIf, pack_diff, recorded_request, with_budget

__all__ = [
    "SIMILARITY",
    "TRACE_BYTES",
    "TRACE_PREFIX",
    "AttributedEntry",
    "Attribution",
    "CallTrace",
    "EntryChange",
    "ExtractionTrace",
    "RecordedCall",
    "RecordedReply",
    "ReplayDiverged",
    "ReplayProvider",
    "RequestShape",
    "RunTrace",
    "TraceEntry",
    "TraceNotFound",
    "TraceRecipe",
    "TraceStore",
    "WhatIf",
    "attribute",
    "call_trace",
    "extraction_trace",
    "is_trace",
    "pack_diff",
    "recorded_request",
    "replay_provider",
    "request_shape",
    "similarities",
    "with_budget",
]
