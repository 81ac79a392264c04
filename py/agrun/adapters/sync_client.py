"""The `SyncTransport` of a runtime that syncs its session: one POST on the environment's
HTTP stack (httpx in CPython, ``fetch`` in a page), its whole reply read.

A network failure (refused, reset, offline) is `SyncError`; any HTTP status is returned for
the runtime to read (docs/storage.md "Sync").
"""

from __future__ import annotations

from collections.abc import Mapping

from ..storage import SyncError
from .openai._transport import HttpHead, Transport, TransportError

__all__ = ["HttpSyncTransport"]

# A reply larger than this is not a session a page can hold (the import limit is 64 MiB).
MAX_REPLY_BYTES = 64 * 1024 * 1024


class HttpSyncTransport:
    """Posts JSON text with a streaming `Transport` and returns the status and the body."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def __repr__(self) -> str:
        return f"HttpSyncTransport({self._transport!r})"

    async def post(self, url: str, body: str, headers: Mapping[str, str]) -> tuple[int, str]:
        """The reply's status and body text.

        Raises:
            SyncError: the server could not be reached, or its reply is over 64 MiB.
        """
        status = 0
        chunks: list[bytes] = []
        size = 0
        stream = self._transport.post(url, body.encode("utf-8"), headers)
        try:
            async for item in stream:
                if isinstance(item, HttpHead):
                    status = item.status
                    continue
                size += len(item)
                if size > MAX_REPLY_BYTES:
                    raise SyncError(f"the sync server's reply is over {MAX_REPLY_BYTES} bytes")
                chunks.append(item)
        except TransportError as error:
            raise SyncError(f"the sync server could not be reached at {url}: {error}") from None
        finally:
            await stream.aclose()
        return status, b"".join(chunks).decode("utf-8", "replace")
