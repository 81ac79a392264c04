"""Every port through which the pure core reaches the world, as small Protocols.

The core never reads ambient time, ids or randomness, never does I/O and never counts
tokens by itself: it asks one of these. Adapters (`agrun.adapters`) give real ones;
`agrun.testing` gives fixed and in-memory ones, so the same inputs replay byte for byte.

    Clock       time, for timestamps and durations
    Ids         unique identifiers
    Tokenizer   what a text costs a model
    Ranker      relevance of texts to a query (context synthesis)
    Compressor  which spans of a text to keep (context synthesis)
    Redactor    secrets scrubbed out of a text
    Storage     sessions, memory and runtime state, one atomic commit per turn
    SessionLocks  (optional, on a Storage) one session's turns serialized across processes
    Provider    a model: a request in, a stream of typed events out
    Embedder    a text embedding model: texts in, vectors out (recall's similarity)
    SyncTransport  posts JSON text to a sync server (a page's session <-> a server's)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol, runtime_checkable

from ._base import ConfigError
from .chat import ModelRequest, StreamEvent
from .storage._records import (
    JsonObject,
    RuntimeStateRecord,
    SessionInfo,
    SessionSnapshot,
    TurnCommit,
)

__all__ = [
    "HOOK_SHAPES",
    "STORAGE_METHODS",
    "Clock",
    "Compressor",
    "Embedder",
    "Ids",
    "Provider",
    "Ranker",
    "Redactor",
    "SessionLocks",
    "Span",
    "Storage",
    "SyncTransport",
    "Tokenizer",
    "TurnStartReads",
    "check_hook",
]

# A kept ``[start, end)`` range of a text.
Span = tuple[int, int]


@runtime_checkable
class Clock(Protocol):
    """Wall-clock time for timestamps and durations."""

    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        ...


@runtime_checkable
class Ids(Protocol):
    """A source of unique identifiers."""

    def new_id(self, prefix: str) -> str:
        """A new id, unique within this source, starting with ``prefix``."""
        ...


@runtime_checkable
class Tokenizer(Protocol):
    """Counts the tokens a model would pay for a piece of text. Must be deterministic: a
    runtime's builds keep a message's count from one turn to the next (`BuildMemo`)."""

    def count(self, text: str) -> int:
        """How many tokens ``text`` costs."""
        ...


@runtime_checkable
class Ranker(Protocol):
    """Scores documents against a query; higher is more relevant. Must be deterministic."""

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One score per document, in the documents' order."""
        ...


@runtime_checkable
class Compressor(Protocol):
    """Shrinks one input to at most ``limit`` tokens by choosing spans of it."""

    name: str

    def compress(self, text: str, *, limit: int, tokenizer: Tokenizer) -> list[Span]:
        """Kept ``[start, end)`` spans, ascending and non-overlapping; may be empty."""
        ...


