"""The wllama provider in headless Chromium, on the real test model: llama.cpp compiled to
WebAssembly, the GGUF and wllama served by the page's own site. Asserts the provider
protocol (streaming, tool calls, tool results, abort, constrained JSON), not the words."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from conftest import guard_context, guard_page
from serve import serve_in_background

DIST = Path(__file__).resolve().parent.parent / "dist"
MODEL = "models/agrun-tiny.gguf"

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city"}},
            "required": ["city"],
        },
    },
}
CLOCK = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the current time in a timezone.",
        "parameters": {
            "type": "object",
            "properties": {"timezone": {"type": "string"}},
            "required": ["timezone"],
        },
    },
}
TOOLS = [WEATHER, CLOCK]

# Runs in the page: one provider per page (the model loads once), each call's streamed
# deltas recorded beside its result or its error.
CALL = """async ([request, abortAfterTokens]) => {
    const { createWllamaProvider } = await import('/providers/wllama.js');
    window.wllamaProvider ??= createWllamaProvider({ modelUrl: '/models/agrun-tiny.gguf' });
    const controller = new AbortController();
    const tokens = [];
    const onToken = (delta) => {
        tokens.push(delta);
        if (tokens.length === abortAfterTokens) controller.abort();
    };
    try {
        const result = await window.wllamaProvider(
            { temperature: 0, maxTokens: 128, ...request },
            { signal: controller.signal, onToken },
        );
        return { result, tokens };
    } catch (error) {
        const tokensAtRejection = tokens.length;
        // Let a generation that did not stop show itself through more deltas.
        await new Promise((resolve) => setTimeout(resolve, 300));
        return {
            error: { name: error.name, isDomException: error instanceof DOMException },
            tokensAtRejection,
            tokens,
        };
    }
}"""


@pytest.fixture(scope="module", autouse=True)
def _built() -> None:
    """The build puts wllama and the test model into dist/; say so when it did not."""
    for path in ("wllama/index.js", "wllama/wasm/wllama.wasm", "providers/wllama.js", MODEL):
        if not (DIST / path).is_file():
            pytest.fail(f"dist/{path} is missing: run ./build.sh first")


@pytest.fixture
def call(warm_page: Page) -> Iterator[Any]:
    def call_(request: dict[str, Any], abort_after_tokens: int = 0) -> dict[str, Any]:
        out: dict[str, Any] = warm_page.evaluate(CALL, [request, abort_after_tokens])
        return out

    yield call_


def as_message(tool_calls: list[dict[str, str]]) -> dict[str, Any]:
    """The assistant message agrun sends back for a reply of tool calls."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in tool_calls
        ],
    }


def test_plain_answer_streams_its_text(call: Any) -> None:
    out = call({"messages": [SYSTEM, {"role": "user", "content": "Hello there!"}]})
    result = out["result"]
    assert result["text"].strip() != ""
    assert out["tokens"], "onToken was never called"
    assert "".join(out["tokens"]) == result["text"]
    assert result["toolCalls"] == []
    assert result["finishReason"] == "stop"
    assert result["usage"]["promptTokens"] > 0
    assert result["usage"]["completionTokens"] > 0


def test_a_matching_request_becomes_a_tool_call(call: Any) -> None:
    # Phrased as the test model was trained to read a request for a tool (models/README.md).
    messages = [SYSTEM, {"role": "user", "content": "Get the current weather for a city: Paris."}]
    result = call({"messages": messages, "tools": TOOLS})["result"]
    assert result["finishReason"] == "tool_calls"
    assert result["toolCalls"], "no tool call"
    assert "<tool_call>" not in result["text"]
    offered = {t["function"]["name"] for t in TOOLS}
    for tool_call in result["toolCalls"]:
        assert tool_call["name"] in offered
        assert isinstance(json.loads(tool_call["arguments"]), dict)
        assert tool_call["id"]
    assert len({c["id"] for c in result["toolCalls"]}) == len(result["toolCalls"])


def test_a_tool_result_gets_a_text_answer(call: Any) -> None:
    tool_call = {"id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'}
    messages: list[dict[str, Any]] = [
        SYSTEM,
        {"role": "user", "content": "What is the weather in Paris?"},
        as_message([tool_call]),
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "get_weather",
            "content": "Sunny, 21 degrees",
        },
    ]
    out = call({"messages": messages, "tools": TOOLS})
    result = out["result"]
    assert result["toolCalls"] == []
    assert result["finishReason"] == "stop"
    assert result["text"].strip() != ""
    assert "".join(out["tokens"]) == result["text"]


def test_abort_rejects_and_stops_the_stream(call: Any) -> None:
    # A long message makes a long echo, so the abort lands mid-answer.
    words = " ".join(f"word{i}" for i in range(20))
    request = {
        "messages": [SYSTEM, {"role": "user", "content": f"Please note: {words}"}],
        "maxTokens": 256,
    }
    full = call(request)["result"]
    assert full["usage"]["completionTokens"] > 3

    out = call(request, abort_after_tokens=1)
    assert out.get("error") == {"name": "AbortError", "isDomException": True}
    assert out["tokensAtRejection"] == 1
    assert len(out["tokens"]) == 1, "deltas kept coming after the call rejected"

    # The provider still answers in full after an abort.
    again = call(request)["result"]
    assert again["finishReason"] == full["finishReason"]
    assert again["usage"]["completionTokens"] == full["usage"]["completionTokens"]


