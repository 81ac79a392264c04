"""A runtime's conversations: list with titles, rename, clear and delete by id, on every
adapter (docs/storage.md, "Conversations")."""

from __future__ import annotations

from typing import Any

import pytest

import agrun
import test_runtime_storage
from agrun import ConfigError, FunctionSkill, SkillContext, SkillHelpers
from agrun.ports import Storage
from agrun.storage import MemoryStorage, SessionNotFound
from conftest import make_runtime

# The runtime storage suite's fixture: a fresh store of every adapter (PostgreSQL on the
# server the test run starts).
store = test_runtime_storage.store


def note(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    helpers.append_memory({"kind": "fact", "text": f"note {input}"})
    return f"noted {input}"


def make(storage: Storage, session_id: str, **options: Any) -> agrun.Runtime:
    return make_runtime(
        FunctionSkill("note", note), storage=storage, session_id=session_id, **options
    )


def texts(runtime: agrun.Runtime) -> list[str]:
    return [m.content for m in runtime.history]


async def test_sessions_are_listed_with_titles_and_renamed(store: Storage) -> None:
    first, second = make(store, "first"), make(store, "second")
    await first.run("a", skill="note")
    await second.run("b", skill="note")
    await first.rename_session("second", "  Groceries  ")
    await first.rename_session("first", "Trip")
    listed = [(s.session_id, s.turn_count, s.title) for s in await first.list_sessions()]
    assert listed == [("first", 1, "Trip"), ("second", 1, "Groceries")]
    await second.rename_session("second", None)
    assert [s.title for s in await second.list_sessions()] == ["Trip", None]


async def test_a_new_session_can_be_named_before_its_first_turn(store: Storage) -> None:
    runtime = make(store, "fresh")
    await runtime.rename_session("fresh", "Named early")
    await runtime.run("x", skill="note")
    [info] = await runtime.list_sessions()
    assert (info.session_id, info.turn_count, info.title) == ("fresh", 1, "Named early")


async def test_clearing_the_own_session_empties_the_runtime_and_keeps_its_id_and_title(
    store: Storage,
) -> None:
    runtime = make(store, "mine")
    await runtime.run("a", skill="note")
    await runtime.promote_to_global_memory(["likes tea"])
    await runtime.rename_session("mine", "Kept title")
    await runtime.clear_session("mine")
    assert runtime.history == ()
    assert runtime.memory.read_all() == ()
    assert runtime.session_memory is None
    assert runtime.state.last_run is None
    assert [e.text for e in runtime.global_memory] == ["likes tea"]
    [info] = await runtime.list_sessions()
    assert (info.session_id, info.turn_count, info.title) == ("mine", 0, "Kept title")
    await runtime.run("b", skill="note")
    assert texts(runtime) == ["b", "noted b"]
    # A reload sees the cleared session as it is now, global memory included.
    reloaded = make(store, "mine")
    await reloaded.open()
    assert texts(reloaded) == ["b", "noted b"]
    kept = [e.text for e in reloaded.memory.read_all()]
    assert kept == [e.text for e in runtime.memory.read_all()]
    assert "note b" in kept and "note a" not in kept
    assert [e.text for e in reloaded.global_memory] == ["likes tea"]


async def test_deleting_another_session_leaves_the_own_one(store: Storage) -> None:
    mine, other = make(store, "mine"), make(store, "other")
    await mine.run("a", skill="note")
    await other.run("b", skill="note")
    await mine.delete_session("other")
    assert [s.session_id for s in await mine.list_sessions()] == ["mine"]
    assert texts(mine) == ["a", "noted a"]
    with pytest.raises(SessionNotFound, match="other"):
        await mine.delete_session("other")
    with pytest.raises(SessionNotFound):
        await mine.clear_session("never")
    with pytest.raises(SessionNotFound):
        await mine.rename_session("never", "x")


async def test_deleting_the_own_session_empties_the_runtime_which_goes_on_under_its_id(
    store: Storage,
) -> None:
    runtime = make(store, "mine")
    await runtime.run("a", skill="note")
    await runtime.rename_session("mine", "Old title")
    await runtime.delete_session("mine")
    assert runtime.history == ()
    assert await runtime.list_sessions() == []
    # Deleting it again is not an error: it is this runtime's session, stored or not.
    await runtime.delete_session("mine")
    await runtime.run("b", skill="note")
    [info] = await runtime.list_sessions()
    assert (info.session_id, info.turn_count, info.title) == ("mine", 1, None)
    snap = await store.load_session("mine")
    assert snap is not None and [m["content"] for m in snap.messages] == ["b", "noted b"]


async def test_a_turn_after_a_clear_by_another_runtime_starts_from_the_cleared_session(
    store: Storage,
) -> None:
    mine, remover = make(store, "shared"), make(store, "elsewhere")
    await mine.run("a", skill="note")
    await remover.clear_session("shared")
    await mine.run("b", skill="note")  # the turn start takes up what storage holds: nothing
    assert texts(mine) == ["b", "noted b"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda rt: rt.rename_session("mine", "   "), "non-blank"),
        (lambda rt: rt.rename_session("mine", 7), "non-blank"),
        (lambda rt: rt.rename_session("mine", "x" * 201), "at most 200"),
        (lambda rt: rt.delete_session(""), "session id"),
        (lambda rt: rt.clear_session(None), "session id"),
    ],
)
async def test_bad_ids_and_titles_are_the_callers_error(call: Any, match: str) -> None:
    runtime = make(MemoryStorage(), "mine")
    with pytest.raises(ConfigError, match=match):
        await call(runtime)


async def test_without_storage_there_are_no_conversations() -> None:
    runtime = make_runtime(FunctionSkill("note", note))
    with pytest.raises(ConfigError, match="storage="):
        await runtime.list_sessions()
    with pytest.raises(ConfigError, match="storage="):
        await runtime.delete_session("default")
