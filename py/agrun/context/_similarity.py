"""Closeness in meaning, for recall's ``similarity`` signal: pure vector arithmetic.

An embedding model (the `Embedder` port, called by the runtime) turns texts into vectors;
this module only compares them. `nearest` gives what `ContextRequest.recall_similarity`
carries: the cosine similarity of the turns closest to the request, rounded so that the
same vectors always give the same request, byte for byte.
"""

from __future__ import annotations

import math
import operator
from array import array
from collections.abc import Iterable, Sequence
from typing import TypeAlias

__all__ = ["NEAREST", "nearest", "unit_vector"]

Vector: TypeAlias = "array[float]"
"""A unit-length vector of 32-bit floats (``array("f")``: a 384-dimension one is 1.5 KB)."""

NEAREST = 64
"""How many of the closest turns a request carries: recall weighs no more than these."""


def unit_vector(values: Sequence[float]) -> Vector:
    """``values`` scaled to length 1 (a zero vector stays zero)."""
    norm = math.sqrt(math.fsum(x * x for x in values)) or 1.0
    return array("f", (x / norm for x in values))


def nearest(
    query: Vector, vectors: Iterable[tuple[str, Vector]], count: int = NEAREST
) -> dict[str, float]:
    """The ``count`` ids whose vectors are closest to ``query`` (cosine similarity of unit
    vectors, rounded to 4 places), closest first; ties go to the later id in ``vectors``
    (the newer turn)."""
    scored: list[tuple[float, int, str]] = []
    for order, (key, vector) in enumerate(vectors):
        if len(vector) != len(query):
            continue
        scored.append((round(_dot(query, vector), 4), order, key))
    scored.sort(key=lambda s: (-s[0], -s[1]))
    return {key: score for score, _, key in scored[:count]}


def _plain_dot(a: Vector, b: Vector) -> float:
    return float(sum(map(operator.mul, a, b)))


# math.sumprod (Python 3.12+, so in Pyodide) is several times faster than a Python sum.
_dot = getattr(math, "sumprod", _plain_dot)
