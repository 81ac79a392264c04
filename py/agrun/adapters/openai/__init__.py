"""The OpenAI-compatible model provider: chat completions over HTTP, streamed (SSE).

    _protocol, _sse, _failures, _scrub   the pure wire format: request body, SSE and chunk
                                         decoding, error mapping, retry delays, redaction
    _provider                            OpenAIProvider: the Provider port on a Transport
    _transport                           what an HTTP stack must do (post, stream the body)
    _httpx                               the CPython transport (httpx, agrun[http])
    ../pyodide/fetch.py                  the Pyodide transport (the browser's fetch)
    _presets                             llama_server(), ollama(), hosted()

``HttpxTransport`` is imported on first use, so importing this package never needs httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._failures import RetryPolicy, retry_after_s
from ._presets import default_transport, hosted, llama_server, ollama
from ._protocol import (
    ReplyDecoder,
    completion_events,
    embedding_vectors,
    encode_body,
    request_body,
)
from ._provider import OpenAIProvider
from ._scrub import Scrubber
from ._sse import SseDecoder, SseEvent
from ._transport import HttpHead, Transport, TransportError, TransportRefused

if TYPE_CHECKING:
    from ._httpx import HttpxTransport

__all__ = [
    "HttpHead",
    "HttpxTransport",
    "OpenAIProvider",
    "ReplyDecoder",
    "RetryPolicy",
    "Scrubber",
    "SseDecoder",
    "SseEvent",
    "Transport",
    "TransportError",
    "TransportRefused",
    "completion_events",
    "default_transport",
    "embedding_vectors",
    "encode_body",
    "hosted",
    "llama_server",
    "ollama",
    "request_body",
    "retry_after_s",
]


def __getattr__(name: str) -> Any:
    if name == "HttpxTransport":
        from ._httpx import HttpxTransport

        return HttpxTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
