"""No session is ever lost or bricked: hostile imports, damaged rows, deep nesting,
re-entrant skills, odd input, and costs that must not grow with the session (issue 8)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import agrun
from agrun import FunctionSkill, InputError, ReentrantCallError, SkillContext, SkillHelpers
from agrun._base import json_depth, json_nests_deeper
from agrun.chat import ModelRequest
from agrun.kernel import INPUT_PREVIEW
from agrun.storage import ImportRejected, MemoryStorage, SessionInfo, TurnCommit
from agrun.storage._transfer import MAX_DEPTH
from agrun.testing import ScriptedProvider, SequentialIds
from conftest import make_runtime

cpython_only = pytest.mark.cpython_only


def note(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    helpers.append_memory({"kind": "fact", "text": f"note {input}"})
    return f"noted {input}"


class TaggedIds:
    """Sequential ids with a writer's tag, so two runtimes on one store never collide."""

    def __init__(self, tag: str) -> None:
        self._inner = SequentialIds()
        self._tag = tag

    def new_id(self, prefix: str) -> str:
        return self._inner.new_id(f"{prefix}.{self._tag}")


WRITERS = iter(range(1_000_000))


def make(storage: Any, **options: Any) -> agrun.Runtime:
    options.setdefault("ids", TaggedIds(f"w{next(WRITERS)}"))
    return make_runtime(FunctionSkill("note", note), storage=storage, **options)


async def good_export() -> tuple[MemoryStorage, str]:
    store = MemoryStorage()
    runtime = make(store)
    for text in ("one", "two"):
        assert (await runtime.run(text, skill="note")).ok
    return store, await runtime.export_session()


def edit(text: str, change: Any) -> str:
    data = json.loads(text)
    change(data["session"])
    return json.dumps(data)


