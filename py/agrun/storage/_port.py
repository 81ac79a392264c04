"""The `Storage` port: how the core persists sessions, memory and runtime state.

The rule every adapter keeps: one turn is one atomic unit. After a crash, a reload or a
failed call, a session holds either the whole turn (messages, events, memory entries,
snapshots, content, lastRun, global-memory promotions) or none of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ._records import JsonObject, RuntimeStateRecord, SessionInfo, SessionSnapshot, TurnCommit

__all__ = ["Storage"]


@runtime_checkable
class Storage(Protocol):
    """Async persistence for sessions, global memory and runtime state.

    Errors are `StorageError` subclasses: `StorageRetryableError` (try again),
    `StorageFatalError` (switch to a fallback), `ImportRejected`, `SessionNotFound`.
    """

    async def commit_turn(self, commit: TurnCommit) -> int:
        """Write one turn atomically and return its seq (1, 2, ... within the session).

        A ``turn_id`` the session already holds is not written again; its seq is returned.
        """
        ...

    async def load_session(self, session_id: str) -> SessionSnapshot | None:
        """Everything committed for ``session_id``, or None if nothing was."""
        ...

    async def list_sessions(self) -> list[SessionInfo]:
        """Every stored session, ordered by id."""
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
