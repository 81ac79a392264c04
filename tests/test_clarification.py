"""Clarification as a last resort, done right (spec 000, "Clarification Boundary"; issue 18):
evidence answers only the missing input it is about, evidence merged into the summary still
counts, and a pending clarification is resolved only by a turn that answers it."""

from __future__ import annotations

from typing import Any

import pytest

import agrun
from agrun import FunctionSkill, SkillContext, SkillHelpers
from agrun.chat import ModelRequest
from agrun.context import default_tokenizer
from agrun.memory import ClarificationDecision
from agrun.memory._clarification import ClarificationAsk, decide_clarification
from agrun.memory._extraction import Extraction
from agrun.memory._session_memory import rebuild
from agrun.memory._slots import slot_of
from agrun.testing import ScriptedProvider
from conftest import make_runtime


def asking(question: str, missing: str, seen: list[ClarificationDecision]) -> FunctionSkill:
    """A skill that needs ``missing``: it asks the runtime whether to put ``question``."""

    def run(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        decision = helpers.ask_clarification(question, missing=missing)
        seen.append(decision)
        return question if decision.ask else f"going on with: {decision.value}"

    return FunctionSkill("ask", run)


# -- (a) evidence answers only the missing input it is about -------------------------------------


async def test_a_fact_that_shares_a_word_with_the_request_does_not_answer_a_date() -> None:
    seen: list[ClarificationDecision] = []
    runtime = make_runtime(asking("Which date?", "date", seen))
    await runtime.run("My name is Ana and I live in Lisbon.")
    result = await runtime.run("book a hotel in Lisbon", skill="ask")
    assert seen[-1].ask and seen[-1].reason == "ask"
    assert result.output == "Which date?"
    assert runtime.inquiry is not None and runtime.inquiry.pending_clarification is not None


async def test_evidence_holding_a_date_answers_the_date() -> None:
    seen: list[ClarificationDecision] = []
    runtime = make_runtime(asking("Which date?", "date", seen))
    await runtime.run("My name is Ana and I live in Lisbon. We decided the trip is on 12 May.")
    result = await runtime.run("book a hotel in Lisbon", skill="ask")
    assert not seen[-1].ask and seen[-1].reason == "evidence"
    assert seen[-1].value == "We decided the trip is on 12 May."
    assert result.output == "going on with: We decided the trip is on 12 May."
    assert runtime.inquiry is not None and runtime.inquiry.pending_clarification is None


async def test_evidence_naming_the_missing_input_answers_it() -> None:
    seen: list[ClarificationDecision] = []
    runtime = make_runtime(asking("What is your name?", "name", seen))
    await runtime.run("I live in Lisbon. My name is Ana.")
    await runtime.run("book a hotel in Lisbon", skill="ask")
    assert not seen[-1].ask and seen[-1].value == "My name is Ana."


async def test_evidence_without_the_missing_inputs_word_or_kind_does_not_answer() -> None:
    seen: list[ClarificationDecision] = []
    runtime = make_runtime(asking("Which room type?", "room type", seen))
    await runtime.run("I prefer quiet hotels in Lisbon.")
    await runtime.run("book a quiet hotel in Lisbon", skill="ask")
    assert seen[-1].ask


# -- (b) evidence merged into the summary counts ------------------------------------------------


def _filler(turn: int) -> str:
    return " ".join(
        f"My favourite walk number {turn}-{n} is the long quiet path north of the old harbour."
        for n in range(20)
    )


async def _dentist_in_the_summary(runtime: agrun.Runtime) -> None:
    await runtime.run("I have a dentist called Dr Silva.")
    for turn in range(4):
        await runtime.run(_filler(turn))
    memory = runtime.session_memory
    assert memory is not None
    assert "Dr Silva" in memory.summary
    assert all("Dr Silva" not in item.text for _, item in memory.items())


async def test_a_recall_answered_by_the_summary_is_not_asked_and_the_signal_finds_it() -> None:
    seen: list[ClarificationDecision] = []
    states: list[Any] = []
    skill = asking("Who is your dentist?", "dentist", seen)

    def recall(input: str, context: SkillContext, helpers: SkillHelpers) -> Any:
        states.append(context.state)
        return skill.run(input, context, helpers)

    runtime = make_runtime(FunctionSkill("recall", recall))
    await _dentist_in_the_summary(runtime)
    result = await runtime.run("Who is my dentist?", skill="recall")
    assert not seen[-1].ask and seen[-1].reason == "evidence"
    assert seen[-1].value == "I have a dentist called Dr Silva."
    assert result.output == "going on with: I have a dentist called Dr Silva."
    signal = states[-1].read_attempt_signal
    assert signal is not None and signal.found and signal.sources == ("summary",)


async def test_a_summary_that_does_not_hold_it_still_asks() -> None:
    seen: list[ClarificationDecision] = []
    runtime = make_runtime(asking("Who is your doctor?", "doctor", seen))
    await _dentist_in_the_summary(runtime)
    await runtime.run("Who is my doctor?", skill="ask")
    assert seen[-1].ask


# -- (c) a pending clarification is resolved only by a turn that answers it ----------------------


def booking_model(requests: list[ModelRequest]) -> ScriptedProvider:
    def reply(request: ModelRequest) -> str:
        requests.append(request)
        return "ok"

    return ScriptedProvider(reply)


def direction_of(request: ModelRequest) -> list[str]:
    system = request.messages[0].content or ""
    if "## Direction\n" not in system:
        return []
    block = system.split("## Direction\n", 1)[1].split("\n\n", 1)[0]
    return block.splitlines()


async def test_a_memory_command_leaves_the_pending_clarification_open() -> None:
    seen: list[ClarificationDecision] = []
    requests: list[ModelRequest] = []
    runtime = make_runtime(
        asking("Which date should I book?", "date", seen),
        provider=booking_model(requests),
        memory_extraction="rules",
    )
    await runtime.run("book a hotel in Lisbon", skill="ask")
    assert seen[-1].ask
    remembered = await runtime.run("remember: I like window seats")
    assert remembered.output == "I'll remember that: I like window seats"
    inquiry = runtime.inquiry
    assert inquiry is not None and inquiry.clarification_status == "pending"
    assert inquiry.pending_clarification is not None
    assert inquiry.pending_clarification.question == "Which date should I book?"
    assert inquiry.last_clarification_resolution is None
    listed = await runtime.run("what do you remember?")
    assert listed.output.startswith("I remember:")
    assert runtime.inquiry is not None and runtime.inquiry.clarification_status == "pending"
    # The model's next turn is told the question is still open, and no resolution.
    await runtime.run("hello")
    direction = direction_of(requests[-1])
    assert "- pendingClarification: Which date should I book?" in direction
    assert not any("lastClarificationResolution" in line for line in direction)
    # An answer that supplies the date resolves it.
    await runtime.run("the 12th of May")
    inquiry = runtime.inquiry
    assert inquiry is not None and inquiry.pending_clarification is None
    assert inquiry.last_clarification_resolution is not None
    assert inquiry.last_clarification_resolution.answer == "the 12th of May"


async def test_a_turn_without_the_asked_for_input_leaves_it_pending() -> None:
    seen: list[ClarificationDecision] = []
    runtime = make_runtime(asking("Which date should I book?", "date", seen))
    await runtime.run("book a hotel in Lisbon", skill="ask")
    await runtime.run("I live in Lisbon.")
    inquiry = runtime.inquiry
    assert inquiry is not None and inquiry.clarification_status == "pending"
    await runtime.run("tomorrow")
    inquiry = runtime.inquiry
    assert inquiry is not None and inquiry.clarification_status == "resolved"
    assert inquiry.last_clarification_resolution is not None
    assert inquiry.last_clarification_resolution.answer == "tomorrow"


async def test_an_open_question_is_answered_by_a_statement_or_one_of_its_options() -> None:
    def ask(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        helpers.ask_clarification("Which city?", missing="city", options=("Porto", "Faro"))
        return "Which city?"

    runtime = make_runtime(FunctionSkill("ask", ask))
    await runtime.run("find me a hotel", skill="ask")
    await runtime.run("what is the weather like?")
    assert runtime.inquiry is not None and runtime.inquiry.clarification_status == "pending"
    await runtime.run("faro, please?")
    inquiry = runtime.inquiry
    assert inquiry is not None and inquiry.last_clarification_resolution is not None
    assert inquiry.last_clarification_resolution.answer == "faro, please?"


# -- the slot rule itself: pure, by words and value shapes ---------------------------------------


@pytest.mark.parametrize(
    ("missing", "text", "held"),
    [
        ("date", "We fly on 12 May.", True),
        ("date", "on May 12th", True),
        ("date", "2024-05-12", True),
        ("date", "12/05/2024 works", True),
        ("travel date", "next Friday", True),
        ("date", "some time in June", True),
        ("date", "tomorrow", True),
        ("date", "My name is Ana and I live in Lisbon.", False),
        ("date", "I may come later.", False),
        ("date", "I have 2 cats.", False),
        ("date", "We decided to pick a date soon.", False),
        ("time", "at 9:30", True),
        ("time", "at 7pm", True),
        ("time", "in the evening", False),
        ("email", "write to ana@example.org", True),
        ("email", "my email is private", False),
        ("phone number", "call +351 912 345 678", True),
        ("phone number", "I have 2 phones", False),
        ("number of guests", "we are four", True),
        ("dentist", "My dentists are in Porto.", True),
        ("dentist", "I live in Porto.", False),
        ("", "anything at all", False),
    ],
)  # fmt: skip
def test_a_text_holds_a_missing_input_by_its_kind_or_its_words(
    missing: str, text: str, held: bool
) -> None:
    assert slot_of(missing).held_by(text) is held


def test_of_several_sentences_holding_the_input_the_one_naming_it_wins() -> None:
    said = Extraction(
        facts=("My birthday is 3 June.",), decisions=("We decided the trip is on 12 May.",)
    )
    memory = rebuild(None, said, source="m1", run_id="r1", tokenizer=default_tokenizer())
    ask = ClarificationAsk(question="When do you travel?", missing="trip date")
    decision = decide_clarification(ask, said="book a hotel", memory=memory)
    assert decision.value == "We decided the trip is on 12 May."
    birthday = ClarificationAsk(question="When is your birthday?", missing="birthday")
    assert decide_clarification(birthday, said="plan a party", memory=memory).value == (
        "My birthday is 3 June."
    )
    assert decide_clarification(ask, said="book a hotel", memory=None).ask
