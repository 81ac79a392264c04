"""The JS session stores in headless Chromium: real IndexedDB, injected faults, upgrades,
reloads and closes mid-write, two pages on one session, export and import."""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from serve import serve_in_background  # noqa: E402

# Loaded into every test page: the stores on `window.S`, and helpers that make and check turns.
HELPERS = (Path(__file__).parent / "storage_helpers.js").read_text()


def content_entry(ref: str) -> dict[str, Any]:
    """A content entry of the shape every import checks (ContentRecord)."""
    return {"ref": ref, "kind": "text", "body": "abc", "bytes": 5, "digest": "sha256:x",
            "runId": "run", "createdAt": 1, "lastUsedAt": 1}  # fmt: skip


@pytest.fixture(scope="session")
def web_url() -> Iterator[str]:
    """web/ itself, served on 127.0.0.1: the stores need no build."""
    server, url = serve_in_background(ROOT / "web")
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture
def store_context(browser: Browser, web_url: str) -> Iterator[BrowserContext]:
    """A fresh context per test: its own, empty IndexedDB."""
    context = browser.new_context(base_url=web_url)
    context.set_default_timeout(30_000)
    yield context
    context.close()


@pytest.fixture
def open_page(store_context: BrowserContext) -> Iterator[Callable[[], Page]]:
    """Open pages with the helpers loaded; an uncaught error in any of them fails the test."""
    errors: list[str] = []

    def open_() -> Page:
        page = store_context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto("/blank.html")
        page.evaluate(HELPERS)
        return page

    yield open_
    assert errors == [], "a page raised an uncaught error"


@pytest.fixture
def spage(open_page: Callable[[], Page]) -> Page:
    return open_page()


FATAL = [
    "InvalidStateError",
    "QuotaExceededError",
    "SecurityError",
    "UnknownError",
    "NotAllowedError",
]


def test_commit_and_load_round_trip_in_indexeddb(spage: Page) -> None:
    result = spage.evaluate(
        """async () => {
            const store = S.createIndexedDbSessionStore({ dbName: 'rt' });
            const seqs = [];
            for (const n of [1, 2, 3]) {
                seqs.push(await store.commitTurn(turn('s1', n, { globalMemory: [{ g: n }] })));
            }
            seqs.push(await store.commitTurn(turn('s1', 2)));  // a retry is not a new turn
            await store.commitTurn(turn('s2', 1));
            const snap = await store.loadSession('s1');
            return {
                seqs, ids: checkWhole(snap), snap,
                listed: await store.listSessions(),
                global: await store.readGlobalMemory(),
                state: await store.readRuntimeState(),
                missing: await store.loadSession('nobody'),
            };
        }"""
    )
    assert result["seqs"] == [1, 2, 3, 2]
    assert result["ids"] == ["s1-t1", "s1-t2", "s1-t3"]
    snap = result["snap"]
    assert list(snap) == [
        "sessionId",
        "turns",
        "sessionMemory",
        "inquiry",
        "contentEntries",
        "lastRun",
    ]
    assert snap["inquiry"] == {"activeGoal": "goal 3"}
    assert [c["ref"] for c in snap["contentEntries"]] == ["s1-t1", "s1-t2", "s1-t3"]
    assert result["listed"] == [
        {"sessionId": "s1", "turnCount": 3, "lastCommittedAtMs": 1003, "title": None},
        {"sessionId": "s2", "turnCount": 1, "lastCommittedAtMs": 1001, "title": None},
    ]
    assert result["global"] == [{"g": 1}, {"g": 2}, {"g": 3}]
    assert result["state"] == {"lastRun": {"turn": "s2-t1"}}
    assert result["missing"] is None


@pytest.mark.parametrize("kind", ["memory", "indexeddb", "resilient"])
def test_titles_clear_and_delete_in_every_browser_store(spage: Page, kind: str) -> None:
    """The port's conversation calls (the Python suite's tests/test_storage_port.py, here on
    the page's stores): a title outlives commits and a clear; clear keeps the line with no
    turns, delete removes it; global memory and other sessions stay; a store opened again on
    the database (memory: the same store) holds it all."""
    make = {
        "memory": "S.createMemorySessionStore()",
        "indexeddb": "S.createIndexedDbSessionStore({ dbName: 'convo' })",
        "resilient": "S.createSessionStore({ dbName: 'convo' })",
    }[kind]
    result = spage.evaluate(
        f"""async () => {{
            const store = {make};
            await store.commitTurn(turn('a', 1, {{ globalMemory: [{{ g: 1 }}] }}));
            await store.commitTurn(turn('b', 1));
            await store.renameSession('a', 'Trip');
            await store.renameSession('new', 'Named first');
            await store.commitTurn(turn('a', 2));
            const named = await store.listSessions();
            const cleared = [await store.clearSession('a'), await store.clearSession('nobody')];
            const afterClear = [await store.sessionInfo('a'), await store.loadSession('a')];
            const seq = await store.commitTurn(turn('a', 3));
            const deleted = [await store.deleteSession('b'), await store.deleteSession('b')];
            let badTitle;
            try {{ await store.renameSession('a', 7); }} catch (e) {{ badTitle = e.name; }}
            const reopened = {"store" if kind == "memory" else make};
            return {{
                named, cleared, afterClear, seq, deleted, badTitle,
                listed: await reopened.listSessions(),
                a: checkWhole(await reopened.loadSession('a')),
                global: await reopened.readGlobalMemory(),
            }};
        }}"""
    )
    assert [(s["sessionId"], s["turnCount"], s["title"]) for s in result["named"]] == [
        ("a", 2, "Trip"),
        ("b", 1, None),
        ("new", 0, "Named first"),
    ]
    assert result["cleared"] == [True, False]
    info, snap = result["afterClear"]
    assert info == {"sessionId": "a", "turnCount": 0, "lastCommittedAtMs": None, "title": "Trip"}
    assert snap is None or (snap["turns"] == [] and snap["contentEntries"] == [])
    assert result["seq"] == 1
    assert result["deleted"] == [True, False]
    assert result["badTitle"] == "AgrunConfigError"
    assert [(s["sessionId"], s["turnCount"], s["title"]) for s in result["listed"]] == [
        ("a", 1, "Trip"),
        ("new", 0, "Named first"),
    ]
    assert result["a"] == ["a-t3"]
    assert result["global"] == [{"g": 1}]


