import re

import pytest

import agrun
from agrun._base import _errors


def tree() -> dict[str, str]:
    """Each class in the docstring's tree, mapped to the class drawn as its parent."""
    parents: dict[str, str] = {}
    stack: list[str] = []
    for line in (_errors.__doc__ or "").splitlines():
        match = re.match(r"^    ((?:[│ ]   )*)(?:[├└]── )?([A-Z]\w+)", line)
        if not match:
            continue
        depth = len(match.group(1)) // 4 + (1 if "──" in line else 0)
        del stack[depth:]
        if stack:
            parents[match.group(2)] = stack[-1]
        stack.append(match.group(2))
    return parents


def test_the_drawn_tree_is_the_real_one() -> None:
    parents = tree()
    assert set(parents) | {"AgrunError"} == set(_errors.__all__)
    for name, parent in parents.items():
        assert getattr(_errors, name).__mro__[1] is getattr(_errors, parent), name


@pytest.mark.parametrize("name", _errors.__all__)
def test_every_error_is_public_with_a_code(name: str) -> None:
    error = getattr(agrun, name)
    assert issubclass(error, agrun.AgrunError)
    assert re.fullmatch(r"[a-z_]+", error.code)
