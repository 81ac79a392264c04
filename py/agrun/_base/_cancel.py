"""A cancel token: how a caller stops a run and still gets its `RunResult`.

A plain asyncio cancellation of ``run()`` stops the run too, but then there is no result
to return: the run is closed as cancelled and the ``CancelledError`` goes on up. A token
is for callers who want the result, such as the JavaScript bridge, which turns an
``AbortSignal`` into ``token.cancel()``.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["CancelToken"]


class CancelToken:
    """Cancels the run it is passed to (``runtime.run(input, signal=token)``).

    Once cancelled it stays cancelled, like an ``AbortSignal``: a run given a cancelled
    token ends ``cancelled`` at its first step.
    """

    __slots__ = ("_reason", "_tasks")

    def __init__(self) -> None:
        self._reason: str | None = None
        self._tasks: set[asyncio.Future[Any]] = set()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel` has been called."""
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        """The reason given to `cancel`, or None."""
        return self._reason

    def cancel(self, reason: str = "cancelled by the caller") -> None:
        """Cancel the run: its skill is interrupted and the run ends ``cancelled``.

        Calling it again, or after the run is over, does nothing.
        """
        if self._reason is not None:
            return
        self._reason = str(reason)
        for task in tuple(self._tasks):
            if not task.done():
                task.cancel(self._reason)

    def _attach(self, task: asyncio.Future[Any]) -> None:
        # The runtime attaches each task working for the run (a skill, parallel tool calls,
        # a model call), so cancel() interrupts all of them.
        self._tasks.add(task)

    def _detach(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
