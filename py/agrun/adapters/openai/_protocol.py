"""The OpenAI chat-completions wire format, both ways. Pure: no I/O, no clock.

`request_body` turns a `ModelRequest` into the JSON of ``POST {base_url}/chat/completions``;
`ReplyDecoder` turns the streamed (SSE) reply's bytes, in any chunking, into `TextDelta`,
`ToolCallDelta` and one `Finish`; `completion_events` does the same for a server that
answered with one JSON completion instead of a stream. `OpenAIProvider` and any transport
(httpx in CPython, ``fetch`` in Pyodide) share this one core.
"""

from __future__ import annotations

import json
from typing import Any

from ..._base import ConfigError
from ...chat import (
    ChatMessage,
    Finish,
    FinishReason,
    ModelRequest,
    ProviderProtocolError,
    ProviderStreamCut,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from ._failures import stream_failure
from ._json import parse_json
from ._scrub import HeldBack, Scrubber
from ._sse import SseDecoder, SseEvent

__all__ = [
    "ReplyDecoder",
    "completion_events",
    "embedding_vectors",
    "encode_body",
    "finish_reason",
    "request_body",
]

_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


def request_body(request: ModelRequest, *, model: str | None = None) -> dict[str, Any]:
    """The JSON body for ``/chat/completions``: always streamed, with usage in the stream.

    ``request.model`` wins over ``model`` (the provider's default); with neither, no
    ``model`` is sent (llama-server serves the one it loaded). ``tool_choice`` is sent only
    with tools (OpenAI refuses it alone); unset options are left out, not sent as null.
    """
    body: dict[str, Any] = {}
    chosen = request.model or model
    if chosen:
        body["model"] = chosen
    body["messages"] = [_message(message) for message in request.messages]
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    **({"description": tool.description} if tool.description else {}),
                    "parameters": tool.parameters,
                },
            }
            for tool in request.tools
        ]
        if request.tool_choice is not None:
            body["tool_choice"] = request.tool_choice
    if request.response_format is not None:
        body["response_format"] = request.response_format
    if request.stop:
        body["stop"] = list(request.stop)
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


def _message(message: ChatMessage) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role}
    if message.role == "assistant" and message.tool_calls:
        # A tool-call-only turn has null content; OpenAI refuses "" beside tool calls.
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    else:
        wire["content"] = message.content or ""
    if message.role == "tool" and message.tool_call_id is not None:
        # No "name" on tool messages: it is not in the chat-completions schema.
        wire["tool_call_id"] = message.tool_call_id
    return wire


def encode_body(body: dict[str, Any]) -> bytes:
    """The body as compact UTF-8 JSON.

    Raises:
        ConfigError: it holds a value JSON cannot carry (NaN, infinity, an object).
    """
    try:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"the model request cannot be sent as JSON: {error}") from None
    return text.encode("utf-8")


def finish_reason(value: str) -> FinishReason:
    """The port's finish reason for a provider's (unknown ones are ``other``)."""
    return _REASONS.get(value, "other")


