import asyncio
import contextlib

import pytest

from agrun import CancelToken, ConfigError, FunctionSkill
from conftest import make_runtime


def waiting_skill(started: asyncio.Event, stopped: list[str]) -> FunctionSkill:
    async def wait(input, context, helpers):
        helpers.append_memory({"text": "half done"})
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.append("cleaned up")
            raise
        return "never"

    return FunctionSkill("wait", wait)


async def test_a_token_cancels_the_run_and_run_returns_its_result() -> None:
    started, stopped = asyncio.Event(), []
    runtime = make_runtime(waiting_skill(started, stopped))
    token = CancelToken()
    task = asyncio.ensure_future(runtime.run("go", skill="wait", signal=token))
    await started.wait()
    token.cancel("user pressed stop")
    result = await task
    assert stopped == ["cleaned up"]
    assert result.state.status == "cancelled"
    assert result.output is None
    assert result.error is not None
    assert result.error.to_wire() == {
        "code": "cancelled",
        "message": "user pressed stop",
        "skill": "wait",
        "phase": "act",
        "cycle": 1,
    }
    assert result.state.observation.outcome == "cancelled"  # type: ignore[union-attr]
    assert [step.action for step in result.steps][-2:] == ["drop_memory_request", "cancel"]
    assert result.events[-1].kind == "RunCancelled"
    assert runtime.memory.read_all() == ()
    assert runtime.state.last_run.status == "cancelled"  # type: ignore[union-attr]
    assert (await runtime.run("next")).state.status == "succeeded"


async def test_an_already_cancelled_token_stops_the_run_at_its_first_step() -> None:
    token = CancelToken()
    token.cancel()
    runtime = make_runtime()
    result = await runtime.run("go", signal=token)
    assert result.state.status == "cancelled"
    assert [event.kind for event in result.events] == [
        "RunStarted",
        "PhaseEntered",
        "ObservationDerived",
        "RunCancelled",
    ]
    assert result.error.message == "cancelled by the caller"  # type: ignore[union-attr]
    assert result.error.phase == "observe"  # type: ignore[union-attr]


async def test_cancelling_after_the_run_does_nothing() -> None:
    token = CancelToken()
    runtime = make_runtime()
    result = await runtime.run("go", signal=token)
    token.cancel()
    token.cancel("twice")
    assert result.state.status == "succeeded"
    assert token.cancelled
    assert token.reason == "cancelled by the caller"


async def test_a_skill_that_ignores_the_token_still_keeps_nothing() -> None:
    async def stubborn(input, context, helpers):
        helpers.append_memory({"text": "no"})
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(30)
        return "finished anyway"

    token = CancelToken()
    runtime = make_runtime(FunctionSkill("stubborn", stubborn))
    task = asyncio.ensure_future(runtime.run("go", skill="stubborn", signal=token))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    token.cancel()
    result = await task
    assert result.state.status == "cancelled"
    assert result.output is None
    assert runtime.memory.read_all() == ()


async def test_cancelling_the_task_closes_the_run_then_propagates() -> None:
    started, stopped = asyncio.Event(), []
    events: list[str] = []
    runtime = make_runtime(waiting_skill(started, stopped))
    runtime.subscribe(lambda event: events.append(event.kind))
    task = asyncio.ensure_future(runtime.run("go", skill="wait"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stopped == ["cleaned up"]
    assert events[-3:] == ["ObservationDerived", "MemoryRequestDropped", "RunCancelled"]
    last = runtime.state.last_run
    assert last is not None
    assert last.status == "cancelled"
    assert last.error.message == "the task running the run was cancelled"  # type: ignore[union-attr]
    assert runtime.memory.read_all() == ()
    assert runtime.current_run is None
    assert (await runtime.run("next")).state.status == "succeeded"


async def test_a_run_waiting_for_the_lock_can_be_cancelled_without_starting() -> None:
    started, stopped = asyncio.Event(), []
    runtime = make_runtime(waiting_skill(started, stopped))
    token = CancelToken()
    first = asyncio.ensure_future(runtime.run("one", skill="wait", signal=token))
    await started.wait()
    second = asyncio.ensure_future(runtime.run("two"))
    await asyncio.sleep(0)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    token.cancel()
    assert (await first).state.status == "cancelled"
    assert runtime.state.last_run.run_id == "run-1"  # type: ignore[union-attr]
    assert (await runtime.run("three")).state.run_id == "run-2"


async def test_signal_must_be_a_cancel_token() -> None:
    with pytest.raises(ConfigError, match=r"signal must be an agrun\.CancelToken, got str"):
        await make_runtime().run("go", signal="abort")  # type: ignore[arg-type]
