"""agentfootprint's window/turns cases (turn boundaries, what may leave, which span a removal
takes), in agrun's terms: `agrun.context.wire_units` is the segmentation, and a build under a
budget is the removal (what left is in ``compressionMetadata.dropped``)."""

from __future__ import annotations

from typing import Any

from _peers import (
    WINDOW_ONLY,
    PerMessage,
    calls,
    context_request,
    dropped_ids,
    kinds,
    msg,
    person,
    result,
    window,
)

import agrun.context as public_api
from agrun.context import Message, build_context, wire_units

PEER_REPO = "footprintjs/agentfootprint"
PEER_FILE = "test/core/window-turns.test.ts"


def resolved_window() -> list[Message]:
    """A resolved three-iteration tool loop."""
    return [
        person("u", "do the thing"),
        calls("a1", "c1"),
        result("t1", "c1", "found 1"),
        calls("a2", "c2"),
        result("t2", "c2", "found 2"),
        calls("a3", "c3"),
        result("t3", "c3", "found 3"),
    ]


def build(messages: list[Message], limit: int, **options: Any) -> Any:
    request = context_request(
        messages=messages,
        budget={"limit": limit},
        options={**WINDOW_ONLY, **options},
    )
    return build_context(request, tokenizer=PerMessage())


def test_each_tool_result_goes_with_the_call_that_asked_for_it() -> None:
    """Case "groups each tool result with the assistant turn that requested it"."""
    units = list(wire_units(resolved_window()))[::-1]
    assert [end - start for start, end in units] == [1, 2, 2, 2]
    assert [start for start, _ in units] == [0, 1, 3, 5]
    history = resolved_window()
    assert [history[start].role for start, _ in units] == ["user", *["assistant"] * 3]


def test_a_new_unit_starts_at_every_non_tool_message() -> None:
    """Case "starts a new turn at every non-tool message"."""
    units = list(wire_units([person("a", "a"), person("b", "b"), msg("c", "assistant", "c")]))
    assert len(units) == 3


def test_a_leading_tool_message_is_a_unit_of_its_own() -> None:
    """Case "gives a leading tool message its own turn rather than dropping it": segmented
    as its own unit; a build then leaves it out, named, since its call is not there."""
    history = [result("t0", "orphan"), person("a", "a")]
    assert list(wire_units(history)) == [(1, 2), (0, 1)]
    pack = build(history, 100)
    assert window(pack) == ["a"]
    assert [(d.first, d.reason) for d in pack.compression_metadata.dropped] == [
        ("t0", "orphan_tool_result")
    ]


def test_an_empty_window_has_no_units() -> None:
    """Case "is total: an empty window segments to no turns"."""
    assert list(wire_units([])) == []


def test_a_resolved_call_and_result_leave_together() -> None:
    """Case "lets a fully resolved assistant+tool turn fold"."""
    pack = build(resolved_window(), 50)
    assert window(pack) == ["u", "a2", "t2", "a3", "t3"]
    (run,) = pack.compression_metadata.dropped
    assert (run.first, run.last, run.count) == ("a1", "t1", 2)


def test_the_system_prompt_never_leaves() -> None:
    """Case "never folds the system envelope"."""
    request = context_request(
        messages=resolved_window(),
        system_prompt="you are a bot",
        budget={"limit": 30},
        options=WINDOW_ONLY,
    )
    pack = build_context(request, tokenizer=PerMessage())
    assert kinds(pack)[0] == "system"
    assert pack.compression_metadata.dropped


def test_the_oldest_leave_and_the_last_turns_stay() -> None:
    """Case "takes the oldest candidates and keeps the last K turns" (an agrun turn opens
    with something a person said)."""
    history: list[Message] = []
    for n in range(5):
        history += [person(f"u{n}", f"question {n}"), msg(f"r{n}", "assistant", f"answer {n}")]
    pack = build(history, 40, keepRecentTurns=2)
    assert window(pack) == ["u3", "r3", "u4", "r4"]
    (run,) = pack.compression_metadata.dropped
    assert (run.first, run.last, run.count) == ("u0", "r2", 6)


def test_a_unit_that_does_not_fit_ends_the_window() -> None:
    """Case "an unfoldable turn ENDS the span, so survivors never get reordered": what is
    older than a unit that did not fit leaves too, though it would fit, so the window stays
    one contiguous stretch."""
    history = [
        person("u", "do the thing"),
        calls("a1", "c1"),
        result("t1", "c1"),
        calls("big", "c2"),
        *[result(f"t2-{i}", "c2", f"part {i}") for i in range(4)],
        calls("a3", "c3"),
        result("t3", "c3"),
    ]
    history[4:8] = [result("t2", "c2", "one long result")]
    # u (protected) + a3/t3 + a1/t1 would fit in 50, but big/t2 (20) is in the way.
    pack = build(history, 45)
    assert window(pack) == ["u", "a3", "t3"]
    assert {"a1", "t1", "big", "t2"} <= dropped_ids(pack, history)


