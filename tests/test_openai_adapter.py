"""The OpenAI-compatible provider adapter.

The pure protocol (request body, SSE and chunk decoding, error mapping, retry delays,
credential masking) is tested everywhere, Pyodide included. `OpenAIProvider` on httpx is
tested (CPython only: it needs sockets) against tools/openai_double.py, a real HTTP server
that misbehaves on purpose; the Pyodide fetch transport meets the same server in
e2e/test_openai_fetch.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrun import ConfigError
from agrun.adapters.openai import (
    OpenAIProvider,
    ReplyDecoder,
    RetryPolicy,
    Scrubber,
    SseDecoder,
    SseEvent,
    TransportRefused,
    completion_events,
    encode_body,
    request_body,
    retry_after_s,
)
from agrun.adapters.openai._failures import (
    error_message,
    http_failure,
    is_retryable,
    stream_failure,
)
from agrun.chat import (
    ChatMessage,
    Finish,
    ModelReply,
    ModelRequest,
    ProviderError,
    ProviderHttpError,
    ProviderProtocolError,
    ProviderRateLimited,
    ProviderStreamCut,
    ProviderTimeout,
    ProviderUnavailable,
    ReplyBuilder,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)
from agrun.ports import Provider
from agrun.sensitive import MASK

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-test-Zq8Wm3Kp7Rt2Yx9Lb4Nc6Vd1"

WEATHER = ToolSpec(
    name="get_weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
CONVERSATION = (
    ChatMessage(role="system", content="Be brief."),
    ChatMessage(role="user", content="Weather in Paris?"),
    ChatMessage(
        role="assistant",
        tool_calls=(ToolCallRequest(id="c1", name="get_weather", arguments='{"city":"Paris"}'),),
    ),
    ChatMessage(role="tool", content='{"temp": 21}', tool_call_id="c1", name="get_weather"),
)


def fold(events: list[StreamEvent]) -> ModelReply:
    builder = ReplyBuilder()
    for event in events:
        builder.add(event)
    return builder.reply()


def sse(*payloads: Any) -> bytes:
    """An SSE body with one event per payload (JSON-encoded unless already text)."""
    return b"".join(
        f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n".encode() for p in payloads
    )


def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> Any:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"object": "chat.completion.chunk", "choices": choices, "usage": usage}


def call(index: int, arguments: str, id: str | None = None, name: str | None = None) -> Any:
    function: dict[str, Any] = {"arguments": arguments}
    if name:
        function["name"] = name
    return {"index": index, "id": id, "function": function}


def decode(
    body: bytes, cuts: list[int] | None = None, scrub: Scrubber | None = None
) -> list[StreamEvent]:
    """The events of ``body`` fed in pieces split at ``cuts``."""
    decoder = ReplyDecoder(scrub)
    events: list[StreamEvent] = []
    bounds = [0, *sorted(set(cuts or [])), len(body)]
    for start, end in itertools.pairwise(bounds):
        events += decoder.feed(body[start:end])
    return events + decoder.end()


# A stream with everything at once: multi-byte text, two interleaved tool calls, a comment,
# CRLF line ends, a finish reason, then usage in a chunk with no choices, then [DONE].
FULL_STREAM = b": keep-alive\r\n\r\n" + sse(
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Héllo, wörld — ☃ "}),
    chunk({"tool_calls": [call(0, "", id="call_a", name="get_weather")]}),
    chunk({"tool_calls": [call(1, '{"tz"', id="call_b", name="get_time")]}),
    chunk({"tool_calls": [call(0, '{"city": ')]}),
    chunk({"tool_calls": [call(1, ': "UTC"}')]}),
    chunk({"tool_calls": [call(0, '"Paris"}')]}),
    chunk({}, finish="tool_calls"),
    chunk(None, usage={"prompt_tokens": 31, "completion_tokens": 17, "total_tokens": 48}),
    "[DONE]",
).replace(b"\n", b"\r\n")


# -- the request body ----------------------------------------------------------------------


def test_body_carries_every_option_in_openai_form() -> None:
    request = ModelRequest(
        messages=CONVERSATION,
        tools=(WEATHER,),
        tool_choice="required",
        response_format={"type": "json_object"},
        stop=("\n\n", "END"),
        max_tokens=64,
        temperature=0.2,
    )
    body = request_body(request, model="default-model")
    assert body == {
        "model": "default-model",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            {"role": "tool", "content": '{"temp": 21}', "tool_call_id": "c1"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "The weather in a city.",
                    "parameters": WEATHER.parameters,
                },
            }
        ],
        "tool_choice": "required",
        "response_format": {"type": "json_object"},
        "stop": ["\n\n", "END"],
        "max_tokens": 64,
        "temperature": 0.2,
    }
    assert json.loads(encode_body(body)) == body


def test_body_leaves_out_what_is_unset_and_the_request_model_wins() -> None:
    bare = request_body(ModelRequest(messages=CONVERSATION[1:2], tool_choice="none"))
    assert bare == {
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }  # no model at all (llama-server), and no tool_choice without tools
    named = ModelRequest(messages=CONVERSATION[1:2], model="asked-for")
    assert request_body(named, model="default")["model"] == "asked-for"


def test_assistant_text_beside_tool_calls_is_kept() -> None:
    message = ChatMessage(
        role="assistant", content="Let me look.", tool_calls=CONVERSATION[2].tool_calls
    )
    (wire,) = request_body(ModelRequest(messages=(message,)))["messages"]
    assert wire["content"] == "Let me look."
    assert wire["tool_calls"][0]["function"]["name"] == "get_weather"


def test_a_body_json_cannot_carry_is_a_config_error() -> None:
    request = ModelRequest(messages=CONVERSATION[:1], response_format={"x": float("nan")})
    with pytest.raises(ConfigError, match="JSON"):
        encode_body(request_body(request))


# -- SSE -----------------------------------------------------------------------------------


def test_sse_follows_the_line_rules() -> None:
    decoder = SseDecoder()
    body = (
        b"\xef\xbb\xbfdata: one\r\n\r\n"  # BOM, CRLF
        b": a comment\n"
        b"event: error\ndata:two\ndata:  lines\n\n"  # no space; one of two spaces dropped
        b"data: three\r\r"  # CR alone
        b"id: 7\nretry: 100\n\n"  # no data: nothing dispatched
        b"data: four"  # unfinished line at the end
    )
    assert decoder.feed(body) == [
        SseEvent("one"),
        SseEvent("two\n lines", "error"),
        SseEvent("three"),
    ]
    assert decoder.close() == []


def test_sse_gives_an_event_whose_blank_line_never_came() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: last\n") == []
    assert decoder.close() == [SseEvent("last")]


def test_sse_refuses_an_endless_line() -> None:
    decoder = SseDecoder(max_line_bytes=64)
    with pytest.raises(ProviderProtocolError, match="longer than 64 bytes"):
        decoder.feed(b"data: " + b"x" * 100)


one_line = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"))
sse_lines = st.lists(
    st.one_of(
        st.builds(lambda t: f"data: {t}", one_line),
        st.builds(lambda t: f":{t}", one_line),
        st.sampled_from(["", "", "event: error", "data", "id: 1"]),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(sse_lines, st.data())
def test_sse_events_do_not_depend_on_chunk_boundaries(lines: list[str], data: Any) -> None:
    ends = data.draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(lines)))
    body = "".join(line + end for line, end in zip(lines, ends, strict=False)).encode()
    cuts = sorted(data.draw(st.sets(st.integers(0, len(body)), max_size=8)))
    whole = SseDecoder()
    expected = whole.feed(body) + whole.close()
    pieces = SseDecoder()
    got: list[SseEvent] = []
    for start, end in zip([0, *cuts], [*cuts, len(body)], strict=False):
        got += pieces.feed(body[start:end])
    assert got + pieces.close() == expected


# -- chunks into events --------------------------------------------------------------------


def test_a_full_stream_becomes_events_and_a_reply() -> None:
    events = decode(FULL_STREAM)
    assert events[0] == TextDelta(text="Héllo, wörld — ☃ ")
    assert events[1] == ToolCallDelta(index=0, id="call_a", name="get_weather")
    assert events[-1] == Finish(
        reason="tool_calls", usage=Usage(prompt_tokens=31, completion_tokens=17)
    )
    reply = fold(events)
    assert reply.text == "Héllo, wörld — ☃ "
    assert reply.tool_calls == (
        ToolCallRequest(id="call_a", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCallRequest(id="call_b", name="get_time", arguments='{"tz": "UTC"}'),
    )
    assert reply.finish_reason == "tool_calls"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sets(st.integers(0, len(FULL_STREAM)), max_size=30))
def test_any_split_of_the_bytes_gives_the_same_events(cuts: set[int]) -> None:
    assert decode(FULL_STREAM, sorted(cuts)) == decode(FULL_STREAM)


def test_every_single_byte_split_gives_the_same_events() -> None:
    assert decode(FULL_STREAM, list(range(len(FULL_STREAM)))) == decode(FULL_STREAM)


def test_finish_waits_for_the_usage_that_follows_it() -> None:
    decoder = ReplyDecoder()
    first = decoder.feed(sse(chunk({"content": "Hi"}, finish="stop")))
    assert first == [TextDelta(text="Hi")]  # finish reason known, usage not yet
    last = decoder.feed(sse(chunk(None, usage={"prompt_tokens": 2, "completion_tokens": 1})))
    assert last == [Finish(reason="stop", usage=Usage(prompt_tokens=2, completion_tokens=1))]
    assert decoder.finished
    assert decoder.feed(sse(chunk({"content": "ignored"}), "[DONE]")) == []
    assert decoder.end() == []


def test_usage_on_the_finish_chunk_finishes_at_once() -> None:
    usage = {"prompt_tokens": 5, "completion_tokens": 2}
    events = decode(sse(chunk({"content": "ok"}, finish="length", usage=usage)))
    assert events[-1] == Finish(reason="length", usage=Usage(prompt_tokens=5, completion_tokens=2))


def test_done_finishes_without_usage_and_so_does_the_end_of_the_body() -> None:
    with_done = decode(sse(chunk({"content": "a"}, finish="stop"), "[DONE]"))
    assert with_done[-1] == Finish(reason="stop")
    without = decode(sse(chunk({"content": "a"}, finish="stop")))
    assert without[-1] == Finish(reason="stop")


def test_unusable_usage_is_ignored_not_fatal() -> None:
    events = decode(sse(chunk({}, finish="stop", usage={"prompt_tokens": -1}), "[DONE]"))
    assert events == [Finish(reason="stop")]


@pytest.mark.parametrize(
    ("given", "expected"),
    [("stop", "stop"), ("length", "length"), ("function_call", "tool_calls"),
     ("content_filter", "content_filter"), ("something_new", "other")],
)  # fmt: skip
def test_finish_reasons_map_onto_the_port(given: str, expected: str) -> None:
    assert decode(sse(chunk({}, finish=given), "[DONE]")) == [Finish(reason=expected)]  # type: ignore[arg-type]


def test_other_choices_are_ignored_and_a_missing_index_is_the_position() -> None:
    body = sse(
        {"choices": [{"index": 1, "delta": {"content": "other"}}]},
        {"choices": [{"delta": {"tool_calls": [
            {"id": "x", "function": {"name": "a", "arguments": {"k": 1}}},
            {"id": "y", "function": {"name": "b", "arguments": "{}"}},
        ]}, "finish_reason": "tool_calls"}]},
        "[DONE]",
    )  # fmt: skip
    reply = fold(decode(body))
    assert reply.text == ""
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("x", "a", {"k": 1}),
        ("y", "b", {}),
    ]


def test_a_stream_that_ends_unfinished_is_cut_with_its_text() -> None:
    with pytest.raises(ProviderStreamCut) as cut:
        decode(sse(chunk({"content": "Once "}), chunk({"content": "upon"})))
    assert cut.value.partial_text == "Once upon"
    with pytest.raises(ProviderStreamCut) as done_early:
        decode(sse(chunk({"content": "Almost"}), "[DONE]"))
    assert done_early.value.partial_text == "Almost"


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ('{"choices": [', "not JSON"),
        ("[1, 2]", "list, not an object"),
        ('{"choices": {}}', "choices that is not a list"),
        ('{"choices": [{"delta": "text"}]}', "delta that is not an object"),
        ('{"choices": [{"delta": {"tool_calls": [{"index": -1}]}}]}', "index -1"),
        ('{"choices": [{"delta": {"tool_calls": [{"index": true}]}}]}', "index True"),
    ],
)
def test_malformed_chunks_are_protocol_errors(payload: str, match: str) -> None:
    with pytest.raises(ProviderProtocolError, match=match):
        decode(sse(chunk({"content": "fine"}), payload))


def test_an_error_object_in_the_stream_is_typed_by_its_code() -> None:
    with pytest.raises(ProviderUnavailable, match="the model crashed"):
        decode(sse({"error": {"message": "the model crashed", "code": 500}}))
    with pytest.raises(ProviderHttpError) as refused:
        decode(sse({"error": {"message": "context too long", "code": 400}}))
    assert refused.value.status == 400
    with pytest.raises(ProviderRateLimited):
        decode(sse({"error": {"message": "slow down", "code": 429}}))
    assert isinstance(stream_failure("plain words", scrub=Scrubber()), ProviderUnavailable)


def test_a_whole_json_completion_becomes_the_same_kind_of_events() -> None:
    completion = {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hi",
                    "tool_calls": [
                        {"id": "c", "type": "function",
                         "function": {"name": "f", "arguments": "{}"}},
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }  # fmt: skip
    events = completion_events(json.dumps(completion).encode())
    assert events == [
        TextDelta(text="Hi"),
        ToolCallDelta(index=0, id="c", name="f", arguments="{}"),
        Finish(reason="tool_calls", usage=Usage(prompt_tokens=3, completion_tokens=4)),
    ]
    with pytest.raises(ProviderProtocolError, match="no choice"):
        completion_events(b'{"choices": []}')


# -- credentials ---------------------------------------------------------------------------


def test_the_key_is_masked_in_text_even_split_across_events() -> None:
    text_pieces = ["Your key is ", KEY[:7], KEY[7:20], KEY[20:] + " ok"]
    body = sse(*(chunk({"content": p}) for p in text_pieces), chunk({}, finish="stop"), "[DONE]")
    events = decode(body, scrub=Scrubber([KEY]))
    assert all(KEY[:10] not in e.model_dump_json() for e in events)
    assert fold(events).text == f"Your key is {MASK} ok"


def test_the_key_is_masked_in_tool_arguments_and_a_cut_stream() -> None:
    arguments = json.dumps({"token": KEY})
    body = sse(
        chunk({"tool_calls": [call(0, arguments[:15], id="c", name="f")]}),
        chunk({"tool_calls": [call(0, arguments[15:])]}),
        chunk({}, finish="tool_calls"),
        "[DONE]",
    )
    reply = fold(decode(body, scrub=Scrubber([KEY])))
    assert json.loads(reply.tool_calls[0].arguments) == {"token": MASK}
    with pytest.raises(ProviderStreamCut) as cut:
        decode(sse(chunk({"content": "key: " + KEY[:-1]})), scrub=Scrubber([KEY]))
    assert KEY[:-1] not in cut.value.partial_text


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", " ", KEY[:3], KEY[3:12], KEY[12:], KEY, "sk"]), max_size=12),
    st.data(),
)
def test_masking_pieces_equals_masking_the_whole(parts: list[str], data: Any) -> None:
    text = "".join(parts) + "."  # ends in something that starts no key
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=6)))
    masker = Scrubber([KEY]).stream()
    out = "".join(
        masker.feed(text[a:b]) for a, b in zip([0, *cuts], [*cuts, len(text)], strict=False)
    )
    assert out + masker.flush() == text.replace(KEY, MASK)


def test_error_messages_lose_the_key_and_secret_shapes() -> None:
    scrub = Scrubber([KEY, "custom-credential-123"])
    body = json.dumps(
        {"error": {"message": f"bad key {KEY}; also custom-credential-123 and "
                   "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}
    ).encode()  # fmt: skip
    error = http_failure(401, body, attempts=1, retry_after=None, scrub=scrub)
    assert isinstance(error, ProviderHttpError) and error.status == 401
    assert KEY not in str(error)
    assert "custom-credential-123" not in str(error)
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in str(error)
    assert "bad key" in str(error)


# -- HTTP failures and retries -------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, ProviderHttpError),
        (401, ProviderHttpError),
        (404, ProviderHttpError),
        (408, ProviderTimeout),
        (429, ProviderRateLimited),
        (500, ProviderUnavailable),
        (503, ProviderUnavailable),
    ],
)
def test_statuses_map_to_typed_errors(status: int, kind: type[ProviderError]) -> None:
    body = b'{"error": {"message": "words of the provider", "type": "x"}}'
    error = http_failure(status, body, attempts=3, retry_after=1.5, scrub=Scrubber())
    assert type(error) is kind
    assert "words of the provider (x)" in str(error)
    assert is_retryable(status) == (kind is not ProviderHttpError)
    if isinstance(error, ProviderRateLimited):
        assert error.retry_after_s == 1.5
        assert "3 attempts" in str(error)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"error": {"message": "m", "code": "c"}}', "m (c)"),
        (b'{"error": "ollama says no"}', "ollama says no"),
        (b'{"detail": "fastapi says no"}', "fastapi says no"),
        (
            b"<html>\n  <body>Bad   Gateway</body>\n</html>",
            "<html> <body>Bad Gateway</body> </html>",
        ),
        (b"", "(no message)"),
        (b"x" * 900, "x" * 500 + "…"),
    ],
)
def test_error_message_takes_the_providers_own_words(body: bytes, message: str) -> None:
    assert error_message(body) == message


def test_retry_delays_grow_exponentially_to_a_cap_and_stop() -> None:
    policy = RetryPolicy(max_retries=6, initial_delay_s=0.5, max_delay_s=4.0)
    delays = [policy.delay_s(n) for n in range(1, 8)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0, None]
    assert RetryPolicy(max_retries=0).delay_s(1) is None


def test_retry_after_is_honoured_up_to_its_own_cap() -> None:
    policy = RetryPolicy(max_retries=3, max_retry_after_s=60)
    assert policy.delay_s(1, retry_after=7.0) == 7.0
    assert policy.delay_s(1, retry_after=0.0) == 0.0
    assert policy.delay_s(1, retry_after=61.0) is None  # longer than we would wait: give up
    assert policy.delay_s(4, retry_after=1.0) is None


def test_retry_after_reads_seconds_milliseconds_and_http_dates() -> None:
    now = 1_700_000_000.0  # 2023-11-14T22:13:20Z
    assert retry_after_s({"retry-after": "12"}, now_s=now) == 12.0
    assert retry_after_s({"retry-after": " 1.5 "}, now_s=now) == 1.5
    assert retry_after_s({"retry-after-ms": "250", "retry-after": "9"}, now_s=now) == 0.25
    assert retry_after_s({"retry-after": "Tue, 14 Nov 2023 22:13:50 GMT"}, now_s=now) == 30.0
    assert retry_after_s({"retry-after": "Tuesday, 14-Nov-23 22:13:25 GMT"}, now_s=now) == 5.0
    assert retry_after_s({"retry-after": "Tue, 14 Nov 2023 22:00:00 GMT"}, now_s=now) == 0.0
    for bad in ("soon", "-3", "nan", "inf", ""):
        assert retry_after_s({"retry-after": bad}, now_s=now) is None
    assert retry_after_s({}, now_s=now) is None


# -- the provider object -------------------------------------------------------------------


class _NoTransport:
    def post(self, url: str, body: bytes, headers: Any) -> Any:
        raise AssertionError("not called")


def test_the_provider_keeps_its_key_out_of_its_repr_and_checks_options() -> None:
    provider = OpenAIProvider("http://h/v1/", "m", KEY, transport=_NoTransport())
    assert isinstance(provider, Provider)
    assert provider.url == "http://h/v1/chat/completions"
    assert KEY not in repr(provider) and "api_key=<set>" in repr(provider)
    assert "api_key=None" in repr(OpenAIProvider("http://h/v1", transport=_NoTransport()))
    bad_options = (
        {"base_url": "h/v1"},
        {"timeout_s": 0},
        {"idle_timeout_s": 0},
        {"max_retries": -1},
    )
    for bad in bad_options:
        options: dict[str, Any] = {"base_url": "http://h/v1", **bad}
        with pytest.raises(ConfigError):
            OpenAIProvider(transport=_NoTransport(), **options)


# -- OpenAIProvider on httpx against a real misbehaving server (CPython) -------------------


class Sleeps(list[float]):
    """Records the delays the provider asks for, and waits none of them."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)
        await asyncio.sleep(0)


