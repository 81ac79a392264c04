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
# Text no later window reads is dropped once this much of it has gathered.
_FORGET_STEP = 4096
_OPEN_BLOCK = "-----BEGIN"
_CLOSE_BLOCK = "-----END"


def _anything(text: str) -> bool:
    return True


class StreamMask:
    """Passes a streaming reply's text to ``emit``, masked by ``redact``, as it settles.

    Offsets are the reply's; only the text a later window may read is kept (from the
    earliest of the window's start, the current line's and an open key block's), so a long
    reply costs linear time and memory."""

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
        self._raw = ""  # the reply from offset _base on
        self._base = 0
        self._shown = ""  # what was passed on, from the length _shown_base on
        self._shown_base = 0
        self._passed = 0  # the reply before this offset was passed on
        self._line = 0  # where the line holding _passed starts
        self._open: int | None = None  # where a private key block still open begins
        # (offset, length shown before it) at the end of each pass: where a later window
        # may begin, knowing what was shown for the text before it.
        self._marks: list[tuple[int, int]] = [(0, 0)]
        # A hint ends at or before this offset (-1: none yet): a text starting after it
        # holds none, so nothing in it needs masking or holding back.
        self._hinted = -1
        self._stalled = False

    @property
    def _end(self) -> int:
        return self._base + len(self._raw)

    def _text(self, start: int, end: int | None = None) -> str:
        return self._raw[start - self._base : None if end is None else end - self._base]

    def add(self, text: str) -> None:
        """Takes the next piece of the reply."""
        before = self._end
        self._raw += text
        if self._watch(self._text(max(self._base, before - _HINT_REACH))):
            self._hinted = self._end
        self._track_blocks(max(self._base, before - len(_OPEN_BLOCK)))
        if not self._stalled:
            self._pass(self._settled())

    def finish(self) -> None:
        """The reply is whole: passes on the rest, masked."""
        if not self._stalled and self._end > self._passed:
            self._pass(self._end, finished=True)

    def _track_blocks(self, since: int) -> None:
        """Notes a key block opened or closed in the text from ``since``."""
        fresh = self._text(since)
        opened, closed = fresh.rfind(_OPEN_BLOCK), fresh.rfind(_CLOSE_BLOCK)
        if opened > closed:
            self._open = since + opened if self._open is None else self._open
        elif closed != -1:
            self._open = None

    def _settled(self) -> int:
        """Where the settled text ends: after the last whitespace (a line break first)
        before the word still arriving, and `HOLD` characters before the end while the line
        may hold a secret."""
        limit = self._end - (HOLD if self._hinted > self._line else 0)
        if limit <= self._passed:
            return self._passed
        pending = self._text(self._passed, limit)
        found = pending.rfind("\n")
        if found == -1:
            found = max(pending.rfind(" "), pending.rfind("\t"))
        return self._passed + found + 1 if found != -1 else self._passed

    def _pass(self, cut: int, *, finished: bool = False) -> None:
        if cut <= self._passed:
            return
        start, shown_before = self._window()
        watched = self._hinted > start
        passing = self._text(self._passed, cut)
        if watched and not finished and len(passing) < STEP and "\n" not in passing:
            return  # masking costs more here: again once a few words have settled
        window = self._text(start)
        masked = self._redact(window) if watched else window
        rest = self._text(cut)
        if not masked.endswith(rest):
            return  # a mask reaches past the cut: a secret still arriving is held
        settled = masked[: len(masked) - len(rest)]
        already = self._shown[shown_before - self._shown_base :]
        if not settled.startswith(already):
            self._stalled = True
            return
        fresh = settled[len(already) :]
        self._shown += fresh
        if "\n" in passing:
            self._line = self._passed + passing.rfind("\n") + 1
        self._passed = cut
        self._marks.append((cut, self._shown_base + len(self._shown)))
        self._forget()
        if fresh:
            self._emit(fresh)

    def _window(self) -> tuple[int, int]:
        """Where a masking window begins (a pass's end at least `BACK` characters back, or
        before a private key block still open), and the length shown before it."""
        floor = self._passed - BACK
        if self._open is not None:
            floor = min(floor, self._open)
        at = bisect_right(self._marks, floor, key=lambda mark: mark[0])
        return self._marks[max(at - 1, 0)]

    def _forget(self) -> None:
        """Drops what no later window or line reads (in steps, so copying stays linear)."""
        start, shown_before = self._window()
        keep = min(start, self._line)
        if keep - self._base < _FORGET_STEP:
            return
        self._raw = self._text(keep)
        self._base = keep
        self._shown = self._shown[shown_before - self._shown_base :]
        self._shown_base = shown_before
        self._marks = self._marks[bisect_right(self._marks, start, key=lambda mark: mark[0]) - 1 :]


class TokenPassage:
    """Passes a streaming reply's text to ``emit`` as the provider sent it (redaction off)."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit

    def add(self, text: str) -> None:
        """Takes the next piece of the reply."""
        self._emit(text)

    def finish(self) -> None:
        """The reply is whole: everything was passed on already."""
