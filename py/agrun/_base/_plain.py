"""Plain data: what may cross into JavaScript, and frozen copies of it.

Data crosses if JSON can carry it without loss: ``None``, ``bool``, ``str``, finite
``float``, ``int`` within JavaScript's safe-integer range, and lists, tuples and
``str``-keyed dicts of those, without cycles. Anything else (a set, an object, NaN,
2**60) is named by its path so a skill author knows what to fix.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["find_uncrossable", "freeze", "is_positive_number", "json_depth", "thaw"]

# The largest integer a JavaScript number holds exactly (Number.MAX_SAFE_INTEGER).
MAX_SAFE_INTEGER = 2**53 - 1


def find_uncrossable(value: Any, path: str = "$") -> str | None:
    """Why ``value`` cannot cross into JavaScript as plain data, or None if it can.

    Returns:
        A message naming the first offending path (``$.items[2]``) and what is wrong there.
    """
    return _check(value, path, set())


def _check(value: Any, path: str, seen: set[int]) -> str | None:
    if value is None or isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            return f"{path} is the integer {value}, beyond JavaScript's safe range (2**53 - 1)"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} is {value!r}, which JSON cannot carry"
    if isinstance(value, (list, tuple, dict, MappingProxyType)):
        if id(value) in seen:
            return f"{path} contains itself (a cycle)"
        seen.add(id(value))
        try:
            return _check_container(value, path, seen)
        finally:
            seen.discard(id(value))
    return f"{path} is a {type(value).__name__}, not plain data (use dict, list, str, number, bool)"


def _check_container(value: Any, path: str, seen: set[int]) -> str | None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path} has the key {key!r}; object keys must be strings"
            problem = _check(item, f"{path}.{key}", seen)
            if problem:
                return problem
        return None
    for index, item in enumerate(value):
        problem = _check(item, f"{path}[{index}]", seen)
        if problem:
            return problem
    return None


def freeze(value: Any) -> Any:
    """A deeply read-only copy of plain data: dicts become mapping proxies, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """The plain, mutable form of (possibly frozen) data: dicts and lists again."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    return value


def is_positive_number(value: Any) -> bool:
    """Whether ``value`` is a finite number above zero (bools are not numbers here)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


# A JSON string (escapes included) or one bracket: what nesting depth is counted from.
_DEPTH_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def json_depth(text: str) -> int:
    """How deep the arrays and objects of JSON ``text`` nest, found without parsing it.

    One regular-expression scan (strings skipped whole), so it costs no recursion and
    bounds the work before a recursive parser sees the text. Malformed text gives some
    number; the parser that follows rejects it.
    """
    depth = deepest = 0
    for token in _DEPTH_TOKEN.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
