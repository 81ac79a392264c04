"""The window opens on a person's turn (or a tool loop's own call), never on an assistant
reply whose question was left out: chat templates that require the roles to alternate
reject ``[system, assistant, user, ...]`` (issue 18.6b)."""

from __future__ import annotations

from typing import Any

import pytest

from agrun.chat import ModelRequest
from agrun.context import ContextPack, build_context
from agrun.testing import ScriptedProvider
from conftest import make_runtime

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
]


def said(i: int) -> str:
    # Turns of different lengths, so the window closes at many different places.
    return " ".join(WORDS[(i + k) % len(WORDS)] for k in range(3 + (i * 7) % 19)) + "."


def chat(count: int) -> list[dict[str, Any]]:
    messages = []
    for i in range(count):
        if i % 2 == 0:
            messages.append({"id": f"m{i}", "role": "user", "content": said(i)})
        else:
            messages.append({"id": f"m{i}", "role": "assistant", "content": said(i)})
    return messages


def window(pack: ContextPack) -> list[Any]:
    return [e for e in pack.layers["L0"] if e.kind == "message"]


def opens_well(entries: list[Any]) -> bool:
    first = entries[0]
    return first.role == "user" or (first.role == "assistant" and bool(first.tool_calls))


@pytest.mark.parametrize("limit", range(120, 900, 15))
def test_the_window_never_opens_on_an_assistant_reply(limit: int) -> None:
    messages = chat(25)
    request = {"messages": messages, "input": messages[-1]["content"], "budget": {"limit": limit}}
    pack = build_context(request)
    entries = window(pack)
    assert entries and opens_well(entries), [(e.role, e.sources) for e in entries[:2]]
    # The reply left out is accounted for, once: in the pack or in one dropped run.
    kept = {e.sources[0] for e in pack.entries() if e.kind in ("message", "recalled_turn")}
    dropped: list[str] = []
    ids = [m["id"] for m in messages]
    for run in pack.compression_metadata.dropped:
        if run.kind == "message":
            dropped += ids[ids.index(run.first) : ids.index(run.last) + 1]
    assert sorted(dropped, key=ids.index) == [i for i in ids if i not in kept]


def test_a_reply_left_without_its_question_is_dropped_as_orphan_reply() -> None:
    messages = chat(25)
    request = {"messages": messages, "input": messages[-1]["content"]}
    limits = range(120, 900, 5)
    reasons = {
        run.reason
        for limit in limits
        for run in build_context(
            request | {"budget": {"limit": limit}}
        ).compression_metadata.dropped
    }
    assert "orphan_reply" in reasons


def test_a_cursor_past_a_question_does_not_open_the_window_on_its_answer() -> None:
    messages = chat(6)
    # The cursor lies between m2 (a question) and m3 (its answer): m2 is in memory.
    pack = build_context({"messages": messages, "input": messages[4]["content"], "cursor": 3})
    assert [e.sources[0] for e in window(pack)] == ["m4", "m5"]
    # The answer left the window's head; recall brings it back, so it is not reported
    # dropped too (a message is kept or dropped, never both).
    recalled = [e.sources[0] for e in pack.entries() if e.kind == "recalled_turn"]
    runs = [(r.reason, r.first, r.last) for r in pack.compression_metadata.dropped]
    assert (recalled, runs) == (["m3"], [])
    without_recall = build_context(
        {
            "messages": messages,
            "input": messages[4]["content"],
            "cursor": 3,
            "options": {"recallShare": 0.0},
        }
    )
    runs = [(r.reason, r.first, r.last) for r in without_recall.compression_metadata.dropped]
    assert runs == [("orphan_reply", "m3", "m3")]


def test_a_tool_loops_own_call_may_open_the_window() -> None:
    call = {"id": "c1", "name": "look", "arguments": {}}
    messages = [
        {"id": "u0", "role": "user", "content": said(0) * 20},
        {"id": "a0", "role": "assistant", "content": "", "toolCalls": [call]},
        {"id": "t0", "role": "tool", "toolCallId": "c1", "name": "look", "content": "seen"},
        {"id": "a1", "role": "assistant", "content": "Done."},
    ]
    # The request is protected; with it placed first the call that follows is fine, and
    # without a request the window still keeps its tool loop.
    pack = build_context({"messages": messages[1:], "budget": {"limit": 200}})
    assert [e.sources[0] for e in window(pack)] == ["a0", "t0", "a1"]


async def test_no_model_call_is_sent_an_assistant_reply_first() -> None:
    requests: list[ModelRequest] = []

    def reply(request: ModelRequest) -> str:
        requests.append(request)
        return said(len(requests) * 5) * 2

    for window_tokens in (400, 450, 500, 550, 600, 650):
        provider = ScriptedProvider(reply)
        runtime = make_runtime(
            provider=provider,
            model="scripted",
            memory_extraction="off",
            memory_commands=False,
            context_window=window_tokens,
            max_reply_tokens=100,
        )
        for turn in range(6):
            requests.clear()
            await runtime.run(said(turn * 3) * 3)
            for request in requests:
                first = request.messages[1]
                assert first.role == "user" or first.tool_calls, (window_tokens, turn)
