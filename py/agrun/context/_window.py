"""Window guards (spec 003): which message is the current request, and the wire units
that trimming removes whole.

Every strategy that shortens the message window goes through these: the current
request is never dropped, a tool call is never separated from its result, and the most
recent turns are kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ._request import Message

__all__ = ["current_request_index", "is_said_by_person", "unit_end", "wire_units"]


def is_said_by_person(message: Message) -> bool:
    """Whether a person wrote ``message``: a user-role message that is none of the library's
    own frames (drop notice, compaction frame, corrections, wrap-up, nudge, injection)."""
    return message.role == "user" and message.author == "person" and message.injected_by is None


def current_request_index(messages: Sequence[Message], said: str | None = None) -> int:
    """Index of the current request in ``messages``, or ``-1`` when the window holds none.

    The current request is the last message a person said whose text is exactly ``said``
    (the run's input), else the last message a person said. ``-1`` is an honest answer:
    a window of assistant turns, or of the library's own frames, has no request to keep.
    """
    latest = -1
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not is_said_by_person(message):
            continue
        if said is not None and message.content == said:
            return index
        if latest == -1:
            latest = index
            if said is None:
                return index
    return latest


def wire_units(messages: Sequence[Message], stop: int = 0) -> Iterator[tuple[int, int]]:
    """The window's wire units, newest first, as ``[start, end)`` index ranges.

    A unit is a non-tool message and the tool messages right after it (the results of its
    calls); it is kept or dropped whole. Tool messages at the very start of the window,
    whose call lies before it, form a unit of their own that starts with a tool message.
    Lazy, so a caller that stops early never walks the rest of a long window.
    """
    end = len(messages)
    index = end - 1
    while index >= stop:
        if messages[index].role != "tool":
            yield (index, end)
            end = index
        index -= 1
    if end > stop:
        yield (stop, end)


def unit_end(messages: Sequence[Message], start: int) -> int:
    """End of the wire unit that starts at ``start``: past the tool results after it."""
    end = start + 1
    while end < len(messages) and messages[end].role == "tool":
        end += 1
    return end
