"""Recall's similarity signal, on the runtime's side: the host's `Embedder` and the vectors
of the turns it has embedded.

Before a model turn's first pack, `SimilarTurns.nearest_to` embeds the session's turns it
has not seen yet (each once, in batches, as they were stored: redacted when redaction is
on) and the request, and gives `ContextRequest.recall_similarity`: the turns closest in
meaning (`agrun.context.nearest`). The build stays pure: it only reads those numbers.
Vectors live in memory; a resumed session embeds its turns again at its first model turn.
An embedder that fails costs the turn nothing: the pack is built without the signal.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

from ..context import Message, is_recallable, nearest, unit_vector
from ..ports import Embedder

__all__ = ["SimilarTurns"]

BATCH = 64
"""Texts per embedder call: a long session's first turn makes a few calls, not thousands."""
MAX_CHARS = 1000
"""A longer text is embedded by its head: a sentence model reads a paragraph, not a
document (and a server refuses an input longer than its batch)."""


class SimilarTurns:
    """The embedder and the vectors of the turns it has read (by message id)."""

    def __init__(
        self, embedder: Embedder, *, redact: Callable[[str], str] | None, scan: int = 10_000
    ) -> None:
        self._embedder = embedder
        self._redact = redact or (lambda text: text)
        self._scan = scan
        self._vectors: dict[str, array[float]] = {}

    async def nearest_to(self, request: str, history: Sequence[Message]) -> dict[str, float]:
        """The turns of ``history`` (its newest ``scan`` messages) closest in meaning to
        ``request``, with their cosine similarity.

        Raises:
            Whatever the embedder raises (the caller builds without the signal).
        """
        turns = [m for m in history[-self._scan :] if is_recallable(m)]
        if not turns:
            return {}
        fresh = [m for m in turns if m.id not in self._vectors]
        for start in range(0, len(fresh), BATCH):
            batch = fresh[start : start + BATCH]
            vectors = await self._embed([m.content for m in batch])
            self._vectors.update(zip((m.id for m in batch), vectors, strict=True))
        [query] = await self._embed([request])
        return nearest(query, ((m.id, self._vectors[m.id]) for m in turns))

    async def _embed(self, texts: list[str]) -> list[array[float]]:
        vectors = await self._embedder.embed([self._redact(text)[:MAX_CHARS] for text in texts])
        if len(vectors) != len(texts):
            raise ValueError(f"the embedder gave {len(vectors)} vectors for {len(texts)} texts")
        return [unit_vector(v) for v in vectors]
