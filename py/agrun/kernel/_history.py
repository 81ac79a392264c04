"""Session history: every message of the session, in order (spec 000, "Session History").

What people said, the replies, the model's tool calls and their results, and the library's
own frames (each marked by its ``author``, so none can become the current request). The
runtime holds it whether or not it has storage; a stored session resumes into it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..context import Message

__all__ = ["History"]


class History:
    """The session's messages, oldest first. Only the runtime adds to it."""

    def __init__(self) -> None:
        self._messages: list[Message] = []

    def __len__(self) -> int:
        return len(self._messages)

    def read_all(self) -> tuple[Message, ...]:
        """Every message, oldest first."""
        return tuple(self._messages)

    def extend(self, messages: Iterable[Message]) -> None:
        """Append a turn's messages."""
        self._messages.extend(messages)

    def resume(self, messages: Iterable[Message]) -> None:
        """Take up a stored session's messages instead of what is held."""
        self._messages = list(messages)
