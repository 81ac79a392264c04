"""A real OpenAI-compatible HTTP server on 127.0.0.1 that misbehaves on purpose, for tests.

    server, url = serve_openai_double()
    base_url = server.url_for("rate_limited")      # {url}/scenario/rate_limited/v1
    ...                                            # POST {base_url}/chat/completions
    server.requests_for("rate_limited")            # what it received, attempt by attempt
    server.close()

The scenario comes from the path, ``/scenario/<name>[/<tag>]/v1/chat/completions``; plain
``/v1/chat/completions`` is ``text``. Attempts are counted per name and tag, so a test that
shares a server can take a fresh count with its own tag. Streams are real SSE over chunked
HTTP/1.1, written piece by piece; ``"stream": false`` gets one JSON completion. Every
response carries CORS headers (and OPTIONS is answered), so a page on another port can call
it. Each request is recorded with its headers, its JSON body and whether the client went
away before the reply was over (`RecordedRequest.disconnected`). Each connection is closed
after its response, unless the double is started with ``keep_alive=True`` (HTTP/1.1's
default: a client may send its next request on it); `OpenAIDouble.connections` counts them,
`OpenAIDouble.closed_connections` those over.

GET /v1/models (under any scenario's path) lists one model; under `unauthorized` it is a 401.

Scenarios (`SCENARIOS`; a test may add its own, a function of a `Reply`):

    text                  "Hello, world!" in four chunks, finish stop, usage in a last chunk
    tools                 two parallel tool calls, their arguments split and interleaved
    usage_inline          usage on the finish chunk itself (llama.cpp's way)
    json_reply            one JSON completion even when asked to stream
    bad_request           400 with an OpenAI-style error body
    unauthorized          401 whose message echoes the key it was sent
    rate_limited          429 with Retry-After: 2, then text
    rate_limited_date     429 with Retry-After as an HTTP date 30 s ahead, then text
    rate_limited_forever  429 with Retry-After: 1, always
    rate_limited_long     429 with Retry-After: 3600
    server_error          500, then 503, then text
    unavailable           503, always
    slow                  no answer for 30 s (the client's timeout ends it)
    stall                 one chunk, then silence for 30 s
    slow_stream           a chunk every 50 ms for a minute (for cancelling mid-stream)
    cut                   two chunks, a pause, then the connection closes mid-body
    late_done             text, finish and usage, then [DONE] and the body's end 0.2 s later
    burst                 BURST_WORDS words, each its own SSE event, all in one write
    hang_after_finish     text, finish and usage, then silence for 30 s (no [DONE], no end)
    no_finish             text, then [DONE] without any finish_reason
    malformed             one chunk, then a chunk that is not JSON
    error_in_stream       one chunk, then an error object inside the 200 stream
    unknown_tool          a call of a tool nobody offered
    bad_arguments         a call whose arguments are not valid JSON
    huge_stream           1,000 text deltas of 50 KB each (50 MB), whatever max_tokens says
    huge_tool_call        one tool call whose arguments stream 50 KB at a time, 1,000 times
    huge_completion       one JSON completion of 20 MB (a server ignoring stream: true)
    keepalive_forever     the stream's head, then a ": keep-alive" comment every 0.5 s
    deep_chunk            one chunk, then a chunk holding JSON nested 30,000 deep
    deep_completion       a whole JSON completion nested 30,000 deep
    deep_error            400 whose JSON error body nests 30,000 deep

The misbehaving ones stop as soon as the client goes away (or after a few minutes).
"""

from __future__ import annotations

import contextlib
import email.utils
import http.server
import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BURST_WORDS",
    "SCENARIOS",
    "OpenAIDouble",
    "RecordedRequest",
    "Reply",
    "serve_openai_double",
]

MODEL = "double-1"
_PATH = re.compile(r"^(?:/scenario/(?P<name>[\w-]+)(?:/(?P<tag>[\w.-]+))?)?/v1/chat/completions$")
_MODELS = re.compile(r"^(?:/scenario/(?P<name>[\w-]+)(?:/[\w.-]+)?)?/v1/models$")


