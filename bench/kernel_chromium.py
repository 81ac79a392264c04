"""The kernel's cost per run inside Chromium, through createRuntime: 1,000 runs.

    .venv/bin/python bench/kernel_chromium.py [--runs 1000] [--repeat 3]     (after ./build.sh)

Rows, each the best of ``--repeat`` rounds, timed inside the page with performance.now():
- ``JS await``: awaiting a no-op JavaScript function, the floor;
- ``run(), Python echo``: the built-in echo skill (Python), one observation kept per run;
- ``run(), JS no-op skill``: a JavaScript skill returning null, so each run crosses the
  bridge twice more (the skill's view out, its output back);
- ``run(), echo + IndexedDB``: the default runtime, so each run is also a turn: read at turn
  start, one IndexedDB transaction to commit it, under the session's Web Lock.
The first three have ``storage: false``: they time the kernel and the bridge alone.
Compare with bench/kernel_overhead.py, which times the same kernel in CPython.
"""

from __future__ import annotations

import argparse

from _browser import chromium_and_site

SCRIPT = """async ([runs, repeat]) => {
    const { createRuntime } = await import('/agrun.js');
    const noop = async () => null;
    const best = async (make, once) => {
        let bestMs = Infinity;
        for (let r = 0; r < repeat; r++) {
            const rt = await make();
            const t0 = performance.now();
            for (let i = 0; i < runs; i++) await once(rt, i);
            bestMs = Math.min(bestMs, performance.now() - t0);
            rt?.close?.();
        }
        return bestMs * 1000 / runs;
    };
    let db = 0;
    return {
        'JS await': await best(async () => null, () => noop()),
        'run(), Python echo': await best(
            () => createRuntime({ storage: false }), (rt, i) => rt.run('hi ' + i)),
        'run(), JS no-op skill': await best(
            () => createRuntime({ storage: false,
                                  skills: [{ name: 'noop', description: '', run: noop }] }),
            (rt, i) => rt.run('hi ' + i, { skill: 'noop' })),
        'run(), echo + IndexedDB': await best(
            () => createRuntime({ dbName: 'bench-' + db++ }), (rt, i) => rt.run('hi ' + i)),
    };
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with chromium_and_site() as (browser, url):
        page = browser.new_page(base_url=url)
        page.set_default_timeout(600_000)
        page.goto("/blank.html")
        rows = page.evaluate(SCRIPT, [args.runs, args.repeat])
    print(f"kernel in Chromium, {args.runs} runs, best of {args.repeat} (µs per run)")
    for name, micros in rows.items():
        print(f"{name:24} {micros:10.1f}")


if __name__ == "__main__":
    main()