def first_message(session: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = session["turns"][0]["messages"][0]
    return message


def first_entry(session: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = session["turns"][0]["memoryEntries"][0]
    return entry


EDITS = {
    "message with an extra field": lambda s: first_message(s).update(mood="happy"),
    "message with a __proto__ key": lambda s: first_message(s).update(__proto__={"x": 1}),
    "message with role wizard": lambda s: first_message(s).update(role="wizard"),
    "message with numeric content": lambda s: first_message(s).update(content=42),
    "message with no id": lambda s: first_message(s).pop("id"),
    "memory entry with an extra field": lambda s: first_entry(s).update(extra=1),
    "memory entry with no text": lambda s: first_entry(s).pop("text"),
    "memory entry from an alien source": lambda s: first_entry(s).update(source="alien"),
    "lastRun of the wrong shape": lambda s: s.update(lastRun={"runId": 3}),
    "event without a seq": lambda s: s["turns"][0]["events"][0].pop("seq"),
}


@pytest.mark.parametrize("change", EDITS.values(), ids=list(EDITS))
async def test_an_import_the_runtime_cannot_read_is_refused_and_changes_nothing(
    change: Any,
) -> None:
    _, text = await good_export()
    target = MemoryStorage()
    runtime = make(target)
    assert (await runtime.run("mine", skill="note")).ok
    before = await target.export_session("default")
    with pytest.raises(ImportRejected, match="cannot read"):
        await runtime.import_session(edit(text, change), replace=True)
    assert await target.export_session("default") == before
    assert [m.content for m in runtime.history] == ["mine", "noted mine"]
    # The runtime still works, and a good file imports.
    assert (await runtime.run("after", skill="note")).ok
    await runtime.import_session(text, replace=True)
    assert [m.content for m in runtime.history][:2] == ["one", "noted one"]


async def damaged_store() -> MemoryStorage:
    """A session whose stored records include ones no runtime can read (a hand edit, an
    older writer's bug): written straight through the port, as such a writer would."""
    store = MemoryStorage()
    runtime = make(store)
    assert (await runtime.run("one", skill="note")).ok
    await store.commit_turn(
        TurnCommit(
            session_id="default",
            turn_id="hand-edit",
            messages=[
                {"id": "bad-1", "role": "wizard", "content": "abracadabra"},
                {"id": "ok-1", "role": "user", "content": "readable"},
            ],
            memory_entries=[{"id": "m-bad", "kind": "note"}],
            events=[{"kind": "RunStarted"}],
            last_run={"runId": 7},
        )
    )
    return store


async def test_a_damaged_session_opens_keeps_what_it_can_and_reports_the_rest() -> None:
    store = await damaged_store()
    events: list[Any] = []
    runtime = make(store, on_event=events.append)
    await runtime.open()
    assert [m.content for m in runtime.history] == ["one", "noted one", "readable"]
    assert [e.text for e in runtime.memory.read_all()] == ["note one", "noted one"]
    assert runtime.state.last_run is None
    damaged = [e for e in events if e.kind == "SessionDamaged"]
    assert len(damaged) == 1 and damaged[0].count == 4 and damaged[0].run_id == ""
    status = runtime.storage_status()
    assert len(status["unreadable"]) == 4
    assert any("role" in line for line in status["unreadable"])
    # Nothing was deleted: the unreadable records are still on disk.
    raw = await store.load_session("default")
    assert raw is not None and raw.turns[1].messages[0]["role"] == "wizard"
    # The session goes on, and its next turn is committed after the damaged one.
    assert (await runtime.run("two", skill="note")).ok
    assert (await store.load_session("default")).turn_count == 3  # type: ignore[union-attr]


async def test_an_import_with_replace_repairs_a_damaged_session() -> None:
    _, text = await good_export()
    store = await damaged_store()
    runtime = make(store)
    await runtime.open()
    assert runtime.storage_status()["unreadable"]
    await runtime.import_session(text, replace=True)
    assert runtime.storage_status()["unreadable"] == []
    assert [m.content for m in runtime.history] == ["one", "noted one", "two", "noted two"]
    assert runtime.state.last_run is not None


@cpython_only
async def test_a_sqlite_row_that_is_not_json_is_reported_not_fatal(tmp_path: Path) -> None:
    import sqlite3

    from agrun.adapters.sqlite import SqliteStorage

    path = tmp_path / "agrun.sqlite3"
    runtime = make(SqliteStorage(path))
    for text in ("one", "two"):
        assert (await runtime.run(text, skill="note")).ok
    with sqlite3.connect(path) as db:
        db.execute("UPDATE messages SET body = '{not json' WHERE seq = 1 AND pos = 0")
    again = make(SqliteStorage(path))
    await again.open()
    assert [m.content for m in again.history] == ["noted one", "two", "noted two"]
    assert again.storage_status()["unreadable"] == [
        "messages of turn 1 at 0: not JSON (Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1))"
    ]


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 4000, 100_000])
async def test_deep_nesting_is_refused_before_any_recursive_parse(depth: int) -> None:
    _, text = await good_export()
    data = json.loads(text)
    data["session"]["sessionMemory"] = {"placeholder": True}
    hostile = json.dumps(data).replace('{"placeholder": true}', nested(depth))
    runtime = make(MemoryStorage())
    with pytest.raises(ImportRejected, match=f"deeper than {MAX_DEPTH}"):
        await runtime.import_session(hostile)
    assert runtime.history == ()


def test_json_depth_counts_brackets_outside_strings_only() -> None:
    assert json_depth('{"a": [1, {"b": []}]}') == 4
    assert json_depth('{"a": "[[[[{{{{ \\" ]]] "}') == 1
    assert json_depth("[]") == 1 and json_depth('"x"') == 0
    assert json_depth(nested(5000)) == 5000


@pytest.mark.parametrize(
    ("text", "limit", "deeper"),
    [
        (nested(4), 4, False),  # exactly the limit: not deeper
        (nested(5), 4, True),
        ('{"a": [1, {"b": []}]}', 3, True),
        ('{"a": [1, {"b": []}]}', 4, False),
        # More brackets than the limit, all but one inside a string: scanned, and shallow.
        ('{"a": "' + "[{" * 40 + '"}', 4, False),
        ('{"a": "' + "[{" * 40 + '", "b": ' + nested(4) + "}", 4, True),
        ('"no brackets at all"', 0, False),
        ("[]", 0, True),
    ],
)
def test_json_nests_deeper_agrees_with_the_depth(text: str, limit: int, deeper: bool) -> None:
    assert json_nests_deeper(text, limit) is deeper
    assert (json_depth(text) > limit) is deeper


