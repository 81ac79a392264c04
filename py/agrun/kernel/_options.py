"""The runtime's options, described once: `RuntimeConfig`.

One pydantic model holds every option of a runtime besides its ports (clock, ids, storage):
its Python name, its camelCase name on a page, its default, its check and its docs.
``create_runtime(**options)`` validates its keywords with it (snake_case names only); the
page's bridge validates the page's plain data with it (camelCase names) and hands it only
the functions it wires itself (skills, hooks, providers). ``tools/gen_schemas.py`` writes the
page's option table (``web/runtime-options.js``) from it, and a test checks that
``web/agrun.d.ts`` declares the same names. `RuntimeOptions` types the keywords for mypy;
a test checks it names the same options with the same types.

A bad value raises `ConfigError` naming the option (its camelCase name when the page gave it).

No ``from __future__ import annotations`` here: pydantic would then evaluate each field's
annotation from its text, which tripled the time this module takes to import in a page
(about 30 ms against 10 in Pyodide under Node), a cost every cold boot pays.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Self, TypedDict, TypeVar, get_args

from pydantic import (
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.alias_generators import to_camel

from .._base import ConfigError, Model, find_unstorable, is_positive_number
from ..content import ContentLimits
from ..memory import ExtractionMode
from ..ports import Compressor, Embedder, Provider, Ranker, Redactor, Tokenizer, check_hook
from ..storage import MAX_SESSION_ID
from ._bus import Subscriber

__all__ = ["PageOption", "RuntimeConfig", "RuntimeOptions", "SyncSettings", "page_options"]

DEFAULT_MAX_CYCLES = 8
DEFAULT_SKILL_TIMEOUT_S = 60.0

COMPRESSIBLE = ("tool_output", "artifact")

_M = TypeVar("_M", bound=Model)


@dataclass(frozen=True)
class Page:
    """How a page passes an option: the type web/options.js checks before booting
    ('number', 'string', 'boolean', 'array', 'object', 'function', 'provider', 'embedder',
    'contentStore'), and whether the bridge wires it (functions, or data naming them)
    instead of validating it as plain data."""

    kind: str
    wired: bool = False


@dataclass(frozen=True)
class PageOption:
    """One option as a page spells it (see `page_options`)."""

    name: str
    kind: str
    wired: bool


def _name(info: ValidationInfo) -> str:
    """The option's name as its caller spelled it: camelCase for a page."""
    name = info.field_name or "option"
    return to_camel(name) if info.context and info.context.get("page") else name


def _got(value: Any) -> str:
    return f", got {value!r}"


def _got_type(value: Any) -> str:
    return f", got {type(value).__name__}"


def _rule(test: Callable[[Any], bool], must: str, got: Callable[[Any], str] = _got) -> Any:
    """A check whose failure reads ``<option> <must><got>``."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if not test(value):
            raise ConfigError(f"{_name(info)} {must}{got(value)}")
        return value

    return PlainValidator(check)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_positive_int(value: Any) -> bool:
    return _is_int(value) and value >= 1


def _hook(value: Any, info: ValidationInfo) -> Any:
    if value is not None:
        check_hook(info.field_name or "", value)
    return value


def _model_port(method: str, shape: str) -> Any:
    """A provider or embedder: an object with ``method``, or None."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if value is not None and not callable(getattr(value, method, None)):
            raise ConfigError(f"{_name(info)} must have {shape}, got {type(value).__name__}")
        return value

    return PlainValidator(check)


def _skill_timeout(value: Any, info: ValidationInfo) -> float | None:
    if info.context and info.context.get("page"):
        # A page speaks milliseconds and has no "no limit".
        if not is_positive_number(value):
            raise ConfigError(f"skillTimeoutMs must be a positive number, got {value!r}")
        return float(value) / 1000
    if value is not None and not is_positive_number(value):
        raise ConfigError(f"skill_timeout_s must be a positive number or None: {value!r}")
    return None if value is None else float(value)


def _session_id(value: Any, info: ValidationInfo) -> str:
    name = _name(info)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{name} must be a non-empty string, got {value!r}")
    if len(value) > MAX_SESSION_ID:
        raise ConfigError(
            f"{name} is {len(value)} characters; stores keep ids of at most "
            f"{MAX_SESSION_ID}: use a shorter id (a hash of a long one, say)"
        )
    lone = find_unstorable(value)
    if lone is not None:
        # Else every commit would fail to encode it, each run an internal_error.
        raise ConfigError(f"{name} {lone.removeprefix('$ ')}: pass well-formed text")
    return value


