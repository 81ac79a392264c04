"""<agrun-chat> on dist/index.html in headless Chromium, at a phone's size and a desktop's:
what it looks like (screenshots against e2e/screenshots/), what axe-core finds, and that a
person can do everything from the keyboard (issue 14). Fixtures and helpers: widget_fixtures.py.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from openai_double import OpenAIDouble
from widget_fixtures import (
    chat,
    check_screenshot,
    configure,
    focused,
    open_chat,
    say,
    serious_violations,
    tab_order,
)

KEY = "sk-widget-Zp4Qm8Rr2Tv6Ny1Bw9Kc"

# A page provider that streams two pieces, then waits for the test (window.releaseAnswer)
# before the last one: the screenshot in between shows an answer that is still arriving.
STREAMING = """async (request, { onToken }) => {
    onToken('Green tea, ');
    onToken('as you told me ');  // a word goes on once it ends (kernel/_stream_mask.py)
    await new Promise((resolve) => { window.releaseAnswer = resolve; });
    onToken('before.');
    return { text: 'Green tea, as you told me before.' };
}"""

# A provider whose answer is long: history keeps its head only, rt.content() the whole.
LONG = """async (request, { onToken }) => {
    const text = 'A long answer. ' + 'More words follow here. '.repeat(400) + 'The end.';
    onToken(text);
    return { text };
}"""


# ---------------------------------------------------------------------------------------
# What it looks like, and what it does


def test_boot_paints_progress_then_the_conversation(chat_page: Page, viewport: str) -> None:
    page = chat_page
    held: list[Route] = []
    # Hold Python's package list: the boot stays at 'Starting Python' for the picture.
    page.route("**/pyodide/pyodide-lock.json", lambda route: held.append(route), times=1)
    page.goto("/index.html")
    widget = chat(page)
    bar = widget.get_by_role("progressbar")
    expect(widget.locator("#status")).to_have_text("Starting Python…")
    expect(bar).to_have_attribute("aria-valuetext", "Starting Python…")
    assert 0 < int(bar.get_attribute("aria-valuenow") or "0") < 100
    expect(widget.get_by_role("button", name="Send")).to_be_disabled()
    check_screenshot(page, f"boot-{viewport}")
    held[0].continue_()
    expect(widget.locator("#status")).to_have_text("Ready")
    expect(bar).to_be_hidden()
    expect(widget.get_by_role("button", name="Send")).to_be_enabled()
    expect(widget.get_by_label("Message")).to_be_focused()  # autofocus, once ready
    marks = page.evaluate("performance.getEntriesByType('mark').map((m) => m.name)")
    assert "agrun-chat:shell" in marks and "agrun-chat:progress-painted" in marks


def test_an_answer_streams_in_piece_by_piece(chat_page: Page, viewport: str) -> None:
    page = chat_page
    widget = open_chat(page)
    configure(page, STREAMING, "{ memoryExtraction: 'rules' }")
    widget.get_by_label("Message").fill("What do I like to drink?")
    widget.get_by_role("button", name="Send").click()
    answer = widget.locator("#transcript li.agent .parts")
    # The first two pieces are shown while the run is still going.
    expect(answer).to_have_text("Green tea, as you told me")
    expect(widget.locator("#status")).to_have_text("Answering…")
    expect(widget.get_by_role("button", name="Stop")).to_be_visible()
    expect(widget.get_by_role("button", name="Send")).to_be_disabled()
    expect(widget.get_by_role("log")).to_have_attribute("aria-busy", "true")
    check_screenshot(page, f"streaming-{viewport}")
    page.evaluate("window.releaseAnswer()")
    expect(answer).to_have_text("Green tea, as you told me before.")
    expect(widget.locator("#status")).to_have_text("Ready")
    expect(widget.get_by_role("button", name="Stop")).to_be_hidden()
    expect(widget.get_by_role("log")).to_have_attribute("aria-busy", "false")
    expect(widget.locator("#transcript li.user .said")).to_have_text(["What do I like to drink?"])
    check_screenshot(page, f"answer-{viewport}")


def test_the_memory_panel_forgets_and_turns_global_memory_off(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    widget = open_chat(page)
    say(page, "I prefer green tea. We decided to use Python. My name is Ada.", 1)
    widget.get_by_role("button", name="Memory", exact=True).click()
    panel = widget.get_by_role("region", name="Memory")
    expect(panel).to_be_visible()
    expect(widget.get_by_role("button", name="Memory", exact=True)).to_have_attribute(
        "aria-expanded", "true"
    )
    expect(panel.locator("li").filter(has_text="I prefer green tea.").first).to_be_visible()
    expect(panel.get_by_text("We decided to use Python.")).to_be_visible()
    forget = panel.get_by_role("button", name="Forget “My name is Ada.”")
    expect(forget).to_be_visible()
    check_screenshot(page, f"memory-{viewport}")

    forget.click()
    expect(forget).to_have_count(0)
    assert page.evaluate(
        "() => document.querySelector('agrun-chat').runtime.globalMemory().map((e) => e.text)"
    ) == ["I prefer green tea."]
    switch = panel.get_by_role("switch", name="Use global memory")
    expect(switch).to_have_attribute("aria-checked", "true")
    switch.click()
    expect(switch).to_have_attribute("aria-checked", "false")
    expect(widget.locator("#status")).to_have_text("Ready")
    expect(panel.get_by_text("Global memory is off")).to_be_visible()
    state = page.evaluate(
        """() => { const rt = document.querySelector('agrun-chat').runtime;
                   return { global: rt.globalMemory().length, history: rt.history().length }; }"""
    )
    assert state == {"global": 0, "history": 2}  # a new runtime, the same session
    panel.get_by_role("button", name="Close memory").click()
    say(page, "Still there?", 2)
    page.reload()
    expect(widget.locator("#status")).to_have_text("Ready")
    widget.get_by_role("button", name="Memory", exact=True).click()
    expect(panel.get_by_role("switch")).to_have_attribute("aria-checked", "false")
    expect(widget.locator("#transcript li.user .said")).to_have_count(2)


def test_the_why_panel_shows_the_pack_and_what_was_left_out(chat_page: Page, viewport: str) -> None:
    page = chat_page
    widget = open_chat(page)
    widget.get_by_role("button", name="Why", exact=True).click()
    panel = widget.get_by_role("region", name="Why this answer")
    expect(panel).to_contain_text("No model was asked for the last answer")
    widget.get_by_role("button", name="Close why this answer").click()
    configure(
        page,
        "async () => ({ text: 'Noted.' })",
        "{ memoryExtraction: 'rules', contextWindow: 240, maxReplyTokens: 60, contentStore: false }",
    )
    # More turns than the window holds: the oldest are left out, and the panel says why.
    for n in range(8):
        say(page, f"Turn {n}: the harbour was quiet and the boats stayed in all day long.", n + 1)
    widget.get_by_role("button", name="Why", exact=True).click()
    expect(
        panel.get_by_role("heading", name="L0, live: instructions and the conversation")
    ).to_have_count(1)
    expect(panel.get_by_text("Turn 7: the harbour was quiet")).to_be_visible()
    expect(panel.get_by_role("heading", name="Left out")).to_be_visible()
    expect(
        panel.locator(".dropped li", has_text="did not fit the token budget").first
    ).to_be_visible()
    expect(panel.locator(".source").first).to_contain_text("from ")
    check_screenshot(page, f"why-{viewport}", mask=[panel.locator(".source")])


def test_settings_reach_a_local_server_and_keep_a_hosted_key_in_memory_only(
    chat_page: Page, chat_double: OpenAIDouble, viewport: str
) -> None:
    page, double = chat_page, chat_double
    widget = open_chat(page)
    configure(page, None, "{ memoryExtraction: 'rules' }")
    widget.get_by_role("button", name="Settings", exact=True).click()
    panel = widget.get_by_role("region", name="Model settings")
    panel.get_by_label("A local server (OpenAI-compatible)").check()
    expect(panel.get_by_label("Server URL")).to_be_visible()
    expect(panel.get_by_label("API key")).to_be_hidden()
    check_screenshot(page, f"settings-{viewport}")

    panel.get_by_label("Server URL").fill(double.url_for("text", "local"))
    panel.get_by_role("button", name="Apply").click()
    expect(panel.get_by_role("status")).to_have_text(
        f"Answers now come from the server at {double.url_for('text', 'local')}."
    )
    widget.get_by_role("button", name="Close model settings").click()
    say(page, "Hello?", 1)
    expect(widget.locator("#transcript li.agent .parts")).to_have_text(["Hello, world!"])
    (local,) = double.requests_for("text", "local")
    assert "authorization" not in local.headers

    widget.get_by_role("button", name="Settings", exact=True).click()
    panel.get_by_label("A hosted API").check()
    panel.get_by_label("API URL").fill(double.url_for("text", "hosted"))
    panel.get_by_label("Model name", exact=True).fill("double-1")
    panel.get_by_label("API key").fill(KEY)
    panel.get_by_role("button", name="Apply").click()
    expect(panel.get_by_role("status")).to_contain_text("Answers now come from the API at")
    expect(panel.get_by_label("API key")).to_have_value("")
    widget.get_by_role("button", name="Close model settings").click()
    say(page, "And now?", 2)
    (hosted,) = double.requests_for("text", "hosted")
    assert hosted.headers["authorization"] == f"Bearer {KEY}"
    assert hosted.body["model"] == "double-1"
    kept = page.evaluate(
        """async () => {
            const el = document.querySelector('agrun-chat');
            const databases = [];
            for (const { name } of await indexedDB.databases()) {
                const db = await new Promise((ok, no) => {
                    const open = indexedDB.open(name);
                    open.onsuccess = () => ok(open.result);
                    open.onerror = () => no(open.error);
                });
                for (const store of db.objectStoreNames) {
                    const rows = await new Promise((ok) => {
                        const get = db.transaction(store).objectStore(store).getAll();
                        get.onsuccess = () => ok(get.result);
                    });
                    databases.push(JSON.stringify(rows));
                }
                db.close();
            }
            const attributes = [...el.shadowRoot.querySelectorAll('*'), el]
                .flatMap((node) => [...node.attributes].map((a) => a.value));
            return { databases: databases.join(''), local: JSON.stringify({ ...localStorage }),
                     session: JSON.stringify({ ...sessionStorage }), attributes: attributes.join(' '),
                     html: el.outerHTML + el.shadowRoot.innerHTML,
                     exported: await el.runtime.exportSession() };
        }"""
    )
    assert kept["databases"], "the session was stored"
    for where, text in kept.items():
        assert KEY not in text, f"the API key was kept in {where}"


def test_a_storage_failure_shows_a_banner_until_storage_is_back(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    widget = open_chat(page)
    say(page, "Before the failure.", 1)
    banner = widget.get_by_role("alert")
    expect(banner).to_be_hidden()
    page.evaluate(
        """() => {
            window.realTransaction = IDBDatabase.prototype.transaction;
            IDBDatabase.prototype.transaction = function () {
                throw new DOMException('injected by the test', 'QuotaExceededError');
            };
        }"""
    )
    say(page, "During the failure.", 2)
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Saving has stopped (QuotaExceededError)")
    check_screenshot(page, f"degraded-{viewport}")
    page.evaluate("() => { IDBDatabase.prototype.transaction = window.realTransaction; }")
    page.wait_for_timeout(2_100)  # the store tries IndexedDB again at most every 2 s
    say(page, "After the failure.", 3)
    expect(banner).to_be_hidden()
    page.reload()
    expect(widget.locator("#status")).to_have_text("Ready")
    expect(widget.locator("#transcript li.user .said")).to_have_text(
        ["Before the failure.", "During the failure.", "After the failure."]
    )


def test_a_reload_shows_the_conversation_with_long_answers_whole(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    widget = open_chat(page)
    configure(page, LONG, "{ memoryExtraction: 'rules' }")
    say(page, "Tell me everything.", 1)
    whole = (widget.locator("#transcript li.agent .parts").text_content() or "").strip()
    assert whole.endswith("The end.")
    stored = page.evaluate(
        "() => document.querySelector('agrun-chat').runtime.history().at(-1).content"
    )
    assert len(stored) < len(whole), "history keeps only the head of a long answer"
    page.reload()
    expect(widget.locator("#status")).to_have_text("Ready")
    expect(widget.locator("#transcript li.user .said")).to_have_text(["Tell me everything."])
    expect(widget.locator("#transcript li.agent .parts")).to_have_text([whole])


def test_a_failed_turn_keeps_the_message_with_retry_and_stop_keeps_the_partial_answer(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    widget = open_chat(page)
    configure(
        page,
        """async (request, { signal, onToken }) => {
            const said = request.messages.at(-1).content;
            if (said.includes('wait')) {
                onToken('The first half of an ');  // a word goes on once it ends (kernel/_stream_mask.py)
                await new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
            }
            throw new Error('the model is down');
        }""",
        "{ memoryExtraction: 'rules' }",
    )
    box = widget.get_by_label("Message")
    box.fill("Please answer.")
    box.press("Enter")
    failed = widget.locator("#transcript li.user").last
    # The message stays where it was said, with a short reason, its details on demand, Retry.
    expect(failed.locator(".turn-note")).to_have_text("No answer: The model failed.")
    expect(failed.locator(".said")).to_have_text("Please answer.")
    expect(failed.get_by_text("Not sent")).to_have_count(0)
    details = failed.locator(".error-details")
    expect(details.locator("p")).to_be_hidden()
    details.locator("summary").click()
    expect(details.locator("p")).to_have_text(
        "provider_error: the page's provider failed: Error: the model is down"
    )
    expect(box).to_have_value("")
    check_screenshot(page, f"failed-{viewport}")

    box.fill("Please wait.")
    box.press("Enter")
    expect(widget.locator("#transcript li.agent .parts")).to_have_text(["The first half of an"])
    widget.get_by_role("button", name="Stop").click()
    stopped = widget.locator("#transcript li.agent.stopped")
    expect(stopped.locator(".parts")).to_have_text("The first half of an")
    expect(stopped.locator(".turn-note")).to_have_text("Stopped: the answer is cut short.")
    expect(box).to_be_focused()
    expect(widget.locator("#status")).to_have_text("Ready")
    # Retry is offered on the last unanswered message only (the stopped one now).
    expect(widget.get_by_role("button", name="Retry")).to_have_count(1)
    expect(
        widget.locator("#transcript li.user").last.get_by_role("button", name="Retry")
    ).to_be_visible()
    # The runtime keeps the person's words of both turns, and the stopped answer's text,
    # marked (issue 18.1, 23.4).
    kept = page.evaluate(
        "() => document.querySelector('agrun-chat').runtime.history().map((m) => [m.content, m.runStatus])"
    )
    assert kept == [
        ["Please answer.", "failed"],
        ["Please wait.", "cancelled"],
        ["The first half of an ", "cancelled"],  # as the provider streamed it
    ]

    # After a reload the kept words show, the failed one said to have had no answer, the
    # stopped answer still marked stopped; Retry sends again.
    page.reload()
    expect(widget.locator("#status")).to_have_text("Ready")
    expect(widget.locator("#transcript li.user .said")).to_have_text(
        ["Please answer.", "Please wait."]
    )
    expect(widget.locator("#transcript li.user .turn-note")).to_have_text(
        ["No answer: The model failed."]
    )
    expect(stopped.locator(".parts")).to_have_text("The first half of an")
    expect(stopped.locator(".turn-note")).to_have_text("Stopped: the answer is cut short.")
    configure(page, "async () => ({ text: 'Back again.' })", "{ memoryExtraction: 'rules' }")
    widget.get_by_role("button", name="Retry").click()
    expect(widget.locator("#transcript li.agent .parts")).to_have_text(
        ["The first half of an", "Back again."]
    )
    expect(widget.locator("#transcript li.user .said")).to_have_text(
        ["Please answer.", "Please wait.", "Please wait."]
    )


def test_a_page_themes_it_with_custom_properties_and_parts(chat_page: Page, viewport: str) -> None:
    page = chat_page
    open_chat(page)
    page.add_style_tag(
        content="""agrun-chat { --agrun-chat-accent: rgb(10, 90, 20); --agrun-chat-radius: 0px; }
                   agrun-chat::part(transcript) { background: rgb(250, 240, 230); }"""
    )
    style = page.evaluate(
        """() => {
            const root = document.querySelector('agrun-chat').shadowRoot;
            const css = (id, name) => getComputedStyle(root.getElementById(id))[name];
            return { send: css('send', 'backgroundColor'), transcript: css('transcript', 'backgroundColor'),
                     input: css('input', 'borderTopLeftRadius') };
        }"""
    )
    assert style == {"send": "rgb(10, 90, 20)", "transcript": "rgb(250, 240, 230)", "input": "0px"}


# ---------------------------------------------------------------------------------------
# Accessibility


# The widget alone on a page; served with and without a strict Content Security Policy
# (nothing inline allowed, so a <style> in the widget's shadow root would be refused).
WIDGET_ALONE = (
    '<!doctype html><html lang="en"><title>agrun</title><agrun-chat></agrun-chat>'
    '<script type="module" src="/widget/agrun-chat.js"></script></html>'
)
STRICT_POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'"

# Every element of the widget's shadow root, as drawn.
DRAWN = """() => [...document.querySelector('agrun-chat').shadowRoot.querySelectorAll('*')].map((e) => {
    const s = getComputedStyle(e);
    return [e.localName, e.id, s.display, s.color, s.backgroundColor, s.borderRadius, s.fontSize,
            s.padding, s.gridTemplateColumns];
})"""


def serve_alone(route: Route, headers: dict[str, str]) -> None:
    route.fulfill(body=WIDGET_ALONE, headers=headers)


def test_a_strict_content_security_policy_draws_it_as_any_page_does(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    drawn: dict[str, Any] = {}
    for policy in ("", STRICT_POLICY):
        headers = {"Content-Type": "text/html"}
        if policy:
            headers["Content-Security-Policy"] = policy
        page.route("**/alone.html", functools.partial(serve_alone, headers=headers))
        page.goto("/alone.html")
        expect(chat(page).locator("#status")).to_have_text("Ready")
        drawn[policy] = page.evaluate(DRAWN)
        page.unroute("**/alone.html")
    assert len(drawn[""]) > 50 and drawn[STRICT_POLICY] == drawn[""]
    assert page.evaluate(
        "() => getComputedStyle(document.querySelector('agrun-chat').shadowRoot.querySelector('button')).borderRadius"
    ) not in ("", "0px")  # styled, not the browser's own buttons
    say(page, "hello", 1)  # and it answers there


@pytest.mark.parametrize("view", ["main", "memory", "why", "settings", "degraded"])
def test_axe_finds_no_serious_violations(chat_page: Page, viewport: str, view: str) -> None:
    page = chat_page
    widget = open_chat(page)
    say(page, "I prefer green tea. My name is Ada.", 1)
    if view in ("memory", "why", "settings"):
        label = {"memory": "Memory", "why": "Why", "settings": "Settings"}[view]
        widget.get_by_role("button", name=label, exact=True).click()
        if view == "settings":
            widget.get_by_label("A hosted API").check()
    if view == "degraded":
        page.evaluate(
            """() => { IDBDatabase.prototype.transaction = function () {
                throw new DOMException('injected by the test', 'QuotaExceededError'); }; }"""
        )
        say(page, "During the failure.", 2)
        expect(widget.get_by_role("alert")).to_be_visible()
    violations = serious_violations(page)
    assert violations == [], json.dumps(violations, indent=1)


def test_axe_finds_no_serious_violations_in_the_dark_scheme(chat_page: Page, viewport: str) -> None:
    page = chat_page
    page.emulate_media(color_scheme="dark")
    widget = open_chat(page)
    say(page, "Hello in the dark.", 1)
    widget.get_by_role("button", name="Memory", exact=True).click()
    violations = serious_violations(page)
    assert violations == [], json.dumps(violations, indent=1)


# ---------------------------------------------------------------------------------------
# The keyboard alone


def test_everything_is_reachable_and_usable_from_the_keyboard(
    chat_page: Page, chat_double: OpenAIDouble, viewport: str
) -> None:
    page, double = chat_page, chat_double
    keys = page.keyboard
    widget = open_chat(page)
    configure(page, None, "{ memoryExtraction: 'rules' }")
    assert focused(page) == "input"
    main = [
        "memory-toggle",
        "why-toggle",
        "settings-toggle",
        "transcript",
        "use-bundled",
        "input",
        "send",
    ]
    assert tab_order(page, widget.locator("#memory-toggle")) == main
    widget.locator("#input").focus()

    # Type, a new line with Shift+Enter, send with Enter.
    keys.type("I prefer green tea. My name is Ada.")
    keys.press("Shift+Enter")
    keys.type("We decided to use Python.")
    keys.press("Enter")
    expect(widget.locator("#transcript li.agent .parts")).to_have_count(1)
    expect(widget.locator("#transcript li.user .said")).to_have_text(
        ["I prefer green tea. My name is Ada.\nWe decided to use Python."]
    )
    assert focused(page) == "input"

    # Back to the toolbar past the messages' actions, open the memory panel: focus goes to
    # its heading.
    actions = ["action:edit", "action:copy", "action:why", "action:regenerate"]
    for expected in [
        *reversed(actions),
        "transcript",
        "settings-toggle",
        "why-toggle",
        "memory-toggle",
    ]:
        keys.press("Shift+Tab")
        assert focused(page) == expected
    keys.press("Enter")
    assert focused(page) == "memory-heading"
    conversation = [] if viewport == "phone" else ["transcript", *actions, "input", "send"]
    panel_order = ["close:memory", "global-switch", "forget:0", "forget:1"]
    toolbar = ["memory-toggle", "why-toggle", "settings-toggle"]
    assert tab_order(page, widget.locator("#memory-toggle")) == toolbar + conversation + panel_order

    # Forget both global entries, one with Enter and one with Space.
    widget.locator("[part='forget-button'][data-index='0']").focus()
    keys.press("Enter")
    expect(widget.locator("[part='forget-button']")).to_have_count(1)
    assert focused(page) == "forget:0"
    keys.press("Space")
    expect(widget.locator("[part='forget-button']")).to_have_count(0)
    assert focused(page) == "global-switch"
    assert page.evaluate("() => document.querySelector('agrun-chat').runtime.globalMemory()") == []

    # Turn global memory off with Space: the runtime is made again, focus stays on the switch.
    keys.press("Space")
    expect(widget.locator("#global-switch")).to_have_attribute("aria-checked", "false")
    expect(widget.locator("#status")).to_have_text("Ready")
    assert focused(page) == "global-switch"
    keys.press("Escape")
    assert focused(page) == "memory-toggle"
    expect(widget.locator("#memory-panel")).to_be_hidden()

    # The why panel opens with Space and closes with Escape from inside it.
    keys.press("Tab")
    keys.press("Space")
    assert focused(page) == "why-heading"
    keys.press("Tab")
    assert focused(page) == "close:why"
    keys.press("Escape")
    assert focused(page) == "why-toggle"

    # Settings: choose the local server with the arrow keys, type its URL, apply with Enter.
    keys.press("Tab")
    keys.press("Enter")
    assert focused(page) == "settings-heading"
    keys.press("Tab")
    keys.press("Tab")
    assert focused(page) == "provider-none"
    keys.press("ArrowDown")
    keys.press("ArrowDown")
    assert focused(page) == "provider-local"
    keys.press("Tab")
    assert focused(page) == "setting-localUrl"
    keys.type(double.url_for("text", "keys"))
    keys.press("Tab")
    keys.press("Tab")
    assert focused(page) == "settings-apply"
    keys.press("Enter")
    expect(widget.locator("#settings-status")).to_contain_text("Answers now come from the server")
    keys.press("Escape")
    assert focused(page) == "settings-toggle"

    # Back to the message box, past the messages' actions, and the new model answers.
    for expected in ["transcript", *actions, "input"]:
        keys.press("Tab")
        assert focused(page) == expected
    keys.type("Hello?")
    keys.press("Enter")
    expect(widget.locator("#transcript li.agent .parts")).to_have_count(2)
    expect(widget.locator("#transcript li.agent .parts").last).to_have_text("Hello, world!")
    assert len(double.requests_for("text", "keys")) == 1
