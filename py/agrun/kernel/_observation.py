"""How the runtime reads an outcome into an `Observation`, and what memory it suggests.

Pure functions: the same outcome always gives the same observation.

Default memory policy (``remember_observations=True``): a run that succeeds appends one
``observation`` entry from its final observation when that observation has text; the
entries a skill requested are appended before it, in request order. A run that fails or
is cancelled appends nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from .._base import thaw
from ..memory import MemoryEntryRequest
from ._models import Observation, RunError

__all__ = ["SUMMARY_LIMIT", "observe_failure", "observe_output", "remembered"]

# Observations stay small: they live in state and in last_run, not a full copy of output.
SUMMARY_LIMIT = 280


def observe_output(
    cycle: int, skill: str, output: Any, scrub: Callable[[str], str] | None = None
) -> Observation:
    """The observation of a skill that returned ``output`` (already checked to be plain data);
    ``scrub`` masks secrets in its summary (a trace) before it is clipped."""
    kind = _kind_of(output)
    if kind == "none":
        text = ""
    elif kind == "text":
        text = output
    else:
        text = json.dumps(thaw(output), ensure_ascii=False, separators=(",", ":"))
    if scrub is not None:
        text = scrub(text)
    return Observation(
        cycle=cycle, skill=skill, outcome="succeeded", summary=_clip(text), output_kind=kind
    )


def observe_failure(error: RunError) -> Observation:
    """The observation of a cycle that failed or was cancelled."""
    outcome: Literal["failed", "cancelled"] = "cancelled" if error.code == "cancelled" else "failed"
    return Observation(
        cycle=error.cycle,
        skill=error.skill,
        outcome=outcome,
        summary=_clip(error.message),
        error_code=error.code,
    )


def remembered(observation: Observation) -> MemoryEntryRequest | None:
    """The memory entry the default policy derives from a final observation, if any."""
    if observation.outcome != "succeeded" or not observation.summary.strip():
        return None
    return MemoryEntryRequest(kind="observation", text=observation.summary)


def _kind_of(output: Any) -> Any:
    if output is None:
        return "none"
    if isinstance(output, str):
        return "text"
    if isinstance(output, bool):
        return "boolean"
    if isinstance(output, (int, float)):
        return "number"
    if isinstance(output, (list, tuple)):
        return "list"
    return "object"


def _clip(text: str) -> str:
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"
