"""Persistence cost in CPython: commit one turn, resume a 1,000-turn session, bytes per turn.

Run: .venv/bin/python bench/storage_commit.py

Each turn is the realistic ~5 KB turn of bench/_turns.py (2 messages, 5 events, a memory
entry, session-memory and inquiry snapshots, one 1.5 KB content entry, lastRun). SQLite runs
with WAL and synchronous=FULL, as the adapter always does: every commit is on disk when it
returns. The in-memory store is the floor.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _turns import turn_fields
from agrun.adapters.sqlite import SqliteStorage
from agrun.ports import Storage
from agrun.storage import MemoryStorage, TurnCommit

TURNS = 1000
RESUMES = 7


def commit(n: int) -> TurnCommit:
    return TurnCommit(session_id="bench", turn_id=f"t{n}", **turn_fields(n))


async def measure(store: Storage) -> tuple[list[float], list[float]]:
    commits = []
    for n in range(1, TURNS + 1):
        record = commit(n)
        start = time.perf_counter()
        await store.commit_turn(record)
        commits.append(time.perf_counter() - start)
    resumes = []
    for _ in range(RESUMES):
        start = time.perf_counter()
        snap = await store.load_session("bench")
        resumes.append(time.perf_counter() - start)
        assert snap is not None and snap.turn_count == TURNS
    return commits, resumes


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


async def main() -> None:
    payload = len(commit(1).model_dump_json(by_alias=True))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite3"
        sqlite = SqliteStorage(path)
        commits, resumes = await measure(sqlite)
        sqlite._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        await sqlite.close()
        per_turn = path.stat().st_size / TURNS
        rows.append(("sqlite", commits, resumes, f"{per_turn:,.0f}"))
    memory = MemoryStorage()
    commits, resumes = await measure(memory)
    rows.append(("memory", commits, resumes, "-"))
    print(f"{TURNS} turns of ~{payload:,} bytes of JSON each (session id 'bench')")
    header = ("store", "commit p50 ms", "commit p95 ms", "resume 1000 ms", "bytes/turn")
    print("{:<8}{:>15}{:>15}{:>16}{:>12}".format(*header))
    for name, commits, resumes, size in rows:
        p95 = statistics.quantiles(commits, n=20)[-1]
        print(
            f"{name:<8}{ms(statistics.median(commits)):>15}{ms(p95):>15}"
            f"{ms(statistics.median(resumes)):>16}{size:>12}"
        )


if __name__ == "__main__":
    asyncio.run(main())