def provider_for(double: Any, scenario: str, **options: Any) -> OpenAIProvider:
    from agrun.adapters.openai import HttpxTransport

    options.setdefault("transport", HttpxTransport())
    options.setdefault("sleep", Sleeps())
    options.setdefault("timeout_s", 10.0)
    return OpenAIProvider(double.url_for(scenario), "double-1", KEY, **options)


REQUEST = ModelRequest(messages=CONVERSATION[:2], tools=(WEATHER,), max_tokens=50)


async def collect(provider: OpenAIProvider, request: ModelRequest = REQUEST) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


async def failure(provider: OpenAIProvider) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await collect(provider)
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    return caught.value


@pytest.mark.cpython_only
async def test_streamed_text_arrives_in_pieces_with_usage(double: Any) -> None:
    events = await collect(provider_for(double, "text"))
    assert events == [
        TextDelta(text="Hello"),
        TextDelta(text=", "),
        TextDelta(text="world"),
        TextDelta(text="!"),
        Finish(reason="stop", usage=Usage(prompt_tokens=11, completion_tokens=7)),
    ]
    (seen,) = double.requests_for("text")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["content-type"] == "application/json"
    assert seen.body == request_body(REQUEST, model="double-1")


@pytest.mark.cpython_only
async def test_two_parallel_tool_calls_assemble(double: Any) -> None:
    reply = fold(await collect(provider_for(double, "tools")))
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("call_w", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ("call_t", "get_time", {"timezone": "Europe/Paris"}),
    ]
    assert reply.finish_reason == "tool_calls"
    assert reply.usage == Usage(prompt_tokens=40, completion_tokens=22)


