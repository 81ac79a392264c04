"""<agrun-chat>'s new parts for everyone (issue 23.10), in headless Chromium at a phone's and a
desktop's size: axe-core finds no serious violation with a tool call open, an error's details
open, the message box editing, the answer's Why panel and the model settings, in the light
and the dark scheme; Stop and Retry from the keyboard alone (Copy, Copy code, Regenerate,
Edit, Why and the tool calls' summaries have theirs in test_widget_answers.py and
test_widget_why.py, which also takes the long-words screenshots in the dark); and a tool call
the tiny real model makes in the page (wllama), shown as a part.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from test_widget_answers import TOOLS_OPTIONS, TOOLS_PROVIDER, say_nowait
from widget_fixtures import (
    chat,
    configure,
    focused,
    open_chat,
    open_with,
    say,
    serious_violations,
)


def test_axe_finds_no_serious_violations_in_the_new_parts(chat_page: Page, viewport: str) -> None:
    page = chat_page
    widget = open_with(page, TOOLS_PROVIDER, TOOLS_OPTIONS)
    say_nowait(page, "What is the weather in Lisbon?")
    page.wait_for_function("typeof window.releaseTool === 'function'")
    page.evaluate("window.releaseTool()")
    expect(widget.locator("#status")).to_have_text("Ready")
    calls = widget.locator("details.call")
    for index in range(calls.count()):
        calls.nth(index).locator("summary").click()
    # A failed turn with its details open.
    configure(page, "async () => { throw new Error('down'); }", TOOLS_OPTIONS)
    say_nowait(page, "And now?")
    failed = widget.locator("#transcript li.user .error-details")
    expect(failed).to_have_count(1)
    failed.locator("summary").click()
    expect(failed).to_have_attribute("open", "")
    # The message box editing the first message.
    widget.locator("#transcript li.user").first.get_by_role("button", name="Edit").click()
    expect(widget.locator("#editing")).to_be_visible()
    # The first answer's Why panel, its details open.
    widget.locator("#transcript li.agent").first.get_by_role(
        "button", name="Why this answer"
    ).click()
    why = widget.get_by_role("region", name="Why this answer")
    expect(why.locator(".why-used")).to_be_visible()
    why.locator("details.why-details summary").click()
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        violations = serious_violations(page)
        assert violations == [], json.dumps(violations, indent=1)
    # The model settings with the in-page model chosen (its file's field shown).
    widget.get_by_role("button", name="Settings", exact=True).click()
    widget.get_by_label("A model running in this page").check()
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        violations = serious_violations(page)
        assert violations == [], json.dumps(violations, indent=1)


# The first call streams half an answer and waits until it is stopped; later calls answer.
STOPPABLE = """async (request, { signal, onToken }) => {
    window.calls = (window.calls ?? 0) + 1;
    if (window.calls === 1) {
        onToken('Half of an answer ');  // a word goes on once it ends (kernel/_stream_mask.py)
        await new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    }
    onToken('The whole answer.');
    return { text: 'The whole answer.' };
}"""


def test_stop_and_retry_from_the_keyboard_alone(chat_page: Page, viewport: str) -> None:
    page = chat_page
    keys = page.keyboard
    widget = open_with(page, STOPPABLE)
    widget.locator("#input").focus()
    keys.type("Tell me everything.")
    keys.press("Enter")
    expect(widget.locator("#transcript li.agent .parts")).to_have_text(["Half of an answer"])
    # Tab from the message box reaches Stop (Send is disabled during the answer).
    keys.press("Tab")
    assert focused(page) == "stop"
    keys.press("Enter")
    stopped = widget.locator("#transcript li.agent.stopped")
    expect(stopped.locator(".turn-note")).to_have_text("Stopped: the answer is cut short.")
    expect(widget.locator("#status")).to_have_text("Ready")
    assert focused(page) == "input"
    # Back past the answer's actions to the stopped message's Retry; Space sends it again.
    for _ in range(8):
        keys.press("Shift+Tab")
        if focused(page) == "action:retry":
            break
    assert focused(page) == "action:retry"
    keys.press("Space")
    answers = widget.locator("#transcript li.agent .parts")
    expect(answers).to_have_text(["Half of an answer", "The whole answer."])
    expect(widget.locator("#transcript li.user .said")).to_have_text(
        ["Tell me everything.", "Tell me everything."]
    )
    expect(widget.get_by_role("button", name="Retry")).to_have_count(0)


# The tiny test model (models/agrun-tiny.gguf) in the page, as e2e/test_real_model.py runs it:
# greedy decoding, so the same every time.
TINY_MODEL = (
    "(await import('/providers/wllama.js')).createWllamaProvider("
    "{ modelUrl: '/models/agrun-tiny.gguf' })"
)
TINY_OPTIONS = """{ contextWindow: 2048, maxReplyTokens: 160, temperature: 0, tokenFactor: 3,
    memoryExtraction: 'rules', skills: [{ name: 'get_weather',
    description: 'Get the current weather for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string', description: 'The city' } },
                  required: ['city'] },
    run: (input, context) => { window.weatherCalls.push(context.arguments); return 'Sunny, 21 degrees'; } }] }"""


@pytest.mark.parametrize("viewport", ["desktop"], indirect=True)
def test_a_tool_call_of_the_tiny_real_model_is_a_part(chat_page: Page) -> None:
    page = chat_page
    widget = open_chat(page)
    page.evaluate("() => { window.weatherCalls = []; }")
    configure(page, TINY_MODEL, TINY_OPTIONS)
    say(page, "Get the current weather for a city: Paris.", 1)
    answer = widget.locator("#transcript li.agent")
    call = answer.locator("details.call.tool")
    expect(call).to_have_count(1)
    expect(call.locator("summary")).to_have_text("Tool get_weather: done")
    calls = page.evaluate("window.weatherCalls")
    assert len(calls) == 1 and isinstance(calls[0]["city"], str), calls
    call.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(call.locator("pre")).to_have_text([json.dumps(calls[0], indent=2), "Sunny, 21 degrees"])
    # The model's own words after the tool's result, as a text part after the call.
    history = page.evaluate(
        """() => document.querySelector('agrun-chat').runtime.history()
            .map((m) => [m.role, m.content, (m.toolCalls ?? []).map((c) => c.name)])"""
    )
    assert [role for role, _, _ in history] == ["user", "assistant", "tool", "assistant"]
    assert history[1][2] == ["get_weather"]
    final = history[-1][1]
    assert final.strip()
    expect(answer.locator(".text").last).to_have_text(final.strip())
    # A reload draws the same part from the history.
    page.reload()
    expect(chat(page).locator("#status")).to_have_text("Ready")
    expect(call.locator("summary")).to_have_text("Tool get_weather: done")
