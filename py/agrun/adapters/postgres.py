"""PostgreSQL `Storage`: many CPython processes sharing sessions through one server.

``create_runtime(storage="postgresql://...")`` opens it. One turn is one transaction, so
after a crash (of a worker or of the server) a session holds every turn whole or not at
all. Each commit first takes a transaction-scoped advisory lock on its session
(``pg_advisory_xact_lock``), so two processes committing to one session are numbered one
after the other. `hold_session` takes a second lock on the session for a whole turn (resume,
run, commit), which is what keeps two workers' turns on one session from interleaving, as
the Web Lock does for two tabs; the runtime takes it by itself around each operation. A lock
is released when its transaction ends, and the server ends it when the process holding it
dies, so a killed worker never leaves a session locked.

The database records its schema version in ``agrun_schema``; the first process to open it
runs the missing upgrade steps in one transaction (under an advisory lock, so two processes
starting together do not both run them), and a database newer than this code is refused
with `SchemaTooNew`, untouched. Every table is named ``agrun_*``: the store can share a
database (and a schema, chosen with ``options=-csearch_path=...`` in the conninfo) with an
application.

psycopg is imported only by this module, which `agrun` imports only when a conninfo asks
for it: ``pip install "psycopg[binary]" psycopg-pool``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from .._base import ConfigError

try:
    import psycopg
    import psycopg.errors
    from psycopg_pool import AsyncConnectionPool, PoolTimeout
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ConfigError(
        f"storage='postgresql://...' needs psycopg 3 and psycopg-pool ({missing}): "
        'pip install "psycopg[binary]" psycopg-pool'
    ) from missing

from ..storage import (
    ImportRejected,
    RuntimeStateRecord,
    SchemaTooNew,
    SessionInfo,
    SessionNotFound,
    SessionSnapshot,
    StorageError,
    StorageFatalError,
    StorageRetryableError,
    TurnCommit,
    dump_session,
    parse_session,
    read_snapshot,
)
from ..storage._records import JsonObject
from ..storage._transfer import MAX_IMPORT_BYTES, encode_json, number_memory
from . import _rows
from ._rows import APPENDED, EncodedCommit

__all__ = ["SCHEMA_VERSION", "PostgresStorage"]

# Each step takes the database from version i to i + 1. Never edit a released step; add one.
# Bodies are the exact JSON text the other stores keep (not jsonb, which reorders keys), so
# an export is the same bytes whichever store wrote it.
MIGRATIONS: tuple[str, ...] = (
    # 1: everything the SQLite store holds at its version 3.
    """
    CREATE TABLE agrun_sessions (
        session_id text PRIMARY KEY,
        turn_count integer NOT NULL,
        memory_count integer NOT NULL DEFAULT 0,
        last_committed_at_ms bigint,
        session_memory text,
        inquiry text,
        last_run text
    );
    CREATE TABLE agrun_turns (
        session_id text NOT NULL,
        seq integer NOT NULL,
        turn_id text NOT NULL,
        committed_at_ms bigint,
        PRIMARY KEY (session_id, seq),
        UNIQUE (session_id, turn_id)
    );
    CREATE TABLE agrun_messages (
        session_id text NOT NULL, seq integer NOT NULL, pos integer NOT NULL,
        body text NOT NULL, PRIMARY KEY (session_id, seq, pos)
    );
    CREATE TABLE agrun_events (
        session_id text NOT NULL, seq integer NOT NULL, pos integer NOT NULL,
        body text NOT NULL, PRIMARY KEY (session_id, seq, pos)
    );
    CREATE TABLE agrun_memory_entries (
        session_id text NOT NULL, seq integer NOT NULL, pos integer NOT NULL,
        body text NOT NULL, PRIMARY KEY (session_id, seq, pos)
    );
    CREATE TABLE agrun_global_memory (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text NOT NULL
    );
    CREATE TABLE agrun_content (
        session_id text NOT NULL, ref text NOT NULL, body text NOT NULL,
        PRIMARY KEY (session_id, ref)
    );
    CREATE TABLE agrun_runtime_state (key text PRIMARY KEY, value text NOT NULL);
    """,
    # 2: the title a person gave the conversation.
    """
    ALTER TABLE agrun_sessions ADD COLUMN title text;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

# Only the last turn's events (a resume's read): the query finds that turn itself.
_EVENTS_FROM = "AND seq >= (SELECT coalesce(max(seq), 0) FROM agrun_turns WHERE session_id = %s) "
_PER_SESSION = ("sessions", "turns", "messages", "events", "memory_entries", "content")