@pytest.mark.cpython_only
async def test_usage_on_the_finish_chunk_and_a_json_reply(double: Any) -> None:
    inline = fold(await collect(provider_for(double, "usage_inline")))
    assert (inline.text, inline.usage) == ("Counted.", Usage(prompt_tokens=5, completion_tokens=2))
    whole = fold(await collect(provider_for(double, "json_reply")))
    assert (whole.text, whole.finish_reason) == ("Hello, world!", "stop")
    assert whole.usage == Usage(prompt_tokens=11, completion_tokens=7)


@pytest.mark.cpython_only
async def test_a_bad_request_fails_at_once_with_the_providers_message(double: Any) -> None:
    sleeps = Sleeps()
    error = await failure(provider_for(double, "bad_request", sleep=sleeps))
    assert isinstance(error, ProviderHttpError) and error.status == 400
    assert "'messages' must contain at least one message" in str(error)
    assert len(double.requests_for("bad_request")) == 1 and sleeps == []


@pytest.mark.cpython_only
async def test_a_refused_key_is_not_echoed_back(double: Any) -> None:
    error = await failure(provider_for(double, "unauthorized"))
    assert isinstance(error, ProviderHttpError) and error.status == 401
    assert "Incorrect API key provided: [REDACTED]" in str(error)


