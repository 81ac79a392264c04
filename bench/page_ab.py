"""Two builds of the page side by side in one Chromium: what a turn costs over the direct
call in each, for before/after figures of a change to the page's path.

    .venv/bin/python bench/page_ab.py DIST_A DIST_B [--variant "agrun page, IndexedDB"]
                                      [--rounds 60] [--warm 10]
    (each DIST a built dist/: ./build.sh in a worktree of the other commit)

Each build is served by its own bench server (bench/_openai_server.py, so on its own origin
and IndexedDB) and loaded in its own page of one browser; the page sets up the runtimes of
bench/model_overhead.py. Every round runs, in each page, the direct call and then the
variant, the pages in an order that alternates from round to round, so the machine's load
falls on both alike. It prints, per build, the medians over the rounds (after ``--warm``) of
the variant's time minus the direct call's in the same round: TTFT, turn and kept, as
model_overhead.py defines them. The sessions grow by one turn a round.
"""

from __future__ import annotations

import argparse
import statistics
from contextlib import ExitStack
from pathlib import Path

import model_overhead as bench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs=2, type=Path, help="two built dist/ folders")
    parser.add_argument("--variant", default="agrun page, IndexedDB")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--warm", type=int, default=10)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    overheads: dict[Path, list[tuple[float, ...]]] = {build: [] for build in args.builds}
    with ExitStack() as stack:
        urls = {build: stack.enter_context(bench.bench_server(build)) for build in args.builds}
        playwright = stack.enter_context(sync_playwright())
        browser = bench.launch(playwright)
        stack.callback(browser.close)
        pages = {}
        for build, url in urls.items():
            page = browser.new_page()
            page.set_default_timeout(600_000)
            page.goto(f"{url}/blank.html")
            page.evaluate(bench.SETUP, [bench.MODEL, bench.REPLY])
            # The provider function's runtime first, so the direct call has its messages.
            page.evaluate(bench.ROUND, ["agrun page, JS provider fn"])
            pages[build] = page
        for number in range(args.warm + args.rounds):
            order = args.builds if number % 2 == 0 else args.builds[::-1]
            for build in order:
                timed = pages[build].evaluate(bench.ROUND, [bench.DIRECT, args.variant])
                if number >= args.warm:
                    agrun, direct = timed[args.variant], timed[bench.DIRECT]
                    overheads[build].append(
                        tuple(a - d for a, d in zip(agrun, direct, strict=True))
                    )
    print(f"{args.variant}: overhead over the direct call, ms, medians of {args.rounds} rounds")
    for build, rows in overheads.items():
        ttft, turn, kept = (statistics.median(row[i] for row in rows) for i in range(3))
        print(f"  {build}: TTFT {ttft:.2f}  turn {turn:.2f}  kept {kept:.2f}")


if __name__ == "__main__":
    main()
