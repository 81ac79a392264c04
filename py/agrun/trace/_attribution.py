"""Which entries of a pack an answer used: a deterministic overlap (issue 22.2).

The answer is cut into sentences; an entry backs a sentence when it holds at least
``THRESHOLD`` of the sentence's content words (recall's normalized terms: stop words out,
plurals and tenses folded) and at least two of them, or shares a run of ``NGRAM`` words
with it. An entry the answer names (its id, one of its sources, a content ref) is cited by
the model itself. With the runtime's embedder, an entry also backs a sentence whose cosine
similarity with it is at least ``SIMILARITY`` (`similarities` asks the embedder; the marks
only read its numbers, rounded). The same answer, pack and vectors give the same marks.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence

from .._base import trusted
from ..context import ContextEntry, nearest, term_set
from ._trace import AttributedEntry, Attribution

__all__ = ["NGRAM", "SIMILARITY", "THRESHOLD", "attribute", "sentences_of", "similarities"]

THRESHOLD = 0.5
NGRAM = 4
SIMILARITY = 0.5
"""The cosine at which an entry backs a sentence by meaning. With MiniLM (the embedder the
tests and the page's wllama use), a sentence and its source in other words measured
0.53-0.87, unrelated pairs at most 0.25 (docs/kernel.md)."""
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


def _answer_runs(
    answer: str, sentences: Sequence[tuple[int, int]]
) -> tuple[dict[tuple[str, ...], frozenset[int]], frozenset[str]]:
    """Each run of ``NGRAM`` words of ``answer`` with the sentences (by index) that hold it,
    and the words such a run starts with: what `_shared_grams` looks for in an entry."""
    runs: dict[tuple[str, ...], set[int]] = {}
    for index, (start, end) in enumerate(sentences):
        for gram in _grams(answer[start:end]):
            runs.setdefault(gram, set()).add(index)
    said = {gram: frozenset(indices) for gram, indices in runs.items()}
    return said, frozenset(gram[0] for gram in said)


def _shared_grams(
    text: str, said: Mapping[tuple[str, ...], frozenset[int]], first: frozenset[str]
) -> frozenset[int]:
    """The sentences (by index) that share a run of ``NGRAM`` words with ``text``; ``said``
    is each of the answer's runs with its sentences, ``first`` their first words. A pack's
    entries are long and the answer short: only the places where one of the answer's runs
    could start are looked at, instead of making every run of every entry."""
    words = _WORDS.findall(text.lower())
    found: set[int] = set()
    for at in range(len(words) - NGRAM + 1):
        if words[at] in first:
            found |= said.get(tuple(words[at : at + NGRAM]), frozenset())
    return frozenset(found)


def _marked(
    entry: ContextEntry,
    used: bool,
    score: float,
    similarity: float | None,
    via: tuple[str, ...],
    spans: tuple[tuple[int, int], ...],
) -> AttributedEntry:
    # Valid by construction, and made for every entry of every answering pack: not
    # validated field by field (tests/test_why.py checks it equals a validated one).
    return trusted(
        AttributedEntry,
        {
            "id": entry.id,
            "layer": entry.layer,
            "used": used,
            "score": float(score),
            "similarity": similarity,
            "via": via,
            "spans": spans,
        },
    )


def _is_evidence(entry: ContextEntry) -> bool:
    return entry.kind not in _NOT_EVIDENCE


async def similarities(
    answer: str,
    entries: Iterable[ContextEntry],
    embed: Callable[[Sequence[str]], Awaitable[Sequence[array[float]]]],
) -> dict[str, tuple[float, ...]]:
    """Each evidence entry's cosine similarity with each of ``answer``'s sentences (rounded
    to 4 places), by entry id; ``embed`` gives unit vectors (`SimilarTurns.vectors`).

    Raises:
        Whatever ``embed`` raises.
    """
    said = [answer[start:end] for start, end in sentences_of(answer)]
    evidence = [entry for entry in entries if _is_evidence(entry) and entry.content.strip()]
    if not said or not evidence:
        return {}
    vectors = await embed([*said, *(entry.content for entry in evidence)])
    keyed = list(zip((entry.id for entry in evidence), vectors[len(said) :], strict=True))
    scored = [nearest(query, keyed, count=len(keyed)) for query in vectors[: len(said)]]
    return {key: tuple(row.get(key, 0.0) for row in scored) for key, _ in keyed}


def attribute(
    answer: str,
    entries: Iterable[ContextEntry],
    *,
    call: int,
    similarity: Mapping[str, Sequence[float]] | None = None,
) -> Attribution:
    """Mark each of ``entries`` used by ``answer`` or not, with the sentences it backs;
    ``similarity`` (from `similarities`) adds the embedder's closeness in meaning."""
    sentences = sentences_of(answer)
    parts = [(span, term_set(answer[span[0] : span[1]])) for span in sentences]
    said, first = _answer_runs(answer, sentences)
    marked = []
    for entry in entries:
        if not _is_evidence(entry):
            marked.append(_marked(entry, False, 0.0, None, (), ()))
            continue
        terms = term_set(entry.content)
        sharing = _shared_grams(entry.content, said, first) if said else frozenset()
        close = () if similarity is None else similarity.get(entry.id, ())
        best, spans, via = 0.0, [], set[str]()
        for index, (span, words) in enumerate(parts):
            shared = len(words & terms)
            score = shared / len(words) if words else 0.0
            best = max(best, score)
            overlap = score >= THRESHOLD and shared >= min(2, len(words))
            ngram = index in sharing
            meaning = index < len(close) and close[index] >= SIMILARITY
            if overlap or ngram or meaning:
                spans.append(span)
                via.update(("overlap",) * overlap + ("ngram",) * ngram + ("similarity",) * meaning)
        for name in (entry.id, *entry.sources):
            at = answer.find(name) if len(name) >= 3 else -1
            if at >= 0:
                spans.append((at, at + len(name)))
                via.add("citation")
                break
        marked.append(
            _marked(
                entry,
                bool(spans),
                round(best, 4),
                max(close, default=None) if similarity is not None else None,
                tuple(sorted(via)),
                tuple(sorted(set(spans))),
            )
        )
    return Attribution(
        call=call,
        threshold=THRESHOLD,
        similarity_threshold=None if similarity is None else SIMILARITY,
        sentences=sentences,
        entries=tuple(marked),
    )
