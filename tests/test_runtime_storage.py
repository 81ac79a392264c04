"""The runtime on the `Storage` port: resume, one commit per turn, faults, two writers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import agrun
from agrun import CancelToken, ConfigError, FunctionSkill, SkillContext, SkillHelpers
from agrun.ports import Storage
from agrun.storage import (
    ImportRejected,
    MemoryStorage,
    RuntimeStateRecord,
    SessionInfo,
    SessionSnapshot,
    StorageError,
    StorageFatalError,
    StorageRetryableError,
    TurnCommit,
)
from agrun.testing import FixedClock, SequentialIds
from conftest import make_runtime

cpython_only = pytest.mark.cpython_only


def _sqlite(path: Path) -> Storage:
    from agrun.adapters.sqlite import SqliteStorage  # absent in Pyodide

    return SqliteStorage(path / "agrun.sqlite3")


FACTORIES: dict[str, Callable[[Path], Storage]] = {
    "memory": lambda _path: MemoryStorage(),
    "sqlite": _sqlite,
}


@pytest.fixture(
    params=[
        pytest.param("memory", id="memory"),
        pytest.param("sqlite", id="sqlite", marks=cpython_only),
        pytest.param("postgres", id="postgres", marks=cpython_only),
    ]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    if request.param == "postgres":
        from agrun.adapters.postgres import PostgresStorage  # absent in Pyodide

        return PostgresStorage(request.getfixturevalue("postgres_conninfo"))
    return FACTORIES[request.param](tmp_path)


# -- helpers -----------------------------------------------------------------------------------


class TaggedIds:
    """Sequential ids with a per-writer tag, so two runtimes never mint the same id."""

    def __init__(self, tag: str) -> None:
        self._inner = SequentialIds()
        self._tag = tag

    def new_id(self, prefix: str) -> str:
        return self._inner.new_id(f"{prefix}.{self._tag}")


def note(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    helpers.append_memory({"kind": "fact", "text": f"note {input}"})
    return f"noted {input}"


def boom(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    helpers.append_memory({"text": f"never kept {input}"})
    raise RuntimeError(f"boom on {input}")


def data_out(input: str, context: SkillContext, helpers: SkillHelpers) -> Any:
    return {"reply": input, "n": [1, 2], "é": True}


SKILLS = (
    FunctionSkill("note", note),
    FunctionSkill("boom", boom),
    FunctionSkill("data", data_out),
)


def make(storage: Any, **options: Any) -> agrun.Runtime:
    return make_runtime(*SKILLS, storage=storage, **options)


def talk(runtime: agrun.Runtime) -> list[tuple[str, str, str]]:
    return [(m.id, m.role, m.content) for m in runtime.history]


def mem(runtime: agrun.Runtime) -> list[tuple[int, str, str, str, str]]:
    return [(e.seq, e.id, e.run_id, e.kind, e.text) for e in runtime.memory.read_all()]


def mem_wire(runtime: agrun.Runtime) -> list[dict[str, Any]]:
    return [e.to_wire() for e in runtime.memory.read_all()]


async def snapshot(store: Storage, session_id: str = "default") -> SessionSnapshot:
    snap = await store.load_session(session_id)
    assert snap is not None
    return snap


class FlakyStorage:
    """A real `Storage` in front of another one that fails on demand.

    ``commit_failures`` commits raise `StorageRetryableError` before reaching the store
    (or, with ``fail_after_write``, after the store wrote the turn: an ambiguous failure);
    ``load_failures`` / ``list_failures`` do the same for reads (``list_failures`` counts
    the turn-start check, ``session_info``, and ``list_sessions`` alike).
    """

    def __init__(
        self,
        inner: Storage,
        *,
        fail_after_write: bool = False,
        error: type[StorageError] = StorageRetryableError,
    ) -> None:
        self.inner = inner
        self.error = error
        self.commit_failures = 0
        self.load_failures = 0
        self.list_failures = 0
        self.fail_after_write = fail_after_write
        self.attempts: list[str] = []

    async def commit_turn(self, commit: TurnCommit) -> int:
        self.attempts.append(commit.turn_id)
        if self.commit_failures:
            self.commit_failures -= 1
            if self.fail_after_write:
                await self.inner.commit_turn(commit)
            raise self.error("database is locked")
        return await self.inner.commit_turn(commit)

    async def load_session(
        self, session_id: str, *, all_events: bool = True
    ) -> SessionSnapshot | None:
        if self.load_failures:
            self.load_failures -= 1
            raise StorageRetryableError("load failed")
        return await self.inner.load_session(session_id, all_events=all_events)

    async def list_sessions(self) -> list[SessionInfo]:
        if self.list_failures:
            self.list_failures -= 1
            raise StorageRetryableError("list failed")
        return await self.inner.list_sessions()

    async def session_info(self, session_id: str) -> SessionInfo | None:
        if self.list_failures:
            self.list_failures -= 1
            raise StorageRetryableError("list failed")
        return await self.inner.session_info(session_id)

    async def read_global_memory(self) -> list[dict[str, Any]]:
        return await self.inner.read_global_memory()

    async def append_global_memory(self, entries: Sequence[dict[str, Any]]) -> None:
        await self.inner.append_global_memory(entries)

    async def read_runtime_state(self) -> RuntimeStateRecord:
        return await self.inner.read_runtime_state()

    async def export_session(self, session_id: str) -> str:
        return await self.inner.export_session(session_id)

    async def import_session(self, json_text: str | bytes, *, replace: bool = False) -> str:
        return await self.inner.import_session(json_text, replace=replace)

    async def rename_session(self, session_id: str, title: str | None) -> None:
        await self.inner.rename_session(session_id, title)

    async def clear_session(self, session_id: str) -> bool:
        return await self.inner.clear_session(session_id)

    async def delete_session(self, session_id: str) -> bool:
        return await self.inner.delete_session(session_id)

    async def close(self) -> None:
        await self.inner.close()


class CountingStorage(FlakyStorage):
    """Counts the global-memory calls that reach the store."""

    def __init__(self, inner: Storage) -> None:
        super().__init__(inner)
        self.global_reads = 0
        self.global_appends = 0

    async def read_global_memory(self) -> list[dict[str, Any]]:
        self.global_reads += 1
        return await self.inner.read_global_memory()

    async def append_global_memory(self, entries: Sequence[dict[str, Any]]) -> None:
        self.global_appends += 1
        await self.inner.append_global_memory(entries)


# -- 1. resume ---------------------------------------------------------------------------------


async def test_a_fresh_runtime_resumes_history_memory_last_run_and_numbering(
    store: Storage,
) -> None:
    a = make(store, ids=TaggedIds("a"))
    assert (await a.run("tea", skill="note")).state.status == "succeeded"
    assert (await a.run("x", skill="data")).state.status == "succeeded"

    b = make(store, ids=TaggedIds("b"))
    assert talk(b) == [] and b.state.last_run is None
    await b.open()

    expected_talk = [
        ("run.a-1:user", "user", "tea"),
        ("run.a-1:assistant", "assistant", "noted tea"),
        ("run.a-2:user", "user", "x"),
        ("run.a-2:assistant", "assistant", '{"reply":"x","n":[1,2],"é":true}'),
    ]
    assert talk(a) == expected_talk
    assert talk(b) == expected_talk
    assert [m.to_wire() for m in b.history] == [m.to_wire() for m in a.history]
    assert mem(b) == [
        (1, "mem.a-1", "run.a-1", "fact", "note tea"),
        (2, "mem.a-2", "run.a-1", "observation", "noted tea"),
        (3, "mem.a-3", "run.a-2", "observation", '{"reply":"x","n":[1,2],"é":true}'),
    ]
    assert mem_wire(b) == mem_wire(a)
    assert b.state.last_run is not None and a.state.last_run is not None
    assert b.state.last_run.to_wire() == a.state.last_run.to_wire()
    assert b.state.last_run.run_id == "run.a-2"
    assert b.storage_status() == {
        "persistent": True,
        "sessionId": "default",
        "pending": 0,
        "lastError": None,
        "unreadable": [],
    }

    stored_events = (await snapshot(store)).events
    assert [e["seq"] for e in stored_events] == list(range(1, len(stored_events) + 1))

    result = await b.run("milk", skill="note")
    assert result.state.status == "succeeded"
    first = len(stored_events) + 1
    assert [e.seq for e in result.events] == list(range(first, first + len(result.events)))
    assert mem(b)[3:] == [
        (4, "mem.b-1", "run.b-1", "fact", "note milk"),
        (5, "mem.b-2", "run.b-1", "observation", "noted milk"),
    ]
    snap = await snapshot(store)
    assert [t.turn_id for t in snap.turns] == ["run.a-1", "run.a-2", "run.b-1"]
    assert [e["seq"] for e in snap.events] == list(range(1, len(snap.events) + 1))
    assert [e["seq"] for e in snap.memory_entries] == [1, 2, 3, 4, 5]
    assert snap.memory_entries == mem_wire(b)
    assert snap.messages == [m.to_wire() for m in b.history]


async def test_a_run_resumes_without_an_explicit_open(store: Storage) -> None:
    a = make(store, ids=TaggedIds("a"))
    await a.run("one", skill="note")
    b = make(store, ids=TaggedIds("b"))
    await b.run("two")
    assert talk(b) == [
        ("run.a-1:user", "user", "one"),
        ("run.a-1:assistant", "assistant", "noted one"),
        ("run.b-1:user", "user", "two"),
        ("run.b-1:assistant", "assistant", "echo: two"),
    ]
    assert [e[0] for e in mem(b)] == [1, 2, 3]


async def test_sessions_are_kept_apart(store: Storage) -> None:
    ids = SequentialIds()
    a = make(store, ids=ids, session_id="alpha")
    b = make(store, ids=ids, session_id="beta")
    await a.run("for alpha")
    await b.run("for beta")
    assert talk(b) == [
        ("run-2:user", "user", "for beta"),
        ("run-2:assistant", "assistant", "echo: for beta"),
    ]
    assert [s.session_id for s in await store.list_sessions()] == ["alpha", "beta"]
    assert b.storage_status()["sessionId"] == "beta"


async def test_without_storage_the_runtime_is_not_persistent() -> None:
    runtime = make(None)
    await runtime.open()
    await runtime.run("hi")
    # The conversation is held in memory (a model turn needs it), and only there.
    assert [m.content for m in runtime.history] == ["hi", "echo: hi"]
    assert make(None).history == ()
    assert runtime.global_memory == ()
    assert runtime.storage_status() == {
        "persistent": False,
        "sessionId": None,
        "pending": 0,
        "lastError": None,
        "unreadable": [],
    }


# -- 2. and 3. failed and cancelled runs -------------------------------------------------------


async def test_a_failed_run_commits_only_its_events_and_last_run(store: Storage) -> None:
    runtime = make(store)
    await runtime.run("tea", skill="note")
    before = await snapshot(store)

    result = await runtime.run("bad", skill="boom")
    assert result.state.status == "failed"
    assert result.error is not None and result.error.code == "skill_error"

    after = await snapshot(store)
    assert [t.turn_id for t in after.turns] == ["run-1", "run-2"]
    failed = after.turns[1]
    # Only the person's words are kept, marked with how the run ended.
    assert failed.messages == [m.to_wire() for m in result.messages]
    assert [(m["content"], m["runStatus"], m["errorCode"]) for m in failed.messages] == [
        ("bad", "failed", "skill_error")
    ]
    assert failed.memory_entries == []
    assert failed.events == [e.to_wire() for e in result.events]
    assert failed.events[-1]["kind"] == "RunFailed"
    assert after.messages == [*before.messages, *failed.messages]
    assert after.memory_entries == before.memory_entries
    assert after.last_run is not None
    assert after.last_run["runId"] == "run-2"
    assert after.last_run["status"] == "failed"
    assert after.last_run["error"]["code"] == "skill_error"
    assert talk(runtime) == [
        ("run-1:user", "user", "tea"),
        ("run-1:assistant", "assistant", "noted tea"),
        ("run-2:user", "user", "bad"),
    ]
    assert [e[0] for e in mem(runtime)] == [1, 2]

    ok = await runtime.run("milk", skill="note")
    assert ok.state.status == "succeeded"
    final = await snapshot(store)
    assert [t.turn_id for t in final.turns] == ["run-1", "run-2", "run-3"]
    assert [m["content"] for m in final.messages] == [
        "tea",
        "noted tea",
        "bad",
        "milk",
        "noted milk",
    ]
    assert [(e["seq"], e["text"]) for e in final.memory_entries] == [
        (1, "note tea"),
        (2, "noted tea"),
        (3, "note milk"),
        (4, "noted milk"),
    ]
    assert final.last_run is not None and final.last_run["status"] == "succeeded"
    assert [e["seq"] for e in final.events] == list(range(1, len(final.events) + 1))

    resumed = make(store, ids=TaggedIds("r"))
    await resumed.open()
    assert talk(resumed) == talk(runtime)
    assert mem_wire(resumed) == mem_wire(runtime)


async def test_a_cancelled_run_leaves_history_and_memory_unchanged(store: Storage) -> None:
    runtime = make(store)
    await runtime.run("tea", skill="note")
    before = await snapshot(store)

    token = CancelToken()
    token.cancel("the person left")
    result = await runtime.run("never", skill="note", signal=token)
    assert result.state.status == "cancelled"

    after = await snapshot(store)
    assert [t.turn_id for t in after.turns] == ["run-1", "run-2"]
    kept = after.turns[1].messages
    assert [(m["content"], m["runStatus"], m["errorCode"]) for m in kept] == [
        ("never", "cancelled", "cancelled")
    ]
    assert after.turns[1].memory_entries == []
    assert after.turns[1].events == [e.to_wire() for e in result.events]
    assert after.turns[1].events[-1]["kind"] == "RunCancelled"
    assert after.messages == [*before.messages, *kept]
    assert after.memory_entries == before.memory_entries
    assert after.last_run is not None
    assert (after.last_run["runId"], after.last_run["status"]) == ("run-2", "cancelled")
    assert talk(runtime) == [
        ("run-1:user", "user", "tea"),
        ("run-1:assistant", "assistant", "noted tea"),
        ("run-2:user", "user", "never"),
    ]
    resumed = make(store, ids=TaggedIds("r"))
    await resumed.open()
    assert resumed.state.last_run is not None
    assert resumed.state.last_run.status == "cancelled"
    assert talk(resumed) == talk(runtime)


# -- 4. storage faults -------------------------------------------------------------------------


@pytest.mark.parametrize("error", [StorageRetryableError, StorageFatalError])
async def test_a_failed_commit_waits_and_goes_first_at_the_next_turn(
    store: Storage, error: type[StorageError]
) -> None:
    flaky = FlakyStorage(store, error=error)
    runtime = make(flaky)
    flaky.commit_failures = 1

    result = await runtime.run("tea", skill="note")
    assert result.state.status == "succeeded"
    assert result.output == "noted tea"
    assert runtime.storage_status() == {
        "persistent": True,
        "sessionId": "default",
        "pending": 1,
        "lastError": f"{error.__name__}: database is locked",
        "unreadable": [],
    }
    assert await store.load_session("default") is None
    # The turn is kept in memory meanwhile.
    assert talk(runtime) == [
        ("run-1:user", "user", "tea"),
        ("run-1:assistant", "assistant", "noted tea"),
    ]

    await runtime.run("milk", skill="note")
    assert runtime.storage_status()["pending"] == 0
    assert runtime.storage_status()["lastError"] is None
    assert flaky.attempts == ["run-1", "run-1", "run-2"]
    snap = await snapshot(store)
    assert [(t.seq, t.turn_id) for t in snap.turns] == [(1, "run-1"), (2, "run-2")]
    assert [m["id"] for m in snap.messages] == [
        "run-1:user",
        "run-1:assistant",
        "run-2:user",
        "run-2:assistant",
    ]
    assert [e["seq"] for e in snap.memory_entries] == [1, 2, 3, 4]
    assert [e["seq"] for e in snap.events] == list(range(1, len(snap.events) + 1))
    assert snap.last_run is not None and snap.last_run["runId"] == "run-2"


async def test_turns_pile_up_in_order_while_commits_keep_failing(store: Storage) -> None:
    flaky = FlakyStorage(store)
    runtime = make(flaky)
    flaky.commit_failures = 3  # run 1's commit, run 2's retry at turn start, run 2's flush

    await runtime.run("one")
    await runtime.run("two", skill="boom")
    assert runtime.storage_status()["pending"] == 2
    assert await store.list_sessions() == []

    await runtime.run("three")
    assert runtime.storage_status()["pending"] == 0
    assert flaky.attempts == ["run-1", "run-1", "run-1", "run-1", "run-2", "run-3"]
    snap = await snapshot(store)
    assert [t.turn_id for t in snap.turns] == ["run-1", "run-2", "run-3"]
    assert [m["content"] for m in snap.messages] == [
        "one",
        "echo: one",
        "two",
        "three",
        "echo: three",
    ]
    assert [m.get("runStatus") for m in snap.messages] == [None, None, "failed", None, None]
    assert [e["seq"] for e in snap.memory_entries] == [1, 2]


async def test_an_ambiguous_commit_failure_is_not_stored_twice(store: Storage) -> None:
    flaky = FlakyStorage(store, fail_after_write=True)
    runtime = make(flaky)
    flaky.commit_failures = 1

    await runtime.run("tea", skill="note")
    assert runtime.storage_status()["pending"] == 1
    await runtime.run("milk")
    assert runtime.storage_status() == {
        "persistent": True,
        "sessionId": "default",
        "pending": 0,
        "lastError": None,
        "unreadable": [],
    }
    snap = await snapshot(store)
    assert [t.turn_id for t in snap.turns] == ["run-1", "run-2"]
    assert [m["id"] for m in snap.messages] == [
        "run-1:user",
        "run-1:assistant",
        "run-2:user",
        "run-2:assistant",
    ]
    assert [e["seq"] for e in snap.memory_entries] == [1, 2, 3]
    assert talk(runtime) == [(m["id"], m["role"], m["content"]) for m in snap.messages]


@pytest.mark.parametrize(
    ("failing", "message"),
    [("list_failures", "list failed"), ("load_failures", "load failed")],
)
async def test_a_read_failure_at_open_is_not_raised(
    store: Storage, failing: str, message: str
) -> None:
    writer = make(store, ids=TaggedIds("a"))
    await writer.run("tea", skill="note")

    flaky = FlakyStorage(store)
    setattr(flaky, failing, 1)
    runtime = make(flaky, ids=TaggedIds("b"))
    await runtime.open()  # does not raise
    assert runtime.storage_status() == {
        "persistent": True,
        "sessionId": "default",
        "pending": 0,
        "lastError": f"StorageRetryableError: {message}",
        "unreadable": [],
    }
    assert runtime.history == ()
    assert runtime.memory.read_all() == ()
    assert runtime.state.last_run is None

    # The fault has passed: the next open takes the session up.
    await runtime.open()
    assert talk(runtime) == talk(writer)
    assert mem_wire(runtime) == mem_wire(writer)
    await runtime.run("milk")
    assert runtime.storage_status()["lastError"] is None
    snap = await snapshot(store)
    assert [t.turn_id for t in snap.turns] == ["run.a-1", "run.b-1"]
    assert [e["seq"] for e in snap.memory_entries] == [1, 2, 3]


# -- 5. two writers ----------------------------------------------------------------------------


async def test_two_runtimes_alternating_see_each_others_turns(store: Storage) -> None:
    a = make(store, ids=TaggedIds("a"))
    b = make(store, ids=TaggedIds("b"))
    order = [(a, "a", "one"), (b, "b", "two"), (a, "a", "three"), (b, "b", "four")]
    order += [(a, "a", "five")]
    for runtime, _tag, text in order:
        result = await runtime.run(text, skill="note")
        assert result.state.status == "succeeded"

    expected = []
    counters = {"a": 0, "b": 0}
    for _runtime, tag, text in order:
        counters[tag] += 1
        run_id = f"run.{tag}-{counters[tag]}"
        expected += [(f"{run_id}:user", "user", text)]
        expected += [(f"{run_id}:assistant", "assistant", f"noted {text}")]
    assert talk(a) == expected
    await b.open()
    assert talk(b) == expected

    snap = await snapshot(store)
    assert [(m["id"], m["role"], m["content"]) for m in snap.messages] == expected
    assert [e["seq"] for e in snap.memory_entries] == list(range(1, 11))
    ids = [e["id"] for e in snap.memory_entries]
    assert len(set(ids)) == len(ids) == 10
    assert [e["text"] for e in snap.memory_entries[::2]] == [
        "note one",
        "note two",
        "note three",
        "note four",
        "note five",
    ]
    assert mem_wire(a) == snap.memory_entries
    assert mem_wire(b) == snap.memory_entries
    seqs = [e["seq"] for e in snap.events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert a.state.last_run is not None and b.state.last_run is not None
    assert b.state.last_run.to_wire() == a.state.last_run.to_wire()
    assert b.state.last_run.run_id == "run.a-3"


# -- 6. global memory switch -------------------------------------------------------------------


async def test_global_memory_off_neither_reads_nor_touches_stored_rows(store: Storage) -> None:
    rows = [{"id": "g1", "text": "prefers metric units"}, {"id": "g2", "text": "in Lyon"}]
    await store.append_global_memory(rows)

    counting = CountingStorage(store)
    off = make(counting, global_memory=False)
    await off.open()
    await off.run("tea", skill="note")
    await off.run("bad", skill="boom")
    await off.open()
    assert counting.global_reads == 0
    assert counting.global_appends == 0
    assert off.global_memory == ()
    assert await store.read_global_memory() == rows
    # Session memory is still written.
    assert [e["text"] for e in (await snapshot(store)).memory_entries] == [
        "note tea",
        "noted tea",
    ]

    on_counting = CountingStorage(store)
    on = make(on_counting, ids=TaggedIds("on"))
    assert on.global_memory == ()
    await on.open()
    assert [(e.id, e.text) for e in on.global_memory] == [(r["id"], r["text"]) for r in rows]
    assert on_counting.global_reads == 1
    assert talk(on) == talk(off)


# -- 7. determinism ----------------------------------------------------------------------------


async def test_the_same_script_exports_byte_identical_sessions() -> None:
    async def script() -> str:
        store = MemoryStorage()
        runtime = make(store, session_id="det")
        await runtime.run("tea", skill="note")
        await runtime.run("bad", skill="boom")
        await runtime.run("x", skill="data")
        token = CancelToken()
        token.cancel()
        await runtime.run("gone", signal=token)
        await runtime.run("plain")
        return await store.export_session("det")

    first = await script()
    second = await script()
    assert first == second
    exported = json.loads(first)
    assert [t["turnId"] for t in exported["session"]["turns"]] == [
        "run-1",
        "run-2",
        "run-3",
        "run-4",
        "run-5",
    ]
    stamps = [t["committedAtMs"] for t in exported["session"]["turns"]]
    assert stamps == sorted(stamps) and len(set(stamps)) == 5
    assert exported["session"]["lastRun"]["runId"] == "run-5"


# -- 8. bad options ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"storage": 42}, r"storage must be a Storage .*got int"),
        ({"storage": object()}, r"storage must be a Storage \(it has no commit_turn\(\)\)"),
        ({"storage": MemoryStorage(), "session_id": ""}, r"session_id must be a non-empty"),
        ({"storage": MemoryStorage(), "session_id": "   "}, r"session_id must be a non-empty"),
        ({"storage": MemoryStorage(), "session_id": 7}, r"session_id must be a non-empty"),
        ({"storage": MemoryStorage(), "global_memory": "no"}, r"global_memory must be a bool"),
        ({"global_memory": 0}, r"global_memory must be a bool"),
    ],
    ids=["storage-42", "storage-object", "empty-id", "blank-id", "int-id", "gm-str", "gm-int"],
)
def test_bad_storage_options_raise_config_error(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        agrun.create_runtime(**options)


# -- 9. export from SQLite, resume from memory -------------------------------------------------


@cpython_only
async def test_a_sqlite_session_exported_resumes_in_a_memory_store(tmp_path: Path) -> None:
    path = tmp_path / "by-path.sqlite3"
    source = make(str(path), session_id="move")  # a path string opens SQLite
    await source.run("tea", skill="note")
    await source.run("bad", skill="boom")
    await source.run("x", skill="data")

    from agrun.adapters.sqlite import SqliteStorage

    sqlite = SqliteStorage(path)
    exported = await sqlite.export_session("move")

    memory = MemoryStorage()
    assert await memory.import_session(exported) == "move"
    assert await memory.export_session("move") == exported

    resumed = make(memory, ids=TaggedIds("m"), session_id="move")
    await resumed.open()
    assert talk(resumed) == talk(source)
    assert [m.to_wire() for m in resumed.history] == [m.to_wire() for m in source.history]
    assert mem_wire(resumed) == mem_wire(source)
    assert resumed.state.last_run is not None and source.state.last_run is not None
    assert resumed.state.last_run.to_wire() == source.state.last_run.to_wire()

    result = await resumed.run("milk", skill="note")
    stored = (await snapshot(sqlite, "move")).events
    assert result.events[0].seq == len(stored) + 1
    assert [e[0] for e in mem(resumed)] == [1, 2, 3, 4, 5]
    await sqlite.close()


# -- blind writers ----------------------------------------------------------------------------


async def test_a_turn_run_while_storage_was_unreadable_does_not_break_the_session(
    store: Storage,
) -> None:
    writer = make(store, ids=TaggedIds("a"))
    await writer.run("tea", skill="note")

    flaky = FlakyStorage(store)
    flaky.load_failures = 1
    blind = make(flaky, ids=TaggedIds("b"))
    assert (await blind.run("milk", skill="note")).state.status == "succeeded"

    # The blind turn numbered its entries without seeing the stored ones; the stored order
    # is the authority, and every reader renumbers positions from it.
    assert (await writer.run("sugar")).state.status == "succeeded"
    snap = await snapshot(store)
    held = writer.memory.read_all()
    assert [e.id for e in held] == [e["id"] for e in snap.memory_entries]
    assert [e.seq for e in held] == list(range(1, len(held) + 1))
    assert len({e.id for e in held}) == len(held)
    resumed = make(store, ids=TaggedIds("c"))
    await resumed.open()
    assert [e.id for e in resumed.memory.read_all()] == [e.id for e in held]


async def test_a_run_whose_task_is_cancelled_still_commits_its_closed_turn(
    store: Storage,
) -> None:
    started = asyncio.Event()

    async def wait_forever(input: str, context: SkillContext, helpers: SkillHelpers) -> None:
        helpers.append_memory({"text": "never kept"})
        started.set()
        await asyncio.Event().wait()

    runtime = agrun.create_runtime(
        clock=FixedClock(),
        ids=SequentialIds(),
        skills=[FunctionSkill("wait", wait_forever)],
        storage=store,
    )
    task = asyncio.ensure_future(runtime.run("x", skill="wait"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    snap = await snapshot(store)
    assert [turn.turn_id for turn in snap.turns] == ["run-1"]
    assert [(m["content"], m["runStatus"]) for m in snap.turns[0].messages] == [("x", "cancelled")]
    assert snap.memory_entries == []
    assert snap.turns[0].events[-1]["kind"] == "RunCancelled"
    assert snap.last_run is not None and snap.last_run["status"] == "cancelled"


async def test_a_session_moves_between_runtimes_by_export_and_import() -> None:
    source = make(MemoryStorage(), ids=TaggedIds("a"))
    await source.run("tea", skill="note")
    await source.run("hello")
    exported = await source.export_session()

    target = make(MemoryStorage(), ids=TaggedIds("b"))
    await target.import_session(exported)
    assert talk(target) == talk(source)
    assert [e.to_wire() for e in target.memory.read_all()] == [
        e.to_wire() for e in source.memory.read_all()
    ]
    assert target.state.last_run == source.state.last_run
    assert await target.export_session() == exported


@pytest.mark.parametrize(
    ("mangle", "problem"),
    [
        (lambda text: text[:-10], "JSON"),
        (lambda text: text.replace('"sessionId":"default"', '"sessionId":"other"', 1), "other"),
        (lambda text: text.replace('"formatVersion":1', '"formatVersion":99', 1), "99"),
    ],
)
async def test_a_bad_import_is_rejected_and_changes_nothing(
    mangle: Callable[[str], str], problem: str
) -> None:
    source = make(MemoryStorage(), ids=TaggedIds("a"))
    await source.run("hello")
    target = make(MemoryStorage(), ids=TaggedIds("b"))
    await target.run("mine")
    before = await target.export_session()
    with pytest.raises(ImportRejected, match=problem):
        await target.import_session(mangle(await source.export_session()), replace=True)
    assert await target.export_session() == before
    with pytest.raises(ImportRejected):
        await target.import_session(await source.export_session())  # exists, no replace
    assert await target.export_session() == before


async def test_export_needs_storage() -> None:
    with pytest.raises(ConfigError, match="storage"):
        await agrun.create_runtime().export_session()
