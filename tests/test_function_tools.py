"""Tools from typed functions (issue 24.1): ``@agrun.tool`` and ``runtime.tool`` make a
skill whose schema comes from the signature and docstring, whose arguments arrive checked
and typed, and whose context is injected when asked for."""

from __future__ import annotations

import datetime
import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

import agrun
from agrun import SkillContext, SkillHelpers, ToolContext
from agrun.chat import ModelReply, ModelRequest
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime


class Trip(BaseModel):
    city: str
    nights: int = 1


@agrun.tool
async def book(
    trip: Trip, start: datetime.date, seat: Literal["aisle", "window"] = "aisle"
) -> dict[str, Any]:
    """Book a trip.

    Args:
        trip: where to and for how long.
        start: the first night,
            as a date.
        seat: the seat wanted.
    """
    return {"city": trip.city, "nights": trip.nights, "start": start, "seat": seat}


def sphinx_style(a: int, b: int = 2) -> int:
    """Add two numbers.

    :param a: the first.
    :param int b: the second.
    :returns: the sum.
    """
    return a + b


def numpy_style(a: int) -> int:
    """Double it.

    Parameters
    ----------
    a : int
        The number
        to double.

    Returns
    -------
    int
    """
    return 2 * a


def calls(*made: Any) -> Any:
    """A model that makes ``made`` on its first call and then answers with the results."""

    def script(request: ModelRequest) -> ModelReply | str:
        if request.messages[-1].role == "tool":
            return " | ".join(m.content or "" for m in request.messages if m.role == "tool")
        return ModelReply(tool_calls=made)

    return script


def agent(script: Any, *skills: Any) -> tuple[agrun.Runtime, ScriptedProvider]:
    provider = ScriptedProvider(script)
    return make_runtime(*skills, provider=provider, model="scripted"), provider


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
    schema = book.input_model.model_json_schema()
    assert book.name == "book" and book.description == "Book a trip."
    assert schema["required"] == ["trip", "start"]
    assert schema["additionalProperties"] is False
    properties = schema["properties"]
    assert properties["start"]["format"] == "date"
    assert properties["start"]["description"] == "the first night, as a date."
    assert properties["seat"]["enum"] == ["aisle", "window"]
    assert properties["seat"]["default"] == "aisle"
    assert properties["trip"]["description"] == "where to and for how long."
    assert schema["$defs"]["Trip"]["required"] == ["city"]


@pytest.mark.parametrize(
    ("function", "summary", "described"),
    [
        (sphinx_style, "Add two numbers.", {"a": "the first.", "b": "the second."}),
        (numpy_style, "Double it.", {"a": "The number to double."}),
    ],
)
def test_sphinx_and_numpy_docstrings_describe_the_parameters(
    function: Any, summary: str, described: dict[str, str]
) -> None:
    made = agrun.tool(function)
    properties = made.input_model.model_json_schema()["properties"]
    assert made.description == summary
    assert {name: p.get("description") for name, p in properties.items()} == described


def test_a_context_parameter_is_not_an_argument_and_annotated_descriptions_win() -> None:
    def look(
        ctx: ToolContext,
        query: Annotated[str, Field(description="from Annotated", min_length=2)],
        view: SkillContext,
        helpers: SkillHelpers,
    ) -> str:
        """Look.

        Args:
            query: from the docstring.
        """
        return query

    schema = agrun.tool(look).input_model.model_json_schema()
    assert list(schema["properties"]) == ["query"]
    assert schema["properties"]["query"]["description"] == "from Annotated"
    assert schema["properties"]["query"]["minLength"] == 2


def test_parameter_names_that_shadow_pydantic_are_kept() -> None:
    def odd(json: str, schema: int, _id: int = 0) -> str:
        return f"{json}{schema}{_id}"

    made = agrun.tool(odd)
    assert set(made.input_model.model_json_schema()["properties"]) == {"json", "schema", "_id"}


def test_a_tool_is_still_the_function() -> None:
    assert agrun.tool(sphinx_style)(1, b=5) == 6
    assert agrun.tool(name="plus", description="Adds.")(sphinx_style).name == "plus"


async def test_the_model_calls_it_and_the_arguments_arrive_typed() -> None:
    seen: list[Any] = []

    @agrun.tool
    def stay(trip: Trip, start: datetime.date) -> str:
        """Stay somewhere."""
        seen.append((trip, start))
        return f"{trip.nights} nights in {trip.city} from {start:%d %B}"

    args = {"trip": {"city": "Oslo", "nights": "3"}, "start": "2025-03-01"}
    runtime, provider = agent(calls(tool_call("stay", args)), stay)
    result = await runtime.run("book me a stay")
    assert result.ok, result.error
    assert seen == [(Trip(city="Oslo", nights=3), datetime.date(2025, 3, 1))]
    assert result.output == "3 nights in Oslo from 01 March"
    offered = {spec.name: spec for spec in provider.requests[0].tools}
    assert offered["stay"].description == "Stay somewhere."
    assert offered["stay"].parameters == stay.input_model.model_json_schema()


