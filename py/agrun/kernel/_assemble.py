"""Assembling a `Runtime` from checked options and the ports it is given.

The kernel never picks its own clock, ids or store: `assemble_runtime` takes them, checks
every other option (a bad one raises `ConfigError` naming it) and wires the parts. The
public `agrun.create_runtime` fills in the environment's ports first; the page's bridge
passes its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypedDict, Unpack

from .._base import ConfigError, find_unstorable, is_positive_number
from ..content import ContentLimits, ContentStore
from ..context import default_tokenizer
from ..memory import Continuity, ExtractionMode, GlobalMemory, SimilarTurns
from ..ports import (
    STORAGE_METHODS,
    Clock,
    Compressor,
    Embedder,
    Ids,
    Provider,
    Ranker,
    Redactor,
    Storage,
    Tokenizer,
    check_hook,
)
from ..sensitive import PatternRedactor, SensitiveContentFilter
from ..storage import MAX_SESSION_ID
from ._bus import EventBus, Subscriber
from ._calibration import TokenCalibration
from ._driver import RunSettings
from ._keeper import SessionKeeper
from ._model_run import ModelSettings
from ._runtime import DEFAULT_MAX_CYCLES, DEFAULT_SKILL_TIMEOUT_S, Runtime
from ._session import Session
from ._skills import SkillRegistry

__all__ = ["RuntimeOptions", "assemble_runtime"]


class RuntimeOptions(TypedDict, total=False):
    """The options of a runtime besides its ports (every one optional)."""

    skills: Iterable[Any]
    """The skills to register, in the order matchers are tried."""
    default_skill: Any
    """The skill (or a registered skill's name) used when none is named and no matcher
    applies; the built-in ``echo`` skill if None."""
    max_cycles: int
    """How many OODAE cycles one run may take (a positive int; default 8)."""
    skill_timeout_s: float | None
    """Seconds a skill's run may take (a skill's own ``timeout_s`` wins); None for no
    limit (default 60)."""
    remember_observations: bool
    """Append each successful run's final observation to memory (default True)."""
    on_event: Subscriber | None
    """A subscriber for every event (see `Runtime.subscribe`)."""
    tokenizer: Tokenizer | None
    """Counts tokens for context packs; agrun's estimator if None (it errs high, so
    budgets hold under real BPE counts; see docs/context.md)."""
    session_id: str
    """Which stored session this runtime resumes and extends (default ``"default"``)."""
    global_memory: bool
    """False: global memory is neither read at turn start nor written; rows already
    stored stay, and come back when it is True again (default True)."""
    provider: Provider | None
    """The model behind model turns; with one, ``run()`` is a model turn whose tools are
    the skills (a skill named in ``run(skill=...)`` still runs alone). None: skill runs."""
    model: str | None
    """The model's name, for providers that serve several."""
    system_prompt: str | None
    """The system prompt at the head of every model call."""
    context_window: int
    """The model's window in its own tokens, prompt and reply (default 8192)."""
    max_reply_tokens: int
    """The longest reply asked for; reserved out of the window (default 512)."""
    temperature: float | None
    """Sampling temperature, when the provider takes one."""
    max_corrections: int
    """Refused tool calls (unknown tool, arguments that do not fit) a run may have before
    it fails (default 2)."""
    run_token_budget: int | None
    """Tokens a run's model calls may spend before the model is asked to wrap up."""
    token_factor: float
    """Real tokens per estimated token to plan with until the provider's usage has been
    seen (default 1.0; a model with a small vocabulary needs more, e.g. 3.0)."""
    memory_extraction: ExtractionMode
    """How a successful turn's facts, preferences and decisions are extracted: ``"auto"``
    (the model when there is one and global memory is on, else the rules), ``"model"``,
    ``"rules"`` or ``"off"``."""
    redact_secrets: bool
    """Mask secrets (API keys, passwords, tokens...) in every input and output before any
    skill, model, history, event, memory or export sees them (default True)."""
    sensitivity_filter: Callable[[Any], Any] | None
    """The host's own check of what may be remembered (session evidence and global memory):
    return True or a reason to refuse an entry; raising refuses it too."""
    memory_commands: bool
    """Answer "remember: ...", "what do you remember" and "forget ..." (default True)."""
    ranker: Ranker | None
    """Scores documents against the goal/query for every pack the runtime builds (BM25
    if None)."""
    compressors: Mapping[str, Compressor] | None
    """Compressors by data type (``tool_output``, ``artifact``) in place of the defaults."""
    redactor: Redactor | None
    """Scrubs secrets: at the door when ``redact_secrets`` is on (in place of agrun's
    patterns), and from every text and name that reaches a pack."""
    embedder: Embedder | None
    """A text embedding model (``embed(texts) -> vectors``), opt-in: recall then also finds
    older turns close in meaning to the request, not only those sharing its words (the
    ``similarity`` signal; docs/context.md). None: words and the other signals only."""
    content_store: bool | Mapping[str, Any]
    """Keep each reply's body in the session's content store behind a ``content_ref``
    (spec 002): True (the default limits), False, or the limits: ``max_entries`` (64),
    ``max_bytes`` (1,000,000), ``ttl_ms`` (None), ``keep_tool_outputs`` (False),
    ``keep_failures`` (error codes whose failed outcomes are kept; none)."""


