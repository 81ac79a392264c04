"""The `Storage` port, one suite over every adapter, plus SQLite's durability and schema."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agrun import ConfigError
from agrun.ports import Storage
from agrun.storage import (
    ImportRejected,
    MemoryStorage,
    SchemaTooNew,
    SessionNotFound,
    StorageError,
    StorageFatalError,
    TurnCommit,
)

cpython_only = pytest.mark.cpython_only


def _sqlite(path: Path) -> Storage:
    from agrun.adapters.sqlite import SqliteStorage

    return SqliteStorage(path / "agrun.sqlite3")


FACTORIES: dict[str, Callable[[Path], Storage]] = {
    "memory": lambda _path: MemoryStorage(),
    "sqlite": _sqlite,
}
ADAPTERS = [
    pytest.param("memory", id="memory"),
    pytest.param("sqlite", id="sqlite", marks=cpython_only),
    pytest.param("postgres", id="postgres", marks=cpython_only),
]


def _postgres(request: pytest.FixtureRequest, **options: Any) -> Storage:
    """A PostgreSQL store in a new schema on the test run's server (conftest.py)."""
    from agrun.adapters.postgres import PostgresStorage

    return PostgresStorage(request.getfixturevalue("postgres_conninfo"), **options)


@pytest.fixture(params=ADAPTERS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    if request.param == "postgres":
        return _postgres(request)
    return FACTORIES[request.param](tmp_path)


def content_entry(ref: str, n: int) -> dict[str, Any]:
    """A content entry of the shape an import checks (`ContentRecord`); a store keeps it
    opaque otherwise."""
    return {"ref": ref, "kind": "text", "body": "abc", "bytes": 5, "digest": "sha256:x",
            "runId": f"run-{n}", "createdAt": n, "lastUsedAt": n}  # fmt: skip


def turn(session_id: str, n: int, **extra: Any) -> TurnCommit:
    """A turn with something in every part, all tagged with its number."""
    fields: dict[str, Any] = {
        "messages": [
            {"id": f"{session_id}-m{n}a", "role": "user", "text": f"question {n}"},
            {"id": f"{session_id}-m{n}b", "role": "assistant", "text": f"answer {n}"},
        ],
        "events": [{"kind": "run_started", "n": n}, {"kind": "run_finished", "n": n}],
        "memory_entries": [{"id": f"{session_id}-e{n}", "text": f"fact {n}"}],
        "session_memory": {"summary": f"after turn {n}", "turns": n},
        "inquiry": {"activeGoal": f"goal {n}", "pendingClarification": None},
        "content_entries": [content_entry(f"c{n}", n)],
        "last_run": {"runId": f"run-{session_id}-{n}", "status": "succeeded"},
    }
    fields.update(extra)
    return TurnCommit(session_id=session_id, turn_id=f"t{n}", committed_at_ms=1000 + n, **fields)


# -- the port, on every adapter --------------------------------------------------------------


async def test_commit_then_load_gives_every_part_back(store: Storage) -> None:
    assert await store.commit_turn(turn("s1", 1)) == 1
    assert await store.commit_turn(turn("s1", 2)) == 2
    snap = await store.load_session("s1")
    assert snap is not None
    assert [t.turn_id for t in snap.turns] == ["t1", "t2"]
    assert [t.seq for t in snap.turns] == [1, 2]
    assert [m["text"] for m in snap.messages] == [
        "question 1",
        "answer 1",
        "question 2",
        "answer 2",
    ]
    assert [e["n"] for e in snap.events] == [1, 1, 2, 2]
    assert [e["text"] for e in snap.memory_entries] == ["fact 1", "fact 2"]
    assert snap.session_memory == {"summary": "after turn 2", "turns": 2}
    assert snap.inquiry == {"activeGoal": "goal 2", "pendingClarification": None}
    assert [c["ref"] for c in snap.content_entries] == ["c1", "c2"]
    assert snap.last_run == {"runId": "run-s1-2", "status": "succeeded"}
    assert snap.last_committed_at_ms == 1002
    state = await store.read_runtime_state()
    assert state.last_run == {"runId": "run-s1-2", "status": "succeeded"}


async def test_unknown_session_loads_as_none_and_does_not_export(store: Storage) -> None:
    assert await store.load_session("nobody") is None
    with pytest.raises(SessionNotFound, match="nobody"):
        await store.export_session("nobody")


async def test_a_retried_turn_id_is_stored_once(store: Storage) -> None:
    await store.commit_turn(turn("s1", 1))
    assert await store.commit_turn(turn("s1", 1)) == 1
    snap = await store.load_session("s1")
    assert snap is not None and snap.turn_count == 1 and len(snap.messages) == 2


async def test_none_snapshots_keep_the_stored_ones(store: Storage) -> None:
    await store.commit_turn(turn("s1", 1))
    await store.commit_turn(turn("s1", 2, session_memory=None, inquiry=None, last_run=None))
    snap = await store.load_session("s1")
    assert snap is not None
    assert snap.session_memory == {"summary": "after turn 1", "turns": 1}
    assert snap.inquiry is not None and snap.inquiry["activeGoal"] == "goal 1"
    assert snap.last_run is not None and snap.last_run["runId"] == "run-s1-1"


async def test_content_is_upserted_by_ref_and_evicted(store: Storage) -> None:
    await store.commit_turn(turn("s1", 1, content_entries=[{"ref": "b", "v": 1}, {"ref": "a"}]))
    await store.commit_turn(
        turn("s1", 2, content_entries=[{"ref": "b", "v": 2}], evicted_content_refs=["a", "zz"])
    )
    snap = await store.load_session("s1")
    assert snap is not None and snap.content_entries == [{"ref": "b", "v": 2}]


async def test_sessions_are_listed_by_id_and_kept_apart(store: Storage) -> None:
    await store.commit_turn(turn("b", 1))
    await store.commit_turn(turn("a", 1))
    await store.commit_turn(turn("b", 2))
    listed = await store.list_sessions()
    assert [(s.session_id, s.turn_count, s.last_committed_at_ms) for s in listed] == [
        ("a", 1, 1001),
        ("b", 2, 1002),
    ]
    snap_a = await store.load_session("a")
    assert snap_a is not None and [m["id"] for m in snap_a.messages] == ["a-m1a", "a-m1b"]


async def test_a_title_is_stored_with_the_session_and_outlives_its_turns(store: Storage) -> None:
    await store.commit_turn(turn("a", 1))
    await store.rename_session("a", "Trip to Lisbon")
    await store.rename_session("new", "Named first")  # before its first turn
    await store.commit_turn(turn("a", 2))  # a commit keeps the title
    listed = {s.session_id: (s.turn_count, s.title) for s in await store.list_sessions()}
    assert listed == {"a": (2, "Trip to Lisbon"), "new": (0, "Named first")}
    await store.rename_session("a", None)
    info = await store.session_info("a")
    assert info is not None and info.title is None and info.turn_count == 2


async def test_clear_keeps_the_id_and_title_and_removes_every_turn(store: Storage) -> None:
    await store.commit_turn(turn("a", 1, global_memory=[{"id": "g1"}]))
    await store.commit_turn(turn("a", 2))
    await store.commit_turn(turn("b", 1))
    await store.rename_session("a", "Kept")
    assert await store.clear_session("a") is True
    assert await store.clear_session("nobody") is False
    info = await store.session_info("a")
    assert info is not None
    assert (info.turn_count, info.last_committed_at_ms, info.title) == (0, None, "Kept")
    snap = await store.load_session("a")
    assert snap is None or (
        not snap.turns
        and not snap.content_entries
        and snap.session_memory is None
        and snap.inquiry is None
        and snap.last_run is None
    )
    # Global memory is global, and the other session is untouched.
    assert [e["id"] for e in await store.read_global_memory()] == ["g1"]
    other = await store.load_session("b")
    assert other is not None and other.turn_count == 1
    # The cleared session starts again at seq 1, its memory numbered from the start.
    assert await store.commit_turn(turn("a", 3)) == 1
    again = await store.load_session("a")
    assert again is not None and [t.turn_id for t in again.turns] == ["t3"]
    assert [e["seq"] for e in again.memory_entries] == [1]


async def test_delete_removes_the_session_and_keeps_the_rest(store: Storage) -> None:
    await store.commit_turn(turn("a", 1, global_memory=[{"id": "g1"}]))
    await store.commit_turn(turn("b", 1))
    await store.rename_session("a", "Gone")
    assert await store.delete_session("a") is True
    assert await store.delete_session("a") is False
    assert await store.load_session("a") is None
    assert await store.session_info("a") is None
    assert [s.session_id for s in await store.list_sessions()] == ["b"]
    assert [e["id"] for e in await store.read_global_memory()] == ["g1"]
    with pytest.raises(SessionNotFound):
        await store.export_session("a")
    assert await store.commit_turn(turn("a", 2)) == 1
    info = await store.session_info("a")
    assert info is not None and info.title is None


async def test_global_memory_appends_in_order_from_commits_and_calls(store: Storage) -> None:
    await store.append_global_memory([{"text": "g1"}])
    await store.commit_turn(turn("s1", 1, global_memory=[{"text": "g2"}, {"text": "g3"}]))
    await store.append_global_memory([])
    assert [e["text"] for e in await store.read_global_memory()] == ["g1", "g2", "g3"]


async def test_a_payload_json_cannot_carry_is_refused_before_writing(store: Storage) -> None:
    await store.commit_turn(turn("s1", 1))
    bad = turn("s1", 2, events=[{"kind": "x", "when": {1, 2}}])
    with pytest.raises(ConfigError, match="JSON-ready"):
        await store.commit_turn(bad)
    with pytest.raises(ConfigError):
        await store.commit_turn(turn("s1", 3, last_run={"n": float("nan")}))
    snap = await store.load_session("s1")
    assert snap is not None and snap.turn_count == 1


async def test_stored_payloads_are_copies(store: Storage) -> None:
    commit = turn("s1", 1)
    await store.commit_turn(commit)
    commit.messages[0]["text"] = "changed after commit"
    snap = await store.load_session("s1")
    assert snap is not None and snap.messages[0]["text"] == "question 1"
    snap.messages[0]["text"] = "changed after load"
    again = await store.load_session("s1")
    assert again is not None and again.messages[0]["text"] == "question 1"


async def test_a_closed_store_refuses_calls(store: Storage) -> None:
    await store.close()
    with pytest.raises(StorageFatalError, match="closed"):
        await store.commit_turn(turn("s1", 1))


async def test_export_import_round_trip(store: Storage) -> None:
    for n in (1, 2, 3):
        await store.commit_turn(turn("s1", n))
    text = await store.export_session("s1")
    envelope = json.loads(text)
    assert envelope["format"] == "agrun.session" and envelope["formatVersion"] == 1
    assert "sessionId" in envelope["session"] and "memoryEntries" in envelope["session"]["turns"][0]
    with pytest.raises(ImportRejected, match="replace=True"):
        await store.import_session(text)
    original = await store.load_session("s1")
    # Under another id, then replacing the original with it.
    envelope["session"]["sessionId"] = "copy"
    assert await store.import_session(json.dumps(envelope)) == "copy"
    copy = await store.load_session("copy")
    assert copy is not None and original is not None
    assert copy.model_copy(update={"session_id": "s1"}) == original
    # An imported session takes new turns after its last one.
    assert await store.commit_turn(turn("copy", 4)) == 4
    assert await store.import_session(text, replace=True) == "s1"
    assert await store.load_session("s1") == original


def _export(session: dict[str, Any], **envelope: Any) -> str:
    return json.dumps(
        {"format": "agrun.session", "formatVersion": 1, "session": session, **envelope}
    )


def _session(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "sessionId": "evil",
        "turns": [
            {
                "seq": 1,
                "turnId": "t1",
                "messages": [{"id": "m1"}],
                "events": [],
                "memoryEntries": [],
            },
            {
                "seq": 2,
                "turnId": "t2",
                "messages": [{"id": "m2"}],
                "events": [],
                "memoryEntries": [],
            },
        ],
        "sessionMemory": None,
        "inquiry": None,
        "contentEntries": [],
        "lastRun": None,
    }
    base.update(changes)
    return base


def _turns(*turns: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"messages": [], "events": [], "memoryEntries": [], **t} for t in turns]


