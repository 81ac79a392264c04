"""The synthesis pipeline (spec 001 section 7): one pure function from a request to a pack.

Steps, in order: retrieve (from the cursor), deduplicate, rank, compress per data type,
inject policies, count and trim to the budget, assemble. Trimming admits inputs by
priority, most important first, so what is left out is always the least important:

    protected   system prompt, active policies, direction fields, current request
                (if these alone do not fit, the build fails: ContextBuildingFailed)
    1  recent turns (newest first; the transcript stays a contiguous suffix)
    2  steering notes, approvals
    3  artifacts, then tool outputs (by relevance)
    4  older transcript, newest first, up to ``transcript_share`` of what is left
    5  the L2 conversation summary, then L2 memory newest first (oldest L2 goes first)
    6  the rest of the older transcript, events (relevance x decay), extension layers
    7  L3, L4, and debug projections last
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from .._ports import Clock
from . import _inputs as inputs
from ._compress import (
    Compressor,
    HeadCompressor,
    KeyLinesCompressor,
    apply_spans,
    check_spans,
)
from ._errors import ContextBuildingFailed, ContextRequestInvalid
from ._events import (
    CompressionApplied,
    ContextBuildingFailedEvent,
    ContextBuildingStarted,
    ContextPackBuilt,
    LayerTruncated,
)
from ._item import Item, Tally
from ._pack import (
    CompressionMetadata,
    CompressionRecord,
    ContextEntry,
    ContextMetrics,
    ContextPack,
    DroppedItem,
    entry_tag,
    frame,
    tool_calls_text,
)
from ._rank import BM25Ranker, Ranker
from ._redact import PatternRedactor, Redactor
from ._request import ContextRequest, Message, ToolCall
from ._tokens import Tokenizer, default_tokenizer
from ._transcript import Transcript, unit_end
from ._window import current_request_index

__all__ = ["ContextLayer", "build_context", "validate_request"]

LAYERS = ("L0", "L1", "L2", "L3", "L4")
DIRECTION_FIELDS = (
    ("active_goal", "activeGoal"),
    ("active_topic", "activeTopic"),
    ("active_query", "activeQuery"),
    ("pending_clarification", "pendingClarification"),
    ("last_clarification_resolution", "lastClarificationResolution"),
    ("selected_source", "selectedSource"),
    ("last_read_source", "lastReadSource"),
)


@runtime_checkable
class ContextLayer(Protocol):
    """An extension that contributes entries of its own (spec 001 section 18).

    Its entries are redacted, re-counted and admitted after events, in the order given.
    """

    name: str

    def entries(self, request: ContextRequest) -> Sequence[ContextEntry]:
        """The entries this layer offers for ``request``."""
        ...


Emit = Callable[[Any], None]


def build_context(
    request: ContextRequest | Mapping[str, Any],
    *,
    tokenizer: Tokenizer | None = None,
    clock: Clock | None = None,
    emit: Emit | None = None,
    ranker: Ranker | None = None,
    compressors: Mapping[str, Compressor] | None = None,
    redactor: Redactor | None = None,
    layers: Sequence[ContextLayer] = (),
    replay: Iterable[CompressionApplied | CompressionRecord] | None = None,
) -> ContextPack:
    """Build the context pack for one model call.

    Args:
        request: a `ContextRequest`, or the camelCase (or snake_case) dict of one.
        tokenizer: counts tokens; the default estimator errs high (``docs/context.md``).
        clock: only used to time the build for `ContextPackBuilt`; never for content.
        emit: receives the build's events, in order.
        ranker: scores relevance to the goal/query; `BM25Ranker` by default.
        compressors: by data type (``tool_output``, ``artifact``) to replace the defaults.
        redactor: scrubs secrets from every text first; `PatternRedactor` by default.
        layers: extension layers contributing entries.
        replay: recorded compressions to apply instead of running compressors.

    Returns:
        The pack; ``pack.model_dump(by_alias=True, mode="json")`` is its JSON form.

    Raises:
        ContextBuildingFailed: the protected minimum (system prompt, policies, direction
            fields, current request) does not fit the budget, or an extension raised
            (chained as the cause); a `ContextBuildingFailed` event was emitted first.
        pydantic.ValidationError: ``request`` is a dict that is not a valid request.
    """
    if not isinstance(request, ContextRequest):
        request = validate_request(request)
    build = Build(
        request,
        tokenizer=tokenizer or default_tokenizer(),
        emit=emit or _ignore,
        ranker=ranker or BM25Ranker(),
        compressors={"tool_output": KeyLinesCompressor(), "artifact": HeadCompressor()}
        | dict(compressors or {}),
        redactor=redactor or PatternRedactor(),
        layers=layers,
        replay=_replay_map(replay),
    )
    started = clock.now_ms() if clock is not None else None
    try:
        pack = build.run()
    except ContextBuildingFailed:
        raise
    except Exception as exc:
        event = ContextBuildingFailedEvent(
            **build.event_base(), reason=f"context building failed: {type(exc).__name__}: {exc}"
        )
        build.emit(event)
        raise ContextBuildingFailed(event) from exc
    if emit is not None:
        duration = None if started is None or clock is None else clock.now_ms() - started
        build.finish(pack, duration)
    return pack


def validate_request(data: Mapping[str, Any]) -> ContextRequest:
    """A `ContextRequest` from its camelCase (or snake_case) dict.

    The cyclic garbage collector is paused meanwhile: validating a long history allocates
    hundreds of thousands of objects and nothing cyclic, and the collections that
    allocation would trigger cost several times the validation itself (measured: 100k
    messages, 0.3 s paused vs 1-3 s not).
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return ContextRequest.model_validate(data)
    except ValidationError as error:
        raise ContextRequestInvalid.from_validation("the context request", error) from None
    finally:
        if paused:
            gc.enable()


