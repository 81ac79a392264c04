"""What a context build reads: the message window, the direction fields, memory, and the rest.

Every model validates from the camelCase dict the JavaScript side sends
(``ContextRequest.model_validate({...})``) and from snake_case keywords in Python.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue, model_validator

from .._base import Model

__all__ = [
    "SESSION_L2_SHARE",
    "Approval",
    "Artifact",
    "Author",
    "Budget",
    "ContextOptions",
    "ContextRequest",
    "Direction",
    "EventRecord",
    "Layer",
    "MemoryItem",
    "Message",
    "Policy",
    "RecallSignal",
    "Role",
    "RouterContextRequest",
    "SteeringNote",
    "ToolCall",
    "ToolOutput",
]

Layer = Literal["L0", "L1", "L2", "L3", "L4"]
RecallSignal = Literal["speaker", "entities", "dates", "question", "exchange", "similarity"]
Role = Literal["user", "assistant", "system", "tool"]
# Who wrote a message. Only "person" is someone; the rest are frames the library writes
# with a user role, and none of them may ever become the current request (spec 003).
Author = Literal[
    "person",
    "drop_notice",
    "compaction_frame",
    "schema_correction",
    "evidence_correction",
    "budget_wrap_up",
    "nudge",
    "injected",
]


class WireModel(Model):
    """Base of the context models: agrun's `Model` (snake_case in Python, camelCase on the
    wire, immutable, unknown fields refused)."""


class ToolCall(WireModel):
    """One tool call an assistant message asks for."""

    id: str
    """The call id its result answers with (``Message.tool_call_id``)."""
    name: str
    """The tool's name."""
    arguments: JsonValue = ""
    """The arguments, as the provider sent them (a JSON string or an object)."""


def _is_none(value: object) -> bool:
    return value is None


class Message(WireModel):
    """One message of the session's message log, in order."""

    id: str
    """Stable id; context entries point back to it."""
    role: Role
    """Who speaks on the wire."""
    content: str = ""
    """The text."""
    author: Author = "person"
    """For ``role="user"``: a person, or which of the library's own frames this is."""
    injected_by: str | None = None
    """What injected the message: required with ``author="injected"`` and refused with any
    other author (such a message is never the request)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """For assistant messages: the tool calls it makes."""
    tool_call_id: str | None = None
    """For tool messages: the call this result answers."""
    name: str | None = None
    """For tool messages: the tool's name, when known."""
    at_ms: int | None = Field(None, exclude_if=_is_none)
    """When it was said (epoch ms, UTC), if known: recall reads its day, and resolves
    "yesterday" or "last Tuesday" in it against that day. Left out of the wire form when
    unset."""
    content_ref: str | None = Field(None, exclude_if=_is_none)
    """For a reply whose whole body is in the content store (spec 002): its ref. The four
    ``content_*`` fields are left out of the wire form when unset."""
    content_kind: str | None = Field(None, exclude_if=_is_none)
    """The body's kind (text, object, list...)."""
    content_bytes: int | None = Field(None, exclude_if=_is_none)
    """The body's size in UTF-8 bytes of JSON."""
    content_digest: str | None = Field(None, exclude_if=_is_none)
    """``sha256:<hex>`` of the body."""
    run_status: Literal["failed", "cancelled"] | None = Field(None, exclude_if=_is_none)
    """For a person's message whose turn failed or was cancelled: how it ended. The message
    is kept (the next turn's window sees what was asked); of the rest of that turn only a
    cancelled turn's answer as far as it came is kept, as one assistant message marked
    ``cancelled`` (the next windows read it noted as cut short; recall never brings it
    back). Left out of the wire form when unset."""
    error_code: str | None = Field(None, exclude_if=_is_none)
    """With ``run_status``: the run's error code (``provider_error``, ``cancelled``...)."""

    @model_validator(mode="after")
    def _injection_is_named(self) -> Message:
        # Spec 003: an injected message is never the request, and a rule author must be
        # able to tell who injected it. Half an injection (the author without its
        # injector, or an injector on a message that claims another author) would make
        # that answer depend on which of the two fields a reader looks at.
        if self.author == "injected" and self.injected_by is None:
            raise ValueError('author "injected" needs injectedBy: name what injected the message')
        if self.author != "injected" and self.injected_by is not None:
            raise ValueError(
                f'injectedBy is only for author "injected" (this message says '
                f'author {self.author!r}): set author to "injected" or drop injectedBy'
            )
        return self


