"""Context-pack build time inside Chromium, through createRuntime: 1k, 10k, 100k messages.

    .venv/bin/python bench/context_chromium.py [--sizes 1000,10000,100000] [--runs 3]
        [--budget 8000] [--mix mixed|ids]                                  (after ./build.sh)

The history is the one bench/context_build.py builds (same generator, same request:
``input`` = the last person's turn, ``budget.limit`` = 8,000). It is made in Python and
handed to the page once per size as JSON text; the page parses it, then times only
``rt.buildContext(request)`` with performance.now(). Each size gets a fresh
``createRuntime({ storage: 'memory' })`` (the interpreter is shared, and warmed up first
by a few untimed builds of 1k messages on another runtime): its first build
counts every kept message (cold), the next ones reuse the runtime's tokenizer (warm), as
the model calls of a tool loop do. Reported: the first build, the median and the best of
``--runs`` builds (the first included), and the growth of the median between sizes.

Bridge: what ``buildContext`` spends crossing between JavaScript and Python, each part
timed alone in the same page on the same request and pack (best of ``--runs``):
- ``JS out``: findNonPlain(request) + JSON.stringify(request);
- ``copy``: handing that text to Python (a copy into wasm memory) and freeing, after,
  what Python parsed and validated from it;
- ``loads``: json.loads of it in Python;
- ``back``: json.dumps of the reply envelope in Python + JSON.parse of it in JavaScript.
Not bridge, but shown beside it: ``validate``, agrun's validate_request on the parsed
request, linear too, which every build from a dict pays (timed right after ``loads``, as
the bridge runs them); and ``core``, build_context alone on the validated request with
one tokenizer kept, the median of ``--runs`` (what bench/context_build.py times in
CPython). The Python parts run on the runtime's own interpreter (boot.js shares one per
page). The parts are timed apart from the builds, so they need not add up to them exactly
(the garbage collector and the wasm heap are in another state).
Compare with bench/context_build.py, the same build in CPython (where the request is
validated separately; here validation is part of every build).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics

from _browser import chromium_and_site
from context_build import history

SETUP = """async (warmup) => {
    const { createRuntime } = await import('/agrun.js');
    const { bootPyodide, resolveIndexURL } = await import('/boot/boot.js');
    const { findNonPlain } = await import('/plain.js');
    await createRuntime({ storage: 'memory' });  // boot once, outside any timing
    const pyodide = await bootPyodide(resolveIndexURL(), () => {});
    const ns = pyodide.globals.get('dict')();
    pyodide.runPython(`
import json, time

def ingest(text):
    # What the bridge does before the build: json.loads, then validate_request.
    from agrun.context import validate_request
    t0 = time.perf_counter()
    value = json.loads(text)
    t1 = time.perf_counter()
    request = validate_request(value)
    t2 = time.perf_counter()
    del value, request
    return [(t1 - t0) * 1000, (t2 - t1) * 1000]

def core(text, runs):
    # build_context alone on the validated request, one tokenizer kept (as a runtime does).
    from agrun.context import EstimatingTokenizer, build_context, validate_request
    request = validate_request(json.loads(text))
    tokenizer = EstimatingTokenizer()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        build_context(request, tokenizer=tokenizer)
        times.append((time.perf_counter() - t0) * 1000)
    return times

def dumps(text):
    value = json.loads(text)
    t0 = time.perf_counter()
    json.dumps(value, allow_nan=False)
    return (time.perf_counter() - t0) * 1000
`, { globals: ns });
    // Warm up: the first builds in a page import the context modules and let the engine
    // tier up the hot wasm and JS paths (a few builds of 1k messages); no size pays for it.
    const warm = await createRuntime({ storage: 'memory' });
    const warmRequest = JSON.parse(warmup);
    for (let i = 0; i < 5; i++) warm.buildContext(warmRequest);
    warm.close?.();
    globalThis.bench = { createRuntime, findNonPlain, pyodide, ingest: ns.get('ingest'),
                         core: ns.get('core'), dumps: ns.get('dumps') };
}"""

MEASURE = """async ([text, runs]) => {
    const { createRuntime, findNonPlain, pyodide, ingest, core, dumps } = globalThis.bench;
    const request = JSON.parse(text);
    const rt = await createRuntime({ storage: 'memory' });
    const builds = [];
    let pack;
    for (let r = 0; r < runs; r++) {
        const t0 = performance.now();
        pack = rt.buildContext(request);
        builds.push(performance.now() - t0);
    }
    rt.close?.();
    // The bridge's parts, each alone (best of `runs`).
    const best = (fn) => {
        let ms = Infinity;
        for (let r = 0; r < runs; r++) {
            const t0 = performance.now();
            fn();
            ms = Math.min(ms, performance.now() - t0);
        }
        return ms;
    };
    let wire = '';
    const jsOut = best(() => {
        if (findNonPlain(request)) throw new Error('not plain');
        wire = JSON.stringify(request);
    });
    // Handing the text to Python (a copy into wasm memory, and freeing what was parsed
    // and validated) is the call's time minus the two parts Python timed itself.
    let copy = Infinity, loads = Infinity, validate = Infinity;
    for (let r = 0; r < runs; r++) {
        const t0 = performance.now();
        const proxy = ingest(wire);
        const total = performance.now() - t0;
        const [l, v] = proxy.toJs();
        proxy.destroy();
        copy = Math.min(copy, total - l - v);
        loads = Math.min(loads, l);
        validate = Math.min(validate, v);
    }
    const coreProxy = core(wire, runs);
    const coreMs = coreProxy.toJs();
    coreProxy.destroy();
    const reply = JSON.stringify({ ok: true, result: pack });
    let pyDumps = Infinity;
    for (let r = 0; r < runs; r++) pyDumps = Math.min(pyDumps, dumps(reply));
    const jsParse = best(() => JSON.parse(reply));
    const entries = Object.values(pack.layers).reduce((n, l) => n + l.length, 0);
    return {
        builds, jsOut, back: pyDumps + jsParse, copy, loads, validate, core: coreMs,
        requestBytes: wire.length, replyBytes: reply.length,
        budgetUsed: pack.budgetUsed, entries,
        wasmBytes: pyodide._module?.HEAP8?.buffer?.byteLength ?? null,
        jsHeapBytes: performance.memory?.usedJSHeapSize ?? null,
    };
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--mix", choices=["mixed", "ids"], default="mixed")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with chromium_and_site() as (browser, url):
        page = browser.new_page(base_url=url)
        page.set_default_timeout(600_000)
        page.goto("/blank.html")
        page.evaluate(SETUP, _request(1000, args))
        for n in sizes:
            result = page.evaluate(MEASURE, [_request(n, args), args.runs])
            rows.append((n, result))
    print(
        f"context pack in Chromium (createRuntime, storage 'memory'), budget {args.budget},"
        f" mix {args.mix}, {args.runs} builds per size (ms)"
    )
    print(
        f"{'messages':>9} {'first':>8} {'median':>8} {'best':>8} | {'JS out':>6} {'copy':>6}"
        f" {'loads':>6} {'back':>5} {'bridge':>7} | {'validate':>8} {'core':>6}"
        f" | {'request':>8} {'used':>5} {'wasm':>6}"
    )
    for n, r in rows:
        wasm = f"{r['wasmBytes'] / 2**20:.0f}M" if r["wasmBytes"] else "?"
        print(
            f"{n:>9,} {r['builds'][0]:8.1f} {statistics.median(r['builds']):8.1f}"
            f" {min(r['builds']):8.1f} | {r['jsOut']:6.1f} {r['copy']:6.1f} {r['loads']:6.1f}"
            f" {r['back']:5.1f} {_bridge(r):7.1f} | {r['validate']:8.1f}"
            f" {statistics.median(r['core']):6.1f}"
            f" | {r['requestBytes'] / 2**20:7.1f}M {r['budgetUsed']:>5} {wasm:>6}"
        )
    for (n1, r1), (n2, r2) in itertools.pairwise(rows):
        m1, m2 = statistics.median(r1["builds"]), statistics.median(r2["builds"])
        b1, b2 = _bridge(r1), _bridge(r2)
        c1, c2 = statistics.median(r1["core"]), statistics.median(r2["core"])
        nlogn = (n2 * math.log(n2)) / (n1 * math.log(n1))
        print(
            f"growth {n1}->{n2}: buildContext x{m2 / m1:.1f}, bridge x{b2 / b1:.1f},"
            f" validate x{r2['validate'] / r1['validate']:.1f}, core x{c2 / c1:.1f}"
            f" (linear x{n2 / n1:.0f}, n log n x{nlogn:.1f})"
        )


def _request(n: int, args: argparse.Namespace) -> str:
    """The request bench/context_build.py builds, as JSON text."""
    raw = history(n, args.mix)
    wire = {"messages": raw, "input": raw[-4]["content"], "budget": {"limit": args.budget}}
    return json.dumps(wire)


def _bridge(r: dict) -> float:
    return r["jsOut"] + r["copy"] + r["loads"] + r["back"]


if __name__ == "__main__":
    main()
