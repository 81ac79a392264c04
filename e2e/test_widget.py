"""<agrun-chat> on dist/index.html in headless Chromium, at a phone's size and a desktop's:
what it looks like (screenshots against e2e/screenshots/), what axe-core finds, and that a
person can do everything from the keyboard (issue 14).

Screenshots are compared with committed reference PNGs, pixel by pixel with a tolerance;
``AGRUN_UPDATE_SCREENSHOTS=1 .venv/bin/python -m pytest e2e/test_widget.py`` writes them
again (look at the diff before committing). A mismatch leaves the actual picture and a diff
in build/screenshots/.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, Route, expect

from conftest import BOOT_TIMEOUT_MS, ROOT, PageProblems, guard_context, guard_page
from openai_double import OpenAIDouble, serve_openai_double
from pins import pinned

SCREENSHOTS = ROOT / "e2e" / "screenshots"
FAILED = ROOT / "build" / "screenshots"
UPDATE = os.environ.get("AGRUN_UPDATE_SCREENSHOTS") == "1"
VIEWPORTS = {"phone": (390, 844), "desktop": (1280, 800)}
KEY = "sk-widget-Zp4Qm8Rr2Tv6Ny1Bw9Kc"

# A page provider that streams two pieces, then waits for the test (window.releaseAnswer)
# before the last one: the screenshot in between shows an answer that is still arriving.
STREAMING = """async (request, { onToken }) => {
    onToken('Green tea, ');
    onToken('as you told me');
    await new Promise((resolve) => { window.releaseAnswer = resolve; });
    onToken(' before.');
    return { text: 'Green tea, as you told me before.' };
}"""

# A provider whose answer is long: history keeps its head only, rt.content() the whole.
LONG = """async (request, { onToken }) => {
    const text = 'A long answer. ' + 'More words follow here. '.repeat(400) + 'The end.';
    onToken(text);
    return { text };
}"""

# The element's shadow-deep focused element, named by id, data-close or forget index.
FOCUSED = """() => {
    let el = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    if (!el || el === document.body || el === document.documentElement) return 'page';
    if (el.dataset?.close) return 'close:' + el.dataset.close;
    if (el.getAttribute('part') === 'forget-button') return 'forget:' + el.dataset.index;
    return el.id || el.tagName.toLowerCase();
}"""


# ---------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(params=list(VIEWPORTS))
def viewport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def chat_page(
    browser: Browser, base_url: str, problems: PageProblems, viewport: str
) -> Iterator[Page]:
    """A fresh context (empty IndexedDB and cache) at the viewport's size, light scheme and
    reduced motion (no transitions), refusing other hosts and failing on page errors."""
    width, height = VIEWPORTS[viewport]
    context = browser.new_context(
        base_url=base_url,
        viewport={"width": width, "height": height},
        reduced_motion="reduce",
        color_scheme="light",
    )
    context.set_default_timeout(BOOT_TIMEOUT_MS)
    guard_context(context, base_url, problems)
    page = context.new_page()
    guard_page(page, problems)
    yield page
    context.close()
    assert problems.foreign_requests == [], "the page asked a host other than its own"
    assert problems.unexpected_errors() == [], "the page reported errors"


@pytest.fixture
def double(chat_page: Page, problems: PageProblems) -> Iterator[OpenAIDouble]:
    """tools/openai_double.py on another port, which the page (and only it) may reach."""
    server, _ = serve_openai_double()
    chat_page.context.route(f"{server.url}/**", lambda route: route.continue_())
    yield server
    server.close()


# ---------------------------------------------------------------------------------------
# Helpers


def chat(page: Page) -> Locator:
    return page.locator("agrun-chat")


def open_chat(page: Page) -> Locator:
    page.goto("/index.html")
    widget = chat(page)
    expect(widget.locator("#status")).to_have_text("Ready")
    return widget


def configure(page: Page, provider: str | None = None, options: str = "{}") -> None:
    """Give the widget a page provider and createRuntime options; wait until it is ready."""
    page.evaluate(
        f"""async () => {{
            const el = document.querySelector('agrun-chat');
            el.options = {options};
            {f"el.provider = {provider};" if provider else ""}
            await el.ready;
        }}"""
    )
    expect(chat(page).locator("#status")).to_have_text("Ready")


def say(page: Page, text: str, answers: int) -> None:
    """Type `text`, send it with Enter and wait for the `answers`-th answer."""
    widget = chat(page)
    widget.get_by_label("Message").fill(text)
    widget.get_by_label("Message").press("Enter")
    expect(widget.locator("#transcript li.agent")).to_have_count(answers)
    expect(widget.locator("#status")).to_have_text("Ready")


def focused(page: Page) -> str:
    name: str = page.evaluate(FOCUSED)
    return name


def tab_order(page: Page, start: Locator) -> list[str]:
    """What Tab visits from `start` until focus leaves the widget."""
    start.focus()
    seen = [focused(page)]
    for _ in range(40):
        page.keyboard.press("Tab")
        name = focused(page)
        if name == "page" or name in seen:
            break
        seen.append(name)
    return seen


# ---------------------------------------------------------------------------------------
# Screenshots: a tiny PNG reader and writer (zlib only), and the comparison


def read_png(data: bytes) -> tuple[int, int, int, bytes]:
    """Width, height, bytes per pixel and the unfiltered pixel rows of an 8-bit RGB(A),
    non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, "unexpected PNG format"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * channels
    out = bytearray(height * stride)
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                row[i] = (row[i] + row[i - channels]) & 255
        elif kind == 2:
            row = bytearray((a + b) & 255 for a, b in zip(row, previous, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = row[i - channels] if i >= channels else 0
                row[i] = (row[i] + ((left + previous[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = row[i - channels] if i >= channels else 0
                b, c = previous[i], previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out[y * stride : (y + 1) * stride] = row
        previous = row
    return width, height, channels, bytes(out)


def write_png(path: Path, width: int, height: int, rgb: bytes) -> None:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    rows = b"".join(b"\x00" + rgb[y * width * 3 : (y + 1) * width * 3] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def pixel_difference(actual: bytes, reference: bytes) -> tuple[float, bytes | None]:
    """The share of pixels whose colour moved by more than 32 (of 255) in some channel, and
    a picture of where (red on the reference, dimmed), or None when the sizes differ."""
    aw, ah, ac, a = read_png(actual)
    rw, rh, rc, r = read_png(reference)
    if (aw, ah) != (rw, rh):
        return 1.0, None
    changed = 0
    diff = bytearray()
    for i in range(aw * ah):
        pa, pr = a[i * ac : i * ac + 3], r[i * rc : i * rc + 3]
        if max(abs(x - y) for x, y in zip(pa, pr, strict=True)) > 32:
            changed += 1
            diff += b"\xff\x00\x00"
        else:
            diff += bytes(128 + v // 2 for v in pr)
    return changed / (aw * ah), bytes(diff)


def check_screenshot(page: Page, name: str, mask: list[Locator] | None = None) -> None:
    """The page as it looks now, against e2e/screenshots/<name>.png (0.5% of pixels may differ)."""
    shot = page.screenshot(animations="disabled", caret="hide", mask=mask or [])
    reference = SCREENSHOTS / f"{name}.png"
    if UPDATE:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        reference.write_bytes(shot)
        return
    if not reference.exists():
        pytest.fail(
            f"no reference screenshot {reference.relative_to(ROOT)}: run "
            "AGRUN_UPDATE_SCREENSHOTS=1 .venv/bin/python -m pytest e2e/test_widget.py, "
            "look at the pictures, and commit them"
        )
    if shot == reference.read_bytes():
        return
    share, diff = pixel_difference(shot, reference.read_bytes())
    if share > 0.005:
        FAILED.mkdir(parents=True, exist_ok=True)
        (FAILED / f"{name}.actual.png").write_bytes(shot)
        if diff is not None:
            width, height, _, _ = read_png(shot)
            write_png(FAILED / f"{name}.diff.png", width, height, diff)
        pytest.fail(
            f"{name}: {share:.2%} of the pixels differ from {reference.relative_to(ROOT)}; "
            f"see {FAILED.relative_to(ROOT)}/{name}.actual.png and .diff.png "
            "(AGRUN_UPDATE_SCREENSHOTS=1 rewrites the references if the change is wanted)"
        )


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
    answer = widget.locator("#transcript li.agent")
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
    expect(widget.locator("#transcript li.user")).to_have_text(["What do I like to drink?"])
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
    expect(widget.locator("#transcript li.user")).to_have_count(2)


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
    chat_page: Page, double: OpenAIDouble, viewport: str
) -> None:
    page = chat_page
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
    expect(widget.locator("#transcript li.agent")).to_have_text(["Hello, world!"])
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
    expect(widget.locator("#transcript li.user")).to_have_text(
        ["Before the failure.", "During the failure.", "After the failure."]
    )


def test_a_reload_shows_the_conversation_with_long_answers_whole(
    chat_page: Page, viewport: str
) -> None:
    page = chat_page
    widget = open_chat(page)
    configure(page, LONG, "{ memoryExtraction: 'rules' }")
    say(page, "Tell me everything.", 1)
    whole = widget.locator("#transcript li.agent").text_content() or ""
    assert whole.endswith("The end.")
    stored = page.evaluate(
        "() => document.querySelector('agrun-chat').runtime.history().at(-1).content"
    )
    assert len(stored) < len(whole), "history keeps only the head of a long answer"
    page.reload()
    expect(widget.locator("#status")).to_have_text("Ready")
    expect(widget.locator("#transcript li.user")).to_have_text(["Tell me everything."])
    expect(widget.locator("#transcript li.agent")).to_have_text([whole])


def test_a_failed_or_stopped_turn_gives_the_words_back(chat_page: Page, viewport: str) -> None:
    page = chat_page
    widget = open_chat(page)
    configure(
        page,
        """async (request, { signal }) => {
            if (request.messages.at(-1).content.includes('wait')) {
                await new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
            }
            throw new Error('the model is down');
        }""",
        "{ memoryExtraction: 'rules' }",
    )
    box = widget.get_by_label("Message")
    box.fill("Please answer.")
    box.press("Enter")
    expect(widget.locator("#transcript li.error")).to_contain_text("That did not go through")
    expect(box).to_have_value("Please answer.")
    expect(widget.locator("#transcript li.user")).to_have_count(0)
    box.fill("Please wait.")
    box.press("Enter")
    widget.get_by_role("button", name="Stop").click()
    expect(widget.locator("#transcript li.error").last).to_contain_text("Stopped before the answer")
    expect(box).to_have_value("Please wait.")
    expect(box).to_be_focused()
    expect(widget.locator("#status")).to_have_text("Ready")
    # The runtime keeps the person's words of both turns, marked (issue 18.1); the box has them too.
    kept = page.evaluate(
        "() => document.querySelector('agrun-chat').runtime.history().map((m) => [m.content, m.runStatus])"
    )
    assert kept == [["Please answer.", "failed"], ["Please wait.", "cancelled"]]
    # After a reload the kept words show, each said to have had no answer.
    page.reload()
    expect(widget.locator("#status")).to_have_text("Ready")
    expect(widget.locator("#transcript li.user")).to_have_text(["Please answer.", "Please wait."])
    expect(widget.locator("#transcript li.unanswered")).to_have_text(
        ["Not answered: that turn failed.", "Stopped before the answer."]
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


def axe_source() -> str:
    path = ROOT / ".cache" / f"axe-core-{pinned('AXE_CORE_VERSION')}" / "axe.min.js"
    if not path.is_file():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: run tools/vendor_axe.sh")
    return path.read_text()


def serious_violations(page: Page) -> list[dict[str, Any]]:
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    found: list[dict[str, Any]] = page.evaluate(
        """async () => (await axe.run(document, { resultTypes: ['violations'] })).violations
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                           nodes: v.nodes.map((n) => n.target.join(' ')) }))"""
    )
    return found


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
    chat_page: Page, double: OpenAIDouble, viewport: str
) -> None:
    page = chat_page
    keys = page.keyboard
    widget = open_chat(page)
    configure(page, None, "{ memoryExtraction: 'rules' }")
    assert focused(page) == "input"
    main = ["memory-toggle", "why-toggle", "settings-toggle", "transcript", "input", "send"]
    assert tab_order(page, widget.locator("#memory-toggle")) == main
    widget.locator("#input").focus()

    # Type, a new line with Shift+Enter, send with Enter.
    keys.type("I prefer green tea. My name is Ada.")
    keys.press("Shift+Enter")
    keys.type("We decided to use Python.")
    keys.press("Enter")
    expect(widget.locator("#transcript li.agent")).to_have_count(1)
    expect(widget.locator("#transcript li.user")).to_have_text(
        ["I prefer green tea. My name is Ada.\nWe decided to use Python."]
    )
    assert focused(page) == "input"

    # Back to the toolbar, open the memory panel: focus goes to its heading.
    for expected in ["transcript", "settings-toggle", "why-toggle", "memory-toggle"]:
        keys.press("Shift+Tab")
        assert focused(page) == expected
    keys.press("Enter")
    assert focused(page) == "memory-heading"
    conversation = [] if viewport == "phone" else ["transcript", "input", "send"]
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

    # Back to the message box, and the new model answers.
    keys.press("Tab")
    keys.press("Tab")
    assert focused(page) == "input"
    keys.type("Hello?")
    keys.press("Enter")
    expect(widget.locator("#transcript li.agent")).to_have_count(2)
    expect(widget.locator("#transcript li.agent").last).to_have_text("Hello, world!")
    assert len(double.requests_for("text", "keys")) == 1