def test_nothing_leaves_when_the_window_fits() -> None:
    """Case "folds nothing when keepRecentTurns covers the whole window"."""
    pack = build(resolved_window(), 1000, keepRecentTurns=99)
    assert window(pack) == [m.id for m in resolved_window()]
    assert pack.compression_metadata.dropped == ()


def test_the_removal_never_reaches_into_the_recent_turns() -> None:
    """Case "the span never reaches into the keep window, for any K and any length": with a
    budget that holds the last K turns, all of them stay however long the log."""
    for turn_count in range(1, 13):
        history: list[Message] = []
        for n in range(turn_count):
            history += [
                person(f"u{n}", f"question {n}"),
                calls(f"a{n}", f"c{n}"),
                result(f"t{n}", f"c{n}", f"found {n}"),
            ]
        for keep in range(1, 9):
            tail = history[-3 * min(keep, turn_count) :]
            need = build(tail, 10_000, keepRecentTurns=keep).budget_used
            pack = build(history, need, keepRecentTurns=keep)
            assert window(pack)[-len(tail) :] == [m.id for m in tail], (turn_count, keep)


def test_a_removal_never_orphans_a_result() -> None:
    """Case "a folded span is always tool-pair complete — no result is orphaned"."""
    history = resolved_window()
    for limit in range(10, 80, 10):
        pack = build(history, limit)
        kept = [m for m in history if m.id in window(pack)]
        asked = {c.id for m in kept for c in m.tool_calls}
        assert all(m.tool_call_id in asked for m in kept if m.role == "tool")
        gone = [m for m in history if m.id in dropped_ids(pack, history)]
        asked_gone = {c.id for m in gone for c in m.tool_calls}
        assert {m.tool_call_id for m in gone if m.role == "tool"} == asked_gone


def test_the_budget_used_is_the_sum_of_what_the_pack_holds() -> None:
    """Case "sums content length exactly and is zero for an empty window" (agrun measures
    in tokens)."""
    empty = build([], 100)
    assert empty.budget_used == 0 and list(empty.entries()) == []
    pack = build(resolved_window(), 100)
    assert pack.budget_used == sum(e.tokens for e in pack.entries()) == 70


def test_over_budget_the_window_shrinks_and_the_summary_holds_only_what_left() -> None:
    """Case "returns a smaller window, the stages it folded, and honest evictions": agrun's
    summary is extractive (no summarizer call); it must say only what left the window."""
    history: list[Message] = []
    for n in range(6):
        history += [
            person(f"u{n}", f"Question {n} is about the billing fix number {n}."),
            msg(f"r{n}", "assistant", f"Answer {n}: the billing fix {n} ships on Friday."),
        ]
    request = context_request(
        messages=history,
        direction={"activeGoal": "billing fix"},
        budget={"limit": 260},
        options={"keepRecentTurns": 1, "recallShare": 0},
    )
    pack = build_context(request)
    left = dropped_ids(pack, history)
    assert left and len(window(pack)) < len(history)
    summary = next(e for e in pack.entries() if e.kind == "summary")
    assert summary.sources and set(summary.sources) <= left
    assert not set(summary.sources) & set(window(pack))


def test_nothing_happens_under_budget() -> None:
    """Case "does not engage before the first call, or under budget" (the under-budget half:
    agrun counts its own tokens, so there is no "before the first call")."""
    pack = build_context(context_request(messages=resolved_window(), budget={"limit": 8000}))
    assert window(pack) == [m.id for m in resolved_window()]
    assert pack.compression_metadata.dropped == ()
    assert "summary" not in kinds(pack)


def test_every_build_accounts_for_every_message() -> None:
    """Case "always explains itself: every engaged path returns a record": each message is
    in the pack or in exactly one dropped run."""
    history = resolved_window()
    for limit in range(10, 80, 10):
        pack = build(history, limit)
        kept = window(pack)
        counted = sum(d.count for d in pack.compression_metadata.dropped if d.kind == "message")
        assert len(kept) + counted == len(history)
        assert not set(kept) & dropped_ids(pack, history)


def test_the_window_seam_is_public() -> None:
    """Case "is PUBLIC — the strategy seam ships as of 7.17"."""
    surface = set(public_api.__all__)
    assert {"build_context", "wire_units", "current_request_index", "is_said_by_person"} <= surface
    assert {"ContextBuildingFailed", "DroppedItem", "ContextOptions"} <= surface
