"""`OpenAIProvider`: the `Provider` port over any OpenAI-compatible chat-completions API,
and the `Embedder` port over its ``/embeddings``.

One request per `stream` call, sent through a `Transport`; failures before the reply's body
is used are retried by a `RetryPolicy` (sleeping here, in the adapter); the body is decoded
by the pure `ReplyDecoder`. Two deadlines bound a call: ``timeout_s`` the whole of it
(retries and their waits included), ``idle_timeout_s`` each wait for the head and for the
next piece of the reply (keep-alive comments and chunks that complete nothing do not count).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..._base import ConfigError
from ...chat import (
    ModelRequest,
    ProviderError,
    ProviderProtocolError,
    ProviderReplyTooLong,
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
from ._transport import HttpHead, Transport, TransportError, TransportRefused

__all__ = ["OpenAIProvider"]

_Body = AsyncGenerator[HttpHead | bytes, None]
# An error body worth reading is short; a huge one is cut here.
_ERROR_BODY_LIMIT = 64 * 1024
# A whole (non-streamed) completion or embeddings reply is read into memory before it is
# parsed: past this it is refused (a streamed reply is bounded event by event instead).
_WHOLE_BODY_LIMIT = 8 * 1024 * 1024
# What may follow a finished reply (a usage chunk, ``[DONE]``, the chunked body's end) is
# read in the background so the transport keeps its connection for the next call: a rest
# longer or slower than this is cut, and the request aborted.
_REST_LIMIT = 64 * 1024
_REST_WAIT_S = 2.0


class _Deadlines:
    """The clock of one call: the whole-call deadline and the idle one (loop time)."""

    def __init__(self, timeout_s: float, idle_s: float) -> None:
        self._loop = asyncio.get_running_loop()
        self.timeout_s = timeout_s
        self.idle_s = idle_s
        self.end = self._loop.time() + timeout_s
        self.idle_end = self._loop.time() + idle_s

    def progress(self) -> None:
        """A piece of the reply arrived: the idle deadline starts again."""
        self.idle_end = self._loop.time() + self.idle_s

    def left(self) -> float:
        """Seconds until the whole call must be over."""
        return self.end - self._loop.time()

    def next_wait(self) -> tuple[float, bool]:
        """How long the next wait may take, and whether the whole-call deadline is the
        nearer one."""
        now = self._loop.time()
        whole, idle = self.end - now, self.idle_end - now
        return (whole, True) if whole <= idle else (idle, False)


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
        timeout_s: the longest a whole call may take, from sending the request to the
            reply's finish (retries and their waits included).
        idle_timeout_s: the longest wait for the reply to start, and for each next piece of
            it (text or a tool call; keep-alive comments do not count).
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
        timeout_s: float = 300.0,
        idle_timeout_s: float = 60.0,
        max_retries: int = 3,
        headers: Mapping[str, str] | None = None,
        context_window: int | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http(s) URL, got {base_url!r}")
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s must be positive, got {timeout_s!r}")
        if idle_timeout_s <= 0:
            raise ConfigError(f"idle_timeout_s must be positive, got {idle_timeout_s!r}")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, got {max_retries!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.context_window = context_window
        self.timeout_s = timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.retry = RetryPolicy(max_retries=max_retries)
        self._transport = transport
        self._sleep = sleep
        self._rests: set[asyncio.Task[None]] = set()
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

        `Finish` comes as soon as the reply is whole (its finish reason and usage); what
        may follow it (``[DONE]``, the body's end) is read in the background, so the
        transport keeps its connection for the next call (`wait_closed` waits for it).

        Raises:
            ProviderHttpError: the provider refused the request (4xx), with its message.
            ProviderRateLimited: 429 after the bounded retries.
            ProviderUnavailable: 5xx or no connection after the bounded retries.
            ProviderTimeout: the call took longer than ``timeout_s``, or nothing of the
                reply came for ``idle_timeout_s``.
            ProviderStreamCut: the reply stopped before it finished.
            ProviderProtocolError: the reply broke the wire format (or nests too deep).
            ProviderReplyTooLong: a whole completion longer than the adapter will read.
        """
        clock = _Deadlines(self.timeout_s, self.idle_timeout_s)
        payload = encode_body(request_body(request, model=self.model))
        head, body = await self._open(payload, clock)
        decoder: ReplyDecoder | None = None
        try:
            if head.content_type == "application/json":
                # The server ignored stream: true and sent one whole completion.
                try:
                    whole = await self._read(body, clock, _WHOLE_BODY_LIMIT, whole=True)
                except TransportError as error:
                    reason = self._scrub.message(str(error))
                    raise ReplyDecoder().cut(f"the model's reply broke: {reason}") from None
                for event in completion_events(whole, self._scrub):
                    yield event
                return
            decoder = ReplyDecoder(self._scrub)
            while not decoder.finished:
                try:
                    chunk = await self._next(body, clock)
                except StopAsyncIteration:
                    for event in decoder.end():
                        yield event
                    return
                except TransportError as error:
                    reason = self._scrub.message(str(error))
                    raise decoder.cut(f"the model's stream broke: {reason}") from None
                events = decoder.feed(chunk)
                if events:
                    clock.progress()
                for event in events:
                    yield event
        finally:
            if decoder is not None and decoder.finished:
                self._read_rest(body)
            else:
                # Cancelled, closed early or failed: the request must not outlive us.
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
        clock = _Deadlines(self.timeout_s, self.idle_timeout_s)
        _head, body = await self._open(encode_body(request), clock, self.embeddings_url)
        try:
            whole = await self._read(body, clock, _WHOLE_BODY_LIMIT, whole=True)
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

    async def _open(
        self, payload: bytes, clock: _Deadlines, url: str | None = None
    ) -> tuple[HttpHead, _Body]:
        """Send the request until a 2xx head arrives; its body is not touched yet, so every
        failure up to here may be retried (while the whole-call deadline allows)."""
        url = url or self.url
        attempt = 0
        while True:
            attempt += 1
            body = self._transport.post(url, payload, self._headers)
            try:
                head = await self._next_head(body, clock)
            except TransportError as error:
                await body.aclose()
                failure: ProviderError = unreachable(
                    url, str(error), attempts=attempt, scrub=self._scrub
                )
                wait = None if isinstance(error, TransportRefused) else self.retry.delay_s(attempt)
            except BaseException:
                await body.aclose()
                raise
            else:
                if 200 <= head.status < 300:
                    return head, body
                try:
                    error_body = await self._read(body, clock, _ERROR_BODY_LIMIT)
                except (TransportError, ProviderTimeout):
                    error_body = b""  # the status says enough
                finally:
                    await body.aclose()
                after = retry_after_s(head.headers, now_s=time.time())
                failure = http_failure(
                    head.status, error_body, attempts=attempt, retry_after=after, scrub=self._scrub
                )
                wait = self.retry.delay_s(attempt, after) if is_retryable(head.status) else None
            if wait is None or wait >= clock.left():
                raise failure  # a wait past the whole-call deadline is not worth starting
            await self._sleep(wait)

    async def wait_closed(self) -> None:
        """Wait until every request this provider sent is over: a finished reply's rest
        is read in the background (see `stream`), at most a couple of seconds. Await it
        before closing an httpx client you shared with the transport."""
        while self._rests:
            await asyncio.wait(set(self._rests))

    def _read_rest(self, body: _Body) -> None:
        """Read what follows a finished reply in the background, then close ``body``: a
        response read to its end lets the transport reuse the connection (fetch's, httpx's
        pool), where one closed before it aborts the request and loses the connection, so
        every call would open a new one (a TLS handshake to a remote provider). The answer
        never waits for this."""
        task = asyncio.get_running_loop().create_task(_read_rest(body))
        self._rests.add(task)  # held, so the task is not collected while it runs
        task.add_done_callback(self._rests.discard)

    async def _next_head(self, body: _Body, clock: _Deadlines) -> HttpHead:
        try:
            head = await self._wait(body, clock)
        except StopAsyncIteration:
            raise TransportError("the transport ended without a response") from None
        if not isinstance(head, HttpHead):
            raise ProviderProtocolError("the transport gave body bytes before the response head")
        return head

    async def _next(self, body: _Body, clock: _Deadlines) -> bytes:
        chunk = await self._wait(body, clock)
        if not isinstance(chunk, bytes):
            raise ProviderProtocolError("the transport gave a second response head")
        return chunk

    async def _wait(self, body: _Body, clock: _Deadlines) -> HttpHead | bytes:
        """The transport's next item, within the nearer of the two deadlines."""
        wait, whole = clock.next_wait()
        try:
            if wait <= 0:
                raise TimeoutError
            async with asyncio.timeout(wait):
                return await anext(body)
        except TimeoutError:
            if whole:
                message = f"the model's reply took longer than {clock.timeout_s:g} s in all"
            else:
                message = f"nothing of the model's reply came for {clock.idle_s:g} s"
            raise ProviderTimeout(message) from None

    async def _read(
        self, body: _Body, clock: _Deadlines, limit: int, *, whole: bool = False
    ) -> bytes:
        """The rest of the body, each piece within the deadlines: cut at about ``limit``
        bytes, or, when it must be read ``whole``, refused past them."""
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = await self._next(body, clock)
            except StopAsyncIteration:
                break
            clock.progress()
            parts.append(chunk)
            size += len(chunk)
            if size > limit and whole:
                raise ProviderReplyTooLong(
                    f"the provider's reply is longer than {limit:,} bytes: it was not read further"
                )
            if size >= limit and not whole:
                break
        return b"".join(parts)


async def _read_rest(body: _Body) -> None:
    """Read ``body`` to its end, up to `_REST_LIMIT` bytes within `_REST_WAIT_S`, and close
    it (aborting the request if it did not end)."""
    size = 0
    try:
        async with asyncio.timeout(_REST_WAIT_S):
            async for chunk in body:
                size += len(chunk) if isinstance(chunk, bytes) else 0
                if size > _REST_LIMIT:
                    break
    except Exception:  # TransportError, a timeout, a shared client closed meanwhile
        pass  # the reply is whole already: only the connection is lost
    finally:
        with contextlib.suppress(Exception):
            await body.aclose()


def _is_credential_header(name: str) -> bool:
    return name.lower() in ("authorization", "proxy-authorization") or is_secret_key_name(name)
