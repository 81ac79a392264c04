"""The ports through which the pure core reaches the outside world.

The core never reads ambient time, ids or randomness: it asks a `Clock` and an `Ids`
source. Adapters (``agrun.adapters``) give real ones; ``agrun.testing`` gives fixed ones,
so the same inputs replay byte for byte.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """Wall-clock time for timestamps and durations."""

    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        ...


@runtime_checkable
class Ids(Protocol):
    """A source of unique identifiers."""

    def new_id(self, prefix: str) -> str:
        """A new id, unique within this source, starting with ``prefix``."""
        ...
