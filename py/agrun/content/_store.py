"""The response content store (spec 002): what the agent said, kept whole, behind a ref.

History stays compact: a reply's message carries only ``content_ref``, ``content_kind``,
``content_bytes`` and ``content_digest``; the body waits here, session-scoped and bounded
by entries, bytes and an optional time to live, and a follow-up ("format that as a table")
reaches it on demand: a skill through ``context.content(ref)``, the model through the
built-in ``read_content`` tool the pack advertises, a host through ``content(ref)``. A
missing or evicted ref is the typed outcome `ContentRefNotFound`, never made-up content.
Eviction takes tool outputs (depth >= 1) before replies (depth 0), least-recently-used first
within each, decided by the clock port, so it replays exactly.
An entry cannot be changed: reading one only moves it up the LRU order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError

from .._base import (
    AgrunError,
    CheckedDict,
    CheckedList,
    Model,
    canonical_json,
    checked_height,
    find_uncrossable,
    freeze_json,
    plain_copy,
    scrubbed,
    thaw,
    thaw_json,
)
from ..context import term_set
from ..sensitive import SensitiveContentFilter

__all__ = [
    "ContentDigestMismatch",
    "ContentEntry",
    "ContentLimits",
    "ContentRefNotFound",
    "ContentStore",
    "canonical_json",
    "content_kind",
    "read_entries",
    "reply_text",
    "verified",
]

ContentKind = Literal["text", "object", "list", "number", "boolean", "null", "fallback"]


class ContentRefNotFound(AgrunError, LookupError):
    """No content is stored under a ref (never stored, evicted, or expired)."""

    code = "content_ref_not_found"

    def __init__(self, ref: str) -> None:
        self.ref = ref
        super().__init__(
            f"no content is stored under {ref!r}: it was evicted, expired, or never stored; "
            "answer from the conversation instead of inventing it"
        )


class ContentDigestMismatch(AgrunError, ValueError):
    """A stored body no longer matches the digest taken when it was stored (it was changed
    at rest, in storage or in an export file). It is never served: the entry is left out
    and reported as damage; reading its ref is `ContentRefNotFound`."""

    code = "content_digest_mismatch"

    def __init__(self, ref: str, digest: str, found: str) -> None:
        self.ref = ref
        self.digest = digest
        self.found = found
        super().__init__(
            f"the body stored under {ref!r} does not match its digest {digest} (it hashes to "
            f"{found}): it was changed after it was stored and is not served; "
            "the reply it stood for is still in the history"
        )


class _BodyDict(CheckedDict[str, Any]):
    """A stored body's object: read-only; ``copy.deepcopy`` gives plain, changeable data."""

    __slots__ = ()
    refusal = (
        "belongs to a stored content entry and is read-only (a skill cannot change what was "
        "said): take a copy (copy.deepcopy(entry.body) is plain data) and return it changed"
    )

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:  # type: ignore[override]
        copied: dict[str, Any] = thaw(self)
        return copied


class _BodyList(CheckedList[Any]):
    """A stored body's list: read-only; ``copy.deepcopy`` gives plain, changeable data."""

    __slots__ = ()
    refusal = _BodyDict.refusal

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:  # type: ignore[override]
        copied: list[Any] = thaw(self)
        return copied


# What the filter's one walk copies a body into (a body it checked needs no freezing after).
_CHECKED_BODY = (_BodyDict, _BodyList)


def _frozen_body(body: Any) -> Any:
    """``body``, a fresh copy the store owns, read-only (it may be already)."""
    return body if checked_height(body) is not None else freeze_json(body, _BodyDict, _BodyList)


def _freeze_body(value: Any) -> Any:
    # Deep read-only, yet still a dict / list to json.dumps, isinstance and pydantic.
    return freeze_json(thaw(value), _BodyDict, _BodyList)


