"""What-if (issue 22.5): a recorded call's pack rebuilt under another budget, window or
tokenizer, no model called, and the diff checked entry by entry against what a run under
that setting really sends."""

from __future__ import annotations

from typing import Any

import pytest

import agrun
from agrun.chat import Finish, ModelRequest, TextDelta
from agrun.context import default_tokenizer
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider
from conftest import make_runtime

COLOURS = ["red", "blue", "green", "pink"]
SAID = [
    f"Remember: my {COLOURS[i % 4]} box number {i} holds {i * 7} marbles." for i in range(12)
] + ["How many marbles are in the red box?"]


def okay(request: ModelRequest) -> list[Any]:
    # No usage: calibration stays at 1.0, so a window gives a known budget.
    return [TextDelta(text="Okay."), Finish(reason="stop")]


async def conversation(**options: Any) -> tuple[agrun.Runtime, str]:
    runtime = make_runtime(
        provider=ScriptedProvider(okay),
        model="scripted",
        storage=MemoryStorage(),
        memory_extraction="rules",
        **options,
    )
    for said in SAID:
        result = await runtime.run(said)
    return runtime, result.state.run_id


async def test_the_recorded_setting_rebuilds_the_recorded_pack() -> None:
    runtime, run_id = await conversation()
    same = runtime.what_if(run_id)
    call = runtime.why(run_id).calls[-1]
    assert same.faithful and same.setting == {}
    assert [c.id for c in same.kept] == [e.id for e in call.entries]
    assert not (same.dropped or same.added or same.compressed or same.merged_into_l3)
    assert all(before == after for before, after in same.tokens_per_layer.values())


@pytest.mark.parametrize("setting", [{"budget": 250}, {"window": 250 + 512}])
async def test_a_smaller_budget_is_what_a_run_under_it_sends_entry_by_entry(
    setting: dict[str, int],
) -> None:
    wide, run_id = await conversation()
    # The same conversation on a model whose window leaves 250 tokens for the pack.
    narrow, narrow_id = await conversation(context_window=250 + 512)
    really = narrow.why(narrow_id).calls[-1]
    assert really.budget_limit == 250
    recorded = wide.why(run_id).calls[-1]
    diff = wide.what_if(run_id, **setting)
    assert diff.faithful and diff.budget_after == (really.budget_used, really.budget_limit)
    assert diff.budget_before == (recorded.budget_used, recorded.budget_limit)
    sent = {e.id: e for e in really.entries}
    kept = {c.id: c for c in diff.kept}
    dropped = {c.id: c for c in diff.dropped}
    for entry in recorded.entries:
        if entry.id in sent:
            assert kept[entry.id].tokens_after == sent[entry.id].tokens == entry.tokens
        else:
            assert dropped[entry.id].tokens_before == entry.tokens
            assert dropped[entry.id].reason in {"over_budget", "moved_to_l3"}
    assert set(kept) | set(dropped) == {e.id for e in recorded.entries}
    assert {c.id for c in diff.added} == set(sent) - {e.id for e in recorded.entries}
    assert diff.merged_into_l3 == tuple(
        i for i in really.moved_to_l3 if i not in set(recorded.moved_to_l3)
    )
    assert diff.merged_into_l3, "a smaller budget caps L2 lower: older memory merges into L3"
    for moved in diff.merged_into_l3:
        assert dropped[f"memory:{moved}"].reason == "moved_to_l3"
    layers = {*recorded.tokens_per_layer, *really.tokens_per_layer}
    assert diff.tokens_per_layer == {
        layer: (recorded.tokens_per_layer.get(layer, 0), really.tokens_per_layer.get(layer, 0))
        for layer in layers
    }


async def test_a_wider_window_lets_what_was_dropped_back_in() -> None:
    narrow, run_id = await conversation(context_window=250 + 512)
    recorded = narrow.why(run_id).calls[-1]
    left_out = {d.first for d in recorded.dropped if d.reason == "over_budget"}
    assert left_out
    diff = narrow.what_if(run_id, window=8192)
    assert not diff.dropped and diff.budget_after[1] == 8192 - 512
    added = {c.id for c in diff.added}
    assert {f"message:{first}" for first in left_out if first.startswith("run-")} <= added


class Doubled:
    """Counts twice what the default estimator counts."""

    def __init__(self) -> None:
        self._inner = default_tokenizer()

    def count(self, text: str) -> int:
        return 2 * self._inner.count(text)


async def test_another_tokenizer_recounts_every_entry() -> None:
    runtime, run_id = await conversation()
    diff = runtime.what_if(run_id, tokenizer=Doubled())
    assert diff.setting == {"tokenizer": "Doubled"}
    assert diff.kept
    for change in (*diff.kept, *diff.compressed):
        assert change.tokens_after == 2 * (change.tokens_before or 0)


async def test_bad_settings_are_refused() -> None:
    runtime, run_id = await conversation()
    with pytest.raises(agrun.ConfigError, match="budget"):
        runtime.what_if(run_id, budget=0)
    with pytest.raises(agrun.ConfigError, match="call"):
        runtime.what_if(run_id, call=5)
    with pytest.raises(agrun.TraceNotFound):
        runtime.what_if("run-404", budget=100)
