"""A stored body stays what was said (spec 002, issue 18): read-only to skills, checked
against its digest when it is loaded, kept by depth under pressure, and every read of it
in the run's read-attempt signal."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agrun import (
    ContentDigestMismatch,
    ContentRefNotFound,
    FunctionSkill,
    ReadOnlyError,
    SkillContext,
    SkillHelpers,
)
from agrun.chat import ModelReply, ModelRequest
from agrun.content import ContentLimits, ContentStore, read_entries
from agrun.kernel._invoke import MAX_OUTPUT_DEPTH
from agrun.ports import Storage
from agrun.sensitive import SensitiveContentFilter
from agrun.storage import ImportRejected, MemoryStorage
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime

cpython_only = pytest.mark.cpython_only
ROWS = {"rows": [1, 2], "meta": {"unit": "km", "tags": ["a"]}, "ratio": 2.5}


def _sqlite(path: Path) -> Callable[[], Storage]:
    from agrun.adapters.sqlite import SqliteStorage  # absent in Pyodide

    return lambda: SqliteStorage(path / "agrun.sqlite3")


def _memory(path: Path) -> Callable[[], Storage]:
    storage = MemoryStorage()
    return lambda: storage  # the same process memory: a reload finds what was left


@pytest.fixture(
    params=[
        pytest.param(_memory, id="memory"),
        pytest.param(_sqlite, id="sqlite", marks=cpython_only),
    ]
)
def reopen(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Storage]:
    opener: Callable[[Path], Callable[[], Storage]] = request.param
    return opener(tmp_path)


def sha256(body: Any) -> str:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


MUTATIONS: dict[str, Callable[[Any], Any]] = {
    "append": lambda b: b["rows"].append(99),
    "extend": lambda b: b["rows"].extend([3]),
    "set item": lambda b: b["meta"].__setitem__("unit", "mi"),
    "nested": lambda b: b["meta"]["tags"].insert(0, "z"),
    "new key": lambda b: b.__setitem__("added", 1),
    "delete": lambda b: b.pop("rows"),
    "update": lambda b: b.update({"ratio": 3}),
    "sort": lambda b: b["rows"].sort(reverse=True),
}


async def test_a_skill_cannot_change_a_stored_body(reopen: Callable[[], Storage]) -> None:
    refused: dict[str, str] = {}

    def change(input: str, context: SkillContext, helpers: SkillHelpers) -> Any:
        body = context.content(input).body
        for name, mutate in MUTATIONS.items():
            try:
                mutate(body)
            except ReadOnlyError as error:
                refused[name] = error.code
        # A deep copy is plain data the skill may change and return.
        mine = copy.deepcopy(body)
        mine["rows"].append(99)
        return mine

    def rewrite(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        context.content(input).body["rows"].append(99)  # uncaught: the run fails
        return "rewritten"

    skills = (
        FunctionSkill("rows", lambda i, c, h: ROWS),
        FunctionSkill("change", change),
        FunctionSkill("rewrite", rewrite),
    )
    written = reopen()
    runtime = make_runtime(*skills, storage=written)
    first = await runtime.run("give me rows", skill="rows")
    ref, digest = first.messages[-1].content_ref, first.messages[-1].content_digest
    assert ref is not None and digest == sha256(ROWS)
    changed = await runtime.run(ref, skill="change")
    assert refused == dict.fromkeys(MUTATIONS, "read_only")
    assert changed.output == {**ROWS, "rows": [1, 2, 99]}
    failed = await runtime.run(ref, skill="rewrite")
    assert failed.error is not None and failed.error.code == "skill_error"
    assert "read-only" in failed.error.message
    assert runtime.content(ref).body == ROWS

    # What reached storage with the commits, and what a reload serves, is the body as said.
    storage = reopen()
    if storage is not written:
        await written.close()
    snapshot = await storage.load_session("default")
    assert snapshot is not None
    [row] = [e for e in snapshot.content_entries if e["ref"] == ref]
    assert row["body"] == ROWS and row["digest"] == digest == sha256(row["body"])
    again = make_runtime(storage=storage)
    await again.open()
    entry = again.content(ref)
    assert entry.body == ROWS and entry.digest == digest
    assert again.storage_status()["unreadable"] == []
    with pytest.raises(ReadOnlyError):
        entry.body["rows"].append(99)
    await storage.close()


def test_a_body_is_frozen_yet_serializes_as_plain_json() -> None:
    s = ContentStore(ContentLimits(), SensitiveContentFilter())
    entry = s.put("r", ROWS, run_id="run", now_ms=0)
    assert entry is not None
    assert isinstance(entry.body, dict) and isinstance(entry.body["rows"], list)
    assert json.loads(json.dumps(entry.body)) == ROWS
    assert entry.to_wire()["body"] == ROWS
    with pytest.raises(ReadOnlyError, match="stored content entry"):
        entry.body["meta"]["tags"].append("b")
    used = s.get("r", now_ms=5)  # a read makes a new entry: its body is still frozen
    with pytest.raises(ReadOnlyError):
        used.body["rows"][0] = 7


def tampered(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "body": {**row["body"], "rows": [1, 2, 99]}}


async def test_a_body_changed_in_storage_is_refused_typed_and_never_served() -> None:
    storage = MemoryStorage()
    runtime = make_runtime(FunctionSkill("rows", lambda i, c, h: ROWS), storage=storage)
    ref = (await runtime.run("rows", skill="rows")).messages[-1].content_ref
    kept = (await runtime.run("rows", skill="rows")).messages[-1].content_ref
    exported = json.loads(await runtime.export_session())
    rows = exported["session"]["contentEntries"]
    exported["session"]["contentEntries"] = [tampered(r) if r["ref"] == ref else r for r in rows]
    text = json.dumps(exported)

    # Imported through the runtime: the whole file is refused, naming the ref and the code.
    checked = make_runtime(storage=MemoryStorage())
    with pytest.raises(ImportRejected, match=f"{ref}.*content_digest_mismatch"):
        await checked.import_session(text)

    # Written behind the runtime's back: the row is damage, and its ref serves nothing.
    behind = MemoryStorage()
    await behind.import_session(text)
    events: list[Any] = []
    reader = make_runtime(storage=behind, on_event=events.append)
    await reader.open()
    [damage] = reader.storage_status()["unreadable"]
    assert ref in damage and "content_digest_mismatch" in damage
    assert [e.kind for e in events] == ["SessionDamaged"]
    with pytest.raises(ContentRefNotFound):
        reader.content(ref)
    assert reader.content(kept).body == ROWS  # an untouched row is still served

    # The check itself: a typed error with the code, the ref and both digests.
    [good] = [r for r in rows if r["ref"] == ref]
    entries, problems = read_entries([good, tampered(good)])
    assert [e.ref for e in entries] == [ref] and len(problems) == 1
    with pytest.raises(ContentDigestMismatch) as caught:
        from agrun.content import ContentEntry, verified

        verified(ContentEntry.model_validate(tampered(good)))
    assert caught.value.code == "content_digest_mismatch" and caught.value.ref == ref
    assert caught.value.digest == good["digest"] != caught.value.found


@cpython_only
async def test_a_body_changed_in_sqlite_is_refused_after_a_reload(tmp_path: Path) -> None:
    import sqlite3

    from agrun.adapters.sqlite import SqliteStorage

    path = tmp_path / "agrun.sqlite3"
    written = SqliteStorage(path)
    runtime = make_runtime(FunctionSkill("rows", lambda i, c, h: ROWS), storage=written)
    ref = (await runtime.run("rows", skill="rows")).messages[-1].content_ref
    await written.close()
    with sqlite3.connect(path) as db:
        (text,) = db.execute("SELECT body FROM content WHERE ref = ?", (ref,)).fetchone()
        db.execute(
            "UPDATE content SET body = ? WHERE ref = ?",
            (json.dumps(tampered(json.loads(text))), ref),
        )
    db.close()
    stored = SqliteStorage(path)
    reader = make_runtime(storage=stored)
    await reader.open()
    [damage] = reader.storage_status()["unreadable"]
    assert ref in damage and "content_digest_mismatch" in damage
    with pytest.raises(ContentRefNotFound):
        reader.content(ref)
    await stored.close()


def test_an_integral_float_hashes_alike_after_a_javascript_round_trip() -> None:
    # JavaScript's JSON writes 2.0 as 2: a body read back from IndexedDB is still whole.
    s = ContentStore(ContentLimits(), SensitiveContentFilter())
    entry = s.put("r", {"ratio": 2.0, "big": 1e16}, run_id="run", now_ms=0)
    assert entry is not None
    as_js = {**entry.to_wire(), "body": {"ratio": 2, "big": 10_000_000_000_000_000}}
    entries, problems = read_entries([entry.to_wire(), as_js])
    assert problems == [] and len(entries) == 2
    changed = {**entry.to_wire(), "body": {"ratio": 2.5, "big": 1e16}}
    assert len(read_entries([changed])[1]) == 1


async def test_a_none_output_is_stored_as_kind_null() -> None:
    runtime = make_runtime(FunctionSkill("nothing", lambda i, c, h: None))
    reply = (await runtime.run("x", skill="nothing")).messages[-1]
    assert reply.content_kind == "null"
    assert reply.content_ref is not None and runtime.content(reply.content_ref).body is None
    s = ContentStore(ContentLimits(), SensitiveContentFilter())
    kept = [s.put(f"r{n}", v, run_id="r", now_ms=n) for n, v in enumerate(["", 0, False])]
    assert [e.kind for e in kept if e] == ["text", "number", "boolean"]


def test_under_pressure_tool_outputs_go_before_replies() -> None:
    s = ContentStore(ContentLimits(max_entries=3), SensitiveContentFilter())
    s.put("reply-0", "r0", run_id="a", now_ms=0)
    s.put("tool-0", "t0", run_id="a", now_ms=1, depth=1)
    s.put("reply-1", "r1", run_id="b", now_ms=2)
    s.get("tool-0", now_ms=3)  # the most recently used, yet the first to go
    s.put("reply-2", "r2", run_id="c", now_ms=4)
    assert sorted(s.entries) == ["reply-0", "reply-1", "reply-2"]
    # With only replies held, a new tool output is not kept at a reply's cost...
    assert s.put("tool-1", "t1", run_id="c", now_ms=5, depth=1) is None
    assert sorted(s.entries) == ["reply-0", "reply-1", "reply-2"]
    # ...and among replies the least recently used goes, as before.
    s.get("reply-0", now_ms=6)
    s.put("reply-3", "r3", run_id="d", now_ms=7)
    assert sorted(s.entries) == ["reply-0", "reply-2", "reply-3"]
    written, evicted = s.take_changes()
    assert "tool-1" not in {e.ref for e in written} and evicted[0] == "tool-0"


async def test_a_turns_tool_outputs_are_evicted_before_earlier_replies() -> None:
    def calls(request: ModelRequest) -> ModelReply | str:
        if request.messages[-1].role == "tool":
            return "done"
        return ModelReply(
            tool_calls=tuple(tool_call("shout", {"input": w}, id=f"c{w}") for w in "ab")
        )

    shout = FunctionSkill("shout", lambda i, c, h: i.upper(), description="shouts")
    runtime = make_runtime(
        shout,
        provider=ScriptedProvider(calls),
        memory_extraction="rules",
        content_store={"keep_tool_outputs": True, "max_entries": 3},
    )
    one = await runtime.run("go")
    held = [e.ref for e in runtime._session.content.entries.values()]  # type: ignore[union-attr]
    assert held == [
        f"content:{one.state.run_id}",
        *(f"content:{one.state.run_id}:c{w}" for w in "ab"),
    ]
    two = await runtime.run("again")
    held = sorted(runtime._session.content.entries)  # type: ignore[union-attr]
    # Both replies are kept; of the four tool outputs only one fits beside them.
    assert f"content:{one.state.run_id}" in held and f"content:{two.state.run_id}" in held
    assert len(held) == 3


def reads(ref: str) -> Callable[[ModelRequest], ModelReply | str]:
    def reply(request: ModelRequest) -> ModelReply | str:
        if request.messages[-1].role == "tool":
            return "done"
        said = request.messages[-1].content or ""
        if said.startswith("read"):
            return ModelReply(tool_calls=(tool_call("read_content", {"ref": ref}),))
        return "alpha beta"

    return reply


async def test_the_read_content_tool_says_what_a_missing_ref_returns() -> None:
    provider = ScriptedProvider(reads("content:run-1"))
    runtime = make_runtime(provider=provider, memory_extraction="rules")
    await runtime.run("hello")
    await runtime.run("read it")
    [tool] = [t for t in provider.requests[-1].tools if t.name == "read_content"]
    assert "content_ref_not_found" in tool.description
    assert "Only the refs listed" in tool.description and "never make one up" in tool.description


@pytest.mark.parametrize("ref", ["content:run-1", "content:made-up"])
async def test_a_content_read_sets_the_read_attempt_signal(ref: str) -> None:
    provider = ScriptedProvider(reads(ref))
    runtime = make_runtime(provider=provider, memory_extraction="rules")
    first = await runtime.run("hello")
    assert (
        first.state.read_attempt_signal is None or first.state.read_attempt_signal.kind != "content"
    )
    result = await runtime.run("read it")
    signal = result.state.read_attempt_signal
    found = ref == "content:run-1"
    assert signal is not None and (signal.kind, signal.target, signal.found) == (
        "content",
        ref,
        found,
    )
    assert signal.sources == ((ref,) if found else ())
    assert result.state.to_wire()["readAttemptSignal"]["kind"] == "content"


async def test_a_skill_read_sets_the_signal_and_a_miss_says_found_false() -> None:
    def peek(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        try:
            return str(context.content(input).body)
        except ContentRefNotFound:
            return "gone"

    runtime = make_runtime(FunctionSkill("peek", peek))
    ref = (await runtime.run("hi")).messages[-1].content_ref
    assert ref is not None
    hit = await runtime.run(ref, skill="peek")
    miss = await runtime.run("content:nope", skill="peek")
    assert hit.state.read_attempt_signal is not None and miss.state.read_attempt_signal is not None
    assert (hit.state.read_attempt_signal.found, hit.state.read_attempt_signal.target) == (
        True,
        ref,
    )
    assert miss.state.read_attempt_signal.model_dump() == {
        "kind": "content",
        "target": "content:nope",
        "found": False,
        "sources": (),
    }


def test_the_stores_content_record_is_the_wire_shape_of_a_content_entry() -> None:
    # An import checks entries against ContentRecord (storage cannot import the kernel):
    # the two must name the same fields, require the same ones and accept the same rows.
    from agrun.content import ContentEntry
    from agrun.storage import ContentRecord

    def shape(model: Any) -> dict[str, bool]:
        return {f.alias or n: f.is_required() for n, f in model.model_fields.items()}

    assert shape(ContentRecord) == shape(ContentEntry)
    wire = ContentEntry.model_validate(
        {
            "ref": "r",
            "kind": "list",
            "body": [1],
            "bytes": 3,
            "digest": "sha256:x",
            "runId": "run",
            "createdAt": 1,
            "lastUsedAt": 2,
        }
    ).to_wire()
    assert ContentRecord.model_validate(wire).to_wire() == wire


async def test_a_tool_output_nested_near_the_bound_is_kept_and_stored(
    reopen: Callable[[], Storage],
) -> None:
    # The deepest output a skill may return is kept, committed and read back whole (in
    # Pyodide too, where pydantic's serializer stops at ~50 levels: a stored body's wire
    # form does not go through it).
    deep: Any = "leaf"
    for _ in range(MAX_OUTPUT_DEPTH - 1):
        deep = [deep]

    def calls(request: ModelRequest) -> ModelReply | str:
        if request.messages[-1].role == "tool":
            return "done"
        return ModelReply(tool_calls=(tool_call("deep", {"input": "x"}, id="c1"),))

    storage = reopen()
    runtime = make_runtime(
        FunctionSkill("deep", lambda i, c, h: deep, description="nests"),
        provider=ScriptedProvider(calls),
        memory_extraction="rules",
        content_store={"keep_tool_outputs": True},
        storage=storage,
    )
    result = await runtime.run("go")
    await runtime.idle()
    assert result.ok, result.error
    ref = f"content:{result.state.run_id}:c1"
    snapshot = await reopen().load_session("default")
    assert snapshot is not None
    stored = {row["ref"]: row for row in snapshot.content_entries}
    assert ref in stored, sorted(stored)
    assert stored[ref]["body"] == deep