class ContentEntry(Model):
    """One stored body (immutable, the body too; reading it only updates ``last_used_at``)."""

    ref: str
    kind: ContentKind
    body: Annotated[Any, AfterValidator(_freeze_body)]
    """The JSON-safe snapshot of the output (text, an object...); for ``fallback`` its text.
    Deeply read-only: a change raises `ReadOnlyError`."""
    bytes: int = Field(ge=0)
    """UTF-8 bytes of the body's JSON."""
    digest: str
    """``sha256:<hex>`` of the body's JSON."""
    run_id: str
    depth: int = Field(0, ge=0)
    """0 for a turn's own reply; 1 for a tool's output inside a turn."""
    serialization: Literal["json", "fallback"] = "json"
    """How the body was made: as it was, or a typed text fallback of something JSON could
    not carry."""
    error_class: str | None = None
    """For a failed outcome kept by opt-in: its error code."""
    created_at: int
    last_used_at: int
    expires_at: int | None = None

    def to_wire(self) -> dict[str, Any]:
        # The body is frozen JSON: thawed as such, not walked by pydantic's serializer,
        # whose nesting bound in WebAssembly (~50 levels) is below the 64 a body may reach,
        # and which costs twice as much per node.
        dumped = self.model_dump(mode="json", by_alias=True, exclude={"body"})
        wire: dict[str, Any] = {}
        for name, info in type(self).model_fields.items():
            key = info.serialization_alias or info.alias or name
            if name == "body":
                # A body checked as it was copied in (`checked_height`) goes out as it is:
                # read-only, and an encoder need not walk it again.
                body = self.body
                wire[key] = body if checked_height(body) is not None else thaw_json(body)
            elif key in dumped:
                wire[key] = dumped[key]
        return wire

    def summary(self) -> dict[str, Any]:
        """What a history message carries instead of the body."""
        return {
            "content_ref": self.ref,
            "content_kind": self.kind,
            "content_bytes": self.bytes,
            "content_digest": self.digest,
        }

    def first_line(self) -> str:
        """The body's first line as the reply in the history shows it (an object's JSON in
        its own key order), so a model can tell which reply a listed ref stands for."""
        text = reply_text(self.body)
        return text.strip().splitlines()[0] if text.strip() else ""

    def preview(self, chars: int = 60) -> str:
        """The body's first line, cut to ``chars`` (what the pack advertises)."""
        first = self.first_line()
        return first if len(first) <= chars else first[: chars - 1] + "…"


@dataclass(frozen=True)
class ContentLimits:
    """The store's bounds and what it keeps."""

    max_entries: int = 64
    max_bytes: int = 1_000_000
    ttl_ms: int | None = None
    keep_tool_outputs: bool = False
    """Depth 1: keep the outputs of a model's tool calls too (off: only the reply)."""
    keep_failures: tuple[str, ...] = ()
    """Error codes whose failed outcomes are kept (their messages), e.g. ``("skill_error",)``."""


def content_kind(value: Any) -> ContentKind:
    if value is None:
        return "null"
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (list, tuple)):
        return "list"
    return "object"


