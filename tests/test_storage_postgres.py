"""PostgreSQL: what the port suite cannot show with one process — many processes on one
session, kills mid-commit, the turn lock, schema versions, `create_runtime` by URL.

All against the real server the test run starts (conftest.py `postgres_server`); CPython only.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import agrun
from agrun.storage import SchemaTooNew, StorageError, StorageFatalError, TurnCommit
from test_storage_port import CRASH_WRITER, every_session_whole

pytestmark = pytest.mark.cpython_only

_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def _turn(session_id: str, n: int, **extra: Any) -> TurnCommit:
    return TurnCommit(
        session_id=session_id,
        turn_id=f"t{n}",
        committed_at_ms=1000 + n,
        messages=[{"id": f"m{n}", "role": "user", "text": f"q{n}"}],
        session_memory={"turns": n},
        last_run={"runId": f"r{n}"},
        **extra,
    )


def _raw(conninfo: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        cur = conn.execute(sql.encode(), params or None)
        return cur.fetchall() if cur.description else []


# -- create_runtime by URL -------------------------------------------------------------------


async def test_create_runtime_takes_a_postgresql_url_and_a_second_process_resumes(
    postgres_conninfo: str,
) -> None:
    from agrun.adapters.postgres import PostgresStorage

    rt = agrun.create_runtime(storage=postgres_conninfo, session_id="chat")
    assert rt.storage_status()["persistent"] is True
    assert isinstance(rt._keeper.storage if rt._keeper else None, PostgresStorage)
    assert (await rt.run("remember the blue door")).ok
    script = textwrap.dedent(
        """
        import asyncio, json, sys, agrun
        async def main():
            rt = agrun.create_runtime(storage=sys.argv[1], session_id="chat")
            await rt.open()
            print(json.dumps([m.content for m in rt.history]))
        asyncio.run(main())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, postgres_conninfo],
        capture_output=True, text=True, env=_ENV, check=True, timeout=60,
    ).stdout  # fmt: skip
    assert json.loads(out) == [m.content for m in rt.history]
    assert json.loads(out)[0] == "remember the blue door"


