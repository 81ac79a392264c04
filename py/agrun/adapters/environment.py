"""The environment, chosen once: the real clock and ids, and the default store for a path.

CPython and Pyodide share these: both have a wall clock and ``uuid``. A file path means
SQLite, CPython's embedded store, and a ``postgresql://`` URL a PostgreSQL server shared by
many processes; in a page, the JS bridge passes its IndexedDB store as a `Storage` instead,
so Pyodide never needs ``sqlite3`` or psycopg.
"""

from __future__ import annotations

import os

from ..ports import Clock, Ids, Storage, SyncTransport
from .system import SystemClock, UuidIds

__all__ = [
    "POSTGRES_SCHEMES",
    "default_clock",
    "default_ids",
    "default_sync_transport",
    "open_store_at",
]

# A `storage=` string starting with one of these names a PostgreSQL server, not a file.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def default_clock() -> Clock:
    """The host's wall clock."""
    return SystemClock()


def default_ids() -> Ids:
    """Random UUID ids."""
    return UuidIds()


def open_store_at(path: str | os.PathLike[str]) -> Storage:
    """The store for a ``postgresql://`` (or ``postgres://``) URL: PostgreSQL; for a file
    path: SQLite (CPython's embedded default)."""
    # Imported here: Pyodide may lack sqlite3 and psycopg, and never opens a path.
    if isinstance(path, str) and path.startswith(POSTGRES_SCHEMES):
        from .postgres import PostgresStorage

        return PostgresStorage(path)
    from .sqlite import SqliteStorage

    return SqliteStorage(path)


def default_sync_transport() -> SyncTransport:
    """POSTs to a sync server on the environment's HTTP stack (httpx, or a page's ``fetch``).

    Raises:
        ConfigError: in CPython without httpx (install ``agrun[http]``).
    """
    from .openai._presets import default_transport
    from .sync_client import HttpSyncTransport

    return HttpSyncTransport(default_transport())
