"""`create_runtime`: the public way to make a runtime, with the environment's defaults.

The kernel never chooses its own clock, ids or store (`agrun.kernel.assemble_runtime`
takes them); this function takes them from the caller, or from the environment's adapters
(``agrun.adapters.environment``), which it imports only when it needs one: importing agrun
loads no adapter, and a runtime given all its ports never touches one.
"""

from __future__ import annotations

import os
from typing import Unpack

from .kernel import Runtime, RuntimeConfig, RuntimeOptions, assemble_runtime
from .ports import Clock, Ids, Storage, SyncTransport

__all__ = ["create_runtime"]


def create_runtime(
    *,
    clock: Clock | None = None,
    ids: Ids | None = None,
    storage: Storage | str | os.PathLike[str] | None = None,
    sync_transport: SyncTransport | None = None,
    **options: Unpack[RuntimeOptions],
) -> Runtime:
    """Create a runtime.

    Args:
        clock: where time comes from; the system clock if None.
        ids: where ids come from; random UUIDs if None.
        storage: where the session persists: a `Storage`, a file path for SQLite (the
            CPython default store), or a ``postgresql://`` URL for PostgreSQL (many
            processes sharing sessions; needs psycopg, docs/storage.md); None keeps
            everything in memory only.
        sync_transport: how the ``sync`` option's server is reached; the environment's
            HTTP stack (httpx) if None.
        **options: the runtime's other options, each documented on
            `agrun.kernel.RuntimeConfig`, which checks them (docs/kernel.md lists them).

    Raises:
        ConfigError: an option has the wrong type or value; the message names it.
        DuplicateSkillError: two skills share a name.
    """
    # Checked first: a bad option creates no SQLite file.
    config = RuntimeConfig.of(options)
    wants_transport = config.sync is not None and sync_transport is None
    if clock is None or ids is None or isinstance(storage, (str, os.PathLike)) or wants_transport:
        from .adapters import environment

        clock = environment.default_clock() if clock is None else clock
        ids = environment.default_ids() if ids is None else ids
        if isinstance(storage, (str, os.PathLike)):
            storage = environment.open_store_at(storage)
        if wants_transport:
            sync_transport = environment.default_sync_transport()
    assert not isinstance(storage, (str, os.PathLike))
    return assemble_runtime(
        config, clock=clock, ids=ids, storage=storage, sync_transport=sync_transport
    )
