"""What crosses the `Storage` port (records, export files, errors) and the in-memory store.

The port itself is `agrun.ports.Storage`; stores that do I/O live in `agrun.adapters`."""

from ._errors import (
    ImportRejected,
    SchemaTooNew,
    SessionNotFound,
    StorageDegraded,
    StorageError,
    StorageFatalError,
    StorageRetryableError,
)
from ._memory import MemoryStorage
from ._records import (
    EXPORT_FORMAT,
    FORMAT_VERSION,
    MAX_SESSION_ID,
    ContentRecord,
    RuntimeStateRecord,
    SessionInfo,
    SessionSnapshot,
    StoredTurn,
    TurnCommit,
)
from ._sync import SyncError, SyncForbidden, SyncPush, SyncReply, push_commits, push_for
from ._transfer import dump_session, parse_session, read_snapshot

__all__ = [
    "EXPORT_FORMAT",
    "FORMAT_VERSION",
    "MAX_SESSION_ID",
    "ContentRecord",
    "ImportRejected",
    "MemoryStorage",
    "RuntimeStateRecord",
    "SchemaTooNew",
    "SessionInfo",
    "SessionNotFound",
    "SessionSnapshot",
    "StorageDegraded",
    "StorageError",
    "StorageFatalError",
    "StorageRetryableError",
    "StoredTurn",
    "SyncError",
    "SyncForbidden",
    "SyncPush",
    "SyncReply",
    "TurnCommit",
    "dump_session",
    "parse_session",
    "push_commits",
    "push_for",
    "read_snapshot",
]
