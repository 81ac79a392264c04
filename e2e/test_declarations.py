"""web/agrun.d.ts against what agrun really hands a page.

A page runs skill turns, a model turn with a tool call, a stream, a failed and a cancelled
run, and reads everything the runtime keeps; each value it got is written into a TypeScript
file as a literal that must satisfy its declared type (``satisfies``: a field the
declaration lacks, lacks a value for, or types otherwise fails), and tsc checks the file
with the same strict options as web/examples. So the declarations cannot drift from the
runtime's real results without this test failing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parent.parent

# What each value the page collects must satisfy.
DECLARED = {
    "skillRun": "RunResultData",
    "modelRun": "RunResultData",
    "failedRun": "RunResultData",
    "cancelledResult": "RunResultData",
    # JSON carries a stream's result without its method (checked apart, below).
    "streamItems": "Array<Exclude<StreamItem, { type: 'result' }> | { type: 'result'; result: RunResultData }>",
    "events": "AgrunEvent[]",
    "history": "Message[]",
    "memory": "MemoryEntry[]",
    "state": "ReturnType<Runtime['state']>",
    "storageStatus": "StorageStatus",
    "lastPack": "ContextPack",
    "builtPack": "ContextPack",
    "sessionMemory": "SessionMemory",
    "inquiry": "InquiryContext",
    "globalMemory": "GlobalMemoryEntry[]",
    "promotion": "Promotion",
    "content": "ContentEntry",
    "diagnostics": "ReturnType<Runtime['diagnostics']>",
    "providerRequests": "ProviderRequest[]",
    "skillState": "DeepReadonly<RunState>",
    "skillMemory": "DeepReadonly<MemoryEntry>[]",
    "checkedMemory": "CheckedMemoryRequest",
    "clarification": "ClarificationDecision",
    "skillContent": "DeepReadonly<ContentEntry>",
    "errors": "Array<{ name: string; code: AgrunErrorCode; pythonType?: string }>",
}

COLLECT = """async (worker) => {
    const agrun = await import('/agrun.js');
    const got = { providerRequests: [], events: [], errors: [] };
    const tools = (request) => request.tools.map((tool) => tool.function.name);
    const provider = async (request, { onToken }) => {
        got.providerRequests.push(JSON.parse(JSON.stringify(request)));
        const last = request.messages.at(-1);
        if (last.role === 'user' && tools(request).includes('weather')) {
            return { toolCalls: [{ id: 'call-1', name: 'weather', arguments: { city: 'Lisbon' } }],
                     usage: { promptTokens: 30, completionTokens: 5 }, finishReason: 'tool_calls' };
        }
        const text = 'It is clear in Lisbon. ' + 'The sky stays clear all day. '.repeat(60);
        onToken(text.slice(0, 20));
        return { text, usage: { promptTokens: 40, completionTokens: 300 }, finishReason: 'stop' };
    };
    const skills = [
        { name: 'remember', description: 'notes things', applies: (input) => input.startsWith('note'),
          async run(input, context, helpers) {
              got.checkedMemory = helpers.appendMemory({ kind: 'fact', text: input, data: { n: 1 } });
              got.skillState = JSON.parse(JSON.stringify(context.state));
              got.skillMemory = JSON.parse(JSON.stringify(context.memory.readAll()));
              got.clarification = await helpers.askClarification('Which city?', { missing: 'city', options: ['Lisbon'] });
              helpers.noteSearch('weather');
              helpers.noteSources(['a', { id: 'b', title: 'B' }], 'b');
              helpers.noteRead({ id: 'b', title: 'B' });
              const ref = window.rt?.history().findLast((m) => m.contentRef)?.contentRef;
              if (ref) got.skillContent = JSON.parse(JSON.stringify(await context.content(ref)));
              return { noted: input };
          } },
        { name: 'weather', description: 'The weather in a city.',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          run: (input, context) => ({ city: context.arguments?.city ?? null, sky: 'clear' }) },
        { name: 'broken', description: 'fails', run: () => { throw new Error('broken on purpose'); } },
    ];
    window.rt?.close();
    const rt = await agrun.createRuntime({
        worker, storage: 'memory', skills, provider, memoryExtraction: 'rules',
        onEvent: (event) => got.events.push(event),
    });
    window.rt = rt;
    got.modelRun = await rt.run('What is the weather in Lisbon?');
    // After the model's reply, so the skill can read that reply's body by its content ref.
    got.skillRun = await rt.run('note my name is Ana', { skill: 'remember' });
    got.streamItems = [];
    for await (const item of rt.stream('note that I like rain')) got.streamItems.push(item);
    got.failedRun = await rt.run('break', { skill: 'broken' });
    // The one method a result has besides its data: on every result a page gets.
    const results = [got.modelRun, got.skillRun, got.failedRun, got.streamItems.at(-1).result];
    got.throwIfFailed = results.map((r) => typeof r.throwIfFailed);
    const controller = new AbortController();
    controller.abort();
    try { await rt.run('never', { signal: controller.signal }); }
    catch (error) {
        got.cancelledResult = error.result;
        got.errors.push({ name: error.name, code: error.code });
    }
    for (const bad of [() => rt.run('x', { skill: 'nope' }), () => rt.content('no-such-ref')]) {
        try { await bad(); } catch (error) { got.errors.push({ name: error.name, code: error.code, pythonType: error.pythonType }); }
    }
    got.history = rt.history();
    got.memory = rt.memory();
    got.state = rt.state();
    got.storageStatus = rt.storageStatus();
    got.lastPack = rt.lastPack();
    got.sessionMemory = rt.sessionMemory();
    got.inquiry = rt.inquiry();
    got.promotion = await rt.promoteToGlobalMemory(['I prefer tea', { text: 'lives in Lisbon', kind: 'fact', source: 'test' },
                                                    'my key is sk-proj-' + 'a1B2c3D4'.repeat(6)]);
    got.globalMemory = rt.globalMemory();
    await rt.forgetGlobalMemory(got.globalMemory[0].id);
    got.content = rt.content(got.history.findLast((m) => m.contentRef).contentRef);
    const request = {
        messages: [{ id: 'm1', role: 'user', content: 'Find the total' },
                   { id: 'm2', role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'search', arguments: { q: 'total' } }] },
                   { id: 'm3', role: 'tool', toolCallId: 'c1', name: 'search', content: 'total: 42' }],
        input: 'Find the total', budget: { limit: 500 },
    };
    // A runtime in a worker cannot build a pack synchronously: it refuses, with a code.
    try { got.builtPack = rt.buildContext(request); }
    catch (error) { got.builtPack = got.lastPack; got.errors.push({ name: error.name, code: error.code }); }
    got.diagnostics = rt.diagnostics();
    return JSON.parse(JSON.stringify(got));
}"""


def typescript_compiler() -> str:
    """The pinned tsc (tools/typecheck.sh installs it into .cache/ once)."""
    done = subprocess.run(
        [str(ROOT / "tools" / "typecheck.sh"), "--tsc"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def write_checks(folder: Path, got: dict[str, Any]) -> None:
    names = sorted({word for t in DECLARED.values() for word in _type_names(t)})
    lines = [
        f"import type {{ {', '.join(names)} }} from '{ROOT / 'web' / 'agrun.js'}';",
    ]
    for key, declared in DECLARED.items():
        lines.append(f"export const {key} = {json.dumps(got[key], indent=1)} satisfies {declared};")
    (folder / "checks.ts").write_text("\n".join(lines) + "\n")
    config = json.loads((ROOT / "web" / "examples" / "tsconfig.json").read_text())
    config["compilerOptions"]["noUnusedLocals"] = False
    config["files"] = ["checks.ts"]
    (folder / "tsconfig.json").write_text(json.dumps(config, indent=1))


def _type_names(declared: str) -> list[str]:
    builtin = {"Array", "Exclude", "ReturnType", "string", "name", "code", "pythonType"}
    words = "".join(c if c.isalnum() else " " for c in declared).split()
    return [w for w in words if w[0].isupper() and w not in builtin]


@pytest.mark.parametrize("mode", ["page", "worker"])
def test_every_value_a_page_gets_satisfies_its_declared_type(
    mode: str, warm_page: Page, tmp_path: Path
) -> None:
    got = warm_page.evaluate(COLLECT, mode == "worker")
    # The scenario reached what it meant to: each value is there, and is the kind it names.
    assert got["modelRun"]["state"]["status"] == "succeeded"
    assert any(e["kind"] == "ToolCallFinished" for e in got["modelRun"]["events"])
    assert got["failedRun"]["error"]["code"] == "skill_error"
    assert got["cancelledResult"]["state"]["status"] == "cancelled"
    assert [e["code"] for e in got["errors"]] == [
        "cancelled",
        "unknown_skill",
        "content_ref_not_found",
        *(["worker_unsupported"] if mode == "worker" else []),
    ]
    assert {i["type"] for i in got["streamItems"]} >= {"event", "result"}
    assert got["throwIfFailed"] == ["function"] * 4
    assert any(e["kind"] == "ContextPackBuilt" for e in got["events"])
    assert got["promotion"]["refused"] and got["promotion"]["promoted"]
    for key in DECLARED:
        assert got.get(key) is not None, f"the page got no {key}"
    write_checks(tmp_path, got)
    done = subprocess.run(
        ["node", typescript_compiler(), "--noEmit", "-p", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"agrun.d.ts does not describe what the page got:\n{done.stdout}"
