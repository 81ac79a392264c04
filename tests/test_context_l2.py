"""Spec 001 sections 9-10 in the runtime (issue 18.5): a default session L2 cap, the oldest
L2 merged into one bounded L3 entry with `LayerTruncated`, and L2 ranked by the request."""

from __future__ import annotations

from typing import Any

from agrun.context import (
    SESSION_L2_SHARE,
    ContextPack,
    LayerTruncated,
    build_context,
)
from agrun.testing import ScriptedProvider
from conftest import make_runtime


async def remembering_runtime(notes: int) -> tuple[Any, list[Any]]:
    runtime = make_runtime(
        provider=ScriptedProvider(lambda request: "Noted."),
        model="scripted",
        memory_extraction="rules",
        context_window=1500,
        max_reply_tokens=200,
    )
    for i in range(notes):
        await runtime.run(f"remember: box {i} is painted shade {i * 7 + 3}")
    events: list[Any] = []
    runtime.subscribe(events.append)
    await runtime.run("What shade is box 5?")
    return runtime, events


async def test_the_runtime_caps_l2_and_merges_the_oldest_into_l3() -> None:
    runtime, events = await remembering_runtime(120)
    pack: ContextPack = runtime.last_pack
    limit = pack.budget_limit
    assert pack.budget_used <= limit
    # L2 holds at most the cap; the rest moved to L3, reported by one event.
    notes = [e for e in pack.layers["L2"] if e.kind == "memory"]
    assert notes and sum(e.tokens for e in notes) <= int(limit * SESSION_L2_SHARE)
    moved = pack.compression_metadata.moved_to_l3
    assert len(moved) >= 60
    truncated = [e for e in events if isinstance(e, LayerTruncated) and e.reason == "moved_to_l3"]
    assert len(truncated) == 1 and truncated[0].count == len(moved)
    assert truncated[0].moved_to == "L3"
    # The merged entry is bounded and holds the note the request is about.
    merged = [e for e in pack.layers["L3"] if e.kind == "merged_memory"]
    assert len(merged) == 1
    assert "box 5 is painted shade 38" in merged[0].content
    assert merged[0].tokens <= 200 + 16
    assert set(merged[0].sources) <= set(moved)
    # Not one note after another left out as over budget.
    over = [d for d in pack.compression_metadata.dropped if d.kind == "memory"]
    assert len(over) <= 10


async def test_the_capped_pack_is_the_same_byte_for_byte() -> None:
    first, _ = await remembering_runtime(40)
    second, _ = await remembering_runtime(40)
    assert first.last_pack.to_json() == second.last_pack.to_json()
    assert first.last_pack.compression_metadata.moved_to_l3


def l2_request(**extra: Any) -> dict[str, Any]:
    notes = [{"id": f"n{i}", "text": f"box {i} is shade {i * 7 + 3}", "seq": i} for i in range(40)]
    notes += [
        {"id": f"t{i}", "text": f"likes green tea number {i}", "seq": 40 + i} for i in range(5)
    ]
    return {
        "messages": [{"id": "q", "role": "user", "content": "What shade is box 5?"}],
        "input": "What shade is box 5?",
        "memory": notes,
        "options": {"layers": ["L0", "L1", "L2", "L3"]},
    } | extra


def test_l2_is_ranked_by_the_request_not_by_age() -> None:
    pack = build_context(l2_request(budget={"limit": 120}))
    memory = [e for e in pack.layers["L2"] if e.kind == "memory"]
    assert memory and "n5" in {e.sources[0] for e in memory}
    # Related notes first; the unrelated (newest) ones only with what is left over.
    kept = {e.sources[0] for e in memory}
    assert not {f"t{i}" for i in range(5)} & kept


def test_the_merged_entry_stays_within_the_budget_and_its_size() -> None:
    for limit in (60, 80, 120, 200, 400, 800):
        for cap in (0, 10, 50, 100):
            events: list[Any] = []
            request = l2_request(budget={"limit": limit, "sessionL2Cap": cap})
            pack = build_context(request, emit=events.append)
            assert pack.budget_used <= limit
            merged = [e for e in pack.layers["L3"] if e.kind == "merged_memory"]
            assert len(merged) <= 1
            if merged:
                assert merged[0].tokens <= 200 + 16
                assert merged[0].content.splitlines()[0].startswith("box ")
            moved = pack.compression_metadata.moved_to_l3
            assert [
                e.count
                for e in events
                if isinstance(e, LayerTruncated) and e.reason == "moved_to_l3"
            ] == ([len(moved)] if moved else [])
            assert build_context(request).to_json() == pack.to_json()


def test_without_l3_the_moved_entries_are_reported_but_not_sent() -> None:
    request = l2_request(budget={"limit": 400, "sessionL2Cap": 30}, options={})
    pack = build_context(request)
    assert pack.compression_metadata.moved_to_l3
    assert not pack.layers["L3"]
