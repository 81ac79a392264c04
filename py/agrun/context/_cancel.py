"""Cancelling a build (spec 001 section 14): the caller's ``cancelled`` callable, asked often.

A build is synchronous and CPU-bound, so nothing can interrupt it from outside; it asks
instead. The pipeline asks between its stages and, every `STRIDE` steps, inside the
loops whose length follows the input (the transcript walk, each kind of input), so a
build over an extreme history stops soon after it is asked to, while a callable that is
expensive to call (a JavaScript ``AbortSignal`` read through Pyodide) is not called for
every message.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["STRIDE", "BuildCancelled", "Checkpoint"]

STRIDE = 32
"""Loop steps between two questions to the callable."""


class BuildCancelled(Exception):
    """Internal signal: the callable said yes. `build_context` turns it into the typed,
    public `ContextBuildCancelled` after emitting its event."""


class Checkpoint:
    """Asks ``cancelled()`` at each `stage` and at every `STRIDE`-th `step`; raises
    `BuildCancelled` when it answers true. Without a callable it never asks."""

    __slots__ = ("_cancelled", "_steps")

    def __init__(self, cancelled: Callable[[], bool] | None) -> None:
        self._cancelled = cancelled
        self._steps = 0

    def stage(self) -> None:
        """Between stages: always ask."""
        if self._cancelled is not None and self._cancelled():
            raise BuildCancelled

    def step(self) -> None:
        """One step of a long loop: ask every `STRIDE` steps."""
        if self._cancelled is None:
            return
        self._steps += 1
        if self._steps >= STRIDE:
            self._steps = 0
            if self._cancelled():
                raise BuildCancelled
