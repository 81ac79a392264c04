"""Typed results (issue 24.2): ``run(input, output_type=Model)`` / ``output_schema``: the
model is asked for JSON of the schema, the answer is checked, a misfit goes back to it as a
correction within ``max_corrections``, and ``result.output`` carries the typed value."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

import agrun
from agrun import ConfigError, UsageLimits
from agrun.chat import ModelReply, ModelRequest
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime


class City(BaseModel):
    name: str
    population: int = Field(ge=0)


CITY_SCHEMA = {
    "title": "City",
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
}


def in_turn(*answers: Any) -> Any:
    left = iter(answers)
    return lambda request: next(left)


def agent(script: Any, *skills: Any, **options: Any) -> tuple[agrun.Runtime, ScriptedProvider]:
    provider = ScriptedProvider(script)
    options.setdefault("memory_extraction", "rules")
    return make_runtime(*skills, provider=provider, model="m", **options), provider


def corrections(request: ModelRequest) -> list[str]:
    return [
        m.content or ""
        for m in request.messages
        if m.role == "user" and "does not fit the output schema" in (m.content or "")
    ]


async def test_the_answer_is_validated_into_the_model_after_corrections() -> None:
    runtime, provider = agent(
        in_turn(
            "Paris, about two million.",
            '{"name": "Paris", "population": -1}',
            '```json\n{"name": "Paris", "population": 2100000}\n```',
        )
    )
    result = await runtime.run("the biggest city?", output_type=City)
    assert result.ok
    assert isinstance(result.output, City) and result.output == City(
        name="Paris", population=2100000
    )
    # Every request asked for structured output: the provider's JSON mode and in words.
    for request in provider.requests:
        assert request.response_format == {
            "type": "json_schema",
            "json_schema": {"name": "City", "schema": City.model_json_schema()},
        }
        assert '"population"' in (request.messages[0].content or "")
    # Each misfit went back to the model with what was wrong.
    assert corrections(provider.requests[0]) == []
    assert "not JSON" in corrections(provider.requests[1])[0]
    assert (
        "population: Input should be greater than or equal to 0"
        in (corrections(provider.requests[2])[-1])
    )
    assert [s.action for s in result.steps].count("correct_output") == 2
    # The stored turn carries plain data; the wire form is plain data too.
    assert result.to_wire()["output"] == {"name": "Paris", "population": 2100000}
    assert runtime.history[-1].role == "assistant"


async def test_a_json_schema_gives_the_checked_plain_data() -> None:
    runtime, provider = agent(in_turn('{"name": 3}', '{"name": "Oslo", "population": 700000}'))
    result = await runtime.run("a city", output_schema=CITY_SCHEMA)
    assert result.ok and result.output == {"name": "Oslo", "population": 700000}
    assert provider.requests[0].response_format is not None
    assert provider.requests[0].response_format["json_schema"]["name"] == "City"
    assert "population: is required" in corrections(provider.requests[1])[0]


async def test_past_max_corrections_the_run_fails_with_its_own_code() -> None:
    runtime, provider = agent(lambda request: "no JSON from me", max_corrections=1)
    result = await runtime.run("a city", output_type=City)
    assert result.state.status == "failed" and result.error is not None
    assert result.error.code == "output_validation_failed"
    assert "'City' 2 times (the bound is 1)" in result.error.message
    assert len(provider.requests) == 2
    (kept,) = result.messages
    assert (kept.content, kept.error_code) == ("a city", "output_validation_failed")
    assert result.output is None


async def test_tools_still_run_before_the_typed_answer() -> None:
    def population(city: str) -> int:
        """How many people live in a city."""
        return {"Lima": 10_000_000}[city]

    script = in_turn(
        ModelReply(tool_calls=(tool_call("population", {"city": "Lima"}),)),
        '{"name": "Lima", "population": 10000000}',
    )
    runtime, provider = agent(script, agrun.tool(population))
    result = await runtime.run("how big is Lima?", output_type=City)
    assert result.output == City(name="Lima", population=10_000_000)
    assert [t.name for t in provider.requests[0].tools] == ["population"]


async def test_correction_calls_count_against_the_usage_limits() -> None:
    runtime, provider = agent(lambda request: "prose", max_corrections=5)
    result = await runtime.run(
        "a city", output_type=City, usage_limits=UsageLimits(request_limit=2)
    )
    assert result.error is not None and result.error.code == "usage_limit_exceeded"
    assert len(provider.requests) == 2


async def test_a_memory_command_is_the_models_when_a_typed_answer_is_asked() -> None:
    runtime, provider = agent(in_turn('{"name": "Rome", "population": 2800000}'))
    result = await runtime.run("remember: I live in Rome", output_type=City)
    assert result.output == City(name="Rome", population=2_800_000)
    assert len(provider.requests) == 1


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"output_type": dict}, "output_type must be a pydantic model class"),
        ({"output_type": City, "output_schema": CITY_SCHEMA}, "not both"),
        ({"output_schema": []}, "output_schema must be a JSON Schema object"),
        ({"output_type": City, "skill": "echo"}, "no skill named"),
    ],
)
async def test_a_bad_typed_output_is_refused(options: dict[str, Any], problem: str) -> None:
    runtime, provider = agent("hi")
    with pytest.raises(ConfigError, match=problem):
        await runtime.run("hi", **options)
    assert provider.requests == []


async def test_a_runtime_without_a_model_refuses_a_typed_output() -> None:
    with pytest.raises(ConfigError, match="needs a runtime with a provider"):
        await make_runtime().run("hi", output_type=City)


@pytest.mark.cpython_only
async def test_the_openai_adapter_sends_the_schema_as_response_format(double: Any) -> None:
    from agrun.adapters.openai import HttpxTransport, OpenAIProvider

    def typed(reply: Any) -> None:
        asked = reply.request.body.get("response_format")
        ok = asked and asked["json_schema"]["schema"]["title"] == "City"
        # The first answer does not fit; the corrected one does.
        text = '{"name": "Lyon"}' if reply.attempt == 1 else '{"name": "Lyon", "population": 5}'
        reply.completion(text if ok else "no schema was sent")

    double.scenarios["typed"] = typed
    provider = OpenAIProvider(
        double.url_for("typed"), "double-1", "sk-test", transport=HttpxTransport()
    )
    runtime = make_runtime(provider=provider, memory_extraction="rules")
    result = await runtime.run("a city", output_type=City)
    assert result.output == City(name="Lyon", population=5)
    sent = [r.body for r in double.requests_for("typed")]
    assert len(sent) == 2
    assert sent[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "City", "schema": City.model_json_schema()},
    }
    said = json.dumps(sent[1]["messages"])
    assert "population: Field required" in said