def _compressors(value: Any, info: ValidationInfo) -> dict[str, Compressor] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(f"compressors must map a data type to a compressor, got {value!r}")
    for kind, compressor in value.items():
        if kind not in COMPRESSIBLE:
            raise ConfigError(f"compressors: {kind!r} is not a data type (tool_output, artifact)")
        if not isinstance(compressor, Compressor):
            raise ConfigError(
                f"compressors[{kind!r}] must have a name and compress(text, limit=, tokenizer=)"
            )
    return dict(value)


PositiveInt = Annotated[int, _rule(_is_positive_int, "must be a positive int")]
Flag = Annotated[bool, _rule(lambda value: isinstance(value, bool), "must be a bool")]
Text = Annotated[
    str | None,
    _rule(lambda v: v is None or isinstance(v, str), "must be a string or None", _got_type),
]


class ContentStoreLimits(Model):
    """The content store's limits (``content_store={...}``; camelCase on a page)."""

    max_entries: PositiveInt = 64
    max_bytes: PositiveInt = 1_000_000
    ttl_ms: Annotated[
        int | None,
        _rule(lambda v: v is None or _is_positive_int(v), "must be a positive int or None"),
    ] = None
    keep_tool_outputs: Flag = False
    keep_failures: tuple[str, ...] = ()
    """Error codes whose failed outcomes are kept (their messages)."""

    def limits(self) -> ContentLimits:
        return ContentLimits(**dict(self))


def _nested(model: type[_M], value: Any, info: ValidationInfo, must: str) -> _M:
    """An option that is a mapping of its own fields, checked by ``model``."""
    name = _name(info)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name} must be {must}, got {value!r}")
    try:
        return model.model_validate(value, context=info.context)
    except ValidationError as error:
        raise ConfigError(f"{name} {_config_error(error)}") from None


def _content_store(value: Any, info: ValidationInfo) -> bool | ContentStoreLimits:
    if isinstance(value, bool):
        return value
    return _nested(ContentStoreLimits, value, info, "a bool or a mapping of limits")


class SyncSettings(Model):
    """Where a session syncs (``sync={"url": ..., "token": ...}``; docs/storage.md "Sync")."""

    url: Annotated[
        str,
        _rule(
            lambda v: isinstance(v, str) and v.startswith(("http://", "https://", "/")),
            "must be an http(s) URL or a path on the page's origin",
        ),
    ]
    token: Annotated[
        str | None,
        _rule(
            lambda v: v is None or (isinstance(v, str) and 0 < len(v) <= 512),
            "must be a token string or None",
        ),
    ] = None


def _sync(value: Any, info: ValidationInfo) -> SyncSettings | None:
    if value is None:
        return None
    return _nested(SyncSettings, value, info, "a mapping with url (and token)")


