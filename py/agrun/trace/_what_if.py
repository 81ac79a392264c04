"""What-if: a recorded model call's pack, rebuilt under another setting (issue 22.5).

A call's trace keeps its context request's recipe (`TraceRecipe`: everything but the
history, which the session keeps, and the run's own messages so far). `recorded_request`
puts the request back together; the runtime rebuilds the pack under another budget,
window, tokenizer or ranker, calling no model and emitting no event; `pack_diff` says, entry
by entry, what that changes against what the call was really sent.
"""

from __future__ import annotations

from typing import Any

from .._base import Model
from ..context import SESSION_L2_SHARE, Budget, ContextPack, ContextRequest, Message
from ..memory import noted_failures
from ._trace import CallTrace, TraceRecipe

__all__ = ["EntryChange", "WhatIf", "pack_diff", "recorded_request", "with_budget"]


class EntryChange(Model):
    """One entry of the recorded pack (or of the rebuilt one) and what became of it."""

    id: str
    layer: str
    tokens_before: int | None
    """Its tokens in the recorded pack; None when only the rebuilt pack holds it."""
    tokens_after: int | None
    """Its tokens in the rebuilt pack; None when the rebuild left it out."""
    compressed_before: bool = False
    compressed_after: bool = False
    reason: str | None = None
    """For an entry the rebuild left out: why (``over_budget``, ``moved_to_l3``...)."""


class WhatIf(Model):
    """How one recorded call's pack changes under another setting."""

    run_id: str
    call: int
    """Index of the call in the run's trace."""
    setting: dict[str, Any]
    """What was changed (``budget``, ``window``, ``tokenizer``, ``ranker``)."""
    faithful: bool
    """Whether rebuilding under the recorded setting gives the recorded pack back (a content
    store whose entries changed since, or a host hook that changed, makes it differ)."""
    budget_before: tuple[int, int]
    """The recorded pack's tokens used and limit."""
    budget_after: tuple[int, int]
    kept: tuple[EntryChange, ...]
    """In both packs, as they were (tokens may differ under another tokenizer)."""
    compressed: tuple[EntryChange, ...]
    """In both, compressed in the rebuild only."""
    dropped: tuple[EntryChange, ...]
    """In the recorded pack, left out of the rebuild (with the rebuild's reason)."""
    added: tuple[EntryChange, ...]
    """In the rebuild only (more room lets older turns in)."""
    merged_into_l3: tuple[str, ...]
    """L2 memory ids the rebuild merged into L3 that the recorded pack did not."""
    tokens_per_layer: dict[str, tuple[int, int]]
    """Each layer's tokens, before and after."""


def recorded_request(recipe: TraceRecipe, history: tuple[Message, ...]) -> ContextRequest:
    """The call's context request, from its recipe and the session's history."""
    prior = noted_failures(history[: recipe.prior])
    turn = tuple(Message.model_validate(message) for message in recipe.turn)
    return ContextRequest.model_validate({**recipe.request, "messages": (*prior, *turn)})


def with_budget(request: ContextRequest, limit: int) -> ContextRequest:
    """``request`` under another token limit (the session L2 cap and the reserve follow, as
    a run sets them)."""
    budget = Budget(
        limit=limit,
        reserve=min(request.budget.reserve, limit - 1),
        session_l2_cap=int(limit * SESSION_L2_SHARE),
    )
    return request.model_copy(update={"budget": budget})


def pack_diff(
    before: CallTrace,
    after: ContextPack,
    request: ContextRequest,
    *,
    run_id: str,
    call: int,
    setting: dict[str, Any],
    faithful: bool,
) -> WhatIf:
    """What ``after`` (built from ``request``) keeps, compresses, drops, adds and merges
    against the call ``before``."""
    rebuilt = {entry.id: entry for entry in after.entries()}
    # A drop names a run of inputs by its ends: place each input by the request's order.
    order = {message.id: position for position, message in enumerate(request.messages)}
    order.update((item.id, position) for position, item in enumerate(request.memory))
    runs = [
        (order.get(d.first, -1), order.get(d.last, -1), d.first, d.last, d.reason)
        for d in after.compression_metadata.dropped
    ]
    moved = set(after.compression_metadata.moved_to_l3)

    def reason(sources: tuple[str, ...]) -> str:
        for source in sources:
            if source in moved:
                return "moved_to_l3"
            at = order.get(source)
            for first, last, first_id, last_id, why in runs:
                if source in (first_id, last_id) or (at is not None and first <= at <= last):
                    return why
        return "left_out"

    kept, compressed, dropped = [], [], []
    for entry in before.entries:
        now = rebuilt.get(entry.id)
        change = EntryChange(
            id=entry.id,
            layer=entry.layer,
            tokens_before=entry.tokens,
            tokens_after=None if now is None else now.tokens,
            compressed_before=entry.compressed,
            compressed_after=False if now is None else now.compressed,
            reason=None if now is not None else reason(entry.sources),
        )
        if now is None:
            dropped.append(change)
        elif now.compressed and not entry.compressed:
            compressed.append(change)
        else:
            kept.append(change)
    known = {entry.id for entry in before.entries}
    added = [
        EntryChange(
            id=entry.id,
            layer=entry.layer,
            tokens_before=None,
            tokens_after=entry.tokens,
            compressed_after=entry.compressed,
        )
        for entry in after.entries()
        if entry.id not in known
    ]
    layers = {**before.tokens_per_layer, **after.metrics.tokens_per_layer}
    return WhatIf(
        run_id=run_id,
        call=call,
        setting=setting,
        faithful=faithful,
        budget_before=(before.budget_used, before.budget_limit),
        budget_after=(after.budget_used, after.budget_limit),
        kept=tuple(kept),
        compressed=tuple(compressed),
        dropped=tuple(dropped),
        added=tuple(added),
        merged_into_l3=tuple(
            i for i in after.compression_metadata.moved_to_l3 if i not in set(before.moved_to_l3)
        ),
        tokens_per_layer={
            layer: (
                before.tokens_per_layer.get(layer, 0),
                after.metrics.tokens_per_layer.get(layer, 0),
            )
            for layer in layers
        },
    )
