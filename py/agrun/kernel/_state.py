"""The run's legal moves, as one table.

The rule this module keeps: a run's status and phase change only through `advance`, and
`advance` allows only the moves in `TRANSITIONS`. Anything else is a bug in the kernel
and raises `TransitionError` naming the state and the event.

A run's *position* is its OODAE phase while it runs, or its final status once it is
over; status and phase are both read off the position, so they can never disagree.

    idle ──start──► observe ─► orient ─► decide ─► act ─► evaluate ──finish──► succeeded
                       ▲                                      │
                       └──────────────── repeat ──────────────┘
    any phase ──fail──► failed        any phase ──cancel──► cancelled
"""

from __future__ import annotations

from typing import Literal

from .._base import TransitionError
from ._models import Phase, RunStatus

__all__ = ["TRANSITIONS", "Move", "Position", "advance", "phase_of", "status_of"]

Position = Literal[
    "idle", "observe", "orient", "decide", "act", "evaluate", "succeeded", "failed", "cancelled"
]
Move = Literal["start", "next", "repeat", "finish", "fail", "cancel"]

PHASES: tuple[Phase, ...] = ("observe", "orient", "decide", "act", "evaluate")

TRANSITIONS: dict[tuple[Position, Move], Position] = {
    ("idle", "start"): "observe",
    ("observe", "next"): "orient",
    ("orient", "next"): "decide",
    ("decide", "next"): "act",
    ("act", "next"): "evaluate",
    ("evaluate", "repeat"): "observe",
    ("evaluate", "finish"): "succeeded",
    **{(phase, "fail"): "failed" for phase in PHASES},
    **{(phase, "cancel"): "cancelled" for phase in PHASES},
}


def advance(position: Position, move: Move) -> Position:
    """The position after ``move``.

    Raises:
        TransitionError: the table has no such move from ``position``.
    """
    try:
        return TRANSITIONS[(position, move)]
    except KeyError:
        raise TransitionError(position, move) from None


def status_of(position: Position) -> RunStatus:
    """The run status a position stands for (idle counts as running)."""
    if position in ("succeeded", "failed", "cancelled"):
        return position
    return "running"


def phase_of(position: Position) -> Phase | None:
    """The active OODAE phase at a position; None before the run and once it is over."""
    if position in PHASES:
        return position
    return None
