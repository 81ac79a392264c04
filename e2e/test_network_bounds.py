"""What a misbehaving model server (tools/openai_double.py on another 127.0.0.1 port) or a
page provider can do to a page's runtime, in headless Chromium through createRuntime (issue
20): a 50 MB answer, keep-alive comments forever, deltas forever, JSON nested 30,000 deep
in a chunk, a completion or an error body, a page function that never settles or streams
without end. Each ends in a typed error, the session as it was (the person's message alone,
marked), the interpreter alive for the next turn."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from conftest import boot_runtime
from openai_double import OpenAIDouble

# One turn: its error, the reply's ModelCallFailed event, the tokens the page saw, what the
# session keeps (history and export), and whether a second turn still gets a typed answer.
TURN = """async () => {
    let streamed = 0;
    const result = await rt.run('go', { onToken: (t) => { streamed += t.length; } });
    const failed = result.events.find((e) => e.kind === 'ModelCallFailed');
    const again = await rt.run('again');
    return {
        code: result.error?.code, message: result.error?.message ?? '',
        partial: failed?.partialText.length, streamed,
        kept: rt.history().map((m) => [m.role, m.content, m.errorCode]),
        exported: (await rt.exportSession()).length,
        again: again.error?.code,
    };
}"""


def turn(page: Page, double: OpenAIDouble, scenario: str, extra: str = "") -> Any:
    provider = f"{{ kind: 'openai', baseUrl: '{double.url_for(scenario)}', {extra} }}"
    boot_runtime(page, f"{{ provider: {provider}, memoryExtraction: 'off' }}")
    return page.evaluate(TURN)


def kept(code: str) -> list[list[Any]]:
    return [["user", "go", code], ["user", "again", code]]


def test_a_50_mb_answer_is_ended_at_the_cap(openai_page: Page, double: OpenAIDouble) -> None:
    result = turn(openai_page, double, "huge_stream")
    assert result["code"] == "provider_reply_too_long" == result["again"]
    assert "max_reply_tokens=512" in result["message"]
    assert result["partial"] == result["streamed"] <= 49_152
    assert result["kept"] == kept("provider_reply_too_long")
    assert result["exported"] < 100_000
    assert double.wait_until_done("huge_stream")
    assert all(r.disconnected for r in double.requests_for("huge_stream"))


def test_keep_alive_comments_meet_the_idle_deadline(
    openai_page: Page, double: OpenAIDouble
) -> None:
    result = turn(openai_page, double, "keepalive_forever", "idleTimeoutMs: 1000")
    assert result["code"] == "provider_timeout" == result["again"]
    assert "nothing of the model's reply came for 1 s" in result["message"]
    assert result["kept"] == kept("provider_timeout")
    assert double.wait_until_done("keepalive_forever")
    assert all(r.disconnected for r in double.requests_for("keepalive_forever"))


def test_deltas_forever_meet_the_whole_call_deadline(
    openai_page: Page, double: OpenAIDouble
) -> None:
    result = turn(openai_page, double, "slow_stream", "timeoutMs: 1500")
    assert result["code"] == "provider_timeout" == result["again"]
    assert "took longer than 1.5 s in all" in result["message"]
    assert result["partial"] == result["streamed"] > 0
    assert result["kept"] == kept("provider_timeout")
    assert double.wait_until_done("slow_stream")
    assert all(r.disconnected for r in double.requests_for("slow_stream"))


@pytest.mark.parametrize("scenario", ["deep_chunk", "deep_completion", "deep_error"])
def test_json_nested_30000_deep_does_not_kill_the_interpreter(
    openai_page: Page, double: OpenAIDouble, scenario: str
) -> None:
    result = turn(openai_page, double, scenario)
    assert result["code"] == "provider_protocol_error" == result["again"]
    assert "nested deeper than 64 levels" in result["message"]
    assert result["kept"] == kept("provider_protocol_error")


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_finished_reply_answers_at_once_and_its_rest_is_read_or_left(
    openai_page: Page, double: OpenAIDouble, worker: bool
) -> None:
    # late_done sends [DONE] and the body's end 0.2 s after the finish and the usage;
    # hang_after_finish never does. Either answers at its finish: the rest is read in the
    # background, to its end (the connection kept) or for 2 s (then the request aborted).
    answers = []
    for scenario in ("late_done", "hang_after_finish"):
        provider = f"{{ kind: 'openai', baseUrl: '{double.url_for(scenario)}' }}"
        boot_runtime(
            openai_page,
            f"{{ provider: {provider}, memoryExtraction: 'off', worker: {str(worker).lower()} }}",
        )
        answers.append(openai_page.evaluate("async () => (await rt.run('go')).output"))
    assert answers == ["Done", "Done"]
    # The second answer came while the server still held its body open.
    assert not double.requests_for("hang_after_finish")[0].done
    assert double.wait_until_done("late_done") and double.wait_until_done("hang_after_finish")
    assert not double.requests_for("late_done")[0].disconnected
    assert double.requests_for("hang_after_finish")[0].disconnected


@pytest.mark.parametrize("double", [True], indirect=True, ids=["keep_alive"])
def test_turns_keep_their_connection_to_the_model_server(
    openai_page: Page, double: OpenAIDouble
) -> None:
    # late_done ends its body 0.2 s after the reply's finish: a turn that aborted its request
    # there lost the connection, and the next turn opened another.
    provider = f"{{ kind: 'openai', baseUrl: '{double.url_for('late_done')}' }}"
    boot_runtime(openai_page, f"{{ provider: {provider}, memoryExtraction: 'off' }}")
    opened = []
    for _ in range(3):
        assert openai_page.evaluate("async () => (await rt.run('go')).output") == "Done"
        assert double.wait_until_done("late_done")
        opened.append(double.connections)
    assert not any(r.disconnected for r in double.requests_for("late_done"))
    assert opened[1] == opened[2] == opened[0]  # the first turn's connection, kept


def test_deadline_options_are_checked(openai_page: Page, double: OpenAIDouble) -> None:
    refused = openai_page.evaluate(
        """async (baseUrl) => {
            const agrun = await import('/agrun.js');
            const out = [];
            for (const options of [
                { provider: { kind: 'openai', baseUrl, timeoutMs: 0 } },
                { provider: { kind: 'openai', baseUrl, idleTimeoutMs: -5 } },
                { provider: async () => ({ text: 'x' }), providerTimeoutMs: 0 },
                { provider: async () => ({ text: 'x' }), providerTimeoutMs: '5' },
            ]) {
                try { (await agrun.createRuntime({ storage: false, ...options })).close(); out.push('created'); }
                catch (e) { out.push([e.name, e.message.match(/option '([^']+)'/)?.[1]]); }
            }
            return out;
        }""",
        double.url_for("text"),
    )
    assert refused == [
        ["AgrunConfigError", "provider.timeoutMs"],
        ["AgrunConfigError", "provider.idleTimeoutMs"],
        ["AgrunConfigError", "providerTimeoutMs"],
        ["AgrunConfigError", "providerTimeoutMs"],
    ]


# -- the page's own provider function ------------------------------------------------------

NEVER = """async (request, { signal }) => {
    window.providerCalls = (window.providerCalls ?? 0) + 1;
    signal.addEventListener('abort', () => { window.providerAborted = (window.providerAborted ?? 0) + 1; });
    return new Promise(() => {});
}"""

FLOOD = """async (request, { signal, onToken }) => {
    const piece = 'x'.repeat(50000);
    for (let n = 0; n < 1000 && !signal.aborted; n += 1) {
        onToken(piece);
        await new Promise((resolve) => setTimeout(resolve, 0));
    }
    window.providerAborted = (window.providerAborted ?? 0) + (signal.aborted ? 1 : 0);
    return { text: '' };
}"""


def test_a_page_provider_that_never_settles_meets_its_deadline(warm_page: Page) -> None:
    warm_page.evaluate("() => { window.providerAborted = 0; }")
    boot_runtime(warm_page, f"{{ provider: {NEVER}, providerTimeoutMs: 1000 }}")
    result = warm_page.evaluate(TURN)
    assert result["code"] == "provider_timeout" == result["again"]
    assert "did not finish within 1 s" in result["message"]
    assert result["kept"] == kept("provider_timeout")
    assert warm_page.evaluate("() => window.providerAborted") == 2


def test_a_page_provider_streaming_50_mb_is_ended_at_the_cap(warm_page: Page) -> None:
    warm_page.evaluate("() => { window.providerAborted = 0; }")
    boot_runtime(warm_page, f"{{ provider: {FLOOD}, storage: 'indexeddb', dbName: 'e2e-flood' }}")
    result = warm_page.evaluate(TURN)
    assert result["code"] == "provider_reply_too_long" == result["again"]
    assert result["partial"] == 0 and result["streamed"] == 0  # the first 50 KB is over
    assert result["kept"] == kept("provider_reply_too_long")
    assert result["exported"] < 100_000
    warm_page.wait_for_function("() => window.providerAborted === 2")
    stored = warm_page.evaluate(
        """async () => {
            rt.close();
            const again = await agrun.createRuntime({ storage: 'indexeddb', dbName: 'e2e-flood' });
            const size = (await again.exportSession()).length;
            const history = again.history().map((m) => m.errorCode);
            again.close();
            return { size, history };
        }"""
    )
    assert stored["size"] < 100_000
    assert stored["history"] == ["provider_reply_too_long", "provider_reply_too_long"]


def test_a_model_request_starts_outside_the_interpreter(
    openai_page: Page, double: OpenAIDouble
) -> None:
    # With DevTools attached (Playwright drives Chromium that way) the browser records the
    # stack every request starts from; from under the interpreter's frames that cost ~1 ms a
    # request. The request starts from a microtask of its own (boot.js's fetchSoon).
    provider = f"{{ kind: 'openai', baseUrl: '{double.url_for('text')}' }}"
    boot_runtime(openai_page, f"{{ provider: {provider}, memoryExtraction: 'off' }}")
    stacks = openai_page.evaluate(
        """async () => {
            const stacks = [];
            const fetch = window.fetch;
            window.fetch = function (...args) {
                stacks.push(new Error().stack);
                return fetch.apply(this, args);
            };
            try {
                const result = await rt.run('go');
                return { output: result.output, stacks };
            } finally {
                window.fetch = fetch;
            }
        }"""
    )
    assert stacks["output"] == "Hello, world!"
    assert len(stacks["stacks"]) == 1
    assert "pyodide.asm" not in stacks["stacks"][0] and "wasm" not in stacks["stacks"][0]
