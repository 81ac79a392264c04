"""The response content store (spec 002, issue 13): bounded, deterministic, behind refs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agrun import FunctionSkill, SkillContext, SkillHelpers
from agrun.chat import ModelReply, ModelRequest
from agrun.content import ContentLimits, ContentRefNotFound, ContentStore
from agrun.sensitive import SensitiveContentFilter
from agrun.storage import MemoryStorage
from agrun.testing import FixedClock, ScriptedProvider, SequentialIds, tool_call
from conftest import make_runtime


def store(**limits: Any) -> ContentStore:
    return ContentStore(ContentLimits(**limits), SensitiveContentFilter())


def test_the_store_evicts_least_recently_used_first_and_never_exceeds_its_limits() -> None:
    s = store(max_entries=3, max_bytes=80)
    for n in range(3):
        s.put(f"r{n}", f"body {n}", run_id=f"run{n}", now_ms=n)
    s.get("r0", now_ms=10)  # r0 is now the most recently used
    s.put("r3", "body 3", run_id="run3", now_ms=11)
    assert sorted(s.entries) == ["r0", "r2", "r3"] and s.evictions == 1
    s.put("big", "x" * 60, run_id="run4", now_ms=12)
    assert len(s.entries) <= 3 and s.bytes_held <= 80
    assert "big" in s.entries
    assert s.put("huge", "y" * 200, run_id="run5", now_ms=13) is None  # could never fit


def test_a_missing_or_expired_ref_is_the_typed_miss() -> None:
    s = store(ttl_ms=100)
    s.put("r", "body", run_id="run", now_ms=0)
    assert s.get("r", now_ms=50).body == "body"
    with pytest.raises(ContentRefNotFound) as caught:
        s.get("r", now_ms=150)
    assert caught.value.code == "content_ref_not_found"
    assert s.counters()["hits"] == 1 and s.counters()["misses"] == 1


def test_what_cannot_serialize_is_a_typed_fallback_and_secrets_are_not_kept() -> None:
    s = store()
    entry = s.put("set", {1, 2}, run_id="r", now_ms=0)
    assert entry is not None and entry.kind == "fallback" and entry.serialization == "fallback"
    assert (
        s.put("secret", "the key is sk-proj-abcdefghijklmnop1234567890", run_id="r", now_ms=1)
        is None
    )


def test_an_entry_cannot_be_changed() -> None:
    s = store()
    entry = s.put("r", {"a": 1}, run_id="run", now_ms=0)
    assert entry is not None
    with pytest.raises(AttributeError):
        entry.body = "changed"  # type: ignore[misc]


async def test_a_reply_is_stored_and_its_history_message_carries_the_ref() -> None:
    storage = MemoryStorage()
    long = "First line of a long answer.\n" + "More detail. " * 200
    runtime = make_runtime(FunctionSkill("long", lambda i, c, h: long), storage=storage)
    result = await runtime.run("explain", skill="long")
    reply = result.messages[-1]
    assert reply.content_ref == f"content:{result.state.run_id}"
    assert reply.content_kind == "text" and reply.content_bytes == len(json.dumps(long))
    assert reply.content_digest and reply.content_digest.startswith("sha256:")
    assert len(reply.content) < 1300 and reply.content.endswith(f"{reply.content_ref}]")
    assert runtime.content(reply.content_ref).body == long
    snapshot = await storage.load_session("default")
    assert snapshot is not None and [e["ref"] for e in snapshot.content_entries] == [
        reply.content_ref
    ]
    again = make_runtime(storage=storage, ids=SequentialIds())
    await again.open()
    assert again.content(reply.content_ref).body == long


async def test_a_skill_reads_content_read_only_and_a_miss_is_typed() -> None:
    seen: list[Any] = []

    def follow(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        ref = input.split()[-1]
        try:
            seen.append(context.content(ref).body)
        except ContentRefNotFound as miss:
            seen.append(miss.code)
        return "done"

    runtime = make_runtime(FunctionSkill("follow", follow))
    first = await runtime.run("hello there")
    await runtime.run(f"format {first.messages[-1].content_ref}", skill="follow")
    await runtime.run("format content:nope", skill="follow")
    assert seen == ["echo: hello there", "content_ref_not_found"]


def follow_up(request: ModelRequest) -> ModelReply | str:
    system = request.messages[0].content or ""
    last = request.messages[-1]
    if last.role == "tool":
        body = last.content or ""
        return "| line |\n|---|\n" + "\n".join(f"| {line} |" for line in body.splitlines())
    if "table" in (last.content or "") and "## Stored content" in system:
        ref = system.split("## Stored content\n- ", 1)[1].split(" ", 1)[0]
        return ModelReply(tool_calls=(tool_call("read_content", {"ref": ref}),))
    return "alpha\nbeta\ngamma"


async def test_the_model_reaches_a_body_through_read_content_and_the_events_say_so() -> None:
    events: list[Any] = []
    provider = ScriptedProvider(follow_up)
    runtime = make_runtime(provider=provider, memory_extraction="rules", on_event=events.append)
    await runtime.run("list three words")
    result = await runtime.run("format that as a table")
    assert result.output == "| line |\n|---|\n| alpha |\n| beta |\n| gamma |"
    retrieved = [e for e in events if e.kind == "ContentRetrieved"]
    assert len(retrieved) == 1 and retrieved[0].found and retrieved[0].counters["hits"] == 1
    started = [e for e in events if e.kind == "ModelCallStarted"]
    assert started[-1].content_store is not None and started[-1].content_store["entries"] >= 1
    # The body was never preloaded: only the ref line is in the prompt.
    assert "alpha\nbeta" not in (provider.requests[1].messages[0].content or "")


async def test_depth_one_and_failures_are_kept_only_by_opt_in() -> None:
    def calls(request: ModelRequest) -> ModelReply | str:
        if request.messages[-1].role == "tool":
            return "done"
        return ModelReply(tool_calls=(tool_call("shout", {"input": "hi"}, id="c1"),))

    shout = FunctionSkill("shout", lambda i, c, h: i.upper(), description="shouts")
    kept = make_runtime(shout, provider=ScriptedProvider(calls), memory_extraction="rules",
                        content_store={"keep_tool_outputs": True})  # fmt: skip
    result = await kept.run("go")
    assert kept.content(f"content:{result.state.run_id}:c1").body == "HI"
    plain = make_runtime(shout, provider=ScriptedProvider(calls), memory_extraction="rules")
    other = await plain.run("go")
    with pytest.raises(ContentRefNotFound):
        plain.content(f"content:{other.state.run_id}:c1")

    def boom(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        raise RuntimeError("broken")

    failing = make_runtime(
        FunctionSkill("boom", boom), content_store={"keep_failures": ["skill_error"]}
    )
    failed = await failing.run("x", skill="boom")
    entry = failing.content(f"content:{failed.state.run_id}")
    assert entry.error_class == "skill_error" and "broken" in entry.body


async def test_eviction_replays_exactly_with_the_same_clock() -> None:
    async def session() -> list[str]:
        runtime = make_runtime(clock=FixedClock(), content_store={"max_entries": 4})
        for n in range(10):
            await runtime.run(f"turn {n}")
        return sorted(runtime._session.content.entries)  # type: ignore[union-attr]

    assert await session() == await session()


class SetClock:
    """A clock a test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000

    def now_ms(self) -> int:
        return self.now


