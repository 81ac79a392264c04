"""What agrun adds to a model turn, against calling the same server directly (issue 10).

    .venv/bin/python bench/model_overhead.py [--rounds 50] [--warm 5] [--profile-turns 20]
                                             [--no-cpython] [--no-chromium] [--profile]
                                             [--pieces 4]
    (after ./build.sh; Chromium is Debian's, driven by Playwright)

The reply is "Hello, world!" in 4 pieces; ``--pieces 300`` makes it 300 words, each its
own SSE event, sent in one write as the rest: what each piece of a long reply costs.

One local server (bench/_openai_server.py, its own process) speaks the OpenAI
chat-completions wire format and answers at once: no model time, so what differs between a
direct call and an agrun turn is agrun's. It also serves dist/, so the page calls it on its
own origin. Every round runs each variant once, in an order rotated from round to round;
the overhead is agrun's time minus the direct call's in the same round, and the table
gives its median and 90th percentile over the rounds (after ``--warm`` rounds not kept).

Measures: TTFT, from the call to the first piece of reply text (the first content delta;
agrun's ``on_token`` / ``onToken``); turn, from the call until the direct client has read
``[DONE]`` or agrun's ``run()`` has returned with the answer; kept, until agrun's ``idle()``
has resolved too: the turn's trace and commit (and a model extraction) are done, what runs
after the answer under the turn's lock (for the direct call, kept is its turn). In CPython the table also
gives the overhead in the client process's CPU time, which other load on the machine
disturbs much less than wall time.

CPython: the direct client is one ``httpx.AsyncClient`` (its pool kept between calls),
posting the very messages agrun sent in its latest turn and reading the SSE itself. The
agrun runtimes use `OpenAIProvider` on the default ``HttpxTransport`` (one client per event
loop, shared by every such transport on it), with memory storage,
with SQLite (and with SQLite and ``commit_after_answer``, what a server whose event loop
lives on sets: the turn's trace and commit after ``run()`` returns, as in a page), with the
default memory extraction (a second model call per turn, for the
session's memory), and with an ``httpx.AsyncClient`` of the bench's own given to the
transport. Each keeps its connection from call to call (the provider reads what follows a
finished reply, ``[DONE]`` and the body's end, in the background).

Chromium: the direct client is page JavaScript (``fetch``, a stream reader, the SSE
parsed), posting the messages agrun gave its page provider function in the latest turn.
The agrun runtimes use ``provider: { kind: 'openai', baseUrl, model }`` (Python's fetch
transport) in the page and in a worker (``worker: true``), without storage and with
IndexedDB, and, to tell Python's HTTP path from the rest, a page provider function doing
the direct client's fetch.

Every agrun runtime but the one row that says otherwise uses ``memory_extraction="rules"``:
the default (``"auto"``) asks the model again after each turn, which is model time.

When a goal is missed (or with ``--profile``) it then shows where the time goes: spans
around the turn's phases (bench/_spans.py, in CPython and in the page's Pyodide) and, in
CPython, cProfile's top functions. It exits non-zero on errors only, never on a goal.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import math
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

import _spans
import agrun
from agrun.adapters.openai import HttpxTransport, OpenAIProvider
from agrun.adapters.sqlite import SqliteStorage
from agrun.storage import MemoryStorage

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tools"))

from _openai_server import pieces_of  # noqa: E402
from chromium import launch  # noqa: E402

MODEL = "bench-1"
REPLY = "Hello, world!"
GOAL_MS = {"CPython": 5.0, "Chromium": 10.0}  # issue 25.5
HEADERS = {"content-type": "application/json", "accept": "text/event-stream"}
DIRECT = "direct"
EXTRACTION = "agrun, memory, default extraction (+1 call)"

# (TTFT, turn, kept, and the CPU time of each), ms; the page has no CPU clock, so the last
# three are NaN in Chromium.
Timing = tuple[float, float, float, float, float, float]
MEASURES = ("TTFT", "turn", "kept")
NO_CPU = (math.nan, math.nan, math.nan)


@dataclass
class Row:
    env: str
    variant: str
    measure: str
    direct: list[float]
    agrun: list[float]
    direct_cpu: list[float]
    agrun_cpu: list[float]

    @property
    def overhead(self) -> list[float]:
        return [a - d for a, d in zip(self.agrun, self.direct, strict=True)]

    @property
    def cpu_overhead(self) -> list[float]:
        return [a - d for a, d in zip(self.agrun_cpu, self.direct_cpu, strict=True)]


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


@contextmanager
def bench_server(root: Path = ROOT / "dist", pieces: int = 4) -> Iterator[str]:
    """bench/_openai_server.py in its own process, serving ``root`` and replying in
    ``pieces``; its root URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "_openai_server.py"),
            *("--root", str(root), "--pieces", str(pieces)),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the bench server did not start (it said {url!r})")
        yield url
    finally:
        process.terminate()
        process.wait(10)


