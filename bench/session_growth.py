"""Costs that must not grow with the session, through createRuntime in headless Chromium.

Run: .venv/bin/python bench/session_growth.py [--turns 1000] [--big-mb 10] [--entries 5000]
     [--parts runs,resume,big,import] [--dist DIR] (DIR: another build, for a before/after)

- Per-run time over a long session in one page (IndexedDB, the page default): the median of
  the first 100 runs against the median of the last 100, side by side in one run.
- Resume of the session it wrote (createRuntime on a fresh page) against reading the same
  rows from IndexedDB directly (one readonly transaction, getAll per store): the ratio.
- A large input (--big-mb of text) through a skill that answers "ok": time of the run and
  the size of the export, against the input's size; and the same input through the default
  skill (echo), whose reply says it all back.
- An import of a session holding --entries content entries into a runtime whose content
  store keeps 8 (`contentStore: { maxEntries: 8 }`): the import, then the first run (which
  trims the store to its 8).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from playwright.sync_api import BrowserContext

from _browser import chromium_and_site

OPEN = """async ([db]) => {
    const agrun = await import('/agrun.js');
    const started = performance.now();
    window.rt = await agrun.createRuntime({ sessionId: 'growth', dbName: db, skills: [
        { name: 'ack', description: 'acknowledges', run: () => 'ok' }] });
    return performance.now() - started;
}"""

RUNS = """async ([count]) => {
    const times = [];
    for (let i = 0; i < count; i += 1) {
        const started = performance.now();
        await rt.run('turn number ' + i + ': please note that the weather is fine today');
        times.push(performance.now() - started);
    }
    return times;
}"""

RAW_READ = """async ([db]) => {
    const open = () => new Promise((ok, no) => {
        const r = indexedDB.open(db); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
    const conn = await open();
    const started = performance.now();
    const tx = conn.transaction(['sessions', 'turns', 'messages', 'events', 'memoryEntries'], 'readonly');
    const range = IDBKeyRange.bound(['growth'], ['growth', []]);
    const get = (name, query) => new Promise((ok) => { const r = tx.objectStore(name).getAll(query); r.onsuccess = () => ok(r.result); });
    await Promise.all([get('sessions', 'growth'), get('turns', range), get('messages', range),
                       get('events', range), get('memoryEntries', range)]);
    const took = performance.now() - started;
    conn.close();
    return took;
}"""

BIG = """async ([megabytes]) => {
    const agrun = await import('/agrun.js');
    const rt = await agrun.createRuntime({ storage: 'memory', skills: [
        { name: 'ack', description: 'acknowledges', run: () => 'ok' }] });
    const text = 'x'.repeat(megabytes * 1_000_000);
    const started = performance.now();
    await rt.run(text, { skill: 'ack' });
    const took = performance.now() - started;
    const exported = (await rt.exportSession()).length;
    const echo = await agrun.createRuntime({ storage: 'memory' });
    const echoStarted = performance.now();
    await echo.run(text);
    const echoTook = performance.now() - echoStarted;
    const echoExported = (await echo.exportSession()).length;
    rt.close();
    echo.close();
    return { took, exported, input: text.length, echoTook, echoExported };
}"""

IMPORT = """async ([db, text]) => {
    const agrun = await import('/agrun.js');
    const rt = await agrun.createRuntime({ sessionId: 'imported', dbName: db,
        contentStore: { maxEntries: 8 },
        skills: [{ name: 'ack', description: 'acknowledges', run: () => 'ok' }] });
    const started = performance.now();
    await rt.importSession(text);
    const imported = performance.now();
    await rt.run('one more', { skill: 'ack' });
    const ran = performance.now();
    const held = (await rt.exportSession()).length;
    rt.close();
    return { importMs: imported - started, runMs: ran - imported, held };
}"""


def export_with_entries(count: int) -> str:
    """An export file of session 'imported': one turn and ``count`` content entries."""
    entries = []
    for n in range(count):
        body = f"body number {n}"
        canonical = json.dumps(body, ensure_ascii=False).encode("utf-8")
        entries.append(
            {
                "ref": f"content:r{n:05d}",
                "kind": "text",
                "body": body,
                "bytes": len(canonical),
                "digest": "sha256:" + hashlib.sha256(canonical).hexdigest(),
                "runId": f"r{n:05d}",
                "depth": 0,
                "serialization": "json",
                "errorClass": None,
                "createdAt": 1_000 + n,
                "lastUsedAt": 1_000 + n,
                "expiresAt": None,
            }
        )
    turn = {
        "seq": 1,
        "turnId": "t1",
        "committedAtMs": 1_000,
        "events": [],
        "memoryEntries": [],
        "messages": [{"id": "t1:user", "role": "user", "content": "hello", "atMs": 1_000}],
    }
    session = {"sessionId": "imported", "turns": [turn], "contentEntries": entries}
    return json.dumps({"format": "agrun.session", "formatVersion": 1, "session": session})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--big-mb", type=int, default=10)
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--parts", default="runs,resume,big,import")
    parser.add_argument("--dist", type=Path, default=None)
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    db = f"growth-{args.turns}"
    with chromium_and_site(args.dist) as (browser, url):
        # One context: its pages share the origin's IndexedDB, as tabs of one browser do.
        context = browser.new_context()
        if "import" in parts:
            page = context.new_page()
            page.goto(f"{url}/blank.html")
            page.evaluate("() => indexedDB.deleteDatabase('imports')")
            got = page.evaluate(IMPORT, ["imports", export_with_entries(args.entries)])
            print(
                f"import of {args.entries} content entries into a store of 8: import "
                f"{got['importMs']:.0f} ms, first run {got['runMs']:.0f} ms "
                f"(export after: {got['held'] / 1e3:.0f} KB)"
            )
            page.close()
        if not parts & {"runs", "resume", "big"}:
            return
        page = context.new_page()
        page.goto(f"{url}/blank.html")
        if parts & {"runs", "resume"}:
            page.evaluate(f"() => indexedDB.deleteDatabase('{db}')")
            page.evaluate(OPEN, [db])
            times = page.evaluate(RUNS, [args.turns])
            first = statistics.median(times[:100])
            last = statistics.median(times[-100:])
            print(f"{args.turns} runs in one page (IndexedDB): median ms/run")
            print(f"  runs 1-100: {first:.2f}   runs {args.turns - 99}-{args.turns}: {last:.2f}")
            print(f"  last/first: {last / first:.2f}")
        page.close()
        if "resume" in parts:
            resume_after(context, url, db, args.turns)
        if "big" in parts:
            big_input(context, url, args.big_mb)


def resume_after(context: BrowserContext, url: str, db: str, turns: int) -> None:
    """Resume of the session the runs wrote, on fresh pages, against its raw rows."""
    resumes, raws = [], []
    for _ in range(5):
        fresh = context.new_page()
        fresh.goto(f"{url}/blank.html")
        raws.append(fresh.evaluate(RAW_READ, [db]))
        # Boot the interpreter first: the figure is the runtime's resume, not Pyodide's boot.
        fresh.evaluate(OPEN, [db + "-boot"])
        resumes.append(fresh.evaluate(OPEN, [db]))
        fresh.close()
    resume, raw = statistics.median(resumes), statistics.median(raws)
    print(f"resume of {turns} turns: createRuntime {resume:.0f} ms, raw rows {raw:.0f} ms")
    print(f"  resume/raw: {resume / raw:.2f}")


def big_input(context: BrowserContext, url: str, megabytes: int) -> None:
    page = context.new_page()
    page.goto(f"{url}/blank.html")
    big = page.evaluate(BIG, [megabytes])
    print(
        f"{megabytes} MB input: run {big['took']:.0f} ms, export {big['exported'] / 1e6:.1f} MB "
        f"({big['exported'] / big['input']:.2f}x the input)"
    )
    print(
        f"  through echo: run {big['echoTook']:.0f} ms, export {big['echoExported'] / 1e6:.1f} MB "
        f"({big['echoExported'] / big['input']:.2f}x the input)"
    )


if __name__ == "__main__":
    main()
