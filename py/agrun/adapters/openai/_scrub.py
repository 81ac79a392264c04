"""Keeping credentials out of what the provider adapter hands back.

Error messages (which may echo what a provider said, or the request) go through the
catalog's `PatternRedactor` and then lose every exact credential string. Streamed text
cannot be pattern-redacted without changing what the model said, but the exact credential
is still masked in it, even when it arrives split across events (`HeldBack`).
"""

from __future__ import annotations

from collections.abc import Iterable

from ...sensitive import MASK, PatternRedactor

__all__ = ["MASK", "HeldBack", "Scrubber"]

_redactor: PatternRedactor | None = None

# At the end of a stream a held-back tail that starts a credential is masked when it is
# this long: shorter ones ("s", "sk-") are ordinary text far more often than a leak.
_MASK_TAIL_FROM = 6


def _pattern_redactor() -> PatternRedactor:
    global _redactor  # compiled once, on the first error: most calls never need it
    if _redactor is None:
        _redactor = PatternRedactor()
    return _redactor


class Scrubber:
    """Masks a fixed set of credential strings (and, in messages, any secret shape)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        # Longest first, so a key that contains another is masked whole.
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))

    def exact(self, text: str) -> str:
        """``text`` with every credential string replaced by ``[REDACTED]``."""
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text

    def message(self, text: str) -> str:
        """``text`` fit for an error message: secret shapes and credentials masked."""
        return self.exact(_pattern_redactor().redact(self.exact(text)))

    def stream(self) -> HeldBack:
        """A masker for one stream of text that arrives in pieces."""
        return HeldBack(self.secrets)


class HeldBack:
    """Masks credentials in a text given piece by piece, holding back a tail that could be
    the start of one until the next piece (or `flush`) decides it."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = secrets
        self._tail = ""

    def feed(self, piece: str) -> str:
        """What of the text so far is safe to pass on (possibly ``""``)."""
        if not self._secrets:
            return piece
        text = self._tail + piece
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        keep = max(_prefix_tail(text, secret) for secret in self._secrets)
        self._tail = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        """The held-back tail at the stream's end (masked if it is most of a credential)."""
        tail, self._tail = self._tail, ""
        return MASK if len(tail) >= _MASK_TAIL_FROM else tail


def _prefix_tail(text: str, secret: str) -> int:
    """The length of the longest end of ``text`` that is a proper start of ``secret``."""
    for size in range(min(len(secret) - 1, len(text)), 0, -1):
        if text[-size] == secret[0] and text.endswith(secret[:size]):
            return size
    return 0
