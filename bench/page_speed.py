"""Page speed (issue 14.6): what a first visit downloads, and how soon agrun is ready, against
bare Pyodide from the same vendored files, side by side in one Chromium run.

    .venv/bin/python bench/page_speed.py [--rounds 5] [--turns 5] [--dist DIR] [--sw auto|on|off]
                                         [--variants stock,bare,page,worker,shipped]
                                         [--warm tab|restart] [--network RTT_MS,MBIT]

Each round measures the variants, one after the other and each in a new browser context
(an empty HTTP cache, empty storage), so drift on a noisy machine hits all alike:

    stock      loadPyodide() from the npm package's own files, then 1 + 1 in Python
    bare       the same from dist/pyodide (agrun's precompiled standard library)
    page       createRuntime() in the page (Pyodide, agrun's wheels, the runtime, its store)
    worker     createRuntime({ worker: true }): the same engine in a module Web Worker
    shipped    page with createRuntime({ shippedSnapshot: true }): a first visit restores the
               memory snapshot the build ships instead of importing agrun (not run unless
               named in --variants; shipped-worker is the same in a worker)

cold is the context's first visit; warm is a second navigation in the same context: files come
from the HTTP cache, or from agrun's service worker when dist/ has a stamped one (--sw auto),
and agrun boots from the memory snapshot its first visit saved (docs/performance.md): the
warm visit waits until it is saved, a second or so after the first visit's ready.
--warm tab (the default) navigates the same tab again, whose renderer still holds what the
first visit compiled; --warm restart closes the browser and launches it again on the same
profile first, so a warm visit has the disk's caches and nothing alive (a returning visitor;
memory is then not measured).
Ready is the time from the start of the page's script to the resolved promise.
--network emulates a link in every visit (DevTools' network conditions: each request waits the
round trip, downloads share the bandwidth), where 127.0.0.1 has neither and a boot's work on
this machine's two cores is what sets the pace.

Also measured, so worker mode's default is decided on numbers: the latency of a turn with a
page provider function (the first one after ready, then the median of --turns more), the
main thread's long tasks (>= 50 ms) while booting, and the renderer's memory after the turns
(proportional set size of the page's renderer process, which holds its workers too; and the
page thread's JS heap). The bytes are those the cold visits fetched, as served and as gzip -9
(and brotli -q 11 when the `brotli` module is importable) would send them.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import http.server
import re
import statistics
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from _browser import ROOT
from chromium import launch, launch_profile
from pins import pinned
from serve import StaticHandler

try:  # optional: only to report brotli sizes
    import brotli  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # pragma: no cover - depends on the environment
    brotli = None

VARIANTS = ("stock", "bare", "page", "worker")
ALL_VARIANTS = (*VARIANTS, "shipped", "shipped-worker")
# The agrun variants, each with its createRuntime options (worker, shippedSnapshot).
AGRUN_VARIANTS = {
    "page": (False, False),
    "worker": (True, False),
    "shipped": (False, True),
    "shipped-worker": (True, True),
}
# Where each bare variant's Pyodide is served from.
FOLDERS = {"stock": "/stock-pyodide/", "bare": "/pyodide/"}

# Every long task of the page's main thread, from before its first script runs.
LONG_TASKS = """
window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.duration]);
}).observe({ type: 'longtask', buffered: true });
"""

# Each script starts its work from a timer, a task of the page's own: work that a DevTools
# evaluation starts is not reported as long tasks.
BARE = """(folder) => new Promise((resolve, reject) => setTimeout(async () => {
  try {
    const t0 = performance.now();
    const { loadPyodide } = await import(folder + 'pyodide.mjs');
    const py = await loadPyodide({ indexURL: new URL(folder, location.href).href });
    py.runPython('1 + 1');
    const ready = performance.now() - t0;
    // The long-task entry of the last task arrives after it ends.
    await new Promise((r) => setTimeout(r, 100));
    resolve({ ready, longTasks: window.__longTasks.filter(([start, duration]) => start + duration >= t0 && start <= t0 + ready) });
  } catch (error) { reject(error); }
}, 0))"""

AGRUN = """({ worker, shipped, turns }) => new Promise((resolve, reject) => setTimeout(async () => {
  try {
    const t0 = performance.now();
    const { createRuntime } = await import('/agrun.js');
    const provider = async (request) => ({ text: 'ok ' + request.messages.length });
    const rt = await createRuntime({
      worker, shippedSnapshot: shipped, provider, sessionId: 'bench-' + Date.now() });
    const ready = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 100));
    const longTasks = window.__longTasks.filter(([start, duration]) => start + duration >= t0 && start <= t0 + ready);
    const times = [];
    for (let i = 0; i <= turns; i++) {
      const t = performance.now();
      await rt.run('hello ' + i);
      times.push(performance.now() - t);
    }
    // web/boot/boot.js and web/engine/engine.js mark each step of a boot in the thread it
    // runs in: the page's here.
    const marks = performance.getEntriesByType('mark')
      .filter((m) => m.name.startsWith('agrun:') && m.startTime >= t0)
      .map((m) => [m.name.slice(6), m.startTime - t0]);
    // A worker's own marks come in its diagnostics, on the epoch clock.
    const origin = performance.timeOrigin + t0;
    resolve({ ready, longTasks, turns: times, diagnostics: rt.diagnostics(), marks, origin });
  } catch (error) { reject(error); }
}, 0))"""

REGISTER_SW = """async () => {
  const { registerOffline } = await import('/offline.js');
  const registration = await registerOffline();
  if (!registration) return false;
  await navigator.serviceWorker.ready;
  return true;
}"""


class CountingHandler(StaticHandler):
    """dist/ as tools/serve.py serves it, noting each path it answered 200 (for the byte count),
    and the npm package's own Pyodide under /stock-pyodide/."""

    stock: Path

    def translate_path(self, path: str) -> str:
        if path.startswith(FOLDERS["stock"]):
            return str(self.stock / path.removeprefix(FOLDERS["stock"]).split("?", 1)[0])
        return super().translate_path(path)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if str(code) == "200":
            self.server.served.append(self.path.split("?", 1)[0])  # type: ignore[attr-defined]