def rows_of(env: str, kept: dict[str, list[Timing]]) -> list[Row]:
    direct = kept.pop(DIRECT)
    rows = []
    for variant, timings in kept.items():
        for index, measure in enumerate(MEASURES):
            rows.append(
                Row(
                    env,
                    variant,
                    measure,
                    [d[index] for d in direct],
                    [a[index] for a in timings],
                    [d[index + 3] for d in direct],
                    [a[index + 3] for a in timings],
                )
            )
    return rows


# -- CPython ---------------------------------------------------------------------------


class CountingTransport(HttpxTransport):
    """The default transport, counting the requests it posts (one per model call)."""

    posts = 0

    def post(self, url: str, body: bytes, headers: Any) -> Any:
        self.posts += 1
        return super().post(url, body, headers)


class RecordingTransport(HttpxTransport):
    """The default transport, keeping the body of its last request (for the direct client).
    It adds one attribute store per request, nothing per chunk."""

    last_body = b""

    def post(self, url: str, body: bytes, headers: Any) -> Any:
        self.last_body = body
        return super().post(url, body, headers)


async def direct_call(client: httpx.AsyncClient, url: str, messages_from: bytes) -> Timing:
    """What a program without agrun does: build the body, post it, read the SSE."""
    request = json.loads(messages_from)  # outside the timing: the messages a caller holds
    start, cpu = time.perf_counter(), time.process_time()
    body = {
        "model": MODEL,
        "messages": request["messages"],
        "stream": True,
        "stream_options": {"include_usage": True},
        **{key: request[key] for key in ("tools", "max_tokens") if key in request},
    }
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    first = first_cpu = 0.0
    text = ""
    async with client.stream("POST", url, content=content, headers=HEADERS) as response:
        if response.status_code != 200:
            raise RuntimeError(f"the server answered {response.status_code}")
        pending = b""
        async for piece in response.aiter_bytes():
            pending += piece
            while (end := pending.find(b"\n\n")) >= 0:
                data, pending = pending[:end].removeprefix(b"data: "), pending[end + 2 :]
                if data == b"[DONE]":
                    done, done_cpu = time.perf_counter(), time.process_time()
                    if text != REPLY:
                        raise RuntimeError(f"the direct call read {text!r}")
                    turn, turn_cpu = done - start, done_cpu - cpu
                    return ms(first - start, turn, turn, first_cpu - cpu, turn_cpu, turn_cpu)
                choices = json.loads(data)["choices"]
                if choices and (delta := choices[0]["delta"].get("content")):
                    if not text:
                        first, first_cpu = time.perf_counter(), time.process_time()
                    text += delta
    raise RuntimeError("the stream ended without [DONE]")


def ms(*seconds: float) -> Timing:
    ttft, turn, kept, ttft_cpu, turn_cpu, kept_cpu = (s * 1e3 for s in seconds)
    return ttft, turn, kept, ttft_cpu, turn_cpu, kept_cpu


