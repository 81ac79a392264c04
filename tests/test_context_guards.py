"""The guards a model turn relies on (agrun issue 10, item 10): the current request before
the cursor, injected messages, redaction of every field that reaches the model, the
shared secret catalog, a read-only pack, cancellation, and causation on every event."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import agrun.sensitive
from agrun import AgrunError, ReadOnlyError
from agrun.context import (
    DEFAULT_SECRET_PATTERNS,
    ContextBuildCancelled,
    ContextBuildingFailed,
    ContextEntry,
    ContextPack,
    ContextRequest,
    ContextRequestInvalid,
    Message,
    PatternRedactor,
    build_context,
    build_router_context,
    current_request_index,
)
from agrun.testing import FixedClock
from test_context_properties import histories

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ids(pack: ContextPack, kind: str | None = None) -> list[str]:
    return [e.sources[0] for e in pack.entries() if kind is None or e.kind == kind]


def tool_loop(request: str = "Audit the repo.", rounds: int = 6) -> list[dict[str, Any]]:
    """A person's request, then ``rounds`` tool round trips, then a plain reply."""
    window: list[dict[str, Any]] = [{"id": "req", "role": "user", "content": request}]
    for i in range(rounds):
        call = {"id": f"c{i}", "name": "read", "arguments": {"path": f"src/{i}.py"}}
        window.append({"id": f"a{i}", "role": "assistant", "toolCalls": [call]})
        window.append(
            {"id": f"t{i}", "role": "tool", "toolCallId": f"c{i}", "content": "x = 1\n" * 20}
        )
    window.append({"id": "r", "role": "assistant", "content": "Read them all."})
    return window


# --- 1. The current request is found over the whole log --------------------------------


def test_a_cursor_past_the_request_keeps_it() -> None:
    window = tool_loop()
    pack = build_context({"messages": window, "input": "Audit the repo.", "cursor": 5})
    assert pack.compression_metadata.anchor == "req"
    kept = ids(pack, "message")
    assert kept[0] == "req"  # in conversation order: before everything retrieved
    assert kept[1:] == [m["id"] for m in window[5:]]
    # Messages between the request and the cursor are in memory already: neither kept
    # nor reported as dropped by this build.
    dropped = {d.first for d in pack.compression_metadata.dropped}
    assert not {"a0", "t0", "a1", "t1"} & (set(kept) | dropped)


def test_the_request_before_the_cursor_wins_over_a_later_person_message() -> None:
    window = [
        {"id": "req", "role": "user", "content": "Book the flight."},
        {"id": "r1", "role": "assistant", "content": "Which day?"},
        {"id": "u2", "role": "user", "content": "Friday, by the way."},
    ]
    pack = build_context({"messages": window, "input": "Book the flight.", "cursor": 2})
    assert pack.compression_metadata.anchor == "req"
    assert ids(pack, "message") == ["req", "u2"]


def test_the_request_keeps_its_tool_results_across_the_cursor() -> None:
    # A request unit whose trailing tool messages straddle the cursor: the part inside the
    # window is the request's, not an orphan, and nothing is kept twice.
    window = [
        {"id": "req", "role": "user", "content": "go"},
        {"id": "t0", "role": "tool", "toolCallId": "c0", "content": "early result"},
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "late result"},
        {"id": "r", "role": "assistant", "content": "done"},
    ]
    for cursor in (1, 2, 3, 4):
        pack = build_context({"messages": window, "input": "go", "cursor": cursor})
        kept = ids(pack, "message")
        assert kept[:3] == ["req", "t0", "t1"], cursor
        assert len(kept) == len(set(kept))
        assert not [
            d for d in pack.compression_metadata.dropped if d.reason == "orphan_tool_result"
        ]


def test_an_old_request_is_protected_when_the_budget_is_short() -> None:
    window = tool_loop(rounds=10)
    request = {
        "messages": window,
        "input": "Audit the repo.",
        "cursor": 3,
        "budget": {"limit": 120},
    }
    pack = build_context(request)
    assert ids(pack, "message")[0] == "req"
    assert pack.budget_used <= 120
    over = [d for d in pack.compression_metadata.dropped if d.reason == "over_budget"]
    assert over and over[0].first == "a1"  # the window's start, never the request


