"""A build's budget ledger: what has been admitted, used, dropped and recorded so far.

The one mutable thing a build has. The pipeline (``_build``) owns it and hands it to each
stage explicitly; a stage offers candidates and the ledger admits them while they fit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ._item import Item
from ._pack import CompressionRecord, DroppedItem, DropReason

__all__ = ["Ledger"]


@dataclass
class Ledger:
    """Budget accounting for one build: ``used`` never exceeds ``available``."""

    available: int
    """Tokens the entries may take: the limit minus ``budget.reserve``."""
    used: int = 0
    admitted: list[Item] = field(default_factory=list)
    dropped: list[DroppedItem] = field(default_factory=list)
    records: list[CompressionRecord] = field(default_factory=list)
    truncated: dict[str, list[str]] = field(default_factory=dict)
    dedup_checked: int = 0
    dedup_hits: int = 0

    def fits(self, cost: int) -> bool:
        """Whether ``cost`` more tokens stay within the budget."""
        return self.used + cost <= self.available

    def take(self, items: Iterable[Item]) -> None:
        """Admit ``items`` unconditionally (protected items, or ones already checked)."""
        for item in items:
            self.used += item.tokens
            self.admitted.append(item)

    def admit(self, item: Item) -> bool:
        """Admit ``item`` if it fits (its ``tokens`` must be counted)."""
        if not self.fits(item.tokens):
            return False
        self.take((item,))
        return True

    def admit_each(self, items: Iterable[Item]) -> None:
        """Admit each item in order while it fits; record the ones that do not."""
        for item in items:
            if not self.admit(item):
                self.drop(item.kind, "over_budget", item.sources[0], item.sources[-1])
                self.truncate(item.layer, item.sources[0])

    def drop(
        self, kind: str, reason: DropReason, first: str, last: str | None = None, count: int = 1
    ) -> None:
        """Record inputs left out of the pack (a run ``first``..``last`` of ``count``)."""
        self.dropped.append(
            DroppedItem.model_construct(
                kind=kind, reason=reason, first=first, last=last or first, count=count
            )
        )

    def truncate(self, layer: str, source: str) -> None:
        """Note that ``layer`` lost an input to the budget (for `LayerTruncated`)."""
        self.truncated.setdefault(layer, []).append(source)
