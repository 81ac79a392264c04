"""The one thing an HTTP stack must do for `OpenAIProvider`: post JSON, stream the reply.

A transport is deliberately dumb: no retries, no timeouts, no status handling. The provider
does all of that once, on top of `httpx` in CPython (`HttpxTransport`) or the browser's
``fetch`` in Pyodide (`agrun.adapters.pyodide.fetch.FetchTransport`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["HttpHead", "Transport", "TransportError"]


@dataclass(frozen=True, slots=True)
class HttpHead:
    """A response's status line and headers (names lower-cased)."""

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def content_type(self) -> str:
        """The media type alone, lower-cased (``text/event-stream``), or ``""``."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


class TransportError(Exception):
    """The connection failed (refused, reset, DNS, aborted by the network) — not an HTTP
    status. The message must never hold a request header."""


class TransportRefused(TransportError):
    """The request was refused before it left (a page's Content Security Policy does not
    allow its origin): asking again cannot help, so it is not retried."""


@runtime_checkable
class Transport(Protocol):
    """Posts a JSON body and streams the response back."""

    def post(
        self, url: str, body: bytes, headers: Mapping[str, str]
    ) -> AsyncGenerator[HttpHead | bytes, None]:
        """Yield the response's `HttpHead` first, then its body in chunks as they arrive.

        Closing the generator (``aclose``), or cancelling the task awaiting it, must abort
        the HTTP request and release its connection. Network failures raise
        `TransportError`, before or after the head.
        """
        ...