def test_a_cursor_past_the_end_still_keeps_the_request() -> None:
    window = tool_loop(rounds=2)
    pack = build_context({"messages": window, "input": "Audit the repo.", "cursor": 99})
    assert ids(pack, "message") == ["req"]
    assert pack.next_cursor == len(window)


def test_a_protected_request_that_does_not_fit_fails_even_before_the_cursor() -> None:
    window = [{"id": "req", "role": "user", "content": "word " * 300}, *tool_loop()[1:]]
    with pytest.raises(ContextBuildingFailed) as caught:
        build_context({"messages": window, "cursor": 4, "budget": {"limit": 60}})
    assert any(item.startswith("message:req=") for item in caught.value.event.items)


def cursor_histories() -> st.SearchStrategy[dict[str, Any]]:
    return histories().flatmap(
        lambda raw: st.integers(0, len(raw["messages"]) + 1).map(lambda c: raw | {"cursor": c})
    )


def build_or_none(raw: dict[str, Any], **kwargs: Any) -> ContextPack | None:
    try:
        return build_context(raw, **kwargs)
    except ContextBuildingFailed:
        return None


@SETTINGS
@given(cursor_histories())
def test_property_the_request_is_kept_whatever_the_cursor(raw: dict[str, Any]) -> None:
    request = ContextRequest.model_validate(raw)
    pack = build_or_none(raw)
    if pack is None:
        return
    index = current_request_index(request.messages, request.input)
    kept = ids(pack, "message")
    assert len(kept) == len(set(kept))
    if index < 0:
        assert pack.compression_metadata.anchor is None
        return
    assert pack.compression_metadata.anchor == request.messages[index].id
    assert request.messages[index].id in kept


def reply_then_a_repeated_call() -> list[dict[str, Any]]:
    """A reply, then the same tool round trip twice: the older one is a duplicate, and
    the reply cannot open the window (no person's turn holds it)."""
    call = {"name": "read", "arguments": {"path": "x"}}
    return [
        {"id": "r", "role": "assistant", "content": "Hello."},
        {"id": "a1", "role": "assistant", "toolCalls": [call | {"id": "c1"}]},
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "x = 1"},
        {"id": "a2", "role": "assistant", "toolCalls": [call | {"id": "c2"}]},
        {"id": "t2", "role": "tool", "toolCallId": "c2", "content": "x = 1"},
    ]


def test_a_duplicate_below_an_orphaned_reply_is_reported_once() -> None:
    # The walk drops the older round trip as a duplicate and takes the reply below it,
    # which is then taken back out of the window's head: the orphan_reply run is the
    # reply alone, not the stretch down to the head across the duplicate.
    raw = {"messages": reply_then_a_repeated_call(), "options": {"recallShare": 0}}
    pack = build_context(raw)
    assert ids(pack, "message") == ["a2", "t2"]
    dropped = [(d.reason, d.first, d.last, d.count) for d in pack.compression_metadata.dropped]
    assert dropped == [("duplicate", "a1", "t1", 2), ("orphan_reply", "r", "r", 1)]


def test_a_duplicate_below_an_orphaned_reply_that_is_recalled_is_reported_once() -> None:
    pack = build_context({"messages": reply_then_a_repeated_call()})
    assert ids(pack, "recalled_turn") == ["r"]
    dropped = [(d.reason, d.first, d.last) for d in pack.compression_metadata.dropped]
    assert dropped == [("duplicate", "a1", "t1")]


