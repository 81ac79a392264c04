"""A run's trace: for each model call, the pack it was sent and what came back (issue 22.1).

One `RunTrace` per model turn, kept with the session (`_traces.py`) so ``why(run_id)``
answers for any run, also after a reload. Per call it holds the pack's digest, its entries
(id, layer, sources, tokens, compressed or not, never their text), what was dropped or
merged into L3 and why, the provider's usage and the calibration factor the budget was
divided by; the recorded reply and the request's shape let a session replay without a
model (`agrun.testing.replay_provider`), and the request's recipe lets ``what_if`` rebuild
it under another setting. Texts in it pass the trace scrubber before it is kept.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import Field, field_serializer

from .._base import Model, canonical_json, trusted
from ..chat import FinishReason, ModelReply, ModelRequest, Usage
from ..context import ContextPack

__all__ = [
    "AttributedEntry",
    "Attribution",
    "CallTrace",
    "ExtractionTrace",
    "RecordedReply",
    "RequestShape",
    "RunTrace",
    "TraceEntry",
    "TraceRecipe",
    "call_trace",
    "canonical_digest",
    "extraction_trace",
    "recorded_reply",
    "request_shape",
]


def _is_none(value: object) -> bool:
    # Left out of the wire form when unset: a trace made without an embedder is unchanged.
    return value is None


def canonical_digest(value: Any) -> str:
    """sha256 hex of ``value``'s canonical JSON (sorted keys, no spaces)."""
    return _sha256(canonical_json(value))


class TraceEntry(Model):
    """One entry of a pack, without its text."""

    id: str
    layer: str
    kind: str
    sources: tuple[str, ...]
    tokens: int
    compressed: bool = False


class Dropped(Model):
    """A run of inputs left out of a pack, and why."""

    kind: str
    reason: str
    first: str
    last: str
    count: int = 1


class RequestShape(Model):
    """What a replay checks a request against: its digest, and enough to say how it differs."""

    digest: str
    """sha256 of the request's canonical JSON, its ``packId`` left out."""
    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    tools: tuple[str, ...] = ()
    messages: tuple[tuple[str, str], ...] = ()
    """Each rendered message's role and the first 16 hex digits of its digest."""


class RecordedReply(Model):
    """What the provider answered, as a replay sends it back (texts scrubbed)."""

    text: str = ""
    tool_calls: tuple[tuple[str, str, str], ...] = ()
    """Each call's id, name and argument text."""
    finish_reason: FinishReason = "stop"
    usage: Usage | None = None


class TraceRecipe(Model):
    """The context request of a call, minus the history it read (which the session keeps):
    what ``what_if`` rebuilds the pack from."""

    prior: int = Field(ge=0)
    """How many of the session's history messages came before the run's own."""
    request: dict[str, Any]
    """The request's wire form without ``messages`` (they are the history's first
    ``prior`` ones, then ``turn``)."""
    turn: tuple[dict[str, Any], ...]
    """The run's own messages up to this call (the person's, tool calls and results)."""
    content_advert: bool = False
    """Whether the pack advertised the content store (an extension layer)."""
    at_ms: int | None = None
    """When the run started: what the content store held then is what its packs listed."""


class CallTrace(Model):
    """One model call of a run."""

    cycle: int
    pack_id: str
    pack_digest: str
    budget_used: int
    budget_limit: int
    tokens_per_layer: dict[str, int]
    entries: tuple[TraceEntry, ...]
    dropped: tuple[Dropped, ...] = ()
    moved_to_l3: tuple[str, ...] = ()
    factor: float
    """The calibration factor the budget was divided by (real tokens per estimated one)."""
    estimated: int
    """The pack's tokens by agrun's tokenizer (what calibration compares with usage)."""
    usage: Usage | None = None
    request: RequestShape
    reply: RecordedReply | None = None
    """None when the call failed (``failed`` says how)."""
    failed: str | None = None
    recipe: TraceRecipe | None = None


class ExtractionTrace(Model):
    """One model call of the turn's memory extraction, made after the answer
    (``memory_extraction="model"``): what a replay checks and answers it with."""

    request: RequestShape
    reply: RecordedReply | None = None
    """None when the call failed (``failed`` says how)."""
    failed: str | None = None


class AttributedEntry(Model):
    """One entry of the answering pack: used by the answer or not, and where."""

    id: str
    layer: str
    used: bool
    score: float
    """The best share of a sentence's content words the entry holds (0..1)."""
    similarity: float | None = Field(None, exclude_if=_is_none)
    """With an embedder: the entry's best cosine similarity with a sentence of the answer
    (None without one, or for an entry the library wrote)."""
    via: tuple[Literal["overlap", "ngram", "citation", "similarity"], ...] = ()
    """Which signals marked it used: ``overlap`` (content words), ``ngram`` (a run of
    words), ``citation`` (the answer names it), ``similarity`` (the embedder's)."""
    spans: tuple[tuple[int, int], ...] = ()
    """``[start, end)`` character ranges of the answer it backs."""

    @field_serializer("score")
    def _score_as_json_writes_it(self, score: float) -> float | int:
        # Most entries score 0 or 1: written as integers (what JavaScript's JSON writes), a
        # kept trace holds no integral float, so the content store hashes it without first
        # walking it to make it canonical (~90 of these per turn's trace otherwise).
        return int(score) if score.is_integer() else score


