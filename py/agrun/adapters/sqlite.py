"""SQLite `Storage`: the embedded default on CPython (a file path in the config).

One turn is one ``BEGIN IMMEDIATE ... COMMIT`` transaction, so after a crash a session
holds every turn whole or not at all. The file records its schema version in
``agrun_schema``; opening an older file runs the missing upgrade steps in one
transaction, and a file newer than this code is refused with `SchemaTooNew`, untouched.

Calls run synchronously on the event loop's thread: a local commit takes well under a
millisecond to a few (fsync), which the runtime can afford once per turn.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence

from ..storage._errors import (
    ImportRejected,
    SchemaTooNew,
    SessionNotFound,
    StorageError,
    StorageFatalError,
    StorageRetryableError,
)
from ..storage._records import (
    JsonObject,
    RuntimeStateRecord,
    SessionInfo,
    SessionSnapshot,
    TurnCommit,
)
from ..storage._transfer import (
    MAX_IMPORT_BYTES,
    dump_session,
    encode_json,
    number_memory,
    parse_session,
    read_snapshot,
)
from ._rows import (
    APPENDED,
    EncodedCommit,
    appended_by_seq,
    appended_rows,
    loads,
    raw_session,
    session_row,
)

__all__ = ["SCHEMA_VERSION", "SqliteStorage"]

# Each step takes the file from version i to i + 1. Never edit a released step; add one.
MIGRATIONS: tuple[str, ...] = (
    # 1: sessions, turns and what turns append; snapshots and lastRun live on the session.
    """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        turn_count INTEGER NOT NULL,
        last_committed_at_ms INTEGER,
        session_memory TEXT,
        inquiry TEXT,
        last_run TEXT
    );
    CREATE TABLE turns (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        turn_id TEXT NOT NULL,
        committed_at_ms INTEGER,
        PRIMARY KEY (session_id, seq),
        UNIQUE (session_id, turn_id)
    );
    CREATE TABLE messages (
        session_id TEXT NOT NULL, seq INTEGER NOT NULL, pos INTEGER NOT NULL,
        body TEXT NOT NULL, PRIMARY KEY (session_id, seq, pos)
    ) WITHOUT ROWID;
    CREATE TABLE events (
        session_id TEXT NOT NULL, seq INTEGER NOT NULL, pos INTEGER NOT NULL,
        body TEXT NOT NULL, PRIMARY KEY (session_id, seq, pos)
    ) WITHOUT ROWID;
    CREATE TABLE memory_entries (
        session_id TEXT NOT NULL, seq INTEGER NOT NULL, pos INTEGER NOT NULL,
        body TEXT NOT NULL, PRIMARY KEY (session_id, seq, pos)
    ) WITHOUT ROWID;
    CREATE TABLE global_memory (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL);
    """,
    # 2: the content store, and runtime state (lastRun of the most recent commit, any session),
    # backfilled from the sessions a version-1 file already holds.
    """
    CREATE TABLE content (
        session_id TEXT NOT NULL, ref TEXT NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (session_id, ref)
    ) WITHOUT ROWID;
    CREATE TABLE runtime_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO runtime_state (key, value)
        SELECT 'lastRun', last_run FROM sessions WHERE last_run IS NOT NULL
        ORDER BY last_committed_at_ms IS NULL, last_committed_at_ms DESC LIMIT 1;
    """,
    # 3: how many memory entries each session holds, so a commit numbers its entries after
    # them (unique seqs on disk) without counting rows.
    """
    ALTER TABLE sessions ADD COLUMN memory_count INTEGER NOT NULL DEFAULT 0;
    UPDATE sessions SET memory_count = (
        SELECT count(*) FROM memory_entries m WHERE m.session_id = sessions.session_id
    );
    """,
    # 4: the title a person gave the conversation.
    """
    ALTER TABLE sessions ADD COLUMN title TEXT;
    """,
)
# What clear_session and delete_session empty, per session.
_PER_SESSION = ("turns", "messages", "events", "memory_entries", "content")
SCHEMA_VERSION = len(MIGRATIONS)


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """Turn sqlite3's errors into the port's, by whose move it is."""
    try:
        yield
    except sqlite3.OperationalError as error:
        text = str(error).lower()
        if "locked" in text or "busy" in text:
            raise StorageRetryableError(f"SQLite is busy ({error}); retry the call") from error
        raise StorageFatalError(f"SQLite failed: {error}") from error
    except (sqlite3.DatabaseError, sqlite3.ProgrammingError) as error:
        # IntegrityError (e.g. a trigger's RAISE) is the one a retry might get past.
        if isinstance(error, sqlite3.IntegrityError):
            raise StorageError(f"SQLite refused the write: {error}") from error
        raise StorageFatalError(f"SQLite failed: {error}") from error


class SqliteStorage:
    """`Storage` in one SQLite file (or ``":memory:"``).

    Raises (on construction):
        SchemaTooNew: the file was written by a newer agrun.
        StorageFatalError: the file cannot be opened or is not a database.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_s: float = 5.0,
        max_import_bytes: int = MAX_IMPORT_BYTES,
    ) -> None:
        self.path = str(path)
        self._max_import_bytes = max_import_bytes
        with _translated():
            self._db: sqlite3.Connection | None = sqlite3.connect(
                self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
            )
            try:
                if self.path != ":memory:":
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                self._migrate()
            except BaseException:
                self._db.close()
                self._db = None
                raise

    # -- schema -------------------------------------------------------------------------

    def _migrate(self) -> None:
        db = self._conn()
        with self._transaction(db):
            version = self._schema_version(db)
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(version, SCHEMA_VERSION, where=f"SQLite file {self.path!r}")
            for step in range(version, SCHEMA_VERSION):
                for statement in _statements(MIGRATIONS[step]):
                    db.execute(statement)
            if version == 0:
                db.execute("CREATE TABLE agrun_schema (version INTEGER NOT NULL)")
                db.execute("INSERT INTO agrun_schema (version) VALUES (?)", (SCHEMA_VERSION,))
            elif version < SCHEMA_VERSION:
                db.execute("UPDATE agrun_schema SET version = ?", (SCHEMA_VERSION,))

    @staticmethod
    def _schema_version(db: sqlite3.Connection) -> int:
        known = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agrun_schema'"
        ).fetchone()
        if known is None:
            return 0
        row = db.execute("SELECT max(version) FROM agrun_schema").fetchone()
        return int(row[0] or 0)

    # -- plumbing -----------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise StorageFatalError(f"SqliteStorage({self.path!r}) was closed: open a new one")
        return self._db

    @contextlib.contextmanager
    def _transaction(self, db: sqlite3.Connection, mode: str = "IMMEDIATE") -> Iterator[None]:
        db.execute(f"BEGIN {mode}")
        try:
            yield
        except BaseException:
            if db.in_transaction:
                db.rollback()
            raise
        db.execute("COMMIT")

    # -- the port -----------------------------------------------------------------------

    async def commit_turn(self, commit: TurnCommit) -> int:
        # Encode first: a payload JSON cannot carry fails before the file is touched.
        sid = commit.session_id
        encoded = EncodedCommit.of(commit)
        rows = {"messages": encoded.messages, "events": encoded.events}
        with _translated():
            db = self._conn()
            with self._transaction(db):
                done = db.execute(
                    "SELECT seq FROM turns WHERE session_id = ? AND turn_id = ?",
                    (sid, commit.turn_id),
                ).fetchone()
                if done is not None:
                    return int(done[0])
                row = db.execute(
                    "SELECT turn_count, memory_count FROM sessions WHERE session_id = ?", (sid,)
                ).fetchone()
                seq = (row[0] if row else 0) + 1
                stored_memory = row[1] if row else 0
                memory = number_memory(commit.memory_entries, stored_memory)
                rows["memory_entries"] = [encode_json(entry) for entry in memory]
                db.execute(
                    """INSERT INTO sessions (session_id, turn_count, last_committed_at_ms,
                           session_memory, inquiry, last_run, memory_count)
                       VALUES (?, ?, ?, ?, ?, ?, ?)
                       ON CONFLICT (session_id) DO UPDATE SET
                           turn_count = excluded.turn_count,
                           memory_count = excluded.memory_count,
                           last_committed_at_ms = coalesce(excluded.last_committed_at_ms,
                                                           last_committed_at_ms),
                           session_memory = coalesce(excluded.session_memory, session_memory),
                           inquiry = coalesce(excluded.inquiry, inquiry),
                           last_run = coalesce(excluded.last_run, last_run)""",
                    (
                        sid,
                        seq,
                        commit.committed_at_ms,
                        *encoded.snapshots,
                        stored_memory + len(memory),
                    ),
                )
                db.execute(
                    "INSERT INTO turns (session_id, seq, turn_id, committed_at_ms) "
                    "VALUES (?, ?, ?, ?)",
                    (sid, seq, commit.turn_id, commit.committed_at_ms),
                )
                for table, bodies in rows.items():
                    db.executemany(
                        f"INSERT INTO {table} (session_id, seq, pos, body) VALUES (?, ?, ?, ?)",
                        [(sid, seq, pos, body) for pos, body in enumerate(bodies)],
                    )
                db.executemany(
                    "DELETE FROM content WHERE session_id = ? AND ref = ?",
                    [(sid, ref) for ref in commit.evicted_content_refs],
                )
                db.executemany(
                    "INSERT OR REPLACE INTO content (session_id, ref, body) VALUES (?, ?, ?)",
                    encoded.content,
                )
                if encoded.snapshots[2] is not None:
                    db.execute(
                        "INSERT OR REPLACE INTO runtime_state (key, value) VALUES ('lastRun', ?)",
                        (encoded.snapshots[2],),
                    )
                db.executemany("INSERT INTO global_memory (body) VALUES (?)", encoded.promoted)
            return seq

    async def load_session(
        self, session_id: str, *, all_events: bool = True
    ) -> SessionSnapshot | None:
        damage: list[str] = []
        with _translated():
            db = self._conn()
            # One read transaction: a concurrent writer's turn is seen whole or not at all.
            with self._transaction(db, "DEFERRED"):
                head = db.execute(
                    "SELECT session_memory, inquiry, last_run FROM sessions WHERE session_id = ?",
                    (session_id,),
                ).fetchone()
                if head is None:
                    return None
                turns = db.execute(
                    "SELECT seq, turn_id, committed_at_ms FROM turns WHERE session_id = ? "
                    "ORDER BY seq",
                    (session_id,),
                ).fetchall()
                first = 0 if all_events or not turns else turns[-1][0]
                appended = {
                    table: appended_by_seq(
                        table,
                        db.execute(
                            f"SELECT seq, pos, body FROM {table} WHERE session_id = ? "
                            "AND seq >= ? ORDER BY seq, pos",
                            (session_id, first if table == "events" else 0),
                        ),
                        damage,
                    )
                    for table, _ in APPENDED
                }
                content = db.execute(
                    "SELECT ref, body FROM content WHERE session_id = ? ORDER BY ref",
                    (session_id,),
                ).fetchall()
        raw = raw_session(head, turns, appended, content, damage)
        snapshot = read_snapshot(raw, session_id)
        if not damage:
            return snapshot
        return snapshot.model_copy(update={"damage": (*damage, *snapshot.damage)})

    async def session_info(self, session_id: str) -> SessionInfo | None:
        with _translated():
            row = (
                self._conn()
                .execute(
                    "SELECT turn_count, last_committed_at_ms, title FROM sessions "
                    "WHERE session_id = ?",
                    (session_id,),
                )
                .fetchone()
            )
        if row is None:
            return None
        return SessionInfo(
            session_id=session_id, turn_count=row[0], last_committed_at_ms=row[1], title=row[2]
        )

    async def list_sessions(self) -> list[SessionInfo]:
        with _translated():
            rows = self._conn().execute(
                "SELECT session_id, turn_count, last_committed_at_ms, title FROM sessions "
                "ORDER BY session_id"
            )
            return [
                SessionInfo(session_id=sid, turn_count=count, last_committed_at_ms=at, title=title)
                for sid, count, at, title in rows
            ]

    async def rename_session(self, session_id: str, title: str | None) -> None:
        with _translated():
            db = self._conn()
            with self._transaction(db):
                db.execute(
                    "INSERT INTO sessions (session_id, turn_count, title) VALUES (?, 0, ?) "
                    "ON CONFLICT (session_id) DO UPDATE SET title = excluded.title",
                    (session_id, title),
                )

    async def clear_session(self, session_id: str) -> bool:
        return await self._empty(session_id, keep=True)

    async def delete_session(self, session_id: str) -> bool:
        return await self._empty(session_id, keep=False)

    async def _empty(self, session_id: str, *, keep: bool) -> bool:
        """Remove the session's turns and what they stored; ``keep`` its row and title."""
        with _translated():
            db = self._conn()
            with self._transaction(db):
                for table in _PER_SESSION:
                    db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
                if keep:
                    done = db.execute(
                        "UPDATE sessions SET turn_count = 0, memory_count = 0, "
                        "last_committed_at_ms = NULL, session_memory = NULL, inquiry = NULL, "
                        "last_run = NULL WHERE session_id = ?",
                        (session_id,),
                    )
                else:
                    done = db.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))
                return done.rowcount > 0

    async def read_global_memory(self) -> list[JsonObject]:
        with _translated():
            rows = self._conn().execute("SELECT body FROM global_memory ORDER BY id")
            return [json.loads(body) for (body,) in rows]

    async def append_global_memory(self, entries: Sequence[JsonObject]) -> None:
        bodies = [(encode_json(e),) for e in entries]
        with _translated():
            db = self._conn()
            with self._transaction(db):
                db.executemany("INSERT INTO global_memory (body) VALUES (?)", bodies)

    async def read_runtime_state(self) -> RuntimeStateRecord:
        with _translated():
            row = (
                self._conn()
                .execute("SELECT value FROM runtime_state WHERE key = 'lastRun'")
                .fetchone()
            )
        return RuntimeStateRecord(last_run=loads(row[0]) if row else None)

    async def export_session(self, session_id: str) -> str:
        snapshot = await self.load_session(session_id)
        if snapshot is None:
            raise SessionNotFound(session_id)
        return dump_session(snapshot)

    async def import_session(self, json_text: str | bytes, *, replace: bool = False) -> str:
        snapshot = parse_session(json_text, max_bytes=self._max_import_bytes)
        sid = snapshot.session_id
        with _translated():
            db = self._conn()
            with self._transaction(db):
                exists = db.execute(
                    "SELECT title FROM sessions WHERE session_id = ?", (sid,)
                ).fetchone()
                if exists and not replace:
                    raise ImportRejected(
                        f"session {sid!r} is already stored: pass replace=True to overwrite it"
                    )
                for table in ("sessions", *_PER_SESSION):
                    db.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
                # An export file carries no title: a replaced session keeps the one it had.
                db.execute(
                    "INSERT INTO sessions (session_id, turn_count, last_committed_at_ms, "
                    "session_memory, inquiry, last_run, memory_count, title) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (*session_row(snapshot), exists[0] if exists else None),
                )
                db.executemany(
                    "INSERT INTO turns (session_id, seq, turn_id, committed_at_ms) "
                    "VALUES (?, ?, ?, ?)",
                    [(sid, t.seq, t.turn_id, t.committed_at_ms) for t in snapshot.turns],
                )
                for table, field in APPENDED:
                    db.executemany(
                        f"INSERT INTO {table} (session_id, seq, pos, body) VALUES (?, ?, ?, ?)",
                        appended_rows(snapshot, field),
                    )
                db.executemany(
                    "INSERT INTO content (session_id, ref, body) VALUES (?, ?, ?)",
                    [(sid, e["ref"], encode_json(e)) for e in snapshot.content_entries],
                )
        return sid

    async def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
