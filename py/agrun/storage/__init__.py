"""The `Storage` port, its records and errors. Adapters live in `agrun.adapters`."""

from ._errors import (
    ImportRejected,
    SchemaTooNew,
    SessionNotFound,
    StorageError,
    StorageFatalError,
    StorageRetryableError,
)
from ._gate import GlobalMemoryGate
from ._port import Storage
from ._records import (
    EXPORT_FORMAT,
    FORMAT_VERSION,
    RuntimeStateRecord,
    SessionInfo,
    SessionSnapshot,
    StoredTurn,
    TurnCommit,
)
from ._transfer import dump_session, parse_session

__all__ = [
    "EXPORT_FORMAT",
    "FORMAT_VERSION",
    "GlobalMemoryGate",
    "ImportRejected",
    "RuntimeStateRecord",
    "SchemaTooNew",
    "SessionInfo",
    "SessionNotFound",
    "SessionSnapshot",
    "Storage",
    "StorageError",
    "StorageFatalError",
    "StorageRetryableError",
    "StoredTurn",
    "TurnCommit",
    "dump_session",
    "parse_session",
]
