"""Secret scrubbing before anything reaches a pack (spec 001 section 17).

The default redactor is `agrun.sensitive.PatternRedactor`: the same catalog of secret
shapes the sensitive-content filter of global memory refuses (provider keys, PEM blocks,
JWTs, ``Authorization: Basic``, ``aws_secret_access_key=``, ``client_secret=`` and other
labelled credentials), so context and memory agree on what a secret is. A host can pass
any object with a ``redact(text) -> str`` method instead.

``agrun.context.PatternRedactor`` and ``DEFAULT_SECRET_PATTERNS`` are that class and its
patterns, re-exported so code written against the context package keeps working.
"""

from __future__ import annotations

from functools import cache

from ..ports import Redactor
from ..sensitive import DEFAULT_SECRET_HINTS, DEFAULT_SECRET_PATTERNS, MASK, PatternRedactor

__all__ = [
    "DEFAULT_SECRET_HINTS",
    "DEFAULT_SECRET_PATTERNS",
    "MASK",
    "MemoRedactor",
    "PatternRedactor",
    "default_redactor",
]


class MemoRedactor:
    """A redactor that remembers its answers: the same text is scanned once.

    The builds of one tool loop see the same messages again and again; scanning each for
    every secret shape costs more than the rest of a warm build. Redaction is a pure
    function of the text, so the memo never changes a result. It holds at most
    ``max_chars`` characters of texts (then starts over) and skips texts longer than
    ``max_text``, so a few huge tool outputs cannot make it large.
    """

    __slots__ = ("_chars", "_inner", "_max_chars", "_max_text", "_memo")

    def __init__(
        self, inner: Redactor, *, max_chars: int = 4_000_000, max_text: int = 100_000
    ) -> None:
        self._inner = inner
        self._max_chars = max_chars
        self._max_text = max_text
        self._memo: dict[str, str] = {}
        self._chars = 0

    def redact(self, text: str) -> str:
        """``inner.redact(text)``, from the memo when it has been asked before."""
        known = self._memo.get(text)
        if known is not None:
            return known
        redacted = self._inner.redact(text)
        if len(text) <= self._max_text:
            if self._chars + len(text) > self._max_chars:
                self._memo.clear()
                self._chars = 0
            self._memo[text] = redacted
            self._chars += len(text)
        return redacted


@cache
def default_redactor() -> Redactor:
    """The redactor a build uses when its caller passes none: one shared, memoized
    `PatternRedactor` with the default patterns.

    Shared because compiling the catalog costs more than a warm build's redaction, and
    safe to share because a `PatternRedactor` holds no state between calls and the memo
    only ever returns what it would.
    """
    return MemoRedactor(PatternRedactor())
