"""Storage errors: the outside world's fault, split by what the caller can do about it.

    AgrunError
    └── StorageError             persistence failed
        ├── StorageRetryableError   transient (busy database, aborted transaction): try again
        ├── StorageFatalError       the store is unusable (disk full, no permission, broken file)
        │   └── SchemaTooNew        written by a newer agrun; refused, never wiped
        ├── SessionNotFound         no session with that id (export of an unknown session)
        ├── ImportRejected          an export file is corrupt, hostile or from an unknown format
        └── StorageDegraded         a write the page's store refuses while it runs on memory

`StorageError` itself is defined with the rest of agrun's tree (``agrun._errors``) and
re-exported here. A failed call has changed nothing: every write is one transaction.
"""

from __future__ import annotations

from .._base import StorageError

__all__ = [
    "FATAL_ERROR_NAMES",
    "RETRYABLE_ERROR_NAMES",
    "ImportRejected",
    "SchemaTooNew",
    "SessionNotFound",
    "StorageDegraded",
    "StorageError",
    "StorageFatalError",
    "StorageRetryableError",
]


class StorageRetryableError(StorageError):
    """A transient failure (locked database, aborted transaction); the same call may succeed."""

    code = "storage_retryable"


class StorageFatalError(StorageError):
    """The store cannot be used any more (full, forbidden, corrupt); switch to a fallback."""

    code = "storage_fatal"


class SchemaTooNew(StorageFatalError):
    """The database was written by a newer agrun; it is left untouched."""

    code = "storage_schema_too_new"

    def __init__(self, found: int, known: int, where: str = "database") -> None:
        super().__init__(
            f"{where} has schema version {found}, but this agrun knows only up to {known}; "
            "upgrade agrun or point it at another file (the data was left untouched)"
        )
        self.found = found
        self.known = known


class SessionNotFound(StorageError):
    """No session is stored under the id asked for."""

    code = "session_not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"no stored session {session_id!r}: list_sessions() shows what is stored")
        self.session_id = session_id


class ImportRejected(StorageError, ValueError):
    """An exported session could not be imported; nothing was changed."""

    code = "import_rejected"


class StorageDegraded(StorageError):
    """The page's store fell back to memory and refuses this write, which it could not
    replay safely once the database is back (an import without ``replace``); nothing was
    changed. Retry with ``replace=True``, or once storage is restored."""

    code = "storage_degraded"


# Browser storage error names (DOMException names) after which a store is not worth trying
# again: the page's resilient store (web/storage/resilient.js, FATAL_ERROR_NAMES) falls back
# to memory on them, and the bridge raises `StorageFatalError`. A test keeps the two equal.
FATAL_ERROR_NAMES = frozenset(
    {
        "InvalidStateError",
        "QuotaExceededError",
        "SecurityError",
        "NotAllowedError",
        "UnknownError",
        "NotFoundError",
        "NotReadableError",
        "VersionError",
    }
)
# Names of transient failures: the same call may succeed (`StorageRetryableError`).
RETRYABLE_ERROR_NAMES = frozenset({"AbortError", "ConstraintError", "TransactionInactiveError"})
