"""Inquiry context: where the session is going (spec 000, "Prevent Lost Direction").

One place each for the active goal, topic and query, the candidate and selected sources,
the last search and read, and the clarification working state: no goal, topic or ambiguity
is stored twice. ``pending_clarification`` is the only stored unresolved-clarification
state; the clarification status, open ambiguity and ambiguity state are derived from it and
``last_clarification_resolution``, never stored. A pending clarification is resolved only by
a turn that answers it (`answers`): a memory command, or a turn that does not supply the
asked-for input, leaves it pending and is never recorded as its resolution.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .._base import Model
from ._clarification import ClarificationAsk
from ._command_grammar import is_memory_command
from ._slots import slot_of

__all__ = [
    "Clarification",
    "ClarificationResolution",
    "InquiryContext",
    "InquiryNotes",
    "SourceRef",
    "answers",
    "next_inquiry",
]


class SourceRef(Model):
    """A source the inquiry found, chose or read."""

    id: str
    title: str = ""


class Clarification(Model):
    """An open question to the person: what is missing for the turn to go on."""

    question: str
    missing: str
    """What input is missing, in a few words."""
    options: tuple[str, ...] = ()
    asked_in: str
    """The run that asked."""


class ClarificationResolution(Model):
    """How the last clarification was answered."""

    question: str
    answer: str
    resolved_in: str
    """The run whose input answered it."""


class InquiryContext(Model):
    """The session's working set for the active investigation."""

    active_goal: str | None = None
    active_topic: str | None = None
    active_query: str | None = None
    candidate_sources: tuple[SourceRef, ...] = ()
    selected_source: SourceRef | None = None
    last_search: str | None = None
    """The last query a skill searched for."""
    last_read_source: SourceRef | None = None
    pending_clarification: Clarification | None = None
    last_clarification_resolution: ClarificationResolution | None = None

    @property
    def clarification_status(self) -> Literal["pending", "resolved", "none"]:
        """Derived: whether a clarification is open, was answered, or was never asked."""
        if self.pending_clarification is not None:
            return "pending"
        return "resolved" if self.last_clarification_resolution is not None else "none"

    @property
    def open_ambiguity(self) -> str | None:
        """Derived: what the open clarification is missing, if one is open."""
        pending = self.pending_clarification
        return None if pending is None else pending.missing

    @property
    def ambiguity_state(self) -> Literal["open", "closed"]:
        """Derived: open while a clarification waits for its answer."""
        return "open" if self.pending_clarification is not None else "closed"


_GOAL = re.compile(
    r"\b(?:i want to|i need to|i'd like to|i would like to|my goal is(?: to)?|help me|"
    r"i'm trying to|i am trying to|we need to|we want to)\s+(?P<goal>[^.!?\n]{3,160})",
    re.IGNORECASE,
)
_TOPIC = re.compile(
    r"\b(?:about|regarding|concerning|on the topic of|topic:)\s+(?P<topic>[^.!?,\n]{2,80})",
    re.IGNORECASE,
)
_QUESTION_WORD = re.compile(
    r"\s*(?:what|who|where|when|which|how|why|is|are|do|does|did|can|could|should)\b",
    re.IGNORECASE,
)


def _is_question(said: str) -> bool:
    # Ends with "?", or opens with a question word: both looked at where they are, not
    # searched for through the whole text (a 10 MB paste cost a fifth of a second).
    return said.rstrip().endswith("?") or _QUESTION_WORD.match(said) is not None


def next_inquiry(previous: InquiryContext | None, said: str, run_id: str) -> InquiryContext:
    """The inquiry after a successful turn in which the person said ``said``.

    The goal and topic change only when the person states new ones; the active query is the
    person's latest question; a pending clarification is resolved by this input only if it
    `answers` it, and otherwise stays pending.
    """
    inquiry = previous or InquiryContext()
    changes: dict[str, object] = {}
    goal = _GOAL.search(said)
    if goal:
        changes["active_goal"] = goal.group("goal").strip()
    topic = _TOPIC.search(said)
    if topic:
        changes["active_topic"] = topic.group("topic").strip()
    if _is_question(said):
        changes["active_query"] = said.strip()[:500]
    pending = inquiry.pending_clarification
    if pending is not None and pending.asked_in != run_id and answers(pending, said):
        changes["pending_clarification"] = None
        changes["last_clarification_resolution"] = ClarificationResolution(
            question=pending.question, answer=said.strip()[:500], resolved_in=run_id
        )
    return inquiry.model_copy(update=changes) if changes else inquiry


def answers(pending: Clarification, said: str) -> bool:
    """Whether ``said`` answers ``pending``: it is not a memory command ("remember: ..." is
    a note, not the date asked for), and it names one of the offered options or supplies
    the missing input: a value of its kind (a date for "date", `_slots`) or, for an input
    of no recognisable kind, any statement (a question back is not an answer)."""
    if is_memory_command(said):
        return False
    if any(re.search(rf"(?<!\w){re.escape(o)}(?!\w)", said, re.I) for o in pending.options if o):
        return True
    slot = slot_of(pending.missing)
    if slot.kind is not None:
        return slot.held_by(said)
    return bool(said.strip()) and not said.rstrip().endswith("?")


@dataclass
class InquiryNotes:
    """What a run's skills reported about the inquiry (applied only if the run succeeds)."""

    candidates: list[SourceRef] | None = None
    selected: SourceRef | None = None
    search: str | None = None
    read: SourceRef | None = None
    asks: list[ClarificationAsk] = field(default_factory=list)
    """Clarifications the rule let through: the last becomes the pending one."""

    def apply(self, inquiry: InquiryContext, run_id: str) -> InquiryContext:
        """``inquiry`` with these notes taken in."""
        changes: dict[str, object] = {}
        if self.candidates is not None:
            changes["candidate_sources"] = tuple(self.candidates)
        if self.selected is not None:
            changes["selected_source"] = self.selected
        if self.search is not None:
            changes["last_search"] = self.search
        if self.read is not None:
            changes["last_read_source"] = self.read
        if self.asks:
            ask = self.asks[-1]
            changes["pending_clarification"] = Clarification(
                question=ask.question, missing=ask.missing, options=ask.options, asked_in=run_id
            )
        return inquiry.model_copy(update=changes) if changes else inquiry
