"""What a run starts from and what it tried to read: the session's continuity as one run
sees it (spec 000), in the run's state."""

from __future__ import annotations

from typing import Literal

from .._base import Model
from ._inquiry import InquiryContext
from ._session_memory import SessionMemory

__all__ = ["ContextSnapshot", "ReadAttemptSignal"]


class ContextSnapshot(Model):
    """The session's continuity as this run sees it (spec 000): the two canonical layers."""

    session_memory: SessionMemory | None = None
    """Facts, preferences, decisions, summary and recent turns, as of the run's start."""
    inquiry_context: InquiryContext | None = None
    """Goal, topic, query, sources and clarification state, as of the run's start."""


class ReadAttemptSignal(Model):
    """A read-only signal of the run: it tried to read something, and whether it found it."""

    kind: Literal["evidence", "source", "content"]
    """Session evidence (a recall question), a source a skill read, or stored content."""
    target: str
    """What was looked for: the question, the source's id, the content ref."""
    found: bool
    sources: tuple[str, ...] = ()
    """What answered it (evidence message ids, ``"summary"`` for a line of the session
    memory's summary, a source id)."""