@contextmanager
def counting_server(
    dist: Path, stock: Path
) -> Iterator[tuple[http.server.ThreadingHTTPServer, str]]:
    handler_class = type("Handler", (CountingHandler,), {"stock": stock})
    handler = functools.partial(handler_class, directory=str(dist))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.verbose = False  # type: ignore[attr-defined]
    server.served = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    try:
        yield server, f"http://{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Visit:
    ready: float
    long_total: float
    long_max: float
    turns: list[float] = field(default_factory=list)
    boot: str | None = None
    marks: dict[str, float] = field(default_factory=dict)


@dataclass
class Results:
    visits: dict[tuple[str, str], list[Visit]] = field(default_factory=dict)
    memory: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    served: dict[str, set[str]] = field(default_factory=dict)
    stock: Path = Path()

    def add(self, variant: str, mode: str, visit: Visit) -> None:
        self.visits.setdefault((variant, mode), []).append(visit)


def visit_from(raw: dict[str, Any]) -> Visit:
    durations = [duration for _start, duration in raw["longTasks"]]
    turns = [float(t) for t in raw.get("turns", [])]
    diagnostics = raw.get("diagnostics") or {}
    boot = diagnostics.get("boot")
    marks = {str(name): float(at) for name, at in raw.get("marks", [])}
    if diagnostics.get("worker"):
        # The worker's own marks, on the epoch clock: from the page's start of this visit.
        origin = float(raw["origin"])
        marks = {
            str(name): float(at) - origin
            for name, at in diagnostics.get("bootMarks", [])
            if float(at) >= origin
        }
    return Visit(
        float(raw["ready"]), sum(durations), max(durations, default=0.0), turns, boot, marks
    )