def test_a_reloaded_page_resumes_the_session(spage: Page) -> None:
    spage.evaluate(
        """async () => {
            const store = S.createSessionStore({ dbName: 'reload' });
            for (const n of [1, 2]) await store.commitTurn(turn('s1', n));
        }"""
    )
    spage.reload()
    spage.evaluate(HELPERS)
    result = spage.evaluate(
        """async () => {
            const store = S.createSessionStore({ dbName: 'reload' });
            const snap = await store.loadSession('s1');
            const seq = await store.commitTurn(turn('s1', 3));
            return { ids: checkWhole(snap), seq, lastRun: snap.lastRun,
                     status: store.status() };
        }"""
    )
    assert result["ids"] == ["s1-t1", "s1-t2"] and result["seq"] == 3
    assert result["lastRun"] == {"turn": "s1-t2"}
    assert result["status"]["degraded"] is False


OPEN_FAULTS = {
    "open throws": "indexedDB.open = () => { throw new DOMException('injected', NAME); };",
    "open request fails": """indexedDB.open = () => {
        const request = {};
        setTimeout(() => {
            request.error = new DOMException('injected', NAME);
            request.onerror?.();
        });
        return request;
    };""",
}

# Each fault is a function body run in the page after two turns were committed normally.
FAULTS = {
    "transaction throws": (
        "IDBDatabase.prototype.transaction = function () {"
        " throw new DOMException('injected', NAME); };"
    ),
    "put throws": (
        "IDBObjectStore.prototype.put = function () { throw new DOMException('injected', NAME); };"
    ),
}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("name", FATAL)
def test_a_fatal_fault_switches_to_memory_once_and_loses_no_turn(
    spage: Page, fault: str, name: str
) -> None:
    result = spage.evaluate(
        """async ([fault, NAME]) => {
            const { store, degraded } = watched('faults');
            for (const n of [1, 2]) await store.commitTurn(turn('s1', n));
            new Function('NAME', fault)(NAME);
            const seqs = await Promise.all([3, 4, 5].map((n) => store.commitTurn(turn('s1', n))));
            seqs.push(await store.commitTurn(turn('s1', 6)));
            await store.appendGlobalMemory([{ g: 1 }]);
            const snap = await store.loadSession('s1');
            return {
                degraded: degraded.map((e) => ({
                    reason: e.reason, method: e.method, hasError: !!e.error,
                })),
                seqs, ids: checkWhole(snap), status: store.status(), isDegraded: store.isDegraded(),
                global: await store.readGlobalMemory(),
            };
        }""",
        [FAULTS[fault], name],
    )
    assert result["degraded"] == [{"reason": name, "method": "commitTurn", "hasError": True}]
    assert result["seqs"] == [3, 4, 5, 6]
    assert result["ids"] == [f"s1-t{n}" for n in range(1, 7)]
    assert result["status"] == {
        "degraded": True,
        "backend": "memory",
        "reason": name,
        "method": "commitTurn",
        "unsynced": 4,
        "unsyncedWrites": 5,
        "dataLoss": None,
    }
    assert result["isDegraded"] is True
    assert result["global"] == [{"g": 1}]


@pytest.mark.parametrize("fault", list(OPEN_FAULTS))
@pytest.mark.parametrize("name", FATAL)
def test_a_database_that_cannot_open_falls_back(spage: Page, fault: str, name: str) -> None:
    result = spage.evaluate(
        """async ([fault, NAME]) => {
            new Function('NAME', fault)(NAME);
            const { store, degraded } = watched('never');
            for (const n of [1, 2, 3]) await store.commitTurn(turn('s1', n));
            return { degraded: degraded.map((e) => [e.reason, e.method, e.error.name]),
                     ids: checkWhole(await store.loadSession('s1')) };
        }""",
        [OPEN_FAULTS[fault], name],
    )
    assert result["degraded"] == [[name, "commitTurn", "StorageOpenError"]]
    assert result["ids"] == ["s1-t1", "s1-t2", "s1-t3"]


@pytest.mark.parametrize("name", ["AbortError", "ConstraintError"])
@pytest.mark.parametrize("where", ["put", "transaction"])
def test_a_non_fatal_error_is_retried_or_thrown_for_a_retry(
    spage: Page, name: str, where: str
) -> None:
    result = spage.evaluate(
        """async ([NAME, where]) => {
            const { store, degraded } = watched('retry');
            await store.commitTurn(turn('s1', 1));
            const proto = where === 'put' ? IDBObjectStore.prototype : IDBDatabase.prototype;
            const original = proto[where];
            proto[where] = function () {
                proto[where] = original;
                throw new DOMException('once', NAME);
            };
            let thrown = null;
            try { await store.commitTurn(turn('s1', 2)); } catch (error) { thrown = error.name; }
            const seq = await store.commitTurn(turn('s1', 2));
            const reopened = S.createIndexedDbSessionStore({ dbName: 'retry' });
            return { thrown, seq, degraded: degraded.length, status: store.status(),
                     ids: checkWhole(await reopened.loadSession('s1')) };
        }""",
        [name, where],
    )
    # A transient abort is retried by the store itself (issue 8); any other non-fatal
    # error is thrown, for the caller to retry.
    assert result["thrown"] == (None if name == "AbortError" else name)
    assert result["seq"] == 2 and result["ids"] == ["s1-t1", "s1-t2"]
    assert result["degraded"] == 0 and result["status"]["degraded"] is False


