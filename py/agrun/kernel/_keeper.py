"""A session kept in step with its `Storage`: resumed, committed turn by turn, never lost.

The rule (docs/storage.md): one turn is one atomic commit. A successful turn commits the
person's message and the reply, the run's events, the memory entries it appended and
``lastRun``; a failed or cancelled turn commits the person's message alone (marked with how
the run ended), its events and ``lastRun``, so the session's memory stays as it was. A
memory close that runs after the answer (a model extraction) commits on its own.

A storage fault never costs a turn: the run's result is already in memory when the commit
is tried, and a commit that fails waits in `pending` and goes first at the next turn (the
store ignores a ``turnId`` it already has, so a retry never duplicates). Before each turn,
a session another writer (a second tab) has extended is taken up again from storage.

`TurnLock`, the lock a runtime holds for each operation on its session: its own, and the
store's. The runtime's `asyncio.Lock` serializes its own operations. A store shared by processes
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
from ..content import read_entries
from ..memory import GlobalMemory
from ..ports import Storage, TurnStartReads
from ..storage import ImportRejected, TurnCommit, parse_session
from ._session import Resumed, Session, read_session

__all__ = ["SessionKeeper", "TurnLock"]


class SessionKeeper:
    """Keeps one `Session` in step with its `Storage`: resumes it, carries its commits."""

    def __init__(self, *, storage: Storage, session: Session, global_memory: GlobalMemory) -> None:
        self.storage = storage
        self.session_id = session.session_id
        self._session = session
        self._global_memory = global_memory
        # What this runtime last saw stored: (turn count, last commit time). Another writer
        # (a second tab, a store that switched to or back from its fallback) changes it.
        self._seen: tuple[int, int | None] | None = (0, None)
        self._pending: list[TurnCommit] = []
        # Known once: a turn start asks it of every turn.
        self._turn_start = storage if isinstance(storage, TurnStartReads) else None
        self.last_error: str | None = None
        # What the last resume could not read (left on disk; `storage_status` reports it).
        self.damage: tuple[str, ...] = ()

    @property
    def pending(self) -> int:
        """Turns kept in memory whose commit has not succeeded yet."""
        return len(self._pending)

    async def sync(self) -> Resumed | None:
        """Take up what storage holds into the session if it is ahead of it; at turn start.

        Returns:
            What the resume gave back (the stored ``lastRun``, the last event's number,
            what could not be read), or None when nothing changed.
        """
        await self._flush()
        if self._pending:
            return None  # storage is behind us: ours is the truth until the flush succeeds
        try:
            # The global-memory switch lives in one place (`GlobalMemory.enabled`): off, the
            # rows are neither read nor written, and stay for when it is on again. Both
            # reads are asked for at once: a store that can (IndexedDB: two readonly
            # transactions) answers them side by side, on the path to every turn.
            if self._turn_start is not None and self._global_memory.enabled:
                rows, info = await self._turn_start.read_turn_start(self.session_id)
                self._global_memory.load(rows)
            elif self._global_memory.enabled:
                rows, info = await asyncio.gather(
                    self.storage.read_global_memory(), self.storage.session_info(self.session_id)
                )
                self._global_memory.load(rows)
            else:
                info = await self.storage.session_info(self.session_id)
            stored = (0, None) if info is None else (info.turn_count, info.last_committed_at_ms)
            if stored == self._seen:
                return None
            # Only the last turn's events: a resume needs the next event number, not the log.
            snapshot = await self.storage.load_session(self.session_id, all_events=False)
        except StorageError as error:
            # Reading failed: go on with what this runtime holds; the turn is not lost.
            self.last_error = f"{type(error).__name__}: {error}"
            return None
        if snapshot is None:
            return None
        resumed = self._session.resume(snapshot)
        self._seen = (snapshot.turn_count, snapshot.last_committed_at_ms)
        self.damage = resumed.damage
        return resumed

    async def export(self) -> str:
        """The session as an export file (JSON text; docs/storage.md has the format)."""
        await self._flush()
        return await self.storage.export_session(self.session_id)

    async def import_(self, json_text: str | bytes, *, replace: bool) -> None:
        """Store an exported session under this session's id, then take it up.

        The whole file is read with the models the runtime resumes with (messages, memory
        entries, lastRun, content entries and their digests) before anything is written,
        so what is stored can be read back.

        Raises:
            ImportRejected: the file is corrupt, hostile, for another session, or holds a
                record the runtime could not read; nothing changed.
        """
        snapshot = parse_session(json_text)
        if snapshot.session_id != self.session_id:
            raise ImportRejected(
                f"the file holds session {snapshot.session_id!r}, not {self.session_id!r}: "
                "create a runtime with that session_id to import it"
            )
        # A content body changed since it was stored is refused here too (its digest).
        problems = (*read_session(snapshot).damage, *read_entries(snapshot.content_entries)[1])
        if problems:
            listed = "; ".join(problems[:3])
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise ImportRejected(f"export file holds records agrun cannot read: {listed}{more}")
        await self.storage.import_session(json_text, replace=replace)
        self._seen = None  # whatever is stored now differs from what is held: take it up

    def forget(self) -> None:
        """The session was cleared or deleted in storage: what was held (turns waiting for
        their commit too) is dropped with it, and the next turn starts it afresh."""
        self._session.reset()
        self._pending.clear()
        self._seen = (0, None)
        self.damage = ()
        self.last_error = None

    async def commit(self, commit: TurnCommit) -> None:
        """Write a commit the session made; one that fails waits and goes first next time."""
        self._pending.append(commit)
        await self._flush()

    async def _flush(self) -> None:
        while self._pending:
            commit = self._pending[0]
            try:
                seq = await self.storage.commit_turn(commit)
            except StorageError as error:
                self.last_error = f"{type(error).__name__}: {error}"
                return
            self._pending.pop(0)
            if self._seen is not None:
                self._seen = (seq, commit.committed_at_ms)
            self.last_error = None


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
