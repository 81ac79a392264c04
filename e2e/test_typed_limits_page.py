"""Usage limits and typed results through createRuntime, with a page provider written in
JavaScript (issue 24.2, 24.3): ``rt.run(input, { usageLimits })`` and
``rt.run(input, { outputSchema })`` cross the bridge and come back as a page expects."""

from __future__ import annotations

from playwright.sync_api import Page

from conftest import boot_runtime

# A page provider: keeps calling the `note` tool for "loop"; for a typed request, answers
# prose first and JSON once it has been corrected; records what it was asked.
PROVIDER = """async (request) => {
    window.asked = [...(window.asked ?? []), request];
    const last = request.messages.at(-1);
    if (request.responseFormat) {
        if (!last.content?.includes('does not fit the output schema')) return { text: 'Paris, I think.' };
        return { text: '{"name": "Paris", "population": 2100000}', usage: { promptTokens: 50, completionTokens: 9 } };
    }
    return { toolCalls: [{ name: 'note', arguments: { text: 'again' } }], usage: { promptTokens: 40, completionTokens: 5 } };
}"""

NOTE = """{ name: 'note', description: 'Notes a text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run: () => { window.notes = (window.notes ?? 0) + 1; return 'noted'; } }"""

OPTIONS = f"{{ provider: {PROVIDER}, skills: [{NOTE}], memoryExtraction: 'rules' }}"


def test_usage_limits_fail_the_run_with_their_code(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, OPTIONS)
    result = page.evaluate(
        """async () => {
            window.asked = []; window.notes = 0;
            const limited = await rt.run('loop', { usageLimits: { requestLimit: 3 } });
            let thrown = null;
            try { limited.throwIfFailed(); } catch (error) { thrown = { name: error.name, code: error.code }; }
            const tools = await rt.run('loop', { usageLimits: { toolCallsLimit: 1 } });
            let refused = null;
            try { await rt.run('loop', { usageLimits: { requestLimit: 0 } }); }
            catch (error) { refused = error.message; }
            let badType = null;
            try { await rt.run('loop', { usageLimits: 3 }); } catch (error) { badType = error.message; }
            return { status: limited.state.status, error: limited.error, calls: window.asked.length,
                     kept: limited.messages.map((m) => [m.content, m.errorCode]), thrown,
                     tools: tools.error.message, notes: window.notes, refused, badType };
        }"""
    )
    assert result["status"] == "failed"
    assert result["error"]["code"] == "usage_limit_exceeded"
    assert "request_limit of 3 (requests=3)" in result["error"]["message"]
    # Three calls (three notes) for the first run; two for the second, whose second batch
    # of tool calls is stopped before it runs (one note).
    assert result["calls"] == 5
    assert result["kept"] == [["loop", "usage_limit_exceeded"]]
    assert result["thrown"] == {"name": "RunFailedError", "code": "usage_limit_exceeded"}
    assert "tool_calls_limit of 1 (tool_calls=1)" in result["tools"]
    assert result["notes"] == 3 + 1
    assert "usage_limits.requestLimit" in result["refused"]
    assert "usageLimits" in result["badType"]


def test_an_output_schema_gives_checked_data_after_a_correction(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, OPTIONS)
    result = page.evaluate(
        """async () => {
            window.asked = [];
            const outputSchema = { title: 'City', type: 'object',
                properties: { name: { type: 'string' }, population: { type: 'integer' } },
                required: ['name', 'population'] };
            const result = await rt.run('the biggest city?', { outputSchema });
            return { output: result.output, status: result.state.status,
                     format: window.asked[0].responseFormat, calls: window.asked.length,
                     corrected: result.steps.filter((s) => s.action === 'correct_output').length };
        }"""
    )
    assert result["status"] == "succeeded"
    assert result["output"] == {"name": "Paris", "population": 2100000}
    assert result["format"]["type"] == "json_schema"
    assert result["format"]["json_schema"]["name"] == "City"
    assert result["format"]["json_schema"]["schema"]["required"] == ["name", "population"]
    assert result["calls"] == 2 and result["corrected"] == 1
