"""The Pyodide storage adapter, driven on CPython through stand-ins for ``js`` and
``pyodide.ffi``: a JS-like store (camelCase methods, JSON-shaped values, errors with a
``name``) backed by the in-memory store. The real thing runs in the browser e2e suite.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from agrun import ConfigError
from agrun.storage import (
    ImportRejected,
    MemoryStorage,
    SchemaTooNew,
    SessionNotFound,
    StorageDegraded,
    StorageError,
    StorageFatalError,
    StorageRetryableError,
    TurnCommit,
)

pytestmark = pytest.mark.cpython_only


class FakeJsException(Exception):
    """Like pyodide.ffi.JsException: a JS error's properties read as attributes."""

    def __init__(self, name: str, message: str, **props: Any) -> None:
        super().__init__(message)
        self.name = name
        self.message = message
        for key, value in props.items():
            setattr(self, key, value)


class FakeJSON:
    """JSON.parse makes a "JS value" (here: plain data); JSON.stringify turns it back to text.
    Keeps the texts Python handed to ``parse``."""

    parsed: list[str] = []  # noqa: RUF012 (a test's record, reset by the fixture)

    @staticmethod
    def parse(text: str) -> Any:
        FakeJSON.parsed.append(text)
        return json.loads(text)

    @staticmethod
    def stringify(value: Any) -> str:
        return json.dumps(value)