@SETTINGS
@given(cursor_histories())
@example(raw={"messages": reply_then_a_repeated_call(), "cursor": 0})
def test_property_every_window_message_is_kept_or_dropped_once(raw: dict[str, Any]) -> None:
    # "dropped" is complete: each retrieved message is either in the pack or in exactly
    # one dropped run, and nothing before the cursor is but the request's own unit.
    request = ContextRequest.model_validate(raw)
    pack = build_or_none(raw)
    if pack is None:
        return
    messages = request.messages
    position = {m.id: i for i, m in enumerate(messages)}
    dropped: list[str] = []
    for run in pack.compression_metadata.dropped:
        if run.kind != "message":
            continue
        first, last = position[run.first], position[run.last]
        assert last - first + 1 == run.count
        dropped += [m.id for m in messages[first : last + 1]]
    # A recalled turn (L2) is in the pack as much as a window message is.
    kept = ids(pack, "message") + ids(pack, "recalled_turn")
    assert not set(kept) & set(dropped)
    assert len(dropped) == len(set(dropped))
    start = min(request.cursor, len(messages))
    window = [m.id for m in messages[start:]]
    assert set(window) <= set(kept) | set(dropped)
    assert set(dropped) <= set(window)
    anchor = current_request_index(messages, request.input)
    early = [i for i in kept if position[i] < start]
    if early:
        assert messages[anchor].id == early[0]
        assert all(messages[position[i]].role == "tool" for i in early[1:])


@SETTINGS
@given(cursor_histories())
def test_property_the_window_opens_on_a_turn_or_a_call(raw: dict[str, Any]) -> None:
    # Issue 18.6b: never [system, assistant reply, ...] while the window holds a message
    # that could open it (a user-role message, or an assistant's tool call).
    pack = build_or_none(raw)
    if pack is None:
        return
    window = [e for e in pack.layers["L0"] if e.kind == "message"]

    def opens(entry: Any) -> bool:
        return entry.role != "assistant" or bool(entry.tool_calls)

    if any(opens(entry) for entry in window):
        assert opens(window[0]), [(e.sources[0], e.role) for e in window[:2]]


@SETTINGS
@given(cursor_histories())
def test_property_builds_with_a_cursor_are_deterministic(raw: dict[str, Any]) -> None:
    first, second = build_or_none(raw), build_or_none(raw)
    assert (first and first.to_json()) == (second and second.to_json())


# --- 2. An injected message names its injector, and only it does -------------------------


def test_injected_without_injected_by_is_refused() -> None:
    with pytest.raises(ValidationError, match="injectedBy"):
        Message(id="m", role="user", content="x", author="injected")


@pytest.mark.parametrize("author", ["person", "nudge", "drop_notice"])
def test_injected_by_on_another_author_is_refused(author: str) -> None:
    with pytest.raises(ValidationError, match='injectedBy is only for author "injected"'):
        Message(id="m", role="user", content="x", author=author, injected_by="rule-7")


def test_a_request_with_half_an_injection_names_the_message() -> None:
    messages = [
        {"id": "m", "role": "user", "content": "x"},
        {"id": "n", "role": "user", "author": "injected", "content": "y"},
    ]
    with pytest.raises(ContextRequestInvalid, match=r"messages\.1: .*injectedBy"):
        build_context({"messages": messages})


def test_a_whole_injection_is_accepted_and_never_the_request() -> None:
    injected = {"id": "n", "role": "user", "author": "injected", "injectedBy": "rule-7"}
    raw = {"messages": [{"id": "m", "role": "user", "content": "x"}, injected | {"content": "x"}]}
    assert build_context(raw | {"input": "x"}).compression_metadata.anchor == "m"


# --- 3. Every text that reaches the model is redacted -------------------------------------

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


class NamedLayer:
    name = "notes"

    def entries(self, request: ContextRequest) -> list[ContextEntry]:
        entry = ContextEntry(
            id="n", layer="notes", kind="extension", content="hi", sources=("n",), tokens=0
        )
        return [entry.model_copy(update={"name": f"note {TOKEN}"})]


def test_names_that_reach_the_model_are_redacted() -> None:
    call = {"id": "c1", "name": f"fetch {TOKEN}", "arguments": {"url": "x"}}
    pack = build_context(
        {
            "messages": [
                {"id": "u", "role": "user", "content": "go"},
                {"id": "a", "role": "assistant", "toolCalls": [call]},
                {
                    "id": "t",
                    "role": "tool",
                    "toolCallId": "c1",
                    "name": f"t {TOKEN}",
                    "content": "ok",
                },
            ],
            "artifacts": [{"id": "v1", "name": f"plan {TOKEN}", "content": "step"}],
            "toolOutputs": [{"id": "o", "tool": f"ls {TOKEN}", "content": "a b"}],
            "events": [{"id": "e", "kind": "Deployed", "text": f"used {TOKEN}"}],
        },
        layers=[NamedLayer()],
    )
    assert TOKEN not in pack.to_json()
    names = {e.sources[0]: e.name for e in pack.entries()}
    assert names["t"] == "t [REDACTED]"
    assert names["v1"] == "plan [REDACTED]"
    assert names["o"] == "ls [REDACTED]"
    assert names["n"] == "note [REDACTED]"
    assistant = next(e for e in pack.entries() if e.sources[0] == "a")
    assert assistant.tool_calls[0].name == "fetch [REDACTED]"
    assert assistant.tool_calls[0].id == "c1"  # ids pair calls with results: kept


