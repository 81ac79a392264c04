"""The builds' memo (`BuildMemo`): a build that takes entries from it gives the pack, and the
digest, that a build without it gives, byte for byte; and it does take them.

A session's log grows a turn at a time, and the runtime builds from it with one memo: here
every prefix of a random history is built in turn with one memo, its redactor, tokenizer
and "today" changed between builds (each changes what a message's entry is), and each pack
is checked against a build of the same request without a memo.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agrun.context import (
    BuildMemo,
    ContextPack,
    ContextPackBuilt,
    ContextRequest,
    EstimatingTokenizer,
    PatternRedactor,
    build_context,
)
from agrun.context._recall_text import DAY_MS
from test_context_properties import SETTINGS, histories

DAY = 20_000 * DAY_MS


class Shouting:
    """A redactor that gives other text than the default one, for every message."""

    def redact(self, text: str) -> str:
        return text.upper()


def built(request: ContextRequest, **hooks: Any) -> tuple[ContextPack | None, str | None]:
    """The pack (None if the build failed) and the digest its event carried."""
    events: list[Any] = []
    try:
        pack = build_context(request, emit=events.append, **hooks)
    except Exception:
        return None, None
    digests = [e.pack_digest for e in events if isinstance(e, ContextPackBuilt)]
    return pack, digests[0]


@st.composite
def dated_histories(draw: Any) -> dict[str, Any]:
    """A history whose messages were said over a few days (so some open one)."""
    raw: dict[str, Any] = draw(histories())
    at = DAY
    for message in raw["messages"]:
        at += draw(st.sampled_from([0, 60_000, DAY_MS]))
        message["atMs"] = at
    return raw


@SETTINGS
@given(dated_histories(), st.lists(st.integers(0, 5), min_size=1, max_size=40))
def test_a_growing_log_built_with_one_memo_gives_the_packs_built_without_it(
    raw: dict[str, Any], settings: list[int]
) -> None:
    whole = ContextRequest.model_validate(raw)
    memo = BuildMemo()
    redactors = [PatternRedactor(), Shouting()]
    tokenizers = [EstimatingTokenizer(), EstimatingTokenizer(margin=0.5)]
    for end in range(1, len(whole.messages) + 1):
        setting = settings[end % len(settings)]
        hooks = {"redactor": redactors[setting % 2], "tokenizer": tokenizers[setting // 2 % 2]}
        # "Today" moves, so the first message opens a day in some builds and not others.
        now = whole.messages[0].at_ms + (DAY_MS if setting >= 4 else 0)
        request = whole.model_copy(update={"messages": whole.messages[:end], "now_ms": now})
        plain, plain_digest = built(request, **hooks)
        kept, kept_digest = built(request, memo=memo, **hooks)
        assert (kept and kept.to_json()) == (plain and plain.to_json())
        assert kept_digest == plain_digest


def turn_request(turns: int) -> ContextRequest:
    messages: list[dict[str, Any]] = []
    for n in range(turns):
        messages.append({"id": f"u{n}", "role": "user", "content": f"question {n} about Paris"})
        messages.append({"id": f"a{n}", "role": "assistant", "content": f"answer {n}: it rains"})
    messages.append({"id": "now", "role": "user", "content": "and tomorrow?"})
    return ContextRequest.model_validate(
        {"messages": messages, "input": "and tomorrow?", "budget": {"limit": 4000}}
    )


def message_entries(pack: ContextPack) -> dict[str, Any]:
    return {e.sources[0]: e for e in pack.entries() if e.kind == "message"}


def test_the_next_build_takes_the_entries_the_last_one_made() -> None:
    first_request = turn_request(10)
    memo = BuildMemo()
    first = message_entries(build_context(first_request, memo=memo))
    # The next turn: the same messages, and the turn that followed.
    more = turn_request(11).messages[-3:]
    grown = first_request.model_copy(
        update={"messages": (*first_request.messages[:-1], *more), "input": "and tomorrow?"}
    )
    second = message_entries(build_context(grown, memo=memo))
    assert set(first) - {"now"} <= set(second)
    assert all(second[key] is first[key] for key in first if key != "now")
    # The same log, another redactor: nothing is taken, and what is made is its own.
    shouted = message_entries(build_context(grown, memo=memo, redactor=Shouting()))
    assert all(shouted[key] is not second[key] for key in second)
    assert shouted["u0"].content == "QUESTION 0 ABOUT PARIS"


def test_a_message_replaced_at_its_position_is_made_again() -> None:
    request = turn_request(3)
    memo = BuildMemo()
    build_context(request, memo=memo)
    messages = list(request.messages)
    messages[1] = messages[1].model_copy(update={"content": "answer 0: it snows"})
    changed = build_context(request.model_copy(update={"messages": tuple(messages)}), memo=memo)
    assert message_entries(changed)["a0"].content == "answer 0: it snows"


def test_a_pack_s_json_is_its_canonical_json() -> None:
    import json

    raw = turn_request(4).model_dump(by_alias=True)
    raw["systemPrompt"] = "Réponds en français, ☂ compris."
    raw["direction"] = {"activeGoal": {"b": 1, "a": [2.5, None]}}
    pack = build_context(ContextRequest.model_validate(raw))
    whole = json.dumps(
        pack.model_dump(by_alias=True, mode="json"),
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    assert pack.to_json() == whole
    assert pack.to_json(lambda entry: "{}") != whole


def test_a_full_memo_forgets_the_oldest_positions_first() -> None:
    memo = BuildMemo(limit=8)
    request = turn_request(10)  # 21 messages
    first = message_entries(build_context(request, memo=memo))
    assert len(memo) <= 8
    second = message_entries(build_context(request, memo=memo))
    # The newest messages were kept and taken again; the oldest were made anew.
    assert second["now"] is first["now"] and second["a9"] is first["a9"]
    assert second["u0"] is not first["u0"]
    assert build_context(request, memo=memo).to_json() == build_context(request).to_json()
    with pytest.raises(ValueError, match="at least 1"):
        BuildMemo(limit=0)