async def agrun_call(
    runtime: agrun.Runtime, text: str, answered: Callable[[], None] = lambda: None
) -> Timing:
    first: list[float] = []

    def on_token(piece: str) -> None:
        if not first:
            first.extend((time.perf_counter(), time.process_time()))

    start, cpu = time.perf_counter(), time.process_time()
    result = await runtime.run(text, on_token=on_token)
    end, end_cpu = time.perf_counter(), time.process_time()
    answered()
    await runtime.idle()
    kept, kept_cpu = time.perf_counter(), time.process_time()
    if not result.ok or result.output != REPLY or not first:
        raise RuntimeError(f"an agrun turn did not answer: {result.error or result.output!r}")
    return ms(
        first[0] - start, end - start, kept - start, first[1] - cpu, end_cpu - cpu, kept_cpu - cpu
    )


async def cpython(url: str, args: argparse.Namespace, profile: bool | None) -> list[Row]:
    base = f"{url}/v1"
    recording = RecordingTransport()
    counting = CountingTransport()
    shared = httpx.AsyncClient(timeout=None)
    direct_client = httpx.AsyncClient(timeout=None)
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = SqliteStorage(Path(tmp) / "bench.sqlite3")

        def runtime(transport: HttpxTransport | None = None, **options: Any) -> agrun.Runtime:
            provider = OpenAIProvider(base, MODEL, transport=transport or HttpxTransport())
            options.setdefault("memory_extraction", "rules")
            options.setdefault("storage", MemoryStorage())
            return agrun.create_runtime(provider=provider, model=MODEL, **options)

        runtimes = {
            "agrun, memory storage": runtime(recording),
            "agrun, SQLite storage": runtime(storage=sqlite),
            # What a server whose event loop lives on sets: the trace and commit after run()
            # returns (`commit_after_answer`), as createRuntime does in a page.
            "agrun, SQLite, answer first": runtime(
                storage=sqlite, session_id="answer-first", commit_after_answer=True
            ),
            EXTRACTION: runtime(counting, memory_extraction="auto"),
            "agrun, memory, shared httpx client": runtime(HttpxTransport(shared)),
        }
        counter = iter(range(1_000_000))
        # Per turn of the default extraction's runtime: model calls made before run()
        # returned, calls made after it, and ms from run()'s return until idle().
        after: list[tuple[int, int, float]] = []

        async def once(name: str) -> Timing:
            if name == DIRECT:
                return await direct_call(direct_client, f"{base}/chat/completions", last())
            if name != EXTRACTION:
                return await agrun_call(runtimes[name], f"hi {next(counter)}")
            before = counting.posts
            answered: list[int] = []
            timing = await agrun_call(
                runtimes[name], f"hi {next(counter)}", lambda: answered.append(counting.posts)
            )
            idle_ms = timing[2] - timing[1]
            after.append((answered[0] - before, counting.posts - answered[0], idle_ms))
            return timing

        def last() -> bytes:
            return recording.last_body or json.dumps({"messages": []}).encode()

        names = [DIRECT, *runtimes]
        kept: dict[str, list[Timing]] = {name: [] for name in names}
        for number in range(args.warm + args.rounds):
            shift = number % len(names)
            for name in names[shift:] + names[:shift]:
                timing = await once(name)
                if number >= args.warm:
                    kept[name].append(timing)
        kept_after = after[args.warm :]
        print(
            "CPython, the default extraction: per turn, "
            f"{statistics.median(a for a, _, _ in kept_after):.0f} model call(s) before run() "
            f"returned, {statistics.median(b for _, b, _ in kept_after):.0f} after it "
            f"(the extraction), idle() {statistics.median(c for _, _, c in kept_after):.1f} ms "
            "after the answer"
        )
        messages = len(json.loads(last())["messages"])
        print(
            f"CPython: {args.rounds} rounds; each session grew to {args.warm + args.rounds} turns "
            f"(agrun's last request held {messages} messages)"
        )
        rows = rows_of("CPython", kept)
        if profile is None:
            profile = missed(rows)
        if profile:
            await cpython_profile(runtimes, args.profile_turns)
        await shared.aclose()
        await direct_client.aclose()
        await sqlite.close()
    return rows


