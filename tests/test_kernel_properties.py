"""The kernel's invariants over arbitrary sequences of runs (Hypothesis)."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import agrun
from agrun import FunctionSkill
from conftest import make_runtime, run_async


async def noted(input, context, helpers):
    helpers.append_memory({"kind": "fact", "text": input or "-", "data": {"n": len(input)}})
    return {"seen": len(context.memory.read_all())}


async def boom(input, context, helpers):
    helpers.append_memory({"text": "never kept"})
    raise RuntimeError(input)


async def looper(input, context, helpers):
    helpers.append_memory({"text": f"cycle {context.state.cycle_count}"})
    if context.state.cycle_count < len(input) % 5:
        helpers.request_cycle("again")
    return [context.state.cycle_count]


async def odd(input, context, helpers):
    return {input}


SKILLS = [
    FunctionSkill(name, fn)
    for name, fn in [("noted", noted), ("boom", boom), ("looper", looper), ("odd", odd)]
]
calls = st.lists(
    st.tuples(
        st.text(max_size=12), st.sampled_from([None, "echo", "noted", "boom", "looper", "odd"])
    ),
    max_size=8,
)


def make_agent() -> agrun.Runtime:
    return make_runtime(*SKILLS, max_cycles=3)


async def play(
    runtime: agrun.Runtime, sequence: list[tuple[str, str | None]]
) -> list[agrun.RunResult]:
    return [await runtime.run(text, skill=skill) for text, skill in sequence]


def dump(runtime: agrun.Runtime, results: list[agrun.RunResult]) -> str:
    return json.dumps(
        {
            "results": [result.to_wire() for result in results],
            "memory": [entry.to_wire() for entry in runtime.memory.read_all()],
            "state": runtime.state.to_wire(),
        },
        sort_keys=True,
    )


@settings(max_examples=30, deadline=None)
@given(calls)
def test_runs_replay_identically_and_keep_the_memory_contract(
    sequence: list[tuple[str, str | None]],
) -> None:
    first, second = make_agent(), make_agent()
    results = run_async(play(first, sequence))
    assert dump(first, results) == dump(second, run_async(play(second, sequence)))

    succeeded = {result.state.run_id for result in results if result.ok}
    entries = first.memory.read_all()
    assert [entry.seq for entry in entries] == list(range(1, len(entries) + 1))
    assert {entry.run_id for entry in entries} <= succeeded
    seqs = [event.seq for result in results for event in result.events]
    assert seqs == list(range(1, len(seqs) + 1))
    for result in results:
        assert result.state.step_count == len(result.steps)
        assert result.state.phase is None
        assert result.state.cycle_count == len(result.state.oodae.cycles) <= 3
        assert (result.error is None) == result.ok
        assert (result.output is None) or result.ok
        if not result.ok:
            assert not any(event.kind == "MemoryAppended" for event in result.events)
    if results:
        assert first.state.last_run == results[-1].events[-1].summary  # type: ignore[union-attr]