FIELDS = (
    "content",
    "tool_name",
    "call_name",
    "call_arguments",
    "artifact_name",
    "artifact_content",
    "output_tool",
    "output_content",
    "event_text",
    "memory",
    "steering",
    "approval",
    "policy",
    "system",
    "direction",
)


def seeded(fields: set[str], secret: str) -> dict[str, Any]:
    """A request with ``secret`` in each of ``fields`` (ids never hold it)."""

    def put(field: str, plain: str) -> str:
        return f"{plain} {secret}" if field in fields else plain

    call = {
        "id": "c1",
        "name": put("call_name", "search"),
        "arguments": {"q": put("call_arguments", "x")},
    }
    return {
        "messages": [
            {"id": "u", "role": "user", "content": put("content", "go")},
            {"id": "a", "role": "assistant", "toolCalls": [call]},
            {
                "id": "t",
                "role": "tool",
                "toolCallId": "c1",
                "name": put("tool_name", "search"),
                "content": "ok",
            },
        ],
        "artifacts": [
            {
                "id": "v",
                "name": put("artifact_name", "plan"),
                "content": put("artifact_content", "s"),
            }
        ],
        "toolOutputs": [
            {"id": "o", "tool": put("output_tool", "ls"), "content": put("output_content", "a")}
        ],
        "events": [{"id": "e", "kind": "Deployed", "text": put("event_text", "done")}],
        "memory": [{"id": "m", "text": put("memory", "fact")}],
        "steering": [{"id": "s", "text": put("steering", "note")}],
        "approvals": [{"id": "p", "action": put("approval", "deploy"), "decision": "ok"}],
        "policies": [{"id": "pol", "text": put("policy", "be safe")}],
        "systemPrompt": put("system", "system"),
        "direction": {"activeGoal": put("direction", "goal")},
        "options": {"layers": ["L0", "L1", "L2"]},
    }


# (what is written, the part of it that must not reach the pack)
SECRETS = (
    (TOKEN, TOKEN),
    ("sk-ant-api03-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"),
    ("AKIAZ4X7Q2M9R8T6W3Y5", "Z4X7Q2M9R8T6W3Y5"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"),
    ("client_secret=8f14e45fceea167a5a36dedd4bea2543", "8f14e45fceea167a5a36dedd4bea2543"),
)


@SETTINGS
@given(st.sets(st.sampled_from(FIELDS), min_size=1), st.sampled_from(SECRETS))
def test_property_no_secret_reaches_any_field_of_the_pack(
    fields: set[str], secret: tuple[str, str]
) -> None:
    written, value = secret
    pack = build_context(seeded(fields, written))
    text = pack.to_json()
    assert value not in text
    assert "[REDACTED]" in text


# --- 4. The default redactor is the shared catalog's ----------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
        # Not AWS's published example pair: documentation samples are let through.
        ("aws_secret_access_key=q9Vt2mLr/K7MDENG/bPxRfiCY4Hn8sWd3Tz", "q9Vt2mLr"),
        ("client_secret=8f14e45fceea167a5a36dedd4bea2543", "8f14e45fceea167a"),
    ],
)
def test_the_default_redactor_masks_labelled_credentials(text: str, secret: str) -> None:
    pack = build_context(
        {
            "messages": [{"id": "u", "role": "user", "content": f"config: {text}"}],
            "toolOutputs": [{"id": "o", "tool": "env", "content": text}],
        }
    )
    assert secret not in pack.to_json()
    assert pack.layers["L0"][0].content.startswith("config: ")


