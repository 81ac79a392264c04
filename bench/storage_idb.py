"""Persistence cost in Chromium: IndexedDB commit of one turn, resume of a 1,000-turn session,
bytes per turn.

Run: .venv/bin/python bench/storage_idb.py

The turns are the same ~5 KB turns as bench/storage_commit.py (bench/_turns.py), committed
through the page store (createSessionStore: resilient wrapper, Web Locks, one readwrite
transaction per turn) in headless Chromium, with "strict" durability (the default: flushed
before the commit resolves) and "relaxed". Bytes per turn come from
navigator.storage.estimate(), which Chromium rounds, so read it as an estimate.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

from playwright.sync_api import sync_playwright

from _turns import turn_fields
from agrun.storage import TurnCommit
from chromium import launch
from serve import serve_in_background

ROOT = Path(__file__).resolve().parent.parent
TURNS = 1000

SCENARIO = """async ([turns, durability]) => {
    const S = await import('/storage.js');
    const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))];
    const dbName = `bench-${durability}`;
    const before = (await navigator.storage.estimate()).usage ?? 0;
    const store = S.createSessionStore({ dbName, durability });
    const commits = [];
    for (const commit of turns) {
        const start = performance.now();
        await store.commitTurn(commit);
        commits.push(performance.now() - start);
    }
    await store.close();
    const resumes = [];
    for (let i = 0; i < 7; i += 1) {
        const fresh = S.createSessionStore({ dbName, durability });
        const start = performance.now();
        const snap = await fresh.loadSession('bench');
        resumes.push(performance.now() - start);
        if (snap.turns.length !== turns.length) throw new Error('lost turns');
        await fresh.close();
    }
    const after = (await navigator.storage.estimate()).usage ?? 0;
    return {
        p50: quantile(commits, 0.5), p95: quantile(commits, 0.95),
        resume: quantile(resumes, 0.5), perTurn: (after - before) / turns.length,
        degraded: store.status().degraded,
    };
}"""


def main() -> None:
    turns = [
        TurnCommit(session_id="bench", turn_id=f"t{n}", **turn_fields(n)).to_wire()
        for n in range(1, TURNS + 1)
    ]
    server, url = serve_in_background(ROOT / "web")
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page()
            page.goto(f"{url}/blank.html")
            print(f"{TURNS} turns, IndexedDB in headless Chromium (session id 'bench')")
            header = (
                "durability",
                "commit p50 ms",
                "commit p95 ms",
                "resume 1000 ms",
                "bytes/turn",
            )
            print("{:<12}{:>15}{:>15}{:>16}{:>12}".format(*header))
            for durability in ("strict", "relaxed"):
                r = page.evaluate(SCENARIO, [turns, durability])
                assert not r["degraded"]
                print(
                    f"{durability:<12}{r['p50']:>15.2f}{r['p95']:>15.2f}"
                    f"{r['resume']:>16.1f}{r['perTurn']:>12,.0f}"
                )
            browser.close()
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