def test_a_real_quota_limit_degrades_to_memory(store_context: BrowserContext, spage: Page) -> None:
    cdp = store_context.new_cdp_session(spage)
    origin = spage.evaluate("location.origin")
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": 200_000})
    result = spage.evaluate(
        """async () => {
            const { store, degraded } = watched('quota');
            for (let n = 1; n <= 40; n += 1) {
                await store.commitTurn(turn('s1', n, { padBytes: 20000 }));
            }
            return { degraded: degraded.map((e) => [e.reason, e.method]),
                     ids: checkWhole(await store.loadSession('s1')).length };
        }"""
    )
    assert result["degraded"] == [["QuotaExceededError", "commitTurn"]]
    assert result["ids"] == 40


def _raw_v1(page: Page) -> None:
    """A database exactly as agrun's schema version 1 laid it out, with one session in it."""
    page.evaluate(
        """() => new Promise((resolve, reject) => {
            const request = indexedDB.open('old', 1);
            request.onupgradeneeded = () => {
                const db = request.result;
                db.createObjectStore('sessions', { keyPath: 'sessionId' });
                db.createObjectStore('turns', { keyPath: ['sessionId', 'seq'] })
                  .createIndex('turnId', ['sessionId', 'turnId'], { unique: true });
                for (const name of ['messages', 'events', 'memoryEntries']) {
                    db.createObjectStore(name, { keyPath: ['sessionId', 'seq'] });
                }
                db.createObjectStore('sessionMemory', { keyPath: 'sessionId' });
                db.createObjectStore('inquiry', { keyPath: 'sessionId' });
                db.createObjectStore('globalMemory', { autoIncrement: true });
                const tx = request.transaction;
                tx.objectStore('sessions').put({
                    sessionId: 'old', turnCount: 1, lastCommittedAtMs: 5, lastRun: { runId: 'r1' },
                });
                tx.objectStore('turns').put({ sessionId: 'old', seq: 1, turnId: 't1' });
                tx.objectStore('messages').put({
                    sessionId: 'old', seq: 1, items: [{ text: 'from v1' }],
                });
                tx.objectStore('sessionMemory').put({ sessionId: 'old', value: { summary: 'v1' } });
                tx.objectStore('globalMemory').add({ text: 'global v1' });
            };
            request.onsuccess = () => { request.result.close(); resolve(); };
            request.onerror = () => reject(request.error);
        })"""
    )


def test_an_older_database_is_upgraded_without_losing_data(spage: Page) -> None:
    _raw_v1(spage)
    result = spage.evaluate(
        """async () => {
            const store = S.createIndexedDbSessionStore({ dbName: 'old' });
            const snap = await store.loadSession('old');
            const state = await store.readRuntimeState();
            const seq = await store.commitTurn(turn('old', 2));
            const after = await store.loadSession('old');
            await store.close();
            const db = await openRaw('old');
            const version = db.version;
            const stores = [...db.objectStoreNames].sort();
            db.close();
            const reopened = S.createIndexedDbSessionStore({ dbName: 'old' });
            const global = await reopened.readGlobalMemory();
            return { snap, state, seq, content: after.contentEntries, global, version, stores };
        }"""
    )
    assert result["snap"]["turns"][0]["messages"] == [{"text": "from v1"}]
    assert result["snap"]["sessionMemory"] == {"summary": "v1"}
    assert result["snap"]["lastRun"] == {"runId": "r1"}
    assert result["state"] == {"lastRun": {"runId": "r1"}}  # backfilled by the upgrade
    assert result["seq"] == 2
    assert [(c["ref"], c["body"]) for c in result["content"]] == [("old-t2", "abc")]
    assert result["global"] == [{"text": "global v1"}]
    assert (
        result["version"] == 2
        and "content" in result["stores"]
        and "runtimeState" in result["stores"]
    )


def test_a_newer_database_is_refused_not_wiped(spage: Page) -> None:
    result = spage.evaluate(
        """async () => {
            const made = await openRaw('future', 99, (db) => {
                db.createObjectStore('fromTheFuture').put('keep me', 'k');
            });
            made.close();
            const direct = S.createIndexedDbSessionStore({ dbName: 'future' });
            let error = null;
            try {
                await direct.loadSession('s1');
            } catch (e) {
                const { name, code, message, found, known } = e;
                error = { name, code, message, found, known };
            }
            const { store, degraded } = watched('future');
            await store.commitTurn(turn('s1', 1));
            const db = await openRaw('future');
            const future = db.transaction('fromTheFuture').objectStore('fromTheFuture');
            const kept = await settle(future.get('k'));
            const version = db.version;
            db.close();
            return { error, degraded: degraded.map((e) => [e.reason, e.method]), kept, version };
        }"""
    )
    assert (
        result["error"]["name"] == "SchemaTooNew"
        and result["error"]["code"] == "storage_schema_too_new"
    )
    assert result["error"]["found"] == 99 and result["error"]["known"] == 2
    assert "upgrade agrun" in result["error"]["message"]
    assert result["degraded"] == [["SchemaTooNew", "commitTurn"]]
    assert result["kept"] == "keep me" and result["version"] == 99


