"""What agrun's own work costs per model turn, in CPython, with no model and no network.

    .venv/bin/python bench/turn_cost.py [--turns 80] [--storage memory|sqlite] [--json PATH]

A `ScriptedProvider` answers at once, so a turn's time is agrun's alone: the context build,
the request, the reply, the turn's close, its trace (for ``why``) and the commit. One
session grows to ``--turns`` turns; the figures are the medians over its second half (a
session past its first few turns, whose pack is full). Prints the wall and CPU time per turn;
CPU time is what other load on the machine disturbs least. Then the last turn's trace is
stored again ``--puts`` times in a `TraceStore` made as a runtime makes its own (scrubbed,
checked by the sensitive-content filter, kept as a content entry): the step issue 25.5 found
costing most.

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
from agrun.sensitive import PatternRedactor, SensitiveContentFilter
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider
from agrun.trace import RunTrace, TraceStore


async def session(turns: int, storage_kind: str) -> tuple[list[float], list[float], RunTrace]:
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
            await runtime.idle()  # the whole turn: its trace is kept after the answer
            wall.append((time.perf_counter() - start) * 1e3)
            cpu.append((time.process_time() - start_cpu) * 1e3)
            if not result.ok:
                raise RuntimeError(f"turn {n} failed: {result.error}")
        trace = runtime.why(result.state.run_id)
        close = getattr(storage, "close", None)
        if close is not None:
            await close()
    half = turns // 2
    return wall[half:], cpu[half:], trace


def trace_puts(trace: RunTrace, puts: int) -> list[float]:
    """CPU ms of each of ``puts`` stores of ``trace``."""
    redactor = PatternRedactor()
    store = TraceStore(SensitiveContentFilter(redactor=redactor), scrub=redactor.redact)
    times = []
    for n in range(puts):
        start = time.process_time()
        if not store.put(trace, n):
            raise RuntimeError("the trace was not kept")
        times.append((time.process_time() - start) * 1e3)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=80)
    parser.add_argument("--storage", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--puts", type=int, default=60)
    parser.add_argument("--json", metavar="PATH", help="also write the medians as JSON")
    args = parser.parse_args()
    wall, cpu, trace = asyncio.run(session(args.turns, args.storage))
    puts = trace_puts(trace, args.puts)
    figures = {
        "wall_ms": statistics.median(wall),
        "cpu_ms": statistics.median(cpu),
        "trace_put_cpu_ms": statistics.median(puts),
    }
    print(
        f"{args.storage} storage, turns {args.turns // 2 + 1}-{args.turns}: "
        f"median {figures['wall_ms']:.2f} ms wall, {figures['cpu_ms']:.2f} ms CPU per turn; "
        f"the last trace stored: median {figures['trace_put_cpu_ms']:.2f} ms CPU"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"storage": args.storage, **figures}) + "\n")


if __name__ == "__main__":
    main()
