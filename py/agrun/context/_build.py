"""The synthesis pipeline (spec 001 section 7): one pure function from a request to a pack.

Steps, in order: retrieve (from the cursor), deduplicate, rank, compress per data type,
inject policies, count and trim to the budget, assemble. Trimming admits inputs by
priority, most important first, so what is left out is always the least important:

    protected   system prompt, active policies, direction fields, current request
                (found over the whole log, so even before the cursor; if these alone
                do not fit, the build fails: ContextBuildingFailed)
    1  recent turns (newest first; the transcript stays a contiguous suffix)
    2  steering notes, approvals
    3  artifacts, then tool outputs (by relevance)
    4  older transcript, newest first, up to ``transcript_share`` of what recall leaves;
       then recalled turns from below it (L2), by relevance, up to ``recall_share``
    5  the room of the L2 conversation summary (written once the window is done, from
       what it left out); L2 memory related to the request, by relevance; the merged L3
       entry of related memory past the session cap
    6  the rest of the older transcript, events (relevance x decay), L2 memory unrelated
       to the request (newest first), extension layers
    7  L3, L4, and debug projections last
    8  more recalled turns in what room is left (cut to their best sentence if need be)

Between stages (and inside long loops) the build asks the caller's ``cancelled``
callable whether to stop (``_cancel``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from pydantic import ValidationError

from .._base import FrozenDict
from ..ports import Clock, Compressor, Ranker, Redactor, Tokenizer, check_hook
from . import _inputs as inputs
from ._cancel import BuildCancelled, Checkpoint
from ._compress import HeadCompressor, KeyLinesCompressor
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
    ContextPackBuilt,
    LayerTruncated,
)
from ._item import Item
from ._layer import ContextLayer
from ._ledger import Ledger
from ._memo import BuildMemo, Kept
from ._pack import (
    CompressionMetadata,
    CompressionRecord,
    ContextEntry,
    ContextMetrics,
    ContextPack,
    RecallMetrics,
    entry_json,
)
from ._plan import DIRECTION_FIELDS, LAYERS, Plan, text_of
from ._rank import BM25Ranker
from ._recall import PASSED_OVER, recall
from ._recall_index import RecallIndex
from ._redact import default_redactor
from ._request import ContextRequest
from ._tokens import default_tokenizer
from ._transcript import Transcript

__all__ = ["build_context", "validate_request"]

Emit = Callable[[Any], None]
Admit = Callable[[Plan, Ledger, Transcript], list[Item]]


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
    cancelled: Callable[[], bool] | None = None,
    recall_index: RecallIndex | None = None,
    memo: BuildMemo | None = None,
) -> ContextPack:
    """Build the context pack for one model call.

    Args:
        request: a `ContextRequest`, or the camelCase (or snake_case) dict of one.
        tokenizer: counts tokens; the default estimator errs high (``docs/context.md``).
        clock: only used to time the build for `ContextPackBuilt`; never for content.
        emit: receives the build's events, in order.
        ranker: scores relevance to the goal/query; `BM25Ranker` by default.
        compressors: by data type (``tool_output``, ``artifact``) to replace the defaults.
        redactor: scrubs secrets from every text and name that reaches an entry, first;
            `agrun.sensitive.PatternRedactor` by default.
        layers: extension layers contributing entries.
        replay: recorded compressions to apply instead of running compressors.
        cancelled: asked between stages and, every few steps, inside long loops; once
            it returns true the build stops (spec 001 section 14). A runtime building
            a pack for a run passes the run's cancel token here.
        recall_index: an index of the log the request's messages start with, kept up
            to date as turns are committed (the runtime keeps one), so recall does not
            read the whole log again; it never changes the pack, only what it costs.
        memo: where builds of one log keep the entries they made of its messages
            (`BuildMemo`; the runtime keeps one), so the next build does not make them
            again; like the index, it never changes the pack. It takes the tokenizer's
            counts and the redactor's texts as functions of the text.

    Returns:
        The pack, read-only throughout; ``pack.model_dump(by_alias=True, mode="json")``
        is its JSON form. Every event carries ``request.causation_id``.

    Raises:
        ContextBuildingFailed: the protected minimum (system prompt, policies, direction
            fields, current request) does not fit the budget, or an extension (or the
            ``cancelled`` callable) raised (chained as the cause); a
            `ContextBuildingFailed` event was emitted first.
        ContextBuildCancelled: ``cancelled()`` returned true; a `ContextBuildingFailed`
            event with reason ``"cancelled"`` was emitted first.
        ContextRequestInvalid: ``request`` is a dict that is not a valid request.
        ConfigError: ``tokenizer``, ``ranker`` or ``redactor`` is not one (plain data such
            as ``{}``, ``0`` or ``""`` included); the message names the option.
    """
    plan = _plan(
        request,
        tokenizer=tokenizer,
        ranker=ranker,
        compressors=compressors,
        redactor=redactor,
        layers=layers,
        replay=replay,
        cancelled=cancelled,
        recall_index=recall_index,
        memo=memo,
    )
    send = emit or _ignore
    started = clock.now_ms() if clock is not None else None
    try:
        pack = _run(plan, send)
    except ContextBuildingFailed:
        raise
    except BuildCancelled:
        event = ContextBuildingFailedEvent(**plan.event_base(), reason="cancelled")
        send(event)
        raise ContextBuildCancelled(event) from None
    except Exception as exc:
        event = ContextBuildingFailedEvent(
            **plan.event_base(), reason=f"context building failed: {type(exc).__name__}: {exc}"
        )
        send(event)
        raise ContextBuildingFailed(event) from exc
    if emit is not None:
        duration = None if started is None or clock is None else clock.now_ms() - started
        emit(
            ContextPackBuilt(
                **plan.event_base(),
                budget_used=pack.budget_used,
                budget_limit=pack.budget_limit,
                metrics=pack.metrics,
                duration_ms=duration,
                pack_digest=_digest(pack.to_json(partial(_entry_json, plan.kept_entries))),
            )
        )
    return pack


def validate_request(data: Mapping[str, Any]) -> ContextRequest:
    """A `ContextRequest` from its camelCase (or snake_case) dict.

    Raises:
        ContextRequestInvalid: naming the first bad fields by their camelCase path.
    """
    try:
        return ContextRequest.model_validate(data)
    except ValidationError as error:
        raise ContextRequestInvalid.from_validation("the context request", error) from None


def _plan(
    request: ContextRequest | Mapping[str, Any],
    *,
    tokenizer: Tokenizer | None = None,
    ranker: Ranker | None = None,
    compressors: Mapping[str, Compressor] | None = None,
    redactor: Redactor | None = None,
    layers: Sequence[ContextLayer] = (),
    replay: Iterable[CompressionApplied | CompressionRecord] | None = None,
    cancelled: Callable[[], bool] | None = None,
    recall_index: RecallIndex | None = None,
    memo: BuildMemo | None = None,
) -> Plan:
    """The build's `Plan`, defaults filled in (``bench/context_overflow.py`` uses it too)."""
    for option, hook in (("tokenizer", tokenizer), ("ranker", ranker), ("redactor", redactor)):
        # None asks for the default; anything else must be the port itself, so a wrong
        # value is refused rather than quietly swapped for the default.
        if hook is not None:
            check_hook(option, hook)
    if not isinstance(request, ContextRequest):
        request = validate_request(request)
    return Plan(
        request,
        tok=default_tokenizer() if tokenizer is None else tokenizer,
        ranker=BM25Ranker() if ranker is None else ranker,
        redactor=default_redactor() if redactor is None else redactor,
        compressors=_default_compressors() | dict(compressors or {}),
        extensions=layers,
        replay=_replay_map(replay),
        checkpoint=Checkpoint(cancelled),
        recall_index=recall_index,
        memo=memo,
    )