@pytest.mark.cpython_only
async def test_429_waits_as_long_as_retry_after_says_then_succeeds(double: Any) -> None:
    sleeps = Sleeps()
    reply = fold(await collect(provider_for(double, "rate_limited", sleep=sleeps)))
    assert reply.text == "Hello, world!"
    assert sleeps == [2.0]
    assert [r.attempt for r in double.requests_for("rate_limited")] == [1, 2]


@pytest.mark.cpython_only
async def test_429_with_an_http_date_waits_until_that_date(double: Any) -> None:
    sleeps = Sleeps()
    # The whole-call deadline counts the waits: it must leave room for this one.
    await collect(provider_for(double, "rate_limited_date", sleep=sleeps, timeout_s=60.0))
    (delay,) = sleeps
    assert 20 < delay <= 31  # the double asked for 30 s from its own clock
    assert len(double.requests_for("rate_limited_date")) == 2


@pytest.mark.cpython_only
async def test_429_forever_gives_up_after_the_bounded_retries(double: Any) -> None:
    sleeps = Sleeps()
    error = await failure(provider_for(double, "rate_limited_forever", sleep=sleeps, max_retries=2))
    assert isinstance(error, ProviderRateLimited) and error.retry_after_s == 1.0
    assert sleeps == [1.0, 1.0]
    assert len(double.requests_for("rate_limited_forever")) == 3


