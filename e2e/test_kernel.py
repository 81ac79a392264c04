"""The kernel through createRuntime in Chromium: JavaScript skills, the skill's view,
memory requests, failures, cancellation, serialized runs and the event stream."""

from __future__ import annotations

import itertools
from typing import Any

from playwright.sync_api import Page

from conftest import boot_runtime

# Skills the tests share; `window.seen` records what a skill saw.
SKILLS = """{
  skills: [
    { name: 'greet', description: 'says hello', applies: (input) => input.startsWith('hi'),
      run: async (input, context, helpers) => {
        window.seen = { phase: context.state.phase, status: context.state.status,
                        plainState: Object.getPrototypeOf(context.state) === Object.prototype,
                        memory: context.memory.readAll().map((e) => e.text) };
        helpers.appendMemory({ text: 'greeted ' + input, kind: 'note', data: { n: 1 } });
        return { reply: 'hello!', words: input.split(' ') };
      } },
    { name: 'boom', description: 'fails', applies: (input) => input === 'boom',
      run: async () => { throw new Error('the skill broke'); } },
    { name: 'weird', description: 'returns what cannot cross', run: async (input) =>
        input === 'map' ? new Map() : input === 'nan' ? { x: NaN } : { f: () => 1 } },
    { name: 'slow', description: 'waits for abort', run: (input, context, helpers) =>
        new Promise((resolve) => {
          helpers.appendMemory({ text: 'should never be kept' });
          helpers.signal.addEventListener('abort', () => { window.slowAborted = true; resolve('late'); });
        }) },
    { name: 'loop', description: 'asks for cycles forever',
      run: async (input, context, helpers) => { helpers.requestCycle('again'); return 'more'; } },
    { name: 'mutate', description: 'tries to change its state', run: async (input, context) => {
        try { context.state.status = 'succeeded'; return 'changed'; }
        catch (e) { return e.name + ': ' + e.message; } } },
    { name: 'badmemory', description: 'asks for a malformed entry', run: async (input, context, helpers) => {
        try { helpers.appendMemory({ text: 42 }); return 'accepted'; }
        catch (e) { return e.code; } } },
    { name: 'keep', description: 'keeps its helpers', run: async (input, context, helpers) => {
        window.keptHelpers = helpers; return 'kept'; } },
  ],
  maxCycles: 3,
  onEvent: (event) => (window.events ??= []).push(event),
}"""


def run(page: Page, input: str, options: str = "{}") -> Any:
    return page.evaluate(f"(input) => window.rt.run(input, {options})", input)


