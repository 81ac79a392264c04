"""The OpenAI-compatible provider inside a page: Pyodide's ``fetch`` transport for real, in
headless Chromium, against tools/openai_double.py on another 127.0.0.1 port (so CORS is
real too). Streamed text, tool calls, a refused request, a cut stream, Retry-After through
CORS, and an abort that the server sees as the client going away."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Page

from openai_double import OpenAIDouble

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
