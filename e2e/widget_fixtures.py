"""The widget's browser tests' fixtures and helpers (e2e/test_widget*.py), loaded as a
pytest plugin by conftest.py: a fresh page at a phone's or a desktop's size, the OpenAI double
beside it, driving <agrun-chat>, screenshots compared with e2e/screenshots/, and axe-core.

Screenshots are compared with committed reference PNGs, pixel by pixel with a tolerance;
``AGRUN_UPDATE_SCREENSHOTS=1 .venv/bin/python -m pytest e2e/test_widget*.py`` writes them
again (look at the diff before committing). A mismatch leaves the actual picture and a diff
in build/screenshots/.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from conftest import BOOT_TIMEOUT_MS, ROOT, PageProblems, guard_context, guard_page
from openai_double import OpenAIDouble, serve_openai_double
from pins import pinned

SCREENSHOTS = ROOT / "e2e" / "screenshots"
FAILED = ROOT / "build" / "screenshots"
UPDATE = os.environ.get("AGRUN_UPDATE_SCREENSHOTS") == "1"
VIEWPORTS = {"phone": (390, 844), "desktop": (1280, 800)}

# The element's shadow-deep focused element, named by id, data-close or forget index.
FOCUSED = """() => {
    let el = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    if (!el || el === document.body || el === document.documentElement) return 'page';
    if (el.dataset?.close) return 'close:' + el.dataset.close;
    if (el.getAttribute('part') === 'forget-button') return 'forget:' + el.dataset.index;
    if (el.dataset?.action) return 'action:' + el.dataset.action;
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
        # The widget registers agrun's service worker by default (offline-first): its
        # install precaches the whole build, which these tests would pay for each time and
        # which would count the model's download twice. e2e/test_offline.py tests it.
        service_workers="block",
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
def chat_double(chat_page: Page, problems: PageProblems) -> Iterator[OpenAIDouble]:
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


def open_with(page: Page, provider: str, options: str = "{ memoryExtraction: 'rules' }") -> Locator:
    """Open dist/index.html and give its widget a page provider and options."""
    widget = open_chat(page)
    configure(page, provider, options)
    return widget


def say(page: Page, text: str, answers: int) -> None:
    """Type `text`, send it with Enter and wait for the `answers`-th answer."""
    widget = chat(page)
    widget.get_by_label("Message").fill(text)
    widget.get_by_label("Message").press("Enter")
    expect(widget.locator("#transcript li.agent .parts")).to_have_count(answers)
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
