"""The OpenAI-compatible provider inside a page: Pyodide's ``fetch`` transport for real, in
headless Chromium, against tools/openai_double.py on another 127.0.0.1 port (so CORS is
real too). Streamed text, tool calls, a refused request, a cut stream, Retry-After through
CORS, and an abort that the server sees as the client going away."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from conftest import PageProblems, guard_context, guard_page
from openai_double import OpenAIDouble
from serve import serve_in_background

KEY = "sk-page-Hq4Lm8Xr2Tv6Nz1Bw9Kc3Jd7"

# Runs in the page's interpreter: one provider call through the environment's default
# transport, reported as JSON (events, the folded reply or the typed error, the retry waits).
PROBE = """
import asyncio, json
from agrun.adapters.openai import OpenAIProvider, default_transport
from agrun.chat import ChatMessage, ModelRequest, ProviderError, ReplyBuilder, ToolSpec

async def probe(base_url, key, mode):
    sleeps = []

    async def sleep(seconds):
        sleeps.append(seconds)

    provider = OpenAIProvider(
        base_url, "double-1", key, transport=default_transport(), timeout_s=20, sleep=sleep
    )
    request = ModelRequest(
        messages=(ChatMessage(role="user", content="Hi from the page"),),
        tools=(ToolSpec(name="get_weather"),),
    )
    out = {"transport": type(provider._transport).__name__, "events": [], "sleeps": sleeps}
    builder = ReplyBuilder()

    async def consume(first=None):
        async for event in provider.stream(request):
            out["events"].append(event.to_wire())
            builder.add(event)
            if first is not None:
                first.set()

    if mode == "cancel":
        first = asyncio.Event()
        task = asyncio.create_task(consume(first))
        await first.wait()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            out["cancelled"] = True
        return json.dumps(out)
    try:
        await consume()
        out["reply"] = builder.reply().to_wire()
    except ProviderError as error:
        out["error"] = {
            "type": type(error).__name__,
            "message": str(error),
            "status": getattr(error, "status", None),
            "partial": getattr(error, "partial_text", None),
        }
    return json.dumps(out)
