"""Replay (spec 001 section 13): same inputs, same pack, byte for byte; recorded
compressions rebuild the same pack without running a compressor."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from pydantic import TypeAdapter

from agrun.context import (
    CompressionApplied,
    ContextBuildingFailed,
    ContextEvent,
    ContextPackBuilt,
    ContextRequest,
    build_context,
)
from agrun.testing import FixedClock


def request() -> ContextRequest:
    log = "\n".join(f"step {i}: copied file_{i}.txt" for i in range(300))
    messages: list[dict[str, Any]] = []
    for i in range(40):
        ask = f"Sync folder {i}. Then report."
        messages.append({"id": f"u{i}", "role": "user", "content": ask})
        call = {"id": f"c{i}", "name": "sync", "arguments": {"folder": i}}
        messages.append({"id": f"a{i}", "role": "assistant", "toolCalls": [call]})
        result = f"{log}\nERROR: folder {i} had 1 conflict\nstatus: partial"
        messages.append({"id": f"t{i}", "role": "tool", "toolCallId": f"c{i}", "content": result})
        messages.append({"id": f"r{i}", "role": "assistant", "content": f"Folder {i} synced."})
    return ContextRequest.model_validate(
        {
            "messages": messages,
            "input": "Sync folder 39. Then report.",
            "direction": {"activeGoal": "sync all folders", "activeQuery": "conflicts"},
            "artifacts": [{"id": "r1", "name": "report", "content": log}],
            "budget": {"limit": 1500},
        }
    )


class Exploding:
    name = "exploding"

    def compress(self, text: str, *, limit: int, tokenizer: Any) -> list[tuple[int, int]]:
        raise AssertionError("a replay must not run compressors")


def test_the_same_request_gives_byte_identical_packs() -> None:
    first = build_context(request(), clock=FixedClock())
    second = build_context(request(), clock=FixedClock(start_ms=5, step_ms=99))
    assert first.to_json() == second.to_json()
    assert first.model_dump_json(by_alias=True) == second.model_dump_json(by_alias=True)


def test_a_recorded_event_stream_rebuilds_the_same_pack() -> None:
    recorded: list[Any] = []
    original = build_context(request(), emit=recorded.append)
    # The stream crosses a process boundary as JSON and comes back as typed events.
    adapter = TypeAdapter(ContextEvent)
    stream = [adapter.validate_json(adapter.dump_json(e, by_alias=True)) for e in recorded]
    compressions = [e for e in stream if isinstance(e, CompressionApplied)]
    built = next(e for e in stream if isinstance(e, ContextPackBuilt))
    assert compressions and compressions[0].records

    replayed = build_context(
        request(),
        replay=compressions,
        compressors={"tool_output": Exploding(), "artifact": Exploding()},
    )
    assert hashlib.sha256(replayed.to_json().encode()).hexdigest() == built.pack_digest
    assert [e.content for e in replayed.entries()] == [e.content for e in original.entries()]


def test_replayed_spans_outside_the_input_are_refused() -> None:
    recorded: list[Any] = []
    build_context(request(), emit=recorded.append)
    compression = next(e for e in recorded if isinstance(e, CompressionApplied))
    bad = compression.records[0].model_copy(update={"spans": ((0, 10**9),)})
    with pytest.raises(ContextBuildingFailed, match="spans"):
        build_context(request(), replay=[bad])