@pytest.mark.cpython_only
async def test_a_retry_after_longer_than_the_cap_gives_up_at_once(double: Any) -> None:
    sleeps = Sleeps()
    error = await failure(provider_for(double, "rate_limited_long", sleep=sleeps))
    assert isinstance(error, ProviderRateLimited) and error.retry_after_s == 3600.0
    assert sleeps == [] and len(double.requests_for("rate_limited_long")) == 1


@pytest.mark.cpython_only
async def test_5xx_is_retried_with_backoff_then_succeeds(double: Any) -> None:
    sleeps = Sleeps()
    reply = fold(await collect(provider_for(double, "server_error", sleep=sleeps)))
    assert reply.text == "Hello, world!"
    assert sleeps == [0.5, 1.0]
    assert len(double.requests_for("server_error")) == 3


@pytest.mark.cpython_only
async def test_503_forever_is_unavailable_after_the_bounded_retries(double: Any) -> None:
    sleeps = Sleeps()
    error = await failure(provider_for(double, "unavailable", sleep=sleeps, max_retries=3))
    assert isinstance(error, ProviderUnavailable)
    assert "HTTP 503" in str(error) and "4 attempts" in str(error)
    assert sleeps == [0.5, 1.0, 2.0]
    assert len(double.requests_for("unavailable")) == 4