class ReplyDecoder:
    """Decodes one streamed chat completion: `feed` it the body's chunks, then `end`.

    Events come out as soon as their SSE event is complete, and do not depend on how the
    bytes were split. `Finish` (always last) is given once the finish reason and the usage
    are both known, at ``[DONE]``, or at the end of the body, whichever is first; after it,
    nothing more is read. Credentials in ``scrub`` are masked in text, tool-call ids, names
    and arguments (text may lag a few characters behind while a credential could be forming).
    """

    def __init__(self, scrub: Scrubber | None = None) -> None:
        self._scrub = scrub or Scrubber()
        self._sse = SseDecoder()
        self._text: list[str] = []
        self._text_mask = self._scrub.stream()
        self._argument_masks: dict[int, HeldBack] = {}
        self._reason: FinishReason | None = None
        self._usage: Usage | None = None
        self.finished = False
        """Whether `Finish` has been given (the rest of the body is of no interest)."""

    @property
    def text(self) -> str:
        """The reply's text handed out so far."""
        return "".join(self._text)

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        """The events completed by the next chunk of the body.

        Raises:
            ProviderProtocolError: a chunk is not a JSON object of the expected shape.
            ProviderStreamCut: ``[DONE]`` came before any finish reason.
            ProviderError: the provider sent an error object in the stream.
        """
        events: list[StreamEvent] = []
        if not self.finished:
            for event in self._sse.feed(chunk):
                self._event(event, events)
                if self.finished:
                    break
        return events

    def end(self) -> list[StreamEvent]:
        """The last events, at the end of the body.

        Raises:
            ProviderStreamCut: the body ended before a finish reason (``partial_text`` has
                the text that arrived).
        """
        events: list[StreamEvent] = []
        if not self.finished:
            for event in self._sse.close():
                self._event(event, events)
                if self.finished:
                    return events
            if self._reason is None:
                raise self.cut("the model's stream ended before it finished")
            self._finish(events)
        return events

    def cut(self, why: str) -> ProviderStreamCut:
        """The error for a stream that stopped early, with the text that had arrived."""
        tail = self._text_mask.flush()
        return ProviderStreamCut(self._scrub.message(why), partial_text=self.text + tail)

    def _event(self, event: SseEvent, out: list[StreamEvent]) -> None:
        data = event.data.strip()
        if data == "[DONE]":
            if self._reason is None:
                raise self.cut("the model's stream said [DONE] without a finish reason")
            self._finish(out)
            return
        if not data:
            return
        chunk = _json_object(data, self._scrub)
        if event.event == "error" or chunk.get("error") is not None:
            raise stream_failure(chunk.get("error", chunk), scrub=self._scrub)
        for choice in _list(chunk.get("choices"), "choices"):
            if not isinstance(choice, dict):
                raise ProviderProtocolError("the provider sent a choice that is not an object")
            if choice.get("index", 0) != 0:
                continue  # agrun asks for one choice; ignore any other
            self._delta(_object(choice.get("delta"), "delta"), out)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self._reason = finish_reason(reason)
        usage = _usage(chunk.get("usage"))
        if usage is not None:
            self._usage = usage
        if self._reason is not None and self._usage is not None:
            self._finish(out)

    def _delta(self, delta: dict[str, Any], out: list[StreamEvent]) -> None:
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._emit_text(self._text_mask.feed(content), out)
        for position, call in enumerate(_list(delta.get("tool_calls"), "tool_calls")):
            index, call_id, name, arguments = _tool_call(call, position)
            mask = self._argument_masks.setdefault(index, self._scrub.stream())
            self._emit_call(index, call_id, name, mask.feed(arguments), out)

    def _emit_text(self, text: str, out: list[StreamEvent]) -> None:
        if text:
            self._text.append(text)
            out.append(TextDelta(text=text))

    def _emit_call(
        self,
        index: int,
        call_id: str | None,
        name: str | None,
        arguments: str,
        out: list[StreamEvent],
    ) -> None:
        if call_id or name or arguments:
            call_id = self._scrub.exact(call_id) if call_id else None
            name = self._scrub.exact(name) if name else None
            out.append(ToolCallDelta(index=index, id=call_id, name=name, arguments=arguments))

    def _finish(self, out: list[StreamEvent]) -> None:
        assert self._reason is not None
        self._emit_text(self._text_mask.flush(), out)
        for index, mask in sorted(self._argument_masks.items()):
            self._emit_call(index, None, None, mask.flush(), out)
        out.append(Finish(reason=self._reason, usage=self._usage))
        self.finished = True


