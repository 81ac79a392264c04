"""A candidate entry: what a stage offers a pack before the ledger admits it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._base import trusted
from ._memo import Kept
from ._pack import ContextEntry, frozen_calls

__all__ = ["Item", "trusted_entry"]


@dataclass
class Item:
    """A candidate entry before assembly: cheap to make, turned into a model if admitted."""

    layer: str
    kind: str
    content: str
    sources: tuple[str, ...]
    order: tuple[int, ...]
    role: str | None = None
    name: str | None = None
    tool_calls: tuple[Any, ...] = ()
    tool_call_id: str | None = None
    compressed: bool = False
    score: float | None = None
    tokens: int = 0
    kept: Kept | None = None
    """Where a message's entry is kept for later builds (`BuildMemo`), if it is."""

    def entry(self) -> ContextEntry:
        """The admitted item as a `ContextEntry` (its values are valid by construction);
        a kept message's, made once."""
        kept = self.kept
        if kept is None or kept.content is not self.content or kept.tokens != self.tokens:
            return self._entry()
        if kept.entry is None:
            kept.entry = self._entry()
        return kept.entry

    def _entry(self) -> ContextEntry:
        return trusted_entry(
            {
                "id": f"{self.kind}:{self.sources[0]}",
                "layer": self.layer,
                "kind": self.kind,
                "content": self.content,
                "sources": self.sources,
                "tokens": self.tokens,
                "role": self.role,
                "name": self.name,
                # The pack gets its own read-only copies of JSON arguments: the request's
                # may be changed by their owner after the build.
                "tool_calls": frozen_calls(self.tool_calls),
                "tool_call_id": self.tool_call_id,
                "compressed": self.compressed,
                "score": self.score,
            }
        )


def trusted_entry(values: dict[str, Any]) -> ContextEntry:
    """A `ContextEntry` from a complete dict of valid values, without validation (`trusted`).

    What ``model_construct`` does, minus its per-field default handling: a pack holds
    hundreds of entries and that handling was a third of a cold build. Every field must
    be given; a test checks the result equals ``model_construct``'s.
    """
    return trusted(ContextEntry, values)
