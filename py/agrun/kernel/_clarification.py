"""Clarification as a last resort (spec 000, "Clarification Boundary").

A skill that lacks an input asks through ``helpers.ask_clarification``; `decide_clarification`
says whether to really ask the person. It does not when the input is optional, when a
low-risk direct tool path exists, when a safe default applies, or when the question is a
recall question the session's confirmed evidence answers. Only then does the ask become the
inquiry's ``pending_clarification``.
"""

from __future__ import annotations

from typing import Any, Literal

from .._base import Model
from ._session_memory import SessionMemory, recall_matches

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
    """What to go on with when not asking (the default, or the evidence's text)."""


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
    evidence = recall_matches(memory, said)
    if evidence:
        return ClarificationDecision(ask=False, reason="evidence", value=evidence[0].text)
    return ClarificationDecision(ask=True, reason="ask")
