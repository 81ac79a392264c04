"""The `Storage` port over the page's JavaScript session store (``web/storage/``).

Only JSON text crosses the boundary: a record goes out as ``JSON.parse(json.dumps(...))``
and comes back through ``JSON.stringify``, so no PyProxy is ever created (none to destroy)
and no JavaScript object outlives the call on the Python side. The JS store's errors are
rebuilt as the port's `StorageError` types by their ``name``.

``JSON`` is looked up at each call (`_json`), never held by the module: boot.js imports this
module before it makes its memory snapshot, while Python's ``js`` is the proxy Pyodide records
paths through, and an object taken from it then stays behind that proxy for the life of the
page (on a first visit, a turn start's read took 2.0 ms through it against 1.3 ms).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pyodide.ffi import JsException

from ..._base import ConfigError
from ...storage._errors import (
    FATAL_ERROR_NAMES,
    RETRYABLE_ERROR_NAMES,
    ImportRejected,
    SchemaTooNew,
    SessionNotFound,
    StorageDegraded,
    StorageError,
    StorageFatalError,
    StorageRetryableError,
)
from ...storage._records import (
    JsonObject,
    RuntimeStateRecord,
    SessionInfo,
    SessionSnapshot,
    TurnCommit,
)
from ...storage._transfer import encode_commit, encode_json, read_snapshot

__all__ = ["JsSessionStorage", "storage_error_from_js"]


def storage_error_from_js(error: Any) -> Exception:
    """The port's error for a JS error (a `JsException`, or anything with name/message)."""
    name = str(getattr(error, "name", None) or "Error")
    message = str(getattr(error, "message", None) or error)
    match name:
        case "ImportRejected":
            return ImportRejected(message)
        case "SchemaTooNew":
            return SchemaTooNew(
                int(getattr(error, "found", 0) or 0),
                int(getattr(error, "known", 0) or 0),
                where="IndexedDB database",
            )
        case "SessionNotFound":
            return SessionNotFound(str(getattr(error, "sessionId", "")))
        case "StorageDegraded":
            return StorageDegraded(message)
        case "AgrunConfigError":
            return ConfigError(message)
    if getattr(error, "fatal", False) is True or name in FATAL_ERROR_NAMES:
        return StorageFatalError(f"the browser's session store failed: {name}: {message}")
    if name in RETRYABLE_ERROR_NAMES:
        return StorageRetryableError(f"the browser's session store refused once: {name}: {message}")
    return StorageError(f"the browser's session store failed: {name}: {message}")


def _json() -> Any:
    """The page's ``JSON`` as it is now (see the module's docstring)."""
    from js import JSON

    return JSON


def _to_js(value: Any) -> Any:
    # Pyodide copies an ASCII string into JavaScript at once, but converts one holding any
    # other character (an "é", the "…" of a step) character by character: 1.6 s for 10 MB
    # in Chromium, most of a big input's commit. Escaped JSON is always ASCII.
    return _json().parse(encode_json(value, ascii_only=True))


def _started(call: Callable[[], Any]) -> Callable[[], Any]:
    """``call()`` made now, as `JsSessionStorage._answer` takes it: its promise, or the
    error it threw, raised again when asked for."""
    try:
        promise = call()
    except JsException as error:
        thrown = error

        def throw_again() -> Any:
            raise thrown

        return throw_again
    return lambda: promise


class JsSessionStorage:
    """`Storage` backed by a JS store from ``createSessionStore()`` (borrowed, not owned)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    async def _call(self, method: str, *args: Any) -> Any:
        return await self._answer(lambda: getattr(self._store, method)(*args))

    async def _answer(self, call: Callable[[], Any]) -> Any:
        """What the store's promise ``call()`` resolves to, as plain Python data."""
        try:
            result = await call()
        except JsException as error:
            raise storage_error_from_js(error) from None
        text = _json().stringify(result) if result is not None else None
        return None if text is None else json.loads(text)

    async def read_turn_start(self, session_id: str) -> tuple[list[JsonObject], SessionInfo | None]:
        # On the path to every turn. Both reads start at once, so the store answers them side
        # by side, and each is awaited in turn: in the page every await of a promise is a task
        # hop, and two awaits of started reads cost less than one of Promise.all (0.9 against
        # 1.3 ms in Chromium). The second is awaited even when the first failed, so no
        # rejection is left unheard.
        store = self._store
        reads = [_started(store.readGlobalMemory), _started(lambda: store.sessionInfo(session_id))]
        answers: list[Any] = []
        failure: Exception | None = None
        for read in reads:
            try:
                answers.append(await self._answer(read))
            except Exception as error:
                failure = failure or error
        if failure is not None:
            raise failure
        rows, row = answers
        return list(rows), None if row is None else SessionInfo.model_validate(row)

    async def commit_turn(self, commit: TurnCommit) -> int:
        # The commit's fields checked and encoded as they are (no model_dump copy first).
        committed = _json().parse(encode_commit(commit, ascii_only=True))
        return int(await self._call("commitTurn", committed))

    async def load_session(
        self, session_id: str, *, all_events: bool = True
    ) -> SessionSnapshot | None:
        data = await self._call("loadSession", session_id, _to_js({"allEvents": all_events}))
        if data is None:
            return None
        if not isinstance(data, dict):
            return read_snapshot({}, session_id).model_copy(
                update={"damage": (f"the store returned {type(data).__name__}, not a session",)}
            )
        return read_snapshot(data, session_id)

    async def list_sessions(self) -> list[SessionInfo]:
        return [SessionInfo.model_validate(row) for row in await self._call("listSessions")]

    async def session_info(self, session_id: str) -> SessionInfo | None:
        row = await self._call("sessionInfo", session_id)
        return None if row is None else SessionInfo.model_validate(row)

    async def rename_session(self, session_id: str, title: str | None) -> None:
        await self._call("renameSession", session_id, title)

    async def clear_session(self, session_id: str) -> bool:
        return bool(await self._call("clearSession", session_id))

    async def delete_session(self, session_id: str) -> bool:
        return bool(await self._call("deleteSession", session_id))

    async def read_global_memory(self) -> list[JsonObject]:
        return list(await self._call("readGlobalMemory"))

    async def append_global_memory(self, entries: Sequence[JsonObject]) -> None:
        await self._call("appendGlobalMemory", _to_js(list(entries)))

    async def read_runtime_state(self) -> RuntimeStateRecord:
        return RuntimeStateRecord.model_validate(await self._call("readRuntimeState"))

    async def export_session(self, session_id: str) -> str:
        return str(await self._call("exportSession", session_id))

    async def import_session(self, json_text: str | bytes, *, replace: bool = False) -> str:
        if isinstance(json_text, bytes | bytearray):
            try:
                json_text = bytes(json_text).decode("utf-8")
            except UnicodeDecodeError as error:
                raise ImportRejected(f"export file is not UTF-8: {error}") from None
        return str(await self._call("importSession", json_text, _to_js({"replace": replace})))

    def status(self) -> dict[str, Any]:
        """The JS store's ``status()`` ({degraded, backend, reason, method}), if it has one."""
        status = getattr(self._store, "status", None)
        if status is None:
            return {"degraded": False, "backend": "unknown", "reason": None, "method": None}
        read: dict[str, Any] = json.loads(_json().stringify(status()))
        return read

    async def close(self) -> None:
        await self._call("close")
