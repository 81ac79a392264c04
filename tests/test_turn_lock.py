"""The runtime holds a shared store's lock on its session around each operation
(`SessionLocks`, kernel/_turn_lock.py), and goes on without it when it cannot be taken."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from agrun import FunctionSkill
from agrun.ports import SessionLocks
from agrun.storage import MemoryStorage, SessionInfo, StorageRetryableError, TurnCommit
from conftest import make_runtime


class LockingStore(MemoryStorage):
    """A memory store that logs its session lock and the calls made under it."""

    def __init__(self, *, refuse: bool = False) -> None:
        super().__init__()
        self.log: list[str] = []
        self.refuse = refuse

    @contextlib.asynccontextmanager
    async def hold_session(self, session_id: str) -> AsyncIterator[None]:
        if self.refuse:
            raise StorageRetryableError("lock server unreachable")
        self.log.append(f"hold {session_id}")
        try:
            yield
        finally:
            self.log.append(f"free {session_id}")

    async def session_info(self, session_id: str) -> SessionInfo | None:
        self.log.append("info")
        return await super().session_info(session_id)

    async def commit_turn(self, commit: TurnCommit) -> int:
        self.log.append("commit")
        return await super().commit_turn(commit)


def skill(store: LockingStore) -> FunctionSkill:
    def note(input: str, context: object, helpers: object) -> str:
        store.log.append("skill")
        return f"noted {input}"

    return FunctionSkill("note", note)


async def test_a_turn_runs_inside_the_stores_session_lock() -> None:
    store = LockingStore()
    assert isinstance(store, SessionLocks)
    rt = make_runtime(skill(store), storage=store, session_id="chat")
    assert (await rt.run("one", skill="note")).ok
    await rt.export_session()
    assert store.log == [
        "hold chat", "info", "skill", "commit", "free chat",  # the turn, whole
        "hold chat", "free chat",  # the export
    ]  # fmt: skip


async def test_a_lock_that_cannot_be_taken_costs_no_turn() -> None:
    store = LockingStore(refuse=True)
    rt = make_runtime(skill(store), storage=store, session_id="chat")
    assert (await rt.run("one", skill="note")).ok
    assert (await rt.run("two", skill="note")).ok
    status = rt.storage_status()
    assert status["pending"] == 0 and "lock server unreachable" in status["lastError"]
    snap = await store.load_session("chat")
    assert snap is not None and snap.turn_count == 2
    assert not any(line.startswith("hold") for line in store.log)


async def test_a_store_without_session_locks_is_not_asked_for_one() -> None:
    store = MemoryStorage()
    assert not isinstance(store, SessionLocks)
    rt = make_runtime(storage=store, session_id="chat")
    assert (await rt.run("hi")).ok