WRITER = """(sessions) => {
    const store = S.createIndexedDbSessionStore({ dbName: 'crash' });
    window.committed = 0;
    window.writing = (async () => {
        for (let n = 0; ; n += 1) {
            const sid = sessions[n % sessions.length];
            const snap = await store.loadSession(sid);
            await store.commitTurn(turn(sid, (snap?.turns.length ?? 0) + 1, { padBytes: 3000 }));
            window.committed += 1;
        }
    })();
}"""


def write_then_wait(page: Page, sessions: list[str], ms: int) -> None:
    """Start the endless writer, let one turn land (a loaded machine is slow), then wait."""
    page.evaluate(WRITER, sessions)
    page.wait_for_function("window.committed >= 1")
    page.wait_for_timeout(ms)


def test_closing_pages_mid_write_leaves_every_session_whole(
    open_page: Callable[[], Page],
) -> None:
    rng = random.Random(5)
    sessions = ["a", "b", "c"]
    for _ in range(15):
        writer = open_page()
        write_then_wait(writer, sessions, rng.randint(5, 120))
        writer.close(run_before_unload=False)
    checker = open_page()
    counts = checker.evaluate(
        """async () => {
            return checkAll(S.createIndexedDbSessionStore({ dbName: 'crash' }));
        }""",
    )
    assert sum(counts.values()) >= 15


def test_reloading_mid_write_leaves_every_session_whole(spage: Page) -> None:
    rng = random.Random(7)
    for _ in range(10):
        write_then_wait(spage, ["r1", "r2"], rng.randint(5, 80))
        spage.reload()
        spage.evaluate(HELPERS)
    counts = spage.evaluate(
        "async () => checkAll(S.createIndexedDbSessionStore({ dbName: 'crash' }))"
    )
    assert set(counts) == {"r1", "r2"} and sum(counts.values()) >= 10


def test_two_pages_writing_one_session_lose_no_turn(open_page: Callable[[], Page]) -> None:
    pages = [open_page(), open_page()]
    for index, page in enumerate(pages):
        page.evaluate(
            """(index) => {
                const store = S.createSessionStore({ dbName: 'two' });
                window.done = (async () => {
                    const seqs = [];
                    for (let n = 1; n <= 25; n += 1) {
                        const t = turn('shared', n);
                        t.turnId = `p${index}-${n}`;
                        for (const x of [...t.messages, ...t.events, ...t.memoryEntries]) {
                            x.turn = t.turnId;
                            delete x.id;
                        }
                        t.sessionMemory.last = t.lastRun.turn = t.contentEntries[0].ref = t.turnId;
                        seqs.push(await store.commitTurn(t));
                    }
                    return seqs;
                })();
            }""",
            index,
        )
    seqs = [page.evaluate("window.done") for page in pages]
    all_seqs = sorted(seqs[0] + seqs[1])
    assert all_seqs == list(range(1, 51))
    ids = pages[1].evaluate(
        """async () => {
            const store = S.createIndexedDbSessionStore({ dbName: 'two' });
            return checkWhole(await store.loadSession('shared'));
        }"""
    )
    assert sorted(ids) == sorted([f"p{i}-{n}" for i in (0, 1) for n in range(1, 26)])
    # Each page's own turns stay in its order.
    for i in (0, 1):
        mine = [x for x in ids if x.startswith(f"p{i}-")]
        assert mine == [f"p{i}-{n}" for n in range(1, 26)]


def test_two_pages_taking_turns_under_the_session_lock(open_page: Callable[[], Page]) -> None:
    pages = [open_page(), open_page()]
    for index, page in enumerate(pages):
        page.evaluate(
            """(index) => {
                const store = S.createSessionStore({ dbName: 'locked' });
                window.done = (async () => {
                    const seen = [];
                    for (let n = 1; n <= 15; n += 1) {
                        await store.withSessionLock('s', async () => {
                            // load, "run", commit: nobody commits in between
                            const before = (await store.loadSession('s'))?.turns.length ?? 0;
                            await new Promise((r) => setTimeout(r, 2));
                            const t = turn('s', before + 1);
                            const seq = await store.commitTurn(t);
                            seen.push([before, seq]);
                        });
                    }
                    return seen;
                })();
            }""",
            index,
        )
    seen = [pair for page in pages for pair in page.evaluate("window.done")]
    assert all(seq == before + 1 for before, seq in seen)
    assert sorted(seq for _, seq in seen) == list(range(1, 31))


