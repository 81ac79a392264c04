"""Clarification as a last resort (spec 000, "Clarification Boundary").

A skill that lacks an input asks through ``helpers.ask_clarification``; `decide_clarification`
says whether to really ask the person. It does not when the input is optional, when a
low-risk direct tool path exists, when a safe default applies, or when the session's
confirmed evidence (its facts, preferences, decisions and the summary they merge into) holds
that very input. Only then does the ask become the inquiry's ``pending_clarification``.

Evidence answers only the input it is about (`_slots`): a date needs a sentence holding a
date, a dentist a sentence naming the dentist. A sentence that merely shares a word with the
request ("I live in Lisbon" for "book a hotel in Lisbon") is no answer to "Which date?".
"""

from __future__ import annotations

from typing import Any, Literal

from .._base import Model
from ._session_memory import SessionMemory, statements
from ._slots import content_words, slot_of

__all__ = ["ClarificationAsk", "ClarificationDecision", "decide_clarification"]


class ClarificationAsk(Model):
    """What a skill would ask the person, and what it knows about the missing input."""

    question: str
    missing: str
    optional: bool = False
    """The turn can go on without it."""
    default: Any = None
    """A safe value to go on with, if there is one."""
    direct_tool: str | None = None
    """A low-risk tool that can get the input without asking the person."""
    options: tuple[str, ...] = ()


class ClarificationDecision(Model):
    """Whether to ask, and if not, what to go on with and why."""

    ask: bool
    reason: Literal["optional", "default", "direct_tool", "evidence", "ask"]
    value: Any = None
    """What to go on with when not asking: the default, the tool, or the confirmed sentence
    that holds the missing input."""


def decide_clarification(
    request: ClarificationAsk, *, said: str, memory: SessionMemory | None
) -> ClarificationDecision:
    """The last-resort rule, one check at a time."""
    if request.optional:
        return ClarificationDecision(ask=False, reason="optional", value=request.default)
    if request.default is not None:
        return ClarificationDecision(ask=False, reason="default", value=request.default)
    if request.direct_tool:
        return ClarificationDecision(ask=False, reason="direct_tool", value=request.direct_tool)
    evidence = _evidence_for(request, said, memory)
    if evidence is not None:
        return ClarificationDecision(ask=False, reason="evidence", value=evidence)
    return ClarificationDecision(ask=True, reason="ask")


def _evidence_for(request: ClarificationAsk, said: str, memory: SessionMemory | None) -> str | None:
    """The confirmed sentence that holds the missing input, if one does. Of several, the
    one naming more of the input's words, then sharing more words with the turn, then the
    later one."""
    slot = slot_of(request.missing)
    asked = content_words(said)
    best: tuple[tuple[int, int, int], str] | None = None
    for position, statement in enumerate(statements(memory)):
        if not slot.held_by(statement.text):
            continue
        rank = (slot.named_by(statement.text), len(asked & content_words(statement.text)), position)
        if best is None or rank > best[0]:
            best = (rank, statement.text)
    return None if best is None else best[1]
