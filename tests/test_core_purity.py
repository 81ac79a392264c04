"""The core reaches time, ids, randomness and the host only through ports (house style 7)."""

import ast
from pathlib import Path

import pytest

import agrun

BANNED = {"time", "uuid", "random", "js", "pyodide", "sqlite3"}
PACKAGE = Path(agrun.__file__).parent


def core_modules() -> list[Path]:
    return sorted(
        path for path in PACKAGE.rglob("*.py") if "adapters" not in path.relative_to(PACKAGE).parts
    )


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_core_has_modules_to_check() -> None:
    names = {path.name for path in core_modules()}
    assert {"_runtime.py", "_oodae.py", "_state.py", "_memory.py"} <= names


@pytest.mark.parametrize("path", core_modules(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_core_module_imports_no_ambient_world(path: Path) -> None:
    assert imported_roots(path) & BANNED == set()
