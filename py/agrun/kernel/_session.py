"""One session kept in step with its `Storage`: resumed, committed turn by turn, never lost.

The rule (docs/storage.md): one turn is one atomic commit. A successful turn commits the
person's message and the reply, the run's events, the memory entries it appended and
``lastRun``; a failed or cancelled turn commits the person's message alone (marked with how
the run ended), its events and ``lastRun``, so the session's memory stays as it was. A
memory close that runs after the answer (a model extraction) commits on its own.

A storage fault never costs a turn: the run's result is already in memory when the commit
is tried, and a commit that fails waits in `pending` and goes first at the next turn (the
store ignores a ``turnId`` it already has, so a retry never duplicates). Before each turn,
a session another writer (a second tab) has extended is taken up again from storage.
"""

from __future__ import annotations

from .._base import StorageError
from ..content import ContentStore, read_entries
from ..memory import Continuity, History, MemoryEntry, MemoryLog, TurnClose
from ..ports import Storage
from ..storage import ImportRejected, TurnCommit, parse_session
from ._bus import EventBus
from ._events import MAX_REPORTED, SessionDamaged
from ._models import LastRun, RuntimeState
from ._result import RunResult
from ._resume import read_session

__all__ = ["SessionKeeper"]


class SessionKeeper:
    """The runtime's link to one stored session."""

    def __init__(
        self,
        *,
        storage: Storage,
        session_id: str,
        memory: MemoryLog,
        history: History,
        continuity: Continuity,
        bus: EventBus,
    ) -> None:
        self.storage = storage
        self.session_id = session_id
        self._memory = memory
        self._continuity = continuity
        self._bus = bus
        # The session's content store, when the runtime keeps one (resumed and committed here).
        self.content: ContentStore | None = None
        # What this runtime last saw stored: (turn count, last commit time). Another writer
        # (a second tab, a store that switched to or back from its fallback) changes it.
        self._seen: tuple[int, int | None] | None = (0, None)
        self._history = history
        self._pending: list[TurnCommit] = []
        self.last_error: str | None = None
        # What the last resume could not read (left on disk; `storage_status` reports it).
        self.damage: tuple[str, ...] = ()

    @property
    def pending(self) -> int:
        """Turns kept in memory whose commit has not succeeded yet."""
        return len(self._pending)

    async def sync(self) -> RuntimeState | None:
        """Take up what storage holds if it is ahead of this runtime; at turn start.

        Returns:
            The stored runtime state to adopt, or None when nothing changed.
        """
        await self._flush()
        if self._pending:
            return None  # storage is behind us: ours is the truth until the flush succeeds
        try:
            # The global-memory switch lives in one place (`GlobalMemory.enabled`): off, the
            # rows are neither read nor written, and stay for when it is on again.
            if self._continuity.global_memory.enabled:
                self._continuity.global_memory.load(await self.storage.read_global_memory())
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
        readable = read_session(snapshot)
        self._memory.resume(readable.memory)
        self._history.resume(readable.history)
        self._continuity.session_memory = readable.session_memory
        self._continuity.inquiry = readable.inquiry
        damage = readable.damage
        if self.content is not None:
            damage = (*damage, *self.content.resume(snapshot.content_entries))
        self._bus.resume_after(readable.last_event_seq)
        self._seen = (snapshot.turn_count, snapshot.last_committed_at_ms)
        self.damage = damage
        if damage:
            self._bus.emit(
                SessionDamaged,
                "",
                session_id=self.session_id,
                problems=damage[:MAX_REPORTED],
                count=len(damage),
            )
        return RuntimeState(last_run=readable.last_run)

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

    async def record(
        self,
        result: RunResult,
        appended: tuple[MemoryEntry, ...],
        last_run: LastRun | None,
        now_ms: int,
        close: TurnClose | None = None,
    ) -> None:
        """Commit the turn ``result`` ended, as one unit: its messages (already in the
        history), memory entries, session memory, inquiry and promotions if it succeeded
        (``close``), its events and ``lastRun`` always."""
        events = [*result.events, *(close.events if close else ())]
        written, evicted = self.content.take_changes() if self.content else ([], [])
        session_memory = None if close is None else close.session_memory
        inquiry = None if close is None else close.inquiry
        self._pending.append(
            TurnCommit(
                session_id=self.session_id,
                turn_id=result.state.run_id,
                committed_at_ms=now_ms,
                messages=[m.to_wire() for m in result.messages],
                events=[event.to_wire() for event in events],
                memory_entries=[entry.to_wire() for entry in appended],
                session_memory=None if session_memory is None else session_memory.to_wire(),
                inquiry=None if inquiry is None else inquiry.to_wire(),
                global_memory=[entry.to_wire() for entry in close.promotions] if close else [],
                content_entries=[entry.to_wire() for entry in written],
                evicted_content_refs=evicted,
                last_run=None if last_run is None else last_run.to_wire(),
            )
        )
        await self._flush()

    async def record_close(
        self, run_id: str, close: TurnClose, last_run: LastRun | None, now_ms: int
    ) -> None:
        """Commit what a turn's memory close made after its answer was committed (the
        extraction ran then, off the answer's path): the session memory, the inquiry, the
        promotions, their events and the ``lastRun`` that counts the extraction's calls.
        Its own atomic commit, under the turn's id with ``:memory`` added."""
        self._pending.append(
            TurnCommit(
                session_id=self.session_id,
                turn_id=f"{run_id}:memory",
                committed_at_ms=now_ms,
                events=[event.to_wire() for event in close.events],
                session_memory=None
                if close.session_memory is None
                else close.session_memory.to_wire(),
                inquiry=None if close.inquiry is None else close.inquiry.to_wire(),
                global_memory=[entry.to_wire() for entry in close.promotions],
                last_run=None if last_run is None else last_run.to_wire(),
            )
        )
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