def _default_compressors() -> dict[str, Compressor]:
    return {"tool_output": KeyLinesCompressor(), "artifact": HeadCompressor()}


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


def _entry_json(kept_entries: Mapping[int, Kept], entry: ContextEntry) -> str:
    """``entry``'s canonical JSON, written once for an entry the memo keeps."""
    kept = kept_entries.get(id(entry))
    if kept is None:
        return entry_json(entry)
    if kept.json is None:
        kept.json = entry_json(entry)
    return kept.json


def _run(plan: Plan, emit: Emit, admit: Admit | None = None) -> ContextPack:
    """The pipeline: protected inputs first, then each stage by priority (``admit``,
    `_admit_by_priority` unless a benchmark compares another order), then assembly."""
    req = plan.req
    emit(
        ContextBuildingStarted(
            **plan.event_base(),
            budget_limit=plan.limit,
            cursor=req.cursor,
            messages=len(plan.messages) - plan.start,
        )
    )
    stage = plan.checkpoint.stage
    stage()
    ledger = Ledger(available=plan.limit - req.budget.reserve)
    protected = _protected(plan, ledger)
    _check_minimum(plan, ledger, protected, emit)
    ledger.take(protected)
    reserved = req.budget.reserve + sum(
        i.tokens for i in protected if i.kind in ("system", "policy")
    )
    stage()
    transcript = Transcript(plan, ledger)
    moved = (admit or _admit_by_priority)(plan, ledger, transcript)
    transcript.finish()
    # The last chance to stop: past here the pack is assembled and announced.
    stage()
    if ledger.records:
        emit(CompressionApplied(**plan.event_base(), records=tuple(ledger.records)))
    for layer, sources in ledger.truncated.items():
        emit(
            LayerTruncated(
                **plan.event_base(),
                layer=layer,
                reason="over_budget",
                sources=tuple(sources),
                count=len(sources),
            )
        )
    pack = _assemble(plan, ledger, moved, reserved, emit)
    _check_pack(plan, protected, pack, emit)
    return pack


