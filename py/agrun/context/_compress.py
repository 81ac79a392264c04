"""Per-type compression that only shrinks: a compressor picks spans of its input.

A compressor never writes text. It returns ``[start, end)`` spans of the (redacted)
input, and the compressed text is those spans joined by newlines, so every line of an
output occurs in its input by construction, and a recorded list of spans replays the
same output without running the compressor again (`CompressionRecord`).

Defaults, by data type (spec 001 section 8): tool output keeps its errors and key values;
artifacts are cut to their leading lines; conversation is summarized extractively into
L2 (``_summary``); approvals and steering notes are never compressed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..ports import Span, Tokenizer

__all__ = ["HeadCompressor", "KeyLinesCompressor", "apply_spans", "check_spans", "segments"]


_LONG_LINE = 400
_SPLIT = re.compile(r"[^\n]*\n?")
_SUBSPLIT = re.compile(r"[^,;]*[,;]\s*|[^,;]+")
_ERROR = re.compile(
    r"(?i)\b(error|exception|traceback|failed|failure|fatal|panic|denied|refused|invalid|"
    r"timeout|timed out|not found|warning|errno|status\W{0,3}[45]\d\d)\b"
)
_KEY_VALUE = re.compile(r"^\s*[\"']?[\w.\- ]{1,40}[\"']?\s*[:=]\s*\S")


def apply_spans(text: str, spans: Sequence[Span]) -> str:
    """The compressed text: the kept spans, joined by newlines."""
    return "\n".join(text[start:end] for start, end in spans)


def segments(text: str) -> list[Span]:
    """Non-empty lines of ``text`` without their line breaks; very long lines are split
    after commas and semicolons, so one-line JSON still has pieces to choose from."""
    out: list[Span] = []
    for line in _SPLIT.finditer(text):
        start, end = line.span()
        while end > start and text[end - 1] in "\r\n":
            end -= 1
        if end <= start or not text[start:end].strip():
            continue
        if end - start <= _LONG_LINE:
            out.append((start, end))
            continue
        for piece in _SUBSPLIT.finditer(text, start, end):
            p_start, p_end = piece.span()
            if text[p_start:p_end].strip():
                out.append((p_start, p_end))
    return out


def _fit(text: str, ranked: list[Span], limit: int, tokenizer: Tokenizer) -> list[Span]:
    kept: list[Span] = []
    used = 0
    for start, end in ranked:
        cost = tokenizer.count(text[start:end]) + 1
        if used + cost > limit:
            continue
        kept.append((start, end))
        used += cost
    return sorted(kept)


class KeyLinesCompressor:
    """Tool output: keeps error lines first, then the first line, key-value lines and the
    last line, each once, until the limit; output in input order."""

    name = "key_lines"

    def compress(self, text: str, *, limit: int, tokenizer: Tokenizer) -> list[Span]:
        """Spans of the lines that matter most, within ``limit`` tokens."""
        lines = segments(text)
        if not lines:
            return []
        errors = [s for s in lines if _ERROR.search(text, s[0], s[1])]
        keyed = [s for s in lines if _KEY_VALUE.match(text[s[0] : s[1]])]
        ranked: list[Span] = []
        seen: set[Span] = set()
        for span in [*errors, lines[0], *keyed, lines[-1]]:
            if span not in seen:
                seen.add(span)
                ranked.append(span)
        return _fit(text, ranked, limit, tokenizer)


class HeadCompressor:
    """Artifacts and anything else: the leading lines that fit the limit."""

    name = "head"

    def compress(self, text: str, *, limit: int, tokenizer: Tokenizer) -> list[Span]:
        """Spans of the first lines, in order, until the next one would not fit."""
        kept: list[Span] = []
        used = 0
        for start, end in segments(text):
            cost = tokenizer.count(text[start:end]) + 1
            if used + cost > limit:
                break
            kept.append((start, end))
            used += cost
        return kept


def check_spans(spans: Sequence[Span], text: str, source: str) -> None:
    """Raise `ValueError` unless ``spans`` are ascending, disjoint and inside ``text``."""
    last = 0
    for start, end in spans:
        if not (last <= start <= end <= len(text)):
            raise ValueError(
                f"compressor spans for {source!r} must be ascending, non-overlapping and "
                f"inside the input (len {len(text)}); got {list(spans)!r}"
            )
        last = end