def test_export_import_round_trip_and_hostile_files(spage: Page) -> None:
    result = spage.evaluate(
        """async () => {
            const idb = S.createIndexedDbSessionStore({ dbName: 'xfer' });
            for (const n of [1, 2, 3]) await idb.commitTurn(turn('s1', n));
            const text = await idb.exportSession('s1');
            const memory = S.createMemorySessionStore();
            await memory.importSession(text);
            const again = await memory.exportSession('s1');
            const other = S.createIndexedDbSessionStore({ dbName: 'xfer2' });
            await other.importSession(again);
            const seq = await other.commitTurn(turn('s1', 4));
            const env = JSON.parse(text);
            const t1 = env.session.turns[0];
            const edited = (changes) =>
                JSON.stringify({ ...env, session: { ...env.session, ...changes } });
            const bad = {
                notJson: '{nope',
                newer: JSON.stringify({ ...env, formatVersion: 2 }),
                dupTurn: edited({ turns: [t1, { ...t1, seq: 2 }] }),
                gap: edited({ turns: [env.session.turns[1]] }),
                wrongType: edited({ sessionMemory: [1] }),
                extra: edited({ owner: 'root' }),
                deep: edited({ lastRun: JSON.parse('{"a":'.repeat(100) + '1' + '}'.repeat(100)) }),
                notText: 42,
            };
            const rejected = {};
            for (const [name, file] of Object.entries(bad)) {
                try {
                    await idb.importSession(file, { replace: true });
                    rejected[name] = 'accepted';
                } catch (e) {
                    rejected[name] = e.name;
                }
            }
            let exists = null;
            try { await idb.importSession(text); } catch (e) { exists = e.name; }
            const unchanged = (await idb.exportSession('s1')) === text;
            return { same: again === text, seq, rejected, exists, unchanged };
        }"""
    )
    assert result["same"] and result["seq"] == 4 and result["unchanged"]
    assert set(result["rejected"].values()) == {"ImportRejected"}, result["rejected"]
    assert result["exists"] == "ImportRejected"


def test_a_python_export_imports_in_the_browser_byte_for_byte(spage: Page) -> None:
    from agrun.storage import SessionSnapshot, StoredTurn, dump_session

    snapshot = SessionSnapshot(
        session_id="py",
        turns=[
            StoredTurn(seq=n, turn_id=f"t{n}", committed_at_ms=n, messages=[{"text": f"héllo {n}"}])
            for n in (1, 2)
        ],
        session_memory={"n": 2},
        content_entries=[content_entry("r1"), content_entry("r2")],
        last_run={"n": 2},
    )
    text = dump_session(snapshot)
    back: Any = spage.evaluate(
        """async (text) => {
            const store = S.createIndexedDbSessionStore({ dbName: 'py' });
            await store.importSession(text);
            return store.exportSession('py');
        }""",
        text,
    )
    assert back == text