def test_the_context_names_for_the_redactor_still_import() -> None:
    assert PatternRedactor is agrun.sensitive.PatternRedactor
    assert DEFAULT_SECRET_PATTERNS == agrun.sensitive.DEFAULT_SECRET_PATTERNS
    custom = PatternRedactor([r"\bcode-\d{4}\b"])
    assert custom.redact("use code-1234 now") == "use [REDACTED] now"
    pack = build_context({"steering": [{"id": "s", "text": "code-1234"}]}, redactor=custom)
    assert pack.layers["L0"][0].content == "[REDACTED]"


# --- 5. A built pack is read-only ----------------------------------------------------------


def arguments_pack() -> tuple[dict[str, Any], ContextPack]:
    call = {"id": "c1", "name": "search", "arguments": {"q": "x", "tags": ["a", {"b": 1}]}}
    raw = {
        "messages": [
            {"id": "u", "role": "user", "content": "go"},
            {"id": "a", "role": "assistant", "toolCalls": [call]},
            {"id": "t", "role": "tool", "toolCallId": "c1", "content": "ok"},
        ]
    }
    return raw, build_context(raw)


MUTATIONS: dict[str, Callable[[ContextPack], object]] = {
    "set layer": lambda p: p.layers.__setitem__("L0", ()),
    "delete layer": lambda p: p.layers.__delitem__("L0"),
    "clear layers": lambda p: p.layers.clear(),
    "update layers": lambda p: p.layers.update({"L9": ()}),
    "pop layer": lambda p: p.layers.pop("L0"),
    "setdefault layer": lambda p: p.layers.setdefault("L9", ()),
    "set metric": lambda p: p.metrics.tokens_per_layer.__setitem__("L0", 0),
    "set argument": lambda p: p.layers["L0"][1].tool_calls[0].arguments.__setitem__("q", "y"),
    "append to argument": lambda p: p.layers["L0"][1].tool_calls[0].arguments["tags"].append(1),
    "nested argument": lambda p: p.layers["L0"][1].tool_calls[0].arguments["tags"][1].clear(),
    "set attribute": lambda p: setattr(p, "budget_used", 0),
}


@pytest.mark.parametrize("name", MUTATIONS)
def test_a_built_pack_cannot_be_changed(name: str) -> None:
    _, pack = arguments_pack()
    before = pack.to_json()
    with pytest.raises(ReadOnlyError):
        MUTATIONS[name](pack)
    assert pack.to_json() == before


def test_the_pack_owns_its_arguments() -> None:
    raw, pack = arguments_pack()
    before = pack.to_json()
    request = ContextRequest.model_validate(raw)
    built = build_context(request)
    # The request is the caller's; changing what it holds afterwards leaves the pack be.
    arguments = request.messages[1].tool_calls[0].arguments
    assert isinstance(arguments, dict)
    arguments["q"] = "changed"
    assert built.to_json() == before


def test_a_read_only_pack_serializes_copies_and_pickles_like_a_plain_one() -> None:
    _, pack = arguments_pack()
    text = pack.to_json()
    plain = json.loads(text)
    assert ContextPack.model_validate(plain).to_json() == text
    again = ContextPack.model_validate(plain)
    with pytest.raises(ReadOnlyError):
        again.layers.__setitem__("L0", ())
    assert copy.deepcopy(pack).to_json() == text
    assert pickle.loads(pickle.dumps(pack)).to_json() == text
    call = pack.layers["L0"][1].tool_calls[0]
    assert json.dumps(call.arguments, sort_keys=True) == '{"q": "x", "tags": ["a", {"b": 1}]}'
    assert call.arguments == {"q": "x", "tags": ["a", {"b": 1}]}
    assert dict(pack.metrics.tokens_per_layer) == plain["metrics"]["tokensPerLayer"]


# --- 6. A build can be cancelled -----------------------------------------------------------


def after(calls: int) -> tuple[Callable[[], bool], list[int]]:
    """A ``cancelled`` callable that answers true from its ``calls + 1``-th call on."""
    asked = [0]

    def cancelled() -> bool:
        asked[0] += 1
        return asked[0] > calls

    return cancelled, asked


