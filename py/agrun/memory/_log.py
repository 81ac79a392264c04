"""Runtime memory: an append-only log of canonical entries (spec 000, "Memory Contract").

Memory is for what later runs should know; it is not state and not a trace. The runtime
owns the entry shape: a skill only *requests* an append (`MemoryEntryRequest`, checked
the moment it is made), and the runtime turns accepted requests into `MemoryEntry`
values when the run succeeds. There is no update and no delete; readers get frozen
entries in append order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError

from .._base import FrozenData, MemoryEntryError, Model

__all__ = [
    "MemoryEntry",
    "MemoryEntryRequest",
    "MemoryLog",
    "MemoryView",
    "live_entries",
    "parse_request",
]

Kind = Annotated[str, StringConstraints(strict=True, pattern=r"^[A-Za-z0-9_.:-]{1,64}$")]
Text = Annotated[str, StringConstraints(strict=True, min_length=1), Field(strict=True)]


class MemoryEntryRequest(Model):
    """What a skill asks the runtime to remember."""

    kind: Kind = "note"
    """A short label (letters, digits, ``_ . : -``; up to 64), e.g. ``fact`` or ``preference``."""
    text: Text
    """The text to remember; not empty."""
    data: FrozenData = Field(default_factory=dict)
    """Optional plain data (JSON object) kept beside the text."""


class MemoryEntry(Model):
    """One retained memory entry, in the runtime's canonical shape."""

    id: str
    """Unique id from the runtime's ``Ids`` port."""
    seq: int
    """1-based position in this runtime's memory log."""
    run_id: str
    """The run that appended it."""
    kind: str
    """The entry's label (``observation`` for entries the runtime derived)."""
    text: str
    """What is remembered."""
    data: FrozenData = Field(default_factory=dict)
    """Plain data kept beside the text."""
    created_at: int
    """Clock milliseconds when the runtime appended it."""
    source: Literal["observation", "skill"]
    """Who asked: the runtime's observation policy or a skill's explicit request."""
    skill: str | None = None
    """The skill whose run produced it."""


_FIELDS = ("kind", "text", "data")


def parse_request(entry: Any) -> MemoryEntryRequest:
    """Check a requested entry now, so a malformed one fails where it was made.

    Args:
        entry: a `MemoryEntryRequest`, or a mapping with ``text`` and optional ``kind``
            and ``data``.

    Raises:
        MemoryEntryError: naming the first bad field.
    """
    if isinstance(entry, MemoryEntryRequest):
        return entry
    if not isinstance(entry, Mapping):
        raise MemoryEntryError(
            "entry",
            "expected a dict with 'text' (and optional 'kind', 'data'), "
            f"got {type(entry).__name__}",
        )
    try:
        return MemoryEntryRequest.model_validate(dict(entry))
    except ValidationError as exc:
        raise _first_problem(exc) from None


def _first_problem(exc: ValidationError) -> MemoryEntryError:
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else "entry"
    if error["type"] == "extra_forbidden":
        return MemoryEntryError(field, f"unknown field; allowed fields are {', '.join(_FIELDS)}")
    if error["type"] == "missing":
        return MemoryEntryError(field, "is required")
    message = error["msg"].removeprefix("Value error, ")
    return MemoryEntryError(field, f"{message} (got {error['input']!r})")


class MemoryLog:
    """The runtime's append-only memory. Only the runtime appends; nothing is removed."""

    def __init__(self) -> None:
        self._entries: list[MemoryEntry] = []

    def __len__(self) -> int:
        return len(self._entries)

    def read_all(self) -> tuple[MemoryEntry, ...]:
        """Every entry, oldest first."""
        return tuple(self._entries)

    def resume(self, entries: Iterable[MemoryEntry]) -> None:
        """Take up the durable log: a session resumed from storage, or extended by another
        writer (a second tab). The stored order is the authority and ``seq`` is a position
        in it, so entries are renumbered 1..n: two writers that appended blind (storage
        unreadable at turn start) may have given out the same numbers."""
        self._entries = [
            entry if entry.seq == position else entry.model_copy(update={"seq": position})
            for position, entry in enumerate(entries, start=1)
        ]

    def append(self, entry: MemoryEntry) -> None:
        """Add one entry at the end; its ``seq`` must be the next position."""
        if entry.seq != len(self._entries) + 1:
            raise ValueError(f"memory entry seq {entry.seq} is not {len(self._entries) + 1}")
        self._entries.append(entry)


class MemoryView:
    """Read-only access to a `MemoryLog`: what skills and hosts get."""

    __slots__ = ("_log",)

    def __init__(self, log: MemoryLog) -> None:
        self._log = log

    def __len__(self) -> int:
        return len(self._log)

    def read_all(self) -> tuple[MemoryEntry, ...]:
        """Every retained entry, oldest first (frozen; changing one raises `ReadOnlyError`)."""
        return self._log.read_all()


def live_entries(entries: Sequence[MemoryEntry]) -> list[MemoryEntry]:
    """``entries`` without the forgotten ones and without the tombstones themselves (a
    ``forget`` entry names in ``data.forgets`` the entry it forgets; the log stays
    append-only): what packs and lists read."""
    forgotten = {e.data.get("forgets") for e in entries if e.kind == "forget"}
    return [e for e in entries if e.kind != "forget" and e.id not in forgotten]