async def cpython_profile(runtimes: dict[str, agrun.Runtime], turns: int) -> None:
    print(f"\nCPython: where an agrun turn's time goes (spans, mean of {turns} turns, ms)")
    for name in ("agrun, memory storage", "agrun, SQLite storage"):
        spans = _spans.install()
        try:
            for n in range(turns):
                await agrun_call(runtimes[name], f"profiled {n}")
        finally:
            _spans.uninstall()
        print_spans(name, spans.report())
    profiler = cProfile.Profile()
    profiler.enable()
    for n in range(turns):
        await agrun_call(runtimes["agrun, memory storage"], f"cprofiled {n}")
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(15)
    print(f"\nCPython: cProfile of {turns} turns (agrun, memory storage), top 15 by own time")
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
    for line in lines[start:]:
        if line.strip():
            print("  " + line.replace(str(ROOT) + "/", "").replace(sys.prefix + "/", "")[:150])


def print_spans(name: str, report: list[tuple[str, int, float, float]]) -> None:
    print(f"  {name}")
    for label, calls, _, per_turn in report:
        print(f"    {label:36} {per_turn:8.2f}   ({calls} calls)")
    if report:
        # run()'s phases are the labels one level in before the next unindented one (what
        # runs after the answer); the rest of run() is the kernel's own.
        phases = 0.0
        for label, _, _, per_turn in report[1:]:
            if not label.startswith(" "):
                break
            if not label.startswith("    "):
                phases += per_turn
        label = "rest of run(): kernel bookkeeping"
        print(f"    {label:36} {report[0][3] - phases:8.2f}")


# -- Chromium ----------------------------------------------------------------------------

SETUP = """async ([model, reply]) => {
    const { createRuntime } = await import('/agrun.js');
    const url = location.origin + '/v1/chat/completions';
    const headers = { 'content-type': 'application/json', accept: 'text/event-stream' };
    const state = { request: null, n: 0 };

    // One streamed completion, read to its end: times to the first text and to [DONE].
    async function complete(body, onToken) {
        const start = performance.now();
        let first = null, done = null, text = '', usage = null, finishReason = null;
        const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
        if (!response.ok) throw new Error('the server answered ' + response.status);
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let pending = '';
        for (;;) {
            const { done: ended, value } = await reader.read();
            if (ended) break;
            pending += decoder.decode(value, { stream: true });
            let end;
            while ((end = pending.indexOf('\\n\\n')) >= 0) {
                const data = pending.slice(0, end).replace(/^data: /, '');
                pending = pending.slice(end + 2);
                if (data === '[DONE]') {
                    done = performance.now();
                    continue;
                }
                const chunk = JSON.parse(data);
                const choice = chunk.choices[0];
                if (choice?.delta?.content) {
                    first ??= performance.now();
                    text += choice.delta.content;
                    onToken?.(choice.delta.content);
                }
                if (choice?.finish_reason) finishReason = choice.finish_reason;
                if (chunk.usage) usage = {
                    promptTokens: chunk.usage.prompt_tokens,
                    completionTokens: chunk.usage.completion_tokens,
                };
            }
        }
        if (done === null) throw new Error('the stream ended without [DONE]');
        return { ttft: first - start, turn: done - start, text, usage, finishReason };
    }

    const wire = (request) => {
        const body = {
            model, messages: request.messages, stream: true,
            stream_options: { include_usage: true },
        };
        if (request.tools?.length) body.tools = request.tools;
        if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
        return body;
    };
    // A provider function doing the direct client's fetch; it keeps the request for it.
    const pageProvider = async (request, { onToken }) => {
        state.request = request;
        const { text, usage, finishReason } = await complete(wire(request), onToken);
        return { text, usage, finishReason };
    };
    const direct = async () => {
        const body = wire(state.request ?? { messages: [{ role: 'user', content: 'hi' }] });
        const timed = await complete(body);
        if (timed.text !== reply) throw new Error('the direct call read ' + timed.text);
        return [timed.ttft, timed.turn, timed.turn];
    };
    const timed = (rt) => async () => {
        let first = null;
        const start = performance.now();
        const result = await rt.run('hi ' + state.n++, {
            onToken: () => { first ??= performance.now(); },
        });
        const end = performance.now();
        await rt.idle();
        const kept = performance.now();
        if (result.state.status !== 'succeeded' || result.output !== reply || first === null) {
            throw new Error('an agrun turn did not answer: ' + JSON.stringify(result.error ?? result.output));
        }
        return [first - start, end - start, kept - start];
    };

    const openai = { kind: 'openai', baseUrl: location.origin + '/v1', model };
    const common = { model, memoryExtraction: 'rules' };
    const stamp = Date.now();
    const runtimes = {
        'agrun page, no storage': await createRuntime({ ...common, storage: false, provider: openai }),
        'agrun page, IndexedDB': await createRuntime({
            ...common, dbName: 'bench-overhead-page-' + stamp, provider: openai }),
        'agrun page, default extraction (+1 call)': await createRuntime({
            model, storage: false, provider: openai, sessionId: 'auto' }),
        'agrun worker, no storage': await createRuntime({
            ...common, worker: true, storage: false, provider: openai }),
        'agrun worker, IndexedDB': await createRuntime({
            ...common, worker: true, dbName: 'bench-overhead-worker-' + stamp, provider: openai }),
        'agrun page, JS provider fn': await createRuntime({
            ...common, storage: false, provider: pageProvider, sessionId: 'fn' }),
    };
    const variants = { direct };
    for (const [name, rt] of Object.entries(runtimes)) variants[name] = timed(rt);
    window.__bench = { variants, runtimes, state };
    return Object.keys(variants);
}"""

