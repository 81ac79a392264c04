"""Recall's similarity signal, on the runtime's side: the host's `Embedder` and the vectors
of the turns it has embedded.

Before a model turn's first pack, `SimilarTurns.nearest_to` embeds the session's turns it
has not seen yet (each once, in batches, as they were stored: redacted when redaction is
on) and the request, and gives `ContextRequest.recall_similarity`: the turns closest in
meaning (`agrun.context.nearest`). The build stays pure: it only reads those numbers.
Vectors live in memory; a resumed session embeds its turns again at its first model turn.
An embedder that fails costs the turn nothing: the pack is built without the signal.

`vectors` embeds any texts (the turns and the request; an answer's sentences and its pack's
entries, for attribution), each distinct text once while it is among the last ``CACHED``
embedded.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

from ..context import Message, is_recallable, nearest, unit_vector
from ..ports import Embedder

__all__ = ["SimilarTurns"]

BATCH = 64
"""Texts per embedder call: a long session's first turn makes a few calls, not thousands."""
CACHED = 1024
"""Texts whose vectors `vectors` keeps (1.5 KB each at 384 dimensions): a session's pack
entries come back turn after turn, so each is embedded once."""
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
        self._texts: dict[str, array[float]] = {}

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
        vectors = await self.vectors([m.content for m in fresh])
        self._vectors.update(zip((m.id for m in fresh), vectors, strict=True))
        [query] = await self.vectors([request])
        return nearest(query, ((m.id, self._vectors[m.id]) for m in turns))

    async def vectors(self, texts: Sequence[str]) -> list[array[float]]:
        """The unit vectors of ``texts``, in order; a text embedded lately is not sent again.

        Raises:
            Whatever the embedder raises.
        """
        fresh = list(dict.fromkeys(t for t in texts if t not in self._texts))
        for start in range(0, len(fresh), BATCH):
            batch = fresh[start : start + BATCH]
            self._texts.update(zip(batch, await self._embed(batch), strict=True))
        found = [self._texts[t] for t in texts]
        for stale in list(self._texts)[: max(0, len(self._texts) - CACHED)]:
            del self._texts[stale]  # the oldest embedded first
        return found

    async def _embed(self, texts: list[str]) -> list[array[float]]:
        vectors = await self._embedder.embed([self._redact(text)[:MAX_CHARS] for text in texts])
        if len(vectors) != len(texts):
            raise ValueError(f"the embedder gave {len(vectors)} vectors for {len(texts)} texts")
        return [unit_vector(v) for v in vectors]
