"""Recall keeps what answers, says when, and fills small budgets (issue 25).

What is checked: a long turn whose sentence sharing the question's words is not the one
holding the answer comes back with the sentence after it (and not whole), a turn of up to
120 tokens comes back whole (its answer may be further from the match); a recalled
turn is headed by the day it was said, counted in its tokens; a 500-token pack is filled
close to its limit by a shorter passage of a turn that did not fit, never over it by the
tokenizer's own count, and a replay of it is the same pack byte for byte.
"""

from __future__ import annotations

from typing import Any

from agrun.context import CompressionApplied, build_context, default_tokenizer, render_entry

DAY = 86_400_000
MONDAY = (19_786 * DAY) + DAY // 2  # 2024-03-04, noon

FILLER = [
    "Morning! Work has been relentless, three deadlines at once.",
    "Ha, classic. The neighbours had a party until late again.",
    "Honestly, what a day. My inbox is a disaster zone.",
    "Phew. The weekend went by in a flash.",
]
# The question's words are in the third sentence; the answer is in the fourth. Over 120
# tokens (the most a recalled turn costs whole), so recall cuts it.
SURVEY = (
    "Oh, hello. I spent the whole evening sorting old photos and found my school reports. "
    "The cat knocked a shelf of them onto the floor while I was on the phone to my sister. "
    "We got the results of the house survey back on Friday afternoon. "
    "The roof needs 18 new tiles and the boiler dates from 1989, so that is the savings gone. "
    "My cousin keeps saying old houses are a money pit, and I am starting to believe him. "
    "The kids want to paint their bedrooms bright orange this summer, which I am resisting. "
    "Anyway, how is your week going, and did the new job start?"
)


def log(*turns: tuple[str, str], at: int | None = MONDAY, fill: int = 40) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for mid, text in turns:
        out.append({"id": mid, "role": "user", "content": text, "author": "person"})
    for i in range(fill):
        out.append({"id": f"f{i}", "role": "user", "content": FILLER[i % len(FILLER)]})
    if at is not None:
        for i, message in enumerate(out):
            message["atMs"] = at + i * 3_600_000
    return out


def ask(messages: list[dict[str, Any]], question: str, limit: int) -> dict[str, Any]:
    asked = {"id": "q", "role": "user", "content": question, "author": "person"}
    return {"messages": [*messages, asked], "input": question, "budget": {"limit": limit}}


def recalled(pack: Any, source: str) -> Any:
    return next(e for e in pack.entries() if e.kind == "recalled_turn" and e.sources == (source,))


def test_the_sentence_after_the_match_comes_back_with_it() -> None:
    pack = build_context(ask(log(("t1", SURVEY)), "What did the house survey find?", 400))
    entry = recalled(pack, "t1")
    assert "We got the results of the house survey back" in entry.content
    # The answer, in the next sentence, shares no word with the question.
    assert "The roof needs 18 new tiles and the boiler dates from 1989" in entry.content
    # Still a passage: the opening small talk and the closing question are cut.
    assert entry.compressed and not entry.content.removeprefix("[2024-03-04] ").startswith("Oh")
    assert "how is your week going" not in entry.content


# A turn as people write them in a chat (LoCoMo's are often this long): 60-120 tokens, the
# question's words in its first sentence and the answer three sentences on.
CAMPING = (
    "Melanie: We finally went camping with the kids up at the lake last weekend! "
    "The drive was long and the little one was sick in the car twice, poor thing. "
    "But once we got there it was just perfect, quiet and green. "
    "We roasted marshmallows and the kids saw a family of otters by the jetty. "
    "Honestly it was the best weekend we have had all year."
)


def test_a_turn_of_up_to_120_tokens_comes_back_whole() -> None:
    assert 60 < default_tokenizer().count(CAMPING) <= 120
    pack = build_context(ask(log(("t1", CAMPING)), "Where did Melanie go camping?", 400))
    entry = recalled(pack, "t1")
    # Cut to the match and one sentence either side, the otters would be gone.
    assert not entry.compressed and "a family of otters" in entry.content
    assert entry.content == "[2024-03-04] " + CAMPING


