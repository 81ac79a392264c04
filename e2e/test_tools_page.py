"""Tools the Vercel AI SDK way in a page (issue 24.1 and 24.5): `tool({ name, description,
inputSchema, execute })` with a page provider, and the test model as a page's provider."""

from __future__ import annotations

from playwright.sync_api import Page

from conftest import boot_runtime

# A page provider: calls `convert` with the arguments of the person's message, then answers
# with the tool's result (or, after a correction frame, with the refusal); it keeps every
# request it gets.
PROVIDER = """async (request) => {
    (window.requests ??= []).push(request);
    const last = request.messages.at(-1);
    if (last.role === 'tool') return { text: 'result: ' + last.content };
    if (last.content.startsWith('{')) {
        return { toolCalls: [{ id: 'c1', name: 'convert', arguments: JSON.parse(last.content) }] };
    }
    return { text: 'refused: ' + request.messages.filter((m) => m.role === 'tool').at(-1).content };
}"""

CONVERT = """agrun.tool({
    name: 'convert',
    description: 'Convert pounds.',
    inputSchema: {
        type: 'object',
        properties: { amount: { type: 'number', minimum: 1 }, to: { enum: ['EUR', 'USD'] } },
        required: ['amount', 'to'],
        additionalProperties: false,
    },
    execute(args, context) {
        (window.executed ??= []).push({
            args, frozen: Object.isFrozen(args), run: context.state.runId,
            signal: context.abortSignal instanceof AbortSignal,
            helpers: typeof context.helpers.appendMemory,
        });
        return { amount: args.amount * 2, to: args.to };
    },
})"""


def boot(page: Page, provider: str) -> None:
    boot_runtime(
        page, f"{{ provider: {provider}, skills: [{CONVERT}], memoryExtraction: 'rules' }}"
    )


def test_a_tool_gets_parsed_arguments_and_its_result_reaches_the_model(warm_page: Page) -> None:
    page = warm_page
    boot(page, PROVIDER)
    result = page.evaluate(
        """async () => {
            window.requests = []; window.executed = [];
            const good = await rt.run('{"amount": 21, "to": "EUR"}');
            const bad = await rt.run('{"amount": 0, "to": "GBP"}');
            return { good: good.output, runId: good.state.runId, executed: window.executed,
                     offered: window.requests[0].tools.map((t) => t.function),
                     toolMessage: window.requests[1].messages.at(-1),
                     refused: window.requests[3].messages.filter((m) => m.role === 'tool').at(-1).content,
                     bad: bad.output };
        }"""
    )
    assert result["executed"] == [
        {
            "args": {"amount": 21, "to": "EUR"},
            "frozen": True,
            "run": result["runId"],
            "signal": True,
            "helpers": "function",
        }
    ]
    assert result["toolMessage"]["role"] == "tool"
    assert result["toolMessage"]["content"] == '{"amount":42,"to":"EUR"}'
    assert result["good"] == 'result: {"amount":42,"to":"EUR"}'
    offered = next(t for t in result["offered"] if t["name"] == "convert")
    assert offered["description"] == "Convert pounds."
    assert offered["parameters"]["required"] == ["amount", "to"]
    # Arguments that do not fit never reach execute: the model is told why instead.
    assert result["refused"].startswith("error: the arguments for 'convert' do not fit")
    assert result["bad"] == "refused: " + result["refused"]


def test_the_test_model_calls_the_pages_tool(warm_page: Page) -> None:
    page = warm_page
    boot(page, "agrun.testModel()")
    result = page.evaluate(
        """async () => {
            window.executed = [];
            const result = await rt.run('try the tools');
            let refused = null;
            try { agrun.testModel({ callTools: 'convert' }); } catch (error) { refused = error.code; }
            return { output: result.output, executed: window.executed.map((e) => e.args), refused };
        }"""
    )
    assert result["executed"] == [{"amount": 1, "to": "EUR"}]
    assert result["output"] == '{"convert":{"amount":2,"to":"EUR"}}'
    assert result["refused"] == "config_error"
