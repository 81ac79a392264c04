"""Long sessions stay bounded (issue 12.10): over a scripted 1,000-turn session, how big the
session memory is, in memory and on disk, as the turns go by.

Run: .venv/bin/python bench/session_memory_growth.py [--turns 1000] [--every 100]

Every turn states something the rule extractor keeps (a fact, a preference or a decision,
each new), so the evidence grows every turn until its cap binds; then the oldest items are
merged into the summary (the session's L3), whose own cap drops its oldest lines. The
session memory is persisted whole at each commit (SQLite, the CPython store), so what is
measured is the stored row, read back from the file: its size must stop growing once the
caps bind. History grows with the turns, as it should; it is reported for scale.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

from agrun import create_runtime
from agrun.testing import FixedClock, SequentialIds

STATEMENTS = (
    "My {n}th neighbour is called Person{n}.",
    "I prefer route {n} over the highway.",
    "We decided to ship batch {n} on Friday.",
)


async def measure(turns: int, every: int) -> list[dict[str, int]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.db"
        runtime = create_runtime(
            clock=FixedClock(),
            ids=SequentialIds(),
            storage=path,
            memory_extraction="rules",
            session_id="long",
        )
        await runtime.open()
        for n in range(1, turns + 1):
            result = await runtime.run(STATEMENTS[n % 3].format(n=n))
            assert result.state.status == "succeeded", result.error
            if n % every == 0 or n == 1:
                rows.append(snapshot(path, n, runtime))
    return rows


def snapshot(path: Path, turn: int, runtime: object) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        (stored,) = db.execute(
            "SELECT session_memory FROM sessions WHERE session_id = 'long'"
        ).fetchone()
        (history,) = db.execute(
            "SELECT COALESCE(SUM(LENGTH(body)), 0) FROM messages WHERE session_id = 'long'"
        ).fetchone()
    memory = json.loads(stored)
    items = sum(len(memory[kind]) for kind in ("facts", "preferences", "decisions"))
    return {
        "turn": turn,
        "session_memory_bytes": len(stored.encode()),
        "evidence_items": items,
        "summary_lines": len(memory["summary"].splitlines()) if memory["summary"] else 0,
        "history_bytes": int(history),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    rows = asyncio.run(measure(args.turns, args.every))
    columns = list(rows[0])
    print(" ".join(f"{c:>22}" for c in columns))
    for row in rows:
        print(" ".join(f"{row[c]:>22}" for c in columns))
    # Flat once the caps bind: the stored session memory at the end against mid-session.
    middle = next(r for r in rows if r["turn"] >= args.turns // 2)
    ratio = rows[-1]["session_memory_bytes"] / middle["session_memory_bytes"]
    print(
        f"\nsession memory at turn {rows[-1]['turn']} / at turn {middle['turn']}: "
        f"x{ratio:.2f} (flat is x1.00; history grew x"
        f"{rows[-1]['history_bytes'] / middle['history_bytes']:.2f})"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"turns": args.turns, "rows": rows}, indent=1) + "\n")
    sys.exit(0 if ratio <= 1.1 else 1)


if __name__ == "__main__":
    main()
