"""Sync between browsers through the sync server (docs/storage.md "Sync"): uvicorn on
127.0.0.1 serving agrun.adapters.sync_server on a real PostgreSQL, and two browser contexts
(two devices, each its own IndexedDB) on one session, offline and back.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from conftest import BOOT_TIMEOUT_MS, ROOT, PageProblems, guard_context, guard_page
from pg_server import throwaway_server
from sync_serve import serving_sync

sys.path.insert(0, str(ROOT / "tests"))
from planted_secrets import PLANTED, hits

SESSION = "shared"


@pytest.fixture(scope="module")
def sync_server(base_url: str) -> Iterator[tuple[str, str]]:
    """The sync server's URL (allowing the test site's origin) and its database's conninfo."""
    with (
        throwaway_server() as database,
        serving_sync(database.conninfo, [base_url.rstrip("/")]) as url,
    ):
        yield url, database.conninfo


def device(browser: Browser, base_url: str, sync_url: str) -> tuple[BrowserContext, Page, Any]:
    """A browser context of its own (its own IndexedDB) allowed to reach the sync server."""
    problems = PageProblems()
    context = browser.new_context(base_url=base_url)
    context.set_default_timeout(BOOT_TIMEOUT_MS)
    guard_context(context, base_url, problems)
    context.route(f"{sync_url}/**", lambda route: route.continue_())
    page = context.new_page()
    guard_page(page, problems)
    page.goto("/blank.html")
    return context, page, problems


def boot(page: Page, url: str, token: str | None, session: str = SESSION, **extra: Any) -> None:
    options = {"sessionId": session, "sync": {"url": url, "token": token}, **extra}
    page.evaluate(
        """async (options) => {
            const agrun = await import('/agrun.js');
            window.syncs = [];
            window.rt?.close();
            window.rt = await agrun.createRuntime({
                ...options,
                onSync: (result, error) => window.syncs.push(error ? { code: error.code } : result),
            });
        }""",
        options,
    )


def run(page: Page, text: str) -> None:
    page.evaluate("async (text) => { await window.rt.run(text); }", text)


def sync(page: Page) -> dict[str, Any]:
    return page.evaluate("async () => window.rt.sync()")  # type: ignore[no-any-return]


def held(page: Page) -> tuple[list[str], list[str]]:
    """The session's turn ids as IndexedDB holds them, and what the person said."""
    text = page.evaluate("async () => window.rt.exportSession()")
    turns = json.loads(text)["session"]["turns"]
    said = [m["content"] for t in turns for m in t["messages"] if m["role"] == "user"]
    return [t["turnId"] for t in turns], said


def server_rows(conninfo: str, session: str = SESSION) -> tuple[list[str], str]:
    with psycopg.connect(conninfo) as conn:
        ids = [
            row[0]
            for row in conn.execute(
                "SELECT turn_id FROM agrun_turns WHERE session_id = %s ORDER BY seq", (session,)
            )
        ]
        everything = []
        for (table,) in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'agrun_%'"
        ).fetchall():
            everything += [
                json.dumps(r, default=str) for r in conn.execute(f"SELECT * FROM {table}")
            ]
    return ids, "\n".join(everything)


def test_two_browsers_offline_then_online_hold_the_same_session(
    browser: Browser, base_url: str, sync_server: tuple[str, str]
) -> None:
    url, conninfo = sync_server
    laptop_context, laptop, laptop_problems = device(browser, base_url, url)
    phone_context, phone, phone_problems = device(browser, base_url, url)
    try:
        boot(laptop, url, None)
        run(laptop, "first")
        token = sync(laptop)["token"]
        assert token
        boot(phone, url, token, worker=True)  # the phone's runtime in a Web Worker
        assert sync(phone)["pulled"] == held(laptop)[0]

        for context in (laptop_context, phone_context):
            context.set_offline(True)
        run(laptop, "laptop one")
        run(laptop, "laptop two")
        run(phone, "phone one")
        # Chromium logs the failed fetch; that is the point here.
        laptop_problems.expected_console_errors.append("ERR_INTERNET_DISCONNECTED")
        refused = laptop.evaluate(
            "async () => { try { await window.rt.sync(); } catch (e) { return e.code; } }"
        )
        assert refused == "sync_failed"

        # Back online: each page syncs by itself on the 'online' event.
        for context in (laptop_context, phone_context):
            context.set_offline(False)
        for page in (laptop, phone):
            page.wait_for_function("window.syncs.length > 0")
            assert all("pushed" in outcome for outcome in page.evaluate("window.syncs"))
        # Whichever pushed first has not seen the other's turns yet: one more sync each.
        sync(laptop)
        sync(phone)

        ids, said = held(laptop)
        assert held(phone) == (ids, said)
        assert server_rows(conninfo)[0] == ids
        assert len(ids) == len(set(ids)) == 4
        assert sorted(said) == sorted(["first", "laptop one", "laptop two", "phone one"])
        assert said[0] == "first"
        assert said.index("laptop one") < said.index("laptop two")
        # The runtimes took the merged session up: a reload reads the same from IndexedDB.
        laptop.reload()
        boot(laptop, url, token)
        assert held(laptop) == (ids, said)
        for problems in (laptop_problems, phone_problems):
            assert problems.foreign_requests == []
            assert problems.unexpected_errors() == []
    finally:
        laptop_context.close()
        phone_context.close()


def test_a_wrong_token_is_refused_and_secrets_never_reach_the_server(
    browser: Browser, base_url: str, sync_server: tuple[str, str]
) -> None:
    url, conninfo = sync_server
    context, page, problems = device(browser, base_url, url)
    try:
        boot(page, url, None, session="owned")
        run(page, "mine")
        sync(page)
        problems.expected_console_errors.append("403 (Forbidden)")  # the refusal, logged
        boot(page, url, "not-the-token", session="owned", storage="memory")
        run(page, "theirs")
        code = page.evaluate(
            "async () => { try { await window.rt.sync(); } catch (e) { return e.code; } }"
        )
        assert code == "sync_forbidden"
        assert (
            server_rows(conninfo, "owned")[0] and "theirs" not in server_rows(conninfo, "owned")[1]
        )

        # With redactSecrets off the page keeps the person's words as said, secrets too;
        # what it sends the server is masked all the same.
        secrets = " and ".join(text for text, _ in PLANTED.values())
        boot(page, url, None, session="secret", redactSecrets=False)
        run(page, f"keep this: {secrets}")
        assert hits(json.dumps(held(page)[1])) != []  # planted, here
        assert sync(page)["pushed"]
        ids, rows = server_rows(conninfo, "secret")
        assert len(ids) == 1 and "keep this" in rows
        assert hits(rows) == []
        assert problems.foreign_requests == []
        assert problems.unexpected_errors() == []
    finally:
        context.close()
