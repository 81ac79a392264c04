"""The e2e suite's answer to Chromium's renderer dying under a test (e2e/conftest.py): the
test runs once more on a live page, and only a crash is given that second run."""

from __future__ import annotations

import contextlib

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

attempts: dict[str, int] = {}


def crash_once(page: Page, name: str) -> None:
    """Crash the page's renderer on the test's first run; on its rerun, do nothing."""
    attempts[name] = attempts.get(name, 0) + 1
    if attempts[name] == 1:
        # Chromium's debug URL kills the renderer it is loaded in; the suite's guard refuses
        # other hosts, so this one address is let through.
        page.context.route("chrome://crash", lambda route: route.continue_())
        with contextlib.suppress(PlaywrightError):
            page.goto("chrome://crash")
        page.evaluate("1")


def test_a_crashed_shared_page_is_opened_again_for_the_rerun(warm_page: Page) -> None:
    crash_once(warm_page, "warm")
    assert warm_page.evaluate("1 + 1") == 2
    assert attempts["warm"] == 2


def test_the_next_test_of_the_module_gets_the_live_page(warm_page: Page) -> None:
    assert warm_page.evaluate("location.pathname") == "/blank.html"