class OwnChromium:
    """A Chromium we started ourselves (so we hold its pid), with everything it logged."""

    def __init__(self, user_data: Path) -> None:
        from chromium import CHROMIUM_ARGS

        chromium = shutil.which("chromium")
        assert chromium is not None
        self.user_data = user_data
        self.proc = subprocess.Popen(
            [
                chromium,
                *CHROMIUM_ARGS,
                f"--user-data-dir={user_data}",
                "--remote-debugging-port=0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.proc.stderr is not None
        self.log: list[str] = []
        self.ws = ""
        ready = threading.Event()

        def drain(stream: IO[bytes]) -> None:
            # Chromium keeps logging to stderr; a full pipe would stall it.
            for raw in stream:
                line = raw.decode(errors="replace").rstrip()
                self.log.append(line)
                if not self.ws and (match := re.search(r"DevTools listening on (ws://\S+)", line)):
                    self.ws = match.group(1)
                    ready.set()

        self._drain = threading.Thread(target=drain, args=(self.proc.stderr,), daemon=True)
        self._drain.start()
        if not ready.wait(30):
            self.kill()
            raise AssertionError(f"Chromium did not report its DevTools URL: {self.tail()}")

    def kill(self) -> None:
        """SIGKILL the browser and its children (its own process group), then read the rest
        of what it logged."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._drain.join(10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def said(self, text: str) -> bool:
        return any(text in line for line in self.log)

    def tail(self, lines: int = 15) -> list[str]:
        """The end of its log, without the D-Bus noise of a machine with no bus."""
        return [line for line in self.log if "dbus" not in line][-lines:]

    def indexeddb_files(self) -> list[str]:
        """The profile's IndexedDB files and their sizes."""
        root = self.user_data / "Default" / "IndexedDB"
        return [
            f"{p.relative_to(root)} {p.stat().st_size}"
            for p in sorted(root.rglob("*"))
            if p.is_file()
        ]


# What Chromium logs when it opened a site's IndexedDB, found it damaged and deleted it
# (content/browser/indexed_db/instance/leveldb/backing_store.cc).
BROWSER_DISCARDED = "IndexedDB recovering from a corrupted (and deleted) database"

# The crash test's store opened on the page: its sessions checked whole, and what the browser
# said it discarded on opening the database (null if nothing).
OPEN_AND_CHECK = """async (dbName) => {
    const store = S.createIndexedDbSessionStore({ dbName });
    const counts = await checkAll(store);
    return { counts, dataLoss: store.dataLoss() };
}"""


def _connect(playwright: Playwright, chromium: OwnChromium) -> Browser:
    """Attach to our Chromium. A restart after a kill recovers the profile first, so give it
    time; and on a loaded machine Playwright's attach was seen to stall after the browser had
    taken the connection (6 of ~340 starts), so a stalled attach is tried again afresh."""
    for _ in range(2):
        with contextlib.suppress(PlaywrightTimeoutError):
            return playwright.chromium.connect_over_cdp(chromium.ws, timeout=30_000)
    try:
        return playwright.chromium.connect_over_cdp(chromium.ws, timeout=30_000)
    except PlaywrightTimeoutError:
        raise AssertionError(f"could not attach to Chromium: {chromium.tail()}") from None


def _open_page(playwright: Playwright, chromium: OwnChromium, web_url: str) -> Page:
    browser = _connect(playwright, chromium)
    page = browser.contexts[0].new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{web_url}/blank.html")
    page.evaluate(HELPERS)
    return page


def test_killing_the_browser_mid_write_leaves_every_session_whole(
    playwright: Playwright, web_url: str, tmp_path: Path
) -> None:
    """Every turn the page saw acknowledged is there, whole, after each kill, unless the
    browser deleted the database itself when it started again, and said so. Chromium does
    that when it finds a site's IndexedDB damaged, and a kill can damage it: LevelDB's log
    torn mid-record is read back without the torn record, then written on after it, and the
    next start reads the tear as corruption (docs/storage.md "A browser killed mid-write").
    Then the store must report the loss too (`dataLoss()`), and the count starts again."""
    rng = random.Random(11)
    profile = tmp_path / "profile"
    acknowledged = 0  # turns the page saw committed since the database was created
    rounds: list[dict[str, Any]] = []
    for round_ in range(6):
        chromium = OwnChromium(profile)
        try:
            page = _open_page(playwright, chromium, web_url)
            found = page.evaluate(OPEN_AND_CHECK, "crash")
            stored = sum(found["counts"].values())
            if round_ < 5:
                write_then_wait(page, ["k1", "k2"], rng.randint(20, 300))
                # Read before the kill: turns committed after this only raise the count.
                committed = page.evaluate("window.committed")
        finally:
            chromium.kill()
        discarded = chromium.said(BROWSER_DISCARDED)
        rounds.append({"acknowledged": acknowledged, "found": found, "discarded": discarded})
        evidence = (
            f"rounds so far: {rounds}\nIndexedDB files: {chromium.indexeddb_files()}\n"
            f"Chromium's log: {chromium.tail()}"
        )
        # The store reports a deletion exactly when the browser logged one.
        assert (found["dataLoss"] is not None) == discarded, evidence
        if not discarded:
            assert stored >= acknowledged, f"acknowledged turns were lost\n{evidence}"
        if round_ < 5:
            acknowledged = stored + committed
    assert sum(r["acknowledged"] for r in rounds if not r["discarded"]) >= 5, rounds


def _tear_indexeddb_log(chromium: OwnChromium) -> None:
    """Leave the profile's IndexedDB log as a kill between two write() calls can: a record
    header promising 100 bytes, and 10 of them."""
    logs = list((chromium.user_data / "Default" / "IndexedDB").glob("*.leveldb/*.log"))
    assert len(logs) == 1, (
        f"Chromium's IndexedDB is no longer one LevelDB log: {chromium.indexeddb_files()}"
    )
    block_left = 32768 - logs[0].stat().st_size % 32768
    with logs[0].open("ab") as log:
        if block_left < 7:
            log.write(b"\0" * block_left)  # LevelDB's writer pads a block's last bytes so
        log.write(struct.pack("<IHB", 0, 100, 1) + b"x" * 10)


def test_a_database_the_browser_discards_is_reported(
    playwright: Playwright, web_url: str, tmp_path: Path
) -> None:
    """What the crash test allows for, made to happen: a kill tears Chromium's IndexedDB log
    mid-record; the next start drops the torn record (the turns committed are all there) and
    writes on after it; the start after that finds the log corrupt and Chromium deletes the
    site's IndexedDB, acknowledged turns and all. agrun cannot keep them (the browser deleted
    them), but it must not be silent: the store hears Chromium's dataLoss and reports it
    (onDataLoss, status().dataLoss)."""
    profile = tmp_path / "profile"
    report = """async ([sid, from, to]) => {
        const lost = [];
        const store = S.createSessionStore({ dbName: 'torn', onDataLoss: (e) => lost.push(e) });
        const counts = await checkAll(store);
        for (let n = from; n <= to; n += 1) await store.commitTurn(turn(sid, n));
        return { counts, lost, status: store.status().dataLoss };
    }"""
    results = []
    for step, commits in enumerate([["a", 1, 3], ["a", 4, 5], ["a", 1, 0]]):
        chromium = OwnChromium(profile)
        try:
            page = _open_page(playwright, chromium, web_url)
            results.append(page.evaluate(report, commits))
        finally:
            chromium.kill()
        if step == 0:
            _tear_indexeddb_log(chromium)
    evidence = f"{results}\nChromium's log: {chromium.tail()}"
    fresh, recovered, after = results
    assert fresh == {"counts": {}, "lost": [], "status": None}, evidence
    # The torn record is dropped, the acknowledged turns are all there.
    assert recovered == {"counts": {"a": 3}, "lost": [], "status": None}, evidence
    # Then Chromium deletes the database (the turns of both starts) and says so, and so does
    # the store.
    assert chromium.said(BROWSER_DISCARDED), evidence
    assert after["counts"] == {}, evidence
    assert [e["dataLoss"] for e in after["lost"]] == ["total"], evidence
    assert after["status"] == after["lost"][0] and after["status"]["message"], evidence


def _leave_a_log_the_next_start_deletes(
    playwright: Playwright, url: str, profile: Path, db_name: str, session_id: str
) -> None:
    """What the test above does to a profile before its last start: turns committed, the log
    torn as a kill tears it, a start that writes on after the tear; so Chromium deletes the
    site's IndexedDB when it next starts."""
    commit = """async ([dbName, sid, from, to]) => {
        const store = S.createSessionStore({ dbName });
        for (let n = from; n <= to; n += 1) await store.commitTurn(turn(sid, n));
    }"""
    for step, turns in enumerate([[1, 3], [4, 5]]):
        chromium = OwnChromium(profile)
        try:
            _open_page(playwright, chromium, url).evaluate(commit, [db_name, session_id, *turns])
        finally:
            chromium.kill()
        if step == 0:
            _tear_indexeddb_log(chromium)


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_runtime_is_told_when_the_browser_discarded_its_database(
    playwright: Playwright, base_url: str, tmp_path: Path, worker: bool
) -> None:
    """The deletion the test above makes happen, heard through `createRuntime`: a runtime
    that is the first to open the database after it gets `onDataLoss` while it starts and
    `storageStatus().dataLoss`, in the page and across a worker, and goes on empty (dist/
    is served: the runtime boots Pyodide)."""
    profile = tmp_path / "profile"
    _leave_a_log_the_next_start_deletes(playwright, base_url, profile, "torn", "a")
    chromium = OwnChromium(profile)
    try:
        seen = _open_page(playwright, chromium, base_url).evaluate(
            """async (worker) => {
                const agrun = await import('/agrun.js');
                const lost = [];
                const rt = await agrun.createRuntime({
                    storage: 'indexeddb', dbName: 'torn', sessionId: 'a', worker,
                    onDataLoss: (event) => lost.push(event),
                });
                const seen = {
                    lost, status: rt.storageStatus().dataLoss ?? null, history: rt.history().length,
                };
                await rt.close();
                return seen;
            }""",
            worker,
        )
    finally:
        chromium.kill()
    evidence = f"{seen}\nChromium's log: {chromium.tail()}"
    assert chromium.said(BROWSER_DISCARDED), evidence
    assert [event["dataLoss"] for event in seen["lost"]] == ["total"], evidence
    assert seen["status"] == seen["lost"][0] and seen["history"] == 0, evidence


def test_the_chat_widget_tells_the_person_the_browser_discarded_their_chats(
    playwright: Playwright, base_url: str, tmp_path: Path
) -> None:
    """The same deletion, met by `<agrun-chat>` (dist/index.html, IndexedDB 'agrun'): its
    banner tells the person their earlier chats on this device are gone, and the widget says
    it in `agrun-chat-storage`; it goes on, and saves again."""
    profile = tmp_path / "profile"
    _leave_a_log_the_next_start_deletes(playwright, base_url, profile, "agrun", "default")
    chromium = OwnChromium(profile)
    try:
        page = _connect(playwright, chromium).contexts[0].new_page()
        page.set_default_timeout(90_000)
        page.add_init_script(
            """addEventListener('agrun-chat-storage', (e) => {
                (window.storageEvents ??= []).push(e.detail);
            });"""
        )
        page.goto(f"{base_url}/index.html")
        widget = page.locator("agrun-chat")
        expect(widget.locator("#status")).to_have_text("Ready", timeout=90_000)
        banner = widget.get_by_role("alert")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("earlier chats on this device are gone")
        events = page.evaluate("window.storageEvents")
        page.close()
    finally:
        chromium.kill()
    evidence = f"{events}\nChromium's log: {chromium.tail()}"
    assert chromium.said(BROWSER_DISCARDED), evidence
    assert [(e["degraded"], e["dataLoss"]) for e in events] == [(False, "total")], evidence


def test_a_given_fallback_is_seeded_with_what_the_page_had(spage: Page) -> None:
    result = spage.evaluate(
        """async () => {
            const fallback = S.createMemorySessionStore();
            const degraded = [];
            const store = S.createResilientSessionStore(
                S.createIndexedDbSessionStore({ dbName: 'seeded' }),
                { fallback, onStorageDegraded: (e) => degraded.push(e.reason) },
            );
            await store.commitTurn(turn('s1', 1, { globalMemory: [{ g: 1 }] }));
            await store.commitTurn(turn('s2', 1));
            IDBDatabase.prototype.transaction = () => {
                throw new DOMException('injected', 'UnknownError');
            };
            await store.commitTurn(turn('s1', 2));
            return {
                degraded,
                s1: checkWhole(await fallback.loadSession('s1')),
                s2: checkWhole(await fallback.loadSession('s2')),
                global: await fallback.readGlobalMemory(),
                status: store.status(),
            };
        }"""
    )
    assert result["degraded"] == ["UnknownError"]
    assert result["s1"] == ["s1-t1", "s1-t2"] and result["s2"] == ["s2-t1"]
    assert result["global"] == [{"g": 1}]
    assert result["status"]["backend"] == "memory"


def test_writes_made_while_degraded_are_replayed_in_order_once_each(spage: Page) -> None:
    """Issue 20.1: turns, an import that replaces the session and global memory appends made
    on the fallback all reach the database when it is back, in the order they were made; a
    replay that fails midway goes on from where it stopped (no row written twice), and an
    import without replace is refused while degraded (it could not be replayed safely)."""
    result = spage.evaluate(
        """async () => {
            const open = () => S.createIndexedDbSessionStore({ dbName: 'replay' });
            const restored = [];
            const store = S.createResilientSessionStore(open(), {
                reopen: open, retryAfterMs: 0, onStorageRestored: (e) => restored.push(e) });
            await store.commitTurn(turn('s1', 1));
            await store.commitTurn(turn('s1', 2));
            const file = await store.exportSession('s1');
            await store.commitTurn(turn('s1', 3));
            const transaction = IDBDatabase.prototype.transaction;
            IDBDatabase.prototype.transaction = () => {
                throw new DOMException('injected', 'UnknownError');
            };
            await store.commitTurn(turn('s1', 4));
            await store.importSession(file, { replace: true });
            await store.appendGlobalMemory([{ g: 1 }]);
            let refused;
            try { await store.importSession(file); } catch (e) { refused = [e.name, e.code]; }
            await store.commitTurn(turn('s1', 5));
            await store.appendGlobalMemory([{ g: 2 }]);
            const degradedStatus = store.status();
            // The database is back, but the last write of the replay fails once.
            IDBDatabase.prototype.transaction = transaction;
            const add = IDBObjectStore.prototype.add;
            let failures = 1;
            IDBObjectStore.prototype.add = function (value, ...rest) {
                if (value?.g === 2 && failures-- > 0) throw new DOMException('injected', 'UnknownError');
                return add.call(this, value, ...rest);
            };
            await store.sessionInfo('s1');
            const midway = [store.status().unsyncedWrites, restored.length];
            await store.sessionInfo('s1');
            const fresh = open();
            return {
                refused, degradedStatus, midway, restored, after: store.status().degraded,
                ids: checkWhole(await fresh.loadSession('s1')),
                global: await fresh.readGlobalMemory(),
            };
        }"""
    )
    assert result["refused"] == ["StorageDegraded", "storage_degraded"]
    assert result["degradedStatus"]["unsynced"] == 2
    assert result["degradedStatus"]["unsyncedWrites"] == 5
    assert result["midway"] == [1, 0]
    assert result["restored"] == [{"merged": 2, "replayed": 5}]
    assert result["after"] is False
    # t4 was replaced by the import made after it; t5 came after the import.
    assert result["ids"] == ["s1-t1", "s1-t2", "s1-t5"]
    assert result["global"] == [{"g": 1}, {"g": 2}]


def test_renames_clears_and_deletes_made_while_degraded_are_replayed(spage: Page) -> None:
    """A rename, a clear and a delete made on the fallback reach the database when it is
    back, in order with the turns around them."""
    result = spage.evaluate(
        """async () => {
            const open = () => S.createIndexedDbSessionStore({ dbName: 'replay-convo' });
            const store = S.createResilientSessionStore(open(), { reopen: open, retryAfterMs: 0 });
            for (const sid of ['a', 'b', 'c']) await store.commitTurn(turn(sid, 1));
            const transaction = IDBDatabase.prototype.transaction;
            IDBDatabase.prototype.transaction = () => {
                throw new DOMException('injected', 'UnknownError');
            };
            await store.renameSession('a', 'Named while degraded');
            await store.clearSession('b');
            await store.commitTurn(turn('b', 2));
            await store.deleteSession('c');
            const degraded = [store.status().degraded, store.status().unsyncedWrites,
                              (await store.listSessions()).map((s) => s.sessionId)];
            IDBDatabase.prototype.transaction = transaction;
            await store.sessionInfo('a');
            const fresh = open();
            return { degraded, after: store.status().degraded,
                     listed: await fresh.listSessions(), b: checkWhole(await fresh.loadSession('b')) };
        }"""
    )
    assert result["degraded"] == [True, 4, ["a", "b"]]
    assert result["after"] is False
    assert [(s["sessionId"], s["turnCount"], s["title"]) for s in result["listed"]] == [
        ("a", 1, "Named while degraded"),
        ("b", 1, None),
    ]
    assert result["b"] == ["b-t2"]


def _random_commits(seed: int, count: int) -> list[Any]:
    from agrun.storage import TurnCommit

    rng = random.Random(seed)

    def small() -> dict[str, int]:
        return {k: rng.randint(0, 9) for k in rng.sample(["a", "b", "text"], rng.randint(0, 2))}

    def maybe() -> dict[str, int] | None:
        return None if rng.random() < 0.4 else small()

    return [
        TurnCommit(
            session_id=rng.choice(["s1", "s2"]),
            turn_id=f"t{rng.randint(1, count // 2)}",
            committed_at_ms=None if rng.random() < 0.3 else rng.randint(0, 10**6),
            messages=[small() for _ in range(rng.randint(0, 3))],
            events=[small() for _ in range(rng.randint(0, 2))],
            memory_entries=[small() for _ in range(rng.randint(0, 1))],
            session_memory=maybe(),
            inquiry=maybe(),
            content_entries=[
                {**content_entry(rng.choice(["r1", "r2", "r3"])), "body": small()}
                for _ in range(rng.randint(0, 2))
            ],
            evicted_content_refs=rng.sample(["r1", "r2", "r3"], rng.randint(0, 2)),
            last_run=maybe(),
            global_memory=[small() for _ in range(rng.randint(0, 2))],
        )
        for _ in range(count)
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_browser_stores_keep_the_same_history_as_python(spage: Page, seed: int) -> None:
    import asyncio
    import concurrent.futures

    from agrun.storage import MemoryStorage

    commits = _random_commits(seed, 40)

    async def python_side() -> dict[str, Any]:
        store = MemoryStorage()
        seqs = [await store.commit_turn(c) for c in commits]
        return {
            "seqs": seqs,
            "exports": [await store.export_session(s) for s in ("s1", "s2")],
            "listed": [s.to_wire() for s in await store.list_sessions()],
            "global": await store.read_global_memory(),
            "state": (await store.read_runtime_state()).to_wire(),
        }

    # Playwright's sync API owns this thread's event loop: run the Python store on another.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        expected = pool.submit(asyncio.run, python_side()).result()
    for factory in ("createIndexedDbSessionStore", "createMemorySessionStore"):
        actual = spage.evaluate(
            """async ([factory, commits]) => {
                const store = S[factory]({ dbName: `same-${Math.random()}` });
                const seqs = [];
                for (const c of commits) seqs.push(await store.commitTurn(c));
                const exports = [];
                for (const s of ['s1', 's2']) exports.push(await store.exportSession(s));
                return {
                    seqs, exports, listed: await store.listSessions(),
                    global: await store.readGlobalMemory(), state: await store.readRuntimeState(),
                };
            }""",
            [factory, [c.to_wire() for c in commits]],
        )
        assert actual == expected, factory