def assemble_runtime(
    *, clock: Clock, ids: Ids, storage: Storage | None = None, **options: Unpack[RuntimeOptions]
) -> Runtime:
    """A runtime on the given ports.

    Raises:
        ConfigError: an option has the wrong type or value; the message names it.
        DuplicateSkillError: two skills share a name.
    """
    unknown = set(options) - set(RuntimeOptions.__annotations__)
    if unknown:
        raise ConfigError(f"unknown runtime option(s): {', '.join(sorted(unknown))}")
    max_cycles = options.get("max_cycles", DEFAULT_MAX_CYCLES)
    skill_timeout_s = options.get("skill_timeout_s", DEFAULT_SKILL_TIMEOUT_S)
    remember_observations = options.get("remember_observations", True)
    on_event = options.get("on_event")
    tokenizer = options.get("tokenizer")
    session_id = options.get("session_id", "default")
    global_memory = options.get("global_memory", True)
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
    if tokenizer is not None:
        check_hook("tokenizer", tokenizer)
    if not isinstance(session_id, str) or not session_id.strip():
        raise ConfigError(f"session_id must be a non-empty string, got {session_id!r}")
    if len(session_id) > MAX_SESSION_ID:
        raise ConfigError(
            f"session_id is {len(session_id)} characters; stores keep ids of at most "
            f"{MAX_SESSION_ID}: use a shorter id (a hash of a long one, say)"
        )
    lone = find_unstorable(session_id)
    if lone is not None:
        # Else every commit would fail to encode it, each run an internal_error.
        raise ConfigError(f"session_id {lone.removeprefix('$ ')}: pass well-formed text")
    if not isinstance(global_memory, bool):
        raise ConfigError(f"global_memory must be a bool, got {global_memory!r}")
    store = _check_storage(storage)
    model = _model_settings(options)
    counter = default_tokenizer() if tokenizer is None else tokenizer
    memory_commands = options.get("memory_commands", True)
    redact_secrets = options.get("redact_secrets", True)
    mode = options.get("memory_extraction", "auto")
    hook = options.get("sensitivity_filter")
    for name, flag in (("memory_commands", memory_commands), ("redact_secrets", redact_secrets)):
        if not isinstance(flag, bool):
            raise ConfigError(f"{name} must be a bool, got {flag!r}")
    if mode not in ("auto", "model", "rules", "off"):
        raise ConfigError(f"memory_extraction must be auto, model, rules or off, got {mode!r}")
    if hook is not None and not callable(hook):
        raise ConfigError(f"sensitivity_filter must be callable, got {type(hook).__name__}")
    # One catalog redactor for the filter and the traces: it remembers the long texts it
    # found clean, so a big reply is scanned once, not once for each.
    patterns = PatternRedactor()
    sensitivity = SensitiveContentFilter(extra=hook, redactor=patterns)
    registry = SkillRegistry(
        options.get("skills", ()),
        options.get("default_skill"),
        memory_commands=memory_commands,
        gate=sensitivity.check,
    )
    hooks = _context_hooks(options)
    host_redactor = hooks.get("redactor")
    # Traces (errors, steps, events, lastRun) are stored and exported: always scrubbed, by
    # the host's redactor or agrun's, even with redact_secrets off (which keeps the person's
    # own words as said, in history and in what the model is sent).
    tracer = host_redactor or patterns
    redactor = tracer if redact_secrets else None
    content = _content_store(options.get("content_store", True), sensitivity)
    embedder = options.get("embedder")
    if embedder is not None and not callable(getattr(embedder, "embed", None)):
        raise ConfigError(
            f"embedder must have embed(texts) (an Embedder), got {type(embedder).__name__}"
        )
    similar = (
        None
        if embedder is None
        else SimilarTurns(embedder, redact=None if redactor is None else redactor.redact)
    )

    settings = RunSettings(
        max_cycles=max_cycles,
        skill_timeout_s=None if skill_timeout_s is None else float(skill_timeout_s),
        remember_observations=remember_observations,
        redact=None if redactor is None else redactor.redact,
        scrub=tracer.redact,
        gate=sensitivity.check,
    )

    bus = EventBus(clock, scrub=tracer.redact)
    global_store = GlobalMemory(enabled=global_memory, sensitivity=sensitivity)
    continuity = Continuity(
        session_id=session_id,
        tokenizer=counter,
        ids=ids,
        clock=clock,
        emit=bus.emit,
        global_memory=global_store,
        sensitivity=sensitivity,
        provider=None if model is None else model.provider,
        model=None if model is None else model.model,
        mode=mode,
        scrub=tracer.redact,
    )
    session = Session(session_id, content=content, stored=store is not None)
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
        calibration=TokenCalibration(options.get("token_factor", 1.0)),
        redactor=redactor,
        similar=similar,
        context_hooks=hooks,
    )
    if on_event is not None:
        runtime.subscribe(on_event)
    return runtime


