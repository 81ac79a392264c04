"""A model's reply as it streams, masked as the finished reply is.

With redaction on, the finished reply is masked before anything keeps or shows it; the
pieces streamed to ``on_token`` (a page's ``onToken``, `<agrun-chat>`'s bubble, a worker's
messages to its page) were the provider's own, secrets and all. `StreamMask` passes on only
text whose masking has settled:

- it holds back the word still arriving (a token has no spaces); and, while the line holds
  something a secret's match may contain (``watch``: one of the redactor's hints, such as
  ``password`` or ``sk-``; any line, for a host's redactor), the last `HOLD` characters as
  well: a password's value may be several words, and a label's value must end its line or
  sentence;
- it masks with the run's own ``redact`` (only where a hint was seen: elsewhere agrun's
  redactor would change nothing), over a window from where it passed text at least `BACK`
  characters before (or from a private key block still open), so a label or a block's
  first line is seen with what follows it and a long reply costs linear time; while a hint
  is in the window, it masks again once `STEP` more characters have settled or a line
  ended;
- if masking more text would change what it already passed (a block whose first line went
  before its body came), it passes nothing more of this reply: the finished reply, masked
  whole, replaces the stream (`run()`'s result, the widget's bubble).

A provider that sends its whole reply at once is passed on at its end, masked.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable

__all__ = ["StreamMask", "TokenPassage"]

HOLD = 100
STEP = 32
BACK = 512
# How far before a new piece a hint may start and still end in it: past the longest hint.
_HINT_REACH = 64
_OPEN_BLOCK = "-----BEGIN"
_CLOSE_BLOCK = "-----END"


def _anything(text: str) -> bool:
    return True


class StreamMask:
    """Passes a streaming reply's text to ``emit``, masked by ``redact``, as it settles."""

    def __init__(
        self,
        redact: Callable[[str], str],
        emit: Callable[[str], None],
        *,
        watch: Callable[[str], bool] | None = None,
    ) -> None:
        """``watch(text)``: whether ``text`` may hold a secret ``redact`` masks (where it
        says no, ``redact`` must change nothing); None: any text may."""
        self._redact = redact
        self._emit = emit
        self._watch = watch or _anything
        self._raw = ""
        self._shown = ""
        self._passed = 0  # the raw text before this offset was passed on
        # (raw offset, length shown before it) at the end of each pass: where a later
        # window may begin, knowing what was shown for the text before it.
        self._marks: list[tuple[int, int]] = [(0, 0)]
        # A hint ends at or before this offset (-1: none yet): a text starting after it
        # holds none, so nothing in it needs masking or holding back.
        self._hinted = -1
        self._stalled = False

    def add(self, text: str) -> None:
        """Takes the next piece of the reply."""
        before = len(self._raw)
        self._raw += text
        if self._watch(self._raw[max(0, before - _HINT_REACH) :]):
            self._hinted = len(self._raw)
        if not self._stalled:
            self._pass(self._settled())

    def finish(self) -> None:
        """The reply is whole: passes on the rest, masked."""
        if not self._stalled and len(self._raw) > self._passed:
            self._pass(len(self._raw), finished=True)

    def _settled(self) -> int:
        """Where the settled text ends: after the last whitespace (a line break first)
        before the word still arriving, and `HOLD` characters before the end while the line
        may hold a secret."""
        line = self._raw.rfind("\n", 0, self._passed) + 1
        limit = len(self._raw) - (HOLD if self._hinted > line else 0)
        if limit <= self._passed:
            return self._passed
        found = self._raw.rfind("\n", self._passed, limit)
        if found == -1:
            found = max(
                self._raw.rfind(" ", self._passed, limit),
                self._raw.rfind("\t", self._passed, limit),
            )
        return found + 1 if found != -1 else self._passed

    def _pass(self, cut: int, *, finished: bool = False) -> None:
        if cut <= self._passed:
            return
        start, shown_before = self._window()
        watched = self._hinted > start
        early = cut - self._passed < STEP and "\n" not in self._raw[self._passed : cut]
        if watched and early and not finished:
            return  # masking costs more here: again once a few words have settled
        window = self._raw[start:]
        masked = self._redact(window) if watched else window
        rest = self._raw[cut:]
        if not masked.endswith(rest):
            return  # a mask reaches past the cut: a secret still arriving is held
        settled = masked[: len(masked) - len(rest)]
        already = self._shown[shown_before:]
        if not settled.startswith(already):
            self._stalled = True
            return
        fresh = settled[len(already) :]
        self._shown += fresh
        self._passed = cut
        self._marks.append((cut, len(self._shown)))
        if fresh:
            self._emit(fresh)

    def _window(self) -> tuple[int, int]:
        """Where a masking window begins (a pass's end at least `BACK` characters back, or
        before a private key block still open), and the length shown before it."""
        floor = self._passed - BACK
        opened = self._raw.rfind(_OPEN_BLOCK, 0, self._passed)
        if opened != -1 and self._raw.find(_CLOSE_BLOCK, opened, self._passed) == -1:
            floor = min(floor, opened)
        at = bisect_right(self._marks, floor, key=lambda mark: mark[0])
        return self._marks[max(at - 1, 0)]


class TokenPassage:
    """Passes a streaming reply's text to ``emit`` as the provider sent it (redaction off)."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit

    def add(self, text: str) -> None:
        """Takes the next piece of the reply."""
        self._emit(text)

    def finish(self) -> None:
        """The reply is whole: everything was passed on already."""
