"""Which entries of a pack an answer used: a deterministic overlap (issue 22.2).

The answer is cut into sentences; an entry backs a sentence when it holds at least
``THRESHOLD`` of the sentence's content words (recall's normalized terms: stop words out,
plurals and tenses folded) and at least two of them, or shares a run of ``NGRAM`` words
with it. An entry the answer names (its id, one of its sources, a content ref) is cited by
the model itself. Pure text arithmetic: the same answer and pack give the same marks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..context import ContextEntry, terms_of
from ._trace import AttributedEntry, Attribution

__all__ = ["NGRAM", "THRESHOLD", "attribute", "sentences_of"]

THRESHOLD = 0.5
NGRAM = 4
# Entries the library wrote itself: they carry instructions, never facts an answer uses.
_NOT_EVIDENCE = frozenset({"system", "policy", "steering"})
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)", re.MULTILINE)
_WORDS = re.compile(r"\w+")


def sentences_of(text: str) -> tuple[tuple[int, int], ...]:
    """The ``[start, end)`` ranges of ``text``'s sentences, blank ones left out."""
    spans = []
    for match in _SENTENCE.finditer(text):
        start, end = match.span()
        while start < end and text[start].isspace():
            start += 1
        if start < end:
            spans.append((start, end))
    return tuple(spans)


def _grams(text: str) -> set[tuple[str, ...]]:
    words = _WORDS.findall(text.lower())
    return {tuple(words[i : i + NGRAM]) for i in range(len(words) - NGRAM + 1)}


def attribute(answer: str, entries: Iterable[ContextEntry], *, call: int) -> Attribution:
    """Mark each of ``entries`` used by ``answer`` or not, with the sentences it backs."""
    sentences = sentences_of(answer)
    parts = [
        (span, set(terms_of(answer[span[0] : span[1]])), _grams(answer[span[0] : span[1]]))
        for span in sentences
    ]
    marked = []
    for entry in entries:
        if entry.kind in _NOT_EVIDENCE:
            marked.append(AttributedEntry(id=entry.id, layer=entry.layer, used=False, score=0.0))
            continue
        terms, grams = set(terms_of(entry.content)), _grams(entry.content)
        best, spans, via = 0.0, [], set[str]()
        for span, words, sentence_grams in parts:
            shared = len(words & terms)
            score = shared / len(words) if words else 0.0
            best = max(best, score)
            overlap = score >= THRESHOLD and shared >= min(2, len(words))
            ngram = bool(sentence_grams & grams)
            if overlap or ngram:
                spans.append(span)
                via.update(("overlap",) * overlap + ("ngram",) * ngram)
        for name in (entry.id, *entry.sources):
            at = answer.find(name) if len(name) >= 3 else -1
            if at >= 0:
                spans.append((at, at + len(name)))
                via.add("citation")
                break
        marked.append(
            AttributedEntry(
                id=entry.id,
                layer=entry.layer,
                used=bool(spans),
                score=round(best, 4),
                via=tuple(sorted(via)),  # type: ignore[arg-type]
                spans=tuple(sorted(set(spans))),
            )
        )
    return Attribution(call=call, threshold=THRESHOLD, sentences=sentences, entries=tuple(marked))