class Direction(WireModel):
    """Where the session is going (spec 000 "Prevent Lost Direction"): protected first."""

    active_goal: JsonValue = None
    """What the session is trying to achieve."""
    active_topic: JsonValue = None
    """What it is about."""
    active_query: JsonValue = None
    """The query being worked on."""
    pending_clarification: JsonValue = None
    """The one open clarification question, if any: it stays here until a turn answers it
    (a memory command or a turn without the asked-for input does not)."""
    last_clarification_resolution: JsonValue = None
    """How the last clarification was resolved."""
    selected_source: JsonValue = None
    """The source the session chose."""
    last_read_source: JsonValue = None
    """The source read last."""


class MemoryItem(WireModel):
    """A memory entry offered to the pack: session memory (L2), project (L3), archive (L4)."""

    id: str
    """Stable id."""
    text: str
    """The entry's text."""
    layer: Literal["L2", "L3", "L4"] = "L2"
    """Which layer it belongs to."""
    kind: Literal["fact", "preference", "decision", "summary", "note", "debug"] = "note"
    """What it is; ``debug`` projections are the first thing to go."""
    seq: int = 0
    """Order of creation; lower is older."""


class Artifact(WireModel):
    """A versioned artifact of the current stage (layer L1)."""

    id: str
    """Id of this version."""
    name: str
    """The artifact; versions of one name supersede each other."""
    version: int = 1
    """Higher is newer."""
    valid: bool = True
    """Whether this version passed validation; only the latest valid one is kept."""
    content: str = ""
    """The artifact's text."""


class ToolOutput(WireModel):
    """A tool result of the current stage outside the message window (layer L0)."""

    id: str
    """Stable id."""
    tool: str
    """The tool's name."""
    content: str = ""
    """What it returned."""
    is_error: bool = False
    """Whether the tool failed."""
    seq: int = 0
    """Order; lower is older."""


class EventRecord(WireModel):
    """A domain event from the session's log, offered as live context (layer L0)."""

    id: str
    """The event's id."""
    kind: str
    """Its type name."""
    text: str
    """A one-line rendering of it."""
    at_ms: int = 0
    """When it happened (epoch ms); drives temporal decay against ``ContextRequest.now_ms``."""


class Approval(WireModel):
    """A decision a person made about an action; all are kept (they are small)."""

    id: str
    """Stable id."""
    action: str
    """What was asked."""
    decision: str
    """What was decided (e.g. ``approved``, ``denied``)."""
    by: str | None = None
    """Who decided."""


class SteeringNote(WireModel):
    """Guidance from the person steering the run; kept verbatim or not at all."""

    id: str
    """Stable id."""
    text: str
    """The note."""


class Policy(WireModel):
    """A constraint injected into every pack of the stages it applies to."""

    id: str
    """Stable id."""
    text: str
    """The constraint."""
    stages: tuple[str, ...] | None = None
    """Stages it applies to; ``None`` means all."""
    active: bool = True
    """Inactive policies are not injected."""


SESSION_L2_SHARE = 0.25
"""The runtime's session L2 cap, as a share of a pack's limit (docs/context.md): L2 memory
past it is merged into L3, oldest first (spec 001 section 10)."""


class Budget(WireModel):
    """The token budget: a hard limit, per model and per stage, with a reservation."""

    limit: int = Field(8000, ge=1)
    """The default limit for a pack."""
    per_model: dict[str, int] = Field(default_factory=dict)
    """Limits by model name; the tightest applicable limit wins."""
    per_stage: dict[str, int] = Field(default_factory=dict)
    """Limits by stage name; the tightest applicable limit wins."""
    reserve: int = Field(0, ge=0)
    """Tokens held back for what the host adds outside the pack (tool schemas, the reply)."""
    session_l2_cap: int | None = Field(None, ge=0)
    """Session-wide cap on L2 tokens; older L2 beyond it is merged into L3 (None: no cap;
    the runtime sets ``SESSION_L2_SHARE`` of the limit)."""


