"""The pipeline stage by stage: retrieve, dedupe, rank, compress, policies, budget, assemble."""

from __future__ import annotations

from typing import Any

import pytest

from agrun.context import (
    Budget,
    CompressionApplied,
    ContextBuildingFailed,
    ContextEntry,
    ContextPack,
    ContextRequest,
    LayerTruncated,
    build_context,
    build_router_context,
)
from agrun.testing import FixedClock


def msgs(*specs: tuple[str, str, str]) -> list[dict[str, Any]]:
    return [{"id": i, "role": role, "content": text} for i, role, text in specs]


def ids(pack: ContextPack, kind: str | None = None) -> list[str]:
    return [e.sources[0] for e in pack.entries() if kind is None or e.kind == kind]


def entry(pack: ContextPack, kind: str) -> ContextEntry:
    return next(e for e in pack.entries() if e.kind == kind)


def test_camelcase_request_gives_a_camelcase_pack_with_all_layers() -> None:
    pack = build_context(
        {
            "messages": msgs(("u1", "user", "hello")),
            "input": "hello",
            "systemPrompt": "be brief",
            "direction": {"activeGoal": "greet"},
            "budget": {"limit": 500},
        }
    )
    wire = pack.model_dump(by_alias=True, mode="json")
    assert wire == pack.to_wire()
    assert list(wire["layers"]) == ["L0", "L1", "L2", "L3", "L4"]
    assert wire["budgetLimit"] == 500
    assert wire["compressionMetadata"]["anchor"] == "u1"
    assert [e["kind"] for e in wire["layers"]["L0"]] == ["system", "direction", "message"]
    assert wire["layers"]["L0"][1]["name"] == "activeGoal"


def test_retrieval_starts_at_the_cursor() -> None:
    request = ContextRequest(messages=msgs(("u1", "user", "old"), ("u2", "user", "new")), cursor=1)
    pack = build_context(request)
    assert ids(pack, "message") == ["u2"]
    assert pack.next_cursor == 2


def test_identical_tool_outputs_and_superseded_artifacts_are_deduplicated() -> None:
    pack = build_context(
        {
            "toolOutputs": [
                {"id": "o1", "tool": "ls", "content": "a b", "seq": 1},
                {"id": "o2", "tool": "ls", "content": "a b", "seq": 2},
            ],
            "artifacts": [
                {"id": "v1", "name": "plan", "version": 1, "content": "first"},
                {"id": "v2", "name": "plan", "version": 2, "content": "second"},
                {"id": "v3", "name": "plan", "version": 3, "valid": False, "content": "broken"},
            ],
        }
    )
    assert ids(pack, "tool_output") == ["o2"]
    assert ids(pack, "artifact") == ["v2"]
    reasons = {(d.first, d.reason) for d in pack.compression_metadata.dropped}
    assert {("o1", "duplicate"), ("v1", "superseded"), ("v3", "invalid_artifact")} <= reasons
    assert pack.metrics.dedup_hit_rate == pytest.approx(2 / 5)


def test_duplicate_tool_round_trips_in_the_transcript_drop_as_a_unit() -> None:
    call = {"id": "c", "name": "weather", "arguments": {"city": "Oslo"}}
    window = [
        {"id": "u1", "role": "user", "content": "weather?"},
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": "c", "content": "5C"},
        {"id": "a2", "role": "assistant", "toolCalls": [call]},
        {"id": "t2", "role": "tool", "toolCallId": "c", "content": "5C"},
    ]
    pack = build_context({"messages": window})
    assert ids(pack, "message") == ["u1", "a2", "t2"]


def test_ranking_puts_the_relevant_output_first_when_only_one_fits() -> None:
    outputs = [
        {"id": "o1", "tool": "search", "content": "bananas are yellow fruit", "seq": 2},
        {"id": "o2", "tool": "search", "content": "invoice 42 total is 310 EUR", "seq": 1},
    ]
    request = {
        "direction": {"activeGoal": "find the invoice total"},
        "toolOutputs": outputs,
        "budget": {"limit": 34},
    }
    pack = build_context(request)
    assert ids(pack, "tool_output") == ["o2"]
    assert entry(pack, "tool_output").score and entry(pack, "tool_output").score > 0