class Attribution(Model):
    """Which entries of the last pack the answer used (a deterministic overlap)."""

    call: int
    """Index in ``calls`` of the call that answered."""
    threshold: float
    similarity_threshold: float | None = Field(None, exclude_if=_is_none)
    """The cosine at which the embedder's similarity marks an entry; None when the runtime
    has no embedder (or it failed for this answer)."""
    sentences: tuple[tuple[int, int], ...]
    """The answer's sentences, as ``[start, end)`` ranges."""
    entries: tuple[AttributedEntry, ...]


class RunTrace(Model):
    """Why a run answered as it did: every model call's pack, and what the answer used."""

    run_id: str
    model: str | None = None
    status: str
    calls: tuple[CallTrace, ...] = ()
    attribution: Attribution | None = None
    extractions: tuple[ExtractionTrace, ...] = ()
    """The memory extraction's model calls after the answer, in order (none with the rules)."""


def request_shape(request: ModelRequest) -> RequestShape:
    """The shape a replay checks ``request`` against: what the model is sent (the pack's
    id is left out: it names the entries' ids, which differ between two runtimes' id
    sources while the messages the model reads are the same)."""
    wire = request.model_dump(mode="json", by_alias=True, exclude={"pack_id"})
    # Each message is encoded once: its own digest, and its part of the whole request's.
    messages = [canonical_json(message) for message in wire["messages"]]
    return RequestShape(
        digest=_sha256(_canonical_with(wire, "messages", "[" + ",".join(messages) + "]")),
        model=request.model,
        max_tokens=request.max_tokens,
        temperature=request.temperature,
        tools=tuple(spec.name for spec in request.tools),
        messages=tuple(
            (message["role"], _sha256(text)[:16])
            for message, text in zip(wire["messages"], messages, strict=True)
        ),
    )


def _canonical_with(wire: dict[str, Any], key: str, encoded: str) -> str:
    """``canonical_json(wire)`` where ``wire[key]`` is already encoded as ``encoded``: the
    same keys in the same sorted order, the same separators."""
    return (
        "{"
        + ",".join(
            f"{canonical_json(name)}:{encoded if name == key else canonical_json(value)}"
            for name, value in sorted(wire.items())
        )
        + "}"
    )


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def call_trace(
    *,
    cycle: int,
    pack: ContextPack,
    digest: str,
    factor: float,
    request: ModelRequest,
    reply: ModelReply | None,
    failed: str | None,
    recipe: TraceRecipe | None,
) -> CallTrace:
    """One call's trace from its pack, request and reply."""
    meta = pack.compression_metadata
    return CallTrace(
        cycle=cycle,
        pack_id=digest[:16],
        pack_digest=digest,
        budget_used=pack.budget_used,
        budget_limit=pack.budget_limit,
        tokens_per_layer=dict(pack.metrics.tokens_per_layer),
        # A pack's entries are valid: each is listed without validating it again (one
        # per entry of every model call; tests/test_why.py checks it equals a validated one).
        entries=tuple(
            trusted(
                TraceEntry,
                {
                    "id": e.id,
                    "layer": e.layer,
                    "kind": e.kind,
                    "sources": e.sources,
                    "tokens": e.tokens,
                    "compressed": e.compressed,
                },
            )
            for e in pack.entries()
        ),
        dropped=tuple(
            Dropped(kind=d.kind, reason=d.reason, first=d.first, last=d.last, count=d.count)
            for d in meta.dropped
        ),
        moved_to_l3=meta.moved_to_l3,
        factor=factor,
        estimated=pack.budget_used,
        usage=None if reply is None else reply.usage,
        request=request_shape(request),
        reply=recorded_reply(reply),
        failed=failed,
        recipe=recipe,
    )


def recorded_reply(reply: ModelReply | None) -> RecordedReply | None:
    """What a replay sends back for ``reply`` (None for a call that failed)."""
    if reply is None:
        return None
    return RecordedReply(
        text=reply.text,
        tool_calls=tuple((c.id, c.name, c.arguments) for c in reply.tool_calls),
        finish_reason=reply.finish_reason,
        usage=reply.usage,
    )


def extraction_trace(
    request: ModelRequest, reply: ModelReply | None, failed: str | None
) -> ExtractionTrace:
    """One extraction call's trace from its request and reply."""
    return ExtractionTrace(
        request=request_shape(request), reply=recorded_reply(reply), failed=failed
    )
