"""When a turn is kept (issue 25.5, docs/storage.md "When the commit happens"): before
``run()`` returns by default, after it with ``commit_after_answer`` (a page's default), still
under the turn's lock, so the next operation, ``idle()`` and a trace read see it whole."""

from __future__ import annotations

import json
from typing import Any

import agrun
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider
from conftest import make_runtime


def runtime(store: MemoryStorage, **options: Any) -> agrun.Runtime:
    provider = ScriptedProvider(lambda request: "the answer")
    return make_runtime(
        provider=provider, model="scripted", memory_extraction="rules", storage=store, **options
    )


async def stored_turns(store: MemoryStorage) -> list[list[str]]:
    exported = json.loads(await store.export_session("default"))["session"]
    return [[m["content"] for m in turn["messages"]] for turn in exported["turns"]]


async def test_by_default_the_turn_is_committed_when_run_returns() -> None:
    store = MemoryStorage()
    rt = runtime(store)
    result = await rt.run("hello")
    assert result.ok and not rt.closing
    assert await stored_turns(store) == [["hello", "the answer"]]
    assert rt.why(result.state.run_id).calls  # its trace is kept with it


async def test_after_the_answer_the_turn_is_kept_before_anything_else_runs() -> None:
    store = MemoryStorage()
    rt = runtime(store, commit_after_answer=True)
    result = await rt.run("hello")
    # The answer is back; its commit has not been made yet, and is under way.
    assert result.ok and result.output == "the answer" and rt.closing
    assert await store.session_info("default") is None
    assert [m.content for m in rt.history] == ["hello", "the answer"]
    # A trace is readable at once: reading it keeps it now.
    assert rt.why(result.state.run_id).calls
    await rt.idle()
    assert not rt.closing
    assert await stored_turns(store) == [["hello", "the answer"]]
    # The next run waits for the one before to be kept, without an idle() between.
    await rt.run("again")
    second = await rt.run("and again")
    await rt.idle()
    assert await stored_turns(store) == [
        ["hello", "the answer"],
        ["again", "the answer"],
        ["and again", "the answer"],
    ]
    assert rt.why(second.state.run_id).calls


async def test_either_way_the_same_session_is_stored() -> None:
    before, after = MemoryStorage(), MemoryStorage()
    for store, options in ((before, {}), (after, {"commit_after_answer": True})):
        rt = runtime(store, **options)
        for text in ("one", "two", "three"):
            await rt.run(text)
        await rt.idle()
    assert await before.export_session("default") == await after.export_session("default")


async def test_an_export_waits_for_the_turn_to_be_kept() -> None:
    store = MemoryStorage()
    rt = runtime(store, commit_after_answer=True)
    await rt.run("hello")
    exported = json.loads(await rt.export_session())
    assert [m["content"] for m in exported["session"]["turns"][0]["messages"]] == [
        "hello",
        "the answer",
    ]
