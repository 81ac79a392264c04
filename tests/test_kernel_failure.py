import asyncio
import math

import pytest

import agrun
from agrun import FunctionSkill
from conftest import make_runtime


async def boom(input, context, helpers):
    raise RuntimeError("the skill broke")


def sync_boom(input, context, helpers):
    raise KeyError("sync")


async def slow(input, context, helpers):
    await asyncio.sleep(30)
    return "too late"


async def test_a_raising_skill_fails_the_run_with_a_typed_error() -> None:
    runtime = make_runtime(FunctionSkill("boom", boom))
    result = await runtime.run("go", skill="boom")
    assert result.state.status == "failed"
    assert result.output is None
    assert result.error is not None
    assert result.error.to_wire() == {
        "code": "skill_error",
        "message": "skill 'boom' raised RuntimeError: the skill broke",
        "skill": "boom",
        "phase": "act",
        "cycle": 1,
    }
    assert result.state.error == result.error
    assert result.state.observation is not None
    assert result.state.observation.to_wire() == {
        "cycle": 1,
        "skill": "boom",
        "outcome": "failed",
        "summary": "skill 'boom' raised RuntimeError: the skill broke",
        "outputKind": None,
        "errorCode": "skill_error",
    }
    assert [step.action for step in result.steps] == [
        "observe",
        "orient",
        "select_skill",
        "run_skill",
        "fail",
    ]
    assert result.state.oodae.cycles[0].act.outcome == "raised"  # type: ignore[union-attr]
    assert [event.kind for event in result.events][-2:] == ["ObservationDerived", "RunFailed"]


async def test_last_run_records_the_failure_and_the_next_run_succeeds() -> None:
    runtime = make_runtime(FunctionSkill("boom", boom))
    failed = await runtime.run("go", skill="boom")
    last = runtime.state.last_run
    assert last is not None
    assert (last.run_id, last.status, last.selected_skill) == ("run-1", "failed", "boom")
    assert last.error == failed.error
    assert last.step_count == 5
    assert runtime.memory.read_all() == ()
    ok = await runtime.run("again")
    assert ok.state.status == "succeeded"
    assert ok.output == "echo: again"
    assert runtime.state.last_run.status == "succeeded"  # type: ignore[union-attr]
    assert runtime.state.last_run.error is None  # type: ignore[union-attr]


async def test_a_skill_that_raises_before_awaiting_is_caught_too() -> None:
    result = await make_runtime(FunctionSkill("sync", sync_boom)).run("go", skill="sync")
    assert result.error is not None
    assert result.error.message == "skill 'sync' raised KeyError: 'sync'"


async def test_a_slow_skill_times_out() -> None:
    runtime = make_runtime(FunctionSkill("slow", slow), skill_timeout_s=0.01)
    result = await runtime.run("go", skill="slow")
    assert result.state.status == "failed"
    assert result.error is not None
    assert result.error.to_wire() == {
        "code": "skill_timeout",
        "message": "skill 'slow' did not finish within 0.01 s",
        "skill": "slow",
        "phase": "act",
        "cycle": 1,
    }
    assert result.state.oodae.cycles[0].act.outcome == "timed_out"  # type: ignore[union-attr]
    assert (await runtime.run("next")).state.status == "succeeded"


async def test_a_skill_timeout_overrides_the_runtime_one() -> None:
    skill = FunctionSkill("slow", slow, timeout_s=0.01)
    result = await make_runtime(skill, skill_timeout_s=60).run("go", skill="slow")
    assert result.error is not None
    assert result.error.message == "skill 'slow' did not finish within 0.01 s"


async def test_the_timed_out_skill_is_cancelled() -> None:
    stopped: list[str] = []

    async def watched(input, context, helpers):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.append("cancelled")
            raise

    runtime = make_runtime(FunctionSkill("watched", watched), skill_timeout_s=0.01)
    await runtime.run("go", skill="watched")
    assert stopped == ["cancelled"]


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ({1, 2}, "$ is a set, not plain data (use dict, list, str, number, bool)"),
        (Opaque(), "$ is a Opaque, not plain data (use dict, list, str, number, bool)"),
        (math.nan, "$ is nan, which JSON cannot carry"),
        ({"rows": [1, math.inf]}, "$.rows[1] is inf, which JSON cannot carry"),
        (
            {"big": 2**64},
            "$.big is the integer 18446744073709551616, beyond JavaScript's safe range (2**53 - 1)",
        ),
        ({3: "x"}, "$ has the key 3; object keys must be strings"),
    ],
)
async def test_output_that_cannot_cross_into_js_fails_the_run(output: object, problem: str) -> None:
    async def odd(input, context, helpers):
        helpers.append_memory({"text": "should not stay"})
        return output

    runtime = make_runtime(FunctionSkill("odd", odd))
    result = await runtime.run("go", skill="odd")
    assert result.state.status == "failed"
    assert result.output is None
    assert result.error is not None
    assert result.error.code == "output_not_serializable"
    assert result.error.phase == "evaluate"
    assert (
        result.error.message == f"skill 'odd' returned output that cannot cross into JS: {problem}"
    )
    assert result.state.oodae.cycles[0].evaluate.to_wire() == {"outcome": "failed", "next": "fail"}  # type: ignore[union-attr]
    assert runtime.memory.read_all() == ()
    result.to_wire()


async def test_a_skill_that_cancels_itself_is_a_skill_error() -> None:
    async def quitter(input, context, helpers):
        raise asyncio.CancelledError

    result = await make_runtime(FunctionSkill("quitter", quitter)).run("go", skill="quitter")
    assert result.state.status == "failed"
    assert result.error is not None
    assert result.error.message == "skill 'quitter' was cancelled"


async def test_frozen_memory_data_can_be_returned_as_output() -> None:
    async def recall(input, context, helpers):
        return {"data": context.memory.read_all()[0].data, "pair": (1, 2)}

    async def store(input, context, helpers):
        helpers.append_memory({"text": "t", "data": {"tags": ["a"]}})
        return None

    runtime = make_runtime(FunctionSkill("store", store), FunctionSkill("recall", recall))
    await runtime.run("x", skill="store")
    result = await runtime.run("y", skill="recall")
    assert result.to_wire()["output"] == {"data": {"tags": ["a"]}, "pair": [1, 2]}


async def test_a_bridge_can_report_output_that_cannot_cross() -> None:
    async def foreign(input, context, helpers):
        helpers.append_memory({"text": "dropped"})
        raise agrun.OutputNotSerializableError("skill 'foreign' returned a Map at $.rows")

    runtime = make_runtime(FunctionSkill("foreign", foreign))
    result = await runtime.run("go", skill="foreign")
    assert result.error is not None
    assert result.error.to_wire() == {
        "code": "output_not_serializable",
        "message": "skill 'foreign' returned a Map at $.rows",
        "skill": "foreign",
        "phase": "act",
        "cycle": 1,
    }
    assert runtime.memory.read_all() == ()
