"""<agrun-chat>'s Why for any answer (issue 22.3), in headless Chromium: each answer's Why
button opens the why panel with that answer's run (rt.why(runId)) in a person's words, the
ids, layers and tokens in a closed section; from the keyboard alone; again after a reload,
for answers read back from history; and a short note when the trace is no longer kept.
"""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from widget_fixtures import chat, check_screenshot, focused, open_with, say

# Repeats all the person said, so the attribution marks each of their messages as used.
ECHOING = """async (request, { onToken }) => {
    const said = request.messages.filter((m) => m.role === 'user').map((m) => m.content);
    const text = `You said: ${said.join(' ')}`;
    onToken(text);
    return { text, usage: { promptTokens: 9 * request.messages.length, completionTokens: 6 } };
}"""
OPTIONS = "{ memoryExtraction: 'rules', contentStore: false }"
SAID = ["My cat is called Miso and she is grey.", "I also have a small brown dog called Rex."]

# The words the main text uses per entry kind (web/widget/words.js), enough for this test.
KINDS = {
    "message": ("message from the conversation", "messages from the conversation"),
    "memory": ("remembered note", "remembered notes"),
    "summary": ("summary of earlier talk", "summaries of earlier talk"),
}


def used_sentence(trace: dict[str, Any]) -> str:
    """What the panel's 'Used' line must say for `trace`, from the trace itself."""
    call = trace["calls"][trace["attribution"]["call"]]
    used = {e["id"] for e in trace["attribution"]["entries"] if e["used"]}
    counts: dict[str, int] = {}
    for entry in call["entries"]:
        if entry["id"] in used:
            counts[entry["kind"]] = counts.get(entry["kind"], 0) + 1
    parts = [f"{n} {KINDS[k][0] if n == 1 else KINDS[k][1]}" for k, n in counts.items()]
    return "Used: " + ", ".join(parts) + "."


def traces(page: Page) -> list[dict[str, Any]]:
    """The runs of the transcript's answers, in order, read straight from the runtime."""
    result: list[dict[str, Any]] = page.evaluate(
        """async () => {
            const el = document.querySelector('agrun-chat');
            const ids = el.runtime.history().filter((m) => m.role === 'assistant').map((m) => m.id.split(':')[0]);
            return Promise.all(ids.map((id) => el.runtime.why(id)));
        }"""
    )
    return result


def test_why_explains_any_answer_from_the_keyboard_and_after_a_reload(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    widget = open_with(page, ECHOING, OPTIONS)
    for n, text in enumerate(SAID, start=1):
        say(page, text, n)
    first, last = traces(page)
    assert first["runId"] != last["runId"]
    first_used, last_used = used_sentence(first), used_sentence(last)
    assert first_used != last_used  # the later answer was given the earlier turn too

    answers = widget.locator("#transcript li.agent")
    expect(answers.get_by_role("button", name="Why this answer")).to_have_count(2)
    # Tab from the first answer's Copy reaches its Why; Enter opens the panel on it.
    answers.first.get_by_role("button", name="Copy").focus()
    page.keyboard.press("Tab")
    assert focused(page) == "action:why"
    page.keyboard.press("Enter")
    panel = widget.get_by_role("region", name="Why this answer")
    expect(panel.locator(".why-used")).to_have_text(first_used)
    expect(panel.locator(".why-about")).to_have_text(f"About the answer “You said: {SAID[0]}”")
    assert focused(page) == "why-heading"
    main = " ".join(panel.locator("p:not(details p)").all_inner_texts())
    assert "run-" not in main and not re.search(r"\bL[0-4]\b", main), main

    # The details, closed until asked for, hold that run's entries (ids, layers, tokens).
    details = panel.locator("details.why-details")
    expect(details).not_to_have_attribute("open", "")
    details.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(details).to_have_attribute("open", "")
    entries = details.locator(".why-entries li")
    expected = [e["id"] for e in first["calls"][first["attribution"]["call"]]["entries"]]
    assert [entries.nth(i).get_attribute("data-entry") for i in range(entries.count())] == expected
    assert f"message:{first['runId']}:user" in expected
    assert f"message:{last['runId']}:user" not in expected
    expect(details).to_contain_text(first["runId"])
    if viewport == "desktop":
        check_screenshot(page, f"why-answer-{viewport}", mask=[details.locator("code, .source")])

    # Escape closes it and gives focus back to the Why that opened it.
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    assert focused(page) == "action:why"
    assert page.evaluate(
        """() => document.querySelector('agrun-chat').shadowRoot.activeElement.closest('li')
            === document.querySelector('agrun-chat').shadowRoot.querySelector('#transcript li.agent')"""
    )

    # The last answer's Why tells the other run.
    answers.last.get_by_role("button", name="Why this answer").click()
    expect(panel.locator(".why-used")).to_have_text(last_used)

    # After a reload the answers come from history: their Why still reads their run.
    page.reload()
    expect(chat(page).locator("#status")).to_have_text("Ready")
    expect(answers).to_have_count(2)
    answers.first.get_by_role("button", name="Why this answer").click()
    expect(panel.locator(".why-used")).to_have_text(first_used)
    panel.locator("details.why-details summary").click()
    expect(panel.locator(".why-entries li")).to_have_count(len(expected))

    # A trace the runtime no longer keeps: a short note, nothing else.
    page.evaluate(
        """() => {
            const rt = document.querySelector('agrun-chat').runtime;
            rt.why = async (runId) => {
                throw Object.assign(new Error(`no trace is kept for run '${runId}'`), { code: 'trace_not_found' });
            };
        }"""
    )
    # (On a phone the open panel covers the conversation: close it first.)
    widget.get_by_role("button", name="Close why this answer").click()
    answers.last.get_by_role("button", name="Why this answer").click()
    expect(panel.locator(".why-missing")).to_have_text(re.compile("^No longer kept"))
    expect(panel.locator("details")).to_have_count(0)
