import pytest

import agrun
from agrun import ConfigError, FunctionSkill, HelpersClosedError, ReadOnlyError
from conftest import make_runtime


async def test_a_run_goes_through_the_five_phases_in_order() -> None:
    result = await make_runtime().run("hi")
    phases = [event.phase for event in result.events if event.kind == "PhaseEntered"]
    assert phases == ["observe", "orient", "decide", "act", "evaluate"]
    assert [step.action for step in result.steps] == [
        "observe",
        "orient",
        "select_skill",
        "run_skill",
        "evaluate",
        "append_memory",
        "finish",
    ]
    assert result.state.step_count == 7
    assert result.state.cycle_count == 1
    assert result.state.phase is None


async def test_the_skill_sees_the_act_phase_and_its_own_selection() -> None:
    seen: list[tuple[object, ...]] = []

    async def look(input, context, helpers):
        state = context.state
        seen.append((state.phase, state.status, state.selected_skill, state.cycle_count))
        return None

    await make_runtime(FunctionSkill("look", look)).run("hi", skill="look")
    assert seen == [("act", "running", "look", 1)]


async def test_one_cycle_record_holds_what_each_phase_saw_and_decided() -> None:
    runtime = make_runtime()
    await runtime.run("first")
    result = await runtime.run("hello")
    (cycle,) = result.state.oodae.cycles
    assert cycle.to_wire() == {
        "cycle": 1,
        "observe": {"inputChars": 5, "memoryCount": 1, "previous": None},
        "orient": {"requestedSkill": None, "candidates": []},
        "decide": {
            "skill": "echo",
            "reason": "default: no matcher applies, so the default skill 'echo'",
        },
        "act": {"skill": "echo", "outcome": "returned", "memoryRequests": 0, "cycleRequest": None},
        "evaluate": {"outcome": "succeeded", "next": "finish"},
    }
    assert result.state.observation is not None
    assert result.state.observation.to_wire() == {
        "cycle": 1,
        "skill": "echo",
        "outcome": "succeeded",
        "summary": "echo: hello",
        "outputKind": "text",
        "errorCode": None,
    }


async def counting(input, context, helpers):
    cycle = context.state.cycle_count
    if cycle < int(input):
        helpers.request_cycle(f"after {cycle}")
    previous = context.state.observation
    return {"cycle": cycle, "previous": previous.summary if previous else None}


async def test_a_skill_may_ask_for_more_cycles() -> None:
    runtime = make_runtime(FunctionSkill("count", counting))
    result = await runtime.run("3", skill="count")
    assert result.state.status == "succeeded"
    assert result.output == {
        "cycle": 3,
        "previous": '{"cycle":2,"previous":"{\\"cycle\\":1,\\"previous\\":null}"}',
    }
    cycles = result.state.oodae.cycles
    assert [c.cycle for c in cycles] == [1, 2, 3]
    assert [c.act.cycle_request for c in cycles] == ["after 1", "after 2", None]  # type: ignore[union-attr]
    assert [c.evaluate.next for c in cycles] == ["continue", "continue", "finish"]  # type: ignore[union-attr]
    assert [c.decide.reason for c in cycles][
        1
    ] == "continued: 'count' asked for another cycle (after 1)"  # type: ignore[union-attr]
    assert [e.reason for e in result.events if e.kind == "CycleRequested"] == [
        "after 1",
        "after 2",
    ]
    assert result.state.cycle_count == 3


async def test_the_cycle_limit_fails_the_run_instead_of_hanging() -> None:
    async def forever(input, context, helpers):
        helpers.append_memory({"text": "keep going"})
        helpers.request_cycle("again")
        return "partial"

    runtime = make_runtime(FunctionSkill("forever", forever), max_cycles=3)
    result = await runtime.run("go", skill="forever")
    assert result.state.status == "failed"
    assert result.output is None
    assert result.error is not None
    assert result.error.to_wire() == {
        "code": "cycle_limit",
        "message": "skill 'forever' asked for cycle 4, past max_cycles=3",
        "skill": "forever",
        "phase": "evaluate",
        "cycle": 3,
    }
    assert result.state.cycle_count == 3
    assert result.state.oodae.cycles[-1].evaluate.next == "fail"  # type: ignore[union-attr]
    assert runtime.memory.read_all() == ()
    assert [s.action for s in result.steps].count("drop_memory_request") == 3


async def test_max_cycles_of_one_allows_no_second_cycle() -> None:
    runtime = make_runtime(FunctionSkill("count", counting), max_cycles=1)
    assert (await runtime.run("1", skill="count")).state.status == "succeeded"
    assert (await runtime.run("2", skill="count")).error.code == "cycle_limit"  # type: ignore[union-attr]


async def test_request_cycle_reason_must_be_text() -> None:
    async def bad(input, context, helpers):
        helpers.request_cycle(5)

    result = await make_runtime(FunctionSkill("bad", bad)).run("go", skill="bad")
    assert result.error is not None
    assert result.error.message == (
        "skill 'bad' raised ConfigError: request_cycle(reason) takes a string, got int"
    )


async def test_context_state_is_read_only_for_the_skill() -> None:
    caught: list[BaseException] = []

    async def meddle(input, context, helpers):
        for attempt in (
            lambda: setattr(context.state, "status", "succeeded"),
            lambda: setattr(context.state, "phase", "evaluate"),
            lambda: setattr(context, "state", None),
            lambda: setattr(context, "memory", None),
        ):
            try:
                attempt()
            except ReadOnlyError as exc:
                caught.append(exc)
        return context.state.status

    result = await make_runtime(FunctionSkill("meddle", meddle)).run("go", skill="meddle")
    assert len(caught) == 4
    assert str(caught[0]).startswith("RunState.status is read-only")
    assert str(caught[2]) == "SkillContext.state is read-only: the runtime owns run state"
    assert result.output == "running"
    assert result.state.status == "succeeded"


async def test_helpers_close_when_the_skill_returns() -> None:
    kept: list[agrun.SkillHelpers] = []

    async def leak(input, context, helpers):
        kept.append(helpers)
        return None

    runtime = make_runtime(FunctionSkill("leak", leak))
    await runtime.run("go", skill="leak")
    with pytest.raises(
        HelpersClosedError,
        match=r"helpers.append_memory\(\) was called after skill 'leak' returned",
    ):
        kept[0].append_memory({"text": "late"})
    with pytest.raises(HelpersClosedError, match="request_cycle"):
        kept[0].request_cycle("late")
    assert runtime.memory.read_all() == ()


async def test_current_run_is_visible_while_in_flight_only() -> None:
    runtime = make_runtime()
    seen: list[object] = []

    async def peek(input, context, helpers):
        current = runtime.current_run
        seen.append(current.phase if current else None)
        return None

    runtime = make_runtime(FunctionSkill("peek", peek))
    await runtime.run("x", skill="peek")
    assert seen == ["act"]
    assert runtime.current_run is None


def test_request_cycle_rejects_non_text_before_the_run() -> None:
    helpers = agrun.SkillHelpers("s")
    with pytest.raises(ConfigError):
        helpers.request_cycle(None)  # type: ignore[arg-type]
