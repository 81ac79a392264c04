"""What web/agrun.js calls: a runtime whose every answer crosses into JavaScript as JSON.

JSON text is the only thing that crosses, in both directions, so no Python proxy leaks
into a page and the page's objects are never changed by Python. Errors cross as data
(``{"ok": false, "error": {...}}``) and the JS side rebuilds them as typed errors. The page's
host object (skills, event callback) is the one JS object this side keeps; `close` lets go.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Sequence
from typing import Any

from pyodide.ffi import JsProxy

from ..._base import ConfigError
from ...kernel import (
    CancelToken,
    Runtime,
    RuntimeConfig,
    assemble_runtime,
    page_options,
)
from ...storage import ImportRejected
from ...trace import replay_provider
from ..environment import default_clock, default_ids, default_sync_transport
from ._proxies import lent_proxies, live_proxies
from ._wire import error_json, ok_json
from .hooks import JsCompressor, JsRanker, JsRedactor, JsTokenizer
from .packages import python_skills
from .provider import JsProvider
from .skills import js_skills
from .storage import JsSessionStorage

__all__ = ["RuntimeBridge", "create_bridge"]


_WHAT_IF = {"budget", "window", "call", "tokenizer", "ranker"}


class RuntimeBridge:
    """A `Runtime` seen from JavaScript: JSON in, JSON out."""

    def __init__(self, runtime: Runtime, host: JsProxy) -> None:
        self._runtime = runtime
        self._host = host

    async def run(self, input: str, options_json: str, signal: JsProxy | None = None) -> str:
        """Run one turn; ``signal`` is the page's AbortSignal, if it gave one. With
        ``{"onToken": true}`` each piece of a model's reply goes to ``host.token(text)``."""
        token = CancelToken()
        try:
            options = json.loads(options_json)
            run_options: dict[str, Any] = {
                "skill": options.get("skill"),
                "signal": token,
                "usage_limits": options.get("usageLimits"),
                "output_schema": options.get("outputSchema"),
            }
            if options.get("onToken"):
                run_options["on_token"] = self._host.token
            # rt.stream() wants this run's events whether or not the page has an onEvent.
            unsubscribe = (
                self._runtime.subscribe(
                    lambda event: self._host.runEvent(json.dumps(event.to_wire()))
                )
                if options.get("events")
                else None
            )
            try:
                result = await self._run(input, run_options, token, signal)
            finally:
                if unsubscribe is not None:
                    unsubscribe()
        except Exception as error:
            return error_json(error)
        return ok_json(result.to_wire())

    async def _run(
        self, input: str, options: dict[str, Any], token: CancelToken, signal: JsProxy | None
    ) -> Any:
        if signal is None:
            return await self._runtime.run(input, **options)
        with lent_proxies(lambda _event: token.cancel(_reason(signal))) as (on_abort,):
            if signal.aborted:
                token.cancel(_reason(signal))
            signal.addEventListener("abort", on_abort)
            try:
                return await self._runtime.run(input, **options)
            finally:
                signal.removeEventListener("abort", on_abort)

    def closing(self) -> bool:
        """Whether the last turn's memory close still runs after its answer (see `idle`)."""
        return self._runtime.closing

    async def idle(self) -> str:
        """Wait for what the last turn goes on with after its answer (the memory close)."""
        try:
            await self._runtime.idle()
        except Exception as error:
            return error_json(error)
        return ok_json(None)

    def build_context(self, request_json: str) -> str:
        """Build a context pack from a camelCase request; the pack, camelCase, as JSON."""
        try:
            pack = self._runtime.build_context(json.loads(request_json))
        except Exception as error:
            return error_json(error)
        return ok_json(pack.to_wire())

    async def open(self) -> str:
        """Resume the session from the page's store (history, memory, lastRun)."""
        try:
            await self._runtime.open()
        except Exception as error:
            return error_json(error)
        return ok_json(None)

    async def export_session(self) -> str:
        """The session's export file, as the JSON text of a reply."""
        try:
            return ok_json(await self._runtime.export_session())
        except Exception as error:
            return error_json(error)

    async def import_session(self, json_text: str, replace: bool) -> str:
        """Store an exported session as this runtime's session and resume from it."""
        try:
            await self._runtime.import_session(json_text, replace=replace)
        except Exception as error:
            return error_json(error)
        return ok_json(None)

    async def sync(self) -> str:
        """Sync the session with its server: ``{pushed, pulled, token}`` as a reply."""
        try:
            return ok_json((await self._runtime.sync()).to_wire())
        except Exception as error:
            return error_json(error)

    async def list_sessions(self) -> str:
        """The store's conversations (id, turn count, last commit time, title) as JSON."""
        try:
            return ok_json([info.to_wire() for info in await self._runtime.list_sessions()])
        except Exception as error:
            return error_json(error)

    async def rename_session(self, session_id: str, title: str | None) -> str:
        """Store a title with a session (None removes it)."""
        return await _done(self._runtime.rename_session(session_id, title))

    async def clear_session(self, session_id: str) -> str:
        """Empty a session, keeping its id and title."""
        return await _done(self._runtime.clear_session(session_id))

    async def delete_session(self, session_id: str) -> str:
        """Remove a session entirely."""
        return await _done(self._runtime.delete_session(session_id))

    def history(self, start: int = 0) -> str:
        """The session's messages from position ``start`` on, oldest first, as JSON."""
        return ok_json([message.to_wire() for message in self._runtime.history[start:]])

    def storage_status(self) -> str:
        """Whether turns reach storage: ``{persistent, sessionId, pending, lastError}``."""
        return ok_json(self._storage_status())

    def _storage_status(self) -> dict[str, Any]:
        return self._runtime.storage_status()

    def state(self) -> str:
        """The runtime's own state (``lastRun``) as JSON."""
        return ok_json(self._state())

    def _state(self) -> dict[str, Any]:
        return self._runtime.state.to_wire()

    def memory(self, start: int = 0) -> str:
        """The memory entries from position ``start`` on, oldest first, as JSON."""
        return ok_json([entry.to_wire() for entry in self._runtime.memory.read_all()[start:]])

    def mirror(self, known_json: str) -> str:
        """What a worker's page mirrors of this runtime, in one call: the worker asks for it
        after every queued operation, on the path to its answer, and one crossing costs
        less than one per view. ``known_json`` says what the mirror holds, in the page's
        operation names: ``{"appended": {name: held}, "content": [refs] | null, "whole":
        [names]}``.

        - Each list (``history``, ``memory``) answers ``{"from", "items"}``: what was
          appended since ``held`` (``{"length", "lastId"}`` of the mirror's list, or null),
          or everything from 0 when the mirror's list is no longer a prefix of it (an
          import, another tab's replace).
        - ``content`` answers ``{"live": [[ref, expiresAt]], "added": [entries whose ref is
          not in the list]}`` (left out for null).
        - Each ``whole`` view answers itself.
        """
        known = json.loads(known_json)
        lists = {"history": self._runtime.history, "memory": self._runtime.memory.read_all()}
        views: dict[str, Any] = {
            name: _appended(lists[name], held) for name, held in known["appended"].items()
        }
        if known["content"] is not None:
            views["content"] = self._content_mirror(set(known["content"]))
        whole = {
            "state": self._state,
            "lastPack": self._last_pack,
            "continuity": self._continuity,
            "storageStatus": self._storage_status,
            "diagnostics": self._diagnostics,
        }
        for name in known["whole"]:
            views[name] = whole[name]()
        return ok_json(views)

    def _content_mirror(self, known: set[str]) -> dict[str, Any]:
        entries = self._runtime.content_entries
        return {
            "live": [[entry.ref, entry.expires_at] for entry in entries],
            "added": [entry.to_wire() for entry in entries if entry.ref not in known],
        }

    def content(self, ref: str) -> str:
        """A stored body by its ref, as JSON (or the typed ``content_ref_not_found``)."""
        try:
            return ok_json(self._runtime.content(ref).to_wire())
        except Exception as error:
            return error_json(error)

    def last_pack(self) -> str:
        """The pack the last model call was sent, as JSON (null before any)."""
        return ok_json(self._last_pack())

    def _last_pack(self) -> dict[str, Any] | None:
        pack = self._runtime.last_pack
        return None if pack is None else pack.to_wire()

    def why(self, run_id: str) -> str:
        """Run ``run_id``'s trace as JSON (or the typed ``trace_not_found``)."""
        try:
            return ok_json(self._runtime.why(run_id).to_wire())
        except Exception as error:
            return error_json(error)

    def what_if(self, run_id: str, options_json: str) -> str:
        """A recorded call's pack rebuilt under ``{budget?, window?, call?, tokenizer?,
        ranker?}``, as the diff's JSON. ``tokenizer`` and ``ranker`` are true when the page
        gave ``rt.whatIf`` its own functions: the host holds them for this call
        (``whatIfCountTokens``, ``whatIfRank``)."""
        try:
            options = json.loads(options_json)
            if not isinstance(options, dict) or set(options) - _WHAT_IF:
                raise ConfigError(
                    "whatIf options are {budget?, window?, call?, tokenizer?, ranker?}, "
                    f"got {options_json}"
                )
            if options.pop("tokenizer", False):
                options["tokenizer"] = JsTokenizer(self._host, "whatIfCountTokens")
            if options.pop("ranker", False):
                options["ranker"] = JsRanker(self._host, "whatIfRank")
            return ok_json(self._runtime.what_if(run_id, **options).to_wire())
        except Exception as error:
            return error_json(error)

    def continuity(self) -> str:
        """The session memory, inquiry context and global memory, as JSON."""
        return ok_json(self._continuity())

    def _continuity(self) -> dict[str, Any]:
        runtime = self._runtime
        memory, inquiry = runtime.session_memory, runtime.inquiry
        return {
            "sessionMemory": None if memory is None else memory.to_wire(),
            "inquiry": None if inquiry is None else inquiry.to_wire(),
            "globalMemory": [entry.to_wire() for entry in runtime.global_memory],
        }

    async def promote_to_global_memory(self, entries_json: str) -> str:
        """Promote entries through the sensitive-content filter; what was kept and refused."""
        try:
            promotion = await self._runtime.promote_to_global_memory(json.loads(entries_json))
        except Exception as error:
            return error_json(error)
        return ok_json(promotion.to_wire())

    async def forget_global_memory(self, entry_id: str) -> str:
        """Forget a global-memory entry (a tombstone); whether it was there."""
        try:
            return ok_json(await self._runtime.forget_global_memory(entry_id))
        except Exception as error:
            return error_json(error)

    def diagnostics(self) -> str:
        """Counts a test can check: helper proxies still alive (0 between runs)."""
        return ok_json(self._diagnostics())

    def _diagnostics(self) -> dict[str, Any]:
        return {"liveProxies": live_proxies()}

    def close(self) -> None:
        """Let go of the runtime and, with it, the page's host object (a JsProxy is
        released by dropping the last reference to it)."""
        del self._runtime, self._host