def renderer_pids(browser: Browser) -> set[int]:
    session = browser.new_browser_cdp_session()
    try:
        info = session.send("SystemInfo.getProcessInfo")
    finally:
        session.detach()
    return {int(p["id"]) for p in info["processInfo"] if p["type"] == "renderer"}


def pss_mib(pid: int) -> float:
    """A process's proportional set size (its share of shared pages), in MiB; 0 if unknown."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0.0
    match = re.search(r"^Pss:\s+(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) / 1024 if match else 0.0


def js_heap_mib(context: BrowserContext, page: Page) -> float:
    session = context.new_cdp_session(page)
    try:
        session.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
    finally:
        session.detach()
    return float(metrics.get("JSHeapUsedSize", 0)) / (1 << 20)


def service_worker_present(dist: Path) -> bool:
    worker = dist / "sw.js"
    return (
        (dist / "precache.json").is_file()
        and worker.is_file()
        and "const BUILD = null;" not in worker.read_text(encoding="utf-8")
    )


SAVED_SNAPSHOTS = """async () => (await (await caches.open('agrun-snapshots')).keys()).length"""


def wait_for_saved_snapshot(page: Any, variant: str) -> None:
    """A first visit saves its memory snapshot a second after ready, once the page is idle; a
    warm visit before that would boot afresh, which a returning visitor's does not."""
    if variant not in AGRUN_VARIANTS:
        return
    for _ in range(150):
        if page.evaluate(SAVED_SNAPSHOTS):
            return
        page.wait_for_timeout(200)
    raise SystemExit(f"{variant}: the first visit saved no memory snapshot within 30 s")


@dataclass(frozen=True)
class Network:
    """A link as Chromium's DevTools emulate it (``--network RTT_MS,MBIT``): each request waits
    the round trip, and downloads share the bandwidth. It applies to a page's workers too."""

    rtt_ms: float
    mbit: float

    @classmethod
    def parse(cls, text: str) -> Network:
        try:
            rtt, mbit = (float(part) for part in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected RTT_MS,MBIT (say 150,100), got {text!r}"
            ) from None
        if rtt < 0 or mbit <= 0:
            raise argparse.ArgumentTypeError(
                f"expected a round trip >= 0 and a bandwidth > 0, got {text!r}"
            )
        return cls(rtt, mbit)

    def emulate(self, context: BrowserContext, page: Page) -> None:
        session = context.new_cdp_session(page)
        session.send("Network.enable")
        session.send(
            "Network.emulateNetworkConditions",
            {
                "offline": False,
                "latency": self.rtt_ms,
                "downloadThroughput": self.mbit * 1_000_000 / 8,
                "uploadThroughput": self.mbit * 1_000_000 / 8,
            },
        )


def visit(page: Any, variant: str, args: dict[str, Any]) -> Any:
    """One visit's raw figures: bare Pyodide from its folder, or agrun with ``args``."""
    if variant in FOLDERS:
        return page.evaluate(BARE, FOLDERS[variant])
    return page.evaluate(AGRUN, args)


def measure_round(
    browser: Browser,
    url: str,
    server: http.server.ThreadingHTTPServer,
    results: Results,
    turns: int,
    use_sw: bool,
    variants: tuple[str, ...] = VARIANTS,
    network: Network | None = None,
) -> None:
    for variant in variants:
        before = renderer_pids(browser)
        context = browser.new_context(base_url=url)
        context.add_init_script(LONG_TASKS)
        page = context.new_page()
        if network:
            network.emulate(context, page)
        page.goto("/blank.html")
        server.served.clear()  # type: ignore[attr-defined]
        worker, shipped = AGRUN_VARIANTS.get(variant, (False, False))
        args = {"worker": worker, "shipped": shipped, "turns": turns}
        raw = visit(page, variant, args)
        results.add(variant, "cold", visit_from(raw))
        results.served.setdefault(variant, set()).update(server.served)  # type: ignore[attr-defined]
        ours = renderer_pids(browser) - before
        results.memory.setdefault(variant, []).append(
            (sum(pss_mib(pid) for pid in ours), js_heap_mib(context, page))
        )
        if use_sw and not page.evaluate(REGISTER_SW):
            raise SystemExit("the service worker did not register (use --sw off)")
        wait_for_saved_snapshot(page, variant)
        page.goto("/blank.html")
        raw = visit(page, variant, args)
        results.add(variant, "warm", visit_from(raw))
        context.close()