@pytest.mark.cpython_only
async def test_no_server_at_all_is_unavailable_after_the_bounded_retries(double: Any) -> None:
    url = double.url
    double.close()  # nothing listens on its port any more
    sleeps = Sleeps()
    from agrun.adapters.openai import HttpxTransport

    provider = OpenAIProvider(f"{url}/v1", api_key=KEY, transport=HttpxTransport(), sleep=sleeps)
    error = await failure(provider)
    assert isinstance(error, ProviderUnavailable)
    assert f"could not reach the model provider at {url}/v1/chat/completions" in str(error)
    assert len(sleeps) == 3


class _RefusingTransport:
    """What FetchTransport raises when the page's Content Security Policy refuses the URL."""

    def __init__(self) -> None:
        self.posts = 0

    async def post(self, url: str, body: bytes, headers: Any) -> Any:
        self.posts += 1
        raise TransportRefused("PolicyRefusal: the page's Content Security Policy refuses it")
        yield  # a generator, as a transport is


async def test_a_request_the_page_refuses_is_not_retried() -> None:
    sleeps = Sleeps()
    transport = _RefusingTransport()
    provider = OpenAIProvider("http://h/v1", api_key=KEY, transport=transport, sleep=sleeps)
    error = await failure(provider)
    assert isinstance(error, ProviderUnavailable)
    assert "Content Security Policy" in str(error) and "attempts" not in str(error), str(error)
    assert transport.posts == 1 and sleeps == []