def busy_request() -> dict[str, Any]:
    return {
        "messages": tool_loop(rounds=40),
        "input": "Audit the repo.",
        "events": [
            {"id": f"e{i}", "kind": "K", "text": f"event {i}", "atMs": i} for i in range(300)
        ],
        "memory": [{"id": f"m{i}", "text": f"fact {i}", "seq": i} for i in range(100)],
        "toolOutputs": [{"id": f"o{i}", "tool": "t", "content": f"out {i}"} for i in range(50)],
        "budget": {"limit": 1500},
        "causationId": "run-7",
    }


def test_a_build_cancelled_mid_way_raises_and_says_so() -> None:
    cancelled, asked = after(3)
    events: list[Any] = []
    with pytest.raises(ContextBuildCancelled) as caught:
        build_context(busy_request(), cancelled=cancelled, emit=events.append)
    error = caught.value
    assert isinstance(error, AgrunError) and not isinstance(error, ContextBuildingFailed)
    assert error.code == "context_build_cancelled"
    assert asked[0] == 4
    assert [e.kind for e in events] == ["ContextBuildingStarted", "ContextBuildingFailed"]
    assert events[-1] is error.event
    assert error.event.reason == "cancelled" and error.event.causation_id == "run-7"


def test_every_cancellation_point_stops_the_build_and_none_changes_a_finished_one() -> None:
    expected = build_context(busy_request()).to_json()
    counter, asked = after(10**9)
    assert build_context(busy_request(), cancelled=counter).to_json() == expected
    points = asked[0]
    for calls in range(points):
        events: list[Any] = []
        cancelled, _ = after(calls)
        with pytest.raises(ContextBuildCancelled):
            build_context(busy_request(), cancelled=cancelled, emit=events.append)
        assert "ContextPackBuilt" not in [e.kind for e in events]
        assert events[-1].reason == "cancelled"
    assert build_context(busy_request(), cancelled=after(points)[0]).to_json() == expected


def test_long_inputs_are_asked_about_inside_their_loops() -> None:
    small, asked_small = after(10**9)
    build_context({"events": [{"id": "e", "kind": "K", "text": "t"}]}, cancelled=small)
    big, asked_big = after(10**9)
    many = [{"id": f"e{i}", "kind": "K", "text": f"t{i}", "atMs": i} for i in range(2000)]
    build_context({"events": many}, cancelled=big)
    # The stages are the same; only the loops over 2,000 events can ask more often.
    assert asked_big[0] > asked_small[0] + 2000 // 64


def test_a_cancel_during_a_long_transcript_walk_stops_inside_it() -> None:
    # Thousands of orphan-free duplicate round trips: the walk drops them without leaving
    # its loop, so only a check inside the loop can stop it.
    call = {"id": "c", "name": "weather", "arguments": {"city": "Oslo"}}
    window: list[dict[str, Any]] = [{"id": "u", "role": "user", "content": "weather?"}]
    for i in range(3000):
        window.append({"id": f"a{i}", "role": "assistant", "toolCalls": [call]})
        window.append({"id": f"t{i}", "role": "tool", "toolCallId": "c", "content": "5C"})
    counted, asked = after(10**9)
    build_context({"messages": window}, cancelled=counted)
    assert asked[0] > 3000 // 64


def test_a_cancelled_callable_that_raises_fails_the_build() -> None:
    def broken() -> bool:
        raise RuntimeError("signal gone")

    with pytest.raises(ContextBuildingFailed, match="signal gone") as caught:
        build_context({"messages": tool_loop()}, cancelled=broken)
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_the_router_build_can_be_cancelled() -> None:
    with pytest.raises(ContextBuildCancelled):
        build_router_context({"messages": tool_loop(), "causationId": "r"}, cancelled=lambda: True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(0, 40))
def test_property_a_cancelled_build_is_all_or_nothing(raw: dict[str, Any], calls: int) -> None:
    plain = build_or_none(raw)
    events: list[Any] = []
    cancelled, _ = after(calls)
    try:
        pack = build_context(raw, cancelled=cancelled, emit=events.append)
    except ContextBuildCancelled as error:
        assert events[-1] is error.event and error.event.reason == "cancelled"
        assert "ContextPackBuilt" not in [e.kind for e in events]
        return
    except ContextBuildingFailed:
        assert plain is None
        return
    assert plain is not None and pack.to_json() == plain.to_json()


