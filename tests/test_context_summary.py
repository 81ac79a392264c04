"""The L2 conversation summary covers only what the window left out (issue 18.6a): a
summary line for a message the window holds verbatim spends the budget twice."""

from __future__ import annotations

from typing import Any

import pytest

from agrun.context import CompressionApplied, ContextPack, build_context

TOPICS = ["invoice", "shipping", "refund", "warranty", "login", "billing", "pricing"]


def chat(count: int) -> list[dict[str, Any]]:
    messages = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        text = f"About the {topic} for order {i}: " + "the details go on at length. " * (
            1 + (i * 5) % 7
        )
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"id": f"m{i}", "role": role, "content": text})
    return messages


def summary_and_window(pack: ContextPack) -> tuple[set[str], set[str]]:
    summary = next((e for e in pack.layers["L2"] if e.kind == "summary"), None)
    window = {e.sources[0] for e in pack.layers["L0"] if e.kind == "message"}
    return (set() if summary is None else set(summary.sources)), window


@pytest.mark.parametrize("limit", [*range(300, 2200, 100), 1400])
def test_the_summary_never_repeats_a_message_the_window_holds(limit: int) -> None:
    messages = chat(25)
    request = {"messages": messages, "input": messages[-1]["content"], "budget": {"limit": limit}}
    pack = build_context(request)
    summarized, window = summary_and_window(pack)
    assert not summarized & window
    assert pack.budget_used <= limit
    # Only the summary's own lines are recorded as conversation compressions.
    recorded = {
        r.source for r in pack.compression_metadata.records if r.data_type == "conversation"
    }
    assert recorded == summarized


def test_at_1400_tokens_a_summary_of_what_was_dropped_is_still_there() -> None:
    messages = chat(25)
    request = {"messages": messages, "input": messages[-1]["content"], "budget": {"limit": 1400}}
    pack = build_context(request)
    summarized, window = summary_and_window(pack)
    assert summarized, "the window left messages out, so there is something to summarize"
    first_kept = min(int(i[1:]) for i in window)
    assert all(int(i[1:]) < first_kept for i in summarized)


@pytest.mark.parametrize("limit", [600, 1000, 1400])
def test_a_replayed_build_gives_the_same_pack(limit: int) -> None:
    messages = chat(25)
    request = {"messages": messages, "input": messages[-1]["content"], "budget": {"limit": limit}}
    events: list[Any] = []
    pack = build_context(request, emit=events.append)
    recorded = [e for e in events if isinstance(e, CompressionApplied)]
    assert build_context(request, replay=recorded).to_json() == pack.to_json()
