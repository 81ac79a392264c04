"""The smallest value a JSON Schema accepts, for `TestModel`'s tool calls.

Covered: ``type`` (one or a list; ``null`` last), ``const``, ``enum`` (the first), strings
(``minLength``/``maxLength``, the formats pydantic checks: date, date-time, time, email,
uri, uuid...), numbers and integers (``minimum``/``maximum`` and their exclusive forms,
``multipleOf``), booleans, arrays (``minItems`` items), objects (their required properties),
``anyOf``/``oneOf`` (the first option that yields), ``allOf`` (merged), ``$ref`` into
``$defs``/``definitions``, and ``default``. A ``pattern`` is not solved: a string under one
is ``"a"``, which the tool's check may refuse, as it would a model's guess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .kernel._schema import resolve_ref

__all__ = ["SchemaValueError", "minimal_value"]

# Formats that pydantic checks, each with a value it takes.
_FORMATS = {
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "time": "00:00:00",
    "duration": "P1D",
    "email": "a@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
}
_MAX_DEPTH = 32


class SchemaValueError(ValueError):
    """No value could be made for a schema (a required recursion, an unknown ``$ref``)."""


def minimal_value(schema: Mapping[str, Any]) -> Any:
    """The smallest value ``schema`` accepts (see the module's list of what is covered).

    Raises:
        SchemaValueError: the schema requires itself without end, or a ``$ref`` is unknown.
    """
    return _value(schema, schema, 0)


def _value(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise SchemaValueError("the schema requires itself deeper than 32 levels")
    if "$ref" in schema:
        return _value(_resolve(root, schema["$ref"]), root, depth + 1)
    if "allOf" in schema:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = _resolve(root, part["$ref"]) if "$ref" in part else part
            merged = _merge(merged, part)
        return _value(merged, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _first_option(schema[key], root, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        # null is the least useful of the choices: last.
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = _implied_type(schema)
    match kind:
        case "string":
            return _string(schema)
        case "integer":
            return int(_number(schema, integer=True))
        case "number":
            return _number(schema, integer=False)
        case "boolean":
            return False
        case "null":
            return None
        case "array":
            items = schema.get("items")
            item = items if isinstance(items, Mapping) else {}
            return [_value(item, root, depth + 1) for _ in range(schema.get("minItems", 0))]
        case _:
            return _object(schema, root, depth)


def _first_option(options: list[Any], root: Mapping[str, Any], depth: int) -> Any:
    ordered = sorted(options, key=lambda option: option.get("type") == "null")
    problem: SchemaValueError | None = None
    for option in ordered:
        try:
            return _value(option, root, depth + 1)
        except SchemaValueError as error:
            problem = error
    raise problem or SchemaValueError("anyOf/oneOf lists no option")


def _object(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    value: dict[str, Any] = {}
    for name in schema.get("required", ()):
        value[name] = _value(properties.get(name, {}), root, depth + 1)
    for _ in range(schema.get("minProperties", 0) - len(value)):
        optional = next((name for name in properties if name not in value), None)
        if optional is None:
            break
        value[optional] = _value(properties[optional], root, depth + 1)
    return value


def _string(schema: Mapping[str, Any]) -> str:
    fixed = _FORMATS.get(str(schema.get("format", "")))
    if fixed is not None:
        return fixed
    length = max(int(schema.get("minLength", 0)), 1)
    if "maxLength" in schema:
        length = min(length, int(schema["maxLength"]))
    return "a" * length


def _number(schema: Mapping[str, Any], *, integer: bool) -> float:
    step = 1 if integer else 0.5
    low, high = -math.inf, math.inf
    if "minimum" in schema:
        low = schema["minimum"]
    if "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
        low = max(low, schema["exclusiveMinimum"] + step)
    if "maximum" in schema:
        high = schema["maximum"]
    if "exclusiveMaximum" in schema and not isinstance(schema["exclusiveMaximum"], bool):
        high = min(high, schema["exclusiveMaximum"] - step)
    value = min(max(0, low), high)
    if integer:
        value = math.ceil(value) if value == low else math.floor(value)
    multiple = schema.get("multipleOf")
    if multiple and value % multiple:
        value = math.ceil(value / multiple) * multiple
    return value


def _implied_type(schema: Mapping[str, Any]) -> str:
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema:
        return "array"
    # Anything goes (``Any``): a word is what a model would most likely send.
    return "string"


def _merge(into: dict[str, Any], part: Mapping[str, Any]) -> dict[str, Any]:
    merged = {**into, **part}
    merged["properties"] = {**into.get("properties", {}), **part.get("properties", {})}
    merged["required"] = [*into.get("required", ()), *part.get("required", ())]
    return merged


def _resolve(root: Mapping[str, Any], ref: str) -> Mapping[str, Any]:
    try:
        return resolve_ref(root, ref)
    except ValueError as error:
        raise SchemaValueError(str(error)) from None