async def test_memory_numbers_stay_unique_on_disk_when_a_pending_turn_lands_late() -> None:
    store = MemoryStorage()
    a = make(store)
    b = make(store)
    assert (await a.run("a1", skill="note")).ok
    await b.open()
    # b's store fails once: its turn waits in memory while a goes on.
    real = store.commit_turn
    failures = [1]

    async def flaky(commit: TurnCommit) -> int:
        if failures and failures.pop():
            raise agrun.StorageError("disk busy")
        return await real(commit)

    store.commit_turn = flaky  # type: ignore[method-assign]
    assert (await b.run("b1", skill="note")).ok
    assert b.storage_status()["pending"] == 1
    store.commit_turn = real  # type: ignore[method-assign]
    assert (await a.run("a2", skill="note")).ok
    assert (await b.run("b2", skill="note")).ok
    snap = await store.load_session("default")
    assert snap is not None
    seqs = [entry["seq"] for entry in snap.memory_entries]
    assert seqs == list(range(1, len(seqs) + 1))


async def test_a_skill_that_calls_its_own_runtime_gets_the_reentrancy_error_at_once() -> None:
    store = MemoryStorage()
    caught: list[str] = []
    holder: list[agrun.Runtime] = []

    async def reenter(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        runtime = holder[0]
        for call in (
            lambda: runtime.run("inner"),
            runtime.open,
            runtime.export_session,
            lambda: runtime.import_session("{}"),
        ):
            try:
                await call()
            except ReentrantCallError as error:
                caught.append(error.method)
        return "done"

    runtime = make_runtime(FunctionSkill("reenter", reenter), storage=store, skill_timeout_s=5)
    holder.append(runtime)
    started = time.monotonic()
    result = await runtime.run("outer", skill="reenter")
    assert result.ok and time.monotonic() - started < 2
    assert caught == ["run", "open", "export_session", "import_session"]
    snap = await store.load_session("default")
    assert snap is not None and snap.turn_count == 1
    assert [m["content"] for m in snap.messages] == ["outer", "done"]


async def test_a_provider_embedder_or_hook_calling_back_in_is_refused_at_once() -> None:
    """Issue 20.5: the provider (the answer and the memory extraction after it), the embedder
    and the sensitivity filter call back into the runtime: each call is refused with
    `ReentrantCallError` at once (none waits on the lock its own turn holds), and the turns
    end cleanly."""
    store = MemoryStorage()
    holder: list[agrun.Runtime] = []
    caught: list[str] = []
    scheduled: list[asyncio.Task[Any]] = []

    async def calls_back(where: str) -> None:
        runtime = holder[0]
        for call in (
            runtime.export_session,
            lambda: runtime.run("inner"),
            lambda: runtime.promote_to_global_memory(["x"]),
            lambda: runtime.forget_global_memory("g"),
            runtime.open,
            lambda: runtime.import_session("{}"),
        ):
            try:
                await asyncio.wait_for(call(), 2)
                caught.append(f"{where}: ran")
            except ReentrantCallError:
                caught.append(where)
            except TimeoutError:
                caught.append(f"{where}: waited")

    async def script(request: ModelRequest) -> str:
        await calls_back("provider")
        return '{"facts": [], "preferences": [], "decisions": []}'

    class Embedder:
        calls = 0

        async def embed(self, texts: Sequence[str]) -> list[list[float]]:
            Embedder.calls += 1
            await calls_back("embedder")
            return [[1.0, 0.0] for _ in texts]

    def sensitivity_filter(entry: Any) -> None:
        # A synchronous hook can only schedule the call: it runs in the hook's context.
        scheduled.append(asyncio.ensure_future(calls_back("filter")))

    provider = ScriptedProvider(script)
    runtime = make_runtime(
        storage=store,
        provider=provider,
        memory_extraction="model",
        embedder=Embedder(),
        sensitivity_filter=sensitivity_filter,
    )
    holder.append(runtime)
    started = time.monotonic()
    first = await runtime.run("remember that I like tea")
    await runtime.idle()
    second = await runtime.run("and coffee?")
    await runtime.idle()
    promotion = await runtime.promote_to_global_memory(["likes tea"])
    await asyncio.gather(*scheduled)
    assert time.monotonic() - started < 5
    assert first.ok and second.ok and len(promotion.promoted) == 1
    assert Embedder.calls >= 1 and scheduled
    # Two answers and an extraction after one of them, the embedder, the filter: every call
    # refused, none waited (on the old code the extraction's and the filter's did).
    assert set(caught) == {"provider", "embedder", "filter"}
    assert len(provider.requests) >= 3 and caught.count("provider") == 6 * len(provider.requests)
    assert [m.content for m in runtime.history if m.role == "user"] == [
        "remember that I like tea",
        "and coffee?",
    ]
    assert (await runtime.run("after")).ok
    snap = await store.load_session("default")
    assert snap is not None
    assert [m["content"] for m in snap.messages if m["role"] == "user"] == [
        "remember that I like tea",
        "and coffee?",
        "after",
    ]


@pytest.mark.parametrize("text", ["\ud800", "ok \udfff then", "\udc00\ud800"])
async def test_lone_surrogates_in_input_are_a_typed_error_and_store_nothing(text: str) -> None:
    store = MemoryStorage()
    runtime = make(store)
    with pytest.raises(InputError, match="lone surrogate"):
        await runtime.run(text)
    assert await store.load_session("default") is None


def test_a_session_id_longer_than_stores_keep_is_refused_at_creation() -> None:
    with pytest.raises(agrun.ConfigError, match="session_id is 300 characters"):
        make(MemoryStorage(), session_id="s" * 300)


def test_a_store_missing_a_method_is_refused_at_creation() -> None:
    class Partial:
        async def commit_turn(self, commit: TurnCommit) -> int:
            return 1

    with pytest.raises(agrun.ConfigError, match="no load_session"):
        make(Partial())


class CountingStore(MemoryStorage):
    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    async def list_sessions(self) -> list[SessionInfo]:
        self._count("list_sessions")
        return await super().list_sessions()

    async def load_session(self, session_id: str, *, all_events: bool = True) -> Any:
        self._count("load_session")
        return await super().load_session(session_id, all_events=all_events)


async def test_a_turn_start_looks_up_its_own_session_and_reads_no_history() -> None:
    store = CountingStore()
    runtime = make(store)
    for n in range(20):
        assert (await runtime.run(f"t{n}", skill="note")).ok
    assert store.calls == {}


async def test_a_large_input_is_stored_once() -> None:
    store = MemoryStorage()
    runtime = make_runtime(
        FunctionSkill("ack", lambda input, context, helpers: "ok"), storage=store
    )
    text = "x" * 1_000_000
    assert (await runtime.run(text, skill="ack")).ok
    exported = await runtime.export_session()
    assert len(exported) < 1_100_000
    snap = await store.load_session("default")
    assert snap is not None
    started = next(e for e in snap.events if e["kind"] == "RunStarted")
    assert len(started["input"]) == INPUT_PREVIEW and started["inputChars"] == 1_000_000
    assert snap.messages[0]["content"] == text


def test_the_pages_record_schemas_are_generated_from_the_runtimes_models() -> None:
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("gen_schemas", root / "tools/gen_schemas.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (root / "web/storage/schemas.js").read_text(encoding="utf-8")
    assert committed == module.render(), "run tools/gen_schemas.py"


# -- issue 20.9: typed refusals at the door ---------------------------------------------


@pytest.mark.parametrize("session_id", ["a\ud800b", "\udfff"])
def test_a_session_id_with_a_lone_surrogate_is_refused_at_creation(session_id: str) -> None:
    # Accepted, every commit failed to encode it: each run an untyped internal_error.
    with pytest.raises(agrun.ConfigError, match="session_id holds a lone surrogate"):
        make(MemoryStorage(), session_id=session_id)


def lists_in_lists(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        pytest.param("a\ud800b", "lone surrogate", id="surrogate"),
        pytest.param({"k\udc00": 1}, "key holds a lone surrogate", id="surrogate-key"),
        pytest.param({"rows": ["ok", "\ud83d"]}, r"\$\.rows\[1\] holds", id="surrogate-inside"),
        pytest.param(lists_in_lists(33), "nests deeper than 32", id="33-deep"),
        pytest.param(lists_in_lists(900), "nests deeper than 32", id="900-deep"),
        pytest.param(lists_in_lists(100_000), "nests deeper than 32", id="100000-deep"),
    ],
)
async def test_a_skill_output_that_cannot_be_kept_fails_the_run_typed(
    output: Any, problem: str
) -> None:
    store = MemoryStorage()
    runtime = make_runtime(FunctionSkill("bad", lambda i, c, h: output), storage=store)
    result = await runtime.run("hello", skill="bad")
    assert not result.ok and result.error is not None
    assert result.error.code == "output_not_serializable"
    assert re.search(problem, result.error.message)
    # The person's words are kept, marked failed; the session exports and imports.
    [said] = runtime.history
    assert (said.content, said.run_status, said.error_code) == (
        "hello",
        "failed",
        "output_not_serializable",
    )
    text = await runtime.export_session()
    await make(MemoryStorage()).import_session(text)
    assert (await runtime.run("again")).ok
    deep_enough = make_runtime(FunctionSkill("ok", lambda i, c, h: lists_in_lists(32)))
    assert (await deep_enough.run("hello", skill="ok")).ok


async def test_a_tool_output_that_cannot_be_kept_is_a_refused_call_the_model_sees() -> None:
    from agrun.chat import ModelReply
    from agrun.testing import ScriptedProvider, tool_call

    def calls(request: ModelRequest) -> ModelReply | str:
        if request.messages[-1].role == "tool":
            return "done"
        return ModelReply(tool_calls=(tool_call("bad", {"input": "x"}, id="c1"),))

    bad = FunctionSkill("bad", lambda i, c, h: lists_in_lists(900), description="returns rows")
    runtime = make_runtime(bad, provider=ScriptedProvider(calls), memory_extraction="rules")
    result = await runtime.run("use the tool")
    assert result.ok and result.output == "done"
    [tool] = [m for m in runtime.history if m.role == "tool"]
    assert "nests deeper than 32" in tool.content


def wrong_typed_content() -> list[Any]:
    return [
        pytest.param("bytes", "4", id="bytes-string"),
        pytest.param("bytes", True, id="bytes-bool"),
        pytest.param("bytes", -1, id="bytes-negative"),
        pytest.param("createdAt", 1.5, id="createdAt-fraction"),
        pytest.param("createdAt", "1", id="createdAt-string"),
        pytest.param("lastUsedAt", False, id="lastUsedAt-bool"),
        pytest.param("depth", "0", id="depth-string"),
        pytest.param("kind", 3, id="kind-number"),
        pytest.param("kind", "wizard", id="kind-unknown"),
        pytest.param("digest", 5, id="digest-number"),
        pytest.param("runId", None, id="runId-null"),
        pytest.param("expiresAt", "soon", id="expiresAt-string"),
        pytest.param("extra", 1, id="extra-field"),
    ]


@pytest.mark.parametrize(("field", "value"), wrong_typed_content())
async def test_an_import_with_a_wrong_typed_content_entry_is_refused_at_the_door(
    field: str, value: Any
) -> None:
    # Accepted before, then reported unreadable when the session opened (issue 20.9).
    rows = FunctionSkill("rows", lambda i, c, h: {"rows": [1, 2]})
    source = make_runtime(rows, storage=MemoryStorage())
    await source.run("rows", skill="rows")
    data = json.loads(await source.export_session())
    [entry] = data["session"]["contentEntries"]
    entry[field] = value
    text = json.dumps(data)
    store = MemoryStorage()
    with pytest.raises(ImportRejected, match=rf"session\.contentEntries\.0\.{field}"):
        await store.import_session(text)
    with pytest.raises(ImportRejected, match=rf"session\.contentEntries\.0\.{field}"):
        await make(store).import_session(text)
    assert await store.list_sessions() == []
