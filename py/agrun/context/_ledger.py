"""A build's budget ledger: what has been admitted, used, dropped and recorded so far.

The one mutable thing a build has. The pipeline (``_build``) owns it and hands it to each
stage explicitly; a stage offers candidates and the ledger admits them while they fit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ._item import Item
from ._pack import CompressionRecord, DroppedItem, DropReason, RecallHit

__all__ = ["Ledger", "RecallNote"]


@dataclass
class RecallNote:
    """What the recall stage searched and found, for the pack's metrics."""

    searched: int = 0
    matched: int = 0
    hits: list[tuple[Item, RecallHit]] = field(default_factory=list)
    """Each recalled item with its figures (a later stage may take an item back out)."""
    passed_over: list[tuple[int, RecallHit]] = field(default_factory=list)
    """The best candidates left out, by position, best first (some may reach the window
    later: the pack reports those below ``window_from``)."""
    window_from: int = 0
    """Where the message window starts once every stage has run."""


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
    recall: RecallNote = field(default_factory=RecallNote)
    removed: set[int] = field(default_factory=set)
    """Ids of admitted items taken back out (`remove`)."""

    def fits(self, cost: int) -> bool:
        """Whether ``cost`` more tokens stay within the budget."""
        return self.used + cost <= self.available

    def take(self, items: Iterable[Item]) -> None:
        """Admit ``items`` unconditionally (protected items, or ones already checked)."""
        for item in items:
            self.used += item.tokens
            self.admitted.append(item)

    def remove(self, items: Iterable[Item]) -> None:
        """Take admitted ``items`` back out (a recalled turn the window then holds whole).

        They leave ``admitted`` when the pack is assembled (`kept`), so taking out many
        costs no more than taking them in."""
        for item in items:
            if id(item) not in self.removed:
                self.removed.add(id(item))
                self.used -= item.tokens

    def kept(self) -> list[Item]:
        """What is admitted and was not taken back out."""
        if not self.removed:
            return self.admitted
        return [item for item in self.admitted if id(item) not in self.removed]

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
