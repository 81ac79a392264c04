"""One session's state, with one owner: the `Session` (spec 000's history, memory log,
session memory and inquiry, and spec 002's content store).

A session changes in two ways only: it is resumed from what storage holds (`resume`), and a
turn closes (`take_turn`, and `close_memory` when the turn's memory closes after its
answer). What a turn changed leaves as `TurnCommit`s, the one unit storage writes
(`turn_commit`, and `close_memory`'s);
the `SessionKeeper` carries them there. Nothing else writes into the session's parts.

What the runtime resumes with is exactly what an import is checked against (`read_session`):
one reader, so a file the runtime accepts is a file it can read back, and a damaged session
on disk (an older writer's bug, a hand edit, a partial write) still opens: each record that
does not read is left out and named, never deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..content import ContentStore
from ..context import Message
from ..memory import (
    History,
    InquiryContext,
    MemoryEntry,
    MemoryLog,
    SessionMemory,
    TurnClose,
)
from ..storage import SessionSnapshot, TurnCommit, read_snapshot
from ..trace import TraceStore, is_trace
from ._models import LastRun
from ._result import RunResult

__all__ = ["ReadSession", "Resumed", "Session", "read_session"]


class Session:
    """A session's state: its history, memory log, session memory, inquiry and content."""

    def __init__(
        self,
        session_id: str,
        *,
        content: ContentStore | None = None,
        traces: TraceStore | None = None,
        stored: bool = False,
    ) -> None:
        self.session_id = session_id
        self.history = History()
        self.memory = MemoryLog()
        self.content = content
        # Run traces travel as content records of their own (`_traces.py`).
        self.traces = traces
        # Only a stored session makes commits: without storage a turn is taken in, no more.
        self._stored = stored
        self._session_memory: SessionMemory | None = None
        self._inquiry: InquiryContext | None = None
        self._turn_start = 0

    @property
    def session_memory(self) -> SessionMemory | None:
        """Facts, preferences, decisions, summary and recent turns."""
        return self._session_memory

    @property
    def inquiry(self) -> InquiryContext | None:
        """Goal, topic, query, sources and clarification state."""
        return self._inquiry

    def resume(self, snapshot: SessionSnapshot) -> Resumed:
        """Take up the stored session ``snapshot`` in place of what is held.

        Returns:
            The stored ``lastRun``, the last stored event's number and what could not be
            read (left out here, left on disk).
        """
        readable = read_session(snapshot)
        self.memory.resume(readable.memory)
        self.history.resume(readable.history)
        self._session_memory = readable.session_memory
        self._inquiry = readable.inquiry
        damage = readable.damage
        rows = snapshot.content_entries
        if self.content is not None:
            replies = [row for row in rows if not is_trace(str(row.get("ref")))]
            damage = (*damage, *self.content.resume(replies))
        if self.traces is not None:
            traces = [row for row in rows if is_trace(str(row.get("ref")))]
            damage = (*damage, *self.traces.resume(traces))
        return Resumed(
            last_run=readable.last_run, last_event_seq=readable.last_event_seq, damage=damage
        )

    def reset(self) -> None:
        """Hold nothing (the session was cleared or deleted): no history, memory, session
        memory, inquiry, content or traces, and no change left to commit."""
        self.resume(read_snapshot({}, self.session_id))
        for store in (self.content, self.traces):
            if store is not None:
                store.take_changes()

    def open_turn(self) -> None:
        """Mark where a turn starts: the entries it appends are those after the mark."""
        self._turn_start = len(self.memory)

    def take_turn(self, result: RunResult, close: TurnClose | None = None) -> None:
        """Take in the turn ``result`` ended: its messages, and if it succeeded its memory
        close (session memory, inquiry). The memory entries it appended are in the log."""
        self.history.extend(result.messages)
        if close is not None:
            self._take(close)

    def turn_commit(
        self,
        result: RunResult,
        last_run: LastRun | None,
        now_ms: int,
        close: TurnClose | None = None,
    ) -> TurnCommit | None:
        """The turn `take_turn` took in, as one commit; made after the answer, before the
        next turn opens (the memory entries it appended are those since `open_turn`).

        Returns:
            Its messages, memory entries, session memory, inquiry and promotions if it
            succeeded, its events, content changes and ``lastRun``; None when the session
            is not stored.
        """
        if not self._stored:
            return None
        appended = self.memory.read_all()[self._turn_start :]
        events = [*result.events, *(close.events if close else ())]
        written, evicted = self.content.take_changes() if self.content else ([], [])
        if self.traces is not None:
            traced, dropped = self.traces.take_changes()
            written, evicted = [*written, *traced], [*evicted, *dropped]
        return TurnCommit(
            session_id=self.session_id,
            turn_id=result.state.run_id,
            committed_at_ms=now_ms,
            messages=[m.to_wire() for m in result.messages],
            events=[event.to_wire() for event in events],
            memory_entries=[entry.to_wire() for entry in appended],
            session_memory=_wire(None if close is None else close.session_memory),
            inquiry=_wire(None if close is None else close.inquiry),
            global_memory=[entry.to_wire() for entry in close.promotions] if close else [],
            content_entries=[entry.to_wire() for entry in written],
            evicted_content_refs=evicted,
            last_run=_wire(last_run),
        )

    def close_memory(
        self, run_id: str, close: TurnClose, last_run: LastRun | None, now_ms: int
    ) -> TurnCommit | None:
        """Take in what a turn's memory close made after its answer was taken in (the
        extraction ran then, off the answer's path).

        Returns:
            Its own commit, under the turn's id with ``:memory`` added: the session memory,
            the inquiry, the promotions, their events, the run's trace with the extraction's
            calls and the ``lastRun`` that counts them; None when the session is not stored.
        """
        self._take(close)
        if not self._stored:
            return None
        # The run's trace, when the extraction's calls were added to it.
        written, evicted = self._trace_changes()
        return TurnCommit(
            session_id=self.session_id,
            turn_id=f"{run_id}:memory",
            committed_at_ms=now_ms,
            events=[event.to_wire() for event in close.events],
            session_memory=_wire(close.session_memory),
            inquiry=_wire(close.inquiry),
            global_memory=[entry.to_wire() for entry in close.promotions],
            content_entries=written,
            evicted_content_refs=evicted,
            last_run=_wire(last_run),
        )

    def trace_commit(self, run_id: str, now_ms: int) -> TurnCommit | None:
        """The run's trace, kept after its answer, in a commit of its own (its turn was
        committed before the answer; a memory close, when one follows, carries the trace
        in its commit instead).

        Returns:
            A commit under the turn's id with ``:trace`` added, holding the trace store's
            changes; None when the session is not stored or nothing changed.
        """
        if not self._stored:
            return None
        written, evicted = self._trace_changes()
        if not written and not evicted:
            return None
        return TurnCommit(
            session_id=self.session_id,
            turn_id=f"{run_id}:trace",
            committed_at_ms=now_ms,
            content_entries=written,
            evicted_content_refs=evicted,
        )

    def _trace_changes(self) -> tuple[list[dict[str, Any]], list[str]]:
        """What the trace store wrote (on the wire) and evicted since it was last asked."""
        written, evicted = self.traces.take_changes() if self.traces else ([], [])
        return [entry.to_wire() for entry in written], evicted

    def _take(self, close: TurnClose) -> None:
        self._session_memory, self._inquiry = close.session_memory, close.inquiry


