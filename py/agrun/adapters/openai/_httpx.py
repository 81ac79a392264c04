"""The CPython `Transport`: ``httpx.AsyncClient``, streamed (install ``agrun[http]``).

This module imports httpx; the package imports this module only when asked for
`HttpxTransport`, so agrun itself never needs httpx (a page uses ``fetch``).
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import AsyncGenerator, Mapping

import httpx

from ._transport import HttpHead, TransportError

__all__ = ["HttpxTransport"]


class HttpxTransport:
    """Posts with httpx and streams the body as it arrives.

    With no ``client``, the requests made on one event loop share one ``AsyncClient`` made
    here (`_loop_client`), so a call reuses the connection the one before left (a remote
    provider's TLS handshake is made once, not per call); it is closed when the loop shuts
    its async generators down, as ``asyncio.run`` and ``asyncio.Runner`` do at their end.
    Pass a client to share your own pool; its lifetime is then yours. Timeouts are the
    provider's, so httpx's own are off (it would otherwise end a slow stream after 5 s). The
    clients made here share one TLS context, httpx's default one, built on the first request.
    """

    def __init__(self, client: httpx.AsyncClient | None = None) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"HttpxTransport(shared_client={self._client is not None})"

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str]
    ) -> AsyncGenerator[HttpHead | bytes, None]:
        """Yield the head, then the body's chunks; closing the generator (or cancelling
        its task) before the body's end closes the response, and so the connection."""
        client = self._client or await _loop_client()
        try:
            request = client.build_request("POST", url, content=body, headers=dict(headers))
            response = await client.send(request, stream=True)
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            raise TransportError(_describe(error)) from None
        try:
            names = {name.lower(): value for name, value in response.headers.items()}
            yield HttpHead(response.status_code, names)
            try:
                async for chunk in response.aiter_bytes():
                    yield chunk
            except httpx.HTTPError as error:
                raise TransportError(_describe(error)) from None
        finally:
            await response.aclose()


# The client of each event loop for transports made without one (a connection is usable on
# its own loop only), with the suspended generator that closes it at the loop's shutdown,
# when the entry leaves. (A loop closed without shutting its async generators down keeps
# its client, and its idle connections, until the process ends.)
_LOOP_CLIENTS: dict[
    asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, AsyncGenerator[None, None]]
] = {}


async def _loop_client() -> httpx.AsyncClient:
    """The running loop's shared client, made on its first request."""
    loop = asyncio.get_running_loop()
    kept = _LOOP_CLIENTS.get(loop)
    if kept is None:
        client = httpx.AsyncClient(timeout=None, verify=_tls_context())
        closer = _closed_at_shutdown(loop, client)
        kept = _LOOP_CLIENTS[loop] = (client, closer)
        # Started on the loop, so its async-generator hooks know it: shutdown_asyncgens()
        # closes every generator still suspended, and this one's finally closes the client.
        await anext(closer)
    return kept[0]


async def _closed_at_shutdown(
    loop: asyncio.AbstractEventLoop, client: httpx.AsyncClient
) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        _LOOP_CLIENTS.pop(loop, None)
        await client.aclose()


@functools.cache
def _tls_context() -> ssl.SSLContext | bool:
    """httpx's default TLS context (certifi's CAs, or SSL_CERT_FILE / SSL_CERT_DIR), made once.

    Each new client would otherwise build its own, and reading the CA bundle takes tens of
    milliseconds: most of what a model turn spent in agrun. An ``SSLContext`` is safe to
    share between connections, clients and threads. An httpx without `create_ssl_context`
    (before 0.28) gets ``True``: its own default, built per client as before.
    """
    create = getattr(httpx, "create_ssl_context", None)
    if create is None:
        return True
    context: ssl.SSLContext = create()
    return context


def _describe(error: Exception) -> str:
    # Only the exception's own text: httpx keeps the request (and its headers) on the
    # exception object, which is therefore not chained onto ours.
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