class RuntimeConfig(Model):
    """The options of a runtime besides its ports, checked (every one optional)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    skills: Annotated[Any, Page("array", wired=True)] = ()
    """The skills to register, in the order matchers are tried (the registry checks them)."""
    default_skill: Annotated[Any, Page("string")] = None
    """The skill (or a registered skill's name) used when none is named and no matcher
    applies; the built-in ``echo`` skill if None."""
    max_cycles: Annotated[PositiveInt, Page("number")] = DEFAULT_MAX_CYCLES
    """How many OODAE cycles one run may take (a positive int; default 8)."""
    skill_timeout_s: Annotated[
        float | None,
        PlainValidator(_skill_timeout),
        Field(alias="skillTimeoutMs"),  # milliseconds: the check turns them into seconds
        Page("number"),
    ] = DEFAULT_SKILL_TIMEOUT_S
    """Seconds a skill's run may take (a skill's own ``timeout_s`` wins); None for no
    limit (default 60). A page gives ``skillTimeoutMs``."""
    remember_observations: Annotated[Flag, Page("boolean")] = True
    """Append each successful run's final observation to memory (default True)."""
    on_event: Annotated[
        Subscriber | None,
        _rule(lambda v: v is None or callable(v), "must be callable or None", _got_type),
        Page("function", wired=True),
    ] = None
    """A subscriber for every event (see `Runtime.subscribe`)."""
    tokenizer: Annotated[
        Tokenizer | None,
        PlainValidator(_hook),
        Field(alias="countTokens"),
        Page("function", wired=True),
    ] = None
    """Counts tokens for context packs; agrun's estimator if None (it errs high, so
    budgets hold under real BPE counts; see docs/context.md). A page gives ``countTokens``."""
    session_id: Annotated[str, PlainValidator(_session_id), Page("string")] = "default"
    """Which stored session this runtime resumes and extends (default ``"default"``)."""
    global_memory: Annotated[Flag, Page("object")] = True
    """False: global memory is neither read at turn start nor written; rows already
    stored stay, and come back when it is True again (default True). A page gives
    ``globalMemory: { enabled }``."""
    provider: Annotated[
        Provider | None,
        _model_port("stream", "stream(request) (a Provider)"),
        Page("provider", wired=True),
    ] = None
    """The model behind model turns; with one, ``run()`` is a model turn whose tools are
    the skills (a skill named in ``run(skill=...)`` still runs alone). None: skill runs."""
    model: Annotated[Text, Page("string")] = None
    """The model's name, for providers that serve several."""
    system_prompt: Annotated[Text, Page("string")] = None
    """The system prompt at the head of every model call."""
    context_window: Annotated[PositiveInt, Page("number")] = 8192
    """The model's window in its own tokens, prompt and reply (default 8192)."""
    max_reply_tokens: Annotated[PositiveInt, Page("number")] = 512
    """The longest reply asked for; reserved out of the window (default 512)."""
    temperature: Annotated[
        float | None,
        _rule(
            lambda v: v is None or (isinstance(v, (int, float)) and v >= 0),
            "must be a number >= 0 or None",
        ),
        Page("number"),
    ] = None
    """Sampling temperature, when the provider takes one."""
    max_corrections: Annotated[
        int, _rule(lambda v: _is_int(v) and v >= 0, "must be an int >= 0"), Page("number")
    ] = 2
    """Refused tool calls (unknown tool, arguments that do not fit) a run may have before
    it fails (default 2)."""
    run_token_budget: Annotated[
        int | None,
        _rule(lambda v: v is None or _is_positive_int(v), "must be a positive int or None"),
        Page("number"),
    ] = None
    """Tokens a run's model calls may spend before the model is asked to wrap up."""
    token_factor: Annotated[
        float, _rule(is_positive_number, "must be a positive number"), Page("number")
    ] = 1.0
    """Real tokens per estimated token to plan with until the provider's usage has been
    seen (default 1.0; a model with a small vocabulary needs more, e.g. 3.0)."""
    memory_extraction: Annotated[
        ExtractionMode,
        _rule(lambda v: v in get_args(ExtractionMode), "must be auto, model, rules or off"),
        Page("string"),
    ] = "auto"
    """How a successful turn's facts, preferences and decisions are extracted: ``"auto"``
    (the model when there is one and global memory is on, else the rules), ``"model"``,
    ``"rules"`` or ``"off"``."""
    redact_secrets: Annotated[Flag, Page("boolean")] = True
    """Mask secrets (API keys, passwords, tokens...) in every input and output before any
    skill, model, history, event, memory or export sees them (default True)."""
    sensitivity_filter: Annotated[
        Callable[[Any], Any] | None,
        _rule(lambda v: v is None or callable(v), "must be callable", _got_type),
        Page("function", wired=True),
    ] = None
    """The host's own check of what may be remembered (session evidence and global memory):
    return True or a reason to refuse an entry; raising refuses it too."""
    commit_after_answer: Annotated[Flag, Page("boolean")] = False
    """Commit each turn after ``run`` has returned its answer, still holding the session's
    lock (the next operation waits for it; ``idle`` too), rather than before: the answer
    sooner, and the turn lost if the process ends in that moment. Off in Python (a script
    that ends straight after ``run`` keeps its turn; a server whose event loop lives on may
    turn it on); ``createRuntime`` turns it on in a page, where the answer is on screen and
    the page lives on. Either way a turn's trace (for ``why``) is kept after the answer."""
    memory_commands: Annotated[Flag, Page("boolean")] = True
    """Answer "remember: ...", "what do you remember" and "forget ..." (default True)."""
    ranker: Annotated[Ranker | None, PlainValidator(_hook), Page("function", wired=True)] = None
    """Scores documents against the goal/query for every pack the runtime builds (BM25
    if None)."""
    compressors: Annotated[
        dict[str, Compressor] | None, PlainValidator(_compressors), Page("object", wired=True)
    ] = None
    """Compressors by data type (``tool_output``, ``artifact``; on a page ``toolOutput``,
    ``artifact``) in place of the defaults."""
    redactor: Annotated[Redactor | None, PlainValidator(_hook), Page("function", wired=True)] = None
    """Scrubs secrets: at the door when ``redact_secrets`` is on (in place of agrun's
    patterns), and from every text and name that reaches a pack."""
    embedder: Annotated[
        Embedder | None,
        _model_port("embed", "embed(texts) (an Embedder)"),
        Page("embedder", wired=True),
    ] = None
    """A text embedding model (``embed(texts) -> vectors``), opt-in: recall then also finds
    older turns close in meaning to the request, not only those sharing its words (the
    ``similarity`` signal; docs/context.md). None: words and the other signals only."""
    content_store: Annotated[
        bool | ContentStoreLimits, PlainValidator(_content_store), Page("contentStore")
    ] = True
    """Keep each reply's body in the session's content store behind a ``content_ref``
    (spec 002): True (the default limits), False, or the limits: ``max_entries`` (64),
    ``max_bytes`` (1,000,000), ``ttl_ms`` (None), ``keep_tool_outputs`` (False),
    ``keep_failures`` (error codes whose failed outcomes are kept; none)."""

    sync: Annotated[SyncSettings | None, PlainValidator(_sync), Page("object")] = None
    """Sync the session with an agrun sync server (docs/storage.md "Sync"): ``url`` (the
    server's sync endpoint) and ``token`` (the session's, from an earlier `Runtime.sync`;
    None for a session the server does not hold yet). None: no sync."""

    @model_validator(mode="after")
    def _reply_fits(self) -> Self:
        if self.max_reply_tokens >= self.context_window:
            raise ConfigError(
                f"max_reply_tokens ({self.max_reply_tokens}) must leave room in "
                f"context_window ({self.context_window})"
            )
        return self

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> Self:
        """Validate Python's keyword options (snake_case names).

        Raises:
            ConfigError: an unknown option, or one of the wrong type or value (named).
        """
        unknown = set(options) - set(cls.model_fields)
        if unknown:
            raise ConfigError(f"unknown runtime option(s): {', '.join(sorted(unknown))}")
        return cls._checked(options, page=False)

    @classmethod
    def from_page(cls, data: Mapping[str, Any], **wired: Any) -> Self:
        """Validate a page's plain-data options (camelCase names, as `page_options` lists
        them) together with the objects the bridge wired for its functions (by field name).

        Raises:
            ConfigError: an unknown option, or one of the wrong type or value (named).
        """
        names = {option.name for option in page_options() if not option.wired}
        unknown = (set(data) - names) | (set(wired) - set(cls.model_fields))
        if unknown:
            raise ConfigError(f"unknown runtime option(s): {', '.join(sorted(unknown))}")
        return cls._checked({**data, **wired}, page=True)

    @classmethod
    def _checked(cls, options: Mapping[str, Any], *, page: bool) -> Self:
        try:
            return cls.model_validate(options, context={"page": page})
        except ValidationError as error:
            raise ConfigError(_config_error(error)) from None


