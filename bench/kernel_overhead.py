"""The kernel's own cost per run: a no-op skill, 1,000 runs, in CPython.

Run: .venv/bin/python bench/kernel_overhead.py [--runs 1000] [--repeat 5]

The no-op skill returns None at once, so what is timed is the kernel: five OODAE phases,
the transitions, the state snapshots, the steps trace, the events and the final result.
Rows:

- ``bare await``: awaiting the skill directly, the floor;
- ``run(), no memory``: ``remember_observations=False`` and a skill that returns None;
- ``run(), echo + memory``: the built-in echo skill, its observation appended each run
  (memory grows to ``--runs`` entries);
- ``run(), + subscriber``: as the first run() row with one event subscriber attached.

Each row is the best of ``--repeat`` rounds (wall time; a fresh runtime per round). The
CPU column is the process's own CPU time for that best round, which other load on the
machine disturbs less than wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import time
from pathlib import Path

import agrun
from agrun.testing import FixedClock, SequentialIds


async def noop(input, context, helpers):
    return None


def make_runtime(**options: object) -> agrun.Runtime:
    return agrun.create_runtime(
        clock=FixedClock(),
        ids=SequentialIds(),
        skills=[agrun.FunctionSkill("noop", noop)],
        **options,
    )


Timing = tuple[float, float]


async def bare(runs: int) -> Timing:
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(runs):
        await noop("x", None, None)
    return time.perf_counter() - start, time.process_time() - cpu


async def kernel(runs: int, skill: str, subscribe: bool, **options: object) -> Timing:
    runtime = make_runtime(**options)
    if subscribe:
        seen: list[object] = []
        runtime.subscribe(seen.append)
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(runs):
        result = await runtime.run("x", skill=skill)
        assert result.ok
    return time.perf_counter() - start, time.process_time() - cpu


async def measure(runs: int, repeat: int) -> list[tuple[str, Timing]]:
    rows = {
        "bare await": lambda: bare(runs),
        "run(), no memory": lambda: kernel(runs, "noop", False, remember_observations=False),
        "run(), echo + memory": lambda: kernel(runs, "echo", False),
        "run(), + subscriber": lambda: kernel(runs, "noop", True, remember_observations=False),
    }
    out = []
    for name, round_ in rows.items():
        out.append((name, min([await round_() for _ in range(repeat)])))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    rows = asyncio.run(measure(args.runs, args.repeat))
    print(f"agrun kernel overhead: {args.runs} runs, best of {args.repeat}")
    print(f"CPython {platform.python_version()} on {platform.machine()}")
    print(f"{'case':<24}{'total ms':>10}{'per run µs':>13}{'CPU µs':>10}")
    for name, (wall, cpu) in rows:
        per_run, cpu_per_run = wall / args.runs * 1e6, cpu / args.runs * 1e6
        print(f"{name:<24}{wall * 1e3:>10.1f}{per_run:>13.1f}{cpu_per_run:>10.1f}")
    if args.json:
        per_run_us = {
            name: {"wall_us": w / args.runs * 1e6, "cpu_us": c / args.runs * 1e6}
            for name, (w, c) in rows
        }
        out = {"runs": args.runs, "repeat": args.repeat, "rows": per_run_us}
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
