"""When a turn is kept (issue 25.5, docs/storage.md "When the commit happens"): before
``run()`` returns by default, after it with ``commit_after_answer`` (a page's default), still
under the turn's lock, so the next operation, ``idle()`` and a trace read see it whole."""

from __future__ import annotations

import json
from typing import Any

import agrun
from agrun.storage import MemoryStorage
from agrun.testing import FixedClock, ScriptedProvider
from conftest import make_runtime


def runtime(store: MemoryStorage, **options: Any) -> agrun.Runtime:
    provider = ScriptedProvider(lambda request: "the answer")
    return make_runtime(
        provider=provider, model="scripted", memory_extraction="rules", storage=store, **options
    )


async def stored_turns(store: MemoryStorage) -> list[list[str]]:
    exported = json.loads(await store.export_session("default"))["session"]
    return [[m["content"] for m in turn["messages"]] for turn in exported["turns"]]


async def stored_refs(store: MemoryStorage) -> list[str]:
    exported = json.loads(await store.export_session("default"))["session"]
    return [entry["ref"] for entry in exported["contentEntries"]]


async def test_by_default_the_turn_is_committed_when_run_returns() -> None:
    store = MemoryStorage()
    rt = runtime(store)
    result = await rt.run("hello")
    assert result.ok
    assert await stored_turns(store) == [["hello", "the answer"]]
    # Its trace (a record for why()) is kept after the answer, under the turn's lock.
    assert rt.closing and "trace:run-1" not in await stored_refs(store)
    assert rt.why(result.state.run_id).calls  # readable at once: reading it keeps it now
    await rt.idle()
    assert not rt.closing
    assert await stored_turns(store) == [["hello", "the answer"], []]
    assert "trace:run-1" in await stored_refs(store)


async def test_a_turn_whose_memory_close_follows_keeps_its_trace_in_that_commit() -> None:
    store = MemoryStorage()
    provider = ScriptedProvider(lambda request: "the answer")
    rt = make_runtime(provider=provider, model="scripted", storage=store, memory_extraction="model")
    result = await rt.run("hello")
    assert result.ok and await stored_turns(store) == [["hello", "the answer"]]
    await rt.idle()
    exported = json.loads(await store.export_session("default"))["session"]
    assert [turn["turnId"] for turn in exported["turns"]] == ["run-1", "run-1:memory"]
    assert rt.why(result.state.run_id).extractions  # the trace as the memory close left it
    assert "trace:run-1" in await stored_refs(store)


async def test_a_skill_run_leaves_nothing_to_keep_after_it() -> None:
    store = MemoryStorage()
    rt = runtime(store)
    result = await rt.run("remember: the door is blue")
    assert result.ok and not rt.closing
    assert await stored_turns(store) == [["remember: the door is blue", result.output]]


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
    durable, after = MemoryStorage(), MemoryStorage()
    for store, options in ((durable, {}), (after, {"commit_after_answer": True})):
        rt = runtime(store, clock=FixedClock(step_ms=0), **options)  # the same times either way
        for text in ("one", "two", "three"):
            await rt.run(text)
        await rt.idle()
    kept = [json.loads(await s.export_session("default"))["session"] for s in (durable, after)]
    # Before the answer, a turn's trace is committed after it, on a record of its own; after
    # it, both are in one commit. The turns' words, events and memory, the content (the
    # traces too), the session memory and lastRun are the same.
    turns = [t for t in kept[0].pop("turns") if not t["turnId"].endswith(":trace")]
    assert [t["turnId"] for t in turns] == ["run-1", "run-2", "run-3"]
    for turn, other in zip(turns, kept[1].pop("turns"), strict=True):
        assert {**turn, "seq": 0} == {**other, "seq": 0}
    assert kept[0] == kept[1]


async def test_an_export_waits_for_the_turn_to_be_kept() -> None:
    store = MemoryStorage()
    rt = runtime(store, commit_after_answer=True)
    await rt.run("hello")
    exported = json.loads(await rt.export_session())
    assert [m["content"] for m in exported["session"]["turns"][0]["messages"]] == [
        "hello",
        "the answer",
    ]
