"""The fields every runtime event has, whichever part of agrun makes it.

An event is built, fully typed, by the part that makes it (``SessionMemoryKept(run_id=...,
reason=...)``); the runtime's event bus then stamps it with its place in the stream and the
clock's time. Until then ``seq`` and ``at`` are 0.
"""

from __future__ import annotations

from ._model import Model

__all__ = ["Event"]


class Event(Model):
    """Fields every event has."""

    run_id: str
    """The run the event belongs to."""
    seq: int = 0
    """Position in the runtime's event stream, from 1 (0 until the bus stamps it)."""
    at: int = 0
    """Clock milliseconds when it happened (0 until the bus stamps it)."""
