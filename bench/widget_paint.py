"""First paint of <agrun-chat>'s progress bar: navigation start to the first frame that shows
it, beside a static page of the same look (no script), in one Chromium run.

    .venv/bin/python bench/widget_paint.py [--runs N]      (after ./build.sh)

cold = a new browser context (empty HTTP cache); warm = a reload (files from the cache).
widget = dist/index.html: first-contentful-paint (the widget is the only thing on the page
that paints text, so this is its shell with the bar) and the widget's own marks
('agrun-chat:shell' when the shell is built, 'agrun-chat:progress-painted' a task after the
frame that drew it). static = the same text in the same font in plain HTML, served by this
script, with no module to load: what the browser needs to paint anything at all. Prints medians and the
widget/static ratio of first-contentful-paint. The aim is a bar painted within 100 ms.
"""

from __future__ import annotations

import argparse
import statistics

from playwright.sync_api import Browser, Page, Route

from _browser import chromium_and_site

STATIC = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>static</title>
<link rel="icon" href="data:,"></head><body style="font: 16px/1.45 system-ui, sans-serif">
<h1>agrun</h1><p>Loading agrun…</p><div style="height:8px;width:5%;background:#0b57d0"></div>
</body></html>"""

TIMES = """() => new Promise((resolve) => {
    const read = () => {
        const paint = performance.getEntriesByName('first-contentful-paint')[0];
        const marks = ['agrun-chat:shell', 'agrun-chat:progress-painted']
            .map((name) => performance.getEntriesByName(name)[0]?.startTime ?? null);
        if (paint && (marks[1] !== null || !document.querySelector('agrun-chat'))) {
            resolve({ fcp: paint.startTime, shell: marks[0], painted: marks[1] });
        } else {
            setTimeout(read, 20);
        }
    };
    read();
})"""


def static_route(route: Route) -> None:
    route.fulfill(status=200, content_type="text/html; charset=utf-8", body=STATIC)


def load(page: Page, path: str, reload: bool) -> dict[str, float | None]:
    if reload:
        page.reload()
    else:
        page.goto(path)
    times: dict[str, float | None] = page.evaluate(TIMES)
    # Let the widget finish booting: a context closed mid-download only makes noise.
    page.evaluate("() => document.querySelector('agrun-chat')?.ready.catch(() => null)")
    return times


def measure(browser: Browser, url: str, path: str) -> dict[str, dict[str, float | None]]:
    context = browser.new_context(base_url=url)
    context.route("**/static-paint.html", static_route)
    page = context.new_page()
    cold = load(page, path, reload=False)
    warm = load(page, path, reload=True)
    context.close()
    return {"cold": cold, "warm": warm}


def median(values: list[float | None]) -> float:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    runs: dict[tuple[str, str], list[dict[str, float | None]]] = {}
    with chromium_and_site() as (browser, url):
        measure(browser, url, "/index.html")  # the browser's own first start is not counted
        for _ in range(args.runs):
            # Interleaved, so drift on a noisy machine hits both pages alike.
            for name, path in (("static", "/static-paint.html"), ("widget", "/index.html")):
                for mode, times in measure(browser, url, path).items():
                    runs.setdefault((name, mode), []).append(times)
    print(f"first paint, median of {args.runs} runs (ms from navigation start)")
    print(
        f"{'':6} {'static fcp':>11} {'widget fcp':>11} {'shell':>8} {'bar painted':>12} {'fcp ratio':>10}"
    )
    for mode in ("cold", "warm"):
        static = median([t["fcp"] for t in runs[("static", mode)]])
        widget = runs[("widget", mode)]
        fcp = median([t["fcp"] for t in widget])
        shell = median([t["shell"] for t in widget])
        painted = median([t["painted"] for t in widget])
        print(
            f"{mode:6} {static:11.0f} {fcp:11.0f} {shell:8.0f} {painted:12.0f} {fcp / static:10.2f}"
        )


if __name__ == "__main__":
    main()
