"""Costs that must not grow with the session, through createRuntime in headless Chromium.

Run: .venv/bin/python bench/session_growth.py [--turns 1000] [--big-mb 10]

- Per-run time over a long session in one page (IndexedDB, the page default): the median of
  the first 100 runs against the median of the last 100, side by side in one run.
- Resume of the session it wrote (createRuntime on a fresh page) against reading the same
  rows from IndexedDB directly (one readonly transaction, getAll per store): the ratio.
- A large input (--big-mb of text) through a skill that answers "ok": time of the run and
  the size of the export, against the input's size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

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
    rt.close();
    return { took, exported, input: text.length };
}"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--big-mb", type=int, default=10)
    args = parser.parse_args()
    db = f"growth-{args.turns}"
    with chromium_and_site() as (browser, url):
        # One context: its pages share the origin's IndexedDB, as tabs of one browser do.
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{url}/blank.html")
        page.evaluate(f"() => indexedDB.deleteDatabase('{db}')")
        page.evaluate(OPEN, [db])
        times = page.evaluate(RUNS, [args.turns])
        first = statistics.median(times[:100])
        last = statistics.median(times[-100:])
        print(f"{args.turns} runs in one page (IndexedDB): median ms/run")
        print(f"  runs 1-100: {first:.2f}   runs {args.turns - 99}-{args.turns}: {last:.2f}")
        print(f"  last/first: {last / first:.2f}")
        page.close()
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
        print(f"resume of {args.turns} turns: createRuntime {resume:.0f} ms, raw rows {raw:.0f} ms")
        print(f"  resume/raw: {resume / raw:.2f}")
        page = context.new_page()
        page.goto(f"{url}/blank.html")
        big = page.evaluate(BIG, [args.big_mb])
        print(
            f"{args.big_mb} MB input: run {big['took']:.0f} ms, export {big['exported'] / 1e6:.1f} MB "
            f"({big['exported'] / big['input']:.2f}x the input)"
        )


if __name__ == "__main__":
    main()
