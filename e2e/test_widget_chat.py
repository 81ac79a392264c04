"""createChat(rt), the framework-free chat controller <agrun-chat> is built on (issue 23.9), in
headless Chromium with a page provider: answers as parts (text, tool calls with their
arguments and results or errors), Stop keeping the partial answer, a failed turn kept with
its error, retry, edit, regenerate, a message the runtime never took, and the same parts again
from history after the page reads it anew.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

SCENARIO = """async () => {
    const agrun = await import('/agrun.js');
    const snap = (chat) => JSON.parse(JSON.stringify({ status: chat.status, error: chat.error,
        messages: chat.messages.map(({ id, role, status, parts, error, runId }) => ({ id, role, status, parts, error, runId })) }));
    const provider = async (request, { signal, onToken }) => {
        const last = request.messages.at(-1);
        // The person's words are the last user message's last line (a window may note an
        // earlier unanswered turn above them).
        const said = request.messages.findLast((m) => m.role === 'user').content.split('\\n').at(-1);
        if (said.includes('down')) throw new Error('the model is down');
        if (said.includes('wait') && last.role === 'user') {
            onToken('Half an ans');
            await new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
        }
        if (last.role === 'user' && said.includes('weather')) {
            onToken('Let me look. ');
            return { toolCalls: [{ id: 'call-1', name: 'weather', arguments: { city: 'Lisbon' } },
                                 { id: 'call-2', name: 'broken', arguments: {} }], finishReason: 'tool_calls' };
        }
        if (last.role === 'tool') {
            await new Promise((resolve) => { window.releaseWeather = resolve; });
            onToken('It is clear.');
            return { text: 'It is clear.' };
        }
        onToken('You said: ' + said);
        return { text: 'You said: ' + said };
    };
    const skills = [
        { name: 'weather', description: 'The weather in a city.',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          run: (input, context) => ({ city: context.arguments?.city ?? null, sky: 'clear' }) },
        { name: 'broken', description: 'Always fails.', parameters: { type: 'object', properties: {} },
          run: () => { throw new Error('broken on purpose'); } },
    ];
    const rt = await agrun.createRuntime({ storage: 'memory', skills, provider, memoryExtraction: 'rules' });
    const chat = agrun.createChat(rt);
    const got = { seen: [] };
    const unsubscribe = chat.subscribe((c) => got.seen.push(snap(c)));

    // A turn with tool calls: pending parts while it runs, then results, errors, arguments.
    const turn = chat.send('What is the weather in Lisbon?');
    while (!window.releaseWeather) await new Promise((r) => setTimeout(r, 10));
    got.midTurn = snap(chat);
    try { await chat.send('Another while busy'); } catch (error) { got.busy = error.code; }
    window.releaseWeather();
    await turn;
    got.toolTurn = snap(chat);

    // Stop: the partial answer stays, marked stopped; the person's words are kept too.
    const stopped = chat.send('Please wait for me');
    while (chat.status !== 'streaming') await new Promise((r) => setTimeout(r, 10));
    chat.stop();
    await stopped;
    got.stopped = snap(chat);

    // A failed turn: kept with its error; retry sends it again.
    await chat.send('The model is down, right?');
    got.failed = snap(chat);
    try { await chat.retry(chat.messages.find((m) => m.role === 'user').id); } catch (error) { got.retryAnswered = error.code; }
    await chat.edit(chat.messages.at(-1).id, 'Edited: hello');
    got.edited = snap(chat);
    await chat.regenerate();
    got.regenerated = snap(chat);
    got.history = rt.history().filter((m) => m.role === 'user').map((m) => [m.content, m.runStatus ?? null]);

    // Read anew from history: the same parts, the stopped answer's too.
    got.reloaded = snap(agrun.createChat(rt));

    // A message the runtime never took: 'not-sent', with Retry.
    rt.close();
    await chat.send('After closing');
    got.notSent = snap(chat);
    unsubscribe();
    const before = got.seen.length;
    await chat.retry();
    got.retriedNotSent = snap(chat);
    got.quietAfterUnsubscribe = got.seen.length === before;
    return got;
}"""


def texts(snapshot: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each message as (role, status, its parts in short)."""

    def short(part: dict[str, Any]) -> str:
        if part["type"] == "text":
            return str(part["text"])
        return f"{part['type']}:{part.get('name', '')}:{part['state']}"

    return [
        (m["role"], m["status"], " | ".join(map(short, m["parts"]))) for m in snapshot["messages"]
    ]