# --- 7. Every event carries the run's causation id ------------------------------------------


def test_every_context_event_carries_the_causation_id() -> None:
    seen: list[Any] = []
    noise = "\n".join(f"line {i}" for i in range(400))
    request = {
        "messages": tool_loop(rounds=8),
        "toolOutputs": [{"id": "o", "tool": "t", "content": noise}],
        "memory": [{"id": f"m{i}", "text": f"fact number {i} " * 3, "seq": i} for i in range(6)],
        "budget": {"limit": 300, "sessionL2Cap": 20},
        "causationId": "run-42",
    }
    build_context(request, emit=seen.append, clock=FixedClock())
    kinds = {e.kind for e in seen}
    assert kinds == {
        "ContextBuildingStarted",
        "CompressionApplied",
        "LayerTruncated",
        "ContextPackBuilt",
    }
    assert {e.reason for e in seen if e.kind == "LayerTruncated"} == {"over_budget", "moved_to_l3"}

    class Bad:
        name = "bad"

        def compress(self, text: str, *, limit: int, tokenizer: Any) -> list[tuple[int, int]]:
            raise ValueError("no")

    failures: list[Any] = []
    for kwargs, raised in (
        ({"compressors": {"tool_output": Bad()}}, ContextBuildingFailed),
        ({"cancelled": lambda: True}, ContextBuildCancelled),
    ):
        with pytest.raises(raised):
            build_context(request, emit=failures.append, **kwargs)
    with pytest.raises(ContextBuildingFailed):
        build_context(request | {"budget": {"limit": 5}}, emit=failures.append)
    assert [e.kind for e in failures].count("ContextBuildingFailed") == 3
    router: list[Any] = []
    build_router_context({"messages": tool_loop(), "causationId": "run-42"}, emit=router.append)
    assert router
    assert {e.causation_id for e in seen + failures + router} == {"run-42"}


# --- 8. The overflow order (docs/context.md: measured against spec 001 §9) -----------------


def test_l2_that_answers_the_request_outranks_events_and_the_transcript_tail() -> None:
    window = [
        {"id": f"u{i}", "role": "user", "content": f"turn {i} about the garden " * 6}
        for i in range(29)
    ]
    window.append({"id": "u29", "role": "user", "content": "Which roses did we plant?"})
    related = [{"id": f"m{i}", "text": f"roses {i} planted", "seq": i} for i in range(5)]
    other = [{"id": f"n{i}", "text": f"tax form {i}", "seq": 10 + i} for i in range(5)]
    request = {
        "messages": window,
        "input": "Which roses did we plant?",
        "memory": related + other,
        "events": [
            {"id": f"e{i}", "kind": "K", "text": f"event {i} in the garden " * 6, "atMs": i}
            for i in range(5)
        ],
        "budget": {"limit": 400},
        "options": {"keepRecentTurns": 1, "summaryMaxTokens": 0},
    }
    pack = build_context(request)
    # The related notes come in before the older transcript's tail and the events; the
    # unrelated ones after both: only what is left over, the oldest left out first.
    memory = ids(pack, "memory")
    assert {f"m{i}" for i in range(5)} <= set(memory)
    assert ids(pack, "event") == []
    kept = ids(pack, "message")
    assert "u29" in kept and "u28" in kept and "u0" not in kept
    dropped = [(d.kind, d.first) for d in pack.compression_metadata.dropped]
    assert {("event", f"e{i}") for i in range(5)} <= set(dropped)
    left_out = [f for k, f in dropped if k == "memory"]
    assert left_out and left_out == [f"n{i}" for i in range(len(left_out) - 1, -1, -1)]
    assert sorted(memory) == sorted(
        {f"m{i}" for i in range(5)} | {f"n{i}" for i in range(5)} - set(left_out)
    )


