"""A model the page supplies: ``createRuntime({ provider: async (request, { signal, onToken })
=> ({ text, toolCalls, usage, finishReason }) })``, seen by the kernel as a `Provider`.

The page's function gets ``request.messages`` and ``request.tools`` in the OpenAI chat format
(so a model running in the page, or any fetch of the page's own, plugs in as it is) and
streams text through ``onToken``. JSON text is all that crosses: the request goes out as
JSON, each token comes back through a proxy lent for the call, and the reply as JSON
(depth-checked before it is parsed). A cancelled run aborts the call's ``signal``, and so
does the whole-call deadline (``timeout_s``, as for the HTTP adapter): a function that never
settles fails the turn with `ProviderTimeout`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from pyodide.ffi import JsException, JsProxy

from ..._base import ConfigError
from ...chat import (
    Finish,
    ModelRequest,
    ProviderError,
    ProviderProtocolError,
    ProviderTimeout,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from ..openai._json import parse_json
from ..openai._protocol import finish_reason, request_body
from ._proxies import lent_proxies

__all__ = ["JsProvider", "provider_request"]


def provider_request(request: ModelRequest) -> dict[str, Any]:
    """What the page's provider function gets: the OpenAI chat body, camelCase options."""
    body = request_body(request)
    wire: dict[str, Any] = {"messages": body["messages"], "tools": body.get("tools", [])}
    for key, name in (
        ("model", "model"),
        ("max_tokens", "maxTokens"),
        ("temperature", "temperature"),
        ("stop", "stop"),
        ("tool_choice", "toolChoice"),
        ("response_format", "responseFormat"),
    ):
        if key in body:
            wire[name] = body[key]
    return wire


class JsProvider:
    """The page's provider function, through the page's host object (web/engine/host.js)."""

    def __init__(
        self, host: JsProxy, *, model: str | None = None, timeout_s: float = 300.0
    ) -> None:
        if not timeout_s > 0:
            raise ConfigError(f"the provider's timeout must be positive, got {timeout_s!r}")
        self._host = host
        self.model = model
        self.timeout_s = timeout_s

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        # The pieces that came since the last look go on as one delta, and one Event wakes
        # the loop: a task and an `asyncio.wait` for each piece cost ~1 ms a piece in
        # Chromium when they came a task apart, 0.6 ms when many came at once
        # (bench/provider_pieces.py).
        pieces: list[str] = []
        arrived = asyncio.Event()

        def on_piece(text: str) -> None:
            pieces.append(text)
            arrived.set()

        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        with lent_proxies(on_piece) as (on_token,):
            # The host sends every piece of the text through on_token (what the page's
            # function returned beyond what it streamed included) before the reply settles.
            call = self._host.callProvider(json.dumps(provider_request(request)), on_token)
            reply = asyncio.ensure_future(_settle(call.promise))
            reply.add_done_callback(lambda _: arrived.set())
            try:
                while pieces or not reply.done():
                    if pieces:
                        text = "".join(pieces)
                        pieces.clear()
                        yield TextDelta(text=text)
                        continue
                    left = deadline - loop.time()
                    if left <= 0:
                        raise ProviderTimeout(
                            f"the page's provider did not finish within {self.timeout_s:g} s"
                        )
                    arrived.clear()
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(left):
                            await arrived.wait()
                answer = reply.result()
            except ProviderTimeout:
                call.abort("agrun's deadline for this model call passed")
                reply.cancel()
                raise
            except (asyncio.CancelledError, GeneratorExit):
                call.abort("agrun cancelled this model call")
                reply.cancel()
                raise
        for event in _reply_events(answer):
            yield event


async def _settle(promise: Any) -> dict[str, Any]:
    try:
        text = await promise
    except JsException as error:
        raise ProviderError(f"the page's provider failed: {error}") from None
    reply = parse_json(str(text), "a reply")
    if not isinstance(reply, dict) or not reply.get("ok"):
        if isinstance(reply, dict) and reply.get("protocol"):
            # It answered, with something that is not a reply (web/engine/host.js checkReply).
            raise ProviderProtocolError(str(reply.get("error")))
        raise ProviderError(f"the page's provider failed: {reply.get('error')}")
    answer: dict[str, Any] = reply["reply"]
    return answer


def _reply_events(reply: dict[str, Any]) -> list[StreamEvent]:
    """The tool calls and the finish of a reply whose text has already streamed."""
    events: list[StreamEvent] = []
    calls = reply.get("toolCalls") or []
    for index, call in enumerate(calls):
        arguments = call.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        events.append(
            ToolCallDelta(index=index, id=call.get("id"), name=call["name"], arguments=arguments)
        )
    events.append(
        Finish(
            reason=finish_reason(reply.get("finishReason") or ("tool_calls" if calls else "stop")),
            usage=_usage(reply.get("usage")),
        )
    )
    return events


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    counts = (usage.get("promptTokens", 0), usage.get("completionTokens", 0))
    if not all(type(n) is int and n >= 0 for n in counts):
        raise ProviderProtocolError(
            f"the page's provider returned a usage of {counts[0]!r} prompt and {counts[1]!r} "
            "completion tokens: counts are integers of at least 0"
        )
    return Usage(prompt_tokens=counts[0], completion_tokens=counts[1])