def _nested(depth: int) -> str:
    return _export(_session(sessionMemory=json.loads('{"a":' * depth + "1" + "}" * depth)))


HOSTILE: dict[str, Any] = {
    "not json": "{not json",
    "not an object": "[1, 2, 3]",
    "empty": "",
    "wrong format": json.dumps({"format": "other", "formatVersion": 1, "session": {}}),
    "newer version": _export(_session(), formatVersion=2),
    "version as text": _export(_session(), formatVersion="1"),
    "version as bool": _export(_session(), formatVersion=True),
    "missing session": json.dumps({"format": "agrun.session", "formatVersion": 1}),
    "unknown field": _export(_session(), extra=1),
    "unknown session field": _export(_session(owner="root")),
    "duplicated turn id": _export(
        _session(turns=_turns({"seq": 1, "turnId": "t"}, {"seq": 2, "turnId": "t"}))
    ),
    "gap in seq": _export(
        _session(turns=_turns({"seq": 1, "turnId": "a"}, {"seq": 3, "turnId": "b"}))
    ),
    "seq as text": _export(_session(turns=_turns({"seq": "1", "turnId": "a"}))),
    "seq zero": _export(_session(turns=_turns({"seq": 0, "turnId": "a"}))),
    "messages not a list": _export(
        _session(turns=_turns({"seq": 1, "turnId": "a", "messages": {}}))
    ),
    "message not an object": _export(
        _session(turns=_turns({"seq": 1, "turnId": "a", "messages": ["hi"]}))
    ),
    "duplicated message id": _export(
        _session(turns=_turns({"seq": 1, "turnId": "a", "messages": [{"id": "m"}, {"id": "m"}]}))
    ),
    "duplicated content ref": _export(_session(contentEntries=[{"ref": "r"}, {"ref": "r"}])),
    "content without ref": _export(_session(contentEntries=[{"body": "x"}])),
    "empty session id": _export(_session(sessionId="")),
    "huge session id": _export(_session(sessionId="x" * 300)),
    "session id not text": _export(_session(sessionId=7)),
    "duplicated key": '{"format": "agrun.session", "format": "agrun.session", "formatVersion": 1}',
    "NaN": _export(_session()).replace('"lastRun": null', '"lastRun": {"x": NaN}'),
    "too deep": _nested(200),
    "too deep for the parser": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "too large": _export(_session(sessionMemory={"pad": "x" * 300_000})),
    "not utf-8": b'{"format": "\xff"}',
    "not text": 42,
}


