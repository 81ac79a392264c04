import math
from types import MappingProxyType

import pytest

from agrun._base import find_uncrossable, freeze, thaw


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -3,
        2**53 - 1,
        1.5,
        "",
        "text",
        [],
        (),
        {},
        [1, "a", None],
        {"a": {"b": [1.0]}},
    ],
)
def test_plain_data_crosses(value: object) -> None:
    assert find_uncrossable(value) is None


class Thing:
    pass


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({1, 2}, "$ is a set, not plain data (use dict, list, str, number, bool)"),
        (Thing(), "$ is a Thing, not plain data (use dict, list, str, number, bool)"),
        (math.nan, "$ is nan, which JSON cannot carry"),
        ([1, math.inf], "$[1] is inf, which JSON cannot carry"),
        (
            {"a": {"b": b"x"}},
            "$.a.b is a bytes, not plain data (use dict, list, str, number, bool)",
        ),
        ({1: "x"}, "$ has the key 1; object keys must be strings"),
        (2**53, "$ is the integer 9007199254740992, beyond JavaScript's safe range (2**53 - 1)"),
    ],
)
def test_uncrossable_value_is_named_by_path(value: object, problem: str) -> None:
    assert find_uncrossable(value) == problem


def test_a_cycle_is_found_not_recursed_forever() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    assert find_uncrossable(loop) == "$[1] contains itself (a cycle)"


def test_shared_but_acyclic_values_cross() -> None:
    shared = [1]
    assert find_uncrossable({"a": shared, "b": shared}) is None


def test_freeze_is_deep_and_thaw_undoes_it() -> None:
    data = {"a": [1, {"b": [2]}]}
    frozen = freeze(data)
    assert isinstance(frozen, MappingProxyType)
    assert frozen["a"] == (1, MappingProxyType({"b": (2,)}))
    with pytest.raises(TypeError):
        frozen["a"][1]["b"] = 3  # type: ignore[index]
    assert thaw(frozen) == data
