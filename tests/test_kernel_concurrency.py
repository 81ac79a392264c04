import asyncio
import json

import agrun
from agrun import FunctionSkill
from agrun.testing import FixedClock, SequentialIds
from conftest import make_runtime


async def yielding(input, context, helpers):
    # Gives the other run every chance to interleave, were it not serialized.
    for _ in range(3):
        await asyncio.sleep(0)
    helpers.append_memory({"text": f"{input} saw {len(context.memory.read_all())} entries"})
    return f"{input}@{context.state.run_id}"


def make_agent(events: list[agrun.RuntimeEvent]) -> agrun.Runtime:
    return make_runtime(
        FunctionSkill("yielding", yielding), default_skill="yielding", on_event=events.append
    )


def dump(results: list[agrun.RunResult], runtime: agrun.Runtime, events: list[object]) -> str:
    return json.dumps(
        {
            "results": [result.to_wire() for result in results],
            "memory": [entry.to_wire() for entry in runtime.memory.read_all()],
            "state": runtime.state.to_wire(),
            "events": [event.to_wire() for event in events],  # type: ignore[attr-defined]
        },
        sort_keys=True,
    )


async def test_concurrent_runs_do_not_interleave() -> None:
    events: list[agrun.RuntimeEvent] = []
    runtime = make_agent(events)
    first, second = await asyncio.gather(runtime.run("a"), runtime.run("b"))
    assert (first.output, second.output) == ("a@run-1", "b@run-2")
    run_ids = [event.run_id for event in events]
    assert run_ids == sorted(run_ids)
    assert run_ids.count("run-1") == len(first.events)
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    assert [entry.text for entry in runtime.memory.read_all()] == [
        "a saw 0 entries",
        "a@run-1",
        "b saw 2 entries",
        "b@run-2",
    ]


async def test_concurrent_runs_equal_sequential_runs() -> None:
    together_events: list[agrun.RuntimeEvent] = []
    together = make_agent(together_events)
    gathered = await asyncio.gather(*(together.run(word) for word in ("a", "b", "c")))

    one_by_one_events: list[agrun.RuntimeEvent] = []
    one_by_one = make_agent(one_by_one_events)
    sequential = [await one_by_one.run(word) for word in ("a", "b", "c")]

    assert dump(list(gathered), together, together_events) == dump(
        sequential, one_by_one, one_by_one_events
    )


async def test_a_skill_cannot_run_its_own_runtime() -> None:
    holder: list[agrun.Runtime] = []

    async def reentrant(input, context, helpers):
        return await holder[0].run("inner")

    runtime = agrun.create_runtime(
        clock=FixedClock(), ids=SequentialIds(), skills=[FunctionSkill("re", reentrant)]
    )
    holder.append(runtime)
    result = await runtime.run("outer", skill="re")
    assert result.error is not None
    assert result.error.code == "skill_error"
    assert "run() was called from inside a skill of the same runtime" in result.error.message
    assert (await runtime.run("after")).state.run_id == "run-2"


async def test_a_skill_may_run_another_runtime() -> None:
    inner = agrun.create_runtime(clock=FixedClock(), ids=SequentialIds())

    async def delegate(input, context, helpers):
        return (await inner.run(input)).output

    outer = agrun.create_runtime(
        clock=FixedClock(), ids=SequentialIds(), skills=[FunctionSkill("d", delegate)]
    )
    assert (await outer.run("hi", skill="d")).output == "echo: hi"
