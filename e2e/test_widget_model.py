"""<agrun-chat>'s model (issue 23.1), in headless Chromium: the empty chat says what answers and
offers the demo page's bundled model in one click; the in-page model downloads with progress
into Cache Storage and is not downloaded again; the choice survives a reload (never a key);
Apply refuses a dead URL, a refused key, a missing file and a file that is not GGUF, saying
which; and dist/index.html opened from file:// says to serve the folder.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, Request, expect

from conftest import DIST, TINY_MODEL_ENGINE_ERRORS, PageProblems
from openai_double import OpenAIDouble
from widget_fixtures import chat, open_chat, say

# Every text the status line showed, from the moment the page starts.
WATCH_STATUS = """() => {
    window.statusSeen = [];
    const watch = () => {
        const status = document.querySelector('agrun-chat')?.shadowRoot?.getElementById('status');
        if (!status) return requestAnimationFrame(watch);
        new MutationObserver(() => window.statusSeen.push(status.textContent))
            .observe(status, { childList: true, characterData: true, subtree: true });
    };
    watch();
}"""


@pytest.mark.parametrize("viewport", ["desktop"], indirect=True)
def test_the_bundled_model_in_one_click_downloads_once_and_stays_chosen(
    chat_page: Page, problems: PageProblems
) -> None:
    page = chat_page
    # The bundled model samples: now and then it writes a tool call that does not parse,
    # which wllama logs (a fresh CI run saw it, in a run whose turns still answered). That
    # log is the engine's, not the page's; what this test asks of the turns is below.
    problems.expected_console_errors += TINY_MODEL_ENGINE_ERRORS
    model_fetches: list[str] = []

    def record(request: Request) -> None:
        if request.url.endswith("agrun-tiny.gguf"):
            model_fetches.append(request.url)

    page.on("request", record)
    widget = open_chat(page)
    empty = widget.locator("#empty")
    expect(empty).to_contain_text("No model is connected: agrun repeats what you say (echo)")
    page.evaluate(WATCH_STATUS)
    empty.get_by_role("button", name="Use the model that comes with this page").click()
    expect(widget.locator("#announce")).to_have_text("Answers now come from the in-page model.")
    expect(widget.locator("#status")).to_have_text("Ready")
    seen = page.evaluate("window.statusSeen")
    downloads = [text for text in seen if text.startswith("Downloading the model:")]
    assert downloads and downloads[-1] == "Downloading the model: 4.0 of 4.0 MB (100%)", seen
    expect(empty).to_have_text("Answers come from the in-page model. Say something to start.")
    assert len(model_fetches) == 1
    say(page, "hello", 1)
    answer = widget.locator("#transcript li.agent .parts").text_content() or ""
    assert answer.strip(), "the tiny model answered"

    # A reload keeps the choice, and the file comes from Cache Storage.
    page.reload()
    expect(widget.locator("#status")).to_have_text("Ready")
    assert len(model_fetches) == 1, "the model was downloaded again"
    widget.get_by_role("button", name="Settings", exact=True).click()
    expect(widget.get_by_label("A model running in this page")).to_be_checked()
    widget.get_by_role("button", name="Close model settings").click()
    say(page, "again", 2)
    kept = page.evaluate("JSON.stringify({ ...localStorage })")
    assert "in-page" in kept and "agrun-tiny.gguf" in kept


@pytest.mark.parametrize("viewport", ["desktop"], indirect=True)
def test_apply_says_what_is_wrong_before_the_first_turn(
    chat_page: Page, chat_double: OpenAIDouble, problems: PageProblems
) -> None:
    page, double = chat_page, chat_double
    problems.expected_console_errors.append("Failed to load resource")
    dead = "http://127.0.0.1:9/v1"
    page.context.route("http://127.0.0.1:9/**", lambda route: route.continue_())
    widget = open_chat(page)
    widget.get_by_role("button", name="Settings", exact=True).click()
    panel = widget.get_by_role("region", name="Model settings")
    status = panel.get_by_role("status")

    def apply(kind: str, **fields: str) -> None:
        panel.get_by_label(kind).check()
        for label, value in fields.items():
            panel.get_by_label(label.replace("_", " "), exact=True).fill(value)
        panel.get_by_role("button", name="Apply").click()

    apply("A local server (OpenAI-compatible)", Server_URL=dead)
    expect(status).to_have_text(
        f"That did not work: nothing answers at {dead}: is the server running, and is the address right?"
    )
    apply(
        "A hosted API",
        API_URL=double.url_for("unauthorized"),
        Model_name="double-1",
        API_key="sk-wrong-key-0000",
    )
    expect(status).to_have_text(
        f"That did not work: the server at {double.url_for('unauthorized')} refused the API key (HTTP 401)"
    )
    apply("A model running in this page", **{"Model file (GGUF) URL": "models/none.gguf"})
    expect(status).to_contain_text("That did not work: there is no model file at")
    expect(status).to_contain_text("models/none.gguf (HTTP 404)")
    apply("A model running in this page", **{"Model file (GGUF) URL": "agrun.js"})
    expect(status).to_contain_text("That did not work: agrun.js is not a GGUF model file")
    # Nothing was asked of the double's chat endpoint, and the old choice still answers.
    assert double.requests_for("unauthorized") == []
    widget.get_by_role("button", name="Close model settings").click()
    say(page, "still here?", 1)
    expect(widget.locator("#transcript li.agent .parts")).to_contain_text("still here?")


def test_the_page_opened_from_a_file_says_to_serve_the_folder(browser: Browser) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto((DIST / "index.html").as_uri())
    expect(page.locator(".boot-fallback p")).to_contain_text(
        "agrun needs this folder served over HTTP"
    )
    expect(page.locator(".boot-fallback p")).to_contain_text("python3 -m http.server 8000")
    expect(chat(page).locator(".boot-fallback .bar")).to_be_hidden()
    context.close()
