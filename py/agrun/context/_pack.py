"""What a context build returns: the `ContextPack`, its entries, and what was left out.

``pack.model_dump(by_alias=True, mode="json")`` is what JavaScript receives; the same
request and the same recorded compressions give the same JSON, byte for byte.

A pack is read-only all the way down (spec 001 section 19): its models are frozen, its
sequences are tuples, and its mappings (``layers``, ``metrics.tokens_per_layer``) and
the JSON arguments of its tool calls are `FrozenDict` / `FrozenList`, which serialize
exactly as plain dicts and lists do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from .._base import FrozenDict, canonical_json, freeze_json
from ._request import Role, ToolCall, WireModel

__all__ = [
    "CompressionMetadata",
    "CompressionRecord",
    "ContextEntry",
    "ContextMetrics",
    "ContextPack",
    "DropReason",
    "DroppedItem",
    "EntryKind",
    "RecallHit",
    "RecallMetrics",
    "entry_json",
    "entry_tag",
    "frame",
    "frozen_calls",
    "render_entry",
    "tool_calls_text",
]

EntryKind = Literal[
    "system",
    "policy",
    "direction",
    "steering",
    "message",
    "tool_output",
    "event",
    "artifact",
    "approval",
    "memory",
    "summary",
    "merged_memory",
    "recalled_turn",
    "extension",
]
DropReason = Literal[
    "over_budget",
    "duplicate",
    "superseded",
    "invalid_artifact",
    "orphan_tool_result",
    "orphan_reply",
    "layer_not_requested",
    "moved_to_l3",
    "before_cursor",
]


def frozen_calls(calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
    """``calls`` with their JSON arguments (objects, arrays) made read-only; a call whose
    arguments are a string is returned as it is."""
    if all(isinstance(call.arguments, str | None) for call in calls):
        return calls
    return tuple(
        call
        if isinstance(call.arguments, str | None)
        else call.model_copy(update={"arguments": freeze_json(call.arguments)})
        for call in calls
    )


def _frozen_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return value if isinstance(value, FrozenDict) else FrozenDict(value)


class ContextEntry(WireModel):
    """One record in a pack: an excerpt, a summary, a policy hint, a note or a message."""

    id: str
    """Unique in the pack: ``<kind>:<first source>``."""
    layer: str
    """``L0``..``L4`` or an extension layer's name."""
    kind: EntryKind
    """What it is."""
    content: str
    """The text the model sees (redacted, possibly compressed)."""
    sources: tuple[str, ...]
    """Ids of the messages, events, memory entries... it was made from."""
    tokens: int
    """What it costs, frame included, by the build's tokenizer."""
    role: Role | None = None
    """For messages: the wire role."""
    name: str | None = None
    """For direction fields, tools and artifacts: which one."""
    tool_calls: Annotated[tuple[ToolCall, ...], AfterValidator(frozen_calls)] = ()
    """For assistant messages: the calls it makes (their arguments read-only)."""
    tool_call_id: str | None = None
    """For tool messages: the call it answers."""
    compressed: bool = False
    """Whether ``content`` is an extract of a longer input."""
    score: float | None = None
    """Relevance to the goal/query, when ranked."""


class DroppedItem(WireModel):
    """A run of inputs left out of the pack for one reason (``first == last`` for one item)."""

    kind: str
    """What was dropped (``message``, ``memory``, ``tool_output``...)."""
    reason: DropReason
    """Why."""
    first: str
    """Id of the first dropped input of the run."""
    last: str
    """Id of the last dropped input of the run."""
    count: int = 1
    """How many inputs the run holds."""


class CompressionRecord(WireModel):
    """One compression: which spans of the (redacted) input were kept. Replays exactly."""

    source: str
    """The input's id."""
    data_type: str
    """``tool_output``, ``artifact``, ``conversation``..."""
    strategy: str
    """The compressor's name."""
    spans: tuple[tuple[int, int], ...]
    """Kept ``[start, end)`` ranges of the input, in order; the output joins them with newlines."""
    tokens_before: int
    """Cost of the input."""
    tokens_after: int
    """Cost of the output."""


class CompressionMetadata(WireModel):
    """How the pack was made smaller, and what it left out."""

    tokenizer: str
    """Name of the tokenizer that counted."""
    anchor: str | None
    """Id of the current request message, or ``None`` when the window holds none."""
    reserved: int
    """Tokens taken by the system prompt, policies and ``budget.reserve``."""
    records: tuple[CompressionRecord, ...] = ()
    """Every compression applied."""
    dropped: tuple[DroppedItem, ...] = ()
    """Everything left out, with the reason."""
    moved_to_l3: tuple[str, ...] = ()
    """L2 memory ids merged into L3 because the session L2 cap was exceeded."""
    dedup_checked: int = 0
    """Inputs the deduplicator looked at."""
    dedup_hits: int = 0
    """Of those, how many were duplicates or superseded."""


