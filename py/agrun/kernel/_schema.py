"""Checking a value against a JSON Schema: the subset tool parameters use.

A JavaScript skill declares its arguments as a JSON Schema (``parameters``); the arguments a
model sends are checked here before the skill runs. Supported: ``type`` (one or a list),
``enum``, ``const``, ``properties``, ``required``, ``additionalProperties`` (a bool or a
schema), ``items``, ``anyOf``/``oneOf``, ``$ref`` into ``$defs``/``definitions``,
``minLength``/``maxLength``/``pattern``, ``minimum``/``maximum``, ``minItems``/``maxItems``.
Unknown keywords are ignored, as JSON Schema says.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["resolve_ref", "schema_problem"]


def schema_problem(schema: Mapping[str, Any], value: Any) -> str | None:
    """Why ``value`` does not match ``schema`` (naming the path), or None if it does."""
    return _check(schema, value, "", schema)


def _check(schema: Mapping[str, Any], value: Any, path: str, root: Mapping[str, Any]) -> str | None:
    if "$ref" in schema:
        return _check(resolve_ref(root, schema["$ref"]), value, path, root)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if options and not any(_check(option, value, path, root) is None for option in options):
            return f"{_at(path)}does not match any of the allowed shapes"
    if "const" in schema and value != schema["const"]:
        return f"{_at(path)}must be {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{_at(path)}must be one of {', '.join(map(repr, schema['enum']))}, got {value!r}"
    expected = schema.get("type")
    if expected is not None:
        types = expected if isinstance(expected, list) else [expected]
        if not any(_is(value, t) for t in types):
            return f"{_at(path)}must be {' or '.join(types)}, got {_name(value)}"
    if isinstance(value, str):
        return _check_string(schema, value, path)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _check_number(schema, value, path)
    if isinstance(value, list):
        return _check_list(schema, value, path, root)
    if isinstance(value, dict):
        return _check_object(schema, value, path, root)
    return None


def _check_string(schema: Mapping[str, Any], value: str, path: str) -> str | None:
    if len(value) < schema.get("minLength", 0):
        return f"{_at(path)}is shorter than {schema['minLength']} characters"
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return f"{_at(path)}is longer than {schema['maxLength']} characters"
    if "pattern" in schema and re.search(schema["pattern"], value) is None:
        return f"{_at(path)}does not match {schema['pattern']!r}"
    return None


def _check_number(schema: Mapping[str, Any], value: float, path: str) -> str | None:
    if "minimum" in schema and value < schema["minimum"]:
        return f"{_at(path)}must be at least {schema['minimum']}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"{_at(path)}must be at most {schema['maximum']}"
    return None


def _check_list(
    schema: Mapping[str, Any], value: list[Any], path: str, root: Mapping[str, Any]
) -> str | None:
    if len(value) < schema.get("minItems", 0):
        return f"{_at(path)}needs at least {schema['minItems']} items"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"{_at(path)}takes at most {schema['maxItems']} items"
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            problem = _check(items, item, f"{path}[{index}]", root)
            if problem:
                return problem
    return None


def _check_object(
    schema: Mapping[str, Any], value: dict[str, Any], path: str, root: Mapping[str, Any]
) -> str | None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            return f"{_join(path, name)}: is required"
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            problem = _check(properties[name], item, _join(path, name), root)
        elif extra is False:
            problem = f"{_join(path, name)}: is not an argument of this tool"
        elif isinstance(extra, Mapping):
            problem = _check(extra, item, _join(path, name), root)
        else:
            problem = None
        if problem:
            return problem
    return None


def _is(value: Any, kind: str) -> bool:
    match kind:
        case "string":
            return isinstance(value, str)
        case "integer":
            return (isinstance(value, int) and not isinstance(value, bool)) or (
                isinstance(value, float) and value.is_integer()
            )
        case "number":
            return (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and math.isfinite(value)
            )
        case "boolean":
            return isinstance(value, bool)
        case "null":
            return value is None
        case "array":
            return isinstance(value, list)
        case "object":
            return isinstance(value, dict)
    return True


def resolve_ref(root: Mapping[str, Any], ref: str) -> Mapping[str, Any]:
    """The schema ``ref`` points at in ``root``'s ``$defs`` (or ``definitions``).

    Raises:
        ValueError: it points nowhere.
    """
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            target = root.get(prefix[2:-1], {}).get(ref[len(prefix) :])
            if isinstance(target, Mapping):
                return target
    raise ValueError(f"the schema's reference {ref!r} does not resolve")


def _name(value: Any) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}
    return "null" if value is None else names.get(type(value), "object")


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _at(path: str) -> str:
    return f"{path}: " if path else ""
