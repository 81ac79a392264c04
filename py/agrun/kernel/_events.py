"""Events: every change the kernel makes, as typed, tagged records.

The event stream is complete: a run's state, its trace, the memory it appended and the
runtime's last-run summary can all be rebuilt from it, which is what persistence and
replay in later layers rely on. Each event carries a ``kind`` tag (the discriminator of
`RuntimeEvent`), the ``run_id`` it belongs to, a ``seq`` that counts every event of the
runtime from 1, and ``at``, the clock reading when it happened.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from .._base import Event
from ..chat import FinishReason, Usage
from ..memory import (
    GlobalMemoryPromoted,
    MemoryAppended,
    MemoryRequestDropped,
    SessionMemoryKept,
    SessionMemoryRebuilt,
)
from ._models import LastRun, Observation, Phase, RunError

__all__ = [
    "INPUT_PREVIEW",
    "MAX_REPORTED",
    "ContentRetrieved",
    "CycleRequested",
    "Event",
    "GlobalMemoryPromoted",
    "MemoryAppended",
    "MemoryRequestDropped",
    "ModelCallFailed",
    "ModelCallFinished",
    "ModelCallStarted",
    "ObservationDerived",
    "PhaseEntered",
    "RunCancelled",
    "RunFailed",
    "RunFinished",
    "RunStarted",
    "RuntimeEvent",
    "SessionDamaged",
    "SessionMemoryKept",
    "SessionMemoryRebuilt",
    "SkillSelected",
    "ToolCallFinished",
    "parse_event",
]


# The longest input a RunStarted event repeats, and the most problems one report lists.
INPUT_PREVIEW = 2000
MAX_REPORTED = 20


class RunStarted(Event):
    """A run began."""

    kind: Literal["RunStarted"] = "RunStarted"
    input: str
    """The run's input, up to `INPUT_PREVIEW` characters: the whole of it is stored once, as
    the turn's user message, never again in the event log."""
    input_chars: int = 0
    """The input's whole length."""
    requested_skill: str | None
    """The skill the caller named, if any."""


class PhaseEntered(Event):
    """The run entered an OODAE phase."""

    kind: Literal["PhaseEntered"] = "PhaseEntered"
    phase: Phase
    cycle: int


class SkillSelected(Event):
    """The decide phase chose a skill."""

    kind: Literal["SkillSelected"] = "SkillSelected"
    skill: str
    reason: str
    cycle: int


class CycleRequested(Event):
    """A skill asked for another cycle, and the runtime granted it."""

    kind: Literal["CycleRequested"] = "CycleRequested"
    reason: str
    cycle: int
    """The cycle that asked (the next one is ``cycle + 1``)."""


class ObservationDerived(Event):
    """The runtime read a cycle's outcome into an observation."""

    kind: Literal["ObservationDerived"] = "ObservationDerived"
    observation: Observation


class RunFinished(Event):
    """The run succeeded."""

    kind: Literal["RunFinished"] = "RunFinished"
    summary: LastRun
    """The runtime's new last-run summary."""


class RunFailed(Event):
    """The run failed; nothing it requested was kept."""

    kind: Literal["RunFailed"] = "RunFailed"
    error: RunError
    summary: LastRun


class ModelCallStarted(Event):
    """A model turn called its provider (one call per cycle)."""

    kind: Literal["ModelCallStarted"] = "ModelCallStarted"
    cycle: int
    model: str | None
    pack_id: str
    """The digest of the context pack the request was rendered from."""
    messages: int
    """How many chat messages the request holds."""
    tools: tuple[str, ...]
    """The tools offered (none when the model is asked to wrap up)."""
    content_store: dict[str, int] | None = None
    """The content store's counters as the call starts: hits, misses, evictions, bytes
    held, entries (None when the runtime keeps no content)."""


class ModelCallFinished(Event):
    """The provider's reply arrived whole."""

    kind: Literal["ModelCallFinished"] = "ModelCallFinished"
    cycle: int
    model: str | None
    pack_id: str
    finish_reason: FinishReason
    usage: Usage | None
    """What the call cost, as the provider counted it (None if it did not say)."""
    text_chars: int
    tool_calls: tuple[str, ...]
    """The tools the model called, in order."""


class ModelCallFailed(Event):
    """The provider's call failed; what had streamed is kept here, and only here."""

    kind: Literal["ModelCallFailed"] = "ModelCallFailed"
    cycle: int
    model: str | None
    pack_id: str
    code: str
    message: str
    partial_text: str = ""


class ToolCallFinished(Event):
    """A tool call of the model ran (or was refused before running)."""

    kind: Literal["ToolCallFinished"] = "ToolCallFinished"
    cycle: int
    call_id: str
    tool: str
    outcome: Literal["returned", "raised", "timed_out", "cancelled", "refused"]
    detail: str = ""
    """Why it did not return, for a person."""
    cut_from_bytes: int | None = None
    """The result's size in UTF-8 bytes when it was over the bound and cut (the turn keeps
    its first bytes and a note); None: kept whole."""


class ContentRetrieved(Event):
    """A stored body was asked for by its ref (by the model's read_content, a skill or the
    host): found, or the typed miss ``content_ref_not_found``."""

    kind: Literal["ContentRetrieved"] = "ContentRetrieved"
    ref: str
    found: bool
    counters: dict[str, int]


class SessionDamaged(Event):
    """Part of the stored session could not be read: it was left out, and left on disk.

    Not part of a run (``run_id`` is empty). ``importSession(text, replace=True)`` with a
    good export repairs the session.
    """

    kind: Literal["SessionDamaged"] = "SessionDamaged"
    session_id: str
    problems: tuple[str, ...]
    """What could not be read, one line each (at most `MAX_REPORTED`)."""
    count: int
    """How many problems there were in all."""


class RunCancelled(Event):
    """The run was cancelled; nothing it requested was kept."""

    kind: Literal["RunCancelled"] = "RunCancelled"
    error: RunError
    summary: LastRun


RuntimeEvent = Annotated[
    RunStarted
    | PhaseEntered
    | SkillSelected
    | CycleRequested
    | ObservationDerived
    | MemoryAppended
    | MemoryRequestDropped
    | RunFinished
    | RunFailed
    | RunCancelled
    | SessionDamaged
    | SessionMemoryRebuilt
    | SessionMemoryKept
    | GlobalMemoryPromoted
    | ContentRetrieved
    | ModelCallStarted
    | ModelCallFinished
    | ModelCallFailed
    | ToolCallFinished,
    Field(discriminator="kind"),
]

_ADAPTER: TypeAdapter[RuntimeEvent] = TypeAdapter(RuntimeEvent)


def parse_event(data: dict[str, Any]) -> RuntimeEvent:
    """Read an event back from its wire (or snake_case) form, e.g. when replaying a log."""
    return _ADAPTER.validate_python(data)
