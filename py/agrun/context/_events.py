"""The events a context build emits (spec 001 section 11), tagged by a ``kind`` literal.

A build hands them, in order, to the ``emit`` callable its caller passes; the kernel wires
that to its event stream. `CompressionApplied` records carry the kept spans, so a replay
can rebuild the same pack without running a compressor again.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ._pack import CompressionRecord, ContextMetrics
from ._request import WireModel

__all__ = [
    "CompressionApplied",
    "ContextBuildingFailedEvent",
    "ContextBuildingStarted",
    "ContextEvent",
    "ContextPackBuilt",
    "LayerTruncated",
]


class _Event(WireModel):
    causation_id: str | None = None
    """The event that caused the build (e.g. the stage schedule), when known."""
    stage: str | None = None
    """The stage the pack is for."""


class ContextBuildingStarted(_Event):
    """A build began."""

    kind: Literal["ContextBuildingStarted"] = "ContextBuildingStarted"
    """Tag."""
    budget_limit: int
    """The limit that applies."""
    cursor: int
    """Where retrieval started in the message log."""
    messages: int
    """Messages retrieved (after the cursor)."""


class CompressionApplied(_Event):
    """Inputs were compressed; each record says which spans were kept."""

    kind: Literal["CompressionApplied"] = "CompressionApplied"
    """Tag."""
    records: tuple[CompressionRecord, ...]
    """One per compressed input."""


class LayerTruncated(_Event):
    """A layer lost entries: dropped for the budget, or moved by the session L2 cap."""

    kind: Literal["LayerTruncated"] = "LayerTruncated"
    """Tag."""
    layer: str
    """The layer that shrank."""
    reason: str
    """``over_budget`` or ``moved_to_l3``."""
    sources: tuple[str, ...]
    """Ids of the inputs that left it (for transcript runs: the run's first and last)."""
    count: int
    """How many inputs left it."""
    moved_to: str | None = None
    """Where they went, when they moved."""


class ContextPackBuilt(_Event):
    """A pack is ready."""

    kind: Literal["ContextPackBuilt"] = "ContextPackBuilt"
    """Tag."""
    budget_used: int
    """Tokens used."""
    budget_limit: int
    """The hard limit."""
    metrics: ContextMetrics
    """Tokens per layer, compression ratio, L2 size, dedup hit rate."""
    duration_ms: int | None
    """Build time by the injected clock; ``None`` without one."""
    pack_digest: str
    """sha256 of ``pack.to_json()``: a replay must reproduce it."""


class ContextBuildingFailedEvent(_Event):
    """The protected minimum did not fit, or an extension (compressor, ranker, layer,
    redactor, tokenizer) failed, so the stage cannot proceed."""

    kind: Literal["ContextBuildingFailed"] = "ContextBuildingFailed"
    """Tag."""
    reason: str
    """What went wrong, in words."""
    needed: int | None = None
    """Tokens the protected minimum needs (``None`` when the failure is not the budget)."""
    available: int | None = None
    """Tokens the budget leaves for it (``None`` when the failure is not the budget)."""
    items: tuple[str, ...] = ()
    """What did not fit: ``<kind>:<id>=<tokens>`` for each protected item."""


ContextEvent = Annotated[
    ContextBuildingStarted
    | CompressionApplied
    | LayerTruncated
    | ContextPackBuilt
    | ContextBuildingFailedEvent,
    Field(discriminator="kind"),
]
"""Any context event; validate with ``TypeAdapter(ContextEvent)``."""