def _reason(signal: JsProxy) -> str:
    reason = signal.reason
    message = getattr(reason, "message", None)
    return str(message or reason or "aborted by the page")


def create_bridge(config_json: str, host: JsProxy) -> RuntimeBridge | str:
    """Create a runtime for a page, or the JSON of the typed error that prevented it.

    Args:
        config_json: the page's plain-data options by their camelCase names (validated
            here by `RuntimeConfig`), and what this side wires for its functions:
            ``{"skills": [{name, description, hasApplies}], "pythonSkills":
            ["module:attribute"], "events", "countTokens", "sensitivityFilter", "ranker",
            "redactor": bool, "compressors": [data types], "provider", "embedder":
            {kind, ...}, "providerTimeoutMs", "storage": bool}`` (web/agrun.js).
        host: the page's host object (web/engine/host.js); kept until `RuntimeBridge.close`.

    Returns:
        The bridge; or, when an option is bad, ``{"ok": false, "error": ...}`` as JSON text
        (a ConfigError naming the option), so the page gets a typed error.
    """
    try:
        config: dict[str, Any] = json.loads(config_json)
        options = RuntimeConfig.from_page(
            {option.name: config[option.name] for option in _DATA if option.name in config},
            **_wired(config, host),
        )
        storage = JsSessionStorage(host.store) if config.get("storage") else None
        runtime = assemble_runtime(
            options,
            clock=default_clock(),
            ids=default_ids(),
            storage=storage,
            sync_transport=None if options.sync is None else default_sync_transport(),
        )
        return RuntimeBridge(runtime, host)
    except ConfigError as error:
        return error_json(error)


