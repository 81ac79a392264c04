"""The lock a runtime holds for each operation on its session: its own, and the store's.

The runtime's `asyncio.Lock` serializes its own operations. A store shared by processes
(`SessionLocks`, e.g. PostgreSQL) also locks the session for them, so another process's
turn on it waits for this one to end and then resumes from what it committed. Taking the
store's lock is a storage call like any other: if it fails, the turn goes on with the
runtime's own lock only (what the page does without Web Locks), and `error` says why until
the lock is taken again (`storage_status` reports it).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType

from .._base import StorageError

__all__ = ["TurnLock"]


class TurnLock:
    """``acquire`` / ``release`` (both awaited), or ``async with``."""

    def __init__(self, hold: Callable[[], AbstractAsyncContextManager[None]] | None = None) -> None:
        self._local = asyncio.Lock()
        self._hold = hold
        self._held: AbstractAsyncContextManager[None] | None = None
        # Why the store's lock could not be taken the last time it was asked for, if so.
        self.error: str | None = None

    async def acquire(self) -> None:
        await self._local.acquire()
        if self._hold is None:
            return
        held = self._hold()
        try:
            await held.__aenter__()
        except StorageError as error:
            self.error = f"{type(error).__name__}: {error} (the turn ran without the lock)"
            return
        except BaseException:
            self._local.release()
            raise
        self._held = held
        self.error = None

    async def release(self) -> None:
        held, self._held = self._held, None
        try:
            if held is not None:
                # The server lets go of the lock anyway when the connection is lost.
                with contextlib.suppress(StorageError):
                    await held.__aexit__(None, None, None)
        finally:
            self._local.release()

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.release()
