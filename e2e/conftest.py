"""Fixtures for the browser suite: dist/ served on 127.0.0.1, Debian's Chromium driven by
Playwright, and a page that fails its test on any page error, console error or request to
a host other than the local server.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    Route,
    expect,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
sys.path.insert(0, str(ROOT / "tools"))

from chromium import launch  # noqa: E402
from openai_double import OpenAIDouble, serve_openai_double  # noqa: E402
from serve import serve_in_background  # noqa: E402

# The widget tests' fixtures (a page per viewport, the OpenAI double beside it).
pytest_plugins = ["widget_fixtures"]

BOOT_TIMEOUT_MS = 120_000
expect.set_options(timeout=BOOT_TIMEOUT_MS)

# Now and then (twice in some thousands of tests here, on a 2-core machine) Chromium's
# renderer dies under a test: Playwright reports "Page crashed" or
# "Target crashed", at a boot or in a turn, with nothing in the page's own logs. That is the
# browser failing, not agrun: such a test runs once more (pytest-rerunfailures counts it in
# the summary as a rerun), and fails if it crashes again. Any other failure fails at once.
RENDERER_CRASHED = r"(Page|Target) crashed"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.flaky(reruns=1, only_rerun=[RENDERER_CRASHED]))


# A page's runtime commits a turn just after its answer (`commitAfterAnswer`): a test that
# reloads or closes a page straight after a turn does what a page's own script would,
# `await settled()` first (web/engine/keeping.js; a page that has not loaded agrun has
# nothing to wait for).
SETTLE = "async () => { await globalThis[Symbol.for('agrun.settled')]?.(); }"
_reload, _close = Page.reload, Page.close


def _settle(page: Page) -> None:
    """What a page's own script does before it leaves: wait for its runtimes' turns to be
    kept. A page that is closed or broken already has nothing to wait for."""
    if page.is_closed():
        return
    with contextlib.suppress(PlaywrightError):
        page.evaluate(SETTLE)


def _reload_settled(self: Page, *args: object, **kwargs: object) -> object:
    _settle(self)
    return _reload(self, *args, **kwargs)  # type: ignore[arg-type]


def _close_settled(self: Page, *args: object, **kwargs: object) -> None:
    _settle(self)
    _close(self, *args, **kwargs)  # type: ignore[arg-type]


Page.reload = _reload_settled  # type: ignore[assignment, method-assign]
Page.close = _close_settled  # type: ignore[assignment, method-assign]


@pytest.fixture(scope="session")
def base_url() -> Iterator[str]:
    if not (DIST / "agrun.js").exists():
        pytest.fail("dist/ is not built: run ./build.sh first")
    server, url = serve_in_background(DIST)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = launch(playwright)
    yield browser
    browser.close()


# What wllama's llama.cpp logs when the tiny model writes a tool call whose JSON does not
# parse (it does now and then: over fifty greedy turns, or in any turn where it samples):
# the parse failure, then its wasm call failing without a reply ("Invalid typed array
# length", with its stack). The provider throws, and that turn fails typed.
TINY_MODEL_ENGINE_ERRORS = (
    "Failed to parse tool call arguments as JSON",
    "Invalid typed array length",
)


@dataclass
class PageProblems:
    """What went wrong in a page while a test drove it."""

    errors: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    # A test that breaks the page on purpose (a missing file) expects Pyodide's own console
    # errors; uncaught page errors still fail it.
    console_errors_expected: bool = False
    # Console errors that name one of these are expected (a library logging what the test
    # makes happen); any other still fails the test.
    expected_console_errors: list[str] = field(default_factory=list)
    # Page errors that name one of these (say, the URL a test made fail) are expected too:
    # Pyodide rethrows a failed fetch as an unhandled rejection beside rejecting its boot.
    expected_page_errors: list[str] = field(default_factory=list)

    def unexpected_errors(self) -> list[str]:
        def expected(error: str) -> bool:
            if error.startswith("console."):
                return self.console_errors_expected or any(
                    part in error for part in self.expected_console_errors
                )
            return any(part in error for part in self.expected_page_errors)

        return [error for error in self.errors if not expected(error)]


def guard_context(context: BrowserContext, base_url: str, problems: PageProblems) -> None:
    """Record and refuse every request that is not to the local server."""
    local = urlsplit(base_url).netloc

    def route(route_: object) -> None:
        request = route_.request  # type: ignore[attr-defined]
        parts = urlsplit(request.url)
        if parts.scheme in ("data", "blob") or parts.netloc == local:
            route_.continue_()  # type: ignore[attr-defined]
        else:
            problems.foreign_requests.append(request.url)
            route_.abort()  # type: ignore[attr-defined]

    context.route("**/*", route)


def guard_page(page: Page, problems: PageProblems) -> None:
    page.on("pageerror", lambda error: problems.errors.append(f"pageerror: {error}"))
    page.on("crash", lambda _: problems.errors.append("Page crashed: Chromium's renderer died"))
    page.on(
        "console",
        lambda msg: (
            problems.errors.append(f"console.{msg.type}: {msg.text} at {msg.location}")
            if msg.type == "error"
            else None
        ),
    )


@pytest.fixture
def problems() -> PageProblems:
    return PageProblems()


@pytest.fixture
def context(browser: Browser, base_url: str, problems: PageProblems) -> Iterator[BrowserContext]:
    context = browser.new_context(base_url=base_url)
    context.set_default_timeout(BOOT_TIMEOUT_MS)
    guard_context(context, base_url, problems)
    yield context
    context.close()


@pytest.fixture
def page(context: BrowserContext, problems: PageProblems) -> Iterator[Page]:
    page = context.new_page()
    guard_page(page, problems)
    yield page
    assert problems.foreign_requests == [], "the page asked a host other than its own"
    assert problems.unexpected_errors() == [], "the page reported errors"


@dataclass
class ModulePage:
    """A module's shared page; opened again when its renderer crashed under a test, so the
    crash's rerun (and the module's later tests) get a live page."""

    browser: Browser
    base_url: str
    page: Page | None = None
    problems: PageProblems = field(default_factory=PageProblems)
    crashed: bool = False

    def live(self) -> tuple[Page, PageProblems]:
        if self.page is None or self.crashed:
            self.close()
            self.problems, self.crashed = PageProblems(), False
            context = self.browser.new_context(base_url=self.base_url)
            context.set_default_timeout(BOOT_TIMEOUT_MS)
            guard_context(context, self.base_url, self.problems)
            self.page = context.new_page()
            guard_page(self.page, self.problems)
            self.page.on("crash", lambda _: setattr(self, "crashed", True))
            self.page.goto("/blank.html")
        return self.page, self.problems

    def close(self) -> None:
        if self.page is not None:
            with contextlib.suppress(PlaywrightError):
                self.page.context.close()
            self.page = None


@pytest.fixture(scope="module")
def _module_page(browser: Browser, base_url: str) -> Iterator[ModulePage]:
    shared = ModulePage(browser, base_url)
    yield shared
    shared.close()


@pytest.fixture
def warm_page(_module_page: ModulePage) -> Iterator[Page]:
    """One page per test module, booted once: each test makes its own runtime on it
    (createRuntime shares the page's interpreter), and is still failed by its own errors."""
    page, problems = _module_page.live()
    problems.errors.clear()
    yield page
    assert problems.foreign_requests == [], "the page asked a host other than its own"
    assert problems.unexpected_errors() == [], "the page reported errors"


def boot_runtime(page: Page, options: str = "{}") -> None:
    """Create `window.rt` with the given JS options on a page of the site (a blank one if
    the page is not on the site yet)."""
    if not page.url.endswith("/blank.html"):
        page.goto("/blank.html")
    page.evaluate(
        f"""async () => {{
            const agrun = await import('/agrun.js');
            window.agrun = agrun;
            window.rt?.close();
            window.events = [];
            // Each test's runtime gets a fresh in-memory session unless it names a store.
            window.rt = await agrun.createRuntime({{ storage: 'memory', ...{options} }});
        }}"""
    )


# The OpenAI-compatible test server (tools/openai_double.py) and the warm page allowed to
# reach it, for the tests of the OpenAI adapter in the page.
@pytest.fixture
def double(request: pytest.FixtureRequest) -> Iterator[OpenAIDouble]:
    """The double; a test parametrized indirectly with True gets one that keeps its
    connections open after a response (``keep_alive``)."""
    server, _ = serve_openai_double(keep_alive=getattr(request, "param", False))
    yield server
    server.close()


@pytest.fixture
def openai_page(_module_page: ModulePage, warm_page: Page, double: OpenAIDouble) -> Iterator[Page]:
    """The warm page, allowed to reach the double (and only it) beside its own server."""
    problems = _module_page.problems
    pattern = f"{double.url}/**"

    def through(route: Route) -> None:
        route.continue_()

    # Routes registered later are tried first: the conftest guard still refuses the rest.
    warm_page.context.route(pattern, through)
    yield warm_page
    warm_page.context.unroute(pattern, through)
    # Chromium logs each error status and broken body it receives ("Failed to load
    # resource"); from the double these are the scenario, not a fault of the page.
    problems.errors[:] = [
        error
        for error in problems.errors
        if not (error.startswith("console.error: Failed to load resource") and double.url in error)
    ]