class ContextOptions(WireModel):
    """Knobs of the pipeline; the defaults are the spec's."""

    keep_recent_turns: int = Field(2, ge=0)
    """How many of the most recent turns (each opened by a person) are protected."""
    max_tool_output_tokens: int = Field(256, ge=1)
    """A tool output above this is compressed to its errors and key values."""
    whole_tools: tuple[str, ...] = ()
    """Tools whose outputs are never compressed: a body the model asked for by name (the
    runtime's ``read_content``) reaches it whole, or not at all."""
    max_artifact_tokens: int = Field(512, ge=1)
    """An artifact above this is cut to its leading lines."""
    transcript_share: float = Field(0.6, ge=0.0, le=1.0)
    """Share of the free budget older transcript may take before L2 memory and the summary."""
    summary_scan: int = Field(64, ge=0)
    """How many dropped transcript messages (newest first) feed the L2 conversation summary."""
    summary_max_tokens: int = Field(200, ge=0)
    """Size of the L2 conversation summary."""
    event_half_life_ms: int = Field(3_600_000, ge=1)
    """Temporal decay of events: an event this old counts half."""
    layers: tuple[Layer, ...] = ("L0", "L1", "L2")
    """Layers to fill; L3 and L4 only when asked (deep replay)."""
    recall_share: float = Field(0.6, ge=0.0, le=1.0)
    """Share of the free budget (what is left after the recent turns, steering, approvals,
    artifacts and tool outputs) that recalled turns may take; the older transcript window
    takes ``transcript_share`` of the rest of it first. ``0`` turns recall off."""
    recall_scan: int = Field(10_000, ge=0)
    """How many of the newest messages recall searches (and reads, without an index)."""
    recall_passages: bool = True
    """Cut a recalled turn longer than 120 tokens to its most relevant sentence and the
    sentences either side of it (verbatim spans, with the speaker's label); false
    recalls whole turns (except to fill the last of the budget)."""
    recall_signals: tuple[RecallSignal, ...] = (
        "speaker",
        "dates",
        "question",
        "exchange",
        "similarity",
    )
    """What recall weighs besides the words a turn shares with the request (BM25):
    ``speaker`` (a person the request names, or "you" / "I"), ``entities`` (names and
    numbers count double; opt-in: it gained nothing on the recall benchmark), ``dates``
    (the day a turn was said or talks about), ``question`` (after / before: the speaker's
    next or previous turn; "now": the newer turn), ``exchange`` (a reply's words count for
    the turn it answers, and a recalled question brings its answer), ``similarity`` (the
    request's ``recall_similarity``, when an embedding model gave one)."""


class ContextRequest(WireModel):
    """Everything one build reads. Pure data: the same request builds the same pack."""

    messages: tuple[Message, ...] = ()
    """The session's message log, oldest first."""
    cursor: int = Field(0, ge=0)
    """Retrieve messages from this position on; earlier ones are already in memory."""
    input: str | None = None
    """The text the run was started with; it picks the current request."""
    stage: str | None = None
    """The stage the pack is for (budget and policies)."""
    model: str | None = None
    """The model the pack is for (budget)."""
    system_prompt: str | None = None
    """The system prompt, counted in the reservation and placed first in L0."""
    direction: Direction = Direction()
    """The direction fields."""
    memory: tuple[MemoryItem, ...] = ()
    """Memory entries (L2, L3, L4)."""
    artifacts: tuple[Artifact, ...] = ()
    """Artifacts of the stage (L1)."""
    tool_outputs: tuple[ToolOutput, ...] = ()
    """Tool outputs of the stage outside the message window (L0)."""
    events: tuple[EventRecord, ...] = ()
    """Domain events (L0)."""
    approvals: tuple[Approval, ...] = ()
    """Approvals (L1)."""
    steering: tuple[SteeringNote, ...] = ()
    """Steering notes (L0)."""
    policies: tuple[Policy, ...] = ()
    """Policies; the active ones for the stage are injected."""
    budget: Budget = Budget()
    """The token budget."""
    options: ContextOptions = ContextOptions()
    """Pipeline knobs."""
    now_ms: int | None = None
    """The time the pack is for, for event decay; defaults to the newest event's time."""
    recall_similarity: dict[str, float] = Field(default_factory=dict)
    """How close older messages are in meaning to the request, by message id (cosine
    similarity of an embedding model's vectors, -1 to 1): recall's ``similarity`` signal.
    Data like the rest of the request, so the same request builds the same pack; the
    runtime fills it when it has an embedder (its nearest turns only)."""
    causation_id: str | None = None
    """The event that caused this build (e.g. a stage schedule); events carry it."""


class RouterContextRequest(WireModel):
    """What the router's separate context reads: its own L2, never raw execution context."""

    messages: tuple[Message, ...] = ()
    """The session's message log; only what people said and plain assistant replies are used."""
    input: str | None = None
    """The text the run was started with."""
    router_memory: tuple[MemoryItem, ...] = ()
    """The router's own L2: summaries of finished stages."""
    direction: Direction = Direction()
    """The direction fields."""
    policies: tuple[Policy, ...] = ()
    """Policies for the router."""
    system_prompt: str | None = None
    """The router's system prompt."""
    budget: Budget = Budget(limit=2000)
    """The router's budget."""
    options: ContextOptions = ContextOptions(keep_recent_turns=1)
    """Pipeline knobs."""
    causation_id: str | None = None
    """The event that caused this build."""