@dataclass
class RecordedRequest:
    """One POST the double received."""

    scenario: str
    tag: str
    attempt: int
    """1 for the first request of this scenario and tag, 2 for the next, ..."""
    path: str
    headers: dict[str, str]
    """Names lower-cased."""
    body: Any
    """The parsed JSON body (None if it was not JSON)."""
    disconnected: bool = False
    """The client went away before the reply was over."""
    done: bool = False
    """The scenario has finished with this request (replied, or saw the client go)."""


class _ClientGone(Exception):
    """The client closed the connection; the scenario stops."""


class Reply:
    """What a scenario uses to answer one request."""

    def __init__(self, handler: _Handler, request: RecordedRequest) -> None:
        self._handler = handler
        self.request = request
        self.attempt = request.attempt
        body = request.body if isinstance(request.body, dict) else {}
        self.stream: bool = bool(body.get("stream", False))

    # -- whole replies ----------------------------------------------------------------

    def json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        """A whole JSON response."""
        data = json.dumps(payload).encode()
        self._head(status, {"Content-Type": "application/json", **(headers or {})}, len(data))
        self._write(data)

    def error(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request_error",
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """An OpenAI-style error: ``{"error": {"message", "type", "param", "code"}}``."""
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        self.json(status, body, headers)

    def completion(
        self,
        text: str = "",
        tool_calls: list[dict[str, Any]] | None = None,
        *,
        finish: str = "stop",
        pieces: list[str] | None = None,
    ) -> None:
        """A normal reply: streamed in ``pieces`` if the request asked to stream, else one
        JSON completion."""
        usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        if not self.stream:
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if tool_calls:
                message["tool_calls"] = tool_calls
            self.json(200, _completion(message, finish, usage))
            return
        self.start_stream()
        self.event(chunk({"role": "assistant", "content": ""}))
        for piece in pieces if pieces is not None else [text]:
            self.event(chunk({"content": piece}))
        self.event(chunk({}, finish=finish))
        self.event(chunk(None, usage=usage))
        self.done()

    # -- streams, piece by piece ------------------------------------------------------

    def start_stream(self, status: int = 200) -> None:
        """The head of an SSE stream (chunked)."""
        self._head(status, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})

    def event(self, payload: Any) -> None:
        """One SSE event (``data: <json>`` and a blank line) in one HTTP chunk."""
        data = payload if isinstance(payload, str) else json.dumps(payload)
        self.raw(f"data: {data}\n\n".encode())

    def raw(self, data: bytes) -> None:
        """Bytes of the body as one HTTP chunk, sent now."""
        self._write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def done(self) -> None:
        """``data: [DONE]`` and the end of the body."""
        self.raw(b"data: [DONE]\n\n")
        self._write(b"0\r\n\r\n")

    def cut(self) -> None:
        """Close the connection without ending the body."""
        with contextlib.suppress(OSError):
            self._handler.connection.shutdown(socket.SHUT_RDWR)

    def idle(self, seconds: float) -> None:
        """Say nothing for ``seconds``, watching the connection.

        Raises:
            _ClientGone: the client closed it meanwhile (the request is marked).
        """
        deadline = time.monotonic() + seconds
        server = self._handler.server
        assert isinstance(server, OpenAIDouble)
        while (left := deadline - time.monotonic()) > 0 and not server.stopping.is_set():
            readable, _, _ = select.select([self._handler.connection], [], [], min(left, 0.02))
            if readable:
                try:
                    peeked = self._handler.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    peeked = b""
                if not peeked:
                    raise _ClientGone
                time.sleep(0.02)  # the client sent more; nothing to do with it

    def _head(self, status: int, headers: dict[str, str], length: int | None = None) -> None:
        handler = self._handler
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        if length is None:
            handler.send_header("Transfer-Encoding", "chunked")
        else:
            handler.send_header("Content-Length", str(length))
        handler.send_cors_headers()
        if not handler.server.keep_alive:
            handler.send_header("Connection", "close")
        try:
            handler.end_headers()
        except OSError:
            raise _ClientGone from None

    def _write(self, data: bytes) -> None:
        try:
            self._handler.wfile.write(data)
            self._handler.wfile.flush()
        except OSError:
            raise _ClientGone from None