def stored_lines(request: ModelRequest) -> list[str]:
    system = request.messages[0].content or ""
    if "## Stored content" not in system:
        return []
    section = system.split("## Stored content\n", 1)[1]
    return [line for line in section.splitlines() if line.startswith("- content:")]


async def test_the_listing_puts_the_newest_last_and_leaves_out_what_expired() -> None:
    clock = SetClock()
    provider = ScriptedProvider(lambda request: "alpha\nbeta")
    runtime = make_runtime(
        provider=provider, clock=clock, memory_extraction="rules", content_store={"ttl_ms": 1_000}
    )
    for _ in range(3):
        await runtime.run("tell me something")
        clock.now += 10
    listed = [line.split(" ")[1] for line in stored_lines(provider.requests[-1])]
    assert listed == ["content:run-1", "content:run-2"]  # the newest last
    assert "read_content" in {tool.name for tool in provider.requests[-1].tools}
    clock.now += 5_000
    await runtime.run("and now?")
    assert stored_lines(provider.requests[-1]) == []
    assert "read_content" not in {tool.name for tool in provider.requests[-1].tools}


def test_the_listing_keeps_the_newest_and_adds_what_the_request_names() -> None:
    s = store()
    titles = ["Packing list for the trip:", "Glad it helps.", "Budget per day:", "Anything else?",
              "You're welcome.", "Sure.", "Itinerary for Sintra:"]  # fmt: skip
    for n, title in enumerate(titles):
        s.put(f"r{n}", f"{title}\nmore", run_id=f"run{n}", now_ms=n)
    refs = lambda about: [e.ref for e in s.listed(4, now_ms=10, about=about)]  # noqa: E731
    # Named by its first line, the packing list comes back among the newest two and the
    # next newest; oldest first.
    assert refs("put the packing list in a table") == ["r0", "r4", "r5", "r6"]
    assert refs("show the budget again") == ["r2", "r4", "r5", "r6"]
    # Nothing named: the newest, as before.
    assert refs("format that as a table") == ["r3", "r4", "r5", "r6"]
    assert refs("") == [e.ref for e in s.newest(4, now_ms=10)]
    assert s.listed(0, now_ms=10, about="packing") == []


async def test_the_pack_lists_an_older_answer_the_request_names() -> None:
    replies = iter(["Packing list for the trip:\n- shoes\n- a rain jacket", *["Sure."] * 6])
    provider = ScriptedProvider(lambda request: next(replies, "ok"))
    runtime = make_runtime(provider=provider, memory_extraction="rules")
    for text in ["packing list please", *[f"chat {n}" for n in range(6)]]:
        await runtime.run(text)
    await runtime.run("put the packing list in a table")
    listed = [line.split(" ")[1] for line in stored_lines(provider.requests[-1])]
    assert listed[0] == "content:run-1" and len(listed) == 5
    await runtime.run("and now?")
    later = [line.split(" ")[1] for line in stored_lines(provider.requests[-1])]
    assert "content:run-1" not in later


