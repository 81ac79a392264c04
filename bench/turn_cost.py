"""What agrun's own work costs per model turn, in CPython, with no model and no network.

    .venv/bin/python bench/turn_cost.py [--turns 80] [--storage memory|sqlite] [--json PATH]

A `ScriptedProvider` answers at once, so a turn's time is agrun's alone: the context build,
the request, the reply, the turn's close, its trace (for ``why``) and the commit. One
session grows to ``--turns`` turns; the figures are the medians over its second half (a
session past its first few turns, whose pack is full). Prints the wall and CPU time per turn;
CPU time is what other load on the machine disturbs least.

Run it on two checkouts (``PYTHONPATH=<checkout>/py``) to compare them; docs/performance.md
gives the figures for issue 25.5's steps.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import agrun
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider


async def session(turns: int, storage_kind: str) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        if storage_kind == "sqlite":
            from agrun.adapters.sqlite import SqliteStorage

            storage: object = SqliteStorage(Path(tmp) / "bench.sqlite3")
        else:
            storage = MemoryStorage()
        runtime = agrun.create_runtime(
            provider=ScriptedProvider(lambda request: "Hello, world!"),
            model="bench-1",
            memory_extraction="rules",
            storage=storage,
        )
        wall: list[float] = []
        cpu: list[float] = []
        for n in range(turns):
            start, start_cpu = time.perf_counter(), time.process_time()
            result = await runtime.run(f"turn {n}: what is the weather like in Paris today?")
            wall.append((time.perf_counter() - start) * 1e3)
            cpu.append((time.process_time() - start_cpu) * 1e3)
            if not result.ok:
                raise RuntimeError(f"turn {n} failed: {result.error}")
        close = getattr(storage, "close", None)
        if close is not None:
            await close()
    half = turns // 2
    return wall[half:], cpu[half:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=80)
    parser.add_argument("--storage", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--json", metavar="PATH", help="also write the medians as JSON")
    args = parser.parse_args()
    wall, cpu = asyncio.run(session(args.turns, args.storage))
    figures = {"wall_ms": statistics.median(wall), "cpu_ms": statistics.median(cpu)}
    print(
        f"{args.storage} storage, turns {args.turns // 2 + 1}-{args.turns}: "
        f"median {figures['wall_ms']:.2f} ms wall, {figures['cpu_ms']:.2f} ms CPU per turn"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"storage": args.storage, **figures}) + "\n")


if __name__ == "__main__":
    main()
