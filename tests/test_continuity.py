"""Session continuity (spec 000, issue 12): the session memory loop, inquiry context,
clarification as a last resort, the memory commands, global memory behind the sensitive
filter, and redaction."""

from __future__ import annotations

import json
from typing import Any

import pytest

import agrun
from agrun import FunctionSkill, SkillContext, SkillHelpers
from agrun.chat import ModelRequest
from agrun.context import default_tokenizer
from agrun.memory._clarification import ClarificationAsk, decide_clarification
from agrun.memory._extraction import Extraction, extract_by_rules, parse_extraction
from agrun.memory._session_memory import SessionMemory, rebuild
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider, SequentialIds
from conftest import make_runtime

# -- the rule-based extractor ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("Hi! My name is Ann. How are you?", Extraction(facts=("My name is Ann.",))),
        ("I prefer green tea.", Extraction(preferences=("I prefer green tea.",))),
        ("Ok. We decided to ship.", Extraction(decisions=("We decided to ship.",))),
        ("remember: I live in Lyon", Extraction(facts=("I live in Lyon",))),
        ("Do I like tea?", Extraction()),
        ("What is the weather today", Extraction()),
    ],
)  # fmt: skip
def test_the_rules_pick_what_the_person_stated(said: str, expected: Extraction) -> None:
    assert extract_by_rules(said) == expected


def test_a_models_extraction_keeps_only_what_the_person_said() -> None:
    reply = json.dumps(
        {"facts": ["My name is Ann.", "Ann is 34."], "preferences": [], "decisions": []}
    )
    got = parse_extraction(f"Sure: {reply}", "Hello. My name is Ann.")
    assert got == Extraction(facts=("My name is Ann.",))


# -- session memory: rebuilt, not accumulated ---------------------------------------------------


def test_session_memory_is_rebuilt_a_restatement_replaces_and_caps_merge_into_the_summary() -> None:
    tok = default_tokenizer()
    memory: SessionMemory | None = None
    for n in range(60):
        said = Extraction(facts=(f"My favourite number is {n} for the project number {n}.",))
        memory = rebuild(memory, said, source=f"m{n}", run_id=f"r{n}", tokenizer=tok,
                         evidence_cap=100, summary_cap=120)  # fmt: skip
    assert memory is not None and memory.revision == 60
    assert sum(tok.count(e.text) for _, e in memory.items()) <= 100
    assert memory.summary and tok.count(memory.summary) <= 120
    assert memory.facts[-1].text.startswith("My favourite number is 59")
    again = rebuild(memory, Extraction(facts=(memory.facts[0].text,)), source="x", run_id="rx",
                    tokenizer=tok, evidence_cap=100, summary_cap=120)  # fmt: skip
    assert again.facts[-1].source == "x" and len(again.facts) == len(memory.facts)


def echoing(**options: Any) -> agrun.Runtime:
    return make_runtime(**options)


