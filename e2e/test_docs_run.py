"""Every JS and HTML block of README.md and docs/*.md runs in a page and logs what it says
(issue 24.7; the Python blocks run in tests/test_docs_run.py, the fence rules are in
tools/doc_blocks.py).

An HTML block is served as a page of the site and opened; a JS block is served as a module
of the site and imported by the page (so `./agrun.js` means what it means beside dist/). A
``run=fragment`` JS block gets the wrapper below first. What a block logs with
``console.log`` must be exactly its ``// -> `` lines; the page fixtures fail it on any page
error, console error or request to another host.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route

import doc_blocks  # tools/, on the path through conftest
from conftest import BOOT_TIMEOUT_MS, boot_runtime
from test_pyodide_packages import build_wheel

BLOCKS = [b for b in doc_blocks.all_blocks() if b.language in doc_blocks.RUN_IN_CHROMIUM]
HTML = [b for b in BLOCKS if b.language == "html"]
JS = [b for b in BLOCKS if b.language == "js"]

# Collects what the block logs, beside the console (a worker's logs are not the page's).
CAPTURE = """() => {
  window.docsLog = [];
  if (window.docsConsoleLog) return;
  window.docsConsoleLog = console.log.bind(console);
  console.log = (...parts) => {
    window.docsLog.push(parts.map(String).join(' '));
    window.docsConsoleLog(...parts);
  };
}"""
# The wrapper of a fragment: the import its text says it goes beside.
FRAGMENT = "import { createRuntime } from './agrun.js';\n"
# docs/widget.md's fragment talks to the element its HTML block put on the page.
WIDGET = (
    "import './widget/agrun-chat.js';\n"
    "document.body.insertAdjacentHTML('beforeend', '<agrun-chat session-id=\"docs\"></agrun-chat>');\n"
)
# docs/page.md's wheel, built here as its author would, served at the URL the block names.
WHEEL_URL = "/wheels/my_skills-1.0-py3-none-any.whl"
SKILLS = (
    "from agrun import FunctionSkill\n"
    "weather = FunctionSkill('weather', lambda text, context, helpers: 'sunny',"
    " description='the weather')\n"
)


def _serve(page: Page, path: str, body: bytes | str, content_type: str) -> None:
    def fulfil(route: Route) -> None:
        route.fulfill(body=body, content_type=content_type)

    # Routes registered later are tried first: the conftest guard still refuses the rest.
    page.context.route(f"**{path}", fulfil)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[bytes]:
    folder = tmp_path_factory.mktemp("docs-wheel")
    yield build_wheel(folder / "src", folder / "out", "my_skills", "1.0", SKILLS).read_bytes()


def _logged(page: Page, count: int) -> list[str]:
    if count:
        page.wait_for_function(f"window.docsLog.length >= {count}", timeout=BOOT_TIMEOUT_MS)
    logged: list[str] = page.evaluate("window.docsLog")
    return logged


@pytest.mark.parametrize("block", HTML, ids=[b.name for b in HTML])
def test_an_html_block_runs_and_logs_what_it_says(block: doc_blocks.Block, page: Page) -> None:
    path = f"/docs-block-{block.line}.html"
    _serve(
        page,
        path,
        f"<!doctype html><meta charset=utf-8>\n<script>({CAPTURE})();</script>\n{block.text}",
        "text/html",
    )
    page.goto(path)
    # Its custom elements are defined (the widget loaded and registered itself)...
    for tag in sorted(set(re.findall(r"<([a-z]+-[a-z-]+)", block.text))):
        page.evaluate(f"customElements.whenDefined('{tag}')")
        assert page.locator(tag).count() == 1
    # ...and it logged what it says, nothing more.
    assert _logged(page, len(block.expected_output)) == block.expected_output


@pytest.mark.parametrize("block", JS, ids=[b.name for b in JS])
def test_a_js_block_runs_and_logs_what_it_says(
    block: doc_blocks.Block, warm_page: Page, wheel: bytes
) -> None:
    page = warm_page
    boot_runtime(page)  # the warm page's interpreter, booted once for the module
    text = block.text
    if block.attributes.get("run") == "fragment":
        prelude = FRAGMENT + (WIDGET if block.doc == "docs/widget.md" else "")
        if WHEEL_URL in text:
            _serve(page, WHEEL_URL, wheel, "application/octet-stream")
            text = text.replace("'…'", f"'{hashlib.sha256(wheel).hexdigest()}'")
        text = prelude + text
    path = f"/docs-block-{Path(block.doc).stem}-{block.line}.js"
    _serve(page, path, text, "text/javascript")
    page.evaluate(CAPTURE)
    # The import resolves once the module (top-level awaits included) has run.
    page.evaluate(f"() => import('{path}')")
    assert _logged(page, len(block.expected_output)) == block.expected_output


def test_the_docs_have_blocks_for_the_page() -> None:
    # A parser that finds nothing would pass every test above: it must find them.
    assert {b.doc for b in HTML} >= {"README.md", "docs/widget.md"}
    assert len(JS) >= 6 and any(b.expected_output for b in BLOCKS)