def test_events_that_answer_the_request_outrank_unrelated_l2_notes() -> None:
    # Issue 18.5: at 150 tokens, 10 events answering the request were dropped while 7
    # unrelated L2 notes were kept.
    request = {
        "messages": [{"id": "q", "role": "user", "content": "When did the deploy fail?"}],
        "input": "When did the deploy fail?",
        "memory": [{"id": f"n{i}", "text": f"likes green tea {i}", "seq": i} for i in range(7)],
        "events": [
            {"id": f"e{i}", "kind": "Deploy", "text": f"deploy {i} failed", "atMs": i}
            for i in range(10)
        ],
        "budget": {"limit": 150},
    }
    pack = build_context(request)
    assert len(ids(pack, "event")) == 10
    assert pack.budget_used <= 150
    notes = ids(pack, "memory")
    # What room is left goes to the newest unrelated notes; the oldest go first.
    assert notes == [f"n{i}" for i in range(7 - len(notes), 7)]


def test_the_redaction_memo_answers_like_its_redactor_and_stays_bounded() -> None:
    from agrun.context._redact import MemoRedactor

    class Counting:
        def __init__(self) -> None:
            self.asked: list[str] = []
            self.inner = PatternRedactor()

        def redact(self, text: str) -> str:
            self.asked.append(text)
            return self.inner.redact(text)

    counting = Counting()
    memo = MemoRedactor(counting, max_chars=60, max_text=48)
    texts = [f"token={TOKEN}", "plain words", f"token={TOKEN}", "x" * 50, "x" * 50]
    assert [memo.redact(t) for t in texts] == [PatternRedactor().redact(t) for t in texts]
    # The repeated short text is scanned once; the long one (over max_text) every time.
    assert counting.asked == [f"token={TOKEN}", "plain words", "x" * 50, "x" * 50]
    for i in range(10):  # more than max_chars of new texts: the memo starts over
        memo.redact(f"text number {i:02d}")
    memo.redact(f"token={TOKEN}")
    assert counting.asked[-1] == f"token={TOKEN}"


def _broken_build(
    request: dict[str, Any], breaks: Callable[[Any], None], events: list[Any] | None = None
) -> None:
    """Build ``request`` through a stage order that, after the usual stages, does what
    ``breaks`` does to the ledger; the events go to ``events``."""
    from agrun.context import _build as pipeline

    def admit(plan: Any, ledger: Any, transcript: Any) -> Any:
        moved = pipeline._admit_by_priority(plan, ledger, transcript)
        breaks(ledger)
        return moved

    sink: list[Any] = [] if events is None else events
    pipeline._run(pipeline._plan(request), sink.append, admit=admit)


def test_a_pack_that_lost_a_protected_entry_fails_its_self_check() -> None:
    from agrun.context import ContextPackIncomplete

    request = {
        "messages": [
            {"id": "m1", "role": "user", "content": "Plan the trip", "author": "person"},
            {"id": "m2", "role": "assistant", "content": "Which month?"},
            {"id": "m3", "role": "user", "content": "Book the flights", "author": "person"},
        ],
        "input": "Book the flights",
        "direction": {"activeGoal": "a trip in May", "pendingClarification": "which airport?"},
        "budget": {"limit": 400},
    }
    build_context(request)  # whole, it passes

    def lose(kind: str, name: str | None = None) -> Callable[[Any], None]:
        def breaks(ledger: Any) -> None:
            ledger.remove([i for i in ledger.kept() if i.kind == kind and name in (None, i.name)])

        return breaks

    for kind, name, named in (
        ("message", None, "message:m3"),
        ("direction", "pendingClarification", "direction:pendingClarification"),
        ("direction", "activeGoal", "direction:activeGoal"),
    ):
        with pytest.raises(ContextPackIncomplete, match=f"missing {named}") as failure:
            _broken_build(request, lose(kind, name))
        assert isinstance(failure.value, ContextBuildingFailed)
        assert failure.value.event.items == (named,)

    def overfill(ledger: Any) -> None:
        ledger.used += 1_000

    events: list[Any] = []
    with pytest.raises(ContextPackIncomplete, match="used of a 400-token budget"):
        _broken_build(request, overfill, events)
    # Not silent: the failure event went out before the error, and no pack was announced.
    assert [e.kind for e in events][-1] == "ContextBuildingFailed"
    assert "ContextPackBuilt" not in [e.kind for e in events]
