"""The page's embedding model, seen by the kernel as its `Embedder` port.

``createRuntime({ embedder: async (texts) => vectors })``: the page's own function (wllama's
``createEmbedding`` in the page, say), called through the host object (web/engine/host.js), which
answers in the shape of an OpenAI ``/embeddings`` reply; what comes back is checked by the
same code that reads a server's reply, so a wrong answer is a typed `ProviderError`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pyodide.ffi import JsException, JsProxy

from ...chat import ProviderError
from ..openai import embedding_vectors

__all__ = ["JsEmbedder"]


class JsEmbedder:
    """The page's embedder function, through the page's host object."""

    def __init__(self, host: JsProxy) -> None:
        self._host = host

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        try:
            reply = await self._host.embed(json.dumps(list(texts)))
        except JsException as error:
            raise ProviderError(f"the page's embedder failed: {error}") from None
        return embedding_vectors(str(reply).encode("utf-8"), len(texts))