@pytest.fixture(params=ADAPTERS)
def small_store(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    """A store that takes export files of at most 256 KiB."""
    limit = 256 * 1024
    if request.param == "memory":
        return MemoryStorage(max_import_bytes=limit)
    if request.param == "postgres":
        return _postgres(request, max_import_bytes=limit)
    from agrun.adapters.sqlite import SqliteStorage

    return SqliteStorage(tmp_path / "agrun.sqlite3", max_import_bytes=limit)


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
async def test_hostile_imports_are_rejected_and_change_nothing(
    text: Any, small_store: Storage
) -> None:
    await small_store.commit_turn(turn("evil", 1))
    before = await small_store.export_session("evil")
    with pytest.raises(ImportRejected) as caught:
        await small_store.import_session(text, replace=True)
    assert str(caught.value)
    assert await small_store.export_session("evil") == before
    assert [s.session_id for s in await small_store.list_sessions()] == ["evil"]


@cpython_only
@pytest.mark.parametrize("direction", ["memory->sqlite", "sqlite->memory"])
async def test_a_session_moves_between_adapters(direction: str, tmp_path: Path) -> None:
    memory, sqlite = MemoryStorage(), _sqlite(tmp_path)
    source, target = (memory, sqlite) if direction == "memory->sqlite" else (sqlite, memory)
    for n in range(1, 6):
        await source.commit_turn(turn("s1", n))
    await target.import_session(await source.export_session("s1"))
    assert await target.load_session("s1") == await source.load_session("s1")
    assert await target.export_session("s1") == await source.export_session("s1")


# -- SQLite: durability and schema (CPython only) --------------------------------------------


def _whole(snap: Any) -> None:
    """Every part of every turn is there, and the snapshots match the last turn."""
    assert [t.seq for t in snap.turns] == list(range(1, snap.turn_count + 1))
    for t in snap.turns:
        assert [m["turn"] for m in t.messages] == [t.turn_id] * 3
        assert [e["turn"] for e in t.events] == [t.turn_id] * 2
        assert [e["turn"] for e in t.memory_entries] == [t.turn_id]
    if snap.turns:
        last = snap.turns[-1].turn_id
        assert snap.session_memory == {"turns": snap.turn_count, "last": last}
        assert snap.last_run == {"turn": last}
        assert any(c["ref"] == last for c in snap.content_entries)


async def every_session_whole(store: Storage) -> list[Any]:
    """Every stored session, each checked whole (`_whole`) and as long as listed."""
    snaps = []
    for info in await store.list_sessions():
        snap = await store.load_session(info.session_id)
        assert snap is not None and snap.turn_count == info.turn_count
        _whole(snap)
        snaps.append(snap)
    return snaps


CRASH_WRITER = textwrap.dedent(
    """
    import asyncio, contextlib, itertools, os, sys
    from agrun.storage import TurnCommit

    def open_store(kind, where):
        if kind == "postgres":
            from agrun.adapters.postgres import PostgresStorage
            return PostgresStorage(where)
        from agrun.adapters.sqlite import SqliteStorage
        return SqliteStorage(where)

    async def main():
        store = open_store(sys.argv[1], sys.argv[2])
        # A store that many processes share locks the session from the read to the commit.
        hold = getattr(store, "hold_session", lambda sid: contextlib.nullcontext())
        pid = os.getpid()
        for n in itertools.count():
            sid = f"s{n % 4}"
            async with hold(sid):
                info = await store.session_info(sid)
                snap_count = info.turn_count if info else 0
                tid = f"{pid}-{n}"
                tag = {"turn": tid, "pad": "x" * 2000}
                await store.commit_turn(TurnCommit(
                    session_id=sid, turn_id=tid,
                    messages=[tag] * 3, events=[tag] * 2, memory_entries=[tag],
                    session_memory={"turns": snap_count + 1, "last": tid},
                    content_entries=[{"ref": tid}], last_run={"turn": tid},
                ))
            if n == 0:
                print("ready", flush=True)

    asyncio.run(main())
    """
)


@cpython_only
async def test_sqlite_sessions_are_whole_after_kills_mid_commit(tmp_path: Path) -> None:
    from agrun.adapters.sqlite import SqliteStorage

    path = tmp_path / "crash.sqlite3"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for round_ in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-c", CRASH_WRITER, "sqlite", str(path)],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(0.005 + 0.007 * round_)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    store = SqliteStorage(path)
    assert sum(snap.turn_count for snap in await every_session_whole(store)) >= 12
    await store.close()


@cpython_only
async def test_sqlite_failure_inside_the_transaction_writes_none_of_the_turn(
    tmp_path: Path,
) -> None:
    import sqlite3

    from agrun.adapters.sqlite import SqliteStorage

    path = tmp_path / "agrun.sqlite3"
    store = SqliteStorage(path)
    await store.commit_turn(turn("s1", 1, global_memory=[{"text": "g1"}]))
    with sqlite3.connect(path) as raw:
        # A fault injected by the database itself, after the turn's other rows went in.
        raw.execute(
            "CREATE TRIGGER boom BEFORE INSERT ON global_memory "
            "WHEN NEW.body LIKE '%boom%' BEGIN SELECT RAISE(ABORT, 'injected fault'); END"
        )
    raw.close()
    with pytest.raises(StorageError, match="injected fault"):
        await store.commit_turn(turn("s1", 2, global_memory=[{"text": "boom"}]))
    snap = await store.load_session("s1")
    assert snap is not None and snap.turn_count == 1
    assert len(snap.messages) == 2 and snap.session_memory == {
        "summary": "after turn 1",
        "turns": 1,
    }
    assert (await store.read_runtime_state()).last_run == {
        "runId": "run-s1-1",
        "status": "succeeded",
    }
    assert await store.read_global_memory() == [{"text": "g1"}]
    # The retry, once the fault is gone, lands as turn 2.
    assert await store.commit_turn(turn("s1", 2)) == 2
    await store.close()


@cpython_only
async def test_sqlite_keeps_sessions_across_reopen_and_two_connections(tmp_path: Path) -> None:
    from agrun.adapters.sqlite import SqliteStorage

    path = tmp_path / "agrun.sqlite3"
    first, second = SqliteStorage(path), SqliteStorage(path)
    for n in range(1, 7):
        await (first if n % 2 else second).commit_turn(turn("s1", n))
    await first.close()
    await second.close()
    again = SqliteStorage(path)
    snap = await again.load_session("s1")
    assert snap is not None and [t.turn_id for t in snap.turns] == [f"t{n}" for n in range(1, 7)]
    await again.close()


def _v1_file(path: Path) -> None:
    """A file as agrun's schema version 1 wrote it, with one session in it."""
    import sqlite3

    from agrun.adapters.sqlite import MIGRATIONS

    raw = sqlite3.connect(path)
    raw.executescript(MIGRATIONS[0])
    raw.executescript(
        """
        CREATE TABLE agrun_schema (version INTEGER NOT NULL);
        INSERT INTO agrun_schema VALUES (1);
        INSERT INTO sessions VALUES ('old', 1, 5, '{"summary":"v1"}', NULL, '{"runId":"r1"}');
        INSERT INTO turns VALUES ('old', 1, 't1', 5);
        INSERT INTO messages VALUES ('old', 1, 0, '{"role":"user","text":"from v1"}');
        INSERT INTO global_memory (body) VALUES ('{"text":"global v1"}');
        """
    )
    raw.commit()
    raw.close()


@cpython_only
async def test_sqlite_upgrades_an_older_schema_without_losing_data(tmp_path: Path) -> None:
    from agrun.adapters.sqlite import SCHEMA_VERSION, SqliteStorage

    path = tmp_path / "v1.sqlite3"
    _v1_file(path)
    store = SqliteStorage(path)
    snap = await store.load_session("old")
    assert snap is not None
    assert snap.messages == [{"role": "user", "text": "from v1"}]
    assert snap.session_memory == {"summary": "v1"} and snap.last_run == {"runId": "r1"}
    assert await store.read_global_memory() == [{"text": "global v1"}]
    # What version 2 added: runtime state (backfilled from v1's sessions) and content.
    assert (await store.read_runtime_state()).last_run == {"runId": "r1"}
    assert await store.commit_turn(turn("old", 2)) == 2
    await store.close()
    import sqlite3

    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT version FROM agrun_schema").fetchall() == [(SCHEMA_VERSION,)]
    raw.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@cpython_only
async def test_sqlite_refuses_a_newer_schema_and_leaves_it_untouched(tmp_path: Path) -> None:
    import sqlite3

    from agrun.adapters.sqlite import SCHEMA_VERSION, SqliteStorage

    path = tmp_path / "future.sqlite3"
    store = SqliteStorage(path)
    await store.commit_turn(turn("s1", 1))
    await store.close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE agrun_schema SET version = ?", (SCHEMA_VERSION + 1,))
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    before = _digest(path)
    with pytest.raises(SchemaTooNew, match=f"schema version {SCHEMA_VERSION + 1}") as caught:
        SqliteStorage(path)
    assert isinstance(caught.value, StorageFatalError)
    assert caught.value.found == SCHEMA_VERSION + 1 and caught.value.known == SCHEMA_VERSION
    assert _digest(path) == before
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM messages").fetchone() == (2,)
    raw.close()


@cpython_only
def test_sqlite_refuses_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    from agrun.adapters.sqlite import SqliteStorage

    path = tmp_path / "garbage.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StorageFatalError, match="SQLite"):
        SqliteStorage(path)
    assert path.read_bytes() == b"this is not sqlite" * 100


# -- every adapter keeps the same history for the same commits --------------------------------


def _commit_strategy() -> Any:
    from hypothesis import strategies as st

    small = st.dictionaries(st.sampled_from(["a", "b", "text"]), st.integers(0, 9), max_size=2)
    refs = st.sampled_from(["r1", "r2", "r3"])
    # Through a plain function: pydantic's signature names the camelCase aliases.
    return st.builds(
        lambda **fields: TurnCommit(**fields),
        session_id=st.sampled_from(["s1", "s2"]),
        turn_id=st.sampled_from(["t1", "t2", "t3", "t4", "t5"]),
        committed_at_ms=st.none() | st.integers(0, 10**6),
        messages=st.lists(small, max_size=3),
        events=st.lists(small, max_size=2),
        memory_entries=st.lists(small, max_size=1),
        session_memory=st.none() | small,
        inquiry=st.none() | small,
        content_entries=st.lists(st.builds(lambda ref, v: {"ref": ref, "v": v}, refs, small)),
        evicted_content_refs=st.lists(refs, max_size=2),
        last_run=st.none() | small,
        global_memory=st.lists(small, max_size=2),
    )


@cpython_only
def test_memory_and_sqlite_keep_the_same_history(tmp_path: Path) -> None:
    import asyncio
    import itertools

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from agrun.adapters.sqlite import SqliteStorage

    counter = itertools.count()

    @settings(max_examples=60, deadline=None)
    @given(st.lists(_commit_strategy(), max_size=12))
    def check(commits: list[TurnCommit]) -> None:
        async def run() -> None:
            memory = MemoryStorage()
            sqlite = SqliteStorage(tmp_path / f"h{next(counter)}.sqlite3")
            for commit in commits:
                assert await memory.commit_turn(commit) == await sqlite.commit_turn(commit)
            for sid in ("s1", "s2"):
                assert await memory.load_session(sid) == await sqlite.load_session(sid)
            assert await memory.list_sessions() == await sqlite.list_sessions()
            assert await memory.read_global_memory() == await sqlite.read_global_memory()
            assert await memory.read_runtime_state() == await sqlite.read_runtime_state()
            await sqlite.close()

        asyncio.run(run())

    check()


def test_the_fatal_error_names_are_the_same_in_python_and_javascript() -> None:
    import re
    from pathlib import Path

    from agrun.storage._errors import FATAL_ERROR_NAMES

    source = (Path(__file__).parent.parent / "web/storage/resilient.js").read_text("utf-8")
    block = re.search(r"FATAL_ERROR_NAMES = new Set\(\[(.*?)\]\)", source, re.S)
    assert block is not None
    assert set(re.findall(r"'(\w+)'", block.group(1))) == FATAL_ERROR_NAMES


async def test_a_resume_load_carries_only_the_last_turns_events(store: Storage) -> None:
    for n in (1, 2, 3):
        await store.commit_turn(turn("s1", n))
    full = await store.load_session("s1")
    lean = await store.load_session("s1", all_events=False)
    assert full is not None and lean is not None
    assert [len(t.events) for t in lean.turns] == [0, 0, len(full.turns[2].events)]
    assert lean.turns[2].events == full.turns[2].events
    assert lean.messages == full.messages and lean.memory_entries == full.memory_entries