async def test_a_successful_turn_rebuilds_session_memory_and_a_failed_one_does_not() -> None:
    def boom(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        raise RuntimeError("no")

    store = MemoryStorage()
    runtime = make_runtime(FunctionSkill("boom", boom), storage=store)
    await runtime.run("Hello, my name is Ann. I prefer tea.")
    memory = runtime.session_memory
    assert memory is not None
    assert [e.text for e in memory.facts] == ["Hello, my name is Ann."]
    assert [e.text for e in memory.preferences] == ["I prefer tea."]
    failed = await runtime.run("We decided to fail. I hate this.", skill="boom")
    assert failed.state.status == "failed" and runtime.session_memory == memory
    snapshot = await store.load_session("default")
    assert snapshot is not None and snapshot.session_memory == memory.to_wire()


# -- the model's extraction -----------------------------------------------------------------------


def extraction_script(replies: list[str]) -> Any:
    def script(request: ModelRequest) -> str:
        if request.response_format is not None:
            return replies.pop(0)
        return "ok"

    return script


async def test_the_model_extracts_and_an_invalid_reply_is_corrected_once() -> None:
    good = json.dumps({"facts": ["My name is Ann."], "preferences": [], "decisions": []})
    provider = ScriptedProvider(extraction_script(["no json here", good]), extraction=True)
    runtime = make_runtime(provider=provider)
    result = await runtime.run("My name is Ann.")
    assert result.ok
    await runtime.idle()  # the extraction runs after the answer is out
    extraction_calls = [r for r in provider.requests if r.response_format is not None]
    assert len(extraction_calls) == 2
    correction = extraction_calls[1].messages
    assert [m.role for m in correction[-2:]] == ["assistant", "user"]
    assert runtime.session_memory is not None
    assert [e.text for e in runtime.session_memory.facts] == ["My name is Ann."]


async def test_twice_invalid_keeps_the_previous_session_memory_with_an_event() -> None:
    provider = ScriptedProvider(extraction_script(["nope", "still nope"]), extraction=True)
    events: list[Any] = []
    runtime = make_runtime(provider=provider, on_event=events.append)
    await runtime.run("My name is Ann.")
    await runtime.idle()
    assert runtime.session_memory is None
    kept = [e for e in events if e.kind == "SessionMemoryKept"]
    assert len(kept) == 1 and "refused" in kept[0].reason


async def test_with_global_memory_off_there_is_no_extraction_call() -> None:
    provider = ScriptedProvider(extraction_script([]), extraction=True)
    runtime = make_runtime(provider=provider, global_memory=False)
    await runtime.run("My name is Ann.")
    assert all(r.response_format is None for r in provider.requests)
    assert runtime.session_memory is not None and runtime.session_memory.facts


# -- inquiry context, context snapshot, read-attempt signal --------------------------------------


def _paths(value: Any, prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in [f"{prefix}{k}", *_paths(v, f"{prefix}{k}.")]]
    if isinstance(value, list):
        return [p for item in value for p in _paths(item, prefix)]
    return []


async def test_goal_topic_and_ambiguity_are_stored_in_one_place_each() -> None:
    store = MemoryStorage()

    def ask(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        decision = helpers.ask_clarification("Which city?", missing="city")
        return "Which city?" if decision.ask else "fine"

    runtime = make_runtime(
        FunctionSkill("ask", ask, applies=lambda i: "weather" in i), storage=store
    )
    await runtime.run("I want to plan a trip. Tell me about the weather.")
    snapshot = await store.load_session("default")
    assert snapshot is not None
    stored = {"sessionMemory": snapshot.session_memory, "inquiry": snapshot.inquiry}
    leaves = [p.rsplit(".", 1)[-1] for p in _paths(stored)]
    for field in ("activeGoal", "activeTopic", "activeQuery", "pendingClarification"):
        assert leaves.count(field) == 1, field
    for derived in ("clarificationStatus", "openAmbiguity", "ambiguityState"):
        assert derived not in leaves
    inquiry = runtime.inquiry
    assert inquiry is not None and inquiry.active_goal == "plan a trip"
    assert inquiry.active_topic == "the weather"
    assert inquiry.clarification_status == "pending" and inquiry.open_ambiguity == "city"
    await runtime.run("Paris")
    inquiry = runtime.inquiry
    assert inquiry is not None and inquiry.pending_clarification is None
    assert inquiry.last_clarification_resolution is not None
    assert inquiry.last_clarification_resolution.answer == "Paris"
    assert inquiry.clarification_status == "resolved" and inquiry.ambiguity_state == "closed"


async def test_the_run_state_carries_the_context_snapshot_and_the_read_attempt_signal() -> None:
    seen: list[Any] = []

    def look(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        seen.append(context.state)
        return "looked"

    runtime = make_runtime(FunctionSkill("look", look))
    await runtime.run("My name is Ann.")
    await runtime.run("What is my name?", skill="look")
    state = seen[-1]
    assert state.context_snapshot.session_memory is not None
    assert state.context_snapshot.session_memory.facts[0].text == "My name is Ann."
    signal = state.read_attempt_signal
    assert signal is not None and signal.kind == "evidence" and signal.found
    view = state.session_context_view
    assert view["facts"][0]["text"] == "My name is Ann."


# -- clarification is a last resort: each rule ---------------------------------------------------


@pytest.mark.parametrize(
    ("ask", "reason"),
    [
        (ClarificationAsk(question="Which unit?", missing="unit", optional=True), "optional"),
        (ClarificationAsk(question="Which unit?", missing="unit", default="metric"), "default"),
        (ClarificationAsk(question="Which city?", missing="city", direct_tool="gps"), "direct_tool"),  # noqa: E501
        (ClarificationAsk(question="Which name?", missing="name"), "evidence"),
        (ClarificationAsk(question="Which file?", missing="file"), "ask"),
    ],
)  # fmt: skip
def test_each_clarification_rule(ask: ClarificationAsk, reason: str) -> None:
    memory = rebuild(None, Extraction(facts=("My name is Ann.",)), source="m1", run_id="r1",
                     tokenizer=default_tokenizer())  # fmt: skip
    said = "what is my name?" if reason == "evidence" else "open it"
    decision = decide_clarification(ask, said=said, memory=memory)
    assert decision.reason == reason and decision.ask is (reason == "ask")


# -- remember:, what do you remember, forget -----------------------------------------------------


async def test_remember_list_and_forget_through_the_memory_contract() -> None:
    runtime = make_runtime(provider=ScriptedProvider(lambda r: "the model"))
    assert (await runtime.run("remember: my locker is 42")).output == (
        "I'll remember that: my locker is 42"
    )
    await runtime.run("remember: the cat is called Tom")
    listing = (await runtime.run("what do you remember?")).output
    assert listing == "I remember:\n- my locker is 42\n- the cat is called Tom"
    assert (await runtime.run("forget my locker")).output == "Forgotten: my locker is 42"
    assert (await runtime.run("what do you remember")).output == (
        "I remember:\n- the cat is called Tom"
    )
    kinds = [e.kind for e in runtime.memory.read_all()]
    assert kinds.count("note") == 2 and kinds.count("forget") == 1  # append-only


# -- global memory behind the sensitive-content filter -------------------------------------------


async def test_durable_facts_are_promoted_with_the_turn_and_read_by_another_session() -> None:
    store = MemoryStorage()
    first = make_runtime(storage=store, session_id="a", ids=SequentialIds())
    await first.run("Hi, my name is Ann and I live in Lyon.")
    rows = await store.read_global_memory()
    assert [r["text"] for r in rows] == ["Hi, my name is Ann and I live in Lyon."]
    second = make_runtime(storage=store, session_id="b")
    await second.open()
    assert [e.text for e in second.global_memory] == ["Hi, my name is Ann and I live in Lyon."]
    off = make_runtime(storage=store, session_id="c", global_memory=False)
    await off.run("My name is Bob.")
    assert len(await store.read_global_memory()) == 1 and off.global_memory == ()


@pytest.mark.parametrize(
    "entry",
    [
        {"text": "key sk-proj-abcdefghijklmnop1234567890"},
        {"text": "fine", "kind": "note", "apiKey": "anything"},
        "my password=hunter2222",
    ],
)
async def test_promotion_refuses_secrets(entry: Any) -> None:
    store = MemoryStorage()
    runtime = make_runtime(storage=store)
    promotion = await runtime.promote_to_global_memory([entry])
    assert promotion.promoted == () and len(promotion.refused) == 1
    assert await store.read_global_memory() == [] and runtime.global_memory == ()


async def test_the_hosts_sensitivity_filter_refuses_more_and_forget_tombstones() -> None:
    store = MemoryStorage()
    runtime = make_runtime(
        storage=store,
        sensitivity_filter=lambda entry: "patient ids" if "P-" in str(entry) else None,
    )
    refused = await runtime.promote_to_global_memory(["patient P-1234 is fine"])
    assert refused.promoted == () and "patient ids" in refused.refused[0]
    kept = await runtime.promote_to_global_memory(
        [{"text": "prefers metric", "kind": "preference"}]
    )
    assert [e.text for e in runtime.global_memory] == ["prefers metric"]
    assert await runtime.forget_global_memory(kept.promoted[0].id)
    assert runtime.global_memory == ()
    assert [r["kind"] for r in await store.read_global_memory()] == ["preference", "forget"]


# -- redaction ------------------------------------------------------------------------------


async def test_a_secret_in_the_input_is_masked_everywhere_it_would_be_kept() -> None:
    store = MemoryStorage()
    runtime = make_runtime(storage=store)
    result = await runtime.run("my password=hunter2222 ok")
    exported = await runtime.export_session()
    assert "hunter2222" not in json.dumps(result.to_wire())
    assert "hunter2222" not in exported
    assert result.output == "echo: my password=[REDACTED] ok"
    plain = make_runtime(storage=MemoryStorage(), redact_secrets=False)
    assert (await plain.run("my password=hunter2222 ok")).output.endswith("hunter2222 ok")


# -- the loop, end to end: a preference, 50 other turns, a reload, a recall question -------------


async def test_a_preference_survives_fifty_turns_and_a_reload_and_answers_a_recall() -> None:
    store = MemoryStorage()

    def model(request: ModelRequest) -> str:
        system = request.messages[0].content or ""
        if "## Preferences" in system and "drink" in (request.messages[-1].content or ""):
            line = system.split("## Preferences\n", 1)[1].splitlines()[0]
            return f"From what you told me: {line[2:]}"
        return "noted"

    first = make_runtime(provider=ScriptedProvider(model), storage=store, memory_extraction="rules")
    await first.run("Good morning! I prefer green tea over coffee.")
    for n in range(50):
        await first.run(f"Unrelated turn {n} about the weather in town {n}.")
    again = make_runtime(provider=ScriptedProvider(model), storage=store, memory_extraction="rules",
                         ids=SequentialIds())  # fmt: skip
    await again.open()
    result = await again.run("What do I prefer to drink?")
    assert result.output == "From what you told me: I prefer green tea over coffee."
    assert result.state.read_attempt_signal is not None and result.state.read_attempt_signal.found
