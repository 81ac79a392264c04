"""Skills as tools: the spec a model is offered for a skill, and its arguments checked.

A skill says what arguments it takes in one of three ways:

- ``input_model``: a pydantic model; its JSON Schema is the tool's parameters, and the
  arguments are validated by it (the skill's ``context.arguments`` is the model instance);
- ``parameters``: a JSON Schema (a JavaScript skill's way), checked by `schema_problem`
  (``context.arguments`` is the plain dict);
- neither: one string argument, ``input``, which becomes the skill's input.

Either way the skill's ``run(input, ...)`` gets text: the ``input`` argument, or the
arguments' JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .._base import json_nests_deeper
from .._base._json_schema import schema_problem
from ..chat import ToolSpec

__all__ = ["DEFAULT_PARAMETERS", "ArgumentsRefused", "ToolArguments", "read_arguments", "tool_spec"]

DEFAULT_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "What to do, in words."}},
    "required": ["input"],
    "additionalProperties": False,
}
# Arguments nested deeper than this are refused before they are parsed.
MAX_ARGUMENT_DEPTH = 32


class ArgumentsRefused(Exception):
    """A tool call's arguments do not fit its skill (internal; the model is told why)."""


@dataclass(frozen=True)
class ToolArguments:
    """A tool call's checked arguments: the skill's input text and its structured value."""

    input: str
    value: Any


def tool_spec(skill: Any) -> ToolSpec:
    """The tool a model is offered for ``skill``."""
    return ToolSpec(name=skill.name, description=skill.description, parameters=_parameters(skill))


def _parameters(skill: Any) -> dict[str, Any]:
    model = getattr(skill, "input_model", None)
    if isinstance(model, type) and issubclass(model, BaseModel):
        schema: dict[str, Any] = model.model_json_schema()
        return schema
    parameters = getattr(skill, "parameters", None)
    if isinstance(parameters, dict):
        return parameters
    return DEFAULT_PARAMETERS


def read_arguments(skill: Any, arguments: str) -> ToolArguments:
    """Check a model's arguments for ``skill``.

    Raises:
        ArgumentsRefused: not a JSON object, too deep, or not what the skill takes; the
            message says what is wrong, for the model to correct.
    """
    if json_nests_deeper(arguments, MAX_ARGUMENT_DEPTH):
        raise ArgumentsRefused(f"the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels")
    try:
        value = json.loads(arguments or "{}")
    except ValueError as error:
        raise ArgumentsRefused(f"the arguments are not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise ArgumentsRefused("the arguments must be a JSON object")
    model = getattr(skill, "input_model", None)
    if isinstance(model, type) and issubclass(model, BaseModel):
        try:
            instance = model.model_validate(value)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"]) or "arguments"
            raise ArgumentsRefused(f"{where}: {first['msg']}") from None
        return ToolArguments(input=_canonical(value), value=instance)
    parameters = _parameters(skill)
    problem = schema_problem(parameters, value)
    if problem is not None:
        raise ArgumentsRefused(problem)
    if parameters is DEFAULT_PARAMETERS:
        return ToolArguments(input=value["input"], value=value)
    return ToolArguments(input=_canonical(value), value=value)


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