@dataclass
class ContentStore:
    """One session's content store. Changes are collected for the turn's commit."""

    limits: ContentLimits
    sensitivity: SensitiveContentFilter
    entries: dict[str, ContentEntry] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    _written: dict[str, ContentEntry] = field(default_factory=dict)
    _evicted: list[str] = field(default_factory=list)

    @property
    def bytes_held(self) -> int:
        return sum(entry.bytes for entry in self.entries.values())

    def counters(self) -> dict[str, int]:
        """Hits, misses, evictions and bytes held (for metrics and events)."""
        return {
            "hits": self.hits,
            "misses": self.misses,
            "evictions": self.evictions,
            "bytesHeld": self.bytes_held,
            "entries": len(self.entries),
        }

    def resume(self, rows: Iterable[Mapping[str, Any]]) -> list[str]:
        """Take up the stored entries; returns what could not be read."""
        entries, problems = read_entries(rows)
        self.entries = {entry.ref: entry for entry in entries}
        return problems

    def put(
        self,
        ref: str,
        value: Any,
        *,
        run_id: str,
        now_ms: int,
        depth: int = 0,
        error_class: str | None = None,
    ) -> ContentEntry | None:
        """Store ``value`` under ``ref`` (a new entry); None if the sensitive-content filter
        refuses it, it is larger than ``max_bytes``, or (depth >= 1) only evicting a
        depth-0 entry would make room for it. Evicts to stay within the limits: entries of
        depth >= 1 first, then depth 0, least recently used first within each."""
        # Most values are plain JSON data without a secret: copied, checked to cross and
        # scanned in one walk, and without an integral float there is nothing to make
        # canonical before the digest.
        clean = self.sensitivity.clean_copy(value, frozen=_CHECKED_BODY)
        if clean is not None:
            body, integral = clean
            return self._keep(
                ref,
                body,
                content_kind(value),
                "json",
                integral,
                run_id,
                now_ms,
                depth,
                error_class,
                scanned=True,
            )
        kind: ContentKind = "fallback"
        mode: Literal["json", "fallback"] = "fallback"
        plain = plain_copy(value)
        integral = True
        if plain is not None:
            (body, integral), kind, mode = plain, content_kind(value), "json"
        elif find_uncrossable(value) is None:
            body, kind, mode = thaw(value), content_kind(value), "json"
        else:
            body = f"{type(value).__name__}: {value!r}"[:100_000]
        return self._keep(ref, body, kind, mode, integral, run_id, now_ms, depth, error_class)

    def put_scrubbed(
        self, ref: str, value: Any, scrub: Callable[[str], str], *, run_id: str, now_ms: int
    ) -> ContentEntry | None:
        """``put(ref, scrubbed(value, scrub))``, in one walk when it can be: each string
        scrubbed, the copy checked to cross and scanned for secrets as it is made (a
        trace's store, at every turn's end). What is stored, and refused, is what that
        `put` gives."""
        clean = self.sensitivity.clean_copy(value, scrub=scrub, frozen=_CHECKED_BODY)
        if clean is None:
            return self.put(ref, scrubbed(value, scrub), run_id=run_id, now_ms=now_ms)
        body, integral = clean
        return self._keep(
            ref, body, content_kind(body), "json", integral, run_id, now_ms, 0, scanned=True
        )

    def _keep(
        self,
        ref: str,
        body: Any,
        kind: ContentKind,
        mode: Literal["json", "fallback"],
        integral: bool,
        run_id: str,
        now_ms: int,
        depth: int,
        error_class: str | None = None,
        *,
        scanned: bool = False,
    ) -> ContentEntry | None:
        """Keep ``body``, a fresh plain copy the store now owns (``scanned``: made by the
        filter's `clean_copy`, so only the host's check is left to ask)."""
        size, digest = _measure(body) if integral else _measure_json(canonical_json(body))
        check = self.sensitivity.check_host if scanned else self.sensitivity.check
        if size > self.limits.max_bytes or not check({"body": body}).allowed:
            # Too big to ever fit (nothing is evicted for it), or holding a secret.
            return None
        # The body is a fresh plain copy already: it is frozen once here, not thawed and
        # copied again by the model's validator (the other fields are still checked).
        entry = ContentEntry(
            ref=ref,
            kind=kind,
            body=None,
            bytes=size,
            digest=digest,
            run_id=run_id,
            depth=depth,
            serialization=mode,
            error_class=error_class,
            created_at=now_ms,
            last_used_at=now_ms,
            expires_at=None if self.limits.ttl_ms is None else now_ms + self.limits.ttl_ms,
        ).model_copy(update={"body": _frozen_body(body)})
        self.entries[ref] = entry
        self._written[ref] = entry
        # A new reply is never evicted for itself; a new tool output may be, rather than a
        # reply (depth 0 is kept first).
        self._evict(now_ms, keep=ref if depth == 0 else None)
        return entry if ref in self.entries else None

    def get(self, ref: str, *, now_ms: int) -> ContentEntry:
        """The entry under ``ref``, moved up the LRU order.

        Raises:
            ContentRefNotFound: nothing under ``ref`` (or it expired).
        """
        self._evict(now_ms)
        entry = self.entries.get(ref)
        if entry is None:
            self.misses += 1
            raise ContentRefNotFound(ref)
        self.hits += 1
        used = entry.model_copy(update={"last_used_at": now_ms})
        self.entries[ref] = used
        self._written[ref] = used
        return used

    def newest(self, count: int, *, now_ms: int) -> list[ContentEntry]:
        """The ``count`` most recently stored entries not expired at ``now_ms``, oldest
        first (what a pack advertises; the newest is last)."""
        return self._live(now_ms)[-count:] if count else []

    def listed(
        self, count: int, *, now_ms: int, about: str = "", newest: int = 2
    ) -> list[ContentEntry]:
        """What a pack advertises for a request that says ``about``: the ``newest`` most
        recent entries ("that", "your last two answers"), then the entries whose first line
        shares the most words with the request ("put the packing list in a table" names the
        list, not the small talk stored since), newer first on a tie, then the next newest;
        ``count`` in all, oldest first.
        """
        live = self._live(now_ms)
        if count <= 0:
            return []
        chosen = live[-min(newest, count) :]
        wanted = term_set(about)
        taken = {e.ref for e in chosen}  # refs are unique: no model compared field by field
        rest = [e for e in reversed(live) if e.ref not in taken]
        shared = {e.ref: len(wanted & term_set(e.first_line())) for e in rest}
        # sorted() keeps the newest-first order among equals.
        rest.sort(key=lambda e: -shared[e.ref])
        chosen = chosen + rest[: count - len(chosen)]
        return sorted(chosen, key=lambda e: (e.created_at, e.ref))

    def _live(self, now_ms: int) -> list[ContentEntry]:
        live = [e for e in self.entries.values() if not _expired(e, now_ms)]
        return sorted(live, key=lambda e: (e.created_at, e.ref))

    def holds_live(self, now_ms: int) -> bool:
        """Whether any entry is readable at ``now_ms`` (read_content is offered then)."""
        return any(not _expired(e, now_ms) for e in self.entries.values())

    def take_changes(self) -> tuple[list[ContentEntry], list[str]]:
        """What changed since the last commit: entries to write, refs evicted."""
        written = [e for ref, e in self._written.items() if ref in self.entries]
        evicted = list(self._evicted)
        self._written, self._evicted = {}, []
        return written, evicted

    def _evict(self, now_ms: int, keep: str | None = None) -> None:
        limits = self.limits
        for ref, entry in list(self.entries.items()):
            if _expired(entry, now_ms) and ref != keep:
                self._drop(ref)
        held = self.bytes_held
        if len(self.entries) <= limits.max_entries and held <= limits.max_bytes:
            return
        # One ordering, then drops from its front: dropping an entry does not change how
        # the others rank, so this is the repeated "evict the first" in n log n, however
        # many must go (an imported session of thousands taken up by a store of 8).
        for entry in sorted(
            (e for e in self.entries.values() if e.ref != keep), key=_eviction_rank
        ):
            if len(self.entries) <= limits.max_entries and held <= limits.max_bytes:
                break
            self._drop(entry.ref)
            held -= entry.bytes

    def _drop(self, ref: str) -> None:
        del self.entries[ref]
        self._written.pop(ref, None)
        self._evicted.append(ref)
        self.evictions += 1


