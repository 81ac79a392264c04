import logging

import pytest

import agrun
from agrun import ConfigError, FunctionSkill
from conftest import make_runtime


async def test_a_successful_run_emits_its_events_in_order() -> None:
    result = await make_runtime().run("hi")
    assert [(event.kind, event.seq, event.at) for event in result.events] == [
        ("RunStarted", 1, 1_700_000_000_000),
        ("PhaseEntered", 2, 1_700_000_000_001),
        ("PhaseEntered", 3, 1_700_000_000_002),
        ("PhaseEntered", 4, 1_700_000_000_003),
        ("SkillSelected", 5, 1_700_000_000_004),
        ("PhaseEntered", 6, 1_700_000_000_005),
        ("PhaseEntered", 7, 1_700_000_000_006),
        ("ObservationDerived", 8, 1_700_000_000_007),
        ("MemoryAppended", 9, 1_700_000_000_009),
        ("RunFinished", 10, 1_700_000_000_010),
    ]
    assert {event.run_id for event in result.events} == {"run-1"}
    finished = result.events[-1]
    assert finished.kind == "RunFinished"
    assert finished.summary.to_wire() == {
        "runId": "run-1",
        "status": "succeeded",
        "selectedSkill": "echo",
        "cycleCount": 1,
        "stepCount": 7,
        "observation": result.state.observation.to_wire(),  # type: ignore[union-attr]
        "error": None,
        "startedAt": 1_700_000_000_000,
        "finishedAt": 1_700_000_000_010,
    }


async def test_subscribers_and_on_event_see_every_event_once() -> None:
    from_option: list[agrun.RuntimeEvent] = []
    subscribed: list[agrun.RuntimeEvent] = []
    runtime = make_runtime(on_event=from_option.append)
    runtime.subscribe(subscribed.append)
    first = await runtime.run("a")
    second = await runtime.run("b")
    assert from_option == subscribed == [*first.events, *second.events]
    assert [event.seq for event in subscribed] == list(range(1, 21))


async def test_unsubscribe_stops_delivery_and_is_idempotent() -> None:
    seen: list[str] = []
    runtime = make_runtime()
    unsubscribe = runtime.subscribe(lambda event: seen.append(event.kind))
    await runtime.run("a")
    unsubscribe()
    unsubscribe()
    await runtime.run("b")
    assert len(seen) == 10


async def test_a_failing_subscriber_is_logged_and_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    def bad(event: agrun.RuntimeEvent) -> None:
        raise RuntimeError("subscriber bug")

    runtime = make_runtime()
    runtime.subscribe(bad)
    runtime.subscribe(lambda event: seen.append(event.kind))
    with caplog.at_level(logging.ERROR, logger="agrun"):
        result = await runtime.run("a")
    assert result.state.status == "succeeded"
    assert len(seen) == 10
    assert len(caplog.records) == 10
    assert "failed on RunStarted" in caplog.records[0].getMessage()


async def test_failure_and_cycle_events_carry_their_details() -> None:
    async def twice_then_fail(input, context, helpers):
        helpers.append_memory({"text": "x"})
        if context.state.cycle_count == 1:
            helpers.request_cycle("once more")
            return "first"
        raise RuntimeError("second cycle broke")

    runtime = make_runtime(FunctionSkill("flaky", twice_then_fail))
    result = await runtime.run("go", skill="flaky")
    kinds = [event.kind for event in result.events]
    assert kinds.count("PhaseEntered") == 9
    assert kinds[-5:] == [
        "PhaseEntered",
        "ObservationDerived",
        "MemoryRequestDropped",
        "MemoryRequestDropped",
        "RunFailed",
    ]
    (requested,) = [event for event in result.events if event.kind == "CycleRequested"]
    assert (requested.reason, requested.cycle) == ("once more", 1)
    failed = result.events[-1]
    assert failed.kind == "RunFailed"
    assert failed.error == result.error
    assert failed.summary == runtime.state.last_run


def test_subscribe_takes_a_callable() -> None:
    with pytest.raises(ConfigError, match="subscribe\\(\\) takes a callable, got str"):
        make_runtime().subscribe("print")  # type: ignore[arg-type]