def page_options() -> list[PageOption]:
    """Every runtime option as a page passes it: its camelCase name, the type the page's
    check wants, and whether the bridge wires it (in the model's order)."""
    found = []
    for name, field in RuntimeConfig.model_fields.items():
        page = next(item for item in field.metadata if isinstance(item, Page))
        found.append(PageOption(field.alias or name, page.kind, page.wired))
    return found


def _config_error(error: ValidationError) -> str:
    """The first problem's message: a check's own (it names the option), else pydantic's
    with where it is."""
    first = error.errors()[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, ConfigError):
        return str(cause)
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}, got {first['input']!r}"


class RuntimeOptions(TypedDict, total=False):
    """`create_runtime`'s keyword options, typed for mypy: the fields of `RuntimeConfig`
    (documented there; a test checks both name the same options with the same types)."""

    skills: Iterable[Any]
    default_skill: Any
    max_cycles: int
    skill_timeout_s: float | None
    remember_observations: bool
    on_event: Subscriber | None
    tokenizer: Tokenizer | None
    session_id: str
    global_memory: bool
    provider: Provider | None
    model: str | None
    system_prompt: str | None
    context_window: int
    max_reply_tokens: int
    temperature: float | None
    max_corrections: int
    run_token_budget: int | None
    token_factor: float
    memory_extraction: ExtractionMode
    redact_secrets: bool
    commit_after_answer: bool
    sensitivity_filter: Callable[[Any], Any] | None
    memory_commands: bool
    ranker: Ranker | None
    compressors: Mapping[str, Compressor] | None
    redactor: Redactor | None
    embedder: Embedder | None
    content_store: bool | Mapping[str, Any]
    sync: Mapping[str, Any] | None