@pytest.mark.cpython_only
async def test_a_server_that_never_answers_times_out_and_is_left(double: Any) -> None:
    sleeps = Sleeps()
    error = await failure(provider_for(double, "slow", timeout_s=0.3, sleep=sleeps))
    assert isinstance(error, ProviderTimeout)
    assert double.wait_until_done("slow")
    (seen,) = double.requests_for("slow")  # a timeout is not retried
    assert seen.disconnected and sleeps == []


@pytest.mark.cpython_only
async def test_a_stream_that_stalls_times_out_after_what_arrived(double: Any) -> None:
    events: list[StreamEvent] = []
    provider = provider_for(double, "stall", idle_timeout_s=0.3)
    with pytest.raises(ProviderTimeout, match=r"nothing of the model.s reply came for 0\.3 s"):
        async for event in provider.stream(REQUEST):
            events.append(event)
    assert events == [TextDelta(text="Thinking")]
    assert double.wait_until_done("stall")
    assert double.requests_for("stall")[0].disconnected


@pytest.mark.cpython_only
async def test_a_cut_stream_keeps_its_partial_text_and_is_not_retried(double: Any) -> None:
    error = await failure(provider_for(double, "cut"))
    assert isinstance(error, ProviderStreamCut)
    assert error.partial_text == "Once upon a time"
    assert len(double.requests_for("cut")) == 1
    no_finish = await failure(provider_for(double, "no_finish"))
    assert isinstance(no_finish, ProviderStreamCut) and no_finish.partial_text == "Almost"


@pytest.mark.cpython_only
async def test_malformed_json_and_an_error_mid_stream_are_typed(double: Any) -> None:
    assert isinstance(await failure(provider_for(double, "malformed")), ProviderProtocolError)
    mid = await failure(provider_for(double, "error_in_stream"))
    assert isinstance(mid, ProviderUnavailable) and "the model crashed" in str(mid)


@pytest.mark.cpython_only
async def test_unknown_tools_and_bad_arguments_pass_through_for_the_runtime_to_judge(
    double: Any,
) -> None:
    unknown = fold(await collect(provider_for(double, "unknown_tool")))
    assert unknown.tool_calls == (
        ToolCallRequest(id="call_x", name="launch_rockets", arguments='{"target": "moon"}'),
    )
    bad = fold(await collect(provider_for(double, "bad_arguments")))
    assert bad.tool_calls[0].arguments == '{"city": "Par'


@pytest.mark.cpython_only
async def test_cancelling_the_task_closes_the_connection(double: Any) -> None:
    first = asyncio.Event()

    async def consume() -> None:
        async for _event in provider_for(double, "slow_stream").stream(REQUEST):
            first.set()

    task = asyncio.create_task(consume())
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert double.wait_until_done("slow_stream")  # it streams for a minute unless left
    assert double.requests_for("slow_stream")[0].disconnected


@pytest.mark.cpython_only
async def test_closing_the_iterator_closes_the_connection(double: Any) -> None:
    stream = provider_for(double, "slow_stream").stream(REQUEST)
    async with contextlib.aclosing(stream):  # type: ignore[type-var]
        async for event in stream:
            assert isinstance(event, TextDelta)
            break
    assert double.wait_until_done("slow_stream")
    assert double.requests_for("slow_stream")[0].disconnected