def _lock_key(purpose: str, session_id: str) -> int:
    """A signed 64-bit advisory-lock key for one session and purpose, the same in every
    process (Python's ``hash`` is salted per process). Two sessions that collide only wait
    for each other."""
    digest = hashlib.sha256(f"agrun:{purpose}\0{session_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


_MIGRATION_KEY = _lock_key("migrate", "")


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """Turn psycopg's errors into the port's, by whose move it is."""
    try:
        yield
    except StorageError:
        raise
    except (PoolTimeout, psycopg.errors.OperationalError) as error:
        # Unreachable server, dropped connection, deadlock, serialization failure, a
        # cancelled statement: the same call may succeed (the transaction was rolled back).
        if isinstance(error, psycopg.errors.DiskFull | psycopg.errors.OutOfMemory):
            raise StorageFatalError(f"PostgreSQL is out of room: {error}") from error
        raise StorageRetryableError(f"PostgreSQL: {error}; retry the call") from error
    except psycopg.errors.IntegrityError as error:
        raise StorageError(f"PostgreSQL refused the write: {error}") from error
    except psycopg.Error as error:
        raise StorageFatalError(f"PostgreSQL failed: {error}") from error


class PostgresStorage:
    """`Storage` in a PostgreSQL database, through a psycopg connection pool.

    The constructor connects once (synchronously, as SQLite opens its file) to check or
    upgrade the schema; the pool opens at the first call, in the event loop that makes it.

    Args:
        conninfo: a libpq connection string or ``postgresql://`` URL.
        min_size, max_size: the pool's bounds (a turn holds one connection for its lock
            and borrows another to commit).
        timeout_s: how long a call waits for a connection before `StorageRetryableError`.

    Raises (on construction):
        SchemaTooNew: the database was written by a newer agrun.
        StorageRetryableError: no connection (the server is unreachable, or refused the
            login or the database name: libpq does not tell these apart); the message says.
        StorageFatalError: the schema cannot be created (e.g. no CREATE permission).
    """

    def __init__(
        self,
        conninfo: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        timeout_s: float = 30.0,
        max_import_bytes: int = MAX_IMPORT_BYTES,
    ) -> None:
        if not isinstance(conninfo, str) or not conninfo:
            raise ConfigError("PostgresStorage needs a conninfo string (postgresql://...)")
        self.conninfo = conninfo
        self._sizes = (min_size, max(min_size, max_size))
        self._timeout_s = timeout_s
        self._max_import_bytes = max_import_bytes
        self._pool: AsyncConnectionPool | None = None
        self._pool_loop: asyncio.AbstractEventLoop | None = None
        # One task per pool opened: it closes its pool when its loop ends (below).
        self._guards: set[asyncio.Task[None]] = set()
        self._opening: asyncio.Future[AsyncConnectionPool] | None = None
        self._closed = False
        with _translated():
            self._migrate()

    def __repr__(self) -> str:
        return f"PostgresStorage({_redacted(self.conninfo)!r})"

    # -- schema -------------------------------------------------------------------------

    def _migrate(self) -> None:
        with (
            psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10) as db,
            db.transaction(),
        ):
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_KEY,))
            version = 0
            known = db.execute("SELECT to_regclass('agrun_schema')").fetchone()
            if known is not None and known[0] is not None:
                row = db.execute("SELECT max(version) FROM agrun_schema").fetchone()
                version = int(row[0] or 0) if row else 0
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(version, SCHEMA_VERSION, where="PostgreSQL database")
            for step in range(version, SCHEMA_VERSION):
                db.execute(MIGRATIONS[step].encode())
            if version == 0:
                db.execute("CREATE TABLE agrun_schema (version integer NOT NULL)")
                db.execute("INSERT INTO agrun_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
            elif version < SCHEMA_VERSION:
                db.execute("UPDATE agrun_schema SET version = %s", (SCHEMA_VERSION,))

    # -- plumbing -----------------------------------------------------------------------

    async def _get_pool(self) -> AsyncConnectionPool:
        """The pool of the running event loop, opened on first use.

        A pool belongs to the loop it was opened in; a store used from a new loop (each
        ``asyncio.run`` of a script, each test) opens a new one and lets the old go.
        """
        if self._closed:
            raise StorageFatalError("PostgresStorage was closed: open a new one")
        loop = asyncio.get_running_loop()
        if self._pool is not None and self._pool_loop is loop:
            return self._pool
        if self._opening is None or self._pool_loop is not loop:
            self._pool_loop = loop
            self._pool = None
            self._opening = loop.create_future()
            pool = AsyncConnectionPool(
                self.conninfo,
                min_size=self._sizes[0],
                max_size=self._sizes[1],
                timeout=self._timeout_s,
                kwargs={"autocommit": True},
                open=False,
            )
            try:
                await pool.open(wait=True, timeout=self._timeout_s)
            except BaseException as error:
                self._opening.set_exception(error)
                self._opening.exception()  # retrieved: the waiters re-raise it
                self._opening = None
                with contextlib.suppress(Exception):
                    await pool.close()  # its workers would go on trying to connect
                raise
            self._pool = pool
            guard = loop.create_task(_closed_with_its_loop(pool))
            self._guards.add(guard)
            guard.add_done_callback(self._guards.discard)
            self._opening.set_result(pool)
            return pool
        return await asyncio.shield(self._opening)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        with _translated():
            pool = await self._get_pool()
            async with pool.connection() as conn:
                yield conn

    @contextlib.asynccontextmanager
    async def _transaction(self, *, read_only: bool = False) -> AsyncIterator[Any]:
        """A transaction in pipeline mode: statements go out without waiting for each
        other's results, and a round trip is paid only where a result is read."""
        async with self._connection() as conn, conn.pipeline(), conn.transaction():
            if read_only:
                # One snapshot for every statement: another process's turn is seen whole
                # or not at all.
                await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    @contextlib.asynccontextmanager
    async def hold_session(self, session_id: str) -> AsyncIterator[None]:
        """Hold ``session_id``'s turn lock (in every process using this database) while the
        block runs: one worker's turn on a session ends before another's begins.

        The lock lives in a transaction on a connection of its own, held for the block:
        ending the block, an error, or the death of this process ends the transaction and
        releases it.
        """
        async with self._transaction() as conn:
            key = _lock_key("turn", session_id)
            # Read the result: in pipeline mode that is what waits until the lock is held.
            await (await conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))).fetchone()
            yield

    # -- the port -----------------------------------------------------------------------

    async def commit_turn(self, commit: TurnCommit) -> int:
        sid = commit.session_id
        encoded = EncodedCommit.of(commit)  # before the database is touched
        async with self._transaction() as db:
            await db.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key("commit", sid),))
            # A statement after the lock: its snapshot sees every commit made before it.
            found = await (
                await db.execute(
                    "SELECT t.seq, s.turn_count, s.memory_count FROM (SELECT 1) one "
                    "LEFT JOIN agrun_sessions s ON s.session_id = %s "
                    "LEFT JOIN agrun_turns t ON t.session_id = %s AND t.turn_id = %s",
                    (sid, sid, commit.turn_id),
                )
            ).fetchone()
            assert found is not None  # one row, always
            if found[0] is not None:
                return int(found[0])
            row = None if found[1] is None else found[1:]
            seq = (row[0] if row else 0) + 1
            stored_memory = row[1] if row else 0
            memory = [encode_json(e) for e in number_memory(commit.memory_entries, stored_memory)]
            await db.execute(
                """INSERT INTO agrun_sessions (session_id, turn_count, last_committed_at_ms,
                       session_memory, inquiry, last_run, memory_count)
                   VALUES (%s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (session_id) DO UPDATE SET
                       turn_count = excluded.turn_count,
                       memory_count = excluded.memory_count,
                       last_committed_at_ms = coalesce(excluded.last_committed_at_ms,
                           agrun_sessions.last_committed_at_ms),
                       session_memory = coalesce(excluded.session_memory,
                           agrun_sessions.session_memory),
                       inquiry = coalesce(excluded.inquiry, agrun_sessions.inquiry),
                       last_run = coalesce(excluded.last_run, agrun_sessions.last_run)""",
                (sid, seq, commit.committed_at_ms, *encoded.snapshots, stored_memory + len(memory)),
            )
            await db.execute(
                "INSERT INTO agrun_turns (session_id, seq, turn_id, committed_at_ms) "
                "VALUES (%s, %s, %s, %s)",
                (sid, seq, commit.turn_id, commit.committed_at_ms),
            )
            async with db.cursor() as cur:
                for table, bodies in (
                    ("messages", encoded.messages),
                    ("events", encoded.events),
                    ("memory_entries", memory),
                ):
                    rows = [(sid, seq, pos, body) for pos, body in enumerate(bodies)]
                    await _insert_bodies(cur, table, rows)
                if commit.evicted_content_refs:
                    await cur.execute(
                        "DELETE FROM agrun_content WHERE session_id = %s AND ref = ANY(%s)",
                        (sid, list(commit.evicted_content_refs)),
                    )
                if encoded.content:
                    await cur.executemany(
                        "INSERT INTO agrun_content (session_id, ref, body) "
                        "VALUES (%s, %s, %s) "
                        "ON CONFLICT (session_id, ref) DO UPDATE SET body = excluded.body",
                        encoded.content,
                    )
                if encoded.snapshots[2] is not None:
                    await cur.execute(
                        "INSERT INTO agrun_runtime_state (key, value) VALUES ('lastRun', %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (encoded.snapshots[2],),
                    )
                if encoded.promoted:
                    await cur.executemany(
                        "INSERT INTO agrun_global_memory (body) VALUES (%s)", encoded.promoted
                    )
        return seq

    async def load_session(
        self, session_id: str, *, all_events: bool = True
    ) -> SessionSnapshot | None:
        damage: list[str] = []
        async with self._transaction(read_only=True) as db:
            # Every query goes out at once, one round trip. Without all events, the events
            # start at the last turn, which the query finds for itself.
            head = await db.execute(
                "SELECT session_memory, inquiry, last_run FROM agrun_sessions "
                "WHERE session_id = %s",
                (session_id,),
            )
            turns = await db.execute(
                "SELECT seq, turn_id, committed_at_ms FROM agrun_turns "
                "WHERE session_id = %s ORDER BY seq",
                (session_id,),
            )
            appended = {
                table: await db.execute(
                    f"SELECT seq, pos, body FROM agrun_{table} WHERE session_id = %s "
                    f"{_EVENTS_FROM if table == 'events' and not all_events else ''}"
                    "ORDER BY seq, pos",
                    (session_id,) * (2 if table == "events" and not all_events else 1),
                )
                for table, _ in APPENDED
            }
            content = await db.execute(
                "SELECT ref, body FROM agrun_content WHERE session_id = %s "
                'ORDER BY ref COLLATE "C"',
                (session_id,),
            )
            session_row = await head.fetchone()
            if session_row is None:
                return None
            raw = _rows.raw_session(
                session_row,
                await turns.fetchall(),
                {
                    table: _rows.appended_by_seq(table, await cur.fetchall(), damage)
                    for table, cur in appended.items()
                },
                await content.fetchall(),
                damage,
            )
        snapshot = read_snapshot(raw, session_id)
        if not damage:
            return snapshot
        return snapshot.model_copy(update={"damage": (*damage, *snapshot.damage)})

    async def session_info(self, session_id: str) -> SessionInfo | None:
        async with self._connection() as db:
            row = await (
                await db.execute(
                    "SELECT turn_count, last_committed_at_ms, title FROM agrun_sessions "
                    "WHERE session_id = %s",
                    (session_id,),
                )
            ).fetchone()
        if row is None:
            return None
        return SessionInfo(
            session_id=session_id, turn_count=row[0], last_committed_at_ms=row[1], title=row[2]
        )

    async def list_sessions(self) -> list[SessionInfo]:
        async with self._connection() as db:
            rows = await (
                await db.execute(
                    "SELECT session_id, turn_count, last_committed_at_ms, title "
                    'FROM agrun_sessions ORDER BY session_id COLLATE "C"'
                )
            ).fetchall()
        return [
            SessionInfo(session_id=sid, turn_count=count, last_committed_at_ms=at, title=title)
            for sid, count, at, title in rows
        ]

    async def rename_session(self, session_id: str, title: str | None) -> None:
        async with self._transaction() as db:
            await db.execute(
                "INSERT INTO agrun_sessions (session_id, turn_count, title) VALUES (%s, 0, %s) "
                "ON CONFLICT (session_id) DO UPDATE SET title = excluded.title",
                (session_id, title),
            )

    async def clear_session(self, session_id: str) -> bool:
        return await self._empty(session_id, keep=True)

    async def delete_session(self, session_id: str) -> bool:
        return await self._empty(session_id, keep=False)

    async def _empty(self, session_id: str, *, keep: bool) -> bool:
        """Remove the session's turns and what they stored; ``keep`` its row and title."""
        async with self._transaction() as db:
            # The commit lock: no turn of this session is written halfway through.
            await db.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key("commit", session_id),))
            for table in _PER_SESSION[1:]:
                await db.execute(f"DELETE FROM agrun_{table} WHERE session_id = %s", (session_id,))
            if keep:
                done = await db.execute(
                    "UPDATE agrun_sessions SET turn_count = 0, memory_count = 0, "
                    "last_committed_at_ms = NULL, session_memory = NULL, inquiry = NULL, "
                    "last_run = NULL WHERE session_id = %s RETURNING 1",
                    (session_id,),
                )
            else:
                done = await db.execute(
                    "DELETE FROM agrun_sessions WHERE session_id = %s RETURNING 1", (session_id,)
                )
            return await done.fetchone() is not None

    async def read_runtime_state(self) -> RuntimeStateRecord:
        async with self._connection() as db:
            row = await (
                await db.execute("SELECT value FROM agrun_runtime_state WHERE key = 'lastRun'")
            ).fetchone()
        return RuntimeStateRecord(last_run=_rows.loads(row[0]) if row else None)

    async def read_global_memory(self) -> list[JsonObject]:
        async with self._connection() as db:
            rows = await (
                await db.execute("SELECT body FROM agrun_global_memory ORDER BY id")
            ).fetchall()
        return [_rows.loads(body) for (body,) in rows]

    async def append_global_memory(self, entries: Sequence[JsonObject]) -> None:
        bodies = [(encode_json(e),) for e in entries]
        if not bodies:
            await self._get_pool_checked()
            return
        async with self._transaction() as db, db.cursor() as cur:
            await cur.executemany("INSERT INTO agrun_global_memory (body) VALUES (%s)", bodies)

    async def import_session(self, json_text: str | bytes, *, replace: bool = False) -> str:
        snapshot = parse_session(json_text, max_bytes=self._max_import_bytes)
        sid = snapshot.session_id
        # Encoded before the database is touched.
        head = _rows.session_row(snapshot)
        appended = {table: _rows.appended_rows(snapshot, field) for table, field in APPENDED}
        content = [(sid, e["ref"], encode_json(e)) for e in snapshot.content_entries]
        async with self._transaction() as db:
            # The commit lock: no turn of this session is written halfway through.
            await db.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key("commit", sid),))
            exists = await (
                await db.execute("SELECT title FROM agrun_sessions WHERE session_id = %s", (sid,))
            ).fetchone()
            if exists and not replace:
                raise ImportRejected(
                    f"session {sid!r} is already stored: pass replace=True to overwrite it"
                )
            async with db.cursor() as cur:
                for table in _PER_SESSION:
                    await cur.execute(f"DELETE FROM agrun_{table} WHERE session_id = %s", (sid,))
                # An export file carries no title: a replaced session keeps the one it had.
                await cur.execute(
                    "INSERT INTO agrun_sessions (session_id, turn_count, "
                    "last_committed_at_ms, session_memory, inquiry, last_run, memory_count, "
                    "title) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    (*head, exists[0] if exists else None),
                )
                if snapshot.turns:
                    await cur.executemany(
                        "INSERT INTO agrun_turns (session_id, seq, turn_id, committed_at_ms) "
                        "VALUES (%s, %s, %s, %s)",
                        [(sid, t.seq, t.turn_id, t.committed_at_ms) for t in snapshot.turns],
                    )
                for table, rows in appended.items():
                    await _insert_bodies(cur, table, rows)
                if content:
                    await cur.executemany(
                        "INSERT INTO agrun_content (session_id, ref, body) VALUES (%s, %s, %s)",
                        content,
                    )
        return sid

    async def export_session(self, session_id: str) -> str:
        snapshot = await self.load_session(session_id)
        if snapshot is None:
            raise SessionNotFound(session_id)
        return dump_session(snapshot)

    async def close(self) -> None:
        self._closed = True
        pool, self._pool, self._opening = self._pool, None, None
        if pool is not None and self._pool_loop is asyncio.get_running_loop():
            await pool.close()
        running = asyncio.get_running_loop()
        for guard in list(self._guards):
            if guard.get_loop() is running:
                guard.cancel()

    async def _get_pool_checked(self) -> None:
        with _translated():
            await self._get_pool()


async def _closed_with_its_loop(pool: AsyncConnectionPool) -> None:
    """Wait until cancelled, then close ``pool``: what ``asyncio.run`` does to the tasks left
    when its ``main`` returns. A pool left open then had its maintenance workers cancelled
    at the same moment, and one cancelled while it opened a connection could swallow the
    cancellation and wait on its queue for ever, so the loop never ended (a script, or a
    test, hung at its end). Closing the pool hands each worker its stop."""
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        with contextlib.suppress(Exception):
            await pool.close()


async def _insert_bodies(
    cur: psycopg.AsyncCursor[Any], table: str, rows: Sequence[tuple[str, int, int, str]]
) -> None:
    """Insert (session id, seq, pos, body) rows into ``agrun_<table>``."""
    if rows:
        await cur.executemany(
            f"INSERT INTO agrun_{table} (session_id, seq, pos, body) VALUES (%s, %s, %s, %s)",
            rows,
        )


def _redacted(conninfo: str) -> str:
    """The conninfo without its password, for messages and reprs."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.Error:
        return "<conninfo>"
    params.pop("password", None)
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in params.items()})
