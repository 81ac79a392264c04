"""Relevance ranking: how much an input has to do with the current goal and query.

The default, `BM25Ranker`, is lexical Okapi BM25 over lower-cased word tokens: fast,
deterministic, no model. Any object with a matching ``score`` method can replace it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["BM25Ranker", "terms"]

_TERM = re.compile(r"\w+")


def terms(text: str) -> list[str]:
    """The lower-cased word tokens BM25 compares."""
    return _TERM.findall(text.lower())


class BM25Ranker:
    """Okapi BM25 with the usual ``k1`` and ``b``; idf is computed over the given documents."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """BM25 score of each document for ``query`` (0.0 for all when the query is empty)."""
        wanted = set(terms(query))
        if not wanted or not documents:
            return [0.0] * len(documents)
        bags = [Counter(t for t in terms(doc)) for doc in documents]
        lengths = [sum(bag.values()) for bag in bags]
        average = (sum(lengths) / len(lengths)) or 1.0
        count = len(documents)
        idf = {}
        for term in sorted(wanted):
            having = sum(1 for bag in bags if term in bag)
            idf[term] = math.log(1.0 + (count - having + 0.5) / (having + 0.5))
        k1, b = self.k1, self.b
        scores = []
        for bag, length in zip(bags, lengths, strict=True):
            total = 0.0
            norm = k1 * (1.0 - b + b * length / average)
            for term in sorted(wanted & bag.keys()):
                freq = bag[term]
                total += idf[term] * freq * (k1 + 1.0) / (freq + norm)
            scores.append(round(total, 6))
        return scores
