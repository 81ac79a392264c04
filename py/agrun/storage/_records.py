"""What crosses the `Storage` port: JSON-ready records, camelCase on the wire.

These are storage-level records, independent of the kernel's models: the payloads the
runtime keeps (messages, events, memory entries, snapshots, content, lastRun) travel as
opaque JSON objects, and the store only owns the envelope around them (which session,
which turn, in what order). The same shapes cross into JavaScript
(``model_dump(mode="json", by_alias=True)``) and come back from the IndexedDB store.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from .._base import Model

__all__ = [
    "EXPORT_FORMAT",
    "FORMAT_VERSION",
    "MAX_SESSION_ID",
    "ContentRecord",
    "ExportFile",
    "JsonObject",
    "RuntimeStateRecord",
    "SessionInfo",
    "SessionSnapshot",
    "StoredTurn",
    "TurnCommit",
]

# The version of the export file format (and of the record shapes it carries).
FORMAT_VERSION = 1
EXPORT_FORMAT = "agrun.session"

JsonObject = dict[str, Any]
# The longest session id, turn id or content ref a store keeps.
MAX_SESSION_ID = 256
SessionId = Annotated[str, StringConstraints(min_length=1, max_length=MAX_SESSION_ID)]
TurnId = Annotated[str, StringConstraints(min_length=1, max_length=256)]
ContentRef = Annotated[str, StringConstraints(min_length=1, max_length=256)]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class Record(Model):
    """Base of storage records: agrun's `Model`, with strict types (no coercion)."""

    model_config = ConfigDict(
        alias_generator=_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        strict=True,
    )


class ContentRecord(Record):
    """One content-store entry as a store keeps it and an export file carries it: the wire
    shape of the kernel's ``ContentEntry`` (tests/test_content_integrity.py keeps the two
    alike). An import checks each entry against it, strictly, so an entry of the wrong
    types is refused at the door rather than reported unreadable when the session opens;
    the store still keeps the entries as opaque objects."""

    ref: ContentRef
    kind: Literal["text", "object", "list", "number", "boolean", "null", "fallback"]
    body: Any
    bytes: int = Field(ge=0)
    digest: str
    run_id: str
    depth: int = Field(0, ge=0)
    serialization: Literal["json", "fallback"] = "json"
    error_class: str | None = None
    created_at: int
    last_used_at: int
    expires_at: int | None = None


class TurnCommit(Record):
    """Everything one turn changes, written as one atomic unit (all of it, or none).

    The store assigns the turn's ``seq`` (1, 2, ... per session). Committing a ``turn_id``
    the session already holds is a no-op that returns the stored seq, so a retry after an
    ambiguous failure never duplicates a turn.
    """

    session_id: SessionId
    # Unique within the session; makes retries idempotent.
    turn_id: TurnId
    # When the runtime's clock says the turn ended (the store reads no clock).
    committed_at_ms: int | None = None
    # Session history appended by this turn, in order.
    messages: list[JsonObject] = Field(default_factory=list)
    # Event-log entries appended by this turn, in order.
    events: list[JsonObject] = Field(default_factory=list)
    # Session-scoped memory entries appended by this turn, in order.
    memory_entries: list[JsonObject] = Field(default_factory=list)
    # The rebuilt session-memory snapshot; None leaves the stored one as it is.
    session_memory: JsonObject | None = None
    # The inquiry-context working set; None leaves the stored one as it is.
    inquiry: JsonObject | None = None
    # Content-store entries written (upserted by their "ref" key).
    content_entries: list[JsonObject] = Field(default_factory=list)
    # Content refs the content store evicted this turn.
    evicted_content_refs: list[ContentRef] = Field(default_factory=list)
    # The small summary of this run (RuntimeState.lastRun); None leaves it as it is.
    last_run: JsonObject | None = None
    # Entries promoted to global memory this turn (dropped when global memory is off).
    global_memory: list[JsonObject] = Field(default_factory=list)

    @model_validator(mode="after")
    def _content_entries_have_refs(self) -> TurnCommit:
        _check_refs(self.content_entries)
        return self


class StoredTurn(Record):
    """One committed turn as stored: its place in the session and what it appended."""

    seq: int = Field(ge=1)
    turn_id: TurnId
    committed_at_ms: int | None = None
    messages: list[JsonObject] = Field(default_factory=list)
    events: list[JsonObject] = Field(default_factory=list)
    memory_entries: list[JsonObject] = Field(default_factory=list)


class SessionSnapshot(Record):
    """Everything stored for one session, in commit order."""

    session_id: SessionId
    # Committed turns, seq 1..n with no gaps.
    turns: list[StoredTurn] = Field(default_factory=list)
    session_memory: JsonObject | None = None
    inquiry: JsonObject | None = None
    # Live content entries, ordered by ref.
    content_entries: list[JsonObject] = Field(default_factory=list)
    last_run: JsonObject | None = None
    # What a store could not read back (`read_snapshot`): left on disk, not returned, and
    # never part of an export file.
    damage: tuple[str, ...] = Field(default=(), exclude=True)

    @model_validator(mode="after")
    def _whole(self) -> SessionSnapshot:
        for index, turn in enumerate(self.turns, start=1):
            if turn.seq != index:
                raise ValueError(f"turn {turn.turn_id!r} has seq {turn.seq}, expected {index}")
        _check_unique((t.turn_id for t in self.turns), "turn id")
        _check_refs(self.content_entries)
        _check_unique((e["ref"] for e in self.content_entries), "content ref")
        for kind in ("messages", "events", "memory_entries"):
            ids = (item["id"] for t in self.turns for item in getattr(t, kind) if "id" in item)
            _check_unique(ids, f"{kind} id")
        return self

    @property
    def turn_count(self) -> int:
        return len(self.turns)

    @property
    def last_committed_at_ms(self) -> int | None:
        """The latest turn's commit time, if the runtime gave one."""
        stamps = (t.committed_at_ms for t in reversed(self.turns) if t.committed_at_ms is not None)
        return next(stamps, None)

    @property
    def messages(self) -> list[JsonObject]:
        """Session history, flattened across turns."""
        return [m for t in self.turns for m in t.messages]

    @property
    def events(self) -> list[JsonObject]:
        """The event log, flattened across turns."""
        return [e for t in self.turns for e in t.events]

    @property
    def memory_entries(self) -> list[JsonObject]:
        """Session memory entries, flattened across turns."""
        return [m for t in self.turns for m in t.memory_entries]


class SessionInfo(Record):
    """A line of `Storage.list_sessions()`."""

    session_id: SessionId
    turn_count: int = Field(ge=0)
    last_committed_at_ms: int | None = None
    # What a person named the conversation (`Storage.rename_session`); None until then.
    title: str | None = None


class RuntimeStateRecord(Record):
    """Runtime-instance state: the summary of the most recent run, any session."""

    last_run: JsonObject | None = None


class ExportFile(Record):
    """The JSON file one session travels in between browser and CPython."""

    format: Literal["agrun.session"]
    format_version: Literal[1]
    session: SessionSnapshot


def _check_refs(entries: list[JsonObject]) -> None:
    for entry in entries:
        ref = entry.get("ref")
        if not isinstance(ref, str) or not ref:
            raise ValueError(f"a content entry needs a non-empty string 'ref', got {ref!r}")


def _check_unique(values: Iterable[Any], what: str) -> None:
    seen: set[Any] = set()
    for value in values:
        key = value if isinstance(value, str | int) else repr(value)
        if key in seen:
            raise ValueError(f"duplicated {what} {value!r}")
        seen.add(key)