class JsLikeStore:
    """The shape of web/storage's stores, over the Python memory store."""

    def __init__(self) -> None:
        self.inner = MemoryStorage()
        self.fail_with: FakeJsException | None = None

    def _check(self) -> None:
        if self.fail_with is not None:
            raise self.fail_with

    async def commitTurn(self, commit: dict[str, Any]) -> int:
        self._check()
        return await self.inner.commit_turn(TurnCommit.model_validate(commit))

    async def loadSession(
        self, session_id: str, options: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        self._check()
        all_events = True if options is None else options["allEvents"]
        snap = await self.inner.load_session(session_id, all_events=all_events)
        return None if snap is None else snap.to_wire()

    async def listSessions(self) -> list[dict[str, Any]]:
        return [s.to_wire() for s in await self.inner.list_sessions()]

    async def sessionInfo(self, session_id: str) -> dict[str, Any] | None:
        info = await self.inner.session_info(session_id)
        return None if info is None else info.to_wire()

    async def readGlobalMemory(self) -> list[dict[str, Any]]:
        return await self.inner.read_global_memory()

    async def appendGlobalMemory(self, entries: list[dict[str, Any]]) -> None:
        await self.inner.append_global_memory(entries)

    async def readRuntimeState(self) -> dict[str, Any]:
        return (await self.inner.read_runtime_state()).to_wire()

    async def exportSession(self, session_id: str) -> str:
        return await self.inner.export_session(session_id)

    async def importSession(self, text: str, options: dict[str, Any]) -> str:
        return await self.inner.import_session(text, replace=options["replace"])

    async def renameSession(self, session_id: str, title: str | None) -> None:
        await self.inner.rename_session(session_id, title)

    async def clearSession(self, session_id: str) -> bool:
        return await self.inner.clear_session(session_id)

    async def deleteSession(self, session_id: str) -> bool:
        return await self.inner.delete_session(session_id)

    def status(self) -> dict[str, Any]:
        return {"degraded": False, "backend": "indexeddb", "reason": None, "method": None}

    async def close(self) -> None:
        await self.inner.close()


@pytest.fixture
def adapter_module(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    js = types.ModuleType("js")
    js.JSON = FakeJSON  # type: ignore[attr-defined]
    FakeJSON.parsed = []
    ffi = types.ModuleType("pyodide.ffi")
    ffi.JsException = FakeJsException  # type: ignore[attr-defined]
    pyodide = types.ModuleType("pyodide")
    pyodide.ffi = ffi  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "js", js)
    monkeypatch.setitem(sys.modules, "pyodide", pyodide)
    monkeypatch.setitem(sys.modules, "pyodide.ffi", ffi)
    monkeypatch.delitem(sys.modules, "agrun.adapters.pyodide.storage", raising=False)
    yield importlib.import_module("agrun.adapters.pyodide.storage")
    sys.modules.pop("agrun.adapters.pyodide.storage", None)


async def test_the_port_round_trips_through_json(adapter_module: types.ModuleType) -> None:
    store = adapter_module.JsSessionStorage(JsLikeStore())
    commit = TurnCommit(
        session_id="s",
        turn_id="t1",
        messages=[{"text": "hi"}],
        session_memory={"n": 1},
        content_entries=[
            {
                "ref": "r",
                "kind": "text",
                "body": "abc",
                "bytes": 5,
                "digest": "sha256:x",
                "runId": "r1",
                "createdAt": 1,
                "lastUsedAt": 1,
            }
        ],
        last_run={"runId": "r1"},
        global_memory=[{"g": 1}],
    )
    assert await store.commit_turn(commit) == 1
    snap = await store.load_session("s")
    assert snap is not None and snap.messages == [{"text": "hi"}]
    assert snap.session_memory == {"n": 1} and snap.last_run == {"runId": "r1"}
    assert await store.load_session("nobody") is None
    assert [s.session_id for s in await store.list_sessions()] == ["s"]
    await store.append_global_memory([{"g": 2}])
    assert await store.read_global_memory() == [{"g": 1}, {"g": 2}]
    assert (await store.read_runtime_state()).last_run == {"runId": "r1"}
    text = await store.export_session("s")
    assert await store.import_session(text.encode(), replace=True) == "s"
    assert store.status()["degraded"] is False
    await store.close()


async def test_titles_clear_and_delete_cross_into_javascript(
    adapter_module: types.ModuleType,
) -> None:
    storage = adapter_module.JsSessionStorage(JsLikeStore())
    await storage.commit_turn(TurnCommit(session_id="a", turn_id="t1", committed_at_ms=5))
    await storage.rename_session("a", "Café plans")
    [info] = await storage.list_sessions()
    assert (info.session_id, info.turn_count, info.title) == ("a", 1, "Café plans")
    assert await storage.clear_session("a") is True
    info = await storage.session_info("a")
    assert info is not None and (info.turn_count, info.title) == (0, "Café plans")
    assert await storage.delete_session("a") is True
    assert await storage.delete_session("a") is False
    assert await storage.list_sessions() == []


async def test_a_turn_start_reads_both_side_by_side(adapter_module: types.ModuleType) -> None:
    # The page's store answers a turn start's two reads side by side (ports.TurnStartReads):
    # the same rows and line the two reads give, and the store's error as the port's.
    js_store = JsLikeStore()
    storage = adapter_module.JsSessionStorage(js_store)
    assert await storage.read_turn_start("a") == ([], None)
    await storage.commit_turn(
        TurnCommit(session_id="a", turn_id="t1", committed_at_ms=5, global_memory=[{"g": 1}])
    )
    rows, info = await storage.read_turn_start("a")
    assert rows == await storage.read_global_memory() == [{"g": 1}]
    assert info == await storage.session_info("a") and info is not None
    assert (info.turn_count, info.last_committed_at_ms) == (1, 5)

    async def refused() -> list[dict[str, Any]]:
        raise FakeJsException("StorageDegraded", "IndexedDB is gone")

    answered: list[str] = []
    session_info = js_store.sessionInfo

    async def heard(session_id: str) -> dict[str, Any] | None:
        answered.append(session_id)
        return await session_info(session_id)

    js_store.readGlobalMemory = refused  # type: ignore[method-assign]
    js_store.sessionInfo = heard  # type: ignore[method-assign]
    with pytest.raises(StorageDegraded, match="IndexedDB is gone"):
        await storage.read_turn_start("a")
    # The other read was started with it, and awaited too: no rejection is left unheard.
    assert answered == ["a"]

    def thrown() -> Any:
        raise FakeJsException("InvalidStateError", "the connection is closing")

    js_store.readGlobalMemory = thrown  # type: ignore[method-assign]
    with pytest.raises(StorageError, match="the connection is closing"):
        await storage.read_turn_start("a")
    assert answered == ["a", "a"]


async def test_what_crosses_into_javascript_is_ascii_text(
    adapter_module: types.ModuleType,
) -> None:
    # Pyodide converts a non-ASCII Python string character by character (issue 20.8: most
    # of a 10 MB input's commit); escaped, the same record crosses in one copy.
    store = adapter_module.JsSessionStorage(JsLikeStore())
    said = "héllo … 日本 \U0001f600"
    commit = TurnCommit(session_id="s", turn_id="t1", messages=[{"text": said}])
    assert await store.commit_turn(commit) == 1
    assert FakeJSON.parsed and all(text.isascii() for text in FakeJSON.parsed)
    snap = await store.load_session("s")
    assert snap is not None and snap.messages == [{"text": said}]


async def test_a_non_json_payload_is_the_callers_error(adapter_module: types.ModuleType) -> None:
    store = adapter_module.JsSessionStorage(JsLikeStore())
    with pytest.raises(ConfigError):
        await store.commit_turn(TurnCommit(session_id="s", turn_id="t", events=[{"x": {1}}]))


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (FakeJsException("QuotaExceededError", "full"), StorageFatalError),
        (FakeJsException("InvalidStateError", "closed"), StorageFatalError),
        (FakeJsException("StorageOpenError", "cannot open", fatal=True), StorageFatalError),
        (FakeJsException("SchemaTooNew", "newer", found=9, known=2), SchemaTooNew),
        (FakeJsException("AbortError", "aborted"), StorageRetryableError),
        (FakeJsException("ConstraintError", "dup"), StorageRetryableError),
        (FakeJsException("ImportRejected", "bad file"), ImportRejected),
        (FakeJsException("SessionNotFound", "none", sessionId="x"), SessionNotFound),
        (FakeJsException("StorageDegraded", "on memory"), StorageDegraded),
        (FakeJsException("AgrunConfigError", "bad commit"), ConfigError),
        (FakeJsException("TypeError", "oops"), StorageError),
    ],
)
async def test_js_errors_become_the_ports_errors(
    adapter_module: types.ModuleType, error: FakeJsException, expected: type[Exception]
) -> None:
    js_store = JsLikeStore()
    js_store.fail_with = error
    store = adapter_module.JsSessionStorage(js_store)
    with pytest.raises(expected) as caught:
        await store.load_session("s")
    if expected is SchemaTooNew:
        assert caught.value.found == 9 and caught.value.known == 2  # type: ignore[attr-defined]
