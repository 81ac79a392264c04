"""The runtime's options are described once, by `RuntimeConfig` (issue 21.5).

Python's keywords, the page's option table (generated), the data the bridge validates and
the declarations in web/agrun.d.ts all come from it or are checked against it here.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path
from typing import Any, get_type_hints

import pytest

import agrun
from agrun import ConfigError
from agrun.kernel import RuntimeConfig, RuntimeOptions, page_options
from agrun.testing import FixedClock, SequentialIds

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"


def _block(text: str, start: str) -> str:
    """The body of the ``{ ... }`` that follows ``start``."""
    at = text.index(start)
    open_at = text.index("{", at)
    depth = 0
    for index in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[open_at + 1 : index]
    raise AssertionError(f"{start!r} has no end")


def _names(body: str) -> set[str]:
    """The names declared at the block's own level (two spaces in)."""
    return set(re.findall(r"^ {2}(?:readonly )?(\w+)\??:", body, flags=re.MULTILINE))


def test_the_declarations_name_exactly_the_models_options_and_the_pages_own() -> None:
    dts = (WEB / "agrun.d.ts").read_text(encoding="utf-8")
    declared = set().union(
        *(
            _names(_block(dts, f"export interface {name}"))
            for name in ("RuntimeOptionsBase", "InPageHooks", "WorkerRuntimeOptions")
        )
    )
    page_own = _names(_block((WEB / "agrun.js").read_text(encoding="utf-8"), "PAGE_OPTIONS"))
    model = {option.name for option in page_options()}
    assert not page_own & model, "an option is both the page's own and the runtime's"
    assert model - declared == set(), "options of RuntimeConfig that agrun.d.ts lacks"
    assert declared - model - page_own == set(), "declared options that nothing takes"


def test_the_pages_option_table_is_generated_from_the_model() -> None:
    render_options = runpy.run_path(str(ROOT / "tools" / "gen_schemas.py"))["render_options"]
    committed = (WEB / "runtime-options.js").read_text(encoding="utf-8")
    assert committed == render_options(), "run tools/gen_schemas.py"


# The keyword takes what the model keeps in a narrower type (any iterable of skills, any
# mapping): everything else is typed alike.
WIDER = {"skills", "compressors", "content_store", "sync"}


def test_the_typed_keywords_are_the_models_fields() -> None:
    hints = get_type_hints(RuntimeOptions)
    fields = get_type_hints(RuntimeConfig)
    assert set(hints) == set(RuntimeConfig.model_fields)
    differ = {name for name in hints if hints[name] != fields[name]}
    assert differ == WIDER


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"maxCycles": 0}, "maxCycles must be a positive int, got 0"),
        ({"skillTimeoutMs": -5}, "skillTimeoutMs must be a positive number, got -5"),
        ({"rememberObservations": "yes"}, "rememberObservations must be a bool, got 'yes'"),
        ({"contentStore": {"maxEntries": 0}}, "contentStore maxEntries must be a positive int"),
        ({"contentStore": {"maxEntry": 3}}, "contentStore maxEntry: Extra inputs"),
        ({"memoryExtraction": "all"}, "memoryExtraction must be auto, model, rules or off"),
        ({"sessionId": " "}, "sessionId must be a non-empty string"),
        ({"max_cycles": 3}, r"unknown runtime option\(s\): max_cycles"),
        ({"onEvent": True}, r"unknown runtime option\(s\): onEvent"),
    ],
)
def test_a_pages_bad_data_is_refused_by_its_own_name(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{message}"):
        RuntimeConfig.from_page(data)


def test_a_pages_data_is_read_in_its_own_spelling_and_units() -> None:
    events: list[object] = []
    config = RuntimeConfig.from_page(
        {"skillTimeoutMs": 2500, "contentStore": {"maxEntries": 3, "keepToolOutputs": True}},
        on_event=events.append,
    )
    assert config.skill_timeout_s == 2.5 and config.on_event == events.append
    assert not isinstance(config.content_store, bool)
    limits = config.content_store.limits()
    assert (limits.max_entries, limits.max_bytes, limits.keep_tool_outputs) == (3, 1_000_000, True)


def test_python_takes_its_own_spelling_only() -> None:
    with pytest.raises(ConfigError, match=r"^unknown runtime option\(s\): maxCycles$"):
        agrun.create_runtime(maxCycles=3)  # type: ignore[call-arg]


@pytest.mark.parametrize("remember", [True, False])
async def test_the_checked_options_reach_the_runtime(remember: bool) -> None:
    runtime = agrun.create_runtime(
        clock=FixedClock(),
        ids=SequentialIds(),
        content_store={"max_entries": 1},
        remember_observations=remember,
    )
    for text in ("one", "two"):
        assert (await runtime.run(text)).ok
    assert [entry.body for entry in runtime.content_entries] == ["echo: two"]
    assert len(runtime.memory.read_all()) == (2 if remember else 0)


def test_model_options_are_checked_without_a_provider_too() -> None:
    with pytest.raises(ConfigError, match=r"^max_reply_tokens \(9000\) must leave room"):
        agrun.create_runtime(max_reply_tokens=9000)
    with pytest.raises(ConfigError, match=r"^temperature must be a number >= 0 or None"):
        agrun.create_runtime(temperature=-1)
