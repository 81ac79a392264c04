import pytest

from agrun import TransitionError
from agrun.kernel._state import PHASES, TRANSITIONS, advance, phase_of, status_of


def test_one_cycle_walks_the_phases_in_order_then_succeeds() -> None:
    position = advance("idle", "start")
    walked = [position]
    for _ in range(4):
        position = advance(position, "next")
        walked.append(position)
    assert walked == ["observe", "orient", "decide", "act", "evaluate"]
    assert advance("evaluate", "finish") == "succeeded"
    assert advance("evaluate", "repeat") == "observe"


@pytest.mark.parametrize("phase", PHASES)
def test_every_phase_can_fail_or_be_cancelled(phase: str) -> None:
    assert advance(phase, "fail") == "failed"  # type: ignore[arg-type]
    assert advance(phase, "cancel") == "cancelled"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("position", "move"),
    [
        ("idle", "next"),
        ("idle", "fail"),
        ("observe", "finish"),
        ("act", "repeat"),
        ("decide", "start"),
        ("succeeded", "start"),
        ("failed", "next"),
        ("cancelled", "cancel"),
        ("succeeded", "fail"),
    ],
)
def test_illegal_move_names_state_and_event(position: str, move: str) -> None:
    with pytest.raises(TransitionError) as caught:
        advance(position, move)  # type: ignore[arg-type]
    assert caught.value.state == position
    assert caught.value.event == move
    assert str(caught.value) == f"illegal transition: event {move!r} in state {position!r}"


def test_terminal_positions_have_no_way_out() -> None:
    sources = {source for source, _ in TRANSITIONS}
    assert sources.isdisjoint({"succeeded", "failed", "cancelled"})


@pytest.mark.parametrize(
    ("position", "status", "phase"),
    [
        ("idle", "running", None),
        ("observe", "running", "observe"),
        ("act", "running", "act"),
        ("evaluate", "running", "evaluate"),
        ("succeeded", "succeeded", None),
        ("failed", "failed", None),
        ("cancelled", "cancelled", None),
    ],
)
def test_status_and_phase_are_read_off_the_position(
    position: str, status: str, phase: str | None
) -> None:
    assert status_of(position) == status  # type: ignore[arg-type]
    assert phase_of(position) == phase  # type: ignore[arg-type]
