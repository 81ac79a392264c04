"""What the SQL stores (SQLite, PostgreSQL) share: a commit's and an import's bodies encoded
before the database is touched, and bodies read back without failing, put together as the
raw record `read_snapshot` takes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..storage import SessionSnapshot, TurnCommit
from ..storage._transfer import encode_json

__all__ = [
    "APPENDED",
    "EncodedCommit",
    "appended_by_seq",
    "appended_rows",
    "loads",
    "optional_json",
    "raw_session",
    "read",
    "session_row",
]

# The tables (named the same in every SQL store) that hold what each turn appends, and the
# `TurnCommit` / `StoredTurn` field each one holds.
APPENDED = (("messages", "messages"), ("events", "events"), ("memory_entries", "memory_entries"))
_WIRE = {"messages": "messages", "events": "events", "memory_entries": "memoryEntries"}


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def read(text: str | None, where: str, damage: list[str]) -> Any:
    """A stored body, or None with ``where`` named in ``damage``: a row a store cannot
    parse is reported and left on disk, never fatal to the session."""
    try:
        return loads(text)
    except ValueError as error:
        damage.append(f"{where}: not JSON ({error})")
        return None


def appended_by_seq(
    table: str, rows: Iterable[tuple[int, int, str]], damage: list[str]
) -> dict[int, list[Any]]:
    """``(seq, pos, body)`` rows of one appended table, read and grouped by turn."""
    by_seq: dict[int, list[Any]] = {}
    for seq, pos, body in rows:
        item = read(body, f"{table} of turn {seq} at {pos}", damage)
        if item is not None:
            by_seq.setdefault(seq, []).append(item)
    return by_seq


def raw_session(
    head: Sequence[str | None],
    turns: Sequence[tuple[int, str, int | None]],
    appended: Mapping[str, Mapping[int, list[Any]]],
    content: Iterable[tuple[str, str]],
    damage: list[str],
) -> dict[str, Any]:
    """The raw session `read_snapshot` reads, from a store's rows: ``head`` is the session
    row's (session memory, inquiry, lastRun) bodies, ``turns`` its (seq, turn id, committed
    at) rows, ``appended`` each table's items by seq, ``content`` its (ref, body) rows."""
    return {
        "turns": [
            {
                "seq": seq,
                "turnId": turn_id,
                "committedAtMs": at,
                **{_WIRE[table]: appended[table].get(seq, []) for table, _ in APPENDED},
            }
            for seq, turn_id, at in turns
        ],
        "sessionMemory": read(head[0], "session memory", damage),
        "inquiry": read(head[1], "inquiry", damage),
        "contentEntries": [
            entry
            for ref, body in content
            if (entry := read(body, f"content {ref!r}", damage)) is not None
        ],
        "lastRun": read(head[2], "lastRun", damage),
    }


def optional_json(value: Any) -> str | None:
    """A snapshot's body, or None (kept as SQL NULL: "unchanged" in a commit)."""
    return None if value is None else encode_json(value)


@dataclass(frozen=True)
class EncodedCommit:
    """A `TurnCommit`'s bodies as JSON text, encoded before a store touches its database, so
    a payload JSON cannot carry is refused with nothing written."""

    messages: list[str]
    events: list[str]
    content: list[tuple[str, str, str]]
    """(session id, ref, body) rows."""
    snapshots: tuple[str | None, str | None, str | None]
    """Session memory, inquiry, lastRun."""
    promoted: list[tuple[str]]

    @classmethod
    def of(cls, commit: TurnCommit) -> EncodedCommit:
        sid = commit.session_id
        return cls(
            messages=[encode_json(m) for m in commit.messages],
            events=[encode_json(e) for e in commit.events],
            content=[(sid, e["ref"], encode_json(e)) for e in commit.content_entries],
            snapshots=(
                optional_json(commit.session_memory),
                optional_json(commit.inquiry),
                optional_json(commit.last_run),
            ),
            promoted=[(encode_json(e),) for e in commit.global_memory],
        )


def session_row(snapshot: SessionSnapshot) -> tuple[Any, ...]:
    """An imported session's row: (session id, turn count, last committed at, session
    memory, inquiry, lastRun, memory count)."""
    return (
        snapshot.session_id,
        snapshot.turn_count,
        snapshot.last_committed_at_ms,
        optional_json(snapshot.session_memory),
        optional_json(snapshot.inquiry),
        optional_json(snapshot.last_run),
        len(snapshot.memory_entries),
    )


def appended_rows(snapshot: SessionSnapshot, field: str) -> list[tuple[str, int, int, str]]:
    """(session id, seq, pos, body) rows of one appended field of every imported turn."""
    return [
        (snapshot.session_id, t.seq, pos, encode_json(item))
        for t in snapshot.turns
        for pos, item in enumerate(getattr(t, field))
    ]
