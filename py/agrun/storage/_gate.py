"""The global-memory switch (``globalMemory.enabled``) at the storage level.

Off, global memory is neither read nor written through this store: reads return nothing,
appends and the promotions inside a turn commit are dropped. The rows already stored are
never touched, so switching it back on brings them back.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._port import Storage
from ._records import JsonObject, RuntimeStateRecord, SessionInfo, SessionSnapshot, TurnCommit

__all__ = ["GlobalMemoryGate"]


class GlobalMemoryGate:
    """A `Storage` that forwards to ``inner``, with global memory switched on or off."""

    def __init__(self, inner: Storage, *, enabled: bool = True) -> None:
        self._inner = inner
        self.enabled = enabled

    async def commit_turn(self, commit: TurnCommit) -> int:
        if not self.enabled and commit.global_memory:
            commit = commit.model_copy(update={"global_memory": []})
        return await self._inner.commit_turn(commit)

    async def load_session(self, session_id: str) -> SessionSnapshot | None:
        return await self._inner.load_session(session_id)

    async def list_sessions(self) -> list[SessionInfo]:
        return await self._inner.list_sessions()

    async def read_global_memory(self) -> list[JsonObject]:
        if not self.enabled:
            return []
        return await self._inner.read_global_memory()

    async def append_global_memory(self, entries: Sequence[JsonObject]) -> None:
        if self.enabled:
            await self._inner.append_global_memory(entries)

    async def read_runtime_state(self) -> RuntimeStateRecord:
        return await self._inner.read_runtime_state()

    async def export_session(self, session_id: str) -> str:
        return await self._inner.export_session(session_id)

    async def import_session(self, json_text: str | bytes, *, replace: bool = False) -> str:
        return await self._inner.import_session(json_text, replace=replace)

    async def close(self) -> None:
        await self._inner.close()