def test_tool_output_compression_keeps_errors_and_key_values_only() -> None:
    noise = "\n".join(f"debug line {i} nothing to see" for i in range(200))
    text = f"starting job\n{noise}\nERROR: disk full on /dev/sda1\nexit_code: 2\ndone"
    pack = build_context(
        {"toolOutputs": [{"id": "o", "tool": "job", "content": text}]},
    )
    out = entry(pack, "tool_output")
    assert out.compressed
    assert "ERROR: disk full on /dev/sda1" in out.content
    assert "exit_code: 2" in out.content
    assert all(line in text for line in out.content.split("\n"))
    record = pack.compression_metadata.records[0]
    assert record.source == "o" and record.tokens_after < record.tokens_before
    assert pack.metrics.compression_ratio < 0.5


def test_steering_notes_verbatim_and_approvals_all_kept() -> None:
    note = "Use metric units.   Always."
    pack = build_context(
        {
            "steering": [{"id": "s1", "text": note}],
            "approvals": [
                {"id": f"ap{i}", "action": f"deploy {i}", "decision": "approved"} for i in range(5)
            ],
        }
    )
    assert entry(pack, "steering").content == note
    assert ids(pack, "approval") == [f"ap{i}" for i in range(5)]


def test_policies_are_injected_for_their_stage_only_and_reserved() -> None:
    policies = [
        {"id": "p-all", "text": "No secrets."},
        {"id": "p-plan", "text": "Plan first.", "stages": ["plan"]},
        {"id": "p-off", "text": "Off.", "active": False},
    ]
    pack = build_context({"policies": policies, "stage": "act", "budget": {"reserve": 100}})
    assert ids(pack, "policy") == ["p-all"]
    meta = pack.compression_metadata
    assert meta.reserved == 100 + entry(pack, "policy").tokens
    assert pack.budget_used >= meta.reserved


def test_tightest_of_model_and_stage_budget_applies() -> None:
    budget = {"limit": 9000, "perModel": {"small": 700}, "perStage": {"route": 500}}
    assert build_context({"budget": budget, "model": "small"}).budget_limit == 700
    assert build_context({"budget": budget, "model": "small", "stage": "route"}).budget_limit == 500
    assert build_context({"budget": budget}).budget_limit == 9000


def test_direction_and_request_outrank_older_transcript() -> None:
    window = msgs(*[(f"u{i}", "user", f"message number {i} " * 8) for i in range(30)])
    request = {
        "messages": window,
        "input": window[3]["content"],
        "direction": {"activeGoal": "the goal", "pendingClarification": "which city?"},
        "budget": {"limit": 200},
        "options": {"keepRecentTurns": 1},
    }
    pack = build_context(request)
    kept = ids(pack)
    assert "activeGoal" in kept and "pendingClarification" in kept
    assert "u3" in kept  # the current request, though old
    assert "u29" in kept  # the most recent turn
    assert "u10" not in kept
    assert pack.budget_used <= 200


def test_protected_minimum_that_cannot_fit_fails_with_an_event() -> None:
    events: list[Any] = []
    request = {
        "messages": msgs(("u1", "user", "word " * 300)),
        "systemPrompt": "system",
        "budget": {"limit": 50},
    }
    with pytest.raises(ContextBuildingFailed) as caught:
        build_context(request, emit=events.append)
    failed = caught.value.event
    assert failed.kind == "ContextBuildingFailed"
    assert failed.needed > failed.available == 50
    assert any(item.startswith("message:u1=") for item in failed.items)
    assert events[-1] is failed
    assert "raise the budget" in str(caught.value)
    assert caught.value.code == "context_building_failed"


def test_reserve_at_or_over_the_limit_fails() -> None:
    with pytest.raises(ContextBuildingFailed):
        build_context({"budget": {"limit": 10, "reserve": 10}})