@runtime_checkable
class Redactor(Protocol):
    """Scrubs secrets out of a text. Must be deterministic: a runtime's builds keep a
    message's redacted text from one turn to the next (`BuildMemo`)."""

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced."""
        ...


@runtime_checkable
class Storage(Protocol):
    """Async persistence for sessions, global memory and runtime state.

    Errors are `StorageError` subclasses: `StorageRetryableError` (try again),
    `StorageFatalError` (switch to a fallback), `ImportRejected`, `SessionNotFound`.
    """

    async def commit_turn(self, commit: TurnCommit) -> int:
        """Write one turn atomically and return its seq (1, 2, ... within the session).

        A ``turn_id`` the session already holds is not written again; its seq is returned.
        The store numbers the turn's memory entries (their ``seq``) after the ones the
        session already holds, so numbers on disk stay unique whoever committed first.
        """
        ...

    async def load_session(
        self, session_id: str, *, all_events: bool = True
    ) -> SessionSnapshot | None:
        """Everything committed for ``session_id``, or None if nothing was.

        With ``all_events=False`` only the last turn keeps its events (the others' are
        empty): what a resume needs (the next event number), at a quarter of the bytes.

        Never fails on what is stored: what cannot be read is left out, left on disk and
        named in the snapshot's ``damage``.
        """
        ...

    async def list_sessions(self) -> list[SessionInfo]:
        """Every stored session, ordered by id."""
        ...

    async def session_info(self, session_id: str) -> SessionInfo | None:
        """One session's line (its turn count), or None: what a turn start checks, in time
        that does not grow with the number of sessions or turns."""
        ...

    async def rename_session(self, session_id: str, title: str | None) -> None:
        """Store ``title`` with the session (None removes it); a session not stored yet is
        stored with no turns, so a conversation can be named before its first turn."""
        ...

    async def clear_session(self, session_id: str) -> bool:
        """Remove what the session's turns stored: turns, messages, events, memory entries,
        session memory, inquiry, content (traces included) and its ``lastRun``. The session
        stays, under its id and title, with no turns; global memory and the runtime state
        are not the session's and stay.

        Returns:
            Whether the session was stored.
        """
        ...

    async def delete_session(self, session_id: str) -> bool:
        """Remove the session entirely: what `clear_session` removes, and its title and line
        in `list_sessions`. Global memory promoted from it stays.

        Returns:
            Whether the session was stored.
        """
        ...

    async def read_global_memory(self) -> list[JsonObject]:
        """Global memory entries, oldest first."""
        ...

    async def append_global_memory(self, entries: Sequence[JsonObject]) -> None:
        """Append entries to global memory (one transaction)."""
        ...

    async def read_runtime_state(self) -> RuntimeStateRecord:
        """Runtime-instance state: the lastRun of the most recent commit."""
        ...

    async def export_session(self, session_id: str) -> str:
        """One session as an export file (JSON text).

        Raises:
            SessionNotFound: nothing is stored under ``session_id``.
        """
        ...

    async def import_session(self, json_text: str | bytes, *, replace: bool = False) -> str:
        """Store a session from an export file and return its id.

        Raises:
            ImportRejected: the file is corrupt, hostile, of an unknown format version, or
                names a stored session and ``replace`` is false. Nothing was changed.
        """
        ...

    async def close(self) -> None:
        """Release the store; later calls raise `StorageFatalError`."""
        ...


@runtime_checkable
class SessionLocks(Protocol):
    """What a `Storage` shared by many processes adds: a lock on one session's turns.

    The runtime holds it around each operation on its session (resume, run, commit, the
    memory close after the answer), so two processes' turns on one session never
    interleave, as the Web Lock keeps two tabs apart. The store releases it if the process
    holding it dies. A store without it (memory, SQLite) is used by one process at a time.
    """

    def hold_session(self, session_id: str) -> AbstractAsyncContextManager[None]:
        """Hold ``session_id``'s lock for the ``async with`` block.

        Raises:
            StorageError: the lock could not be taken (the runtime then goes on without it).
        """
        ...


@runtime_checkable
class TurnStartReads(Protocol):
    """What a `Storage` whose every call is a hop (the page's JavaScript store: each await
    of a JavaScript promise is a task of its own) adds: a turn start's two reads in one
    call. Without it the runtime asks `read_global_memory` and `session_info` side by side.
    """

    async def read_turn_start(self, session_id: str) -> tuple[list[JsonObject], SessionInfo | None]:
        """Global memory's rows and ``session_id``'s line, as the two reads give them."""
        ...


@runtime_checkable
class Provider(Protocol):
    """A model behind a chat-completions style API.

    ``stream`` yields `TextDelta` and `ToolCallDelta` events as they arrive and one
    `Finish` last. Cancelling the task that iterates it (or closing the iterator) must stop
    the call, the HTTP request included. Failures raise `ProviderError` subclasses.
    """

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The reply to ``request``, as it streams."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """A text embedding model: one vector per text, texts close in meaning near each other
    (recall compares them by cosine similarity). Failures raise `ProviderError` subclasses;
    the runtime then builds without the similarity signal and the turn goes on."""

    async def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """The vectors of ``texts``, in order, all of one length."""
        ...


@runtime_checkable
class SyncTransport(Protocol):
    """Posts a JSON body to a sync server and returns the whole reply (docs/storage.md
    "Sync"): httpx in CPython, the browser's ``fetch`` in a page."""

    async def post(self, url: str, body: str, headers: Mapping[str, str]) -> tuple[int, str]:
        """The reply's status and body text.

        Raises:
            SyncError: the server could not be reached (no status at all).
        """
        ...


# Every method a `Storage` has (a test checks this against the Protocol): what a store
# handed to agrun is checked for, so a partial one fails at creation, not mid-turn.
STORAGE_METHODS = (
    "commit_turn",
    "load_session",
    "list_sessions",
    "session_info",
    "rename_session",
    "clear_session",
    "delete_session",
    "read_global_memory",
    "append_global_memory",
    "read_runtime_state",
    "export_session",
    "import_session",
    "close",
)


# What a host's context hook must offer, by option name: its method and the signature an
# error shows. Checked by `check_hook` wherever a hook is taken (create_runtime, and each
# build_context call).
HOOK_SHAPES = {
    "tokenizer": ("count", "count(text) -> int"),
    "ranker": ("score", "score(query, documents) -> list[float]"),
    "redactor": ("redact", "redact(text) -> str"),
}

# Plain data is never a port, even where it has a method of the right name (a str or a
# list has ``count``): taking it would only fail later, or be replaced by a default.
_DATA = (str, bytes, bytearray, int, float, complex, list, tuple, dict, set, frozenset)


def check_hook(option: str, value: object) -> None:
    """Refuse a host's tokenizer, ranker or redactor of the wrong type.

    Raises:
        ConfigError: ``value`` is plain data or has no callable method of the hook's
            (``option`` names it: ``tokenizer``, ``ranker`` or ``redactor``).
    """
    method, shape = HOOK_SHAPES[option]
    if isinstance(value, _DATA) or not callable(getattr(value, method, None)):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise ConfigError(
            f"{option} must have {shape} (a {option.capitalize()}), or be None for the "
            f"default; got {type(value).__name__} {shown}"
        )
