"""Test doubles (issue 24.5): `TestModel` calls every tool it is offered with arguments its
schema accepts, then answers naming the results; the scripted provider gets the runtime's
own (extraction) calls only when asked."""

from __future__ import annotations

import datetime
import json
import uuid
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

import agrun
from agrun._schema_values import SchemaValueError, minimal_value
from agrun.kernel._schema import schema_problem
from agrun.testing import ScriptedProvider, TestModel
from conftest import make_runtime

MAYBE = {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 3}]}


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string"}, "a"),
        ({"type": "string", "minLength": 3, "maxLength": 4}, "aaa"),
        ({"type": "string", "maxLength": 0}, ""),
        ({"type": "string", "format": "date"}, "2024-01-01"),
        ({"type": "integer", "minimum": 5}, 5),
        ({"type": "integer", "exclusiveMinimum": 5}, 6),
        ({"type": "integer", "maximum": -2}, -2),
        ({"type": "integer", "minimum": 1.5}, 2),
        ({"type": "integer", "minimum": 1, "multipleOf": 4}, 4),
        ({"type": "number", "exclusiveMaximum": -1}, -1.5),
        ({"type": "number"}, 0),
        ({"type": "boolean"}, False),
        ({"type": "null"}, None),
        ({"type": ["null", "string"]}, "a"),
        ({"enum": ["red", "green"]}, "red"),
        ({"const": 7}, 7),
        (MAYBE, 3),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 2}, [0, 0]),
        ({"type": "array", "items": {"type": "string"}}, []),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                "required": ["b"],
            },
            {"b": 0},
        ),
        (
            {
                "type": "object",
                "properties": {"p": {"$ref": "#/$defs/P"}},
                "required": ["p"],
                "$defs": {
                    "P": {
                        "type": "object",
                        "properties": {"x": {"type": "boolean"}},
                        "required": ["x"],
                    }
                },
            },
            {"p": {"x": False}},
        ),
        ({"allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]}]}, {"a": 0}),
        ({}, "a"),
    ],
)
def test_the_smallest_value_a_schema_accepts(schema: dict[str, Any], value: Any) -> None:
    made = minimal_value(schema)
    assert made == value and type(made) is type(value)
    assert schema_problem(schema, made) is None


class Inner(BaseModel):
    label: Annotated[str, Field(min_length=2)]
    weight: Annotated[float, Field(gt=0.5)]


class Order(BaseModel):
    id: uuid.UUID
    when: datetime.datetime
    day: datetime.date
    size: Literal["s", "m", "l"]
    count: Annotated[int, Field(ge=10, le=20)]
    items: Annotated[list[Inner], Field(min_length=1)]
    note: str | None = None
    nested: dict[str, int] = {}


def test_pydantic_accepts_what_is_made_for_its_schemas() -> None:
    made = minimal_value(Order.model_json_schema())
    order = Order.model_validate(made)
    assert order.count == 10 and order.size == "s" and order.items[0].label == "aa"
    assert order.items[0].weight > 0.5


def test_a_schema_that_requires_itself_is_refused() -> None:
    schema = {
        "$ref": "#/$defs/Node",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/Node"}},
                "required": ["next"],
            }
        },
    }
    with pytest.raises(SchemaValueError, match="requires itself"):
        minimal_value(schema)
    with pytest.raises(SchemaValueError, match="does not resolve"):
        minimal_value({"$ref": "#/$defs/Missing"})


async def test_it_calls_every_tool_then_answers_with_the_results() -> None:
    received: list[Any] = []

    @agrun.tool
    def add(a: int, b: Annotated[int, Field(ge=40)]) -> int:
        """Add."""
        received.append((a, b))
        return a + b

    @agrun.tool
    async def label(item: Inner, colour: Literal["red", "blue"]) -> str:
        """Label."""
        received.append((item, colour))
        return f"{item.label}:{colour}"

    model = TestModel()
    runtime = make_runtime(add, label, provider=model, model="test")
    result = await runtime.run("try them")
    assert result.ok, result.error
    assert received == [(0, 40), (Inner(label="aa", weight=1.0), "red")]
    assert json.loads(result.output) == {"add": 40, "label": "aa:red"}
    assert len(model.requests) == 2
    assert [call.name for call in model.requests[1].messages[-3].tool_calls] == ["add", "label"]


async def test_it_calls_only_the_tools_named_and_answers_text_without_any() -> None:
    runtime = make_runtime(
        agrun.tool(lambda: "one", name="one"),
        agrun.tool(lambda: "two", name="two"),
        provider=TestModel(call_tools=["two"]),
        model="test",
    )
    assert json.loads((await runtime.run("go")).output) == {"two": "two"}
    bare = make_runtime(provider=TestModel(text="nothing to call"), model="test")
    assert (await bare.run("hi")).output == "nothing to call"


def test_call_tools_is_all_or_names() -> None:
    with pytest.raises(agrun.ConfigError, match="call_tools"):
        TestModel(call_tools="one")  # type: ignore[arg-type]


async def test_a_scripted_provider_gets_the_extraction_only_when_asked() -> None:
    facts = json.dumps({"facts": ["My name is Ann."], "preferences": [], "decisions": []})

    def script(request: Any) -> str:
        return facts if request.response_format is not None else "Hello Ann."

    quiet = ScriptedProvider(script)
    runtime = make_runtime(provider=quiet, model="scripted")
    await runtime.run("My name is Ann.")
    await runtime.idle()
    assert [r.response_format for r in quiet.requests] == [None]
    # The rules still extract the session memory.
    assert runtime.session_memory is not None and runtime.session_memory.facts
    for provider, options in (
        (ScriptedProvider(script, extraction=True), {}),
        (ScriptedProvider(script), {"memory_extraction": "model"}),
    ):
        runtime = make_runtime(provider=provider, model="scripted", **options)
        await runtime.run("My name is Ann.")
        await runtime.idle()
        assert [r.response_format is not None for r in provider.requests] == [False, True]
        last = runtime.state.last_run
        assert last is not None and last.model_calls == 2


async def test_the_test_model_answers_an_extraction_with_valid_json() -> None:
    model = TestModel(extraction=True)
    runtime = make_runtime(provider=model, model="test")
    events: list[Any] = []
    runtime.subscribe(events.append)
    await runtime.run("My name is Ann.")
    await runtime.idle()
    extraction = [r for r in model.requests if r.response_format is not None]
    assert len(extraction) == 1
    # Valid (nothing kept, so no rebuild event), and not refused (no SessionMemoryKept).
    assert not [e for e in events if e.kind == "SessionMemoryKept"]
