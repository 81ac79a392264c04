"""Boot time: bare Pyodide vs agrun ready, from the same local files, in one Chromium run.

    .venv/bin/python bench/boot.py [--runs N]      (after ./build.sh)

cold = a new browser context (empty HTTP cache); warm = a reload of the same page (files
from the HTTP cache). Bare = loadPyodide() alone; agrun = createRuntime() (Pyodide, the
wheels, ``import agrun`` and the runtime). Prints medians and the agrun/bare ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from playwright.sync_api import Page

from _browser import chromium_and_site

BARE = """async () => {
    const t0 = performance.now();
    const { loadPyodide } = await import('/pyodide/pyodide.mjs');
    const lock = await (await fetch('/pyodide/pyodide-lock.json')).json();
    const py = await loadPyodide({ indexURL: '/pyodide/', lockFileContents: lock,
                                   packageBaseUrl: '/pyodide/' });
    py.runPython('1 + 1');
    return performance.now() - t0;
}"""

AGRUN = """async () => {
    const t0 = performance.now();
    const { createRuntime } = await import('/agrun.js');
    const rt = await createRuntime();
    await rt.run('hello');
    return performance.now() - t0;
}"""


def measure(page: Page, script: str) -> float:
    return float(page.evaluate(script))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    times: dict[tuple[str, str], list[float]] = {}
    with chromium_and_site() as (browser, url):
        for _ in range(args.runs):
            # Interleave the two so drift on a noisy machine hits both alike.
            for name, script in (("bare", BARE), ("agrun", AGRUN)):
                context = browser.new_context(base_url=url)
                page = context.new_page()
                page.goto("/blank.html")
                times.setdefault((name, "cold"), []).append(measure(page, script))
                page.reload()
                times.setdefault((name, "warm"), []).append(measure(page, script))
                context.close()
    for key, values in sorted(times.items()):
        print(key, [round(v) for v in values])
    print(f"boot, median of {args.runs} runs (ms)")
    print(f"{'':6} {'bare':>8} {'agrun':>8} {'agrun/bare':>11}")
    figures: dict[str, dict[str, float]] = {}
    for mode in ("cold", "warm"):
        bare = statistics.median(times[("bare", mode)])
        agrun = statistics.median(times[("agrun", mode)])
        print(f"{mode:6} {bare:8.0f} {agrun:8.0f} {agrun / bare:11.2f}")
        figures[mode] = {"bare_ms": bare, "agrun_ms": agrun}
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": args.runs, **figures}, indent=1) + "\n")


if __name__ == "__main__":
    main()
