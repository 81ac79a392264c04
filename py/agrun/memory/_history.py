"""Session history: every message of the session, in order (spec 000, "Session History").

What people said, the replies, the model's tool calls and their results, and the library's
own frames (each marked by its ``author``, so none can become the current request). The
runtime holds it whether or not it has storage; a stored session resumes into it.

Beside the messages it keeps their recall index (`agrun.context.RecallIndex`), read as
each turn is committed, so a context build recalls older turns without reading the whole
history again. A resumed session's index is read anew from its messages rather than
stored: reading is cheap next to a model call, and a stored index would tie the session
format to how recall reads text. It is read when a context build first asks for it, not
before: a runtime without a model never needs it, and a resume does not wait for it
(reading 1,000 turns was two thirds of a resume's Python time in a page).

It keeps the builds' memo too (`agrun.context.BuildMemo`): the entries a build made of the
messages, which the next build takes again rather than making them anew. A resume starts a
new one, as it does the index.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..context import BuildMemo, Message, RecallIndex

__all__ = ["History", "failure_note", "is_stopped_answer", "noted_failures"]


class History:
    """The session's messages, oldest first. Only the runtime adds to it."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._index: RecallIndex | None = None
        self._memo = BuildMemo()

    def __len__(self) -> int:
        return len(self._messages)

    def read_all(self) -> tuple[Message, ...]:
        """Every message, oldest first."""
        return tuple(self._messages)

    @property
    def recall_index(self) -> RecallIndex:
        """The recall index of every message held, in order (read-only for builds)."""
        if self._index is None:
            self._index = RecallIndex(self._messages)
        return self._index

    @property
    def build_memo(self) -> BuildMemo:
        """What builds made of the messages held, for the next build (`BuildMemo`)."""
        return self._memo

    def extend(self, messages: Iterable[Message]) -> None:
        """Append a turn's messages (and index them, once an index has been asked for)."""
        added = list(messages)
        self._messages.extend(added)
        if self._index is not None:
            self._index.extend(added)

    def resume(self, messages: Iterable[Message]) -> None:
        """Take up a stored session's messages instead of what is held (indexed anew when
        the index is next asked for)."""
        self._messages = list(messages)
        self._index = None
        self._memo = BuildMemo()


def noted_failures(history: tuple[Message, ...]) -> tuple[Message, ...]:
    """``history`` as the window reads it: a person's message whose turn failed or was
    cancelled says so, so the model knows it was asked and never answered; an answer the
    person stopped says it was cut short, so it is never read as a finished answer."""
    if not any(m.run_status is not None for m in history):
        return history
    noted: list[Message] = []
    for at, m in enumerate(history):
        if m.run_status is None:
            noted.append(m)
            continue
        after = history[at + 1] if at + 1 < len(history) else None
        note = failure_note(m, partly_answered=after is not None and is_stopped_answer(after))
        noted.append(m.model_copy(update={"content": f"{m.content}\n{note}"}))
    return tuple(noted)


def is_stopped_answer(message: Message) -> bool:
    """Whether ``message`` is the part of an answer a person stopped (kept, marked)."""
    return message.role == "assistant" and message.run_status == "cancelled"


def failure_note(message: Message, *, partly_answered: bool = False) -> str:
    """The note a failed or cancelled turn's message (or a stopped answer) carries in later
    packs."""
    if is_stopped_answer(message):
        return "[cut short: the person stopped this answer before it was finished]"
    if partly_answered:
        return "[stopped: the person stopped the answer that follows before it was finished]"
    ended = "was cancelled" if message.run_status == "cancelled" else "failed"
    code = f" ({message.error_code})" if message.error_code else ""
    return f"[not answered: this turn {ended}{code}]"
