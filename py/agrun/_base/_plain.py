"""Plain data: what may cross into JavaScript, and frozen copies of it.

Data crosses if JSON can carry it without loss: ``None``, ``bool``, Unicode ``str``, finite
``float``, ``int`` within JavaScript's safe-integer range, and lists, tuples and
``str``-keyed dicts of those, without cycles, nested at most `MAX_PLAIN_DEPTH` levels. Anything
else (a set, an object, NaN, 2**60, a lone surrogate, a list in a list 900 times over) is
named by its path so a skill author knows what to fix.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ._frozen import CheckedDict, CheckedList, checked_height

__all__ = [
    "MAX_PLAIN_DEPTH",
    "MAX_SAFE_INTEGER",
    "canonical_json",
    "find_uncrossable",
    "find_unstorable",
    "freeze",
    "is_positive_number",
    "json_depth",
    "json_nests_deeper",
    "plain_copy",
    "scrubbed",
    "thaw",
]

# The largest integer a JavaScript number holds exactly (Number.MAX_SAFE_INTEGER).
MAX_SAFE_INTEGER = 2**53 - 1

# How deep plain data may nest: what an export file may (agrun.storage.MAX_DEPTH), and far
# below where recursive code (json, pydantic, a redactor's walk) overflows the stack.
MAX_PLAIN_DEPTH = 64

# A UTF-16 surrogate code point on its own: Python strings can hold one, but no UTF-8 text,
# JSON file or JavaScript store round-trips it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


# Made once: json.dumps builds an encoder at every call that asks for other than defaults.
_CANONICAL = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def canonical_json(value: Any) -> str:
    """``value`` as compact JSON with sorted keys: the form a digest is taken of (a stored
    body's, a trace's request and messages)."""
    return _CANONICAL.encode(value)


def find_uncrossable(
    value: Any, path: str = "$", *, max_depth: int = MAX_PLAIN_DEPTH
) -> str | None:
    """Why ``value`` cannot cross into JavaScript as plain data, or None if it can.

    Returns:
        A message naming the first offending path (``$.items[2]``) and what is wrong there.
    """
    if _crosses(value, set(), max_depth):
        return None
    return _check(value, path, set(), max_depth)


# The scalar types plain data holds, exactly (a subclass takes the slow path).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _fine_scalar(value: Any, kind: type) -> bool:
    """Whether a value of one of `_SCALARS` crosses (what `_check` asks of it)."""
    if kind is str:
        return bool(value.isascii() or _LONE_SURROGATE.search(value) is None)
    if kind is int:
        return bool(abs(value) <= MAX_SAFE_INTEGER)
    if kind is float:
        return math.isfinite(value)
    return True


def _fine_key(key: Any) -> bool:
    return type(key) is str and bool(key.isascii() or _LONE_SURROGATE.search(key) is None)


def _crosses(value: Any, seen: set[int], depth: int) -> bool:
    """Whether `_check` would find nothing, answered without building a path for every
    node (most data crosses; only then is the walk that names the problem needed). Types
    other than the plain ones exactly are left to `_check` itself."""
    kind = type(value)
    if kind in _SCALARS:
        return _fine_scalar(value, kind)
    if kind is not dict and kind is not list and kind is not tuple:
        # A checked copy's root was found to cross as it was made, and is frozen since:
        # only its height is left to measure against the levels left here.
        height = checked_height(value)
        if height is not None:
            return height <= depth
        return _check(value, "$", seen, depth) is None
    if id(value) in seen or depth <= 0:
        return False
    seen.add(id(value))
    try:
        if kind is dict:
            for key, item in value.items():
                if not _fine_key(key):
                    return _check(value, "$", seen - {id(value)}, depth) is None
                if not _crosses(item, seen, depth - 1):
                    return False
            return True
        return all(_crosses(item, seen, depth - 1) for item in value)
    finally:
        seen.discard(id(value))


class _NotPlain(Exception):
    """Raised inside `plain_copy` to leave the fast path."""


def plain_copy(
    value: Any,
    *,
    max_depth: int = MAX_PLAIN_DEPTH,
    scrub: Callable[[str], str] | None = None,
    clean_text: Callable[[str], bool] | None = None,
    clean_key: Callable[[str], bool] | None = None,
    frozen: tuple[type[CheckedDict[str, Any]], type[CheckedList[Any]]] | None = None,
) -> tuple[Any, bool] | None:
    """``(thaw(value), whether it holds an integral float)`` in one pass, when ``value`` is
    made of exactly dict, list, tuple, str, int, float, bool and None and `find_uncrossable`
    finds nothing in it; None otherwise (other types, or a problem: the caller's slower path
    then names it). One walk instead of a check, a copy and a look for the floats that
    canonical JSON writes as integers (``2.0`` as ``2``).

    With ``scrub``, the copy is of ``scrubbed(value, scrub)`` (each string value scrubbed,
    keys as they are) and it is the scrubbed strings that are checked: the scrub and the
    copy in one walk. With ``clean_text`` or ``clean_key``, a (scrubbed) string or a key
    they answer False for gives None too: a scan for secrets in the same walk.

    With ``frozen`` (a `CheckedDict` and a `CheckedList` type), the copy is made of those
    instead of dicts and lists, read-only from the start, and its root carries its height:
    encoding it later does not walk it again (`find_uncrossable`).
    """
    integral = [False]
    lowest = [max_depth]  # the fewest levels left at any container: the copy's height
    # A key's verdict, by key: the same few keys come back in every object of a list.
    keys: dict[Any, bool] = {}
    texts: dict[str, str] = {}  # and a string's scrubbed, checked copy, by string

    def copy(item: Any, depth: int) -> Any:
        kind = type(item)
        if kind is str:
            done = texts.get(item)
            if done is None:
                done = item if scrub is None else scrub(item)
                if type(done) is not str:  # an odd scrub: the slow path takes it
                    raise _NotPlain
                if not _fine_scalar(done, str) or (clean_text is not None and not clean_text(done)):
                    raise _NotPlain
                texts[item] = done
            return done
        if kind in _SCALARS:
            if not _fine_scalar(item, kind):
                raise _NotPlain
            if kind is float and not integral[0]:
                integral[0] = item.is_integer()
            return item
        if depth <= 0:  # too deep, or a cycle: the slow path says which
            raise _NotPlain
        if depth < lowest[0]:
            lowest[0] = depth
        if kind is dict:
            copied = {}
            for key, child in item.items():
                fine = keys.get(key)
                if fine is None:
                    fine = keys[key] = _fine_key(key) and (clean_key is None or clean_key(key))
                if not fine:
                    raise _NotPlain
                copied[key] = copy(child, depth - 1)
            return copied if frozen is None else frozen[0](copied)
        if kind is list or kind is tuple:
            items = [copy(child, depth - 1) for child in item]
            return items if frozen is None else frozen[1](items)
        raise _NotPlain

    try:
        copied = copy(value, max_depth)
    except _NotPlain:
        return None
    if frozen is not None and isinstance(copied, (CheckedDict, CheckedList)):
        copied.height = max_depth - lowest[0] + 1
    return copied, integral[0]


def find_unstorable(value: Any, *, max_depth: int = MAX_PLAIN_DEPTH) -> str | None:
    """Why ``value`` could be neither stored nor sent, whatever else it holds: a string with
    a lone surrogate, or dicts, lists and tuples nested deeper than ``max_depth`` (a cycle
    among them too). Other objects are not looked into (they are another check's to
    judge). Walks without recursion, so any depth is measured safely.
    """
    stack: list[tuple[Any, str, int]] = [(value, "$", 0)]
    reached: dict[int, int] = {}  # a shared container is walked again only from deeper
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            problem = _lone_surrogate(item, path)
            if problem:
                return problem
            continue
        if not isinstance(item, (list, tuple, Mapping)):
            continue
        if depth >= max_depth:
            return f"{path} nests deeper than {max_depth} levels of lists and objects"
        if reached.get(id(item), -1) >= depth:
            continue
        reached[id(item)] = depth
        if isinstance(item, Mapping):
            for key, child in item.items():
                if isinstance(key, str) and (problem := _lone_surrogate(key, f"{path} key")):
                    return problem
                stack.append((child, f"{path}.{key}", depth + 1))
        else:
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))
    return None


def _lone_surrogate(text: str, path: str) -> str | None:
    if text.isascii():
        return None
    lone = _LONE_SURROGATE.search(text)
    if lone is None:
        return None
    return (
        f"{path} holds a lone surrogate (U+{ord(lone.group()):04X}) at character "
        f"{lone.start()}: it is not Unicode text and cannot be stored"
    )


def _check(value: Any, path: str, seen: set[int], depth: int) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return _lone_surrogate(value, path)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            return f"{path} is the integer {value}, beyond JavaScript's safe range (2**53 - 1)"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} is {value!r}, which JSON cannot carry"
    if isinstance(value, (list, tuple, dict, MappingProxyType)):
        if id(value) in seen:
            return f"{path} contains itself (a cycle)"
        if depth <= 0:
            return f"{path} nests deeper than the {len(seen)} levels of lists and objects allowed"
        seen.add(id(value))
        try:
            return _check_container(value, path, seen, depth - 1)
        finally:
            seen.discard(id(value))
    return f"{path} is a {type(value).__name__}, not plain data (use dict, list, str, number, bool)"


def _check_container(value: Any, path: str, seen: set[int], depth: int) -> str | None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path} has the key {key!r}; object keys must be strings"
            problem = _lone_surrogate(key, f"{path} key") or _check(
                item, f"{path}.{key}", seen, depth
            )
            if problem:
                return problem
        return None
    for index, item in enumerate(value):
        problem = _check(item, f"{path}[{index}]", seen, depth)
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


def json_nests_deeper(text: str, limit: int) -> bool:
    """Whether JSON ``text`` nests deeper than ``limit`` levels (`json_depth` above it).

    Nesting one level takes an opening bracket, so a text holding at most ``limit`` of them
    (those inside strings counted too) cannot: two counts in C decide it for nearly every
    text, without `json_depth`'s scan, which steps through every string in Python (40% of
    decoding a streamed reply's chunk, before this). Deeper candidates are scanned.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    return json_depth(text) > limit


def scrubbed(value: Any, scrub: Callable[[str], str]) -> Any:
    """``value`` with its texts scrubbed: strings, and plain lists, tuples and dicts of them
    (models are built from scrubbed parts where they are made: errors, steps, outputs)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {key: scrubbed(item, scrub) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrubbed(item, scrub) for item in value)
    return value
