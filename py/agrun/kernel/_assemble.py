"""Assembling a `Runtime` from checked options and the ports it is given.

The kernel never picks its own clock, ids or store: `assemble_runtime` takes them, and the
other options as a `RuntimeConfig` (``_options.py``, which checks them), and wires the
parts. The public `agrun.create_runtime` fills in the environment's ports first; the page's
bridge passes its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._base import ConfigError
from ..content import ContentLimits, ContentStore
from ..context import TokenCalibration, default_tokenizer
from ..memory import Continuity, GlobalMemory, SimilarTurns
from ..ports import STORAGE_METHODS, Clock, Ids, Storage, SyncTransport
from ..sensitive import PatternRedactor, SensitiveContentFilter, Verdict
from ..trace import TRACE_BYTES, ReplayProvider, TraceStore
from ._bus import EventBus
from ._driver import RunSettings
from ._keeper import SessionKeeper
from ._model_run import ModelSettings
from ._options import ContentStoreLimits, RuntimeConfig
from ._runtime import Runtime
from ._session import Session
from ._skills import SkillRegistry
from ._sync import SessionSync

__all__ = ["assemble_runtime"]


def assemble_runtime(
    config: RuntimeConfig,
    *,
    clock: Clock,
    ids: Ids,
    storage: Storage | None = None,
    sync_transport: SyncTransport | None = None,
) -> Runtime:
    """A runtime on the given ports, with options ``RuntimeConfig`` has checked.

    Raises:
        ConfigError: a port has the wrong type; the message names it.
        DuplicateSkillError: two skills share a name.
    """
    if not isinstance(clock, Clock):
        raise ConfigError(f"clock must have now_ms() -> int, got {type(clock).__name__}")
    if not isinstance(ids, Ids):
        raise ConfigError(f"ids must have new_id(prefix) -> str, got {type(ids).__name__}")
    if isinstance(config.provider, ReplayProvider):
        # A replay gives each run the recorded run's id: the content store's refs, which a
        # pack lists, are named by it (and a replay made elsewhere had other ids).
        ids = config.provider.ids(ids)
    store = _check_storage(storage)
    if config.sync is not None and store is None:
        raise ConfigError("sync needs storage: the session it syncs must be stored somewhere")
    if config.sync is not None and not isinstance(sync_transport, SyncTransport):
        raise ConfigError("sync needs a sync_transport with post(url, body, headers)")
    model = _model_settings(config)
    counter = default_tokenizer() if config.tokenizer is None else config.tokenizer
    # One catalog redactor for the filter and the traces: it remembers the long texts it
    # found clean, so a big reply is scanned once, not once for each.
    patterns = PatternRedactor()
    sensitivity = SensitiveContentFilter(extra=config.sensitivity_filter, redactor=patterns)
    registry = SkillRegistry(
        config.skills,
        config.default_skill,
        memory_commands=config.memory_commands,
        gate=sensitivity.check,
    )
    hooks = _context_hooks(config)
    # Traces (errors, steps, events, lastRun) are stored and exported: always scrubbed, by
    # the host's redactor or agrun's, even with redact_secrets off (which keeps the person's
    # own words as said, in history and in what the model is sent).
    tracer = config.redactor or patterns
    redactor = tracer if config.redact_secrets else None
    content = _content_store(config.content_store, sensitivity)
    similar = (
        None
        if config.embedder is None
        else SimilarTurns(config.embedder, redact=None if redactor is None else redactor.redact)
    )

    settings = RunSettings(
        max_cycles=config.max_cycles,
        skill_timeout_s=config.skill_timeout_s,
        remember_observations=config.remember_observations,
        redact=None if redactor is None else redactor.redact,
        redact_watch=patterns.mentions if redactor is patterns else None,
        scrub=tracer.redact,
        gate=sensitivity.check,
    )

    bus = EventBus(clock, scrub=tracer.redact)
    global_store = GlobalMemory(enabled=config.global_memory, sensitivity=sensitivity)
    continuity = Continuity(
        session_id=config.session_id,
        tokenizer=counter,
        ids=ids,
        clock=clock,
        emit=bus.emit,
        global_memory=global_store,
        sensitivity=sensitivity,
        provider=None if model is None else model.provider,
        model=None if model is None else model.model,
        mode=config.memory_extraction,
        scrub=tracer.redact,
    )
    traces = TraceStore(sensitivity, scrub=tracer.redact, max_bytes=TRACE_BYTES)
    session = Session(config.session_id, content=content, traces=traces, stored=store is not None)
    keeper = (
        None
        if store is None
        else SessionKeeper(storage=store, session=session, global_memory=global_store)
    )
    runtime = Runtime(
        clock=clock,
        ids=ids,
        registry=registry,
        settings=settings,
        tokenizer=counter,
        bus=bus,
        session=session,
        continuity=continuity,
        keeper=keeper,
        model=model,
        calibration=TokenCalibration(config.token_factor),
        redactor=redactor,
        similar=similar,
        context_hooks=hooks,
        sync=_session_sync(config, sync_transport, tracer.redact, sensitivity.check),
        commit_after_answer=config.commit_after_answer,
    )
    if config.on_event is not None:
        runtime.subscribe(config.on_event)
    return runtime


def _session_sync(
    config: RuntimeConfig,
    transport: SyncTransport | None,
    mask: Callable[[str], str],
    check: Callable[[Any], Verdict],
) -> SessionSync | None:
    """What syncs the session, when asked to: secrets masked always, as traces are (a push
    leaves the device), and the memory write gate in front of every entry sent."""
    if config.sync is None or transport is None:
        return None
    return SessionSync(
        url=config.sync.url, token=config.sync.token, transport=transport, mask=mask, check=check
    )


def _context_hooks(config: RuntimeConfig) -> dict[str, Any]:
    """The host's ranker, compressors and redactor, as build_context takes them."""
    hooks = {
        "ranker": config.ranker,
        "compressors": config.compressors,
        "redactor": config.redactor,
    }
    return {name: hook for name, hook in hooks.items() if hook is not None}


def _model_settings(config: RuntimeConfig) -> ModelSettings | None:
    if config.provider is None:
        return None
    return ModelSettings(
        provider=config.provider,
        model=config.model,
        system_prompt=config.system_prompt,
        context_window=config.context_window,
        max_reply_tokens=config.max_reply_tokens,
        temperature=None if config.temperature is None else float(config.temperature),
        max_corrections=config.max_corrections,
        run_token_budget=config.run_token_budget,
    )


def _content_store(
    option: bool | ContentStoreLimits, sensitivity: SensitiveContentFilter
) -> ContentStore | None:
    if option is False:
        return None
    limits = ContentLimits() if option is True else option.limits()
    return ContentStore(limits, sensitivity)


def _check_storage(storage: Storage | None) -> Storage | None:
    if storage is None:
        return None
    for method in STORAGE_METHODS:
        if not callable(getattr(storage, method, None)):
            raise ConfigError(
                f"storage must be a Storage (it has no {method}()) or a SQLite file path, "
                f"got {type(storage).__name__}"
            )
    return storage