# The options a page gives as plain data: validated by the model as they are.
_DATA = [option for option in page_options() if not option.wired]


def _wired(config: dict[str, Any], host: JsProxy) -> dict[str, Any]:
    """The runtime's options that stand for the page's functions, by their Python names."""
    # The page's JS skills, then the Python skills its own wheels hold (packages.py).
    wired: dict[str, Any] = {
        "skills": [
            *js_skills(host, config.get("skills", [])),
            *python_skills(config.get("pythonSkills", [])),
        ]
    }
    if config.get("countTokens"):
        wired["tokenizer"] = JsTokenizer(host)
    if config.get("ranker"):
        wired["ranker"] = JsRanker(host)
    if config.get("compressors"):
        wired["compressors"] = {kind: JsCompressor(host, kind) for kind in config["compressors"]}
    if config.get("redactor"):
        wired["redactor"] = JsRedactor(host)
    if config.get("events"):
        wired["on_event"] = lambda event: host.emit(json.dumps(event.to_wire()))
    if config.get("sensitivityFilter"):
        wired["sensitivity_filter"] = lambda entry: json.loads(host.sensitivity(json.dumps(entry)))[
            "verdict"
        ]
    if config.get("embedder") is not None:
        wired["embedder"] = _embedder(config["embedder"], host)
    if config.get("provider") is not None:
        wired["provider"] = _provider(config["provider"], host, config.get("providerTimeoutMs"))
    return wired


