"""What the SQL stores share: JSON bodies read back without failing, and a session's rows
put together as the raw record `read_snapshot` takes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["APPENDED", "appended_by_seq", "loads", "raw_session", "read"]

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
