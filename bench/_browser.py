"""Shared by the browser benchmarks: dist/ on a local server and Debian's Chromium."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from serve import serve_in_background  # noqa: E402

# The flags that work on this machine (see README); the same as e2e/conftest.py uses.
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


@contextmanager
def chromium_and_site() -> Iterator[tuple[Browser, str]]:
    """Chromium and the base URL of dist/ served on 127.0.0.1."""
    server, url = serve_in_background(ROOT / "dist")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS
            )
            try:
                yield browser, url
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
