import pytest

import agrun
from agrun import ConfigError, InputError
from agrun.testing import FixedClock, SequentialIds


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_cycles": 0}, "max_cycles must be a positive int, got 0"),
        ({"max_cycles": -1}, "max_cycles must be a positive int, got -1"),
        ({"max_cycles": 2.0}, "max_cycles must be a positive int, got 2.0"),
        ({"max_cycles": True}, "max_cycles must be a positive int, got True"),
        ({"max_cycles": "3"}, "max_cycles must be a positive int, got '3'"),
        ({"skill_timeout_s": 0}, "skill_timeout_s must be a positive number or None: 0"),
        ({"skill_timeout_s": -1.5}, "skill_timeout_s must be a positive number or None: -1.5"),
        (
            {"skill_timeout_s": float("inf")},
            "skill_timeout_s must be a positive number or None: inf",
        ),
        ({"skill_timeout_s": "5"}, "skill_timeout_s must be a positive number or None: '5'"),
        ({"remember_observations": 1}, "remember_observations must be a bool, got 1"),
        ({"on_event": "log"}, "on_event must be callable or None, got str"),
        ({"clock": object()}, "clock must have now_ms\\(\\) -> int, got object"),
        ({"ids": 42}, "ids must have new_id\\(prefix\\) -> str, got int"),
        ({"skills": 3}, "skills must be a list of skills, got int"),
    ],
)
def test_bad_options_are_named(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{message}$"):
        agrun.create_runtime(**options)  # type: ignore[arg-type]


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        agrun.create_runtime(FixedClock())  # type: ignore[misc]


def test_good_options_are_accepted() -> None:
    runtime = agrun.create_runtime(
        clock=FixedClock(), ids=SequentialIds(), max_cycles=1, skill_timeout_s=None
    )
    assert runtime.state == agrun.RuntimeState(last_run=None)
    assert runtime.current_run is None


@pytest.mark.parametrize("bad", [None, 3, b"x", ["hi"], {"text": "hi"}])
async def test_non_string_input_changes_nothing(bad: object) -> None:
    events: list[object] = []
    runtime = agrun.create_runtime(ids=SequentialIds(), on_event=events.append)
    with pytest.raises(
        InputError, match=f"run\\(\\) takes a string input, got {type(bad).__name__}"
    ):
        await runtime.run(bad)  # type: ignore[arg-type]
    assert events == []
    assert runtime.state.last_run is None
    assert (await runtime.run("ok")).state.run_id == "run-1"


@pytest.mark.parametrize("bad", [3, ["echo"], b"echo"])
async def test_skill_option_must_be_a_name(bad: object) -> None:
    runtime = agrun.create_runtime()
    with pytest.raises(ConfigError, match="skill must be a skill name \\(str\\)"):
        await runtime.run("hi", skill=bad)  # type: ignore[arg-type]


async def test_run_with_the_system_clock_and_ids() -> None:
    runtime = agrun.create_runtime()
    result = await runtime.run("hi")
    assert result.state.run_id.startswith("run-")
    assert result.ok
    last = runtime.state.last_run
    assert last is not None
    assert last.finished_at >= last.started_at > 1_600_000_000_000


async def test_last_run_is_a_summary_not_a_history() -> None:
    runtime = agrun.create_runtime(clock=FixedClock(), ids=SequentialIds())
    for word in ("a", "b", "c"):
        await runtime.run(word)
    assert list(runtime.state.to_wire()) == ["lastRun"]
    assert runtime.state.last_run.run_id == "run-3"  # type: ignore[union-attr]
    assert "steps" not in agrun.LastRun.model_fields
    assert "events" not in agrun.LastRun.model_fields