class RecallHit(WireModel):
    """One older turn the recall stage scored: recalled, or passed over."""

    id: str
    """The message's id."""
    score: float
    """Its relevance to the request (BM25 and the signals, rounded to 4 places)."""
    passage: bool = False
    """Whether the pack holds a passage cut from it rather than the whole turn."""
    via: str | None = None
    """For a turn brought along by another: ``after`` / ``before`` (the same speaker's
    next or previous turn, for a question about what followed or preceded) or ``answer``
    (the reply to a recalled question), ``recent`` (a turn just below the window that
    matched nothing, filling room no match could); None for a turn recalled on its own
    score."""


class RecallMetrics(WireModel):
    """What the recall stage searched, found and kept (spec 001 section 16)."""

    searched: int = 0
    """Older messages it could recall from (outside the window, recallable)."""
    matched: int = 0
    """Of those, how many scored above zero."""
    recalled: int = 0
    """How many are in the pack as ``recalled_turn`` entries."""
    turns: tuple[RecallHit, ...] = ()
    """The recalled turns, in conversation order."""
    passed_over: tuple[RecallHit, ...] = ()
    """The best-scoring turns left out for the budget (at most 8), best first."""


class ContextMetrics(WireModel):
    """Per-build observability figures (spec 001 section 16); the duration is in the event."""

    tokens_per_layer: Annotated[Mapping[str, int], AfterValidator(_frozen_mapping)]
    """Tokens used by each layer (read-only)."""
    compression_ratio: float
    """Tokens after / before over the compressed entries (1.0 when nothing was compressed)."""
    l2_tokens: int
    """Tokens of L2 in the pack."""
    dedup_hit_rate: float
    """``dedup_hits / dedup_checked`` (0.0 when nothing was checked)."""
    recall: RecallMetrics = RecallMetrics()
    """The recall stage's figures: how many older turns it recalled, and their scores."""


class ContextPack(WireModel):
    """The bounded slice of the past one model call gets. Ephemeral: built per stage."""

    layers: Annotated[Mapping[str, tuple[ContextEntry, ...]], AfterValidator(_frozen_mapping)]
    """Entries by layer, ``L0``..``L4`` always present, extension layers after (read-only)."""
    budget_used: int = Field(ge=0)
    """Tokens the entries cost plus the reservation; never above ``budget_limit``."""
    budget_limit: int
    """The hard limit that applied."""
    compression_metadata: CompressionMetadata
    """Compressions, drops, moves, dedup counts."""
    metrics: ContextMetrics
    """Observability figures."""
    next_cursor: int
    """Where the next build's retrieval may start."""

    def entries(self) -> list[ContextEntry]:
        """All entries, layer by layer, in pack order."""
        return [entry for layer in self.layers.values() for entry in layer]

    def render(self) -> str:
        """The pack as one text, the way the budget counts it (each entry with its frame)."""
        return "".join(render_entry(entry) for entry in self.entries())

    def to_json(self, write_entry: Callable[[ContextEntry], str] | None = None) -> str:
        """Canonical JSON (camelCase, sorted keys): equal packs give equal bytes.

        ``write_entry`` writes each entry (`entry_json` by default): a build gives one that
        reuses what it wrote for the same entry before. The text is the same either way:
        canonical JSON of a whole is its parts' canonical JSON, joined.
        """
        write = write_entry or entry_json
        fields = {
            key: canonical_json(value)
            for key, value in self.model_dump(
                by_alias=True, mode="json", exclude={"layers"}
            ).items()
        }
        fields["layers"] = (
            "{"
            + ",".join(
                f"{canonical_json(name)}:[{','.join(write(entry) for entry in entries)}]"
                for name, entries in sorted(self.layers.items())
            )
            + "}"
        )
        pairs = (f"{canonical_json(key)}:{fields[key]}" for key in sorted(fields))
        return "{" + ",".join(pairs) + "}"


def entry_json(entry: ContextEntry) -> str:
    """One entry's canonical JSON, as it is inside its pack's."""
    return canonical_json(entry.model_dump(by_alias=True, mode="json"))


def tool_calls_text(calls: tuple[ToolCall, ...]) -> str:
    """The tool calls of a message as the text a model is charged for."""
    return "\n".join(f"{call.name}({_json_text(call.arguments)})" for call in calls)


def _json_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return canonical_json(value)


def frame(tag: str, content: str, calls: str = "") -> str:
    """The text an entry is charged for: a tag line, the content, its calls, a line break."""
    body = f"{content}\n{calls}" if calls else content
    return f"<{tag}>\n{body}\n"


def entry_tag(kind: str, role: str | None, name: str | None) -> str:
    """The tag an entry is framed with: the role of a message, the field of a direction."""
    if kind == "recalled_turn":
        # A recalled turn must not read like a turn of the live window.
        return f"recalled {role}" if role else kind
    if role is not None:
        return role
    if kind == "direction" and name:
        return name
    return kind


def render_entry(entry: ContextEntry) -> str:
    """One entry as the text its ``tokens`` were counted on."""
    tag = entry_tag(entry.kind, entry.role, entry.name)
    return frame(tag, entry.content, tool_calls_text(entry.tool_calls))
