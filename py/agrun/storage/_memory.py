"""An in-memory `Storage`: for tests, and the fallback when a real store fails.

Payloads are copied through JSON on the way in and out, so a caller can neither mutate
what was stored nor store what a file could not hold. A commit builds every new value
first and then swaps them in without awaiting, which makes it atomic.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._errors import ImportRejected, SessionNotFound, StorageFatalError
from ._records import (
    JsonObject,
    RuntimeStateRecord,
    SessionInfo,
    SessionSnapshot,
    StoredTurn,
    TurnCommit,
)
from ._transfer import (
    MAX_IMPORT_BYTES,
    dump_session,
    encode_json,
    number_memory,
    parse_session,
    read_snapshot,
)

__all__ = ["MemoryStorage"]


def _copy(value: Any) -> Any:
    return json.loads(encode_json(value))


@dataclass
class _Session:
    turns: list[StoredTurn] = field(default_factory=list)
    turn_ids: dict[str, int] = field(default_factory=dict)
    session_memory: JsonObject | None = None
    inquiry: JsonObject | None = None
    content: dict[str, JsonObject] = field(default_factory=dict)
    last_run: JsonObject | None = None
    last_committed_at_ms: int | None = None
    memory_count: int = 0
    title: str | None = None

    def info(self, session_id: str) -> SessionInfo:
        return SessionInfo(
            session_id=session_id,
            turn_count=len(self.turns),
            last_committed_at_ms=self.last_committed_at_ms,
            title=self.title,
        )


class MemoryStorage:
    """`Storage` held in this process's memory; gone when the process ends."""

    def __init__(self, *, max_import_bytes: int = MAX_IMPORT_BYTES) -> None:
        self._sessions: dict[str, _Session] = {}
        self._global: list[JsonObject] = []
        self._last_run: JsonObject | None = None
        self._closed = False
        self._max_import_bytes = max_import_bytes

    def _check_open(self) -> None:
        if self._closed:
            raise StorageFatalError("this MemoryStorage was closed: create a new one")

    async def commit_turn(self, commit: TurnCommit) -> int:
        self._check_open()
        wire = _copy(commit.model_dump(by_alias=True))
        session = self._sessions.get(commit.session_id)
        if session is not None and commit.turn_id in session.turn_ids:
            return session.turn_ids[commit.turn_id]
        session = session or _Session()
        seq = len(session.turns) + 1
        turn = StoredTurn(
            seq=seq,
            turn_id=commit.turn_id,
            committed_at_ms=commit.committed_at_ms,
            messages=wire["messages"],
            events=wire["events"],
            memory_entries=number_memory(wire["memoryEntries"], session.memory_count),
        )
        content = dict(session.content)
        for ref in commit.evicted_content_refs:
            content.pop(ref, None)
        for entry in wire["contentEntries"]:
            content[entry["ref"]] = entry
        # Nothing below can fail or await: the turn lands whole.
        session.turns.append(turn)
        session.turn_ids[commit.turn_id] = seq
        session.memory_count += len(turn.memory_entries)
        session.content = content
        if wire["sessionMemory"] is not None:
            session.session_memory = wire["sessionMemory"]
        if wire["inquiry"] is not None:
            session.inquiry = wire["inquiry"]
        if wire["lastRun"] is not None:
            session.last_run = self._last_run = wire["lastRun"]
        if commit.committed_at_ms is not None:
            session.last_committed_at_ms = commit.committed_at_ms
        self._global.extend(wire["globalMemory"])
        self._sessions[commit.session_id] = session
        return seq

    async def load_session(
        self, session_id: str, *, all_events: bool = True
    ) -> SessionSnapshot | None:
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None:
            return None
        last = len(session.turns)
        raw = {
            "turns": [
                t.to_wire() if all_events or t.seq == last else {**t.to_wire(), "events": []}
                for t in session.turns
            ],
            "sessionMemory": session.session_memory,
            "inquiry": session.inquiry,
            "contentEntries": [session.content[ref] for ref in sorted(session.content)],
            "lastRun": session.last_run,
        }
        return read_snapshot(_copy(raw), session_id)

    async def session_info(self, session_id: str) -> SessionInfo | None:
        self._check_open()
        session = self._sessions.get(session_id)
        return None if session is None else session.info(session_id)

    async def list_sessions(self) -> list[SessionInfo]:
        self._check_open()
        return [s.info(sid) for sid, s in sorted(self._sessions.items())]

    async def rename_session(self, session_id: str, title: str | None) -> None:
        self._check_open()
        self._sessions.setdefault(session_id, _Session()).title = title

    async def clear_session(self, session_id: str) -> bool:
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None:
            return False
        self._sessions[session_id] = _Session(title=session.title)
        return True

    async def delete_session(self, session_id: str) -> bool:
        self._check_open()
        return self._sessions.pop(session_id, None) is not None

    async def read_global_memory(self) -> list[JsonObject]:
        self._check_open()
        copied: list[JsonObject] = _copy(self._global)
        return copied

    async def append_global_memory(self, entries: Sequence[JsonObject]) -> None:
        self._check_open()
        self._global.extend(_copy(list(entries)))

    async def read_runtime_state(self) -> RuntimeStateRecord:
        self._check_open()
        return RuntimeStateRecord(last_run=_copy(self._last_run))

    async def export_session(self, session_id: str) -> str:
        snapshot = await self.load_session(session_id)
        if snapshot is None:
            raise SessionNotFound(session_id)
        return dump_session(snapshot)

    async def import_session(self, json_text: str | bytes, *, replace: bool = False) -> str:
        self._check_open()
        snapshot = parse_session(json_text, max_bytes=self._max_import_bytes)
        sid = snapshot.session_id
        old = self._sessions.get(sid)
        if old is not None and not replace:
            raise ImportRejected(
                f"session {sid!r} is already stored: pass replace=True to overwrite it"
            )
        # An export file carries no title: a replaced session keeps the one it had.
        self._sessions[sid] = _Session(
            title=None if old is None else old.title,
            turns=list(snapshot.turns),
            turn_ids={t.turn_id: t.seq for t in snapshot.turns},
            session_memory=snapshot.session_memory,
            inquiry=snapshot.inquiry,
            content={e["ref"]: e for e in snapshot.content_entries},
            last_run=snapshot.last_run,
            last_committed_at_ms=snapshot.last_committed_at_ms,
            memory_count=len(snapshot.memory_entries),
        )
        return sid

    async def close(self) -> None:
        self._closed = True