def test_a_recalled_turn_carries_the_day_it_was_said() -> None:
    pack = build_context(ask(log(("t1", SURVEY)), "What did the house survey find?", 400))
    entry = recalled(pack, "t1")
    assert entry.content.startswith("[2024-03-04] ")
    # The date is in the content, so the budget counts it.
    assert entry.tokens == default_tokenizer().count(render_entry(entry))
    # A message without its time has no date to carry.
    undated = build_context(
        ask(log(("t1", SURVEY), at=None), "What did the house survey find?", 400)
    )
    assert not recalled(undated, "t1").content.startswith("[")


def _survey_log() -> list[dict[str, Any]]:
    # Many long turns that match the question, each costing more than the room a
    # 500-token pack has left once the others are in.
    turns = []
    for i in range(30):
        turns.append(
            (
                f"s{i}",
                f"Oh, hello. The survey of house number {i} came back. "
                f"The surveyor said the roof of house {i} needs {i + 10} new tiles and the "
                f"gutters want clearing before winter, which is no small job at all. "
                "We will see what the builders say about it when they come round next week.",
            )
        )
    # A long turn closes the window above them: they can only be recalled.
    turns.append(("long", "Right, so. " + "The weekend went by in a flash. " * 60))
    return log(*turns, fill=5)


def test_a_500_token_pack_is_filled_close_to_its_limit_and_never_over() -> None:
    request = ask(_survey_log(), "What did the surveyor say about the roof of the house?", 500)
    request["options"] = {"summaryMaxTokens": 0}
    events: list[Any] = []
    pack = build_context(request, emit=events.append)
    tokenizer = default_tokenizer()
    counted = sum(tokenizer.count(render_entry(e)) for e in pack.entries())
    assert counted == pack.budget_used <= 500
    # Within 5 % of it (without the short passage: 368 of 500).
    assert pack.budget_used >= 475
    # What filled the last of it: a turn's best sentence alone, recorded as such.
    records = pack.compression_metadata.records
    assert any(r.strategy == "short passage" for r in records)
    replayed = build_context(
        request, replay=[e for e in events if isinstance(e, CompressionApplied)]
    )
    assert replayed.to_json() == pack.to_json()


def _window(pack: Any) -> dict[str, str]:
    return {e.sources[0]: e.content for e in pack.entries() if e.kind == "message"}


def test_the_window_marks_where_each_day_begins() -> None:
    said = [
        ("a", MONDAY, "The plumber comes at nine."),
        ("b", MONDAY + 3_600_000, "Then I will stay in."),
        ("c", MONDAY + DAY, "He came late."),  # Tuesday: a new sitting
        ("d", MONDAY + DAY + 60_000, "How late?"),
    ]
    messages = [
        {"id": mid, "role": "user", "content": text, "author": "person", "atMs": at}
        for mid, at, text in said
    ]
    request = {"messages": messages, "input": "How late?", "budget": {"limit": 400}}
    window = _window(build_context({**request, "nowMs": MONDAY + DAY + 120_000}))
    assert window == {
        "a": "[2024-03-04] The plumber comes at nine.",
        "b": "Then I will stay in.",
        "c": "[2024-03-05] He came late.",
        "d": "How late?",
    }
    # Held today from the start: no marks at all.
    today = [{**m, "atMs": MONDAY + i} for i, m in enumerate(messages)]
    same_day = _window(build_context({**request, "messages": today, "nowMs": MONDAY + 10}))
    assert not any(content.startswith("[") for content in same_day.values())
    # The marks are in the entries, so the budget counts them.
    pack = build_context({**request, "nowMs": MONDAY + DAY})
    for entry in pack.entries():
        assert entry.tokens == default_tokenizer().count(render_entry(entry))