def test_the_chat_controller_keeps_parts_stops_fails_retries_and_edits(page: Page) -> None:
    page.goto("/blank.html")
    got = page.evaluate(SCENARIO)

    # While the tool calls' results wait for the model, they are parts with their results.
    mid = got["midTurn"]
    assert mid["status"] == "streaming"
    answer = mid["messages"][-1]
    assert [p["type"] for p in answer["parts"]] == ["text", "tool", "tool"]
    assert got["busy"] == "chat_busy"
    # Some snapshot saw the tool calls pending before they finished.
    assert any(
        any(p.get("state") == "pending" for m in s["messages"] for p in m["parts"])
        for s in got["seen"]
    )

    done = got["toolTurn"]
    assert done["status"] == "ready"
    user, answer = done["messages"]
    assert (user["role"], user["status"]) == ("user", "sent")
    assert not user["id"].startswith("local:"), "the history's id replaces the page's own"
    text, weather, broken, final = answer["parts"]
    assert text == {"type": "text", "text": "Let me look. "}
    assert weather["name"] == "weather" and weather["arguments"] == {"city": "Lisbon"}
    assert weather["state"] == "result" and "clear" in weather["result"]
    assert broken["state"] == "error" and "broken on purpose" in broken["error"]
    assert final == {"type": "text", "text": "It is clear."}

    assert texts(got["stopped"])[-2:] == [
        ("user", "stopped", "Please wait for me"),
        ("assistant", "stopped", "Half an ans"),
    ]

    failed = got["failed"]
    assert failed["status"] == "error"
    assert failed["error"]["kind"] == "model_failed" and failed["error"]["retryable"] is True
    assert "the model is down" in failed["error"]["message"]
    assert texts(failed)[-1] == ("user", "failed", "The model is down, right?")
    assert got["retryAnswered"] == "chat_nothing_to_retry"

    # Edit and regenerate send new turns at the end: what came before stays.
    assert texts(got["edited"])[-2:] == [
        ("user", "sent", "Edited: hello"),
        ("assistant", "done", "You said: Edited: hello"),
    ]
    assert len(got["regenerated"]["messages"]) == len(got["edited"]["messages"]) + 2
    assert texts(got["regenerated"])[-1] == ("assistant", "done", "You said: Edited: hello")
    assert got["history"] == [
        ["What is the weather in Lisbon?", None],
        ["Please wait for me", "cancelled"],
        ["The model is down, right?", "failed"],
        ["Edited: hello", None],
        ["Edited: hello", None],
    ]

    # History keeps the stopped answer's text, marked: a reload shows it stopped too.
    live = got["regenerated"]["messages"]
    reloaded = got["reloaded"]["messages"]
    assert [(m["role"], m["status"], m["parts"]) for m in reloaded] == [
        (m["role"], m["status"], m["parts"]) for m in live
    ]
    assert [m["id"] for m in reloaded] == [m["id"] for m in live]
    assert reloaded[4]["error"]["kind"] == "model_failed"  # history keeps the code only
    # Each answer knows its run (what its Why asks rt.why about), read back as it was made.
    answers = [m.get("runId") for m in live if m["role"] == "assistant"]
    assert all(answers) and len(set(answers)) == len(answers)
    assert [m.get("runId") for m in reloaded] == [m.get("runId") for m in live]

    not_sent = got["notSent"]
    assert texts(not_sent)[-1] == ("user", "not-sent", "After closing")
    assert not_sent["error"]["code"] == "closed" and not_sent["status"] == "error"
    assert got["quietAfterUnsubscribe"] is True
    # Retrying a message never sent takes its place rather than adding another.
    assert texts(got["retriedNotSent"])[-2:] == texts(not_sent)[-2:]


def test_the_example_page_binds_the_controller_to_plain_dom(page: Page) -> None:
    page.goto("/chat-example.html")
    expect(page.locator("#status")).to_have_text("Ready")
    assert page.locator("agrun-chat").count() == 0
    page.get_by_label("Message").fill("hello there")
    page.get_by_label("Message").press("Enter")
    expect(page.locator("#messages li.assistant")).to_have_count(1)
    expect(page.locator("#messages li.assistant")).to_contain_text("hello there")
    page.get_by_role("button", name="Regenerate").click()
    expect(page.locator("#messages li.assistant")).to_have_count(2)
    expect(page.locator("#messages li.user")).to_have_text(["hello there", "hello there"])
    assert page.evaluate("window.chat.status") == "ready"
