"""The memory's events: what the memory log kept or dropped, and what closing a turn did to
the session memory and global memory. Built here, stamped by the runtime's event bus."""

from __future__ import annotations

from typing import Literal, Protocol, TypeVar

from .._base import Event
from ._log import MemoryEntry, MemoryEntryRequest

__all__ = [
    "Emit",
    "GlobalMemoryPromoted",
    "MemoryAppended",
    "MemoryEvent",
    "MemoryRequestDropped",
    "SessionMemoryKept",
    "SessionMemoryRebuilt",
]


class MemoryAppended(Event):
    """An entry was appended to memory."""

    kind: Literal["MemoryAppended"] = "MemoryAppended"
    entry: MemoryEntry


class MemoryRequestDropped(Event):
    """A requested memory entry was not appended, because the run did not succeed."""

    kind: Literal["MemoryRequestDropped"] = "MemoryRequestDropped"
    request: MemoryEntryRequest
    reason: str


class SessionMemoryRebuilt(Event):
    """A successful turn rebuilt the session memory."""

    kind: Literal["SessionMemoryRebuilt"] = "SessionMemoryRebuilt"
    revision: int
    source: Literal["model", "rules", "remember"]
    """What extracted the turn's evidence: the model, the rule-based extractor, or a
    "remember:" command."""
    facts: int
    preferences: int
    decisions: int


class SessionMemoryKept(Event):
    """The session memory was kept as it was (or items were held back), and why: the
    extraction call failed or its reply was refused twice, or the sensitive-content filter
    refused what was extracted."""

    kind: Literal["SessionMemoryKept"] = "SessionMemoryKept"
    reason: str


class GlobalMemoryPromoted(Event):
    """Entries were promoted to global memory (committed with the turn), and some perhaps
    refused by the sensitive-content filter or the host's hook."""

    kind: Literal["GlobalMemoryPromoted"] = "GlobalMemoryPromoted"
    ids: tuple[str, ...]
    refused: tuple[str, ...] = ()


MemoryEvent = SessionMemoryRebuilt | SessionMemoryKept | GlobalMemoryPromoted
"""What closing a turn emits."""
M = TypeVar("M", bound=MemoryEvent)


class Emit(Protocol):
    """What stamps an event with its place in the runtime's stream and its time, hands it
    to the subscribers, and gives it back stamped (the runtime's event bus)."""

    def __call__(self, event: M, /) -> M: ...
