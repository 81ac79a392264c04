"""What one build made of each message, kept for the next build of the same log.

A session's log changes only by growing, so the window of one turn is, but for its newest
messages, the window of the turn before: the same messages redacted, dated, counted, turned
into entries and written as canonical JSON again, turn after turn (a third of a build, in a
long session). A `BuildMemo` keeps, for each message a build made an entry of, that entry
and its JSON, and hands them to the next build when nothing they depend on has changed:
the message itself (the same object: messages are read-only), its position, whether it
opens a day, the redactor and the tokenizer (a build with others forgets what was kept).
Tool results are never kept: how one is compressed depends on the request's options and on
recorded compressions.

It holds up to ``limit`` messages (4,096 by default, more than a window of most budgets
holds); past that it forgets the oldest positions first, a quarter at a time, since a
window is the newest part of the log.

A memo never changes a pack, only what it costs: a build with one gives the pack a build
without one gives, byte for byte (``tests/test_context_memo.py``). The runtime keeps one
beside the session history, and starts a new one when a stored session is resumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ports import Redactor, Tokenizer
from ._pack import ContextEntry
from ._request import Message

__all__ = ["BuildMemo", "Kept"]


@dataclass(slots=True)
class Kept:
    """One message as a build made it: its entry's values, then its entry and JSON."""

    message: Message
    day: int | None
    content: str
    name: str | None
    tool_calls: tuple[object, ...]
    tokens: int
    entry: ContextEntry | None = None
    """Made when a build first admits the message."""
    json: str | None = None
    """The entry's canonical JSON, written when a build's digest first needs it."""


class BuildMemo:
    """The entries builds made of a log's messages, by position."""

    def __init__(self, limit: int = 4096) -> None:
        if limit < 1:
            raise ValueError(f"a BuildMemo's limit must be at least 1, got {limit!r}")
        self.limit = limit
        self._kept: dict[int, Kept] = {}
        self._made_with: tuple[Redactor, Tokenizer] | None = None

    def made_with(self, redactor: Redactor, tokenizer: Tokenizer) -> None:
        """Say which redactor and tokenizer the build about to start uses: what was kept
        under others is forgotten."""
        if self._made_with is None or (
            self._made_with[0] is not redactor or self._made_with[1] is not tokenizer
        ):
            self._kept = {}
            self._made_with = (redactor, tokenizer)

    def __len__(self) -> int:
        return len(self._kept)

    def find(self, index: int, message: Message, day: int | None) -> Kept | None:
        """What was kept for ``message`` at ``index``, if it was made the same way (the
        redactor and tokenizer are the memo's: `made_with`)."""
        kept = self._kept.get(index)
        if kept is None or kept.message is not message or kept.day != day:
            return None
        return kept

    def keep(self, index: int, kept: Kept) -> None:
        """Keep ``kept`` for the message at ``index`` (in place of anything kept there)."""
        held = self._kept
        if index not in held and len(held) >= self.limit:
            newest = sorted(held)[len(held) // 4 :]
            self._kept = held = {position: held[position] for position in newest}
        held[index] = kept