async def test_an_async_tool_returns_json_data() -> None:
    args = {"trip": {"city": "Rome"}, "start": "2025-05-02", "seat": "window"}
    runtime, provider = agent(calls(tool_call("book", args)), book)
    result = await runtime.run("book Rome")
    assert result.ok, result.error
    tool_message = next(m for m in provider.requests[1].messages if m.role == "tool")
    assert json.loads(tool_message.content or "") == {
        "city": "Rome",
        "nights": 1,
        "start": "2025-05-02",
        "seat": "window",
    }


async def test_arguments_that_do_not_validate_go_back_to_the_model() -> None:
    called: list[int] = []

    @agrun.tool
    def count(n: Annotated[int, Field(ge=1)]) -> int:
        called.append(n)
        return n

    attempts = iter([tool_call("count", {"n": 0}, id="c1"), tool_call("count", {"n": 2}, id="c2")])

    def script(request: ModelRequest) -> ModelReply | str:
        last = request.messages[-1]
        if last.role == "tool" and "error" not in (last.content or ""):
            return f"counted {last.content}"
        return ModelReply(tool_calls=(next(attempts),))

    runtime, provider = agent(script, count)
    result = await runtime.run("count")
    assert result.ok and result.output == "counted 2"
    assert called == [2]
    refused = next(m for m in provider.requests[1].messages if m.role == "tool")
    assert refused.content is not None and refused.content.startswith(
        "error: the arguments for 'count' do not fit its parameters: n: "
    )
    assert "greater than or equal to 1" in refused.content
    frame = provider.requests[1].messages[-1]
    assert frame.role == "user" and "were not run" in (frame.content or "")


async def test_the_context_is_injected_by_annotation() -> None:
    got: dict[str, Any] = {}

    @agrun.tool
    def note(text: str, ctx: ToolContext, view: SkillContext, helpers: SkillHelpers) -> str:
        got.update(run=ctx.state.run_id, same=ctx.context is view and ctx.helpers is helpers)
        got["arguments"] = view.arguments.model_dump(by_alias=True)
        helpers.append_memory({"kind": "fact", "text": text})
        return "noted"

    runtime, _ = agent(calls(tool_call("note", {"text": "Ann likes tea"})), note)
    result = await runtime.run("note this")
    assert result.ok, result.error
    assert got == {"run": result.state.run_id, "same": True, "arguments": {"text": "Ann likes tea"}}
    assert "Ann likes tea" in [e.text for e in runtime.memory.read_all()]


async def test_runtime_tool_registers_and_the_model_is_offered_it() -> None:
    runtime, provider = agent(calls(tool_call("halve", {"x": 9})))

    @runtime.tool
    def halve(x: float) -> float:
        """Halve a number."""
        return x / 2

    def loud(text: str) -> str:
        return text.upper()

    made = runtime.tool(name="shout", description="Shouts.")(loud)
    assert made.name == "shout" and runtime.skill_names[-2:] == ("halve", "shout")
    result = await runtime.run("halve 9")
    assert result.ok and result.output == "4.5"
    assert {spec.name for spec in provider.requests[0].tools} == {"halve", "shout"}
    with pytest.raises(agrun.DuplicateSkillError):
        runtime.tool(halve.function)


async def test_run_as_a_skill_its_input_is_the_arguments() -> None:
    @agrun.tool
    def greet(name: str) -> str:
        return f"hello {name}"

    runtime = make_runtime(agrun.tool(sphinx_style, name="add"), greet)
    assert (await runtime.run('{"a": 4}', skill="add")).output == 6
    assert (await runtime.run("Ann", skill="greet")).output == "hello Ann"
    failed = await runtime.run("four", skill="add")
    assert failed.error is not None and failed.error.code == "skill_error"
    assert "JSON object of its arguments (a, b)" in failed.error.message


async def test_a_result_that_is_not_json_data_fails_the_run_typed() -> None:
    @agrun.tool
    def opaque() -> object:
        return object()

    failed = await make_runtime(opaque).run("{}", skill="opaque")
    assert failed.error is not None and failed.error.code == "output_not_serializable"
    assert "tool 'opaque' returned a object" in failed.error.message


def test_a_positional_only_parameter_is_passed_by_position() -> None:
    def minus(a: int, b: int, /) -> int:
        return a - b

    made = agrun.tool(minus)
    arguments = made.input_model.model_validate({"a": 5, "b": 3})
    view = SkillContext(lambda: None, None, arguments)  # type: ignore[arg-type]
    assert made.run("", view, SkillHelpers("minus")) == 2


def _args(*values: int) -> int:
    return sum(values)


def _kwargs(**values: int) -> int:
    return sum(values.values())


def _unresolved(x: NotDefinedAnywhere) -> int:  # type: ignore[name-defined]  # noqa: F821
    return 0


@pytest.mark.parametrize(
    ("function", "options", "problem"),
    [
        (_args, {}, r"\*values cannot be offered"),
        (_kwargs, {}, r"\*values cannot be offered"),
        (lambda x: x, {}, "1-64 letters"),
        (sphinx_style, {"name": "has space"}, "1-64 letters"),
        (sphinx_style, {"timeout_s": 0}, "timeout_s must be a positive number"),
        (sphinx_style, {"nmae": "typo"}, "unknown tool option"),
        (_unresolved, {}, "signature cannot be read"),
        (42, {}, "takes a function"),
    ],
)
def test_a_function_that_cannot_be_a_tool_is_refused(
    function: Any, options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(agrun.ConfigError, match=problem):
        agrun.tool(function, **options)