def completion_events(body: bytes, scrub: Scrubber | None = None) -> list[StreamEvent]:
    """The events of a whole (non-streamed) chat completion, for a server that ignored
    ``stream: true``: its text, its tool calls and its `Finish`.

    Raises:
        ProviderProtocolError: the body is not a chat completion.
    """
    scrub = scrub or Scrubber()
    completion = _json_object(body.decode("utf-8", "replace"), scrub)
    if completion.get("error") is not None:
        raise stream_failure(completion["error"], scrub=scrub)
    choices = _list(completion.get("choices"), "choices")
    if not choices or not isinstance(choices[0], dict):
        raise ProviderProtocolError("the provider's completion has no choice")
    message = _object(choices[0].get("message"), "message")
    events: list[StreamEvent] = []
    content = message.get("content")
    if isinstance(content, str) and content:
        events.append(TextDelta(text=scrub.exact(content)))
    for position, call in enumerate(_list(message.get("tool_calls"), "tool_calls")):
        index, call_id, name, arguments = _tool_call(call, position)
        events.append(
            ToolCallDelta(
                index=index,
                id=scrub.exact(call_id) if call_id else None,
                name=scrub.exact(name) if name else None,
                arguments=scrub.exact(arguments),
            )
        )
    reason = choices[0].get("finish_reason")
    events.append(
        Finish(
            reason=finish_reason(reason) if isinstance(reason, str) and reason else "stop",
            usage=_usage(completion.get("usage")),
        )
    )
    return events


def embedding_vectors(body: bytes, count: int, scrub: Scrubber | None = None) -> list[list[float]]:
    """The vectors of an ``/embeddings`` reply (``{"data": [{"index", "embedding"}]}``), in
    the order of the texts asked for.

    Raises:
        ProviderProtocolError: not that shape, not ``count`` vectors, or vectors of unequal
            length (a server that pooled nothing sends one per token).
    """
    reply = _json_object(body.decode("utf-8", "replace"), scrub or Scrubber([]))
    items = _list(reply.get("data"), "embedding data")
    vectors: dict[int, list[float]] = {}
    for position, item in enumerate(items):
        entry = _object(item, "embedding")
        index = entry.get("index", position)
        vector = entry.get("embedding")
        if (
            not isinstance(index, int)
            or not isinstance(vector, list)
            or not vector
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector)
        ):
            raise ProviderProtocolError(
                "the provider sent an embedding that is not a list of numbers"
            )
        vectors[index] = [float(x) for x in vector]
    if sorted(vectors) != list(range(count)):
        raise ProviderProtocolError(
            f"the provider sent {len(vectors)} embeddings for {count} texts"
        )
    if len({len(v) for v in vectors.values()}) > 1:
        raise ProviderProtocolError("the provider sent embeddings of different lengths")
    return [vectors[i] for i in range(count)]


def _json_object(text: str, scrub: Scrubber) -> dict[str, Any]:
    try:
        value = parse_json(text, "a chunk")
    except ValueError:
        excerpt = scrub.message(text[:120])
        raise ProviderProtocolError(
            f"the provider sent a chunk that is not JSON: {excerpt!r}"
        ) from None
    if not isinstance(value, dict):
        raise ProviderProtocolError(f"the provider sent a {type(value).__name__}, not an object")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProviderProtocolError(f"the provider sent {what} that is not a list")
    return value


def _object(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ProviderProtocolError(f"the provider sent a {what} that is not an object")
    return value


def _tool_call(call: Any, position: int) -> tuple[int, str | None, str | None, str]:
    """``(index, id, name, arguments)`` of one tool-call piece; a missing index is its
    position (some servers leave it out when they send whole calls)."""
    if not isinstance(call, dict):
        raise ProviderProtocolError("the provider sent a tool call that is not an object")
    index = call.get("index", position)
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ProviderProtocolError(f"the provider sent a tool call with index {index!r}")
    function = _object(call.get("function"), "tool call function")
    call_id, name = call.get("id"), function.get("name")
    arguments = function.get("arguments")
    if arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments)  # some servers send the arguments as an object
    return (
        index,
        call_id if isinstance(call_id, str) and call_id else None,
        name if isinstance(name, str) and name else None,
        arguments,
    )


def _usage(value: Any) -> Usage | None:
    """The usage a chunk reports, or None (absent, or not counts: a cost report is not
    worth failing a reply over)."""
    if not isinstance(value, dict):
        return None
    prompt, completion = value.get("prompt_tokens", 0), value.get("completion_tokens", 0)
    counts = (prompt, completion)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
        return None
    return Usage(prompt_tokens=prompt, completion_tokens=completion)