def read_entries(rows: Iterable[Mapping[str, Any]]) -> tuple[list[ContentEntry], list[str]]:
    """Stored rows as entries, each body checked against its digest; the rows that could
    not be read (malformed, or `ContentDigestMismatch`) are left out and named."""
    entries: list[ContentEntry] = []
    problems: list[str] = []
    for row in rows:
        try:
            entries.append(verified(ContentEntry.model_validate(row)))
        except ValidationError as error:
            problems.append(f"content {row.get('ref')!r}: {error.errors()[0]['msg']}")
        except ContentDigestMismatch as error:
            problems.append(f"content {error.ref!r}: {error.code}: {error}")
    return entries, problems


def verified(entry: ContentEntry) -> ContentEntry:
    """``entry`` if its body still has the size and digest it was stored with.

    Raises:
        ContentDigestMismatch: the body was changed after it was stored.
    """
    size, digest = _measure(entry.body)
    if (size, digest) == (entry.bytes, entry.digest):
        return entry
    # An entry stored before integral floats were canonical hashed them as Python prints
    # them ("2.0"); it is still whole if that digest matches.
    legacy = canonical_json(entry.body).encode("utf-8")
    if (len(legacy), "sha256:" + hashlib.sha256(legacy).hexdigest()) == (entry.bytes, entry.digest):
        return entry
    raise ContentDigestMismatch(entry.ref, entry.digest, digest)


def _measure(body: Any) -> tuple[int, str]:
    """A body's UTF-8 size and ``sha256:`` digest, of its canonical JSON: keys sorted, and
    an integral float written as the integer (what JavaScript's JSON writes), so a body
    that went through IndexedDB hashes as it did when it was stored."""
    return _measure_json(canonical_json(_canonical(body)))


def _measure_json(canonical: str) -> tuple[int, str]:
    text = canonical.encode("utf-8")
    return len(text), "sha256:" + hashlib.sha256(text).hexdigest()


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    # A string, an int, a bool or None is itself: taken without a call each.
    if isinstance(value, Mapping):
        return {
            key: item if type(item) in _ITSELF else _canonical(item) for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [item if type(item) in _ITSELF else _canonical(item) for item in value]
    return value


_ITSELF = frozenset({str, int, bool, type(None)})


def _eviction_rank(entry: ContentEntry) -> tuple[bool, int, int, str]:
    # Spec 002: under pressure depth-0 continuity (the replies) outlasts the child chatter
    # (depth >= 1 tool outputs), so those go first; within a depth least recently used
    # first, a tie to the older ref (deterministic).
    return (entry.depth == 0, entry.last_used_at, entry.created_at, entry.ref)


def _expired(entry: ContentEntry, now_ms: int) -> bool:
    return entry.expires_at is not None and entry.expires_at <= now_ms


def reply_text(output: Any) -> str:
    """A run's output as the text of the reply in the history (JSON if it is not text)."""
    if isinstance(output, str):
        return output
    return json.dumps(thaw(output), ensure_ascii=False, separators=(",", ":"))