ROUND = """async (order) => {
    const out = {};
    for (const name of order) out[name] = await window.__bench.variants[name]();
    return out;
}"""

PAGE_SPANS = """async ([source, turns, names]) => {
    const { bootPyodide, resolveIndexURL } = await import('/boot/boot.js');
    const py = await bootPyodide(resolveIndexURL(), () => {});
    const globals = py.toPy({});
    py.runPython(source, { globals });
    py.runPython('spans = install()', { globals });
    const out = {};
    try {
        for (const name of names) {
            py.runPython('spans.reset()', { globals });
            let ttft = 0, turn = 0, kept = 0;
            for (let i = 0; i < turns; i++) {
                const [first, answered, whole] = await window.__bench.variants[name]();
                ttft += first / turns;
                turn += answered / turns;
                kept += whole / turns;
            }
            out[name] = { ttft, turn, kept, spans: JSON.parse(
                py.runPython('import json; json.dumps(spans.report())', { globals })) };
        }
    } finally {
        py.runPython('uninstall()', { globals });
        globals.destroy();
    }
    return out;
}"""


def chromium(url: str, args: argparse.Namespace, profile: bool | None) -> list[Row]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page()
            page.set_default_timeout(600_000)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{url}/blank.html")
            names = page.evaluate(SETUP, [MODEL, REPLY])
            # The provider function's runtime first, so the direct call has its messages.
            page.evaluate(ROUND, ["agrun page, JS provider fn"])
            kept: dict[str, list[Timing]] = {name: [] for name in names}
            for number in range(args.warm + args.rounds):
                shift = number % len(names)
                order = names[shift:] + names[:shift]
                timings = page.evaluate(ROUND, order)
                if number >= args.warm:
                    for name in names:
                        ttft, turn, whole = timings[name]
                        kept[name].append((ttft, turn, whole, *NO_CPU))
            if errors:
                raise RuntimeError(f"the page failed: {errors}")
            print(
                f"Chromium: {args.rounds} rounds; each session grew to "
                f"{args.warm + args.rounds} turns"
            )
            rows = rows_of("Chromium", kept)
            if profile is None:
                profile = missed(rows)
            if profile:
                page_profile(page, args.profile_turns)
        finally:
            browser.close()
    return rows