def test_session_l2_cap_moves_oldest_l2_into_l3_and_reports_it() -> None:
    memory = [{"id": f"m{i}", "text": f"fact number {i} " * 3, "seq": i} for i in range(6)]
    events: list[Any] = []
    request = {
        "memory": memory,
        "budget": {"sessionL2Cap": 40},
        "options": {"layers": ["L0", "L1", "L2", "L3"]},
    }
    pack = build_context(request, emit=events.append)
    moved = pack.compression_metadata.moved_to_l3
    assert moved and moved == tuple(f"m{i}" for i in range(len(moved)))
    assert sum(e.tokens for e in pack.layers["L2"]) <= 40
    merged = entry(pack, "merged_memory")
    assert merged.layer == "L3" and merged.sources == moved
    truncated = [e for e in events if isinstance(e, LayerTruncated) and e.reason == "moved_to_l3"]
    assert truncated and truncated[0].moved_to == "L3"


def test_when_l2_overflows_the_oldest_goes_first() -> None:
    memory = [{"id": f"m{i}", "text": f"memory {i} about things", "seq": i} for i in range(10)]
    pack = build_context({"memory": memory, "budget": {"limit": 60}})
    kept = ids(pack, "memory")
    assert kept and kept == [f"m{i}" for i in range(10 - len(kept), 10)]


def test_l3_and_l4_only_when_asked() -> None:
    memory = [
        {"id": "d", "text": "durable", "layer": "L3"},
        {"id": "a", "text": "old", "layer": "L4"},
    ]
    assert ids(build_context({"memory": memory}), "memory") == []
    deep = build_context({"memory": memory, "options": {"layers": ["L0", "L3", "L4"]}})
    assert [(e.layer, e.sources[0]) for e in deep.entries()] == [("L3", "d"), ("L4", "a")]


def test_dropped_transcript_becomes_an_extractive_l2_summary() -> None:
    window = msgs(
        ("u1", "user", "We ship the billing fix on Friday. Everything else can wait."),
        ("r1", "assistant", "Understood, Friday it is. I will prepare the release notes."),
        *[(f"x{i}", "user", "filler " * 30) for i in range(5)],
    )
    request = {
        "messages": window,
        "direction": {"activeGoal": "ship billing fix"},
        "budget": {"limit": 220},
        # Recall off: with it on, the relevant sentence comes back as a recalled passage
        # (tests/test_context_recall.py) and the summary has nothing left to say.
        "options": {"keepRecentTurns": 1, "recallShare": 0},
    }
    pack = build_context(request)
    summary = entry(pack, "summary")
    assert summary.layer == "L2" and summary.compressed
    assert "We ship the billing fix on Friday." in summary.content
    originals = [m["content"] for m in window]
    assert all(any(line in text for text in originals) for line in summary.content.split("\n"))


def test_secrets_are_redacted_before_they_reach_the_pack() -> None:
    secret = "sk-ant-api03-abcdefghijklmnopqrstuvwx"
    pack = build_context(
        {
            "messages": msgs(("u1", "user", f"my key is {secret}")),
            "memory": [{"id": "m", "text": "password=hunter2hunter2"}],
        }
    )
    text = pack.to_json()
    assert secret not in text and "hunter2hunter2" not in text
    assert "[REDACTED]" in entry(pack, "message").content


def test_events_are_deduplicated_and_decay_with_age() -> None:
    events = [
        {"id": "e1", "kind": "Deployed", "text": "service deployed", "atMs": 1_000},
        {"id": "e2", "kind": "Deployed", "text": "service deployed", "atMs": 2_000},
        {"id": "e3", "kind": "Alert", "text": "cpu high", "atMs": 10_000_000},
    ]
    pack = build_context({"events": events, "nowMs": 10_000_000})
    assert ids(pack, "event") == ["e2", "e3"]
    scores = {e.sources[0]: e.score for e in pack.entries()}
    assert scores["e3"] > scores["e2"]


def test_the_build_emits_its_events_in_order_with_a_duration() -> None:
    seen: list[Any] = []
    noise = "\n".join(f"line {i}" for i in range(400))
    build_context(
        {"toolOutputs": [{"id": "o", "tool": "t", "content": noise}], "causationId": "ev-9"},
        emit=seen.append,
        clock=FixedClock(step_ms=7),
    )
    kinds = [e.kind for e in seen]
    assert kinds == ["ContextBuildingStarted", "CompressionApplied", "ContextPackBuilt"]
    assert all(e.causation_id == "ev-9" for e in seen)
    assert seen[-1].duration_ms == 7
    assert isinstance(seen[1], CompressionApplied)


