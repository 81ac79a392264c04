import math

import pytest

import agrun
from agrun import FunctionSkill, MemoryEntryError, MemoryEntryRequest, ReadOnlyError
from agrun.memory._log import parse_request
from agrun.testing import FixedClock
from conftest import make_runtime as make_base_runtime


def make_runtime(*skills: FunctionSkill, **options: object) -> agrun.Runtime:
    return make_base_runtime(*skills, clock=FixedClock(start_ms=1000), **options)


def test_request_defaults_to_a_note() -> None:
    request = parse_request({"text": "likes tea"})
    assert request == MemoryEntryRequest(kind="note", text="likes tea", data={})


def test_a_request_model_passes_through() -> None:
    request = MemoryEntryRequest(kind="fact", text="x")
    assert parse_request(request) is request


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        ("just text", "entry", "expected a dict with 'text'"),
        (None, "entry", "got NoneType"),
        ({}, "text", "is required"),
        ({"text": ""}, "text", "at least 1 character"),
        ({"text": 3}, "text", "valid string"),
        ({"text": "x", "kind": ""}, "kind", "should match pattern"),
        ({"text": "x", "kind": "has space"}, "kind", "should match pattern"),
        ({"text": "x", "kind": 5}, "kind", "valid string"),
        ({"text": "x", "data": [1]}, "data", "valid dictionary"),
        ({"text": "x", "data": {"s": {1}}}, "data", "$.s is a set"),
        ({"text": "x", "data": {"n": math.nan}}, "data", "$.n is nan"),
        ({"text": "x", "id": "mem-9"}, "id", "unknown field; allowed fields are kind, text, data"),
        ({"text": "x", "createdAt": 1}, "createdAt", "unknown field"),
    ],
)
def test_malformed_request_names_the_field(entry: object, field: str, message: str) -> None:
    with pytest.raises(MemoryEntryError) as caught:
        parse_request(entry)
    assert caught.value.field == field
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"memory entry field {field!r}: ")


async def test_successful_run_appends_requests_then_the_observation() -> None:
    async def remember(input, context, helpers):
        helpers.append_memory({"kind": "fact", "text": "sky is blue", "data": {"k": [1]}})
        helpers.append_memory(MemoryEntryRequest(text="second"))
        return "done"

    runtime = make_runtime(FunctionSkill("remember", remember))
    result = await runtime.run("go", skill="remember")
    entries = runtime.memory.read_all()
    assert [entry.to_wire() for entry in entries] == [
        {
            "id": "mem-1",
            "seq": 1,
            "runId": "run-1",
            "kind": "fact",
            "text": "sky is blue",
            "data": {"k": [1]},
            "createdAt": entries[0].created_at,
            "source": "skill",
            "skill": "remember",
        },
        {
            "id": "mem-2",
            "seq": 2,
            "runId": "run-1",
            "kind": "note",
            "text": "second",
            "data": {},
            "createdAt": entries[1].created_at,
            "source": "skill",
            "skill": "remember",
        },
        {
            "id": "mem-3",
            "seq": 3,
            "runId": "run-1",
            "kind": "observation",
            "text": "done",
            "data": {},
            "createdAt": entries[2].created_at,
            "source": "observation",
            "skill": "remember",
        },
    ]
    assert [step.action for step in result.steps][-4:] == [
        "append_memory",
        "append_memory",
        "append_memory",
        "finish",
    ]


async def test_observation_policy_can_be_switched_off() -> None:
    runtime = make_runtime(remember_observations=False)
    await runtime.run("hi")
    assert runtime.memory.read_all() == ()


async def test_empty_output_is_not_remembered() -> None:
    async def quiet(input, context, helpers):
        return None

    runtime = make_runtime(FunctionSkill("quiet", quiet))
    await runtime.run("hi", skill="quiet")
    assert runtime.memory.read_all() == ()


async def test_failed_run_appends_nothing_and_records_the_drop() -> None:
    async def broken(input, context, helpers):
        helpers.append_memory({"text": "half a thought"})
        raise RuntimeError("boom")

    runtime = make_runtime(FunctionSkill("broken", broken))
    result = await runtime.run("go", skill="broken")
    assert result.state.status == "failed"
    assert runtime.memory.read_all() == ()
    drops = [step for step in result.steps if step.action == "drop_memory_request"]
    assert [(step.detail, step.skill) for step in drops] == [
        ("dropped note entry request (run failed: requested memory is not kept)", "broken")
    ]
    dropped = [event for event in result.events if event.kind == "MemoryRequestDropped"]
    assert [event.request.text for event in dropped] == ["half a thought"]
    assert not any(event.kind == "MemoryAppended" for event in result.events)


async def test_malformed_request_raises_in_the_skill_and_fails_the_run() -> None:
    seen: list[str] = []

    async def sloppy(input, context, helpers):
        try:
            helpers.append_memory({"text": "ok", "bogus": 1})
        except MemoryEntryError as exc:
            seen.append(exc.field)
            raise

    runtime = make_runtime(FunctionSkill("sloppy", sloppy))
    result = await runtime.run("go", skill="sloppy")
    assert seen == ["bogus"]
    assert result.error is not None
    assert result.error.code == "skill_error"
    assert result.error.message == (
        "skill 'sloppy' raised MemoryEntryError: memory entry field 'bogus': "
        "unknown field; allowed fields are kind, text, data"
    )


async def test_memory_is_shared_across_runs_and_read_in_order() -> None:
    seen: list[tuple[str, ...]] = []

    async def reader(input, context, helpers):
        seen.append(tuple(entry.text for entry in context.memory.read_all()))
        helpers.append_memory({"text": input})
        return None

    runtime = make_runtime(FunctionSkill("reader", reader))
    for word in ("a", "b", "c"):
        await runtime.run(word, skill="reader")
    assert seen == [(), ("a",), ("a", "b")]
    assert [entry.seq for entry in runtime.memory.read_all()] == [1, 2, 3]


async def test_memory_is_runtime_instance_scoped() -> None:
    first, second = make_runtime(), make_runtime()
    await first.run("hi")
    assert len(first.memory.read_all()) == 1
    assert second.memory.read_all() == ()


async def test_memory_offers_no_way_to_change_it() -> None:
    runtime = make_runtime()
    await runtime.run("hi")
    view = runtime.memory
    assert not any(hasattr(view, name) for name in ("append", "update", "delete", "clear"))
    entries = view.read_all()
    assert isinstance(entries, tuple)
    with pytest.raises(ReadOnlyError):
        entries[0].text = "changed"  # type: ignore[misc]
    assert runtime.memory.read_all()[0].text == "echo: hi"


async def test_requests_from_every_cycle_are_kept_on_success() -> None:
    async def looping(input, context, helpers):
        helpers.append_memory({"text": f"cycle {context.state.cycle_count}"})
        if context.state.cycle_count < 3:
            helpers.request_cycle("more")
        return None

    runtime = make_runtime(FunctionSkill("looping", looping))
    await runtime.run("go", skill="looping")
    assert [entry.text for entry in runtime.memory.read_all()] == ["cycle 1", "cycle 2", "cycle 3"]