async def test_a_read_leaves_no_round_trip_in_history_but_a_failed_one_stays() -> None:
    script = [follow_up]
    provider = ScriptedProvider(lambda request: script[0](request))
    events: list[Any] = []
    runtime = make_runtime(provider=provider, memory_extraction="rules", on_event=events.append)
    await runtime.run("list three words")
    result = await runtime.run("format that as a table")
    # The turn's own second call saw the whole body...
    assert next(m for m in provider.requests[-1].messages if m.role == "tool").content == (
        "alpha\nbeta\ngamma"
    )
    # ...the history keeps the question and the answer, the events the retrieval.
    assert [m.role for m in result.messages] == ["user", "assistant"]
    assert not result.messages[-1].tool_calls and result.output.startswith("| line |")
    assert [(e.ref, e.found) for e in events if e.kind == "ContentRetrieved"] == [
        ("content:run-1", True)
    ]
    await runtime.run("thanks")
    later = provider.requests[-1].messages
    assert not any(m.role == "tool" or m.tool_calls for m in later)
    assert "alpha\nbeta\ngamma" in "\n".join(m.content or "" for m in later)  # the reply itself

    def misread(request: ModelRequest) -> ModelReply | str:
        if request.messages[-1].role == "tool":
            return "that answer is gone"
        return ModelReply(tool_calls=(tool_call("read_content", {"ref": "content:gone"}),))

    script[0] = misread
    missed = await runtime.run("format the old one as a table")
    tool = next(m for m in missed.messages if m.role == "tool")
    assert tool.content.startswith("error") and "ContentRefNotFound" in tool.content
    assert [c.name for m in missed.messages for c in m.tool_calls] == ["read_content"]


LONG_ANSWER = "\n".join(
    f"Day {n}: walk the old town, lunch by the river, museum {n}." for n in range(40)
)


def long_follow_up(request: ModelRequest) -> ModelReply | str:
    last = request.messages[-1]
    if last.role == "tool":
        return "Here it is: " + last.content.splitlines()[0]
    said = next(m.content or "" for m in reversed(request.messages) if m.role == "user")
    if "table" in said:
        lines = stored_lines(request)
        return ModelReply(tool_calls=(tool_call("read_content", {"ref": lines[-1].split(" ")[1]}),))
    return LONG_ANSWER if "itinerary" in said else f"You said: {said}"


async def test_a_body_read_with_read_content_reaches_the_model_whole() -> None:
    provider = ScriptedProvider(long_follow_up)
    runtime = make_runtime(provider=provider, memory_extraction="rules")
    await runtime.run("plan my itinerary")
    await runtime.run("format that as a table")
    tool = next(m for m in provider.requests[-1].messages if m.role == "tool")
    assert tool.content == LONG_ANSWER  # over max_tool_output_tokens, yet not compressed


async def test_the_listing_survives_a_tight_budget_before_older_transcript() -> None:
    provider = ScriptedProvider(long_follow_up)
    runtime = make_runtime(
        provider=provider, memory_extraction="rules", context_window=1400, max_reply_tokens=200
    )
    await runtime.run("plan my itinerary")
    for n in range(12):
        await runtime.run(f"Tell me something about the harbour number {n}, at some length please.")
    result = await runtime.run("format that as a table")
    assert stored_lines(provider.requests[-2]) != []
    assert result.output.startswith("Here it is: ")


class _CountedWalks(dict[str, Any]):
    """The store's entries, counting each walk over them."""

    walks = 0

    def values(self) -> Any:
        self.walks += 1
        return super().values()

    def items(self) -> Any:
        self.walks += 1
        return super().items()


@pytest.mark.parametrize("held", [500, 2_000])
def test_trimming_thousands_of_taken_up_entries_walks_the_store_a_few_times(held: int) -> None:
    # An imported session of thousands of entries taken up by a store of 8 (issue 20.8):
    # evicting each one by a fresh search over all the others was quadratic.
    source = store(max_entries=held)
    for n in range(held):
        source.put(f"r{n:05d}", f"body {n}", run_id=f"run{n}", now_ms=n)
    s = store(max_entries=8)
    assert s.resume([entry.to_wire() for entry in source.entries.values()]) == []
    s.entries = counted = _CountedWalks(s.entries)
    s.put("new", "the newest", run_id="new", now_ms=held)
    assert counted.walks <= 4  # the same few walks whatever `held` is
    kept = [f"r{n:05d}" for n in range(held - 7, held)] + ["new"]
    assert sorted(s.entries) == sorted(kept) and s.evictions == held - 7
    written, evicted = s.take_changes()
    assert [e.ref for e in written] == ["new"] and len(evicted) == held - 7