def test_importing_agrun_and_using_sqlite_never_loads_psycopg(tmp_path: Path) -> None:
    probe = textwrap.dedent(
        """
        import asyncio, sys, agrun
        rt = agrun.create_runtime(storage=sys.argv[1])
        asyncio.run(rt.run("hi"))
        print("psycopg" in sys.modules, "psycopg_pool" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "x.db")],
        capture_output=True, text=True, env=_ENV, check=True, timeout=60,
    ).stdout  # fmt: skip
    assert out.split() == ["False", "False"]


def test_an_unreachable_server_is_a_retryable_error_naming_it(tmp_path: Path) -> None:
    from agrun.adapters.postgres import PostgresStorage

    with pytest.raises(StorageError, match="PostgreSQL") as caught:
        PostgresStorage(f"postgresql:///agrun?host={tmp_path}&user=agrun")
    assert caught.value.code == "storage_retryable"


# -- schema ----------------------------------------------------------------------------------


async def test_schema_version_is_recorded_and_a_newer_one_refused_untouched(
    postgres_conninfo: str,
) -> None:
    from agrun.adapters.postgres import SCHEMA_VERSION, PostgresStorage

    store = PostgresStorage(postgres_conninfo)
    await store.commit_turn(_turn("s1", 1))
    await store.close()
    assert _raw(postgres_conninfo, "SELECT version FROM agrun_schema") == [(SCHEMA_VERSION,)]
    # Opening again runs no step twice (the tables exist: a rerun would fail).
    again = PostgresStorage(postgres_conninfo)
    assert (await again.session_info("s1")) is not None
    await again.close()
    _raw(postgres_conninfo, "UPDATE agrun_schema SET version = %s", (SCHEMA_VERSION + 1,))
    before = _raw(postgres_conninfo, "SELECT * FROM agrun_turns")
    with pytest.raises(SchemaTooNew, match=f"schema version {SCHEMA_VERSION + 1}") as caught:
        PostgresStorage(postgres_conninfo)
    assert isinstance(caught.value, StorageFatalError)
    assert _raw(postgres_conninfo, "SELECT * FROM agrun_turns") == before
    assert _raw(postgres_conninfo, "SELECT version FROM agrun_schema") == [(SCHEMA_VERSION + 1,)]


def test_processes_opening_a_new_database_together_create_the_schema_once(
    postgres_conninfo: str,
) -> None:
    script = (
        "import sys; from agrun.adapters.postgres import PostgresStorage; "
        "PostgresStorage(sys.argv[1])"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, postgres_conninfo], env=_ENV,
                         stderr=subprocess.PIPE)
        for _ in range(4)
    ]  # fmt: skip
    errors = [p.communicate(timeout=60)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errors
    assert _raw(postgres_conninfo, "SELECT count(*) FROM agrun_schema") == [(1,)]


async def test_a_failure_inside_the_transaction_writes_none_of_the_turn(
    postgres_conninfo: str,
) -> None:
    from agrun.adapters.postgres import PostgresStorage

    store = PostgresStorage(postgres_conninfo)
    await store.commit_turn(_turn("s1", 1, global_memory=[{"text": "g1"}]))
    # A fault injected by the database itself, after the turn's other rows went in.
    _raw(
        postgres_conninfo,
        """
        CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.body LIKE '%boom%' THEN RAISE EXCEPTION 'injected fault'; END IF;
        RETURN NEW; END $$;
        CREATE TRIGGER boom BEFORE INSERT ON agrun_global_memory
            FOR EACH ROW EXECUTE FUNCTION boom();
        """,
    )
    with pytest.raises(StorageError, match="injected fault"):
        await store.commit_turn(_turn("s1", 2, global_memory=[{"text": "boom"}]))
    snap = await store.load_session("s1")
    assert snap is not None and snap.turn_count == 1 and snap.session_memory == {"turns": 1}
    assert (await store.read_runtime_state()).last_run == {"runId": "r1"}
    assert await store.read_global_memory() == [{"text": "g1"}]
    assert await store.commit_turn(_turn("s1", 2)) == 2
    await store.close()


# -- many processes --------------------------------------------------------------------------


async def test_sessions_are_whole_after_concurrent_writers_are_killed_mid_commit(
    postgres_conninfo: str,
) -> None:
    from agrun.adapters.postgres import PostgresStorage

    for round_ in range(4):
        procs = [
            subprocess.Popen([sys.executable, "-c", CRASH_WRITER, "postgres", postgres_conninfo],
                             stdout=subprocess.PIPE, env=_ENV)
            for _ in range(3)
        ]  # fmt: skip
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        time.sleep(0.01 + 0.02 * round_)
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
        for proc in procs:
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()
    store = PostgresStorage(postgres_conninfo)
    snaps = await every_session_whole(store)
    for snap in snaps:
        # Memory entries are numbered by the store: unique and gapless across writers.
        assert [e["seq"] for e in snap.memory_entries] == list(range(1, snap.turn_count + 1))
    total = sum(snap.turn_count for snap in snaps)
    assert total >= 4 * 3
    await store.close()


TURN_WORKER = textwrap.dedent(
    """
    import asyncio, sys, agrun

    async def main():
        conninfo, name, turns = sys.argv[1], sys.argv[2], int(sys.argv[3])
        rt = None
        seen = []

        def skill(input, context, helpers):
            # What this turn saw of the session when it began: a turn that interleaved
            # with another process's would see one turn too few.
            return f"{len(rt.history) // 2} {name}"

        rt = agrun.create_runtime(
            storage=conninfo, session_id="shared", skills=[agrun.FunctionSkill("note", skill)]
        )
        for _ in range(turns):
            result = await rt.run("turn", skill="note")
            assert result.ok, result.error
            await asyncio.sleep(0)
        print("done", flush=True)

    asyncio.run(main())
    """
)


async def test_two_processes_on_one_session_take_turns_without_interleaving(
    postgres_conninfo: str,
) -> None:
    from agrun.adapters.postgres import PostgresStorage

    turns = 8
    procs = [
        subprocess.Popen([sys.executable, "-c", TURN_WORKER, postgres_conninfo, name, str(turns)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_ENV)
        for name in ("a", "b")
    ]  # fmt: skip
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err.decode()[-2000:] for _, err in outs]
    store = PostgresStorage(postgres_conninfo)
    snap = await store.load_session("shared")
    await store.close()
    assert snap is not None and snap.turn_count == 2 * turns
    replies = [m["content"].split() for m in snap.messages if m["role"] == "assistant"]
    # Turn k began after turns 1..k-1 were committed, by whichever process.
    assert [int(seen) for seen, _ in replies] == list(range(2 * turns))
    assert sorted(by for _, by in replies) == ["a"] * turns + ["b"] * turns


HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from agrun.adapters.postgres import PostgresStorage

    async def main():
        store = PostgresStorage(sys.argv[1])
        async with store.hold_session("s1"):
            print("holding", flush=True)
            await asyncio.sleep(600)

    asyncio.run(main())
    """
)


async def test_the_turn_lock_waits_for_its_holder_and_is_freed_when_the_holder_dies(
    postgres_conninfo: str,
) -> None:
    from agrun.adapters.postgres import PostgresStorage

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, postgres_conninfo], stdout=subprocess.PIPE, env=_ENV
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"holding"
    store = PostgresStorage(postgres_conninfo)

    entered: list[str] = []

    async def take() -> None:
        async with store.hold_session("s1"):
            entered.append("s1")

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(take(), 0.5)
    assert entered == []  # the block never ran while the other process held the lock
    async with store.hold_session("s2"):  # another session is not held up
        pass
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    holder.stdout.close()
    await asyncio.wait_for(take(), 10)
    assert entered == ["s1"]
    await store.close()


def test_a_loop_that_ends_without_closing_the_store_closes_its_pool(
    postgres_conninfo: str,
) -> None:
    # What a script does: asyncio.run(main) that uses the store and never closes it. The
    # loop's end closes the pool (its workers get their stop rather than only a
    # cancellation, which one of them could swallow and wait for ever); the store opens a
    # new pool in the next loop.
    from agrun.adapters.postgres import PostgresStorage

    store = PostgresStorage(postgres_conninfo)
    pools: list[Any] = []

    async def main() -> None:
        await store.list_sessions()
        pools.append(store._pool)

    asyncio.run(main())
    assert pools[0] is not None and pools[0].closed
    asyncio.run(main())
    assert pools[1] is not pools[0] and pools[1].closed
