"""Delivery of the runtime's events: numbering, timestamps and subscribers.

Subscribers are plain synchronous callables, called in subscription order as each event
happens. A subscriber that raises is logged (logger ``agrun``) and skipped: an observer
must not be able to break, or half-apply, the run it watches.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

from .._base import ConfigError, scrubbed
from ..context import ContextEvent
from ..ports import Clock
from ._events import RuntimeEvent

__all__ = ["EventBus", "Subscriber"]

Subscriber = Callable[[RuntimeEvent | ContextEvent], object]

_log = logging.getLogger("agrun")
E = TypeVar("E", bound=RuntimeEvent)


class EventBus:
    """Numbers events from 1, stamps them from the clock, and hands them to subscribers."""

    def __init__(self, clock: Clock, scrub: Callable[[str], str] | None = None) -> None:
        self._clock = clock
        # Masks secrets in every text an event carries: events are stored and exported.
        self._scrub = scrub
        self._seq = 0
        self._subscribers: list[Subscriber] = []

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(event)`` for every event from now on.

        Returns:
            A function that unsubscribes (calling it twice is harmless).

        Raises:
            ConfigError: ``callback`` is not callable.
        """
        if not callable(callback):
            raise ConfigError(f"subscribe() takes a callable, got {type(callback).__name__}")
        entry: list[Subscriber] = [callback]

        def unsubscribe() -> None:
            if entry:
                self._subscribers.remove(entry.pop())

        self._subscribers.append(callback)
        return unsubscribe

    def resume_after(self, seq: int) -> None:
        """Number the next event after ``seq`` (a resumed session's last stored event)."""
        self._seq = max(self._seq, seq)

    def now(self) -> int:
        """A clock reading, for events that must carry a time they also report."""
        return self._clock.now_ms()

    def publish(self, event: RuntimeEvent | ContextEvent) -> None:
        """Deliver an event as it is: one the bus stamped, or one a context build made
        (numbered by the build itself)."""
        for callback in tuple(self._subscribers):
            try:
                callback(event)
            except Exception:
                _log.exception("agrun event subscriber %r failed on %s", callback, event.kind)

    def emit(self, event: E, *, at: int | None = None) -> E:
        """Number ``event`` next, stamp it with the clock (or ``at``), mask secrets in its
        texts, and deliver it; return it as stamped."""
        self._seq += 1
        stamp = self._clock.now_ms() if at is None else at
        update: dict[str, Any] = {"seq": self._seq, "at": stamp}
        scrub = self._scrub
        if scrub is not None:
            for name in type(event).model_fields:
                if name not in _UNSCRUBBED:
                    value = getattr(event, name)
                    masked = scrubbed(value, scrub)
                    if masked is not value:
                        update[name] = masked
        # A copy of the same type with the stamps: what the caller built stays as built.
        stamped = cast(E, event.model_copy(update=update))
        self.publish(stamped)
        return stamped


# An event's own bookkeeping: never a text a secret could be in.
_UNSCRUBBED = frozenset({"kind", "run_id", "seq", "at"})