def _check_pack(plan: Plan, protected: list[Item], pack: ContextPack, emit: Emit) -> None:
    """Compaction that checks itself: the pack must hold every protected entry as it was
    made (the current request whole, each direction field, a pending clarification among
    them) and stay within its budget. The stages are built never to break this; a stage
    that did (an extension's order, a future change) fails the build loudly instead of
    sending the model a pack that lost what the run is about."""
    held = {(e.kind, e.sources, e.name, e.content) for e in pack.entries()}
    missing = [
        f"{item.kind}:{item.name or item.sources[0]}"
        for item in protected
        if (item.kind, item.sources, item.name, item.content) not in held
    ]
    over = pack.budget_used > pack.budget_limit
    if not missing and not over:
        return
    reason = "the pack failed its self-check: " + (
        f"missing {', '.join(missing)}" if missing else ""
    )
    if over:
        reason += ("; " if missing else "") + (
            f"{pack.budget_used} tokens used of a {pack.budget_limit}-token budget"
        )
    event = ContextBuildingFailedEvent(**plan.event_base(), reason=reason, items=tuple(missing))
    emit(event)
    raise ContextPackIncomplete(event)


def _admit_by_priority(plan: Plan, ledger: Ledger, transcript: Transcript) -> list[Item]:
    """Priorities 1 to 7 (this module's docstring), asking to stop between stages;
    returns the L2 items the session cap moved into L3.

    Spec 001 section 9 would drop L2 first. Here L2 that shares a word with the request
    comes before the rest of the older transcript and events, and L2 that does not comes
    after them, oldest first to go: ``bench/context_overflow.py`` measured the orders
    (docs/context.md has the figures).
    """
    stage = plan.checkpoint.stage
    transcript.admit_recent()
    stage()
    _offer(plan, ledger, inputs.steering(plan, ledger))
    _offer(plan, ledger, inputs.approvals(plan, ledger))
    stage()
    _offer(plan, ledger, inputs.artifacts(plan, ledger))
    stage()
    _offer(plan, ledger, inputs.tool_outputs(plan, ledger))
    early = [layer for layer in plan.extensions if getattr(layer, "early", False) is True]
    for extension in early:
        stage()
        _offer(plan, ledger, inputs.extension(plan, extension))
    stage()
    options = plan.req.options
    free = ledger.available - ledger.used
    transcript.admit_older(options.transcript_share * (1.0 - options.recall_share))
    stage()
    top_up = recall(plan, ledger, transcript, ledger.used + int(options.recall_share * free))
    stage()
    transcript.reserve_summary()
    l2 = inputs.session_memory(plan, ledger)
    ledger.admit_each(l2.relevant)
    merged = inputs.merged_memory(plan, ledger, l2.moved, related=True)
    if merged is not None:
        ledger.take((merged,))
    stage()
    transcript.admit_rest()
    transcript.place_summary()
    ledger.recall.window_from = transcript.kept_from
    stage()
    _offer(plan, ledger, inputs.events(plan, ledger))
    ledger.admit_each(l2.unrelated)
    for extension in plan.extensions:
        if extension in early:
            continue
        stage()
        _offer(plan, ledger, inputs.extension(plan, extension))
    stage()
    late = None if merged else inputs.merged_memory(plan, ledger, l2.moved, related=False)
    _offer(plan, ledger, inputs.deep_memory(plan, ledger, late))
    if top_up is not None:
        # Last: what room every stage left is filled with the next recalled turns.
        stage()
        top_up(frozenset())
    return l2.moved