@pytest.mark.cpython_only
async def test_presets_reach_their_servers_with_the_environments_transport(double: Any) -> None:
    from agrun.adapters.openai import HttpxTransport, hosted, llama_server, ollama

    assert llama_server().url == "http://127.0.0.1:8080/v1/chat/completions"
    local = ollama(model="qwen3:0.6b")
    assert (local.url, local.model) == ("http://127.0.0.1:11434/v1/chat/completions", "qwen3:0.6b")
    provider = hosted(double.url_for("text"), "gpt-test", KEY)
    assert isinstance(provider._transport, HttpxTransport)
    assert fold(await collect(provider)).text == "Hello, world!"
    (seen,) = double.requests_for("text")
    assert (seen.body["model"], seen.headers["authorization"]) == ("gpt-test", f"Bearer {KEY}")
    via_llama = llama_server(double.url + "/scenario/text/again", model=None)
    assert fold(await collect(via_llama)).text == "Hello, world!"
    assert "model" not in double.requests_for("text", "again")[0].body


@pytest.mark.parametrize("key", ["", "   "])
def test_a_hosted_api_without_a_key_is_refused_up_front(key: str) -> None:
    from agrun import ConfigError
    from agrun.adapters.openai import hosted

    with pytest.raises(ConfigError, match="needs an api_key"):
        hosted("https://api.example.test/v1", "gpt-test", key)


@pytest.mark.cpython_only
async def test_a_retry_wait_past_the_whole_call_deadline_is_not_started(double: Any) -> None:
    sleeps = Sleeps()
    error = await failure(provider_for(double, "rate_limited", sleep=sleeps, timeout_s=1.0))
    # Retry-After: 2 would end after the 1 s deadline: the 429 is the answer, at once.
    assert isinstance(error, ProviderRateLimited) and sleeps == []
    assert len(double.requests_for("rate_limited")) == 1


@pytest.mark.cpython_only
async def test_a_finished_replys_rest_is_read_not_aborted(double: Any) -> None:
    # late_done: [DONE] and the body's end come 0.2 s after the finish and the usage.
    provider = provider_for(double, "late_done")
    events = await collect(provider)
    assert fold(events).text == "Done" and isinstance(events[-1], Finish)
    await provider.wait_closed()
    assert double.wait_until_done("late_done")
    assert not double.requests_for("late_done")[0].disconnected


@pytest.mark.cpython_only
async def test_a_server_that_never_ends_a_finished_reply_is_left_after_the_answer(
    double: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agrun.adapters.openai import _provider

    monkeypatch.setattr(_provider, "_REST_WAIT_S", 0.3)
    provider = provider_for(double, "hang_after_finish")  # silent for 30 s after the usage
    assert fold(await collect(provider)).text == "Done"
    assert len(provider._rests) == 1  # the answer came; the rest is read in the background
    await provider.wait_closed()
    assert double.wait_until_done("hang_after_finish")
    assert double.requests_for("hang_after_finish")[0].disconnected


@pytest.mark.cpython_only
async def test_calls_through_a_shared_client_reuse_its_connection(keep_alive_double: Any) -> None:
    import httpx

    from agrun.adapters.openai import HttpxTransport

    async with httpx.AsyncClient(timeout=None) as client:
        provider = provider_for(keep_alive_double, "text", transport=HttpxTransport(client))
        for _ in range(3):
            assert fold(await collect(provider)).text == "Hello, world!"
            await provider.wait_closed()
    assert len(keep_alive_double.requests_for("text")) == 3
    assert keep_alive_double.connections == 1


@pytest.mark.cpython_only
def test_the_default_transport_keeps_a_connection_per_loop_and_closes_it_at_the_end(
    keep_alive_double: Any,
) -> None:
    from agrun.adapters.openai import HttpxTransport

    async def three_calls() -> list[str]:
        # Two providers, each with a transport of its own: one loop, one pool.
        first = provider_for(keep_alive_double, "text", transport=HttpxTransport())
        second = provider_for(keep_alive_double, "text", transport=HttpxTransport())
        texts = []
        for provider in (first, second, first):
            texts.append(fold(await collect(provider)).text)
            await provider.wait_closed()
        return texts

    assert asyncio.run(three_calls()) == ["Hello, world!"] * 3
    assert keep_alive_double.connections == 1
    # asyncio.run closed the loop's client at its end, and so the connection.
    deadline = time.monotonic() + 10
    while keep_alive_double.closed_connections < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert keep_alive_double.closed_connections == 1
    assert asyncio.run(three_calls()) == ["Hello, world!"] * 3  # a new loop, a new client
    assert keep_alive_double.connections == 2