def _wire(model: SessionMemory | InquiryContext | LastRun | None) -> dict[str, Any] | None:
    return None if model is None else model.to_wire()


@dataclass(frozen=True)
class Resumed:
    """What resuming a session gives back beside the state it took up."""

    last_run: LastRun | None
    last_event_seq: int
    """The last stored event's number: the next event is numbered after it."""
    damage: tuple[str, ...]
    """What could not be read, one line each."""


@dataclass(frozen=True)
class ReadSession:
    """A stored session as the kernel's models, and what could not be read."""

    history: tuple[Message, ...]
    memory: tuple[MemoryEntry, ...]
    last_run: LastRun | None
    session_memory: SessionMemory | None
    inquiry: InquiryContext | None
    last_event_seq: int
    damage: tuple[str, ...]


M = TypeVar("M", bound=BaseModel)


def read_session(snapshot: SessionSnapshot) -> ReadSession:
    """Every record of ``snapshot`` the kernel can read; the others named in ``damage``."""
    damage = list(snapshot.damage)
    history: list[Message] = []
    memory: list[MemoryEntry] = []
    last_seq = 0
    for turn in snapshot.turns:
        where = f"turn {turn.seq}"
        history.extend(_read(Message, turn.messages, f"{where} messages", damage))
        memory.extend(_read(MemoryEntry, turn.memory_entries, f"{where} memoryEntries", damage))
        for position, event in enumerate(turn.events):
            seq, kind = event.get("seq"), event.get("kind")
            if type(seq) is not int or seq < 1 or not isinstance(kind, str):
                damage.append(f"{where} events[{position}]: needs an integer seq and a kind")
                continue
            last_seq = max(last_seq, seq)
    return ReadSession(
        history=tuple(history),
        memory=tuple(memory),
        last_run=_one(LastRun, snapshot.last_run, "lastRun", damage),
        session_memory=_one(SessionMemory, snapshot.session_memory, "sessionMemory", damage),
        inquiry=_one(InquiryContext, snapshot.inquiry, "inquiry", damage),
        last_event_seq=last_seq,
        damage=tuple(damage),
    )


def _one(
    model: type[M], value: Mapping[str, Any] | None, where: str, damage: list[str]
) -> M | None:
    if value is None:
        return None
    found = _read(model, (value,), where, damage)
    return found[0] if found else None


def _read(
    model: type[M], items: Iterable[Mapping[str, Any]], where: str, damage: list[str]
) -> list[M]:
    read = []
    for position, item in enumerate(items):
        try:
            read.append(model.model_validate(item))
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            field = ".".join(str(part) for part in first["loc"]) or "<record>"
            damage.append(f"{where}[{position}].{field}: {first['msg']}")
    return read