def chunk(
    delta: dict[str, Any] | None,
    *,
    finish: str | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` (``delta=None``: a usage-only chunk, no choices)."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-double",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": choices,
        "usage": usage,
    }


def _completion(message: dict[str, Any], finish: str, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-double",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def _call(index: int, call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    call: dict[str, Any] = {"index": index, "function": function}
    if call_id is not None:
        call.update(id=call_id, type="function")
    return call


# -- the scenarios ----------------------------------------------------------------------

WEATHER_ARGUMENTS = '{"city": "Paris", "unit": "celsius"}'
TIME_ARGUMENTS = '{"timezone": "Europe/Paris"}'


def _text(reply: Reply) -> None:
    reply.completion("Hello, world!", pieces=["Hello", ", ", "world", "!"])


def _tools(reply: Reply) -> None:
    calls = [
        {
            "id": "call_w",
            "type": "function",
            "function": {"name": "get_weather", "arguments": WEATHER_ARGUMENTS},
        },
        {
            "id": "call_t",
            "type": "function",
            "function": {"name": "get_time", "arguments": TIME_ARGUMENTS},
        },
    ]
    if not reply.stream:
        reply.completion(tool_calls=calls, finish="tool_calls")
        return
    reply.start_stream()
    reply.event(chunk({"role": "assistant", "content": None}))
    # Both calls open, then their arguments arrive in pieces, interleaved.
    reply.event(chunk({"tool_calls": [_call(0, "call_w", "get_weather", "")]}))
    reply.event(chunk({"tool_calls": [_call(1, "call_t", "get_time", TIME_ARGUMENTS[:5])]}))
    for start in range(0, len(WEATHER_ARGUMENTS), 7):
        reply.event(chunk({"tool_calls": [_call(0, None, None, WEATHER_ARGUMENTS[start:][:7])]}))
        if start == 7:
            reply.event(chunk({"tool_calls": [_call(1, None, None, TIME_ARGUMENTS[5:])]}))
    reply.event(chunk({}, finish="tool_calls"))
    reply.event(chunk(None, usage={"prompt_tokens": 40, "completion_tokens": 22}))
    reply.done()


def _usage_inline(reply: Reply) -> None:
    reply.start_stream()
    reply.event(chunk({"content": "Counted."}))
    reply.event(chunk({}, finish="stop", usage={"prompt_tokens": 5, "completion_tokens": 2}))
    reply.done()


def _json_reply(reply: Reply) -> None:
    reply.stream = False  # a server that ignores "stream": true
    reply.completion("Hello, world!")


def _bad_request(reply: Reply) -> None:
    reply.error(400, "'messages' must contain at least one message", code="invalid_value")


def _unauthorized(reply: Reply) -> None:
    presented = reply.request.headers.get("authorization", "").removeprefix("Bearer ")
    reply.error(
        401,
        f"Incorrect API key provided: {presented}. You can find your API key in your account.",
        kind="invalid_request_error",
        code="invalid_api_key",
    )


def _rate_limited(reply: Reply) -> None:
    if reply.attempt == 1:
        reply.error(429, "Rate limit reached, try again in 2s", headers={"Retry-After": "2"})
    else:
        _text(reply)


def _rate_limited_date(reply: Reply) -> None:
    if reply.attempt == 1:
        when = email.utils.formatdate(time.time() + 30, usegmt=True)
        reply.error(429, "Rate limit reached", headers={"Retry-After": when})
    else:
        _text(reply)


def _rate_limited_forever(reply: Reply) -> None:
    reply.error(429, "Rate limit reached", code="rate_limit_exceeded", headers={"Retry-After": "1"})


def _rate_limited_long(reply: Reply) -> None:
    reply.error(429, "Daily quota used up", headers={"Retry-After": "3600"})


def _server_error(reply: Reply) -> None:
    if reply.attempt == 1:
        reply.error(
            500, "The server had an error while processing your request", kind="server_error"
        )
    elif reply.attempt == 2:
        reply.error(503, "The engine is currently overloaded", kind="server_error")
    else:
        _text(reply)


def _unavailable(reply: Reply) -> None:
    reply.error(503, "The engine is currently overloaded", kind="server_error")


def _slow(reply: Reply) -> None:
    reply.idle(30)
    _text(reply)


def _stall(reply: Reply) -> None:
    reply.start_stream()
    reply.event(chunk({"content": "Thinking"}))
    reply.idle(30)
    reply.event(chunk({}, finish="stop"))
    reply.done()


def _slow_stream(reply: Reply) -> None:
    reply.start_stream()
    for n in range(1200):
        reply.event(chunk({"content": f"tick {n} "}))
        reply.idle(0.05)
    reply.event(chunk({}, finish="stop"))
    reply.done()


def _cut(reply: Reply) -> None:
    reply.start_stream()
    reply.event(chunk({"content": "Once upon"}))
    reply.event(chunk({"content": " a time"}))
    # A connection that dies mid-generation, after the client has read what it was sent: a
    # browser's stream that errors drops the chunks it has queued but not yet handed out.
    reply.idle(0.5)
    reply.cut()


def _finished(reply: Reply) -> None:
    """A whole reply up to its usage chunk, without ``[DONE]`` or the body's end."""
    reply.start_stream()
    reply.event(chunk({"content": "Done"}))
    reply.event(chunk({}, finish="stop"))
    reply.event(chunk(None, usage={"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}))


def _late_done(reply: Reply) -> None:
    _finished(reply)
    reply.idle(0.2)
    reply.done()


# The reply of `burst`: many pieces that reach the client together, as from a fast server.
BURST_WORDS = [f"word{n} " for n in range(200)]


def _burst(reply: Reply) -> None:
    reply.start_stream()
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": word}) for word in BURST_WORDS]
    usage = {"prompt_tokens": 3, "completion_tokens": len(BURST_WORDS)}
    events += [chunk({}, finish="stop"), chunk(None, usage=usage)]
    reply.raw(b"".join(f"data: {json.dumps(event)}\n\n".encode() for event in events))
    reply.done()


def _hang_after_finish(reply: Reply) -> None:
    _finished(reply)
    reply.idle(30)
    reply.done()


def _no_finish(reply: Reply) -> None:
    reply.start_stream()
    reply.event(chunk({"content": "Almost"}))
    reply.done()


def _malformed(reply: Reply) -> None:
    reply.start_stream()
    reply.event(chunk({"content": "Fine so far"}))
    reply.raw(b'data: {"choices": [{"index": 0, "delta": {"content": "oops"}\n\n')
    reply.event(chunk({}, finish="stop"))
    reply.done()


def _error_in_stream(reply: Reply) -> None:
    reply.start_stream()
    reply.event(chunk({"content": "Start"}))
    reply.event({"error": {"message": "the model crashed", "type": "server_error", "code": 500}})
    reply.done()


def _single_call(reply: Reply, name: str, arguments: str) -> None:
    reply.start_stream()
    reply.event(chunk({"tool_calls": [_call(0, "call_x", name, arguments[:6])]}))
    reply.event(chunk({"tool_calls": [_call(0, None, None, arguments[6:])]}))
    reply.event(chunk({}, finish="tool_calls"))
    reply.event(chunk(None, usage={"prompt_tokens": 9, "completion_tokens": 4}))
    reply.done()


def _unknown_tool(reply: Reply) -> None:
    _single_call(reply, "launch_rockets", '{"target": "moon"}')


def _bad_arguments(reply: Reply) -> None:
    _single_call(reply, "get_weather", '{"city": "Par')


# -- misbehaving servers (issue 20) ----------------------------------------------------

DEEP = 30_000
DELTA_50KB = "x" * 50_000


def deep_json(depth: int = DEEP) -> str:
    """A JSON array nested ``depth`` levels deep."""
    return "[" * depth + "]" * depth


def _huge_stream(reply: Reply) -> None:
    reply.start_stream()
    for _ in range(1000):
        reply.event(chunk({"content": DELTA_50KB}))
    reply.event(chunk({}, finish="stop"))
    reply.done()


def _huge_tool_call(reply: Reply) -> None:
    reply.start_stream()
    reply.event(chunk({"tool_calls": [_call(0, "call_h", "get_weather", '{"city": "')]}))
    for _ in range(1000):
        reply.event(chunk({"tool_calls": [_call(0, None, None, DELTA_50KB)]}))
    reply.event(chunk({"tool_calls": [_call(0, None, None, '"}')]}))
    reply.event(chunk({}, finish="tool_calls"))
    reply.done()


def _huge_completion(reply: Reply) -> None:
    message = {"role": "assistant", "content": "y" * 20_000_000}
    usage = {"prompt_tokens": 1, "completion_tokens": 1}
    reply.json(200, _completion(message, "stop", usage))


def _keepalive_forever(reply: Reply) -> None:
    reply.start_stream()
    for _ in range(600):
        reply.raw(b": keep-alive\n\n")
        reply.idle(0.5)


def _deep_chunk(reply: Reply) -> None:
    reply.start_stream()
    reply.event(chunk({"content": "Fine so far"}))
    reply.raw(f'data: {{"choices": [], "extra": {deep_json()}}}\n\n'.encode())
    reply.event(chunk({}, finish="stop"))
    reply.done()


def _deep_completion(reply: Reply) -> None:
    data = f'{{"choices": {deep_json()}}}'.encode()
    reply._head(200, {"Content-Type": "application/json"}, len(data))
    reply._write(data)


def _deep_error(reply: Reply) -> None:
    data = f'{{"error": {deep_json()}}}'.encode()
    reply._head(400, {"Content-Type": "application/json"}, len(data))
    reply._write(data)


Scenario = Callable[[Reply], None]
SCENARIOS: dict[str, Scenario] = {
    "text": _text,
    "tools": _tools,
    "usage_inline": _usage_inline,
    "json_reply": _json_reply,
    "bad_request": _bad_request,
    "unauthorized": _unauthorized,
    "rate_limited": _rate_limited,
    "rate_limited_date": _rate_limited_date,
    "rate_limited_forever": _rate_limited_forever,
    "rate_limited_long": _rate_limited_long,
    "server_error": _server_error,
    "unavailable": _unavailable,
    "slow": _slow,
    "stall": _stall,
    "slow_stream": _slow_stream,
    "cut": _cut,
    "late_done": _late_done,
    "hang_after_finish": _hang_after_finish,
    "burst": _burst,
    "no_finish": _no_finish,
    "malformed": _malformed,
    "error_in_stream": _error_in_stream,
    "unknown_tool": _unknown_tool,
    "bad_arguments": _bad_arguments,
    "huge_stream": _huge_stream,
    "huge_tool_call": _huge_tool_call,
    "huge_completion": _huge_completion,
    "keepalive_forever": _keepalive_forever,
    "deep_chunk": _deep_chunk,
    "deep_completion": _deep_completion,
    "deep_error": _deep_error,
}


# -- the server -------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: OpenAIDouble

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read server.requests instead

    def send_cors_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Expose-Headers", "Retry-After, Retry-After-Ms")

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def finish(self) -> None:
        super().finish()
        with self.server.lock:
            self.server.closed_connections += 1

    def do_OPTIONS(self) -> None:
        self.server.preflights += 1
        asked = self.headers.get("Access-Control-Request-Headers", "authorization, content-type")
        self.send_response(204)
        self.send_cors_headers()
        self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", asked)
        self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        """``/v1/models``, as a client checks a server before using it (not recorded): the
        model list, or the 401 of the `unauthorized` scenario."""
        self.close_connection = True
        match = _MODELS.match(self.path.split("?")[0])
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = Reply(self, RecordedRequest("models", "", 1, self.path, headers, None))
        if match is None:
            reply.error(404, f"nothing at {self.path}", code="not_found")
        elif match["name"] == "unauthorized":
            _unauthorized(reply)
        else:
            reply.json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    def do_POST(self) -> None:
        self.close_connection = not self.server.keep_alive
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        match = _PATH.match(self.path.split("?")[0])
        name = (match and match["name"]) or "text"
        script = self.server.scenarios.get(name) if match else None
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = self.server.record(
            name,
            (match and match["tag"]) or "",
            self.path,
            {k.lower(): v for k, v in self.headers.items()},
            body,
        )
        reply = Reply(self, request)
        try:
            if script is None:
                reply.error(404, f"no scenario at {self.path}", code="not_found")
            else:
                script(reply)
        except _ClientGone:
            request.disconnected = True
        finally:
            self.server.finish(request)


class OpenAIDouble(http.server.ThreadingHTTPServer):
    """The double: serves scenarios, records requests. Use `serve_openai_double`."""

    daemon_threads = True

    def __init__(self, scenarios: dict[str, Scenario], *, keep_alive: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.scenarios = scenarios
        self.keep_alive = keep_alive
        self.requests: list[RecordedRequest] = []
        self.preflights = 0
        self.connections = 0
        """Connections accepted so far."""
        self.closed_connections = 0
        """Connections over (the client closed them, or the double did after a response)."""
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._changed = threading.Condition()
        self._attempts: dict[tuple[str, str], int] = {}

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def url_for(self, scenario: str, tag: str = "") -> str:
        """The ``/v1`` base URL that plays ``scenario`` (attempts counted per ``tag``)."""
        return f"{self.url}/scenario/{scenario}{'/' + tag if tag else ''}/v1"

    def record(
        self, scenario: str, tag: str, path: str, headers: dict[str, str], body: Any
    ) -> RecordedRequest:
        with self._changed:
            attempt = self._attempts.get((scenario, tag), 0) + 1
            self._attempts[(scenario, tag)] = attempt
            request = RecordedRequest(scenario, tag, attempt, path, headers, body)
            self.requests.append(request)
            self._changed.notify_all()
            return request

    def finish(self, request: RecordedRequest) -> None:
        with self._changed:
            request.done = True
            self._changed.notify_all()

    def requests_for(self, scenario: str, tag: str = "") -> list[RecordedRequest]:
        """Every request that played ``scenario`` with ``tag``, in arrival order."""
        with self._changed:
            return [r for r in self.requests if (r.scenario, r.tag) == (scenario, tag)]

    def wait_until_done(self, scenario: str, tag: str = "", timeout_s: float = 10.0) -> bool:
        """Wait until every request of ``scenario`` (at least one) is done with; whether it
        happened in time. A scenario that streams for a minute ends early only if the client
        goes away."""

        def all_done() -> bool:
            found = [r for r in self.requests if (r.scenario, r.tag) == (scenario, tag)]
            return bool(found) and all(r.done for r in found)

        with self._changed:
            return self._changed.wait_for(all_done, timeout_s)

    def close(self) -> None:
        """Stop serving; scenarios still waiting give up at once."""
        self.stopping.set()
        self.shutdown()
        self.server_close()


def serve_openai_double(
    scenarios: dict[str, Scenario] | None = None, *, keep_alive: bool = False
) -> tuple[OpenAIDouble, str]:
    """Start the double on a free port of 127.0.0.1 in a background thread, with the
    built-in `SCENARIOS` and ``scenarios`` (which win); returns it and its root URL."""
    server = OpenAIDouble({**SCENARIOS, **(scenarios or {})}, keep_alive=keep_alive)
    # A short poll keeps close() (which waits for the loop to notice) quick.
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, server.url


@contextlib.contextmanager
def running_double(
    scenarios: dict[str, Scenario] | None = None, *, keep_alive: bool = False
) -> Iterator[OpenAIDouble]:
    """`serve_openai_double` for a ``with`` block, closed at its end."""
    server, _ = serve_openai_double(scenarios, keep_alive=keep_alive)
    try:
        yield server
    finally:
        server.close()


def main() -> None:
    server, url = serve_openai_double()
    print(f"OpenAI double on {url} (scenarios under {url}/scenario/<name>/v1)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.close()


if __name__ == "__main__":
    main()