def measure_round_restarted(
    playwright: Playwright,
    url: str,
    server: http.server.ThreadingHTTPServer,
    results: Results,
    turns: int,
    use_sw: bool,
    variants: tuple[str, ...] = VARIANTS,
    network: Network | None = None,
) -> None:
    """As measure_round, but the warm visit is in the browser launched again on the profile the
    cold visit left: the code cache and Cache Storage on disk, no renderer that compiled before."""
    for variant in variants:
        worker, shipped = AGRUN_VARIANTS.get(variant, (False, False))
        args = {"worker": worker, "shipped": shipped, "turns": turns}
        with tempfile.TemporaryDirectory() as profile:
            for mode in ("cold", "warm"):
                context = launch_profile(playwright, profile, url)
                with contextlib.closing(context):
                    context.add_init_script(LONG_TASKS)
                    page = context.pages[0] if context.pages else context.new_page()
                    if network:
                        network.emulate(context, page)
                    page.goto("/blank.html")
                    if mode == "warm" and use_sw:
                        # A relaunched browser may start the service worker after the first
                        # navigation: load the page again once it controls it.
                        page.evaluate("() => navigator.serviceWorker.ready.then(() => true)")
                        if not page.evaluate("() => Boolean(navigator.serviceWorker.controller)"):
                            page.reload()
                    server.served.clear()  # type: ignore[attr-defined]
                    raw = visit(page, variant, args)
                    results.add(variant, mode, visit_from(raw))
                    if mode == "cold":
                        results.served.setdefault(variant, set()).update(server.served)  # type: ignore[attr-defined]
                        results.memory.setdefault(variant, []).append(
                            (float("nan"), js_heap_mib(context, page))
                        )
                        if use_sw and not page.evaluate(REGISTER_SW):
                            raise SystemExit("the service worker did not register (use --sw off)")
                        wait_for_saved_snapshot(page, variant)
                        # What the visit left to write (the code cache) gets written.
                        page.wait_for_timeout(3000)


def compressed_sizes(
    root: Path, paths: set[str], stock_prefix: str
) -> dict[str, tuple[int, int, int | None]]:
    """path -> (bytes served, gzip -9, brotli -q 11 or None), for the files under ``root``."""
    sizes: dict[str, tuple[int, int, int | None]] = {}
    for path in sorted(paths):
        if path.startswith(stock_prefix):
            file = root / path.removeprefix(stock_prefix)
        else:
            file = root / path.lstrip("/")
        if not file.is_file():
            continue
        data = file.read_bytes()
        br = len(brotli.compress(data, quality=11)) if brotli is not None else None
        sizes[path] = (len(data), len(gzip.compress(data, 9)), br)
    return sizes


def file_class(path: str) -> str:
    if path.endswith(".whl"):
        return "wheels"
    if "agrun-snapshot" in path:
        return "snapshot"
    if path.startswith(("/pyodide/", FOLDERS["stock"])):
        return "pyodide core"
    if path.endswith((".js", ".mjs")):
        return "agrun JS"
    return "page"


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# The page's boot marks in the order a boot passes them, and what the time up to each is.
STEPS = {
    "boot": "agrun's JS modules",
    "interpreter": "Pyodide started (wheels fetched)",
    "packages": "agrun's wheels loaded",
    "imported": "import agrun",
    "snapshot-made": "memory snapshot made",
    "shipped-fetched": "shipped snapshot (beside Pyodide)",
    "snapshot-loaded": "Pyodide, snapshot in, wheels",
    "restored": "pydantic-core reloaded",
    "page-packages": "the page's own packages",
    "bridge": "the runtime created",
    "open": "the session opened",
}