def _context_hooks(options: RuntimeOptions) -> dict[str, Any]:
    """The host's ranker, compressors and redactor, checked, as build_context takes them."""
    hooks: dict[str, Any] = {}
    ranker, compressors, redactor = (
        options.get("ranker"),
        options.get("compressors"),
        options.get("redactor"),
    )
    if ranker is not None:
        check_hook("ranker", ranker)
        hooks["ranker"] = ranker
    if compressors is not None:
        if not isinstance(compressors, Mapping):
            raise ConfigError(
                f"compressors must map a data type to a compressor, got {compressors!r}"
            )
        for kind, compressor in compressors.items():
            if kind not in ("tool_output", "artifact"):
                raise ConfigError(
                    f"compressors: {kind!r} is not a data type (tool_output, artifact)"
                )
            if not isinstance(compressor, Compressor):
                raise ConfigError(
                    f"compressors[{kind!r}] must have a name and compress(text, limit=, tokenizer=)"
                )
        hooks["compressors"] = dict(compressors)
    if redactor is not None:
        check_hook("redactor", redactor)
        hooks["redactor"] = redactor
    return hooks


def _model_settings(options: RuntimeOptions) -> ModelSettings | None:
    provider = options.get("provider")
    if provider is None:
        return None
    if not callable(getattr(provider, "stream", None)):
        raise ConfigError(
            f"provider must have stream(request) (a Provider), got {type(provider).__name__}"
        )
    window = options.get("context_window", 8192)
    reply = options.get("max_reply_tokens", 512)
    for name, value in (("context_window", window), ("max_reply_tokens", reply)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{name} must be a positive int, got {value!r}")
    if reply >= window:
        raise ConfigError(
            f"max_reply_tokens ({reply}) must leave room in context_window ({window})"
        )
    corrections = options.get("max_corrections", 2)
    if not isinstance(corrections, int) or isinstance(corrections, bool) or corrections < 0:
        raise ConfigError(f"max_corrections must be an int >= 0, got {corrections!r}")
    factor = options.get("token_factor", 1.0)
    if not is_positive_number(factor):
        raise ConfigError(f"token_factor must be a positive number, got {factor!r}")
    budget = options.get("run_token_budget")
    if budget is not None and (not isinstance(budget, int) or budget < 1):
        raise ConfigError(f"run_token_budget must be a positive int or None, got {budget!r}")
    temperature = options.get("temperature")
    if temperature is not None and (not isinstance(temperature, (int, float)) or temperature < 0):
        raise ConfigError(f"temperature must be a number >= 0 or None, got {temperature!r}")
    for name in ("model", "system_prompt"):
        text = options.get(name)
        if text is not None and not isinstance(text, str):
            raise ConfigError(f"{name} must be a string or None, got {type(text).__name__}")
    return ModelSettings(
        provider=provider,
        model=options.get("model"),
        system_prompt=options.get("system_prompt"),
        context_window=window,
        max_reply_tokens=reply,
        temperature=None if temperature is None else float(temperature),
        max_corrections=corrections,
        run_token_budget=budget,
    )


def _content_store(
    option: bool | Mapping[str, Any], sensitivity: SensitiveContentFilter
) -> ContentStore | None:
    if option is False:
        return None
    if option is True:
        return ContentStore(ContentLimits(), sensitivity)
    if not isinstance(option, Mapping):
        raise ConfigError(f"content_store must be a bool or a mapping of limits, got {option!r}")
    known = {"max_entries", "max_bytes", "ttl_ms", "keep_tool_outputs", "keep_failures"}
    unknown = set(option) - known
    if unknown:
        raise ConfigError(f"content_store takes {', '.join(sorted(known))}; not {sorted(unknown)}")
    for name in ("max_entries", "max_bytes"):
        value = option.get(name, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"content_store {name} must be a positive int, got {value!r}")
    ttl = option.get("ttl_ms")
    if ttl is not None and (not isinstance(ttl, int) or ttl < 1):
        raise ConfigError(f"content_store ttl_ms must be a positive int or None, got {ttl!r}")
    limits = ContentLimits(
        max_entries=option.get("max_entries", 64),
        max_bytes=option.get("max_bytes", 1_000_000),
        ttl_ms=ttl,
        keep_tool_outputs=bool(option.get("keep_tool_outputs", False)),
        keep_failures=tuple(option.get("keep_failures", ())),
    )
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
