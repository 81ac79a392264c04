"""The runtime: the one object a host creates (`create_runtime`) and calls ``run()`` on.

It holds what lives across runs (the skill registry, the memory log, the last-run
summary, the event bus) and hands each run to a `RunDriver`.

Concurrency: runs are serialized. ``run()`` takes an ``asyncio.Lock`` for the whole run,
so two calls at once never interleave their state changes; the second waits for the
first, and since the lock is first-come first-served, the results, ids and events are
the same as if the calls had been made one after the other.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import Any

from ._bus import EventBus, Subscriber
from ._cancel import CancelToken
from ._errors import ConfigError, InputError
from ._json import is_positive_number
from ._memory import MemoryLog, MemoryView
from ._models import LastRun, RunState, RuntimeState
from ._oodae import RunDriver, RunSettings
from ._ports import Clock, Ids
from ._result import RunResult
from ._session import SessionKeeper
from ._skills import SkillRegistry
from .adapters.system import SystemClock, UuidIds
from .context import (
    ContextPack,
    ContextRequest,
    Message,
    Tokenizer,
    build_context,
    default_tokenizer,
)
from .storage import GlobalMemoryGate, Storage

__all__ = ["DEFAULT_MAX_CYCLES", "DEFAULT_SKILL_TIMEOUT_S", "Runtime", "create_runtime"]

DEFAULT_MAX_CYCLES = 8
DEFAULT_SKILL_TIMEOUT_S = 60.0

# The runtime whose run this code is part of; a skill's task inherits it, so a skill that
# calls run() on its own runtime is caught instead of waiting on its own lock.
_running: ContextVar[Runtime | None] = ContextVar("agrun_running", default=None)


class Runtime:
    """Runs skills for a host and keeps their memory. Create it with `create_runtime`."""

    def __init__(
        self,
        *,
        clock: Clock,
        ids: Ids,
        registry: SkillRegistry,
        settings: RunSettings,
        tokenizer: Tokenizer,
        session: Callable[[MemoryLog, EventBus], SessionKeeper | None] | None = None,
    ) -> None:
        self._clock = clock
        self._tokenizer = tokenizer
        self._ids = ids
        self._registry = registry
        self._settings = settings
        self._bus = EventBus(clock)
        self._memory = MemoryLog()
        self._session = None if session is None else session(self._memory, self._bus)
        self._state = RuntimeState()
        self._lock = asyncio.Lock()
        self._current: RunDriver | None = None

    @property
    def state(self) -> RuntimeState:
        """What the runtime keeps between runs: ``last_run``, a small summary."""
        return self._state

    @property
    def current_run(self) -> RunState | None:
        """The state of the run in progress, or None between runs."""
        return self._current.state if self._current else None

    @property
    def memory(self) -> MemoryView:
        """The runtime's append-only memory, read-only: ``runtime.memory.read_all()``."""
        return MemoryView(self._memory)

    @property
    def skill_names(self) -> tuple[str, ...]:
        """Registered skill names, in registration order."""
        return self._registry.names

    @property
    def default_skill(self) -> str:
        """The name of the skill chosen when none is named and no matcher applies."""
        return self._registry.default

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(event)`` for every event from now on; returns an unsubscribe function.

        Callbacks are synchronous and called in order as events happen; one that raises
        is logged and skipped.
        """
        return self._bus.subscribe(callback)

    def build_context(
        self, request: ContextRequest | Mapping[str, Any], **options: Any
    ) -> ContextPack:
        """Build a token-budgeted context pack (see `agrun.context.build_context`).

        The runtime's clock times the build, its tokenizer counts (one instance across
        builds, so unchanged text is not counted twice), and the build's events go to the
        runtime's subscribers like every other event.

        Raises:
            ContextBuildingFailed: the protected minimum does not fit the budget.
            ConfigError: the request is malformed.
        """
        return build_context(
            request,
            tokenizer=options.pop("tokenizer", self._tokenizer),
            clock=self._clock,
            emit=self._bus.publish,
            **options,
        )

    async def run(
        self, input: str, *, skill: str | None = None, signal: CancelToken | None = None
    ) -> RunResult:
        """Run one turn: select a skill, go through OODAE cycles, derive, remember.

        Args:
            input: the text to act on.
            skill: run this skill instead of selecting one.
            signal: a `CancelToken`; cancelling it ends the run ``cancelled`` and this
                call still returns its result.

        Returns:
            The result. A skill that fails (raises, times out, returns output that cannot
            cross into JavaScript, loops past ``max_cycles``) gives a result with status
            ``failed`` and a typed ``error``; it is not raised.

        Raises:
            InputError: ``input`` is not a string.
            UnknownSkillError: ``skill`` names no registered skill.
            ConfigError: ``skill`` or ``signal`` has the wrong type, or a skill of this
                runtime called ``run()`` on it.
            asyncio.CancelledError: the calling task was cancelled. The run is closed as
                ``cancelled`` (``state.last_run`` says so, nothing was kept) first.
        """
        if not isinstance(input, str):
            raise InputError(f"run() takes a string input, got {type(input).__name__}: pass text")
        if skill is not None:
            if not isinstance(skill, str):
                raise ConfigError(f"skill must be a skill name (str), got {type(skill).__name__}")
            self._registry.get(skill)
        if signal is not None and not isinstance(signal, CancelToken):
            raise ConfigError(f"signal must be an agrun.CancelToken, got {type(signal).__name__}")
        if _running.get() is self:
            raise ConfigError(
                "run() was called from inside a skill of the same runtime, which would wait "
                "for its own run to end; return output or use helpers.request_cycle() instead"
            )
        async with self._lock:
            await self._sync_session()
            driver = RunDriver(
                run_id=self._ids.new_id("run"),
                input=input,
                requested_skill=skill,
                registry=self._registry,
                memory=self._memory,
                ids=self._ids,
                bus=self._bus,
                settings=self._settings,
                token=signal or CancelToken(),
            )
            self._current = driver
            marker = _running.set(self)
            before = len(self._memory)
            try:
                result = await driver.drive()
            except asyncio.CancelledError:
                # The run is closed as cancelled; its turn (events, lastRun) is still kept.
                if driver.cancelled_result is not None:
                    await self._record(input, driver.cancelled_result, before)
                raise
            finally:
                _running.reset(marker)
                self._current = None
                if driver.last_run is not None:
                    self._state = RuntimeState(last_run=driver.last_run)
            await self._record(input, result, before)
            return result

    async def _record(self, input: str, result: RunResult, memory_before: int) -> None:
        if self._session is not None:
            appended = self._memory.read_all()[memory_before:]
            await self._session.record(
                input, result, appended, result_last_run(result), self._clock.now_ms()
            )

    async def open(self) -> None:
        """Resume the session from storage now, rather than at the first run.

        With no storage this does nothing. A storage fault is not raised: the runtime
        goes on with what it holds, and `storage_status` says what failed.
        """
        async with self._lock:
            await self._sync_session()

    async def _sync_session(self) -> None:
        if self._session is not None:
            resumed = await self._session.sync()
            if resumed is not None:
                self._state = resumed

    @property
    def history(self) -> tuple[Message, ...]:
        """The session's messages (the person's and the replies), oldest first."""
        return self._session.history if self._session is not None else ()

    @property
    def global_memory(self) -> tuple[dict[str, Any], ...]:
        """Global memory as read at the last turn start; empty when it is disabled."""
        return self._session.global_memory if self._session is not None else ()

    async def export_session(self) -> str:
        """This runtime's session as JSON text, to move it to another store or a browser.

        Raises:
            ConfigError: the runtime has no storage.
            SessionNotFound: nothing has been committed yet.
        """
        return await self._keeper("export_session").export()

    async def import_session(self, json_text: str | bytes, *, replace: bool = False) -> None:
        """Store an exported session as this runtime's session and resume from it.

        Raises:
            ConfigError: the runtime has no storage.
            ImportRejected: the file is corrupt, hostile, for another session id, or the
                session exists and ``replace`` is False; nothing changed.
        """
        keeper = self._keeper("import_session")
        async with self._lock:
            await keeper.import_(json_text, replace=replace)
            await self._sync_session()

    def _keeper(self, method: str) -> SessionKeeper:
        if self._session is None:
            raise ConfigError(f"{method}() needs a runtime created with storage=...")
        return self._session

    def storage_status(self) -> dict[str, Any]:
        """Whether turns are reaching storage: ``{persistent, sessionId, pending, lastError}``."""
        session = self._session
        if session is None:
            return {"persistent": False, "sessionId": None, "pending": 0, "lastError": None}
        return {
            "persistent": True,
            "sessionId": session.session_id,
            "pending": session.pending,
            "lastError": session.last_error,
        }


def create_runtime(
    *,
    clock: Clock | None = None,
    ids: Ids | None = None,
    skills: Iterable[Any] = (),
    default_skill: Any = None,
    max_cycles: int = DEFAULT_MAX_CYCLES,
    skill_timeout_s: float | None = DEFAULT_SKILL_TIMEOUT_S,
    remember_observations: bool = True,
    on_event: Subscriber | None = None,
    tokenizer: Tokenizer | None = None,
    storage: Storage | str | os.PathLike[str] | None = None,
    session_id: str = "default",
    global_memory: bool = True,
) -> Runtime:
    """Create a runtime.

    Args:
        clock: where time comes from; the system clock if None.
        ids: where ids come from; random UUIDs if None.
        skills: the skills to register, in the order matchers are tried.
        default_skill: the skill (or a registered skill's name) used when none is named
            and no matcher applies; the built-in ``echo`` skill if None.
        max_cycles: how many OODAE cycles one run may take (a positive int).
        skill_timeout_s: seconds a skill's run may take (a skill's own ``timeout_s``
            wins); None for no limit.
        remember_observations: append each successful run's final observation to memory.
        on_event: a subscriber for every event (see `Runtime.subscribe`).
        storage: where the session persists: a `Storage`, or a file path for SQLite (the
            CPython default store); None keeps everything in memory only.
        session_id: which stored session this runtime resumes and extends.
        global_memory: False: global memory is neither read at turn start nor written;
            rows already stored stay, and come back when it is True again.
        tokenizer: counts tokens for context packs; agrun's estimator if None (it errs
            high, so budgets hold under real BPE counts; see docs/context.md).

    Raises:
        ConfigError: an option has the wrong type or value; the message names it.
        DuplicateSkillError: two skills share a name.
    """
    clock = SystemClock() if clock is None else clock
    ids = UuidIds() if ids is None else ids
    if not isinstance(clock, Clock):
        raise ConfigError(f"clock must have now_ms() -> int, got {type(clock).__name__}")
    if not isinstance(ids, Ids):
        raise ConfigError(f"ids must have new_id(prefix) -> str, got {type(ids).__name__}")
    if not isinstance(max_cycles, int) or isinstance(max_cycles, bool) or max_cycles < 1:
        raise ConfigError(f"max_cycles must be a positive int, got {max_cycles!r}")
    if skill_timeout_s is not None and not is_positive_number(skill_timeout_s):
        raise ConfigError(f"skill_timeout_s must be a positive number or None: {skill_timeout_s!r}")
    if not isinstance(remember_observations, bool):
        raise ConfigError(f"remember_observations must be a bool, got {remember_observations!r}")
    if on_event is not None and not callable(on_event):
        raise ConfigError(f"on_event must be callable or None, got {type(on_event).__name__}")
    if tokenizer is not None and not isinstance(tokenizer, Tokenizer):
        raise ConfigError(f"tokenizer must have count(text) -> int, got {type(tokenizer).__name__}")
    if not isinstance(session_id, str) or not session_id.strip():
        raise ConfigError(f"session_id must be a non-empty string, got {session_id!r}")
    if not isinstance(global_memory, bool):
        raise ConfigError(f"global_memory must be a bool, got {global_memory!r}")
    store = _open_storage(storage)
    settings = RunSettings(
        max_cycles=max_cycles,
        skill_timeout_s=None if skill_timeout_s is None else float(skill_timeout_s),
        remember_observations=remember_observations,
    )
    registry = SkillRegistry(skills, default_skill)
    runtime = Runtime(
        clock=clock,
        ids=ids,
        registry=registry,
        settings=settings,
        tokenizer=default_tokenizer() if tokenizer is None else tokenizer,
        session=None
        if store is None
        else lambda memory, bus: SessionKeeper(
            storage=GlobalMemoryGate(store, enabled=global_memory),
            session_id=session_id,
            memory=memory,
            bus=bus,
            read_global_memory=global_memory,
        ),
    )
    if on_event is not None:
        runtime.subscribe(on_event)
    return runtime


def _open_storage(storage: Storage | str | os.PathLike[str] | None) -> Storage | None:
    if storage is None:
        return None
    if isinstance(storage, (str, os.PathLike)):
        # Imported here: SQLite is CPython's default store and Pyodide may lack sqlite3.
        from .adapters.sqlite import SqliteStorage

        return SqliteStorage(storage)
    for method in ("commit_turn", "load_session", "list_sessions", "read_global_memory"):
        if not callable(getattr(storage, method, None)):
            raise ConfigError(
                f"storage must be a Storage (it has no {method}()) or a SQLite file path, "
                f"got {type(storage).__name__}"
            )
    return storage


def result_last_run(result: RunResult) -> LastRun | None:
    """The last-run summary a run's closing event carries (RunFinished, RunFailed...)."""
    return getattr(result.events[-1], "summary", None) if result.events else None
