"""The model turn, continuity and the content store through createRuntime, with a page
provider written in JavaScript (issues 10, 12, 13). Real models: e2e/test_real_model.py."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from conftest import boot_runtime

# A page provider: answers "From what you told me: <line>" to a recall question when the
# evidence section holds it, calls read_content for "format that as a table", calls the
# weather tool when asked about weather, and otherwise streams a three-line answer.
PROVIDER = """async (request, { signal, onToken }) => {
    window.providerCalls = (window.providerCalls ?? 0) + 1;
    window.lastRequest = request;
    const system = request.messages[0].content;
    const last = request.messages.at(-1);
    if (last.role === 'tool') {
        if (last.content.startsWith('error')) return { text: 'no data' };
        const lines = last.content.split('\\n');
        if (lines.length > 1) return { text: '| line |\\n|---|\\n' + lines.map((l) => `| ${l} |`).join('\\n') };
        onToken('It is ');
        return { text: 'It is ' + last.content + '.', usage: { promptTokens: 40, completionTokens: 6 } };
    }
    if (/prefer to drink/.test(last.content) && system.includes('## Preferences')) {
        return { text: 'From what you told me: ' + system.split('## Preferences\\n- ')[1].split('\\n')[0] };
    }
    if (/table/.test(last.content) && system.includes('## Stored content')) {
        const ref = system.split('## Stored content\\n- ')[1].split(' ')[0];
        return { toolCalls: [{ id: 'r1', name: 'read_content', arguments: { ref } }] };
    }
    if (/weather/.test(last.content)) {
        return { toolCalls: [{ id: 'w1', name: 'weather', arguments: { city: 'Paris' } }] };
    }
    if (/slow/.test(last.content)) {
        onToken('thinking ');  // a word is passed on once it ends (kernel/_stream_mask.py)
        await new Promise((resolve, reject) => {
            signal.addEventListener('abort', () => { window.providerAborted = true; reject(signal.reason); });
        });
    }
    for (const word of ['alpha\\n', 'beta\\n', 'gamma']) onToken(word);
    return { text: 'alpha\\nbeta\\ngamma', usage: { promptTokens: 30, completionTokens: 3 } };
}"""

WEATHER = """{ name: 'weather', description: 'Weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  run: (input, context) => 'sunny in ' + context.arguments.city }"""


def options(extra: str = "") -> str:
    return f"{{ provider: {PROVIDER}, skills: [{WEATHER}], memoryExtraction: 'rules', {extra} }}"


def test_a_model_turn_with_a_page_provider_tools_tokens_and_stream(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, options())
    result = page.evaluate(
        """async () => {
            const tokens = [];
            const result = await rt.run('what is the weather?', { onToken: (t) => tokens.push(t) });
            const items = [];
            for await (const item of rt.stream('tell me three words')) items.push(item.type);
            return { output: result.output, tokens, roles: result.messages.map((m) => m.role),
                     usage: rt.state().lastRun, items, live: rt.diagnostics().liveProxies,
                     tools: window.lastRequest.tools.map((t) => t.function.name) };
        }"""
    )
    assert result["output"] == "It is sunny in Paris."
    # What the provider streamed, then the rest of its reply: passed on a word at a time once
    # each word has ended (the last at the reply's end), masked as the kept reply would be.
    assert result["tokens"] == ["It is ", "sunny in ", "Paris."]
    assert result["roles"] == ["user", "assistant", "tool", "assistant"]
    # The stream's provider gives three lines in one go: the first two reach the runtime
    # together and go on together; the last, still a word arriving, at the reply's end.
    assert result["items"][-1] == "result" and result["items"].count("token") == 2
    assert result["usage"]["modelCalls"] == 1 and result["usage"]["usage"]["promptTokens"] == 30
    assert result["live"] == 0
    assert "weather" in result["tools"] and "read_content" in result["tools"]


def test_aborting_a_model_turn_reaches_the_page_provider(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, options())
    result = page.evaluate(
        """async () => {
            const controller = new AbortController();
            const running = rt.run('slow please', { signal: controller.signal, onToken: () => controller.abort('stop') });
            const outcome = await running.then(() => 'resolved', (e) => [e.name, e.result.state.status]);
            const history = rt.history().map((m) => [m.role, m.runStatus, m.content.length > 0]);
            return { outcome, aborted: window.providerAborted === true, history };
        }"""
    )
    # The person's words stay, and the answer as far as it streamed, both marked cancelled.
    assert result == {
        "outcome": ["AbortError", "cancelled"],
        "aborted": True,
        "history": [["user", "cancelled", True], ["assistant", "cancelled", True]],
    }


# A page provider that fails its first call (the server is down), then answers.
FLAKY = """async (request) => {
    window.sent = [...(window.sent ?? []), request.messages];
    if (window.sent.length === 1) throw Object.assign(new Error('server down'), { status: 503 });
    return { text: 'Here are the three points.' };
}"""


def test_try_again_after_a_failed_turn_reaches_the_model_with_the_ask(page: Page) -> None:
    idb = f"{{ provider: {FLAKY}, storage: 'indexeddb', sessionId: 'retry', dbName: 'e2e-retry' }}"
    boot_runtime(page, idb)
    failed: dict[str, Any] = page.evaluate(
        """async () => {
            const failed = await rt.run('Summarize the Q3 sales report.');
            let thrown = null;
            try { failed.throwIfFailed(); } catch (error) {
              thrown = { name: error.name, code: error.code, same: error.result === failed,
                         typed: error instanceof agrun.RunFailedError && error instanceof agrun.AgrunError };
            }
            return { status: failed.state.status, code: failed.error.code, thrown,
                     plain: Object.keys(JSON.parse(JSON.stringify(failed))).includes('throwIfFailed'),
                     kept: rt.history().map((m) => [m.content, m.runStatus, m.errorCode]) };
        }"""
    )
    assert failed["status"] == "failed"
    # The caller who wants an exception gets a typed one; the result stays plain JSON.
    assert failed["thrown"] == {
        "name": "RunFailedError",
        "code": failed["code"],
        "same": True,
        "typed": True,
    }
    assert failed["plain"] is False
    assert failed["kept"] == [["Summarize the Q3 sales report.", "failed", failed["code"]]]
    page.reload()
    boot_runtime(page, idb)
    retried: dict[str, Any] = page.evaluate(
        """async () => {
            const kept = rt.history().map((m) => [m.content, m.runStatus]);
            window.sent = [[]];  // the failed call, as before the reload
            const result = (await rt.run('try again')).throwIfFailed();
            const exported = JSON.parse(await rt.exportSession());
            return { kept, output: result.output, sent: window.sent[1].map((m) => [m.role, m.content]),
                     exported: exported.session.turns[0].messages.map((m) => m.runStatus) };
        }"""
    )
    assert retried["kept"] == [["Summarize the Q3 sales report.", "failed"]]
    assert retried["output"] == "Here are the three points."
    assert retried["exported"] == ["failed"]
    roles = [role for role, _ in retried["sent"]]
    assert roles == ["system", "user"]
    said = retried["sent"][1][1]
    assert said.startswith("Summarize the Q3 sales report.") and said.endswith("try again")
    assert "not answered" in said


def test_a_preference_survives_fifty_turns_and_a_reload_and_answers_a_recall(page: Page) -> None:
    idb = options("storage: 'indexeddb', sessionId: 'recall', dbName: 'e2e-recall'")
    boot_runtime(page, idb)
    page.evaluate(
        """async () => {
            await rt.run('Good morning! I prefer green tea over coffee.');
            for (let n = 0; n < 50; n += 1) await rt.run(`Unrelated turn ${n}, about the town ${n}.`);
        }"""
    )
    page.reload()
    boot_runtime(page, idb)
    result: dict[str, Any] = page.evaluate(
        """async () => {
            const result = await rt.run('What do I prefer to drink?');
            const view = result.state.sessionContextView;
            return { output: result.output, signal: result.state.readAttemptSignal,
                     memory: rt.sessionMemory().preferences.map((p) => p.text),
                     snapshot: result.state.contextSnapshot.sessionMemory.preferences.length,
                     alias: [view.preferences[0].text, Object.isFrozen(view),
                             Object.keys(result.state).includes('sessionContextView')] };
        }"""
    )
    assert result["output"] == "From what you told me: I prefer green tea over coffee."
    assert result["signal"]["found"] is True and result["memory"] == [
        "I prefer green tea over coffee."
    ]
    assert result["snapshot"] == 1
    # The debug alias reads the snapshot, frozen, and is in no enumeration of the state.
    assert result["alias"] == ["I prefer green tea over coffee.", True, False]


def test_format_that_as_a_table_reads_the_stored_body(page: Page) -> None:
    idb = options("storage: 'indexeddb', sessionId: 'content', dbName: 'e2e-content'")
    boot_runtime(page, idb)
    first = page.evaluate("async () => (await rt.run('three words please')).messages.at(-1)")
    assert first["contentRef"].startswith("content:") and first["contentKind"] == "text"
    page.reload()
    boot_runtime(page, idb)
    result = page.evaluate(
        """async (ref) => {
            const events = [];
            const result = await rt.run('format that as a table');
            let missing;
            try { rt.content('content:nope'); } catch (e) { missing = e.code; }
            return { output: result.output, body: rt.content(ref).body, missing,
                     retrieved: result.events.filter((e) => e.kind === 'ContentRetrieved').map((e) => e.found) };
        }""",
        first["contentRef"],
    )
    assert result["output"] == "| line |\n|---|\n| alpha |\n| beta |\n| gamma |"
    assert result["body"] == "alpha\nbeta\ngamma" and result["missing"] == "content_ref_not_found"
    assert result["retrieved"] == [True]


def test_global_memory_behind_the_filters_and_redaction_in_the_page(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(
        page,
        "{ sensitivityFilter: (entry) => (JSON.stringify(entry).includes('P-') ? 'patient ids' : null) }",
    )
    result = page.evaluate(
        """async () => {
            const secret = await rt.promoteToGlobalMemory([{ text: 'fine', apiKey: 'x' }, 'token sk-ant-abcdefghijklmnopqrstu']);
            const host = await rt.promoteToGlobalMemory(['patient P-1234']);
            const kept = await rt.promoteToGlobalMemory([{ text: 'prefers metric', kind: 'preference' }]);
            const forgot = await rt.forgetGlobalMemory(kept.promoted[0].id);
            const echoed = await rt.run('my password=hunter2222 ok');
            const exported = await rt.exportSession();
            return { refused: secret.refused.length + host.refused.length, forgot,
                     left: rt.globalMemory().length, output: echoed.output,
                     leaked: exported.includes('hunter2222') || JSON.stringify(rt.history()).includes('hunter2222') };
        }"""
    )
    assert result == {
        "refused": 3,
        "forgot": True,
        "left": 0,
        "output": "echo: my password=[REDACTED] ok",
        "leaked": False,
    }


def test_a_page_skill_awaits_stored_content_and_the_clarification_helper(warm_page: Page) -> None:
    page = warm_page
    recap = """{ name: 'recap', description: 'Recap a stored reply.',
      parameters: { type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'] },
      async run(input, context, helpers) {
        const entry = await context.content(context.arguments.ref);
        let missing;
        await context.content('content:nope').catch((e) => { missing = e.code; });
        const ask = await helpers.askClarification('Which city?', { missing: 'city', default: 'Paris' });
        return [entry.body.split('\\n').length, missing, ask.ask, ask.value].join(' ');
      } }"""
    provider = """async (request) => {
        const last = request.messages.at(-1);
        if (last.role === 'tool') return { text: 'recap: ' + last.content };
        const system = request.messages[0].content;
        if (/recap/.test(last.content) && system.includes('## Stored content')) {
            const ref = system.split('## Stored content\\n- ')[1].split(' ')[0];
            return { toolCalls: [{ id: 'c1', name: 'recap', arguments: { ref } }] };
        }
        return { text: 'alpha\\nbeta\\ngamma' };
    }"""
    boot_runtime(page, f"{{ provider: {provider}, skills: [{recap}] }}")
    output = page.evaluate(
        "async () => { await rt.run('three words'); return (await rt.run('recap that')).output; }"
    )
    assert output == "recap: 3 content_ref_not_found false Paris"


def test_the_page_ranker_compressor_and_redactor_shape_every_pack(warm_page: Page) -> None:
    page = warm_page
    hooks = """ranker: (query, documents) => { window.rankQueries.push(query); return documents.map((d) => (d.includes('blue') ? 1 : 0)); },
      compressors: { toolOutput: (text, { limit, countTokens }) => { window.compressed = [limit, countTokens(text) > limit]; return [[0, 12]]; } },
      redactor: (text) => text.replaceAll('Zephyr', '[name]')"""
    listing = """{ name: 'listing', description: 'A long listing.', parameters: { type: 'object', properties: {} },
      run: () => 'row '.repeat(2000) }"""
    provider = """async (request) => {
        window.requests.push(request.messages.map((m) => m.content ?? '').join('\\n'));
        const last = request.messages.at(-1);
        if (last.role === 'tool') return { text: 'tool gave: ' + last.content };
        if (/list/.test(last.content)) return { toolCalls: [{ id: 'l1', name: 'listing', arguments: {} }] };
        return { text: 'ok' };
    }"""
    page.evaluate("() => { window.rankQueries = []; window.requests = []; }")
    boot_runtime(page, f"{{ provider: {provider}, skills: [{listing}], {hooks} }}")
    result = page.evaluate(
        """async () => {
            await rt.run('My cat is called Zephyr and I like the blue mug.');
            await rt.run('Which mug do I like?');
            const listed = await rt.run('list everything');
            return { listed: listed.output, said: rt.history()[0].content, requests,
                     queries: rankQueries, compressed: window.compressed,
                     strategies: rt.lastPack().compressionMetadata.records.map((r) => r.strategy) };
        }"""
    )
    assert not any("Zephyr" in text for text in result["requests"])
    assert result["said"] == "My cat is called [name] and I like the blue mug."
    assert "Which mug do I like?" in result["queries"]
    assert result["listed"] == "tool gave: row row row " and result["compressed"] == [256, True]
    assert result["strategies"] == ["host tool_output"]


def test_a_page_hook_of_the_wrong_shape_fails_the_turn_and_keeps_the_session(
    warm_page: Page,
) -> None:
    page = warm_page
    boot_runtime(page, "{ provider: async () => ({ text: 'ok' }), ranker: () => 'high' }")
    result = page.evaluate(
        """async () => { const failed = await rt.run('hello');
            return [failed.state.status, failed.error.code, failed.error.message.includes('ranker'), rt.history().length]; }"""
    )
    assert result == ["failed", "context_building_failed", True, 1]  # the ask alone, marked


@pytest.mark.parametrize("apart", [False, True], ids=["in-one-go", "a-task-apart"])
def test_a_page_provider_s_pieces_reach_the_page_whole_and_in_order(
    warm_page: Page, apart: bool
) -> None:
    # 200 pieces given in one go reach the runtime as one and go on in a call or two (200
    # before, each paying a task of its own); given a task apart, as a model's tokens come,
    # each goes on as its word ends. The text is whole and in order either way.
    provider = f"""async (request, {{ onToken }}) => {{
        const apart = () => new Promise((resolve) => {{
            const {{ port1, port2 }} = new MessageChannel();
            port1.onmessage = () => resolve();
            port2.postMessage(0);
        }});
        const words = Array.from({{ length: 200 }}, (_, n) => 'word' + n + ' ');
        for (const word of words) {{
            if ({str(apart).lower()}) await apart();
            onToken(word);
        }}
        return {{ text: words.join('') }};
    }}"""
    boot_runtime(warm_page, f"{{ provider: {provider}, memoryExtraction: 'off' }}")
    seen = warm_page.evaluate(
        """async () => {
            const tokens = [];
            const result = await rt.run('go', { onToken: (t) => tokens.push(t) });
            return { tokens, output: result.output };
        }"""
    )
    reply = "".join(f"word{n} " for n in range(200))
    assert "".join(seen["tokens"]) == seen["output"] == reply
    if apart:
        assert len(seen["tokens"]) > 100
    else:
        assert 1 <= len(seen["tokens"]) <= 3
