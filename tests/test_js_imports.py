"""The page's entry modules name every module they load, so a browser fetches them at once.

A module's static imports are only found when the module itself has arrived; agrun's
JavaScript imports eight levels deep, so a page read it level by level, a round trip each,
before the boot could start (~100 ms of a cold or warm page's ready: docs/performance.md).
An entry module (what a page or a worker loads first) imports the rest of its graph too,
flat. dist/ serves each entry bundled (build.sh), but for the modules it shares with other
entries; since the entry imports those itself, its bundle names them all, and a browser asks
for them as soon as the bundle is read (e2e/test_bundle.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.cpython_only

WEB = Path(__file__).resolve().parent.parent / "web"
ENTRIES = ("agrun.js", "engine/worker.js")
_IMPORT = re.compile(r"^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'", re.M)


def static_imports(module: Path) -> set[Path]:
    found = set()
    for match in _IMPORT.finditer(module.read_text(encoding="utf-8")):
        spec = match.group(1) or match.group(2)
        if spec.startswith("."):
            found.add((module.parent / spec).resolve())
    return found


def _spec(module: Path, entry: Path) -> str:
    relative = Path(os.path.relpath(module, entry.parent)).as_posix()
    return relative if relative.startswith("../") else f"./{relative}"


def graph(entry: Path) -> set[Path]:
    seen: set[Path] = set()
    todo = [entry]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(static_imports(module))
    return seen - {entry}


@pytest.mark.parametrize("name", ENTRIES)
def test_an_entry_module_imports_its_whole_graph_itself(name: str) -> None:
    entry = (WEB / name).resolve()
    missing = sorted(graph(entry) - static_imports(entry))
    lines = [f"import '{_spec(module, entry)}';" for module in missing]
    assert not missing, (
        f"{name} should also import (flat, for the browser to fetch at once):\n" + "\n".join(lines)
    )


def test_the_check_sees_a_deep_import(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text("import { b } from './b.js';\n", encoding="utf-8")
    (tmp_path / "b.js").write_text("export { c as b } from './sub/c.js';\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.js").write_text("import '../a.js';\nexport const c = 1;\n")
    entry = (tmp_path / "a.js").resolve()
    assert graph(entry) == {(tmp_path / "b.js").resolve(), (tmp_path / "sub" / "c.js").resolve()}
    assert graph(entry) - static_imports(entry) == {(tmp_path / "sub" / "c.js").resolve()}
