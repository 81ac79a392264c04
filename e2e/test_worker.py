"""Worker mode (issue 14.1): createRuntime({ worker: true }) runs Pyodide and agrun in a module
Web Worker. The page's skills, provider, store and callbacks stay in the page and are called
across; reads answer from a mirror. Each test checks the worker gives what the page mode
gives, and the long-task test that the page's main thread is never blocked 50 ms or more."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Page

from conftest import boot_runtime
from openai_double import BURST_WORDS, OpenAIDouble

# A page provider: calls the `note` tool for "note ...", the `recap` tool for "recap", streams
# three words otherwise, and waits to be aborted on "slow".
PROVIDER = """async (request, { signal, onToken }) => {
    const last = request.messages.at(-1);
    if (last.role === 'tool') return { text: 'tool said: ' + last.content };
    if (/^note/.test(last.content)) return { toolCalls: [{ id: 'n1', name: 'note', arguments: { text: last.content } }] };
    if (/^recap/.test(last.content)) {
        const ref = request.messages[0].content.split('## Stored content\\n- ')[1].split(' ')[0];
        return { toolCalls: [{ id: 'r1', name: 'recap', arguments: { ref } }] };
    }
    if (/slow/.test(last.content)) {
        onToken('thinking ');  // a word goes on once it ends (kernel/_stream_mask.py)
        await new Promise((resolve, reject) => signal.addEventListener('abort', () => { window.providerAborted = true; reject(signal.reason); }));
    }
    for (const word of ['alpha\\n', 'beta\\n', 'gamma']) onToken(word);
    return { text: 'alpha\\nbeta\\ngamma', usage: { promptTokens: 30, completionTokens: 3 } };
}"""

SKILLS = """[
  { name: 'note', description: 'Remember a note.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    run(input, context, helpers) {
      const before = context.memory.readAll().length;
      helpers.appendMemory({ text: context.arguments.text, kind: 'note' });
      helpers.noteSearch(context.arguments.text);
      return 'noted after ' + before;
    } },
  { name: 'recap', description: 'Recap a stored reply.',
    parameters: { type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'] },
    async run(input, context, helpers) {
      const entry = await context.content(context.arguments.ref);
      const ask = await helpers.askClarification('Which city?', { missing: 'city', default: 'Paris' });
      return entry.body.split('\\n').length + ' lines, ' + ask.value;
    } },
]"""

SCRIPT = """async () => {
    const tokens = [];
    await rt.run('hello there', { onToken: (t) => tokens.push(t) });
    await rt.run('note the door code is in the blue book');
    await rt.run('note I prefer tea');
    const recap = await rt.run('recap');
    const items = [];
    for await (const item of rt.stream('three words')) items.push(item.type);
    return {
        tokens, recap: recap.output, items,
        roles: rt.history().map((m) => m.role),
        said: rt.history().filter((m) => m.role === 'assistant').map((m) => m.content),
        memory: rt.memory().map((m) => [m.kind, m.text]),
        search: rt.inquiry()?.lastSearch ?? null,
        pack: rt.lastPack() !== null,
        content: rt.content(rt.history().find((m) => m.contentRef).contentRef).body,
        lastRun: rt.state().lastRun.modelCalls,
        live: rt.diagnostics().liveProxies,
    };
}"""


def options(extra: str = "") -> str:
    return f"{{ provider: {PROVIDER}, skills: {SKILLS}, memoryExtraction: 'rules', {extra} }}"


def test_a_worker_runtime_gives_what_a_page_runtime_gives(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, options())
    in_page: dict[str, Any] = page.evaluate(SCRIPT)
    boot_runtime(page, options("worker: true"))
    in_worker: dict[str, Any] = page.evaluate(SCRIPT)
    assert page.evaluate("() => rt.diagnostics().worker") is True
    assert in_worker == in_page
    assert in_worker["recap"] == "tool said: 3 lines, Paris"  # the first listed: the oldest
    # The provider gives its three lines in one go: they reach the runtime together (from a
    # worker too, where the page sends the pieces of one task as one message) and the first
    # two go on together; the last, still a word arriving, at the reply's end.
    assert in_worker["tokens"] == ["alpha\nbeta\n", "gamma"]
    assert ["note", "note the door code is in the blue book"] in in_worker["memory"]
    assert in_worker["said"][-1] == "alpha\nbeta\ngamma" and in_worker["live"] == 0


BAD_HELPER_CALLS = {
    "an entry that is a string": "helpers.appendMemory('just text')",
    "an entry with no text": "helpers.appendMemory({ kind: 'note' })",
    "an entry with empty text": "helpers.appendMemory({ text: '' })",
    "an entry with numeric text": "helpers.appendMemory({ text: 5 })",
    "an entry with an extra field": "helpers.appendMemory({ text: 'x', mood: 1 })",
    "an entry with a bad kind": "helpers.appendMemory({ text: 'x', kind: 'has space' })",
    "an entry whose data is a list": "helpers.appendMemory({ text: 'x', data: [1] })",
    "an entry with an unsafe integer": "helpers.appendMemory({ text: 'x', data: { n: 2 ** 60 } })",
    "a cycle reason that is a number": "helpers.requestCycle(3)",
    "sources that are not a list": "helpers.noteSources('a')",
    "a source without an id": "helpers.noteSources([{ title: 'x' }])",
    "a search that is not text": "helpers.noteSearch(null)",
    "a read source that is a number": "helpers.noteRead(7)",
    "a good entry": "helpers.appendMemory({ text: 'fine', kind: 'fact', data: { n: 1 } })",
}


def test_skill_helpers_refuse_what_python_refuses_in_both_modes(warm_page: Page) -> None:
    page = warm_page
    calls = json.dumps(list(BAD_HELPER_CALLS.values()))
    probe = f"""{{ name: 'probe', description: 'tries helpers',
      run(input, context, helpers) {{
        return {calls}.map((code) => {{
          try {{ const r = new Function('helpers', 'return ' + code)(helpers); return ['ok', JSON.stringify(r ?? null)]; }}
          catch (e) {{ return [e.code, e.name]; }}
        }});
      }} }}"""
    answers = {}
    for mode in ("false", "true"):
        boot_runtime(page, f"{{ skills: [{probe}], worker: {mode} }}")
        answers[mode] = page.evaluate(
            "async () => (await rt.run('probe', { skill: 'probe' })).output"
        )
    assert answers["true"] == answers["false"]
    assert len(answers["true"]) == len(BAD_HELPER_CALLS), answers
    codes = dict(zip(BAD_HELPER_CALLS, answers["true"], strict=True))
    assert codes["a good entry"] == ["ok", '{"kind":"fact","text":"fine","data":{"n":1}}']
    assert codes["an entry with an unsafe integer"][0] == "invalid_memory_entry"
    assert codes["a source without an id"] == ["config_error", "AgrunConfigError"]
    assert all(code[0] != "ok" for name, code in codes.items() if name != "a good entry")


def test_the_page_main_thread_never_blocks_50_ms_in_worker_mode(page: Page) -> None:
    """A long task is one of 50 ms or more: none in worker mode (boot and a model turn), on
    a first visit and on one after a page-mode boot filled the browser's caches; in page
    mode the same boot has them, which shows the observer sees what it should."""
    observe = """() => { window.longTasks = [];
        new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => Math.round(e.duration))))
            .observe({ type: 'longtask' }); }"""
    measured: dict[str, list[int]] = {"true": [], "false": []}
    for mode in ("true", "false", "true"):
        page.goto("/blank.html")
        page.evaluate(observe)
        boot_runtime(
            page, options(f"worker: {mode}, storage: 'indexeddb', dbName: 'e2e-worker-{mode}'")
        )
        page.evaluate("async () => { await rt.run('hello'); await rt.run('note a thing'); }")
        page.wait_for_timeout(200)  # a long task is reported after it ends
        measured[mode] += page.evaluate("() => longTasks")
    assert measured["true"] == [], f"long tasks in worker mode: {measured['true']} ms"
    assert max(measured["false"], default=0) >= 50


def test_a_worker_runtime_persists_in_indexeddb_and_shares_one_worker(page: Page) -> None:
    idb = options("worker: true, storage: 'indexeddb', sessionId: 'w', dbName: 'e2e-worker'")
    boot_runtime(page, idb)
    page.evaluate("async () => { await rt.run('note blue book'); await rt.run('hello'); }")
    page.reload()
    boot_runtime(page, idb)
    second = page.evaluate(
        """async () => {
            const other = await agrun.createRuntime({ worker: true, storage: 'memory' });
            await other.run('hi');
            const wasm = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('pyodide.asm.wasm'));
            const result = { said: rt.history().filter((m) => m.role === 'user').map((m) => m.content),
                             otherSaid: other.history().length, memory: rt.memory().map((m) => m.text),
                             backend: rt.storageStatus().backend, persistent: rt.storageStatus().persistent,
                             wasmInPage: wasm.length };
            other.close();
            return result;
        }"""
    )
    assert second["said"] == ["note blue book", "hello"]
    assert second["otherSaid"] == 2 and "blue book" in " ".join(second["memory"])
    assert second["backend"] == "indexeddb" and second["persistent"] is True
    # Pyodide's wasm is fetched and compiled by the worker, not the page: the page's compile
    # (even compileStreaming) blocks its main thread 50-95 ms (docs/page.md).
    assert second["wasmInPage"] == 0


def test_aborting_a_worker_turn_reaches_the_page_provider_and_keeps_the_session(
    warm_page: Page,
) -> None:
    page = warm_page
    boot_runtime(page, options("worker: true"))
    result = page.evaluate(
        """async () => {
            window.providerAborted = false;
            await rt.run('hello');
            const controller = new AbortController();
            const running = rt.run('slow please', { signal: controller.signal, onToken: () => controller.abort('stop') });
            const outcome = await running.then(() => 'resolved', (e) => [e.name, e.code, e.result.state.status]);
            return { outcome, aborted: window.providerAborted, history: rt.history().length,
                     live: rt.diagnostics().liveProxies };
        }"""
    )
    assert result == {
        "outcome": ["AbortError", "cancelled", "cancelled"],
        "aborted": True,
        "history": 4,  # the cancelled turn keeps the person's words and the partial answer
        "live": 0,
    }


@pytest.mark.parametrize(
    ("extra", "call"),
    [
        ("countTokens: (t) => t.length", None),
        ("sensitivityFilter: () => null", None),
        ("ranker: () => []", None),
        ("redactor: (t) => t", None),
        ("", "rt.buildContext({ request: 'x' })"),
    ],
    ids=["countTokens", "sensitivityFilter", "ranker", "redactor", "buildContext"],
)
def test_what_cannot_cross_to_a_worker_is_refused_with_a_typed_error(
    warm_page: Page, extra: str, call: str | None
) -> None:
    page = warm_page
    code = page.evaluate(
        f"""async () => {{
            try {{
                const agrun = await import('/agrun.js');
                const rt = await agrun.createRuntime({{ storage: 'memory', worker: true, {extra} }});
                {call or "return 'created'"};
            }} catch (e) {{ return [e.name, e.code]; }}
        }}"""
    )
    assert code == ["AgrunConfigError", "worker_unsupported"]


def test_a_page_store_and_its_lock_serve_a_worker_runtime(warm_page: Page) -> None:
    page = warm_page
    result = page.evaluate(
        """async () => {
            const { STORE_METHODS, createMemorySessionStore } = await import('/storage.js');
            const inner = createMemorySessionStore();
            const calls = [];
            const store = Object.fromEntries(STORE_METHODS.map((name) => [name, (...args) => { calls.push(name); return inner[name](...args); }]));
            let held = 0;
            store.withSessionLock = async (id, work) => { held += 1; try { return await work(); } finally { held -= 1; } };
            const rt = await agrun.createRuntime({ worker: true, storage: store, sessionId: 'mine' });
            await rt.run('hello');
            await rt.idle(); // the turn's memory close holds the lock after run() resolves
            const stored = await inner.loadSession('mine');
            rt.close();
            return { committed: calls.includes('commitTurn'), turns: stored.turns.length, held };
        }"""
    )
    assert result == {"committed": True, "turns": 1, "held": 0}


def test_a_database_deleted_under_a_worker_runtime_tells_the_page(page: Page) -> None:
    idb = options(
        "worker: true, storage: 'indexeddb', sessionId: 's', dbName: 'e2e-worker-deleted', "
        "onStorageDegraded: (e) => window.degraded.push(e.reason)"
    )
    page.goto("/blank.html")
    page.evaluate("() => { window.degraded = []; }")
    boot_runtime(page, idb)
    page.evaluate("async () => { await rt.run('hello'); }")
    page.evaluate(
        """() => new Promise((ok, no) => {
            const r = indexedDB.deleteDatabase('e2e-worker-deleted'); r.onsuccess = ok; r.onerror = () => no(r.error);
        })"""
    )
    state = page.evaluate(
        """async () => { await rt.run('again'); await rt.run('and again');
            return { degraded, status: rt.storageStatus(), said: rt.history().filter((m) => m.role === 'user').length }; }"""
    )
    assert state["degraded"] == ["DatabaseDeleted"]
    assert state["status"]["degraded"] is True and state["status"]["unsynced"] == 2
    assert state["said"] == 3


# Every Worker the page makes, kept where a test can reach it (as a browser or a page's own
# code could end it): a wrapper around the page's Worker class, set up before any script runs.
KEEP_WORKERS = """window.madeWorkers = [];
window.Worker = class extends window.Worker {
    constructor(...args) { super(...args); window.madeWorkers.push(this); }
};"""
# A page without Web Locks (an insecure context has none): only the heartbeat watches.
NO_LOCKS = "Object.defineProperty(Navigator.prototype, 'locks', { get: () => undefined });"

# A page provider that answers, except for "hang", which waits until its call is aborted.
HANG_PROVIDER = """async (request, { signal }) => {
    const last = request.messages.at(-1).content;
    if (last === 'hang') {
        window.hanging = true;
        await new Promise((resolve, reject) => signal.addEventListener('abort', () => { window.providerAborted = signal.reason?.code ?? 'aborted'; reject(signal.reason); }));
    }
    return { text: 'said: ' + last };
}"""


@pytest.mark.parametrize("kill", ["terminate", "self-close", "terminate-no-locks"])
def test_a_worker_killed_mid_turn_fails_the_turn_and_the_next_runtime_gets_a_fresh_worker(
    page: Page, kill: str
) -> None:
    """Issue 20.6: the worker ended while a turn waits on the page's provider. The turn
    rejects with 'interpreter_failed' (at once where the page has Web Locks; within the
    heartbeat's limit where it has not), the dead runtime refuses further turns, and a new
    runtime on the same IndexedDB session starts a new worker, sees the committed turns and runs."""
    page.context.add_init_script(KEEP_WORKERS + (NO_LOCKS if kill.endswith("no-locks") else ""))
    db = f"e2e-worker-killed-{kill}"
    idb = f"{{ worker: true, provider: {HANG_PROVIDER}, storage: 'indexeddb', sessionId: 'k', dbName: '{db}' }}"
    page.goto("/blank.html")
    boot_runtime(page, idb)
    page.evaluate(
        """async () => {
            await rt.run('first'); await rt.run('second');
            // The page's side of the heartbeat, shortened for this test (after the boot).
            (await import('/engine/heartbeat.js')).heartbeat.limitMs = 3000;
            window.hanging = false;
            window.outcome = null;
            rt.run('hang').then(
                () => { window.outcome = ['resolved']; },
                (e) => { window.outcome = [e.name, e.code, e.message, Math.round(performance.now() - window.killedAt)]; });
        }"""
    )
    page.wait_for_function("window.hanging === true")
    page.evaluate("() => { window.killedAt = performance.now(); }")
    if kill == "self-close":
        (agrun_worker,) = [w for w in page.workers if w.url.endswith("/worker.js")]
        agrun_worker.evaluate("() => { setTimeout(() => self.close(), 0); }")
    else:
        page.evaluate("() => madeWorkers[0].terminate()")
    page.wait_for_function("window.outcome !== null", timeout=20_000)
    after = page.evaluate(
        f"""async () => {{
            const dead = await rt.run('after').then(() => 'resolved', (e) => e.code);
            const mirrored = rt.history().map((m) => m.content);
            const fresh = await agrun.createRuntime({idb});
            const before = fresh.history().map((m) => m.content);
            const answer = (await fresh.run('third')).output;
            fresh.close();
            return {{ outcome, dead, mirrored, before, answer, aborted: window.providerAborted,
                      workers: madeWorkers.length }};
        }}"""
    )
    name, code, message, elapsed_ms = after.pop("outcome")
    assert (name, code) == ("AgrunError", "interpreter_failed"), message
    assert after == {
        "dead": "interpreter_failed",
        "mirrored": ["first", "said: first", "second", "said: second"],
        "before": ["first", "said: first", "second", "said: second"],
        "answer": "said: third",
        "aborted": "interpreter_failed",
        "workers": 2,
    }
    if kill.endswith("no-locks"):
        assert "sent nothing for" in message and 3000 <= elapsed_ms < 8000, (message, elapsed_ms)
    else:
        assert "terminated or closed itself" in message and elapsed_ms < 3000, (message, elapsed_ms)


BURST_PROVIDER = """async (request, { onToken }) => {
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i}\\n`);
    onToken(lines[0]);
    const until = performance.now() + 100;  // the same task, long enough for a worker to look
    while (performance.now() < until);
    for (const line of lines.slice(1)) onToken(line);
    onToken(7);  // not text: dropped, in the page as from a worker
    return { text: lines.join('') + 'end' };
}"""


def test_a_page_providers_burst_crosses_to_a_worker_as_it_reaches_a_page_runtime(
    warm_page: Page,
) -> None:
    # 200 pieces given in one task reach the runtime together in the page; from a worker they
    # went as 200 messages, and the runtime sent on what had come each time it looked: the
    # first line alone when the page's task ran long (or the machine was busy).
    script = """async () => {
        const tokens = [];
        const result = await rt.run('go', { onToken: (t) => tokens.push(t) });
        return { tokens, output: result.output };
    }"""
    seen = {}
    for worker in (False, True):
        boot_runtime(
            warm_page,
            f"{{ provider: {BURST_PROVIDER}, memoryExtraction: 'off', worker: {str(worker).lower()} }}",
        )
        seen[worker] = warm_page.evaluate(script)
    text = "".join(f"line {i}\n" for i in range(200)) + "end"
    assert seen[True]["output"] == seen[False]["output"] == text
    assert seen[True]["tokens"] == seen[False]["tokens"] == [text[: -len("end")], "end"]


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_burst_of_pieces_reaches_the_page_whole_and_in_few_messages(
    openai_page: Page, double: OpenAIDouble, worker: bool
) -> None:
    # 200 pieces of a reply reach the runtime in one chunk. The page gets all of the text,
    # in order; from a worker, in a message or two instead of one a word (200 before).
    provider = f"{{ kind: 'openai', baseUrl: '{double.url_for('burst')}' }}"
    boot_runtime(
        openai_page,
        f"{{ provider: {provider}, memoryExtraction: 'off', worker: {str(worker).lower()} }}",
    )
    seen = openai_page.evaluate(
        """async () => {
            const tokens = [], kinds = [];
            let output = null;
            for await (const item of rt.stream('go')) {
                if (item.type === 'token') tokens.push(item.text);
                if (item.type === 'result') output = item.result.output;
                kinds.push(item.type === 'event' ? item.event.kind : item.type);
            }
            return { tokens, output, kinds };
        }"""
    )
    reply = "".join(BURST_WORDS)
    assert "".join(seen["tokens"]) == seen["output"] == reply
    if worker:
        assert 1 <= len(seen["tokens"]) <= 3
    else:
        assert len(seen["tokens"]) > 100  # the page's onToken is called as the reply settles
    # The pieces come after the model call starts and before the run ends, as in the page.
    kinds = seen["kinds"]
    first, last = kinds.index("token"), len(kinds) - 1 - kinds[::-1].index("token")
    assert "ModelCallStarted" in kinds[:first], kinds
    assert "RunFinished" in kinds[last:], kinds
