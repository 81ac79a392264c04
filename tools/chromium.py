"""Debian's Chromium, driven by Playwright through ``executable_path`` (never a browser of
Playwright's own: ``playwright install`` downloads, and cannot here). One place for the
flags, shared by e2e/ and bench/."""

from __future__ import annotations

import shutil

from playwright.sync_api import Browser, BrowserContext, Playwright

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


def launch(playwright: Playwright, extra_args: tuple[str, ...] = ()) -> Browser:
    """A headless Chromium with the flags that work on this kind of machine, and any a test
    adds (``--host-resolver-rules``, say)."""
    return playwright.chromium.launch(
        executable_path=chromium_path(), args=[*CHROMIUM_ARGS, *extra_args]
    )


def launch_profile(playwright: Playwright, user_data_dir: str, base_url: str) -> BrowserContext:
    """A headless Chromium on a profile kept in ``user_data_dir``: closed and launched again,
    it finds what an earlier launch left (Cache Storage, the code cache), as a returning
    visitor's browser does."""
    return playwright.chromium.launch_persistent_context(
        user_data_dir, executable_path=chromium_path(), args=CHROMIUM_ARGS, base_url=base_url
    )