def test_custom_ranker_compressor_and_layer_plug_in() -> None:
    class Reverse:
        def score(self, query: str, documents: Any) -> list[float]:
            return [float(i) for i in range(len(documents))]

    class FirstLine:
        name = "first_line"

        def compress(self, text: str, *, limit: int, tokenizer: Any) -> list[tuple[int, int]]:
            return [(0, text.index("\n"))]

    class Notes:
        name = "notes"

        def entries(self, request: ContextRequest) -> list[ContextEntry]:
            return [
                ContextEntry(
                    id="n", layer="notes", kind="extension", content="hi", sources=("n",), tokens=0
                )
            ]

    pack = build_context(
        {"toolOutputs": [{"id": "o", "tool": "t", "content": "head\n" + "x " * 2000}]},
        ranker=Reverse(),
        compressors={"tool_output": FirstLine()},
        layers=[Notes()],
    )
    assert entry(pack, "tool_output").content == "head"
    assert pack.layers["notes"][0].content == "hi"
    assert pack.layers["notes"][0].tokens > 0


def test_a_compressor_that_writes_outside_its_input_is_refused() -> None:
    class Bad:
        name = "bad"

        def compress(self, text: str, *, limit: int, tokenizer: Any) -> list[tuple[int, int]]:
            return [(5, 2)]

    events: list[Any] = []
    with pytest.raises(ContextBuildingFailed, match="spans") as caught:
        build_context(
            {"toolOutputs": [{"id": "o", "tool": "t", "content": "x " * 2000}]},
            compressors={"tool_output": Bad()},
            emit=events.append,
        )
    assert isinstance(caught.value.__cause__, ValueError)
    assert events[-1].kind == "ContextBuildingFailed" and events[-1].needed is None


def test_router_context_has_its_own_l2_and_no_execution_context() -> None:
    call = {"id": "c", "name": "shell", "arguments": "rm -rf /tmp/x"}
    pack = build_router_context(
        {
            "messages": [
                {"id": "u1", "role": "user", "content": "clean up"},
                {"id": "a1", "role": "assistant", "toolCalls": [call]},
                {"id": "t1", "role": "tool", "toolCallId": "c", "content": "removed"},
                {"id": "r1", "role": "assistant", "content": "Cleaned."},
            ],
            "input": "clean up",
            "routerMemory": [{"id": "rm1", "text": "stage cleanup finished", "layer": "L3"}],
        }
    )
    assert ids(pack) == ["u1", "r1", "rm1"]
    assert [e.layer for e in pack.entries()][-1] == "L2"
    assert "removed" not in pack.to_json()


def test_budget_default_is_eight_thousand() -> None:
    assert Budget().limit == 8000


def test_a_long_tool_loop_never_drops_the_request_at_its_head() -> None:
    # The incident spec 003 was written after: a ten-iteration tool loop under a small
    # window dropped its head, which was the person's request.
    window: list[dict[str, Any]] = [{"id": "req", "role": "user", "content": "Audit the repo."}]
    for i in range(10):
        call = {"id": f"c{i}", "name": "read", "arguments": {"path": f"src/{i}.py"}}
        window.append({"id": f"a{i}", "role": "assistant", "toolCalls": [call]})
        window.append(
            {"id": f"t{i}", "role": "tool", "toolCallId": f"c{i}", "content": "x = 1\n" * 40}
        )
    window.append({"id": "drop", "role": "user", "author": "drop_notice", "content": "Dropped."})
    pack = build_context({"messages": window, "input": "Audit the repo.", "budget": {"limit": 260}})
    kept = ids(pack, "message")
    assert kept[0] == "req"
    assert pack.compression_metadata.anchor == "req"
    dropped = [d for d in pack.compression_metadata.dropped if d.reason == "over_budget"]
    assert dropped and dropped[0].first == "a0"
    assert all((f"a{i}" in kept) == (f"t{i}" in kept) for i in range(10))


def test_error_tool_outputs_rank_first() -> None:
    outputs = [
        {"id": "ok", "tool": "test", "content": "all green", "seq": 2},
        {"id": "bad", "tool": "test", "content": "3 failed", "isError": True, "seq": 1},
    ]
    pack = build_context({"toolOutputs": outputs, "budget": {"limit": 15}})
    assert ids(pack, "tool_output") == ["bad"]
