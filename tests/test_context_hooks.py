"""The host's own ranker, compressors and redactor for the packs a runtime builds (issue
10.10): given to create_runtime, used by every model call's pack, checked at creation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

import agrun
from agrun import FunctionSkill
from agrun.chat import ModelReply, ModelRequest
from agrun.context import build_context
from agrun.ports import Span, Tokenizer
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime


class NameRedactor:
    def redact(self, text: str) -> str:
        return text.replace("Zephyr", "[name]")


class RecordingRanker:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        self.queries.append(query)
        return [float("blue" in document) for document in documents]


class HeadCompressor:
    name = "host head"

    def compress(self, text: str, *, limit: int, tokenizer: Tokenizer) -> list[Span]:
        return [(0, 40)]


LONG = FunctionSkill(
    "long", lambda input, context, helpers: "row " * 2000, description="A long listing."
)


def script(request: ModelRequest) -> Any:
    if request.messages[-1].role == "tool":
        return "done"
    said = next(m.content or "" for m in reversed(request.messages) if m.role == "user")
    if "list" in said:
        return ModelReply(tool_calls=(tool_call("long", {"input": "all"}),))
    return "ok"


def model_runtime(**options: Any) -> tuple[agrun.Runtime, ScriptedProvider]:
    provider = ScriptedProvider(script)
    runtime = make_runtime(LONG, provider=provider, memory_extraction="rules", **options)
    return runtime, provider


def request_text(request: ModelRequest) -> str:
    return "\n".join(message.content or "" for message in request.messages)


async def test_the_host_redactor_masks_at_the_door_and_in_every_pack() -> None:
    runtime, provider = model_runtime(redactor=NameRedactor())
    await runtime.run("My cat is called Zephyr.")
    await runtime.run("What is my cat called?")
    assert all("Zephyr" not in request_text(request) for request in provider.requests)
    assert "[name]" in request_text(provider.requests[-1])
    assert runtime.history[0].content == "My cat is called [name]."


async def test_without_redaction_the_pack_still_uses_the_host_redactor() -> None:
    runtime, provider = model_runtime(redactor=NameRedactor(), redact_secrets=False)
    await runtime.run("My cat is called Zephyr.")
    assert runtime.history[0].content == "My cat is called Zephyr."
    assert "Zephyr" not in request_text(provider.requests[0])


async def test_the_host_ranker_is_asked_with_the_turns_query() -> None:
    ranker = RecordingRanker()
    runtime, _ = model_runtime(ranker=ranker)
    await runtime.run("I prefer the blue mug.")
    await runtime.run("Which mug do I like?")
    assert "Which mug do I like?" in ranker.queries


async def test_a_host_compressor_shortens_a_long_tool_output_and_is_recorded() -> None:
    runtime, provider = model_runtime(compressors={"tool_output": HeadCompressor()})
    result = await runtime.run("list everything")
    assert result.output == "done"
    tool_message = next(m for m in provider.requests[-1].messages if m.role == "tool")
    assert tool_message.content == ("row " * 10)
    pack = runtime.last_pack
    assert pack is not None
    records = pack.compression_metadata.records
    assert [record.strategy for record in records] == ["host head"]


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        ("ranker", object(), "ranker"),
        ("compressors", {"summary": HeadCompressor()}, "summary"),
        ("compressors", {"tool_output": object()}, "compressors['tool_output']"),
        ("compressors", [HeadCompressor()], "compressors"),
        ("redactor", "mask", "redactor"),
    ],
)
def test_a_hook_of_the_wrong_shape_is_refused_at_creation(
    option: str, value: Any, named: str
) -> None:
    with pytest.raises(agrun.ConfigError, match=named.replace("[", r"\[")):
        make_runtime(**{option: value})


async def test_a_run_cancelled_while_its_pack_is_built_ends_cancelled_and_keeps_nothing() -> None:
    token = agrun.CancelToken()

    class CancellingRanker:
        def score(self, query: str, documents: Sequence[str]) -> list[float]:
            token.cancel("the person left")  # as another thread would, mid-build
            return [0.0 for _ in documents]

    runtime, provider = model_runtime(ranker=CancellingRanker())
    await runtime.run("I prefer the blue mug.")
    before = runtime.history
    token = agrun.CancelToken()
    result = await runtime.run("Which mug do I like?", signal=token)
    assert result.state.status == "cancelled" and result.error is not None
    assert result.error.message == "the person left"
    # Only the person's words stay, marked cancelled: no pack, no reply.
    assert runtime.history[:-1] == before and len(provider.requests) == 1
    kept = runtime.history[-1]
    assert (kept.content, kept.run_status, kept.error_code) == (
        "Which mug do I like?",
        "cancelled",
        "cancelled",
    )


class CountsWords:
    def count(self, text: str) -> int:
        return len(text.split())


# Values that are not the port, though a str or a list has a ``count`` method: each is
# refused with an error naming the option, never replaced by the default.
WRONG_TYPES = [{}, 0, "", False, [], "mask", ["a"], 1.5, object()]
PORTS = [
    ("tokenizer", "count(text) -> int"),
    ("ranker", "score(query, documents) -> list[float]"),
    ("redactor", "redact(text) -> str"),
]


@pytest.mark.parametrize("value", WRONG_TYPES)
@pytest.mark.parametrize(("option", "shape"), PORTS)
def test_a_port_of_the_wrong_type_is_refused_by_build_context(
    option: str, shape: str, value: Any
) -> None:
    request = {"input": "hi", "messages": [{"id": "m", "role": "user", "content": "hi"}]}
    with pytest.raises(agrun.ConfigError, match=rf"^{option} must have {re.escape(shape)}"):
        build_context(request, **{option: value})


@pytest.mark.parametrize("value", WRONG_TYPES)
@pytest.mark.parametrize(("option", "shape"), PORTS)
def test_a_port_of_the_wrong_type_is_refused_by_create_runtime(
    option: str, shape: str, value: Any
) -> None:
    with pytest.raises(agrun.ConfigError, match=rf"^{option} must have {re.escape(shape)}"):
        make_runtime(**{option: value})


@pytest.mark.parametrize("value", WRONG_TYPES)
def test_a_wrong_tokenizer_for_one_pack_is_refused_too(value: Any) -> None:
    runtime = make_runtime()
    with pytest.raises(agrun.ConfigError, match=r"^tokenizer must have count"):
        runtime.build_context({"input": "hi"}, tokenizer=value)


def test_a_port_that_is_falsy_but_real_is_used_not_replaced() -> None:
    class Empty(CountsWords):
        def __len__(self) -> int:
            return 0

    request = {
        "input": "one two three",
        "messages": [{"id": "m", "role": "user", "content": "one two three"}],
    }
    pack = build_context(request, tokenizer=Empty())
    assert pack.compression_metadata.tokenizer == "Empty"
    assert pack.budget_used < 10
