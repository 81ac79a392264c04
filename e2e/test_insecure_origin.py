"""agrun on an insecure origin: a page served over plain http from a name that is not
localhost (a laptop's ./build.sh serve opened from a phone on the same network, an intranet
host). Browsers give such a page no Web Locks, no Cache Storage, no crypto.subtle and no
service worker; agrun boots without them (no snapshot is kept), persists to IndexedDB, and
answers, in the page and in a worker. Chromium resolves agrun.test to 127.0.0.1 here, which
makes the origin insecure as a LAN address would."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Playwright

from chromium import launch
from conftest import PageProblems, guard_context, guard_page

HOST = "agrun.test"

TURN = """async ({ worker, text }) => {
    const agrun = await import('/agrun.js');
    const rt = await agrun.createRuntime({ provider: agrun.testModel(), worker, dbName: 'insecure' });
    const result = await rt.run(text);
    const seen = {
        status: result.state.status,
        history: rt.history().map((m) => [m.role, m.content]),
        boot: rt.diagnostics().boot,
        backend: rt.storageStatus().backend,
    };
    rt.close();
    return seen;
}"""

MISSING = """async () => ({
    secure: isSecureContext,
    locks: 'locks' in navigator,
    caches: 'caches' in globalThis,
    subtle: Boolean(globalThis.crypto?.subtle),
    offline: await (await import('/offline.js')).registerOffline(),
})"""


@pytest.fixture(scope="module")
def insecure_browser(playwright: Playwright) -> Iterator[Browser]:
    browser = launch(playwright, (f"--host-resolver-rules=MAP {HOST} 127.0.0.1",))
    yield browser
    browser.close()


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_an_insecure_origin_boots_persists_and_answers(
    insecure_browser: Browser, base_url: str, worker: bool
) -> None:
    origin = f"http://{HOST}:{urlsplit(base_url).port}"
    context = insecure_browser.new_context(base_url=origin)
    problems = PageProblems()
    guard_context(context, origin, problems)
    try:
        page = context.new_page()
        guard_page(page, problems)
        page.goto("/blank.html")
        assert page.evaluate(MISSING) == {
            "secure": False,
            "locks": False,
            "caches": False,
            "subtle": False,
            "offline": None,
        }
        first = page.evaluate(TURN, {"worker": worker, "text": "hello"})
        page.reload()
        second = page.evaluate(TURN, {"worker": worker, "text": "again"})
        for seen in (first, second):
            assert seen["status"] == "succeeded" and seen["backend"] == "indexeddb", seen
            assert seen["boot"] == "fresh", seen  # no Cache Storage: no snapshot kept
        said = [text for role, text in second["history"] if role == "user"]
        assert said == ["hello", "again"], second["history"]  # the reload kept the first turn
        assert problems.foreign_requests == [] and problems.unexpected_errors() == []
    finally:
        context.close()