def page_profile(page: Any, turns: int) -> None:
    names = ["agrun page, no storage", "agrun page, IndexedDB", "agrun page, JS provider fn"]
    source = (HERE / "_spans.py").read_text()
    found = page.evaluate(PAGE_SPANS, [source, turns, names])
    print(f"\nChromium: where a page turn's time goes (Python spans in Pyodide, mean of {turns})")
    for name in names:
        seen = found[name]
        report = [tuple(item) for item in seen["spans"]]
        in_python = report[0][3] if report else 0.0
        timed = (
            f"TTFT {seen['ttft']:.2f} ms, turn {seen['turn']:.2f} ms, kept {seen['kept']:.2f} ms"
        )
        print_spans(f"{name}: {timed}", report)
        label = "outside Python's run() (JS, bridge)"
        print(f"    {label:36} {seen['turn'] - in_python:8.2f}")


# -- the table ---------------------------------------------------------------------------


def goal_of(row: Row) -> float:
    """The row's goal in ms; NaN for ``kept``: the goals are on the path to the answer."""
    return math.nan if row.measure == "kept" else GOAL_MS[row.env]


def missed(rows: list[Row]) -> bool:
    return any(statistics.median(row.overhead) > goal_of(row) for row in rows)


def print_table(rows: list[Row]) -> None:
    header = (
        f"{'env':9} {'variant':44} {'measure':7} {'direct':>7} {'agrun':>7} "
        f"{'overhead':>8} {'p90':>7} {'goal':>5}  met  {'CPU ovh':>7}"
    )
    print(
        "\nmedians over the rounds, ms; overhead = agrun - direct in the same round; CPU ovh:"
        "\nthe same for the client process's CPU time (CPython only: load on the machine "
        "stretches wall time, much less CPU time)"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        overhead = statistics.median(row.overhead)
        cpu = statistics.median(row.cpu_overhead)
        cpu_text = "-" if math.isnan(cpu) else f"{cpu:.2f}"
        goal = goal_of(row)
        goal_text, met = ("-", "   ") if math.isnan(goal) else (f"{goal:.0f}", "NO ")
        if overhead <= goal:
            met = "yes"
        print(
            f"{row.env:9} {row.variant:44} {row.measure:7} {statistics.median(row.direct):7.2f} "
            f"{statistics.median(row.agrun):7.2f} {overhead:8.2f} {p90(row.overhead):7.2f} "
            f"{goal_text:>5}  {met}  {cpu_text:>7}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--profile-turns", type=int, default=20)
    parser.add_argument("--no-cpython", action="store_true")
    parser.add_argument("--no-chromium", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="also write the medians as JSON")
    parser.add_argument(
        "--profile",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show where the time goes (default: only when a goal is missed)",
    )
    parser.add_argument(
        "--pieces",
        type=int,
        default=4,
        help="the reply's pieces (4: 'Hello, world!'); a long reply shows the cost per piece",
    )
    args = parser.parse_args()
    global REPLY
    REPLY = "".join(pieces_of(args.pieces))
    rows: list[Row] = []
    with bench_server(pieces=args.pieces) as url:
        if not args.no_cpython:
            rows += asyncio.run(cpython(url, args, args.profile))
        if not args.no_chromium:
            rows += chromium(url, args, args.profile)
    print_table(rows)
    if args.json:
        out = [
            {
                "env": r.env,
                "variant": r.variant,
                "measure": r.measure,
                "direct_ms": statistics.median(r.direct),
                "agrun_ms": statistics.median(r.agrun),
                "overhead_ms": statistics.median(r.overhead),
            }
            for r in rows
        ]
        Path(args.json).write_text(
            json.dumps({"rounds": args.rounds, "rows": out}, indent=1) + "\n"
        )


if __name__ == "__main__":
    main()
