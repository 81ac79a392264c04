"""A session's run traces, bounded and persisted where content already is (issue 22.1).

Each `RunTrace` is kept as one content record under ``trace:<run_id>`` (kind ``object``):
every `Storage` adapter (memory, SQLite, IndexedDB, any later one) already persists a
session's content records with each turn's commit, upserted by ref, with evicted refs
deleted, and an export carries them with their digests. So traces need no new table, no
new commit field and no adapter change; they are read back on resume like the content
store's entries are, and an import checks their digests the same way.

They are bounded on their own, apart from the replies' content store (a trace never
pushes out a reply the model may still read): ``max_bytes`` per session, the oldest run's
trace evicted first, evictions counted. The session splits the stored records by the
``trace:`` prefix, so ``read_content`` never reaches a trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from .._base import AgrunError, thaw
from ..content import ContentEntry, ContentLimits, ContentStore
from ..sensitive import SensitiveContentFilter
from ._trace import ExtractionTrace, RunTrace

__all__ = ["TRACE_BYTES", "TRACE_PREFIX", "TraceNotFound", "TraceStore", "is_trace"]

TRACE_PREFIX = "trace:"
# Per session: a turn's trace is about 16 KB when its pack holds 80-odd entries (they are
# listed, never their text), so this keeps the last hundred-odd turns.
TRACE_BYTES = 2_000_000


def is_trace(ref: str) -> bool:
    """Whether a stored content record is a run's trace."""
    return ref.startswith(TRACE_PREFIX)


class TraceNotFound(AgrunError, LookupError):
    """No trace is kept for a run (never a model turn, evicted, or another session's)."""

    code = "trace_not_found"

    def __init__(self, run_id: str, evictions: int) -> None:
        self.run_id = run_id
        evicted = f" ({evictions} older traces were evicted to stay in bounds)" if evictions else ""
        super().__init__(
            f"no trace is kept for run {run_id!r}: it was not a model turn of this session, "
            f"or its trace was evicted{evicted}"
        )


class TraceStore:
    """One session's traces: put at each model turn's end, read by ``why``."""

    def __init__(
        self,
        sensitivity: SensitiveContentFilter,
        *,
        scrub: Callable[[str], str] | None = None,
        max_bytes: int = TRACE_BYTES,
    ) -> None:
        # A content store of its own: its bounds, eviction order (least recently used: a
        # trace is never read through it, so oldest first), counters and commit changes.
        self._store = ContentStore(
            ContentLimits(max_entries=1 << 30, max_bytes=max_bytes), sensitivity
        )
        self._scrub = scrub
        self.refused = 0

    @property
    def evictions(self) -> int:
        return self._store.evictions

    def counters(self) -> dict[str, int]:
        """Traces held, bytes held, evictions, and traces refused (too big or unsafe)."""
        held = self._store.counters()
        return {
            "traces": held["entries"],
            "bytesHeld": held["bytesHeld"],
            "evictions": held["evictions"],
            "refused": self.refused,
        }

    def put(self, trace: RunTrace, now_ms: int) -> bool:
        """Keep ``trace`` (its texts scrubbed first); False if it could not be kept."""
        ref, body = TRACE_PREFIX + trace.run_id, trace.to_wire()
        # Its texts scrubbed, and the copy checked and scanned for the content store, in
        # one walk where it can be (the slow path gives the same entry or refusal).
        if self._scrub is not None:
            kept = self._store.put_scrubbed(
                ref, body, self._scrub, run_id=trace.run_id, now_ms=now_ms
            )
        else:
            kept = self._store.put(ref, body, run_id=trace.run_id, now_ms=now_ms)
        if kept is None:
            self.refused += 1
        return kept is not None

    def add_extractions(self, run_id: str, calls: Iterable[ExtractionTrace]) -> None:
        """Add the memory extraction's calls (made after the answer) to run ``run_id``'s
        trace, which keeps its place in the eviction order; nothing if it is not held."""
        entry = self._store.entries.get(TRACE_PREFIX + run_id)
        calls = tuple(calls)
        if entry is None or not calls:
            return
        trace = _read(entry)
        self.put(trace.model_copy(update={"extractions": calls}), entry.created_at)

    def get(self, run_id: str) -> RunTrace:
        """The trace of run ``run_id``.

        Raises:
            TraceNotFound: none is kept for it.
        """
        entry = self._store.entries.get(TRACE_PREFIX + run_id)
        if entry is None:
            raise TraceNotFound(run_id, self.evictions)
        return _read(entry)

    def traces(self) -> list[RunTrace]:
        """Every trace held, oldest first."""
        entries = sorted(self._store.entries.values(), key=lambda e: (e.created_at, e.ref))
        return [_read(entry) for entry in entries]

    def resume(self, rows: Iterable[Mapping[str, Any]]) -> list[str]:
        """Take up the stored traces; returns what could not be read."""
        problems = self._store.resume(rows)
        for entry in list(self._store.entries.values()):
            try:
                _read(entry)
            except ValidationError as error:
                del self._store.entries[entry.ref]
                problems.append(f"trace {entry.ref!r}: {error.errors()[0]['msg']}")
        return problems

    def take_changes(self) -> tuple[list[ContentEntry], list[str]]:
        """What changed since the last commit: records to write, refs evicted."""
        return self._store.take_changes()


def _read(entry: ContentEntry) -> RunTrace:
    return RunTrace.model_validate(thaw(entry.body))