"""

RUN = """async (code) => {
    const { bootPyodide, resolveIndexURL } = await import('/boot/boot.js');
    const py = await bootPyodide(resolveIndexURL(), () => {});
    return JSON.parse(await py.runPythonAsync(code));
}"""


def probe(page: Page, double: OpenAIDouble, scenario: str, mode: str = "collect") -> Any:
    code = f"{PROBE}\nawait probe({double.url_for(scenario)!r}, {KEY!r}, {mode!r})"
    result = page.evaluate(RUN, code)
    assert KEY not in json.dumps(result.get("error", {}))
    return result


def test_streamed_text_arrives_through_fetch(openai_page: Page, double: OpenAIDouble) -> None:
    result = probe(openai_page, double, "text")
    assert result["transport"] == "FetchTransport"
    assert [e.get("text") for e in result["events"]] == ["Hello", ", ", "world", "!", None]
    assert result["reply"]["finishReason"] == "stop"
    assert result["reply"]["usage"] == {"promptTokens": 11, "completionTokens": 7}
    (seen,) = double.requests_for("text")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body["stream"] is True
    assert seen.body["messages"] == [{"role": "user", "content": "Hi from the page"}]


def test_parallel_tool_calls_assemble_in_the_page(openai_page: Page, double: OpenAIDouble) -> None:
    reply = probe(openai_page, double, "tools")["reply"]
    calls = [(c["id"], c["name"], json.loads(c["arguments"])) for c in reply["toolCalls"]]
    assert calls == [
        ("call_w", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ("call_t", "get_time", {"timezone": "Europe/Paris"}),
    ]


def test_a_refused_request_is_a_typed_error_without_the_key(
    openai_page: Page, double: OpenAIDouble
) -> None:
    bad = probe(openai_page, double, "bad_request")["error"]
    assert (bad["type"], bad["status"]) == ("ProviderHttpError", 400)
    assert "'messages' must contain at least one message" in bad["message"]
    refused = probe(openai_page, double, "unauthorized")["error"]
    assert (refused["type"], refused["status"]) == ("ProviderHttpError", 401)
    assert "Incorrect API key provided: [REDACTED]" in refused["message"]
    assert len(double.requests_for("bad_request")) == 1


def test_retry_after_is_read_through_cors(openai_page: Page, double: OpenAIDouble) -> None:
    result = probe(openai_page, double, "rate_limited")
    assert result["reply"]["text"] == "Hello, world!"
    assert result["sleeps"] == [2.0]  # the header reached Python: not the 0.5 s backoff
    assert len(double.requests_for("rate_limited")) == 2


def test_a_cut_stream_keeps_its_partial_text(openai_page: Page, double: OpenAIDouble) -> None:
    error = probe(openai_page, double, "cut")["error"]
    assert error["type"] == "ProviderStreamCut"
    assert error["partial"] == "Once upon a time"


def test_cancelling_the_task_aborts_the_request(openai_page: Page, double: OpenAIDouble) -> None:
    result = probe(openai_page, double, "slow_stream", mode="cancel")
    assert result["cancelled"] is True and result["events"][0]["kind"] == "text"
    assert double.wait_until_done("slow_stream")  # it streams for a minute unless left
    assert double.requests_for("slow_stream")[0].disconnected


PAGE_POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'"
DIST = Path(__file__).resolve().parent.parent / "dist"


def site_with_policy(root: Path, policy: str) -> Path:
    """dist/ (linked) with csp.html, a page whose policy is in its <meta>: served from
    127.0.0.1 as the double is, where a page Playwright made up would count as public and
    Chromium would refuse its requests to 127.0.0.1 for that alone (Private Network Access)."""
    root.mkdir()
    for entry in DIST.iterdir():
        (root / entry.name).symlink_to(entry)
    (root / "csp.html").write_text(
        f'<!doctype html><meta http-equiv="Content-Security-Policy" content="{policy}">'
        "<title>a page with a Content Security Policy</title>"
    )
    return root


CSP_TURN = """async ({ baseUrl, worker }) => {
    const agrun = await import('/agrun.js');
    const rt = await agrun.createRuntime({ storage: 'memory', worker, memoryExtraction: 'off',
                                           provider: { kind: 'openai', baseUrl } });
    const result = await rt.run('hi');
    rt.close();
    return { status: result.state.status, output: result.output,
             error: result.state.error?.message ?? null };
}"""


@pytest.mark.parametrize(
    ("listed", "worker"),
    [(False, False), (True, False), (False, True)],
    ids=["not-listed", "listed", "not-listed-worker"],
)
def test_a_model_server_the_pages_policy_does_not_list_fails_once_saying_so(
    browser: Browser,
    problems: PageProblems,
    double: OpenAIDouble,
    tmp_path: Path,
    listed: bool,
    worker: bool,
) -> None:
    """A policy's connect-src that does not list the model server's origin: fetch fails as
    a network error does, and the turn was retried 4 times and said 'Failed to fetch'. It
    fails at the first refusal, naming the directive; listed, it answers; a worker's fetch
    answers to the worker's own policy, not the page's."""
    policy = PAGE_POLICY + (f"; connect-src 'self' {double.url}" if listed else "")
    refused = not listed and not worker
    problems.console_errors_expected = refused  # Chromium logs the refusal itself
    server, url = serve_in_background(site_with_policy(tmp_path / "site", policy))
    context = browser.new_context(base_url=url)
    try:
        guard_context(context, url, problems)
        context.route(f"{double.url}/**", lambda route: route.continue_())
        page = context.new_page()
        guard_page(page, problems)
        page.goto("/csp.html")
        out = page.evaluate(CSP_TURN, {"baseUrl": double.url_for("text"), "worker": worker})
        assert problems.unexpected_errors() == [] and problems.foreign_requests == []
    finally:
        context.close()
        server.shutdown()
        server.server_close()
    if refused:
        assert out["status"] == "failed", out
        assert "Content Security Policy (connect-src)" in out["error"], out
        assert "add it to connect-src" in out["error"] and "attempts" not in out["error"], out
        assert double.requests_for("text") == []
    else:
        assert out["status"] == "succeeded" and out["output"], out
