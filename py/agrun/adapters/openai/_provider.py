"""`OpenAIProvider`: the `Provider` port over any OpenAI-compatible chat-completions API,
and the `Embedder` port over its ``/embeddings``.

One request per `stream` call, sent through a `Transport`; failures before the reply's body
is used are retried by a `RetryPolicy` (sleeping here, in the adapter); the body is decoded
by the pure `ReplyDecoder`. Every wait (for the head, and for each next piece of the body)
is bounded by ``timeout_s``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..._base import ConfigError
from ...chat import (
    ModelRequest,
    ProviderError,
    ProviderProtocolError,
    ProviderStreamCut,
    ProviderTimeout,
    StreamEvent,
)
from ...sensitive import is_secret_key_name
from ._failures import RetryPolicy, http_failure, is_retryable, retry_after_s, unreachable
from ._protocol import (
    ReplyDecoder,
    completion_events,
    embedding_vectors,
    encode_body,
    request_body,
)
from ._scrub import Scrubber
from ._transport import HttpHead, Transport, TransportError

__all__ = ["OpenAIProvider"]

_Body = AsyncGenerator[HttpHead | bytes, None]
# An error body worth reading is short; a huge one is cut here.
_ERROR_BODY_LIMIT = 64 * 1024


class OpenAIProvider:
    """A model behind ``POST {base_url}/chat/completions`` (OpenAI, llama-server, Ollama,
    vLLM and other compatible servers), streamed.

    Args:
        base_url: the API root, up to and including its version (``.../v1``).
        model: the model to ask for when a request names none.
        api_key: sent as ``Authorization: Bearer <key>``; never shown in a repr, an error
            or an event.
        transport: the HTTP stack (`HttpxTransport` in CPython, ``FetchTransport`` in
            Pyodide; the presets choose one).
        timeout_s: the longest wait for the reply to start, and for each next piece of it.
        max_retries: how many times a 429, 408, 5xx or refused connection is retried.
        headers: more request headers (values of credential-named ones are masked too).
        context_window: the model's context window in tokens, for whoever sizes requests.
        sleep: how to wait between retries (``asyncio.sleep``; a test may record instead).

    ``stream`` raises `ProviderError` subclasses only; cancelling the consuming task, or
    closing the iterator, aborts the HTTP request.
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        api_key: str | None = None,
        *,
        transport: Transport,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        headers: Mapping[str, str] | None = None,
        context_window: int | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http(s) URL, got {base_url!r}")
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s must be positive, got {timeout_s!r}")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, got {max_retries!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.context_window = context_window
        self.timeout_s = timeout_s
        self.retry = RetryPolicy(max_retries=max_retries)
        self._transport = transport
        self._sleep = sleep
        extra = dict(headers or {})
        self._headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            **{name.lower(): value for name, value in extra.items()},
        }
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"
        self._scrub = Scrubber(
            [api_key, *(v for n, v in extra.items() if _is_credential_header(n))]
        )

    @property
    def url(self) -> str:
        """Where requests go."""
        return f"{self.base_url}/chat/completions"

    def __repr__(self) -> str:
        key = "<set>" if "authorization" in self._headers else None
        return f"OpenAIProvider(base_url={self.base_url!r}, model={self.model!r}, api_key={key})"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The reply to ``request``: text and tool-call deltas as they arrive, `Finish` last.

        Raises:
            ProviderHttpError: the provider refused the request (4xx), with its message.
            ProviderRateLimited: 429 after the bounded retries.
            ProviderUnavailable: 5xx or no connection after the bounded retries.
            ProviderTimeout: the reply (or its next piece) took longer than ``timeout_s``.
            ProviderStreamCut: the reply stopped before it finished.
            ProviderProtocolError: the reply broke the wire format.
        """
        payload = encode_body(request_body(request, model=self.model))
        head, body = await self._open(payload)
        try:
            if head.content_type == "application/json":
                # The server ignored stream: true and sent one whole completion.
                try:
                    whole = await self._read(body)
                except TransportError as error:
                    reason = self._scrub.message(str(error))
                    raise ReplyDecoder().cut(f"the model's reply broke: {reason}") from None
                for event in completion_events(whole, self._scrub):
                    yield event
                return
            decoder = ReplyDecoder(self._scrub)
            while not decoder.finished:
                try:
                    chunk = await self._next(body)
                except StopAsyncIteration:
                    for event in decoder.end():
                        yield event
                    return
                except TransportError as error:
                    reason = self._scrub.message(str(error))
                    raise decoder.cut(f"the model's stream broke: {reason}") from None
                for event in decoder.feed(chunk):
                    yield event
        finally:
            # Also on cancellation and on an early aclose(): the request must not outlive us.
            await body.aclose()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The vectors of ``texts`` from ``POST {base_url}/embeddings`` (the `Embedder` port:
        llama-server started with ``--embedding --pooling mean``, OpenAI, Ollama...).

        Raises:
            ProviderError: as `stream` does; `ProviderProtocolError` for a reply that does
                not hold one vector per text.
        """
        if not texts:
            return []
        request: dict[str, Any] = {"input": list(texts)}
        if self.model:
            request["model"] = self.model
        _head, body = await self._open(encode_body(request), self.embeddings_url)
        try:
            whole = await self._read(body)
        except TransportError as error:
            reason = self._scrub.message(str(error))
            raise ProviderStreamCut(f"the embeddings reply broke: {reason}") from None
        finally:
            await body.aclose()
        return embedding_vectors(whole, len(texts), self._scrub)

    @property
    def embeddings_url(self) -> str:
        """Where `embed` posts."""
        return f"{self.base_url}/embeddings"

    async def _open(self, payload: bytes, url: str | None = None) -> tuple[HttpHead, _Body]:
        """Send the request until a 2xx head arrives; its body is not touched yet, so every
        failure up to here may be retried."""
        url = url or self.url
        attempt = 0
        while True:
            attempt += 1
            body = self._transport.post(url, payload, self._headers)
            try:
                head = await self._next_head(body)
            except TransportError as error:
                await body.aclose()
                failure: ProviderError = unreachable(
                    url, str(error), attempts=attempt, scrub=self._scrub
                )
                wait = self.retry.delay_s(attempt)
            except BaseException:
                await body.aclose()
                raise
            else:
                if 200 <= head.status < 300:
                    return head, body
                try:
                    error_body = await self._read(body, limit=_ERROR_BODY_LIMIT)
                except (TransportError, ProviderTimeout):
                    error_body = b""  # the status says enough
                finally:
                    await body.aclose()
                after = retry_after_s(head.headers, now_s=time.time())
                failure = http_failure(
                    head.status, error_body, attempts=attempt, retry_after=after, scrub=self._scrub
                )
                wait = self.retry.delay_s(attempt, after) if is_retryable(head.status) else None
            if wait is None:
                raise failure
            await self._sleep(wait)

    async def _next_head(self, body: _Body) -> HttpHead:
        try:
            async with asyncio.timeout(self.timeout_s):
                head = await anext(body)
        except TimeoutError:
            raise ProviderTimeout(
                f"the model provider did not answer within {self.timeout_s:g} s"
            ) from None
        except StopAsyncIteration:
            raise TransportError("the transport ended without a response") from None
        if not isinstance(head, HttpHead):
            raise ProviderProtocolError("the transport gave body bytes before the response head")
        return head

    async def _next(self, body: _Body) -> bytes:
        try:
            async with asyncio.timeout(self.timeout_s):
                chunk = await anext(body)
        except TimeoutError:
            message = f"the model's stream stalled for more than {self.timeout_s:g} s"
            raise ProviderTimeout(message) from None
        if not isinstance(chunk, bytes):
            raise ProviderProtocolError("the transport gave a second response head")
        return chunk

    async def _read(self, body: _Body, limit: int | None = None) -> bytes:
        """The rest of the body (up to ``limit`` bytes), each piece within the timeout."""
        parts: list[bytes] = []
        size = 0
        while limit is None or size < limit:
            try:
                chunk = await self._next(body)
            except StopAsyncIteration:
                break
            parts.append(chunk)
            size += len(chunk)
        return b"".join(parts)


def _is_credential_header(name: str) -> bool:
    return name.lower() in ("authorization", "proxy-authorization") or is_secret_key_name(name)
