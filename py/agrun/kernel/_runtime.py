"""The runtime: the one object a host creates (`create_runtime`) and calls ``run()`` on.

It holds what lives across runs (the skill registry, the memory log, the last-run
summary, the event bus) and hands each run to a `RunDriver`.

Concurrency: runs are serialized. ``run()`` takes the turn lock (`TurnLock`: an
``asyncio.Lock``, joined by the store's lock on the session when the store is shared by
processes) for the whole run, so two calls at once never interleave their state changes; the
second waits for the first, and since the lock is first-come first-served, the results, ids
and events are the same as if the calls had been made one after the other.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any

from pydantic import BaseModel

from .._base import ConfigError, InputError, ReentrantCallError
from .._base._cancel import CancelToken
from ..chat import Usage
from ..content import (
    ContentAdvert,
    ContentEntry,
    ContentReader,
    ContentRefNotFound,
    ContentStore,
    compact_reads,
)
from ..context import (
    ContextPack,
    ContextRequest,
    Message,
    TokenCalibration,
    Tokenizer,
    build_context,
)
from ..memory import (
    Continuity,
    ExtractionCall,
    GlobalEntry,
    GlobalKind,
    InquiryContext,
    InquiryNotes,
    MemoryView,
    Promotion,
    SessionMemory,
    SimilarTurns,
    TurnClose,
    TurnStart,
)
from ..ports import Clock, Ids, Ranker, Redactor, SessionLocks
from ..storage import SessionInfo, TurnCommit
from ..trace import (
    RunTrace,
    TraceNotFound,
    WhatIf,
    extraction_trace,
    pack_diff,
    recorded_request,
    with_budget,
)
from ._bus import EventBus, Subscriber
from ._conversations import check_session_id, check_title, empty_session, name_session
from ._driver import RunDriver, RunInputs, RunSettings
from ._events import MAX_REPORTED, ContentRetrieved, SessionDamaged
from ._function_tools import ToolMaker
from ._keeper import SessionKeeper, TurnLock
from ._limits import UsageLimits
from ._model_run import ModelRun, ModelSettings
from ._models import LastRun, RunState, RuntimeState
from ._output import OutputSpec
from ._result import RunResult
from ._session import Session
from ._skills import SkillRegistry
from ._streaming import StreamItem, stream_run
from ._sync import SessionSync, SyncResult

__all__ = ["Runtime"]

# A UTF-16 surrogate code point on its own: Python strings can hold one, but no UTF-8 text,
# JSON file or JavaScript store round-trips it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# The runtime whose locked work (a run, its memory close, an import...) this code is part of:
# a skill's task inherits it, and so does the host code the work calls (the provider, the
# embedder, the hooks, the store), so any of them that calls back into its own runtime is
# caught instead of waiting, for good, on the lock its own work holds.
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
        bus: EventBus,
        session: Session,
        continuity: Continuity,
        keeper: SessionKeeper | None = None,
        model: ModelSettings | None = None,
        calibration: TokenCalibration | None = None,
        redactor: Redactor | None = None,
        similar: SimilarTurns | None = None,
        context_hooks: Mapping[str, Any] | None = None,
        sync: SessionSync | None = None,
        commit_after_answer: bool = False,
    ) -> None:
        self._clock = clock
        self._commit_after_answer = commit_after_answer
        self._tokenizer = tokenizer
        self._ids = ids
        self._registry = registry
        self._settings = settings
        self._bus = bus
        # The session's state has one owner, the `Session`; the keeper (with storage) keeps
        # it in step with the store; the runtime holds the lock every change is made under.
        self._session = session
        self._keeper = keeper
        self._continuity = continuity
        self._similar = similar
        self._last_pack: ContextPack | None = None
        self._redactor = redactor
        # The host's ranker, compressors and redactor for every pack this runtime builds.
        self._context_hooks = dict(context_hooks or {})
        self._sync = sync
        self._model = model
        self._calibration = calibration or TokenCalibration()
        self._state = RuntimeState()
        self._lock = self._turn_lock()
        self._current: RunDriver | None = None
        # What keeps a turn (its trace, commit, memory close) still running after its
        # answer (see `run`), and the trace it has not kept yet.
        self._closing: asyncio.Future[None] | None = None
        self._unkept_trace: Callable[[], RunTrace | None] | None = None

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
        return MemoryView(self._session.memory)

    @property
    def skill_names(self) -> tuple[str, ...]:
        """Registered skill names, in registration order."""
        return self._registry.names

    @property
    def default_skill(self) -> str:
        """The name of the skill chosen when none is named and no matcher applies."""
        return self._registry.default

    @property
    def tool(self) -> ToolMaker:
        """Register a typed function as a tool of this runtime: ``@runtime.tool``,
        ``runtime.tool(function)`` or ``runtime.tool(name=...)(function)`` (see `agrun.tool`).
        A model is offered it from its next call on."""
        return ToolMaker(self._registry.add)

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
            **{**self._context_hooks, **options},
        )

    async def run(
        self,
        input: str,
        *,
        skill: str | None = None,
        signal: CancelToken | None = None,
        on_token: Callable[[str], None] | None = None,
        usage_limits: UsageLimits | Mapping[str, Any] | None = None,
        output_type: type[BaseModel] | None = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """Run one turn: with a provider, a model turn (the skills are its tools); without
        one, or with ``skill`` named, a skill run (select a skill, go through its cycles).

        Args:
            input: the text to act on.
            skill: run this skill instead of selecting one (or asking the model).
            signal: a `CancelToken`; cancelling it ends the run ``cancelled`` and this
                call still returns its result.
            on_token: called with each piece of the model's reply text as it streams (with
                redaction on, masked as the kept reply is: a word once it has ended).
            usage_limits: what this run may spend (`UsageLimits`, or a mapping of its
                fields): model requests, tool calls, input/output/total tokens over every
                model call of the run; passing one fails the run ``usage_limit_exceeded``.
                A skill run (no model) makes no model call and is not limited.
            output_type: a pydantic model class the answer must be: the model is asked
                for JSON of its schema, a reply that does not fit goes back to it (within
                ``max_corrections``, then the run fails ``output_validation_failed``), and
                ``result.output`` is the validated instance. Needs a model turn.
            output_schema: the same with a JSON Schema (as a page gives ``outputSchema``);
                ``result.output`` is the checked plain data.

        Returns:
            The result. A skill or model turn that fails (a skill raises, times out, returns
            output that cannot cross into JavaScript, loops past ``max_cycles``; the
            provider fails; the model's tool calls are refused past the bound) gives a
            result with status ``failed`` and a typed ``error``; it is not raised.

        Raises:
            InputError: ``input`` is not a string, or holds a lone surrogate.
            UnknownSkillError: ``skill`` names no registered skill.
            ConfigError: ``skill``, ``signal``, ``on_token``, ``usage_limits``,
                ``output_type`` or ``output_schema`` has the wrong type or value; a typed
                output is asked of a runtime without a provider, or with ``skill``.
            ReentrantCallError: a skill of this runtime called it.
            asyncio.CancelledError: the calling task was cancelled. The run is closed as
                ``cancelled`` (``state.last_run`` says so, nothing was kept) first.
        """
        if not isinstance(input, str):
            raise InputError(f"run() takes a string input, got {type(input).__name__}: pass text")
        lone = _LONE_SURROGATE.search(input)
        if lone is not None:
            raise InputError(
                f"run() input holds a lone surrogate (U+{ord(lone.group()):04X}) at character "
                f"{lone.start()}: it is not Unicode text and cannot be stored; pass well-formed "
                "text (in JavaScript, input.toWellFormed())"
            )
        if skill is not None:
            if not isinstance(skill, str):
                raise ConfigError(f"skill must be a skill name (str), got {type(skill).__name__}")
            self._registry.get(skill)
        if signal is not None and not isinstance(signal, CancelToken):
            raise ConfigError(f"signal must be an agrun.CancelToken, got {type(signal).__name__}")
        if on_token is not None and not callable(on_token):
            raise ConfigError(f"on_token must be callable, got {type(on_token).__name__}")
        limits = UsageLimits.of(usage_limits)
        output = OutputSpec.of(output_type, output_schema)
        if output is not None and (self._model is None or skill is not None):
            raise ConfigError(
                "a typed output (output_type / outputSchema) is the model's answer: it needs a "
                "runtime with a provider, and no skill named"
            )
        self._refuse_reentry("run")
        if self._redactor is not None:
            # At the door: with redaction on, a secret in the input reaches no skill, model,
            # history, event, memory or export.
            input = self._redactor.redact(input)
        await self._lock.acquire()
        handed_on = False  # the lock goes to the memory close when that runs after the answer
        marker = _running.set(self)  # the memory close's task inherits it too
        try:
            await self._sync_session()
            start = self._continuity.start_turn(
                input,
                session_memory=self._session.session_memory,
                inquiry=self._session.inquiry,
                entries=self._session.memory.read_all(),
            )
            driver = self._driver(start, skill, signal or CancelToken(), on_token, limits, output)
            self._current = driver
            self._session.open_turn()
            try:
                result = await driver.drive()
            except asyncio.CancelledError:
                # The run is closed as cancelled; its turn (events, lastRun) is still kept.
                if driver.cancelled_result is not None:
                    self._unkept_trace = self._trace_maker(driver)
                    self._session.take_turn(driver.cancelled_result)
                    await self._keep_turn(driver.cancelled_result, driver.last_run, None)
                raise
            finally:
                self._current = None
                if driver.last_run is not None:
                    self._state = RuntimeState(last_run=driver.last_run)
            result = _stamped(result, driver.last_run)
            result = self._keep_content(result, driver)
            self._unkept_trace = self._trace_maker(driver)  # made after the answer
            extraction: _Extraction | None = None
            close = None
            if result.ok and self._continuity.calls_model(input):
                # The extraction is a model call: it runs after the answer (below).
                extraction = _Extraction(start, driver.notes)
            elif result.ok:
                close = await self._continuity.close_turn(
                    start, result.state.run_id, result.messages, driver.notes
                )
            self._session.take_turn(result, close)
            if close is not None:
                self._continuity.global_memory.accept(close.promotions)
            if not self._commit_after_answer:
                # The turn is on disk before `run` returns. Its trace is not part of it: a
                # record for `why`, made on demand until then, it is kept after the answer.
                await self._commit_turn(result, driver.last_run, close)
                if extraction is None and self._unkept_trace is None:
                    return _typed(result, driver)  # nothing is left to keep
            # What runs after `run` returns (the trace; the turn's keeping with
            # `commit_after_answer`; a model extraction) still holds the lock, so the next
            # operation starts from it and `idle()` waits for it.
            self._closing = asyncio.ensure_future(
                self._keep_after(result, driver.last_run, close, extraction)
            )
            handed_on = True
            return _typed(result, driver)
        finally:
            _running.reset(marker)
            if not handed_on:
                await self._lock.release()

    async def _keep_turn(
        self, result: RunResult, last_run: LastRun | None, close: TurnClose | None
    ) -> None:
        """Keep the answered turn: its trace (made now), then its commit, which holds it."""
        self._keep_unkept_trace()
        await self._commit_turn(result, last_run, close)

    async def _commit_turn(
        self, result: RunResult, last_run: LastRun | None, close: TurnClose | None
    ) -> None:
        await self._commit(self._session.turn_commit(result, last_run, self._now(), close))

    async def _keep_after(
        self,
        result: RunResult,
        last_run: LastRun | None,
        close: TurnClose | None,
        extraction: _Extraction | None,
    ) -> None:
        """After the answer: keep the turn if that was left for now (`commit_after_answer`),
        else its trace; then with a model extraction close its memory (the session memory,
        the inquiry, promotions) and commit that, or commit the trace alone; then let the
        next operation have the lock."""
        _running.set(self)  # this task's own context: the extraction's provider is inside
        try:
            # Let the answer reach the caller first: where `run` was itself wrapped in a
            # task (a page's call from JavaScript), this task's first step was scheduled
            # before the one that hands the answer on.
            await asyncio.sleep(0)
            if self._commit_after_answer:
                await self._keep_turn(result, last_run, close)
            else:
                self._keep_unkept_trace()
            if extraction is not None:
                # Its commit carries the trace's changes too.
                await self._close_memory(result, extraction, last_run)
            elif not self._commit_after_answer:
                run_id = result.state.run_id
                await self._commit(self._session.trace_commit(run_id, self._now()))
        finally:
            self._closing = None
            await self._lock.release()

    def _now(self) -> int:
        return self._clock.now_ms()

    async def _commit(self, commit: TurnCommit | None) -> None:
        if self._keeper is not None and commit is not None:
            await self._keeper.commit(commit)

    async def _close_memory(
        self, result: RunResult, extraction: _Extraction, last_run: LastRun | None
    ) -> None:
        run_id = result.state.run_id
        close = await self._continuity.close_turn(
            extraction.start, run_id, result.messages, extraction.notes
        )
        if self._session.traces is not None:
            self._session.traces.add_extractions(
                run_id,
                (extraction_trace(c.request, c.reply, c.failed) for c in close.extraction_calls),
            )
        last_run = _with_calls(last_run, close.extraction_calls)
        if last_run is not None:
            self._state = RuntimeState(last_run=last_run)
        self._continuity.global_memory.accept(close.promotions)
        await self._commit(self._session.close_memory(run_id, close, last_run, self._now()))

    @property
    def closing(self) -> bool:
        """Whether a past turn is still being kept after its answer (its trace and commit,
        a model extraction)."""
        return self._closing is not None

    async def idle(self) -> None:
        """Wait until the work a past turn goes on with after its answer is done: its
        commit to storage, and with a model extraction its memory close and that commit.
        What a host awaits before it reads the store itself, or ``session_memory`` and
        ``state.last_run`` after a model extraction, straight after ``run``. Every other
        operation (the next run, an export) waits for it by itself."""
        closing = self._closing
        if closing is not None:
            await asyncio.shield(closing)

    def _driver(
        self,
        start: TurnStart,
        skill: str | None,
        token: CancelToken,
        on_token: Callable[[str], None] | None,
        limits: UsageLimits | None = None,
        output: OutputSpec | None = None,
    ) -> RunDriver:
        session = self._session
        store = session.content
        inputs = RunInputs(
            run_id=self._ids.new_id("run"),
            input=start.said,
            registry=self._registry,
            memory=session.memory,
            ids=self._ids,
            bus=self._bus,
            settings=self._settings,
            token=token,
            start=start,
            content=None if store is None else ContentReader(store, self._clock.now_ms),
        )
        # A memory command ("remember: ...") is answered the same way with or without a model
        # (but not when the caller asked for a typed answer: only the model gives one).
        command = None if output is not None else self._registry.command_for(start.said)
        if self._model is None or skill is not None or command is not None:
            return RunDriver(inputs, requested_skill=skill or command)
        layers = [] if store is None else [ContentAdvert(store, self._clock.now_ms)]
        history = session.history.read_all()
        similar = self._similar
        return ModelRun(
            inputs,
            model=self._model,
            history=history,
            similar=None if similar is None else partial(similar.nearest_to, start.said, history),
            embed=None if similar is None else similar.vectors,
            build=lambda request, cancelled: self._keep_pack(
                self.build_context(
                    request,
                    layers=layers,
                    cancelled=cancelled,
                    recall_index=session.history.recall_index,
                    memo=session.history.build_memo,
                )
            ),
            content_store=store,
            tokenizer=self._tokenizer,
            calibration=self._calibration,
            on_token=on_token,
            limits=limits,
            output=output,
        )

    def stream(
        self,
        input: str,
        *,
        skill: str | None = None,
        signal: CancelToken | None = None,
        usage_limits: UsageLimits | Mapping[str, Any] | None = None,
        output_type: type[BaseModel] | None = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[StreamItem]:
        """Run one turn and yield what happens as it happens: `TokenItem` for each piece of
        the reply, `EventItem` for each event, and last a `ResultItem` with the result.

        Takes the options of `run`, except ``on_token``. Breaking out of the loop (or
        cancelling its task) cancels the run.
        """
        return stream_run(
            self.subscribe,
            lambda on_token: self.run(
                input,
                skill=skill,
                signal=signal,
                on_token=on_token,
                usage_limits=usage_limits,
                output_type=output_type,
                output_schema=output_schema,
            ),
        )

    def _keep_content(self, result: RunResult, driver: RunDriver) -> RunResult:
        """Keep the turn's reply (and, if asked, its tool outputs or its failure) in the
        content store; the reply's history message then carries the ref, not the body."""
        store = self._session.content
        if store is None:
            return result
        run_id = result.state.run_id
        now = self._clock.now_ms()
        result = result.model_copy(update={"messages": compact_reads(result.messages)})
        if result.ok:
            entry = store.put(f"content:{run_id}", result.output, run_id=run_id, now_ms=now)
            if entry is not None:
                result = result.model_copy(
                    update={"messages": _with_content(result.messages, entry)}
                )
            if store.limits.keep_tool_outputs:
                for call_id, output in driver.tool_outputs:
                    ref = f"content:{run_id}:{call_id}"
                    store.put(ref, output, run_id=run_id, now_ms=now, depth=1)
        elif result.error is not None and result.error.code in store.limits.keep_failures:
            message, code = result.error.message, result.error.code
            store.put(f"content:{run_id}", message, run_id=run_id, now_ms=now, error_class=code)
        return result

    def _read_content(self, ref: str) -> ContentEntry:
        store = self._session.content
        if store is None:
            raise ContentRefNotFound(ref)
        try:
            return store.get(ref, now_ms=self._clock.now_ms())
        finally:
            found = ref in store.entries
            run_id = self._current.state.run_id if self._current is not None else ""
            counters = store.counters()
            self._bus.emit(ContentRetrieved(run_id=run_id, ref=ref, found=found, counters=counters))

    def _keep_trace(self, trace: RunTrace | None) -> None:
        traces = self._session.traces
        if trace is not None and traces is not None:
            traces.put(trace, self._clock.now_ms())

    def _trace_maker(self, driver: RunDriver) -> Callable[[], RunTrace | None] | None:
        """What makes ``driver``'s trace, if it has one to keep (a model turn, in a session
        that keeps traces)."""
        return driver.trace if driver.makes_trace and self._session.traces is not None else None

    def _keep_unkept_trace(self) -> None:
        """Keep the last run's trace if the work after its answer has not yet: a trace is
        read (`why`, `what_if`, the counters) as soon as `run` returns."""
        make, self._unkept_trace = self._unkept_trace, None
        if make is not None:
            self._keep_trace(make())

    def why(self, run_id: str) -> RunTrace:
        """Why run ``run_id`` answered as it did: for each model call, the pack's digest,
        its entries (id, layer, sources, tokens, compressed), what was dropped or merged
        into L3 and why, the provider's usage and the calibration factor used; and which
        entries the answer used (``attribution``). Any model turn of the session whose
        trace is still held (bounded per session, oldest evicted first), also after a
        reload.

        Raises:
            ConfigError: ``run_id`` is not a string.
            TraceNotFound: no trace is kept for it (not a model turn, or evicted).
        """
        if not isinstance(run_id, str):
            raise ConfigError(f"why() takes a run id (str), got {type(run_id).__name__}")
        self._keep_unkept_trace()
        traces = self._session.traces
        if traces is None:
            raise TraceNotFound(run_id, 0)
        return traces.get(run_id)

    def what_if(
        self,
        run_id: str,
        *,
        budget: int | None = None,
        window: int | None = None,
        tokenizer: Tokenizer | None = None,
        ranker: Ranker | None = None,
        call: int = -1,
    ) -> WhatIf:
        """Rebuild a recorded call's pack under another setting and say what changes:
        entries kept, compressed, dropped (and why), added, merged into L3, and the tokens
        per layer before and after. Calls no model and emits no event.

        Args:
            run_id: a model turn of the session whose trace is held.
            budget: another token limit for the pack.
            window: another context window (the limit follows as a run sets it: the
                window less the reply's tokens, over the calibration factor recorded).
            tokenizer: count with another `Tokenizer`.
            ranker: rank with another `Ranker`.
            call: which of the run's calls (default the last, the one that answered).

        Raises:
            TraceNotFound: no trace is kept for ``run_id``.
            ConfigError: a setting is malformed, or the call has no recorded request.
        """
        trace = self.why(run_id)
        if not trace.calls:
            raise ConfigError(f"run {run_id!r} made no model call: there is no pack to rebuild")
        try:
            recorded = trace.calls[call]
        except (IndexError, TypeError):
            raise ConfigError(
                f"call must index the run's {len(trace.calls)} model calls, got {call!r}"
            ) from None
        if recorded.recipe is None:
            raise ConfigError(f"run {run_id!r} call {call} has no recorded request to rebuild")
        for name, value in (("budget", budget), ("window", window)):
            if value is not None and (type(value) is not int or value < 1):
                raise ConfigError(f"what_if {name} must be a positive integer, got {value!r}")
        request = recorded_request(recorded.recipe, self._session.history.read_all())
        layers: list[Any] = []
        store, at = self._session.content, recorded.recipe.at_ms
        if recorded.recipe.content_advert and store is not None and at is not None:
            # The store as it was at the build: what it had stored by then.
            then = ContentStore(
                store.limits,
                store.sensitivity,
                entries={r: e for r, e in store.entries.items() if e.created_at < at},
            )
            layers.append(ContentAdvert(then, lambda: at))

        def rebuild(request: ContextRequest, **hooks: Any) -> ContextPack:
            options = {**self._context_hooks, **{k: v for k, v in hooks.items() if v is not None}}
            options.setdefault("tokenizer", self._tokenizer)
            return build_context(request, layers=layers, **options)

        baseline = rebuild(request)
        faithful = _digest(baseline) == recorded.pack_digest
        limit = budget
        if window is not None:
            reply = self._model.max_reply_tokens if self._model is not None else 0
            limit = max(1, int((window - reply) / recorded.factor))
        changed = request if limit is None else with_budget(request, limit)
        after = rebuild(changed, tokenizer=tokenizer, ranker=ranker)
        setting: dict[str, Any] = {"budget": budget, "window": window}
        setting["tokenizer"] = None if tokenizer is None else type(tokenizer).__name__
        setting["ranker"] = None if ranker is None else type(ranker).__name__
        index = call % len(trace.calls)
        return pack_diff(
            recorded,
            after,
            changed,
            run_id=run_id,
            call=index,
            setting={k: v for k, v in setting.items() if v is not None},
            faithful=faithful,
        )

    def trace_counters(self) -> dict[str, int]:
        """The session's traces: how many are held, their bytes, how many were evicted to
        stay in bounds, and how many could not be kept (too big, or refused as unsafe)."""
        self._keep_unkept_trace()
        traces = self._session.traces
        if traces is None:
            return {"traces": 0, "bytesHeld": 0, "evictions": 0, "refused": 0}
        return traces.counters()

    def _keep_pack(self, pack: ContextPack) -> ContextPack:
        self._last_pack = pack
        return pack

    @property
    def last_pack(self) -> ContextPack | None:
        """The context pack the last model call was sent (its entries, their sources, what
        was dropped and why): the "why" of the last answer. None before any model call."""
        return self._last_pack

    @property
    def content_entries(self) -> tuple[ContentEntry, ...]:
        """The content store's entries, oldest stored first, read without touching them (no
        event, no LRU move): what a mirror of the store (a worker's page) copies."""
        store = self._session.content
        if store is None:
            return ()
        return tuple(sorted(store.entries.values(), key=lambda e: (e.created_at, e.ref)))

    def content(self, ref: str) -> ContentEntry:
        """A stored body by its ``content_ref``: the full earlier reply, read-only.

        Raises:
            ContentRefNotFound: nothing is stored under ``ref`` (evicted, expired, never).
        """
        return self._read_content(ref)

    async def open(self) -> None:
        """Resume the session from storage now, rather than at the first run.

        With no storage this does nothing. A storage fault is not raised: the runtime
        goes on with what it holds, and `storage_status` says what failed.

        Raises:
            ReentrantCallError: a skill of this runtime called it.
        """
        self._refuse_reentry("open")
        async with self._turn():
            await self._sync_session()

    async def _sync_session(self) -> None:
        if self._keeper is None:
            return
        resumed = await self._keeper.sync()
        if resumed is None:
            return
        self._bus.resume_after(resumed.last_event_seq)
        traces = self._session.traces
        if traces is not None:
            # What calibration learned before the reload: each traced call's figures.
            self._calibration.restore(
                (trace.model, call.estimated, call.usage.prompt_tokens)
                for trace in traces.traces()
                for call in trace.calls
                if call.usage is not None
            )
        damage = resumed.damage
        if damage:
            self._bus.emit(
                SessionDamaged(
                    run_id="",
                    session_id=self._session.session_id,
                    problems=damage[:MAX_REPORTED],
                    count=len(damage),
                )
            )
        self._state = RuntimeState(last_run=resumed.last_run)

    @property
    def history(self) -> tuple[Message, ...]:
        """The session's messages (the person's, the replies, a model turn's tool calls,
        results and the library's frames), oldest first."""
        return self._session.history.read_all()

    @property
    def token_factors(self) -> dict[str, float]:
        """Per model seen: real prompt tokens per estimated token (self-calibration)."""
        return self._calibration.snapshot()

    @property
    def global_memory(self) -> tuple[GlobalEntry, ...]:
        """Global memory's live entries as read at the last turn start (and promoted since);
        empty when it is disabled."""
        return self._continuity.global_memory.entries()

    @property
    def session_memory(self) -> SessionMemory | None:
        """The session memory: facts, preferences, decisions, summary, recent turns."""
        return self._session.session_memory

    @property
    def inquiry(self) -> InquiryContext | None:
        """The inquiry context: goal, topic, query, sources, clarification state."""
        return self._session.inquiry

    async def promote_to_global_memory(self, entries: Iterable[Any]) -> Promotion:
        """Promote entries to global memory, through the sensitive-content filter and the
        host's ``sensitivity_filter``: each ``{"text", "kind"?: "fact" | "preference" |
        "note", "confidence"?}`` (or a string). What the filter refuses is never written.

        Returns:
            What was promoted and what was refused, with the reasons.

        Raises:
            ConfigError: an entry is malformed, or global memory is disabled.
            ReentrantCallError: a skill of this runtime called it.
            StorageError: the store could not write (nothing was written).
        """
        self._refuse_reentry("promote_to_global_memory")
        memory = self._continuity.global_memory
        if not memory.enabled:
            raise ConfigError("global memory is disabled for this runtime: nothing is promoted")
        rows = [self._global_entry(entry) for entry in entries]
        async with self._turn():
            promotion = memory.screen(rows)
            await self._write_global(promotion.promoted)
        return promotion

    async def forget_global_memory(self, entry_id: str) -> bool:
        """Forget a global-memory entry: a tombstone is appended (the rows stay append-only).

        Returns:
            Whether a live entry had that id.
        """
        self._refuse_reentry("forget_global_memory")
        memory = self._continuity.global_memory
        if not any(entry.id == entry_id for entry in memory.entries()):
            return False
        tombstone = GlobalEntry(
            id=self._ids.new_id("gmem"),
            kind="forget",
            text=f"forget {entry_id}",
            confidence=1.0,
            created_at=self._clock.now_ms(),
            forgets=entry_id,
        )
        async with self._turn():
            await self._write_global((tombstone,))
        return True

    def _global_entry(self, entry: Any) -> GlobalEntry:
        value = {"text": entry} if isinstance(entry, str) else entry
        if not isinstance(value, Mapping) or not isinstance(value.get("text"), str):
            raise ConfigError(
                "a global-memory entry is a string or {'text', 'kind'?, 'confidence'?}"
            )
        kinds: dict[str, GlobalKind] = {"fact": "fact", "preference": "preference", "note": "note"}
        kind = kinds.get(value.get("kind", "note"))
        if kind is None:
            raise ConfigError(
                f"a global-memory entry's kind is fact, preference or note, got {value['kind']!r}"
            )
        return GlobalEntry(
            id=self._ids.new_id("gmem"),
            kind=kind,
            text=value["text"],
            confidence=float(value.get("confidence", 1.0)),
            session_id=None,
            created_at=self._clock.now_ms(),
            data={k: v for k, v in value.items() if k not in ("text", "kind", "confidence")},
        )

    async def _write_global(self, entries: Sequence[GlobalEntry]) -> None:
        if entries and self._keeper is not None:
            await self._keeper.storage.append_global_memory([e.to_wire() for e in entries])
        self._continuity.global_memory.accept(entries)

    async def export_session(self) -> str:
        """This runtime's session as JSON text, to move it to another store or a browser.

        Raises:
            ConfigError: the runtime has no storage.
            SessionNotFound: nothing has been committed yet.
            ReentrantCallError: a skill of this runtime called it.
        """
        self._refuse_reentry("export_session")
        keeper = self._stored("export_session")
        async with self._turn():
            return await keeper.export()

    async def import_session(self, json_text: str | bytes, *, replace: bool = False) -> None:
        """Store an exported session as this runtime's session and resume from it.

        Raises:
            ConfigError: the runtime has no storage.
            ImportRejected: the file is corrupt, hostile, for another session id, or the
                session exists and ``replace`` is False; nothing changed.
            ReentrantCallError: a skill of this runtime called it.
        """
        self._refuse_reentry("import_session")
        keeper = self._stored("import_session")
        async with self._turn():
            await keeper.import_(json_text, replace=replace)
            await self._sync_session()

    async def sync(self) -> SyncResult:
        """Sync the session with the server of the ``sync`` option: push the turns it lacks,
        then hold its session, merged as two tabs merge (docs/storage.md "Sync").

        Returns:
            The turn ids pushed and pulled, and the session's token (keep it).

        Raises:
            ConfigError: the runtime has no ``sync`` option.
            SyncForbidden: the server refused the token; nothing changed.
            SyncError: the server could not be reached or failed; nothing local changed.
            ReentrantCallError: a skill of this runtime called it.
        """
        self._refuse_reentry("sync")
        keeper = self._stored("sync")
        if self._sync is None:
            raise ConfigError("sync() needs the sync option: create_runtime(sync={'url': ...})")
        async with self._turn():
            await self._sync_session()  # commits waiting go first; another tab's turns too
            result = await self._sync.run(keeper)
            await self._sync_session()
            return result

    async def list_sessions(self) -> list[SessionInfo]:
        """The conversations the store holds, ordered by id: each one's id, turn count,
        last commit time (``last_committed_at_ms``) and title. This runtime's session is
        listed once it has a committed turn or a title.

        Raises:
            ConfigError: the runtime has no storage.
            StorageError: the store could not be read.
        """
        return await self._stored("list_sessions").storage.list_sessions()

    async def rename_session(self, session_id: str, title: str | None) -> None:
        """Store ``title`` with a session (None removes it); this runtime's session can be
        named before its first turn.

        Raises:
            ConfigError: no storage, a bad id, or a title that is blank, not a str or
                longer than 200 characters.
            SessionNotFound: the session is neither stored nor this runtime's.
            ReentrantCallError: a skill of this runtime called it.
        """
        self._refuse_reentry("rename_session")
        keeper = self._stored("rename_session")
        session_id = check_session_id("rename_session", session_id)
        title = check_title(title)
        async with self._turn():
            await name_session(keeper, session_id, title)

    async def clear_session(self, session_id: str) -> None:
        """Empty a session, keeping its id and title: its history, memory log, session
        memory, inquiry, content, traces and ``lastRun`` are removed from the store (and
        from this runtime when it is its own session, whose next turn then starts afresh).
        Global memory promoted from it stays: it is global.

        Raises:
            ConfigError: no storage, or a bad id.
            SessionNotFound: the session is neither stored nor this runtime's.
            ReentrantCallError: a skill of this runtime called it.
        """
        await self._empty("clear_session", session_id, keep=True)

    async def delete_session(self, session_id: str) -> None:
        """Remove a session entirely: what `clear_session` removes, and its title and line
        in `list_sessions`. Global memory promoted from it stays. Deleting this runtime's
        own session empties the runtime as a clear does; it keeps its session id, which a
        next turn stores again as a new session.

        Raises:
            ConfigError: no storage, or a bad id.
            SessionNotFound: the session is neither stored nor this runtime's.
            ReentrantCallError: a skill of this runtime called it.
        """
        await self._empty("delete_session", session_id, keep=False)

    async def _empty(self, method: str, session_id: str, *, keep: bool) -> None:
        self._refuse_reentry(method)
        keeper = self._stored(method)
        session_id = check_session_id(method, session_id)
        async with self._turn():
            if await empty_session(keeper, session_id, keep=keep):
                keeper.forget()
                self._state = RuntimeState()
                self._last_pack = None

    @asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        """Hold the lock as this runtime's own work (see `_running`)."""
        async with self._lock:
            marker = _running.set(self)
            try:
                yield
            finally:
                _running.reset(marker)

    def _turn_lock(self) -> TurnLock:
        """This runtime's lock, joined by the store's lock on the session when the store
        is shared by processes (`SessionLocks`)."""
        keeper = self._keeper
        if keeper is None or not isinstance(keeper.storage, SessionLocks):
            return TurnLock()
        store, session_id = keeper.storage, keeper.session_id
        return TurnLock(lambda: store.hold_session(session_id))

    def _refuse_reentry(self, method: str) -> None:
        if _running.get() is self:
            raise ReentrantCallError(method)

    def _stored(self, method: str) -> SessionKeeper:
        if self._keeper is None:
            raise ConfigError(f"{method}() needs a runtime created with storage=...")
        return self._keeper

    def storage_status(self) -> dict[str, Any]:
        """Whether turns are reaching storage: ``{persistent, sessionId, pending, lastError,
        unreadable}``, where ``unreadable`` lists what the last resume could not read (left
        on disk; an import with ``replace=True`` repairs it)."""
        keeper = self._keeper
        if keeper is None:
            return {
                "persistent": False,
                "sessionId": None,
                "pending": 0,
                "lastError": None,
                "unreadable": [],
            }
        return {
            "persistent": True,
            "sessionId": keeper.session_id,
            "pending": keeper.pending,
            "lastError": keeper.last_error or self._lock.error,
            "unreadable": list(keeper.damage),
        }


@dataclass(frozen=True)
class _Extraction:
    """What a turn's memory close needs when its model extraction runs after the answer."""

    start: TurnStart
    notes: InquiryNotes


def _with_calls(last_run: LastRun | None, extraction: tuple[ExtractionCall, ...]) -> LastRun | None:
    """``last_run`` counting the extraction's model calls too."""
    if last_run is None or not extraction:
        return last_run
    answer = last_run.model_calls or 0
    usage = last_run.usage or Usage()
    for call in extraction:
        usage = usage + call.usage
    return last_run.model_copy(
        update={
            "usage": usage,
            "model_calls": answer + len(extraction),
            "calls_by_purpose": {"answer": answer, "extraction": len(extraction)},
        }
    )


def _typed(result: RunResult, driver: RunDriver) -> RunResult:
    """``result`` as the caller gets it: with a typed output, the validated instance in
    place of the plain data the turn was stored with."""
    if not result.ok or not isinstance(driver, ModelRun) or driver.typed_output is None:
        return result
    return result.model_copy(update={"output": driver.typed_output})


def _stamped(result: RunResult, last_run: LastRun | None) -> RunResult:
    """The turn's messages with the time the turn started (``at_ms``), which recall's dates
    signal reads ("what did I say last Tuesday")."""
    if last_run is None or all(m.at_ms is not None for m in result.messages):
        return result
    at = last_run.started_at
    messages = tuple(
        m if m.at_ms is not None else m.model_copy(update={"at_ms": at}) for m in result.messages
    )
    return result.model_copy(update={"messages": messages})


def _with_content(messages: tuple[Message, ...], entry: ContentEntry) -> tuple[Message, ...]:
    """The turn's messages with its reply (the last assistant message) carrying the ref.

    History stays compact (spec 002): a reply longer than `INLINE_CHARS` keeps its head in
    the history, cut at a line or sentence, and a note of where the rest is; the whole body
    is behind the ref (``content(ref)``, the model's ``read_content``).
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "assistant":
            update: dict[str, Any] = dict(entry.summary())
            if len(message.content) > INLINE_CHARS:
                head = _head(message.content, INLINE_CHARS)
                update["content"] = f"{head}\n[… {entry.bytes} bytes in all: {entry.ref}]"
            reply = message.model_copy(update=update)
            return (*messages[:index], reply, *messages[index + 1 :])
    return messages


# The longest reply a history message holds whole; a longer one keeps its head there.
INLINE_CHARS = 1200


def _digest(pack: ContextPack) -> str:
    return hashlib.sha256(pack.to_json().encode()).hexdigest()


def _head(text: str, limit: int) -> str:
    cut = max(text.rfind("\n", 0, limit), text.rfind(". ", 0, limit) + 1)
    return text[: cut if cut > limit // 2 else limit].rstrip()
