"""Global memory: durable facts that follow the person across sessions, behind the
sensitive-content filter (spec 000, "Disabling Cross-Session Memory", "Sensitive Content
Filter", "Domain-neutral Memory Policy").

What may be promoted is deliberately narrow, so any host can defend it: facts about the
person and their stated preferences, above a confidence threshold (0.8 by default;
"remember:" and explicit self-descriptions reach it, a passing mention does not), never a
decision (those belong to one session's work). Every promotion, automatic or through
`promote`, passes the `SensitiveContentFilter` and the host's ``sensitivity_filter`` hook;
a refused entry is never written. Forgetting appends a tombstone (the rows are
append-only). Switched off, nothing is read, extracted for it or written; the rows stay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, ValidationError

from .._base import Model
from ..sensitive import SensitiveContentFilter
from ._extraction import Extraction

__all__ = ["GlobalEntry", "GlobalKind", "GlobalMemory", "Promotion"]

GlobalKind = Literal["fact", "preference", "note", "forget"]
THRESHOLD = 0.8
# How sure each way of learning an item is (the rule extractor's cues are explicit).
CONFIDENCE = {"remember": 0.95, "rules": 0.85, "model": 0.8}


class GlobalEntry(Model):
    """One row of global memory."""

    id: str
    kind: GlobalKind = "note"
    text: str
    confidence: float = Field(1.0, ge=0, le=1)
    session_id: str | None = None
    """The session it was learned in (None when a host promoted it)."""
    created_at: int = 0
    forgets: str | None = None
    """For a tombstone: the id of the entry it forgets."""
    data: dict[str, Any] = Field(default_factory=dict)
    """What else the host gave with the entry (screened like the text: a key named like a
    credential refuses the entry)."""


class Promotion(Model):
    """What a promotion wrote, and what it refused and why."""

    promoted: tuple[GlobalEntry, ...] = ()
    refused: tuple[str, ...] = ()


class GlobalMemory:
    """Global memory as one runtime sees it: read at turn start, promoted at turn end."""

    def __init__(
        self,
        *,
        enabled: bool,
        sensitivity: SensitiveContentFilter,
        threshold: float = THRESHOLD,
    ) -> None:
        self.enabled = enabled
        self._sensitivity = sensitivity
        self._threshold = threshold
        self._rows: list[GlobalEntry] = []
        self.unreadable = 0

    def load(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Take up the stored rows (those that do not read are skipped and counted)."""
        self._rows, self.unreadable = [], 0
        for row in rows:
            try:
                self._rows.append(GlobalEntry.model_validate(row))
            except ValidationError:
                self.unreadable += 1

    def entries(self) -> tuple[GlobalEntry, ...]:
        """The live entries: neither forgotten nor tombstones."""
        if not self.enabled:
            return ()
        forgotten = {row.forgets for row in self._rows if row.kind == "forget"}
        return tuple(r for r in self._rows if r.kind != "forget" and r.id not in forgotten)

    def candidates(
        self, extraction: Extraction, *, how: Literal["remember", "rules", "model"]
    ) -> list[tuple[GlobalKind, str, float]]:
        """The items of a turn's extraction worth promoting: (kind, text, confidence)."""
        confidence = CONFIDENCE[how]
        if not self.enabled or confidence < self._threshold:
            return []
        known = {row.text for row in self.entries()}
        found: list[tuple[GlobalKind, str, float]] = []
        for kind, texts in (("fact", extraction.facts), ("preference", extraction.preferences)):
            found.extend((kind, t, confidence) for t in texts if t not in known)  # type: ignore[misc]
        return found

    def screen(self, entries: Sequence[GlobalEntry]) -> Promotion:
        """Keep what passes the filter (and the host's hook); name what does not."""
        promoted, refused = [], []
        for entry in entries:
            verdict = self._sensitivity.check(entry.to_wire())
            if verdict.allowed:
                promoted.append(entry)
            else:
                refused.append(f"{entry.id}: " + "; ".join(verdict.reasons))
        return Promotion(promoted=tuple(promoted), refused=tuple(refused))

    def accept(self, entries: Iterable[GlobalEntry]) -> None:
        """Hold entries that were written (so the next turn sees them without a read)."""
        self._rows.extend(entries)