def _offer(plan: Plan, ledger: Ledger, items: list[Item]) -> None:
    # Items are counted as they are offered: a stage that is never reached costs nothing.
    for item in items:
        if not item.tokens:
            plan.checkpoint.step()
            plan.count(item)
    ledger.admit_each(items)


def _protected(plan: Plan, ledger: Ledger) -> list[Item]:
    req = plan.req
    redact = plan.redactor.redact
    items: list[Item] = []
    if req.system_prompt:
        items.append(Item("L0", "system", redact(req.system_prompt), ("system",), (0, 0, 0)))
    for position, policy in enumerate(req.policies):
        if policy.active and (policy.stages is None or req.stage in policy.stages):
            items.append(Item("L0", "policy", redact(policy.text), (policy.id,), (0, 1, position)))
    for position, (attr, name) in enumerate(DIRECTION_FIELDS):
        value = text_of(getattr(req.direction, attr))
        if value:
            item = Item("L0", "direction", redact(value), (name,), (0, 2, position), name=name)
            items.append(item)
    if plan.anchor >= 0:
        for index in range(plan.anchor, plan.anchor_end):
            items.append(plan.message_item(ledger, index, compress=False))
    for item in items:
        plan.counted(item)
    return items


def _check_minimum(plan: Plan, ledger: Ledger, protected: list[Item], emit: Emit) -> None:
    needed = sum(item.tokens for item in protected)
    if needed <= ledger.available and ledger.available > 0:
        return
    event = ContextBuildingFailedEvent(
        **plan.event_base(),
        reason="protected context does not fit the budget",
        needed=needed,
        available=max(ledger.available, 0),
        items=tuple(f"{i.kind}:{i.sources[0]}={i.tokens}" for i in protected),
    )
    emit(event)
    raise ContextBuildingFailed(event)


def _assemble(
    plan: Plan, ledger: Ledger, moved: list[Item], reserved: int, emit: Emit
) -> ContextPack:
    req = plan.req
    layers: dict[str, list[ContextEntry]] = {name: [] for name in LAYERS}
    kept = ledger.kept()
    kept_entries = plan.kept_entries
    for item in sorted(kept, key=lambda i: (_layer_rank(i.layer), *i.order)):
        entry = item.entry()
        layers.setdefault(item.layer, []).append(entry)
        if item.kept is not None and item.kept.entry is entry:
            kept_entries[id(entry)] = item.kept
    per_layer = {name: sum(e.tokens for e in entries) for name, entries in layers.items()}
    records = ledger.records
    before = sum(r.tokens_before for r in records)
    after = sum(r.tokens_after for r in records)
    metadata = CompressionMetadata.model_construct(
        tokenizer=getattr(plan.tok, "name", type(plan.tok).__name__),
        anchor=plan.messages[plan.anchor].id if plan.anchor >= 0 else None,
        reserved=reserved,
        records=tuple(records),
        dropped=tuple(ledger.dropped),
        moved_to_l3=tuple(s for i in moved for s in i.sources),
        dedup_checked=ledger.dedup_checked,
        dedup_hits=ledger.dedup_hits,
    )
    admitted = {id(item) for item in kept}
    hits = sorted((item.order[-1], hit) for item, hit in ledger.recall.hits if id(item) in admitted)
    recalled = RecallMetrics.model_construct(
        searched=ledger.recall.searched,
        matched=ledger.recall.matched,
        recalled=len(hits),
        turns=tuple(hit for _, hit in hits),
        passed_over=tuple(
            hit for at, hit in ledger.recall.passed_over if at < ledger.recall.window_from
        )[:PASSED_OVER],
    )
    metrics = ContextMetrics.model_construct(
        tokens_per_layer=FrozenDict(per_layer),
        compression_ratio=round(after / before, 4) if before else 1.0,
        l2_tokens=per_layer["L2"],
        dedup_hit_rate=round(ledger.dedup_hits / ledger.dedup_checked, 4)
        if ledger.dedup_checked
        else 0.0,
        recall=recalled,
    )
    if moved:
        emit(
            LayerTruncated(
                **plan.event_base(),
                layer="L2",
                reason="moved_to_l3",
                sources=metadata.moved_to_l3,
                count=len(metadata.moved_to_l3),
                moved_to="L3",
            )
        )
    return ContextPack.model_construct(
        layers=FrozenDict({name: tuple(entries) for name, entries in layers.items()}),
        budget_used=ledger.used + req.budget.reserve,
        budget_limit=plan.limit,
        compression_metadata=metadata,
        metrics=metrics,
        next_cursor=len(req.messages),
    )


def _layer_rank(layer: str) -> int:
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)
