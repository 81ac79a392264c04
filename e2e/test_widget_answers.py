"""<agrun-chat>'s answers (issue 23.2-5), in headless Chromium at a phone's and a desktop's
size: tool calls as collapsible parts, markdown with highlighted code, Copy, Regenerate and
Edit from the keyboard, errors a person understands (no Retry where retrying cannot help),
and model output that never runs and never makes the page fetch anything.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Locator, Page, Request, expect

from conftest import PageProblems
from openai_double import OpenAIDouble
from widget_fixtures import (
    chat,
    check_screenshot,
    configure,
    open_chat,
    open_with,
    say,
    serious_violations,
)

# A model that calls two tools (one fails), then answers; the weather tool waits for the
# test (window.releaseTool) so the picture in between shows a call still running.
TOOLS_PROVIDER = """async (request, { onToken }) => {
    if (request.messages.at(-1).role === 'user') {
        onToken('Let me look that up.');
        return { text: 'Let me look that up.', toolCalls: [
            { id: 'call-w', name: 'weather', arguments: { city: 'Lisbon' } },
            { id: 'call-b', name: 'broken', arguments: {} }] };
    }
    onToken('It is **clear** in Lisbon.');
    return { text: 'It is **clear** in Lisbon.' };
}"""
TOOLS_OPTIONS = """{ memoryExtraction: 'rules', skills: [
    { name: 'weather', description: 'The weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      run: async (input, context) => {
          await new Promise((resolve) => { window.releaseTool = resolve; });
          return { city: context.arguments.city, sky: 'clear' };
      } },
    { name: 'broken', description: 'Always fails.', parameters: { type: 'object', properties: {} },
      run: () => { throw new Error('the weather station is offline'); } },
] }"""

MARKDOWN = (
    "Here is **bold**, *slanted* and `inline code`.\n\n"
    "```python\ndef add(a, b):\n    return a + b\n```\n\n"
    "- one\n- two\n\n[the docs](https://example.org/docs)"
)


# Each answer numbered and naming what it answers.
COUNTING = """async (request, { onToken }) => {
    window.calls = (window.calls ?? 0) + 1;
    const text = `Answer ${window.calls} to: ${request.messages.at(-1).content}`;
    onToken(text);
    return { text };
}"""


def answer_with(text: str) -> str:
    return f"async (request, {{ onToken }}) => {{ onToken({json.dumps(text)}); return {{ text: {json.dumps(text)} }}; }}"


def test_tool_calls_are_collapsible_parts_a_keyboard_can_open(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    widget = ask_the_weather(page)
    answer = widget.locator("#transcript li.agent")
    calls = answer.locator("details.call")
    expect(calls.locator("summary")).to_have_text(["Tool weather: running…", "Tool broken: failed"])
    check_screenshot(page, f"tool-running-{viewport}")
    page.evaluate("window.releaseTool()")
    expect(calls.locator("summary")).to_have_text(["Tool weather: done", "Tool broken: failed"])
    expect(answer.locator(".text")).to_have_text(["Let me look that up.", "It is clear in Lisbon."])
    expect(widget.locator("#status")).to_have_text("Ready")
    # Closed, and opened from the keyboard: the arguments and the result, or the error.
    weather, broken = calls.nth(0), calls.nth(1)
    expect(weather.locator("pre").first).to_be_hidden()
    weather.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(weather).to_have_attribute("open", "")
    expect(weather.locator("pre")).to_have_text(
        ['{\n  "city": "Lisbon"\n}', '{"city":"Lisbon","sky":"clear"}']
    )
    broken.locator("summary").focus()
    page.keyboard.press("Space")
    expect(broken.locator("pre").last).to_contain_text("the weather station is offline")
    # What a screen reader is told: each call is a group named by how it went.
    expect(answer.get_by_role("group", name="Tool weather: done")).to_have_count(1)
    expect(answer.get_by_role("group", name="Tool broken: failed")).to_have_count(1)
    check_screenshot(page, f"tools-{viewport}")
    # A reload draws the same parts from the history.
    page.reload()
    expect(widget.locator("#status")).to_have_text("Ready")
    expect(calls.locator("summary")).to_have_text(["Tool weather: done", "Tool broken: failed"])


def ask_the_weather(page: Page) -> Locator:
    """Open the widget with the tools provider and ask; the weather tool waits for the test."""
    widget = open_with(page, TOOLS_PROVIDER, TOOLS_OPTIONS)
    say_nowait(page, "What is the weather in Lisbon?")
    return widget


def say_nowait(page: Page, text: str) -> None:
    box = chat(page).get_by_label("Message")
    box.fill(text)
    box.press("Enter")


def test_answers_render_markdown_with_highlighted_code_and_copy(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    widget = open_with(page, answer_with(MARKDOWN))
    say(page, "Show me some code.", 1)
    answer = widget.locator("#transcript li.agent")
    expect(answer.locator("strong")).to_have_text("bold")
    expect(answer.locator("em")).to_have_text("slanted")
    expect(answer.locator("ul li")).to_have_text(["one", "two"])
    code = answer.locator("pre code.hljs.language-python")
    expect(code).to_have_text("def add(a, b):\n    return a + b\n")
    expect(code.locator(".hljs-keyword").first).to_have_text("def")
    link = answer.get_by_role("link", name="the docs")
    expect(link).to_have_attribute("href", "https://example.org/docs")
    expect(link).to_have_attribute("rel", "noopener noreferrer nofollow")
    check_screenshot(page, f"markdown-{viewport}")

    # Copy a code block, then the whole answer, from the keyboard.
    answer.get_by_role("button", name="Copy code").focus()
    page.keyboard.press("Enter")
    expect(widget.locator("#announce")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == "def add(a, b):\n    return a + b\n"
    answer.get_by_role("button", name="Copy", exact=True).focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "async (want) => (await navigator.clipboard.readText()) === want", arg=MARKDOWN
    )


def test_regenerate_and_edit_send_new_turns_from_the_keyboard(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    widget = open_with(page, COUNTING)
    say(page, "First question", 1)
    answers = widget.locator("#transcript li.agent .parts")
    # Regenerate: only on the last answer; a new turn asks the same again.
    regenerate = widget.get_by_role("button", name="Regenerate")
    expect(regenerate).to_have_count(1)
    regenerate.focus()
    page.keyboard.press("Enter")
    expect(answers).to_have_text(["Answer 1 to: First question", "Answer 2 to: First question"])
    expect(widget.locator("#status")).to_have_text("Ready")

    # Edit: the words go to the box; Escape cancels, Enter sends them as a new turn at the end.
    edit = widget.locator("#transcript li.user").first.get_by_role("button", name="Edit")
    edit.focus()
    page.keyboard.press("Enter")
    box = widget.get_by_label("Message")
    expect(box).to_be_focused()
    expect(box).to_have_value("First question")
    expect(widget.locator("#editing")).to_be_visible()
    page.keyboard.press("Escape")
    expect(widget.locator("#editing")).to_be_hidden()
    expect(box).to_have_value("")
    edit.focus()
    page.keyboard.press("Space")
    expect(box).to_have_value("First question")
    page.keyboard.type(", edited")
    page.keyboard.press("Enter")
    expect(answers).to_have_count(3)
    expect(answers.last).to_have_text("Answer 3 to: First question, edited")
    expect(widget.locator("#editing")).to_be_hidden()
    said = page.evaluate(
        """() => document.querySelector('agrun-chat').runtime.history()
            .filter((m) => m.role === 'user').map((m) => m.content)"""
    )
    assert said == ["First question", "First question", "First question, edited"]


def test_errors_are_short_with_details_and_no_retry_where_it_cannot_help(
    chat_page: Page, chat_double: OpenAIDouble, problems: PageProblems, viewport: str
) -> None:
    page, double = chat_page, chat_double
    # Chromium logs each failed response: the failures are the test's own.
    problems.expected_console_errors.append("Failed to load resource")
    widget = open_chat(page)
    last = widget.locator("#transcript li.user").last
    cases = [
        (
            "unauthorized",
            "No answer: The model refused the key: check the API key in Settings. "
            "Sending it again will not help.",
            False,
            "401",
        ),
        (
            "malformed",
            "The model’s reply could not be read. Sending it again will not help.",
            False,
            "provider_protocol_error",
        ),
        ("unavailable", "No answer: The model could not be reached.", True, "503"),
    ]
    for n, (scenario, sentence, retry, detail) in enumerate(cases):
        page.evaluate(
            """async ([url]) => { const el = document.querySelector('agrun-chat');
                el.setAttribute('provider-kind', 'local'); el.setAttribute('base-url', url);
                await el.ready; }""",
            [double.url_for(scenario)],
        )
        expect(widget.locator("#status")).to_have_text("Ready")
        say_nowait(page, f"Question {n}")
        expect(last.locator(".turn-note")).to_contain_text(sentence)
        expect(last.get_by_role("button", name="Retry")).to_have_count(1 if retry else 0)
        expect(last.locator(".error-details p")).to_contain_text(detail)
        expect(widget.locator("#status")).to_have_text("Ready")
        if scenario == "unauthorized":
            check_screenshot(page, f"error-{viewport}")
    # A 4xx is asked once; a 503 is retried by the adapter before it gives up.
    assert len(double.requests_for("unauthorized")) == 1
    assert len(double.requests_for("malformed")) == 1
    assert len(double.requests_for("unavailable")) == 4


# What a hostile page provider (or a model it relays) might answer. None of it may run, and
# nothing may be fetched: not the images, not a stylesheet, not a frame.
PAYLOAD = "\n\n".join(
    [
        "<img src=x onerror=\"window.pwned='img'\">",
        "<script>window.pwned='script'</script>",
        "[click me](javascript:window.pwned='link')",
        "<a href=\"javascript:window.pwned='a'\">raw link</a>",
        "<svg onload=\"window.pwned='svg'\"><circle r=9 /></svg>",
        "![tracker](/tracker.png?leak=secret)",
        "![svg](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9ImFsZXJ0KDEpIj48L3N2Zz4=)",
        "[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "<iframe src=\"/tracker.html\"></iframe><style>@import '/tracker.css';</style>",
        "<details open ontoggle=\"window.pwned='details'\">x</details>",
        "```html\n<img src=/tracker.gif onerror=\"window.pwned='code'\">\n```",
        "[ok](https://example.org/safe)",
    ]
)


def test_model_output_never_runs_and_never_fetches(chat_page: Page, viewport: str) -> None:
    page = chat_page
    requests: list[str] = []
    widget = open_chat(page)
    configure(
        page,
        f"""async (request, {{ onToken }}) => {{
            const text = {json.dumps(PAYLOAD)};
            if (request.messages.at(-1).role === 'user') {{
                onToken(text.slice(0, 200));
                return {{ text, toolCalls: [{{ id: 'c1', name: 'repeat', arguments: {{ html: text }} }}] }};
            }}
            onToken(text);
            return {{ text }};
        }}""",
        """{ memoryExtraction: 'rules', skills: [{ name: 'repeat', description: 'repeats',
            parameters: { type: 'object', properties: { html: { type: 'string' } } },
            run: (input, context) => context.arguments.html }] }""",
    )

    def record(request: Request) -> None:
        requests.append(request.url)

    page.on("request", record)
    say(page, "<b>Say</b> something <img src=/tracker.png onerror=\"window.pwned='mine'\">", 1)
    answer = widget.locator("#transcript li.agent")
    answer.locator("details.call summary").click()
    expect(answer.locator(".text").last).to_contain_text("raw link")
    page.wait_for_timeout(500)  # time for anything that would load or run
    found = page.evaluate(
        """() => {
            const root = document.querySelector('agrun-chat').shadowRoot;
            const list = root.getElementById('messages');
            const tags = ['img', 'script', 'svg', 'iframe', 'style', 'object', 'embed', 'form', 'input']
                .filter((tag) => list.querySelector(tag));
            const handlers = [...list.querySelectorAll('*')].flatMap((el) =>
                [...el.attributes].map((a) => a.name).filter((name) => name.startsWith('on')));
            return { pwned: window.pwned ?? null, tags, handlers,
                     hrefs: [...list.querySelectorAll('[href]')].map((a) => a.getAttribute('href')),
                     said: list.querySelector('li.user .said').textContent };
        }"""
    )
    assert found["pwned"] is None, "model output ran"
    assert found["tags"] == [] and found["handlers"] == []
    assert set(found["hrefs"]) == {"https://example.org/safe"}
    assert found["said"].startswith("<b>Say</b> something <img")  # the person's words, as text
    assert [url for url in requests if "tracker" in url or "example.org" in url] == []
    # The code block shows the markup as code.
    expect(answer.locator("pre code").first).to_contain_text(
        '<img src=/tracker.gif onerror="window.pwned'
    )


def test_axe_finds_no_serious_violations_in_parts_and_errors(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    widget = ask_the_weather(page)
    expect(widget.locator("details.call summary").first).to_have_text("Tool weather: running…")
    page.evaluate("window.releaseTool()")
    expect(widget.locator("#status")).to_have_text("Ready")
    widget.locator("details.call summary").first.click()
    configure(page, answer_with(MARKDOWN), "{ memoryExtraction: 'rules' }")
    say(page, "Some code?", 2)
    configure(page, "async () => { throw new Error('down'); }", "{ memoryExtraction: 'rules' }")
    say_nowait(page, "And now?")
    expect(widget.locator("#transcript li.user .turn-note")).to_have_count(1)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        violations = serious_violations(page)
        assert violations == [], json.dumps(violations, indent=1)


LONG_WORD = "Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherung" * 2


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_long_memory_entries_and_long_words_keep_their_shape(
    chat_page: Page, viewport: str, scheme: str
) -> None:
    page = chat_page
    page.emulate_media(color_scheme=scheme)
    widget = open_with(page, answer_with(f"Noted: {LONG_WORD} and more."))
    say(page, f"My name is {LONG_WORD}. I prefer {'very ' * 40}strong green tea.", 1)
    widget.get_by_role("button", name="Memory", exact=True).click()
    panel = widget.get_by_role("region", name="Memory")
    forget = panel.locator("[part='forget-button']")
    expect(forget.first).to_be_visible()
    # Forget stays one line ("Forge / t" was the bug), and nothing is wider than its panel.
    for index in range(forget.count()):
        box = forget.nth(index).bounding_box()
        assert box is not None and box["height"] < 48, box
    overflow = page.evaluate(
        """() => [...document.querySelector('agrun-chat').shadowRoot.querySelectorAll('.panel, .transcript')]
            .filter((el) => !el.hidden && el.scrollWidth > el.clientWidth + 1).map((el) => el.id)"""
    )
    assert overflow == []
    check_screenshot(page, f"long-words-{'dark-' if scheme == 'dark' else ''}{viewport}")


@pytest.mark.parametrize("viewport", ["phone"], indirect=True)
def test_a_right_to_left_page_mirrors_the_layout(chat_page: Page, viewport: str) -> None:
    page = chat_page
    widget = open_chat(page)
    page.evaluate("document.documentElement.dir = 'rtl'")
    configure(
        page,
        answer_with("مرحبا! `code` stays left to right:\n\n```js\nlet a = 1;\n```"),
        "{ memoryExtraction: 'rules' }",
    )
    say(page, "مرحبا", 1)
    # After the frame that draws the turn's last state: the person's message, then the answer.
    user, agent = widget.locator("#messages").evaluate(
        """(list) => new Promise((ok) => requestAnimationFrame(() =>
            ok([...list.children].map((item) => item.getBoundingClientRect().x))))"""
    )
    assert user < agent, (user, agent)  # the person's messages keep to the end side: the left now
    assert widget.locator("pre").evaluate("(el) => getComputedStyle(el).direction") == "ltr"
    check_screenshot(page, f"rtl-{viewport}")