def test_js_skill_is_selected_by_its_matcher_and_sees_plain_read_only_data(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    first = run(page, "hi there")
    assert first["output"] == {"reply": "hello!", "words": ["hi", "there"]}
    assert first["state"]["status"] == "succeeded"
    assert first["state"]["selectedSkill"] == "greet"
    seen = page.evaluate("window.seen")
    assert seen == {"phase": "act", "status": "running", "plainState": True, "memory": []}
    run(page, "hi again")
    assert page.evaluate("window.seen.memory")[0] == "greeted hi there"
    texts = [entry["text"] for entry in page.evaluate("window.rt.memory()")]
    assert "greeted hi there" in texts and "greeted hi again" in texts


def test_default_skill_and_explicit_skill_and_unknown_skill(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    assert run(page, "plain words")["state"]["selectedSkill"] == "echo"
    assert run(page, "plain words", "{ skill: 'greet' }")["state"]["selectedSkill"] == "greet"
    message = page.evaluate(
        "() => window.rt.run('x', { skill: 'nope' }).then(() => 'ok', (e) => e.code + ' ' + e.message)"
    )
    assert message.startswith("unknown_skill")
    assert "'greet'" in message and "'echo'" in message


def test_state_cannot_be_changed_by_a_skill(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    output = run(page, "x", "{ skill: 'mutate' }")["output"]
    assert output.startswith("TypeError: context.state is read-only")


def test_malformed_memory_entry_is_a_typed_error_inside_the_skill(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    assert run(page, "x", "{ skill: 'badmemory' }")["output"] == "invalid_memory_entry"


def test_failing_skill_fails_the_run_and_the_next_run_succeeds(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    failed = run(page, "boom")
    assert failed["state"]["status"] == "failed"
    assert failed["error"]["skill"] == "boom"
    assert "the skill broke" in failed["error"]["message"]
    assert page.evaluate("window.rt.state()")["lastRun"]["status"] == "failed"
    assert run(page, "hi")["state"]["status"] == "succeeded"


def test_output_that_cannot_cross_fails_the_run_with_a_typed_error(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    for input, where in (("map", "$ is a Map"), ("nan", "$.x is NaN"), ("fn", "$.f is a function")):
        result = run(page, input, "{ skill: 'weird' }")
        assert result["state"]["status"] == "failed"
        assert result["error"]["code"] == "output_not_serializable"
        assert where in result["error"]["message"]


def test_cycles_are_bounded(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    result = run(page, "x", "{ skill: 'loop' }")
    assert result["state"]["status"] == "failed"
    assert result["error"]["code"] == "cycle_limit"
    assert result["state"]["cycleCount"] == 3


def test_abort_signal_cancels_the_run_and_keeps_nothing(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    before = page.evaluate("window.rt.memory().length")
    outcome = page.evaluate(
        """async () => {
            const controller = new AbortController();
            const pending = window.rt.run('x', { skill: 'slow', signal: controller.signal });
            setTimeout(() => controller.abort(new Error('the person left')), 50);
            try { await pending; return 'resolved'; }
            catch (e) { return { name: e.name, code: e.code, status: e.result.state.status }; }
        }"""
    )
    assert outcome == {"name": "AbortError", "code": "cancelled", "status": "cancelled"}
    assert page.evaluate("window.slowAborted") is True
    assert page.evaluate("window.rt.memory().length") == before
    assert page.evaluate("window.rt.state()")["lastRun"]["status"] == "cancelled"
    assert run(page, "hi")["state"]["status"] == "succeeded"
    assert page.evaluate("window.rt.diagnostics()")["liveProxies"] == 0


def test_helpers_are_closed_after_the_skill_returns(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    run(page, "x", "{ skill: 'keep' }")
    code = page.evaluate(
        "() => { try { window.keptHelpers.appendMemory({ text: 'late' }); return 'ok'; }"
        " catch (e) { return e.code; } }"
    )
    assert code == "helpers_closed"
    assert page.evaluate("window.rt.diagnostics()")["liveProxies"] == 0


def test_concurrent_runs_are_serialized(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    results = page.evaluate(
        "() => Promise.all([window.rt.run('hi one'), window.rt.run('hi two'), window.rt.run('three')])"
    )
    assert [r["output"] for r in results][2] == "echo: three"
    events = page.evaluate("window.events")
    # Each run's events form one unbroken block: started, ..., finished, never interleaved.
    run_ids = [e["runId"] for e in events]
    blocks = [run_ids[0]] + [b for a, b in itertools.pairwise(run_ids) if a != b]
    assert blocks == [r["state"]["runId"] for r in results]


def test_events_reach_on_event_in_order(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, SKILLS)
    run(page, "hi")
    kinds = [event["kind"] for event in page.evaluate("window.events")]
    assert kinds[0] == "RunStarted"
    assert kinds[-1] == "RunFinished"
    for kind in ("SkillSelected", "PhaseEntered", "ObservationDerived", "MemoryAppended"):
        assert kind in kinds


def test_bad_runtime_options_are_typed_errors(warm_page: Page) -> None:
    page = warm_page
    messages = page.evaluate(
        """async () => {
            const { createRuntime } = await import('/agrun.js');
            const out = [];
            for (const options of [{ maxCycles: 'three' }, { skills: [{ name: 'x' }] },
                                   { skills: 'nope' }, { maxCycles: 0 },
                                   { defaultSkill: 'missing' }]) {
                try { await createRuntime(options); out.push('no error'); }
                catch (e) { out.push(e.name + ' ' + e.code + ': ' + e.message); }
            }
            return out;
        }"""
    )
    assert messages[0].startswith(
        "AgrunConfigError config_error: createRuntime: option 'maxCycles'"
    )
    assert "run must be a function" in messages[1]
    assert "'skills' must be an array" in messages[2]
    assert "max_cycles" in messages[3] or "maxCycles" in messages[3]
    assert messages[4].startswith("AgrunConfigError unknown_skill")