def print_steps(results: Results, variant: str = "page") -> None:
    """Where a page's ready time goes: the median time between its boot marks."""
    print(f"\n{variant + ' ready, step by step (ms)':38} {'cold':>7} {'warm':>7}")
    for mark, label in STEPS.items():
        cells = []
        for mode in ("cold", "warm"):
            spans = []
            for visit in results.visits[(variant, mode)]:
                if mark not in visit.marks:
                    continue
                earlier = [at for name, at in visit.marks.items() if at <= visit.marks[mark]]
                previous = max([at for at in earlier if at < visit.marks[mark]], default=0.0)
                spans.append(visit.marks[mark] - previous)
            cells.append(f"{median(spans):7.0f}" if spans else f"{'-':>7}")
        print(f"{'  ' + label:38} {cells[0]} {cells[1]}")


def print_report(
    results: Results, dist: Path, rounds: int, turns: int, use_sw: bool, variants: tuple[str, ...]
) -> None:
    def med(variant: str, mode: str, value: Any) -> float:
        return median([value(v) for v in results.visits[(variant, mode)]])

    agrun = tuple(v for v in variants if v in AGRUN_VARIANTS)
    print(f"\npage speed, median of {rounds} rounds (ms); ratios to bare and to stock Pyodide")
    print("stock: the npm package's own files; bare: the files agrun vendors in dist/pyodide")
    print(f"warm visits served by {'the service worker' if use_sw else 'the HTTP cache'}")
    print(f"{'':26} " + " ".join(f"{v:>7}" for v in ("stock", "bare") if v in variants), end="")
    print("".join(f" {v:>9} {'/bare':>6} {'/stock':>6}" for v in agrun))
    for mode in ("cold", "warm"):
        base = {v: med(v, mode, lambda v: v.ready) for v in ("stock", "bare") if v in variants}
        cells = ""
        for variant in agrun:
            value = med(variant, mode, lambda v: v.ready)
            ratios = [
                f"{value / base[b]:6.2f}" if b in base else f"{'-':>6}" for b in ("bare", "stock")
            ]
            cells += f" {value:9.0f} {ratios[0]} {ratios[1]}"
        print(f"{'ready, ' + mode:26} " + " ".join(f"{b:7.0f}" for b in base.values()) + cells)
    if agrun:
        print(f"\n{'turn latency (ms)':26} " + " ".join(f"{x:>9}" for x in agrun))
    for mode in ("cold", "warm") if agrun else ():
        firsts = [med(x, mode, lambda v: v.turns[0]) for x in agrun]
        print(f"{'first turn, ' + mode:26} " + " ".join(f"{f:9.0f}" for f in firsts))
        rest = [median([t for v in results.visits[(x, mode)] for t in v.turns[1:]]) for x in agrun]
        print(f"{f'next {turns} turns, ' + mode:26} " + " ".join(f"{r:9.1f}" for r in rest))
    print(f"\n{'main thread during boot':26} " + " ".join(f"{v:>13}" for v in variants))
    for mode in ("cold", "warm"):
        cells = [
            f"{med(x, mode, lambda v: v.long_total):6.0f}/{med(x, mode, lambda v: v.long_max):<6.0f}"
            for x in variants
        ]
        print(f"{'long tasks total/max, ' + mode:26} " + " ".join(f"{c:>13}" for c in cells))
    pss = [median([m[0] for m in results.memory[x]]) for x in variants]
    heap = [median([m[1] for m in results.memory[x]]) for x in variants]
    print(f"{'renderer PSS, MiB':26} " + " ".join(f"{v:13.0f}" for v in pss))
    print(f"{'page JS heap, MiB':26} " + " ".join(f"{v:13.1f}" for v in heap))
    for mode in ("cold", "warm"):
        boots = {x: sorted({v.boot or "-" for v in results.visits[(x, mode)]}) for x in agrun}
        print(f"{mode} boots: " + ", ".join(f"{x} {b}" for x, b in boots.items()))
    for variant in agrun:
        print_steps(results, variant)

    print("\nfirst visit, bytes fetched (KiB): as served / gzip -9 / brotli -q 11")
    for variant in variants:
        root = dist if variant != "stock" else None
        sizes = compressed_sizes(
            results.stock if root is None else dist,
            results.served.get(variant, set()),
            FOLDERS["stock"],
        )
        by_class: dict[str, list[int]] = {}
        for path, (raw, gz, br) in sizes.items():
            totals = by_class.setdefault(file_class(path), [0, 0, 0])
            totals[0] += raw
            totals[1] += gz
            totals[2] += br or 0
        print(f"  {variant}")
        for name in ("pyodide core", "wheels", "snapshot", "agrun JS", "page"):
            if name in by_class:
                raw, gz, br = by_class[name]
                print(f"    {name:14} {raw / 1024:9.0f} {gz / 1024:9.0f} {_br(br)}")
        raw, gz, br = (sum(t[i] for t in by_class.values()) for i in range(3))
        print(f"    {'total':14} {raw / 1024:9.0f} {gz / 1024:9.0f} {_br(br)}")


