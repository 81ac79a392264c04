"""A cancel token: how a caller stops a run and still gets its `RunResult`.

A plain asyncio cancellation of ``run()`` stops the run too, but then there is no result
to return: the run is closed as cancelled and the ``CancelledError`` goes on up. A token
is for callers who want the result, such as the JavaScript bridge, which turns an
``AbortSignal`` into ``token.cancel()``.
"""

from __future__ import annotations

import asyncio

__all__ = ["CancelToken"]


class CancelToken:
    """Cancels the run it is passed to (``runtime.run(input, signal=token)``).

    Once cancelled it stays cancelled, like an ``AbortSignal``: a run given a cancelled
    token ends ``cancelled`` at its first step.
    """

    __slots__ = ("_reason", "_task")

    def __init__(self) -> None:
        self._reason: str | None = None
        self._task: asyncio.Future[object] | None = None

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
        if self._task is not None and not self._task.done():
            self._task.cancel(self._reason)

    def _attach(self, task: asyncio.Future[object]) -> None:
        # The runtime attaches the task running a skill, so cancel() can interrupt it.
        self._task = task

    def _detach(self) -> None:
        self._task = None