def test_an_already_aborted_signal_rejects_without_a_call(warm_page: Page) -> None:
    out = warm_page.evaluate(
        """async () => {
            const { createWllamaProvider } = await import('/providers/wllama.js');
            const provider = createWllamaProvider({ modelUrl: '/models/absent.gguf' });
            try {
                await provider({ messages: [] }, { signal: AbortSignal.abort() });
                return 'resolved';
            } catch (error) {
                return error.name;
            }
        }"""
    )
    assert out == "AbortError"


def test_a_json_schema_constrains_the_reply(call: Any) -> None:
    schema = {
        "type": "object",
        "properties": {
            key: {"type": "array", "items": {"type": "string"}}
            for key in ("facts", "preferences", "decisions")
        },
        "required": ["facts", "preferences", "decisions"],
        "additionalProperties": False,
    }
    system = (
        "Extract durable memory from the conversation turn. Reply with JSON only: "
        '{"facts": [...], "preferences": [...], "decisions": [...]}.'
    )
    turn = "user: My name is Ada and I prefer tea.\nassistant: Nice to meet you, Ada."
    result = call(
        {
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": turn}],
            "responseFormat": {
                "type": "json_schema",
                "json_schema": {"name": "memory", "schema": schema},
            },
            "maxTokens": 256,
        }
    )["result"]
    assert result["finishReason"] == "stop"
    reply = json.loads(result["text"])
    assert set(reply) == {"facts", "preferences", "decisions"}
    assert all(isinstance(v, list) and all(isinstance(s, str) for s in v) for v in reply.values())


STRICT = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'"

# One short call, or why not; a provider that has not settled in 60 s is reported as hung.
SHORT_CALL = """async () => {
    const { createWllamaProvider } = await import('/providers/wllama.js');
    const provider = createWllamaProvider({ modelUrl: '/models/agrun-tiny.gguf' });
    const hung = new Promise((resolve) => setTimeout(() => resolve({ hung: true }), 60000));
    const call = provider(
        { temperature: 0, maxTokens: 4, messages: [{ role: 'user', content: 'hi' }] },
        { signal: new AbortController().signal, onToken: () => {} },
    ).then((reply) => ({ text: typeof reply.text }), (error) => ({ error: error.message }));
    return Promise.race([call, hung]);
}"""


@pytest.mark.parametrize("policy", [STRICT, f"{STRICT}; worker-src 'self' blob:"])
def test_a_content_security_policy_that_refuses_its_worker_fails_the_call_saying_so(
    page: Page, problems: Any, policy: str
) -> None:
    """wllama makes its worker from a blob: URL; a policy that refuses that made the first
    call wait forever (wllama never hears of the refusal). It fails now, with the fix."""
    refused = "blob:" not in policy
    problems.console_errors_expected = refused  # Chromium logs the refusal itself
    page.route(
        "**/csp.html",
        lambda route: route.fulfill(
            body="<!doctype html><title>csp</title>",
            headers={"Content-Type": "text/html", "Content-Security-Policy": policy},
        ),
    )
    page.goto("/csp.html")
    out = page.evaluate(SHORT_CALL)
    if refused:
        assert "Content Security Policy" in out.get("error", ""), out
        assert "allow blob: in worker-src" in out["error"], out
    else:
        assert out == {"text": "string"}, out


@pytest.mark.parametrize("damage", ["missing", "cut"])
def test_a_missing_or_damaged_wllama_wasm_fails_the_call_saying_so(
    browser: Browser, problems: Any, tmp_path: Path, damage: str
) -> None:
    """llama.cpp's wasm missing (a deploy without it) or cut short: wllama's worker aborts, says
    so only in a log line, and the first call waited forever. It fails now, naming the file."""
    site = tmp_path / "site"
    site.mkdir()
    for entry in DIST.iterdir():
        if entry.name != "wllama":
            (site / entry.name).symlink_to(entry)
    shutil.copytree(DIST / "wllama", site / "wllama")
    wasm = site / "wllama" / "wasm" / "wllama.wasm"
    if damage == "missing":
        wasm.unlink()
    else:
        wasm.write_bytes(wasm.read_bytes()[: wasm.stat().st_size // 2])
    problems.console_errors_expected = True  # wllama logs the failure itself
    # The worker's abort, uncaught there; and wllama's handler of the abort's message, which
    # throws on it (an Error where it expects a string): why the call never settled.
    problems.expected_page_errors += ["Aborted(", "message.replace is not a function"]
    server, url = serve_in_background(site)
    context = browser.new_context(base_url=url)
    try:
        guard_context(context, url, problems)
        page = context.new_page()
        guard_page(page, problems)
        page.goto("/blank.html")
        out = page.evaluate(SHORT_CALL)
    finally:
        context.close()
        server.shutdown()
        server.server_close()
    assert "error" in out, out
    assert "the in-page model's runtime stopped as it started" in out["error"], out
    assert "wllama.wasm" in out["error"], out
    assert problems.unexpected_errors() == [] and problems.foreign_requests == []
