"""Shared by the browser benchmarks: dist/ on a local server and Debian's Chromium."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from chromium import launch  # noqa: E402
from serve import serve_in_background  # noqa: E402


@contextmanager
def chromium_and_site(site: Path | None = None) -> Iterator[tuple[Browser, str]]:
    """Chromium and the base URL of ``site`` (dist/ by default) served on 127.0.0.1."""
    server, url = serve_in_background(site or ROOT / "dist")
    try:
        with sync_playwright() as p:
            browser = launch(p)
            try:
                yield browser, url
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
