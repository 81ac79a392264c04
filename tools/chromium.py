"""Debian's Chromium, driven by Playwright through ``executable_path`` (never a browser of
Playwright's own: ``playwright install`` downloads, and cannot here). One place for the
flags, shared by e2e/ and bench/."""

from __future__ import annotations

import shutil

from playwright.sync_api import Browser, Playwright

# Without the background-networking flags Chromium keeps dialing out, and a closed network
# answers with refused connections; a new, empty user-data dir comes with each launch.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    """Where Debian's chromium is; a clear error if it is not installed."""
    path = shutil.which("chromium")
    if path is None:
        raise RuntimeError("Debian's chromium is not installed: run ./build.sh test")
    return path


def launch(playwright: Playwright) -> Browser:
    """A headless Chromium with the flags that work on this kind of machine."""
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