def _ignore(event: Any) -> None:
    return None


def _replay_map(
    replay: Iterable[CompressionApplied | CompressionRecord] | None,
) -> dict[tuple[str, str], CompressionRecord]:
    recorded: dict[tuple[str, str], CompressionRecord] = {}
    for item in replay or ():
        records = item.records if isinstance(item, CompressionApplied) else (item,)
        for record in records:
            recorded[(record.data_type, record.source)] = record
    return recorded


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Build:
    """One build's working state; `run` is the pipeline."""

    def __init__(
        self,
        request: ContextRequest,
        *,
        tokenizer: Tokenizer,
        emit: Emit,
        ranker: Ranker,
        compressors: Mapping[str, Compressor],
        redactor: Redactor,
        layers: Sequence[ContextLayer],
        replay: dict[tuple[str, str], CompressionRecord],
    ) -> None:
        self.req = request
        self.tok = tokenizer
        self.emit = emit
        self.ranker = ranker
        self.compressors = compressors
        self.redactor = redactor
        self.extensions = layers
        self.replay = replay
        self.tally = Tally()
        self.window = request.messages[request.cursor :]
        self.query = self._query()
        budget = request.budget
        limits = [budget.limit]
        if request.model is not None and request.model in budget.per_model:
            limits.append(budget.per_model[request.model])
        if request.stage is not None and request.stage in budget.per_stage:
            limits.append(budget.per_stage[request.stage])
        self.limit = min(limits)
        self.anchor = current_request_index(self.window, request.input)

    # -- helpers ---------------------------------------------------------------------

    def event_base(self) -> dict[str, Any]:
        return {"causation_id": self.req.causation_id, "stage": self.req.stage}

    def _query(self) -> str:
        d = self.req.direction
        parts = [_text(v) for v in (d.active_goal, d.active_query, d.active_topic)]
        return " ".join([p for p in parts if p] + [self.req.input or ""])

    def count(self, item: Item) -> int:
        """Count ``item`` as it will be rendered, frame included, and remember it."""
        tag = entry_tag(item.kind, item.role, item.name)
        item.tokens = self.tok.count(frame(tag, item.content, tool_calls_text(item.tool_calls)))
        return item.tokens

    def compress(self, data_type: str, source: str, text: str, limit: int) -> tuple[str, bool]:
        """``text`` compressed to ``limit`` tokens if it is over, with the record kept."""
        recorded = self.replay.get((data_type, source))
        if recorded is None:
            before = self.tok.count(text)
            if before <= limit:
                return text, False
            compressor = self.compressors[data_type]
            spans = tuple(compressor.compress(text, limit=limit, tokenizer=self.tok))
            strategy = compressor.name
        else:
            before = self.tok.count(text)
            spans, strategy = tuple(recorded.spans), recorded.strategy
        check_spans(spans, text, source)
        out = apply_spans(text, spans)
        after = self.tok.count(out)
        self.tally.records.append(
            CompressionRecord.model_construct(
                source=source,
                data_type=data_type,
                strategy=strategy,
                spans=spans,
                tokens_before=before,
                tokens_after=after,
            )
        )
        return out, True

    def _admit(self, item: Item) -> bool:
        cost = item.tokens or self.count(item)
        if self.tally.used + cost > self.available:
            return False
        self.tally.used += cost
        self.tally.admitted.append(item)
        return True

    def drop(
        self, kind: str, reason: str, first: str, last: str | None = None, count: int = 1
    ) -> None:
        """Record inputs left out of the pack (a run ``first``..``last`` of ``count``)."""
        self.tally.dropped.append(
            DroppedItem.model_construct(
                kind=kind, reason=reason, first=first, last=last or first, count=count
            )
        )

    def truncated(self, layer: str, source: str) -> None:
        """Note that ``layer`` lost an input to the budget (for `LayerTruncated`)."""
        self.tally.truncated.setdefault(layer, []).append(source)

    # -- the pipeline ----------------------------------------------------------------

    def run(self) -> ContextPack:
        req = self.req
        self.emit(
            ContextBuildingStarted(
                **self.event_base(),
                budget_limit=self.limit,
                cursor=req.cursor,
                messages=len(self.window),
            )
        )
        self.available = self.limit - req.budget.reserve
        protected = self._protected()
        self._check_minimum(protected)
        for item in protected:
            self.tally.used += item.tokens
            self.tally.admitted.append(item)
        self.reserved = req.budget.reserve + sum(
            i.tokens for i in protected if i.kind in ("system", "policy")
        )
        transcript = Transcript(self)
        transcript.admit_recent()
        self.admit_ranked(inputs.steering(self))
        self.admit_ranked(inputs.approvals(self))
        self.admit_ranked(inputs.artifacts(self))
        self.admit_ranked(inputs.tool_outputs(self))
        transcript.admit_older(self.req.options.transcript_share)
        moved = inputs.admit_memory(self, transcript.summary())
        transcript.admit_rest()
        self.admit_ranked(inputs.events(self))
        for layer in self.extensions:
            self.admit_ranked(inputs.extension(self, layer))
        self.admit_ranked(inputs.deep_memory(self, moved))
        if self.tally.records:
            self.emit(CompressionApplied(**self.event_base(), records=tuple(self.tally.records)))
        for layer, sources in self.tally.truncated.items():
            self.emit(
                LayerTruncated(
                    **self.event_base(),
                    layer=layer,
                    reason="over_budget",
                    sources=tuple(sources),
                    count=len(sources),
                )
            )
        return self._assemble(moved)

    def finish(self, pack: ContextPack, duration: int | None) -> None:
        self.emit(
            ContextPackBuilt(
                **self.event_base(),
                budget_used=pack.budget_used,
                budget_limit=pack.budget_limit,
                metrics=pack.metrics,
                duration_ms=duration,
                pack_digest=_digest(pack.to_json()),
            )
        )

    def _protected(self) -> list[Item]:
        req = self.req
        items: list[Item] = []
        if req.system_prompt:
            content = self.redactor.redact(req.system_prompt)
            items.append(Item("L0", "system", content, ("system",), (0, 0, 0)))
        for position, policy in enumerate(req.policies):
            if policy.active and (policy.stages is None or req.stage in policy.stages):
                content = self.redactor.redact(policy.text)
                items.append(Item("L0", "policy", content, (policy.id,), (0, 1, position)))
        for position, (attr, name) in enumerate(DIRECTION_FIELDS):
            value = _text(getattr(req.direction, attr))
            if value:
                content = self.redactor.redact(value)
                item = Item("L0", "direction", content, (name,), (0, 2, position), name=name)
                items.append(item)
        if self.anchor >= 0:
            for index in range(self.anchor, unit_end(self.window, self.anchor)):
                items.append(self.message_item(index, compress=False))
        for item in items:
            self.count(item)
        return items

    def _check_minimum(self, protected: list[Item]) -> None:
        needed = sum(item.tokens for item in protected)
        if needed <= self.available and self.available > 0:
            return
        event = ContextBuildingFailedEvent(
            **self.event_base(),
            reason="protected context does not fit the budget",
            needed=needed,
            available=max(self.available, 0),
            items=tuple(f"{i.kind}:{i.sources[0]}={i.tokens}" for i in protected),
        )
        self.emit(event)
        raise ContextBuildingFailed(event)

    def message_item(self, index: int, *, compress: bool = True) -> Item:
        """The candidate for window message ``index``: redacted, tool results compressed."""
        message: Message = self.window[index]
        content = self.redactor.redact(message.content)
        compressed = False
        if compress and message.role == "tool":
            limit = self.req.options.max_tool_output_tokens
            content, compressed = self.compress("tool_output", message.id, content, limit)
        calls = tuple(self._redacted_call(call) for call in message.tool_calls)
        return Item(
            "L0",
            "message",
            content,
            (message.id,),
            (0, 4, index),
            role=message.role,
            name=message.name,
            tool_calls=calls,
            tool_call_id=message.tool_call_id,
            compressed=compressed,
        )

    def _redacted_call(self, call: ToolCall) -> ToolCall:
        text = _text(call.arguments)
        scrubbed = self.redactor.redact(text)
        return call if scrubbed == text else call.model_copy(update={"arguments": scrubbed})

    def admit_ranked(self, items: list[Item]) -> None:
        """Admit each item in order while it fits; record the ones that do not."""
        for item in items:
            if not self._admit(item):
                self.drop(item.kind, "over_budget", item.sources[0], item.sources[-1])
                self.truncated(item.layer, item.sources[0])

    def rank(self, items: list[Item]) -> list[Item]:
        """``items`` scored against the query, most relevant first (ties: newer first)."""
        scores = self.ranker.score(self.query, [item.content for item in items])
        for item, score in zip(items, scores, strict=True):
            item.score = float(score)
        # Most relevant first; ties keep the newer (later) input first.
        return sorted(items, key=lambda i: (-(i.score or 0.0), -i.order[-1]))

    def _assemble(self, moved: list[Item]) -> ContextPack:
        req = self.req
        layers: dict[str, list[ContextEntry]] = {name: [] for name in LAYERS}
        for item in sorted(self.tally.admitted, key=lambda i: (_layer_rank(i.layer), *i.order)):
            layers.setdefault(item.layer, []).append(item.entry())
        per_layer = {name: sum(e.tokens for e in entries) for name, entries in layers.items()}
        records = self.tally.records
        before = sum(r.tokens_before for r in records)
        after = sum(r.tokens_after for r in records)
        state = self.tally
        metadata = CompressionMetadata.model_construct(
            tokenizer=getattr(self.tok, "name", type(self.tok).__name__),
            anchor=self.window[self.anchor].id if self.anchor >= 0 else None,
            reserved=self.reserved,
            records=tuple(records),
            dropped=tuple(state.dropped),
            moved_to_l3=tuple(s for i in moved for s in i.sources),
            dedup_checked=state.dedup_checked,
            dedup_hits=state.dedup_hits,
        )
        metrics = ContextMetrics.model_construct(
            tokens_per_layer=per_layer,
            compression_ratio=round(after / before, 4) if before else 1.0,
            l2_tokens=per_layer["L2"],
            dedup_hit_rate=round(state.dedup_hits / state.dedup_checked, 4)
            if state.dedup_checked
            else 0.0,
        )
        if moved:
            self.emit(
                LayerTruncated(
                    **self.event_base(),
                    layer="L2",
                    reason="moved_to_l3",
                    sources=metadata.moved_to_l3,
                    count=len(metadata.moved_to_l3),
                    moved_to="L3",
                )
            )
        return ContextPack.model_construct(
            layers={name: tuple(entries) for name, entries in layers.items()},
            budget_used=state.used + req.budget.reserve,
            budget_limit=self.limit,
            compression_metadata=metadata,
            metrics=metrics,
            next_cursor=len(req.messages),
        )


def _layer_rank(layer: str) -> int:
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
