import json

import agrun
from agrun import FunctionSkill
from conftest import make_runtime


async def planner(input, context, helpers):
    helpers.append_memory({"kind": "fact", "text": input, "data": {"len": len(input)}})
    if context.state.cycle_count < 2:
        helpers.request_cycle("refine")
    return {"plan": input.split(), "seen": len(context.memory.read_all())}


async def broken(input, context, helpers):
    raise ValueError(input)


async def session(runtime: agrun.Runtime) -> str:
    events: list[dict[str, object]] = []
    runtime.subscribe(lambda event: events.append(event.to_wire()))
    results = [
        await runtime.run("plan a trip"),
        await runtime.run("hello"),
        await runtime.run("oops", skill="broken"),
        await runtime.run("plan dinner"),
    ]
    return json.dumps(
        {
            "results": [result.to_wire() for result in results],
            "memory": [entry.to_wire() for entry in runtime.memory.read_all()],
            "state": runtime.state.to_wire(),
            "events": events,
        },
        sort_keys=True,
        allow_nan=False,
    )


def make_agent() -> agrun.Runtime:
    return make_runtime(
        FunctionSkill("planner", planner, applies=lambda text: text.startswith("plan")),
        FunctionSkill("broken", broken),
    )


async def test_same_inputs_give_byte_identical_results_traces_and_events() -> None:
    first = await session(make_agent())
    second = await session(make_agent())
    assert first == second
    assert '"runId": "run-4"' in first


async def test_the_event_stream_reads_back_into_the_same_events() -> None:
    runtime = make_agent()
    result = await runtime.run("plan a trip")
    wire = json.loads(json.dumps([event.to_wire() for event in result.events]))
    assert tuple(agrun.parse_event(item) for item in wire) == result.events