def _provider(described: dict[str, Any], host: JsProxy, timeout_ms: Any) -> Any:
    """The provider a page asked for: its own function (with the whole-call deadline of
    ``providerTimeoutMs``), the test model (``testModel()``), a session export's recorded
    replies (``replayProvider(exportText)``), or an OpenAI-compatible server reached through
    the browser's fetch (the key, if any, stays in this object only)."""
    if described["kind"] == "replay":
        # A recorded session's replies: no model is called.
        try:
            return replay_provider(described["export"])
        except ImportRejected as error:
            raise ConfigError(f"replayProvider(exportText): {error}") from None
    if described["kind"] == "function":
        if timeout_ms is None:
            return JsProvider(host)
        return JsProvider(host, timeout_s=_seconds("providerTimeoutMs", timeout_ms))
    if described["kind"] == "test":
        from ..._testmodel import TestModel

        return TestModel(
            call_tools=described["callTools"],
            extraction=described["extraction"],
            **({"text": described["text"]} if "text" in described else {}),
        )
    return _openai(described)


def _embedder(described: dict[str, Any], host: JsProxy) -> Any:
    """The embedder a page asked for: its own function, or an OpenAI-compatible server's
    ``/embeddings`` reached through the browser's fetch."""
    if described["kind"] == "function":
        from .embedder import JsEmbedder

        return JsEmbedder(host)
    return _openai(described)


def _openai(described: dict[str, Any]) -> Any:
    from ..openai import OpenAIProvider
    from .fetch import FetchTransport

    return OpenAIProvider(
        described["baseUrl"],
        model=described.get("model"),
        api_key=described.get("apiKey"),
        transport=FetchTransport(),
        timeout_s=_seconds("timeoutMs", described.get("timeoutMs", 300_000)),
        idle_timeout_s=_seconds("idleTimeoutMs", described.get("idleTimeoutMs", 60_000)),
    )


def _seconds(name: str, milliseconds: Any) -> float:
    """A page's positive duration in milliseconds, in seconds."""
    if (
        not isinstance(milliseconds, (int, float))
        or isinstance(milliseconds, bool)
        or not milliseconds > 0
    ):
        raise ConfigError(f"{name} must be a positive number of milliseconds, got {milliseconds!r}")
    return milliseconds / 1000


async def _done(call: Awaitable[None]) -> str:
    """A reply for an operation that answers nothing: null, or its error."""
    try:
        await call
    except Exception as error:
        return error_json(error)
    return ok_json(None)


def _appended(items: Sequence[Any], held: dict[str, Any] | None) -> dict[str, Any]:
    """What a mirror holding ``held`` (``{length, lastId}`` of a prefix) has not seen of
    ``items`` (each with an ``id``): ``{"from", "items"}``, from 0 when it holds no prefix."""
    start = 0
    if held and held["length"] > 0:
        length = held["length"]
        if length <= len(items) and items[length - 1].id == held["lastId"]:
            start = length
    return {"from": start, "items": [item.to_wire() for item in items[start:]]}
