"""Many worker processes sharing sessions, killed at random mid-turn: PostgreSQL against SQLite.

Run: .venv/bin/python bench/postgres_load.py            (8 workers x 200 sessions x 20 turns)
     .venv/bin/python bench/postgres_load.py --quick    (4 x 24 x 6, a minute or two)
     ... --workers 8 --sessions 40 --turns 10 --kills 12 --stores postgres,sqlite

Every turn is a real `Runtime.run` (a skill, no model) on a runtime each worker keeps per
session; any worker may take any session's next turn, and two workers often hold turns of
one session at once. A coordinator hands out the turns (shuffled) and, now and then, kills a
busy worker with SIGKILL, starts a new one and hands the killed worker's turn out again. At
the end it reads every session back and counts:

- lost: a turn a worker reported done (its run returned, nothing pending) that is not stored;
- interleaved: a turn that began without seeing every turn stored before it (its skill says
  how many turns the runtime held when it ran; it must be its seq - 1);
- seq: each session's seqs must be 1..n (unique, no gap);
- redone: a killed turn that had committed before the kill and was run again (what a client
  that retries a request it got no answer for gets: at least once);
- turns/s over the run, and the p50 / p95 of one `commit_turn` call in the workers.

PostgreSQL runs on a throwaway server (tools/pg_server.py) with fsync on, or on --conninfo;
SQLite on one file (WAL, synchronous=FULL) that every worker opens. SQLite has no lock across
processes for a whole turn, so its interleaved count shows what the turn lock is for.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import agrun  # noqa: E402
from agrun.ports import Storage  # noqa: E402


def open_store(kind: str, where: str) -> Storage:
    if kind == "postgres":
        from agrun.adapters.postgres import PostgresStorage

        return PostgresStorage(where)
    from agrun.adapters.sqlite import SqliteStorage

    return SqliteStorage(where)


# -- a worker ----------------------------------------------------------------------------------


def worker(kind: str, where: str, pipe: Connection) -> None:
    asyncio.run(_work(kind, where, pipe))


async def _work(kind: str, where: str, pipe: Connection) -> None:
    store = open_store(kind, where)
    commit = store.commit_turn
    commit_s: list[float] = []

    async def timed(record: Any) -> int:
        start = time.perf_counter()
        try:
            return await commit(record)
        finally:
            commit_s.append(time.perf_counter() - start)

    store.commit_turn = timed  # type: ignore[method-assign]
    runtimes: dict[str, agrun.Runtime] = {}

    def runtime(sid: str) -> agrun.Runtime:
        if sid not in runtimes:
            holder: list[agrun.Runtime] = []

            def seen(input: str, context: Any, helpers: Any) -> str:
                # How many turns of the session this turn saw when it ran.
                return f"seen {len(holder[0].history) // 2}"

            holder.append(
                agrun.create_runtime(
                    storage=store, session_id=sid, skills=[agrun.FunctionSkill("seen", seen)]
                )
            )
            runtimes[sid] = holder[0]
        return runtimes[sid]

    pipe.send(("ready",))
    loop = asyncio.get_running_loop()
    while True:
        task = await loop.run_in_executor(None, pipe.recv)
        if task[0] == "stop":
            break
        _, sid, label = task
        rt = runtime(sid)
        result = await rt.run(label, skill="seen")
        pending = rt.storage_status()["pending"]
        pipe.send(("done", label, result.ok and pending == 0, commit_s[-1:]))
    # Turns whose commit failed wait in their runtime: one more try each before leaving.
    left = 0
    for rt in runtimes.values():
        if rt.storage_status()["pending"]:
            await rt.open()
            left += rt.storage_status()["pending"]
    pipe.send(("stopped", left, commit_s))
    await store.close()


# -- the coordinator ---------------------------------------------------------------------------


class Fleet:
    """The workers, the turn each is running, and the kills."""

    def __init__(self, kind: str, where: str, size: int) -> None:
        self.ctx = mp.get_context("fork")
        self.kind, self.where = kind, where
        self.procs: dict[int, tuple[Any, Connection]] = {}
        self.busy: dict[int, tuple[str, str]] = {}
        for _ in range(size):
            self.spawn()

    def spawn(self) -> int:
        mine, theirs = self.ctx.Pipe()
        proc = self.ctx.Process(target=worker, args=(self.kind, self.where, theirs))
        proc.start()
        theirs.close()
        assert mine.recv() == ("ready",)
        assert proc.pid is not None
        self.procs[proc.pid] = (proc, mine)
        return proc.pid

    def kill(self, pid: int) -> tuple[str, str]:
        proc, pipe = self.procs.pop(pid)
        proc.kill()  # SIGKILL: no cleanup, no goodbye to the server
        proc.join()
        pipe.close()
        return self.busy.pop(pid)


def run_load(kind: str, where: str, args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    todo: list[tuple[str, str]] = [
        (f"s{s:04d}", f"s{s:04d}#{t}@0") for s in range(args.sessions) for t in range(args.turns)
    ]
    rng.shuffle(todo)
    total = len(todo)
    kill_every = max(1, total // (args.kills + 1)) if args.kills else 0
    fleet = Fleet(kind, where, args.workers)
    acked: dict[str, bool] = {}
    killed: list[str] = []
    commit_s: list[float] = []
    done = 0
    start = time.perf_counter()
    while todo or fleet.busy:
        for pid, (_, pipe) in fleet.procs.items():
            if pid not in fleet.busy and todo:
                sid, label = fleet.busy[pid] = todo.pop()
                pipe.send(("turn", sid, label))
        if kill_every and len(killed) < args.kills and done >= kill_every * (len(killed) + 1):
            # Kill a worker in the middle of its turn; the turn goes out again.
            sid, label = fleet.kill(rng.choice(sorted(fleet.busy)))
            killed.append(label)
            base, attempt = label.rsplit("@", 1)
            todo.append((sid, f"{base}@{int(attempt) + 1}"))
            fleet.spawn()
            continue
        by_pipe = {pipe: pid for pid, (_, pipe) in fleet.procs.items()}
        for pipe in wait(list(by_pipe)):
            message = pipe.recv()  # type: ignore[union-attr]
            assert message[0] == "done", message
            _, label, durable, commits = message
            acked[label] = durable
            commit_s.extend(commits)
            del fleet.busy[by_pipe[pipe]]  # type: ignore[index]
            done += 1
    elapsed = time.perf_counter() - start
    left = 0
    for proc, pipe in fleet.procs.values():
        pipe.send(("stop",))
        _, still_pending, _ = pipe.recv()
        left += still_pending
        proc.join()
    return {
        "elapsed": elapsed,
        "acked": acked,
        "killed": killed,
        "commit_s": commit_s,
        "pending": left,
    }


async def verify(kind: str, where: str, run: dict[str, Any]) -> dict[str, Any]:
    store = open_store(kind, where)
    stored: Counter[str] = Counter()
    interleaved = bad_seq = turns = 0
    for info in await store.list_sessions():
        snap = await store.load_session(info.session_id)
        assert snap is not None
        if [t.seq for t in snap.turns] != list(range(1, snap.turn_count + 1)):
            bad_seq += 1
        for t in snap.turns:
            turns += 1
            said = [m["content"] for m in t.messages]
            stored[said[0].rsplit("@", 1)[0]] += 1
            if said[1] != f"seen {t.seq - 1}":
                interleaved += 1
    await store.close()
    acked = [label.rsplit("@", 1)[0] for label, durable in run["acked"].items() if durable]
    lost = sum(1 for base in acked if stored[base] == 0)
    redone = sum(1 for base, n in stored.items() if n > 1)
    return {
        "turns": turns,
        "lost": lost,
        "interleaved": interleaved,
        "bad_seq_sessions": bad_seq,
        "redone": redone,
    }


def report(kind: str, run: dict[str, Any], checked: dict[str, Any]) -> str:
    commits = run["commit_s"]
    p95 = statistics.quantiles(commits, n=20)[-1] if len(commits) > 1 else float("nan")
    rate = len(run["acked"]) / run["elapsed"]
    return (
        f"{kind:<9}{checked['turns']:>7}{rate:>9.1f}{statistics.median(commits) * 1000:>10.2f}"
        f"{p95 * 1000:>10.2f}{len(run['killed']):>7}{checked['lost']:>6}"
        f"{checked['interleaved']:>13}{checked['bad_seq_sessions']:>9}{checked['redone']:>8}"
        f"{run['pending']:>9}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--kills", type=int, default=None, help="default: 1 per 250 turns")
    parser.add_argument("--quick", action="store_true", help="4 workers x 24 sessions x 6 turns")
    parser.add_argument("--stores", default="postgres,sqlite")
    parser.add_argument("--conninfo", help="an existing (empty) PostgreSQL database")
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()
    if args.quick:
        args.workers, args.sessions, args.turns = 4, 24, 6
    if args.kills is None:
        args.kills = max(2, args.sessions * args.turns // 250)
    print(
        f"{args.workers} workers x {args.sessions} sessions x {args.turns} turns, "
        f"{args.kills} kills mid-turn, seed {args.seed}"
    )
    print(
        f"{'store':<9}{'turns':>7}{'turns/s':>9}{'p50 ms':>10}{'p95 ms':>10}{'kills':>7}"
        f"{'lost':>6}{'interleaved':>13}{'bad seq':>9}{'redone':>8}{'pending':>9}"
    )
    for kind in args.stores.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            if kind == "postgres" and args.conninfo is None:
                from pg_server import throwaway_server

                with throwaway_server(durable=True) as server:
                    where = server.conninfo
                    run = run_load(kind, where, args)
                    checked = asyncio.run(verify(kind, where, run))
            else:
                where = args.conninfo if kind == "postgres" else str(Path(tmp) / "load.sqlite3")
                run = run_load(kind, where, args)
                checked = asyncio.run(verify(kind, where, run))
        print(report(kind, run, checked), flush=True)


if __name__ == "__main__":
    main()