def _br(size: int) -> str:
    return f"{size / 1024:9.0f}" if brotli is not None else "        -"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--sw", choices=("auto", "on", "off"), default="auto")
    parser.add_argument(
        "--warm",
        choices=("tab", "restart"),
        default="tab",
        help="a warm visit: the same tab again, or the browser relaunched on the same profile",
    )
    parser.add_argument(
        "--network",
        type=Network.parse,
        metavar="RTT_MS,MBIT",
        help="emulate a link (say 150,100: a 150 ms round trip, 100 Mbit/s) instead of 127.0.0.1's",
    )
    parser.add_argument("--stock", type=Path, help="the unpacked npm package (default: .cache's)")
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help=f"comma-separated, in the order each round runs them (of {', '.join(ALL_VARIANTS)})",
    )
    args = parser.parse_args()
    variants = tuple(v.strip() for v in args.variants.split(",") if v.strip())
    if not variants or any(v not in ALL_VARIANTS for v in variants):
        raise SystemExit(f"--variants: choose from {', '.join(ALL_VARIANTS)}")
    dist = args.dist.resolve()
    if not (dist / "agrun.js").is_file():
        raise SystemExit(f"{dist} is not a built dist/: run ./build.sh")
    use_sw = args.sw == "on" or (args.sw == "auto" and service_worker_present(dist))
    stock = (args.stock or ROOT / ".cache" / f"pyodide-{pinned('PYODIDE_VERSION')}").resolve()
    if not (stock / "pyodide.mjs").is_file():
        raise SystemExit(f"{stock} is not an unpacked pyodide npm package: run ./build.sh")
    results = Results(stock=stock)
    with counting_server(dist, stock) as (server, url), sync_playwright() as p:
        browser = launch(p) if args.warm == "tab" else None
        try:
            for n in range(args.rounds):
                if browser is None:
                    measure_round_restarted(
                        p, url, server, results, args.turns, use_sw, variants, args.network
                    )
                else:
                    measure_round(
                        browser, url, server, results, args.turns, use_sw, variants, args.network
                    )
                print(
                    f"round {n + 1}/{args.rounds}: "
                    + ", ".join(
                        f"{v} {results.visits[(v, 'cold')][-1].ready:.0f}/"
                        f"{results.visits[(v, 'warm')][-1].ready:.0f}"
                        for v in variants
                    )
                    + " ms (cold/warm)",
                    flush=True,
                )
        finally:
            if browser is not None:
                browser.close()
    if args.network:
        print(
            f"\nnetwork emulated: {args.network.rtt_ms:g} ms round trip, {args.network.mbit:g} Mbit/s"
        )
    print_report(results, dist, args.rounds, args.turns, use_sw, variants)


if __name__ == "__main__":
    main()
