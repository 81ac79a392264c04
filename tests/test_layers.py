"""The layering rule, enforced: what each part of agrun may import (docs/architecture.md).

    agrun._base      the model base and the error tree        imports no agrun module
    agrun.storage    records, export files, memory store      _base
    agrun.sensitive  secret shapes, redactor, filter          _base
    agrun.chat       what crosses the Provider port           _base
    agrun.ports      every Protocol the core depends on       _base, storage, chat (data)
    agrun.context    context packs                            _base, ports, sensitive
    agrun.memory     memory log, history, session memory,     _base, ports, chat, context,
                     inquiry, global memory, continuity       sensitive
    agrun.content    the content store, read_content          _base, context, sensitive
    agrun.kernel     runs, model turns, skills, the session   _base, ports, context, storage,
                                                              sensitive, chat, memory, content
    agrun.adapters   the only I/O                             anything above
      .sync_server   the sync server (Starlette, uvicorn)     nothing imports it; the only
                                                              module importing starlette
    agrun (door)     __init__, _create, testing               anything

The core (everything but adapters and the door) never imports the ambient world: no
time, ids, randomness, host or network modules, relative imports included.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AGRUN_SOURCE

PACKAGE = AGRUN_SOURCE
ALLOWED: dict[str, set[str]] = {
    "agrun._base": set(),
    "agrun.storage": {"agrun._base"},
    "agrun.sensitive": {"agrun._base"},
    "agrun.chat": {"agrun._base"},
    "agrun.ports": {"agrun._base", "agrun.storage", "agrun.chat"},
    "agrun.context": {"agrun._base", "agrun.ports", "agrun.sensitive"},
    "agrun.memory": {
        "agrun._base",
        "agrun.ports",
        "agrun.chat",
        "agrun.context",
        "agrun.sensitive",
    },
    "agrun.content": {"agrun._base", "agrun.context", "agrun.sensitive"},
    "agrun.trace": {
        "agrun._base",
        "agrun.ports",
        "agrun.chat",
        "agrun.context",
        "agrun.content",
        "agrun.memory",
        "agrun.sensitive",
        "agrun.storage",
    },
    "agrun.kernel": {
        "agrun._base",
        "agrun.ports",
        "agrun.context",
        "agrun.storage",
        "agrun.sensitive",
        "agrun.chat",
        "agrun.memory",
        "agrun.content",
        "agrun.trace",
    },
}
# The ambient world: time, ids, randomness, the host, processes and the network.
BANNED = {
    "time",
    "uuid",
    "random",
    "secrets",
    "js",
    "pyodide",
    "pyodide_js",
    "sqlite3",
    "psycopg",
    "psycopg_pool",
    "subprocess",
    "socket",
    "ssl",
    "http",
    "urllib",
    "asyncio.subprocess",
    "asyncio.streams",
    "starlette",
    "uvicorn",
}
# The sync server's web stack: never in a page (Pyodide), never loaded by `import agrun`.
SERVER_ONLY = ("starlette", "uvicorn")
SYNC_SERVER = "agrun.adapters.sync_server"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports (relative imports made absolute), TYPE_CHECKING included."""
    name = module_name(path)
    package = name if is_package(path) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                root = ".".join(base + ([node.module] if node.module else []))
            else:
                root = node.module or ""
            found.add(root)
            # `from asyncio import subprocess` names a module too.
            found.update(f"{root}.{alias.name}" for alias in node.names)
    return found


def layer_of(module: str) -> str | None:
    for layer in ALLOWED:
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def core_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if layer_of(module_name(p)) is not None)


def test_every_layer_has_modules() -> None:
    layers = {layer_of(module_name(path)) for path in core_files()}
    assert layers == set(ALLOWED)


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_module_imports_only_what_its_layer_may(path: Path) -> None:
    layer = layer_of(module_name(path))
    assert layer is not None
    allowed = ALLOWED[layer] | {layer}
    agrun_imports = {m for m in imports_of(path) if m == "agrun" or m.startswith("agrun.")}
    wrong = {m for m in agrun_imports if layer_of(m) not in allowed}
    assert wrong == set(), f"{layer} may import only {sorted(allowed)}"


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_module_imports_no_ambient_world(path: Path) -> None:
    reached = {
        banned
        for module in imports_of(path)
        for banned in BANNED
        if module == banned or module.startswith(banned + ".")
    }
    assert reached == set()


def test_core_modules_form_no_import_cycle() -> None:
    files = {module_name(p): p for p in core_files()}
    graph = {
        name: {m for m in imports_of(path) if m in files and m != name}
        for name, path in files.items()
    }
    # A package's __init__ re-exports its own modules; a cycle through it is not a
    # dependency between the modules themselves.
    for name in graph:
        graph[name] = {m for m in graph[name] if not name.startswith(m + ".")}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt]
                raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
            if nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


# The baseline is pydantic at work: it loads its schema machinery (which imports uuid) at
# the first model it builds, whoever defines it.
PROBE = """
import json, sys
import pydantic
class Probe(pydantic.BaseModel):
    x: int = 0
baseline = set(sys.modules)
import agrun.kernel, agrun.memory, agrun.content, agrun.context, agrun.storage, agrun.ports
print(json.dumps(sorted(set(sys.modules) - baseline)))
"""


@pytest.mark.cpython_only
def test_importing_the_core_loads_no_adapter_and_no_ambient_module() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    assert any(m.startswith("agrun.kernel") for m in loaded)
    assert {m for m in loaded if m.startswith("agrun.adapters")} == set()
    assert loaded & {"uuid", "sqlite3", "psycopg", "random", "js", "pyodide"} == set()


def test_only_the_sync_server_imports_the_web_stack_and_nothing_imports_it() -> None:
    everything = sorted(PACKAGE.rglob("*.py"))
    web = {
        module_name(path)
        for path in everything
        if any(m.split(".")[0] in SERVER_ONLY for m in imports_of(path))
    }
    assert web == {SYNC_SERVER}
    importers = {module_name(p) for p in everything if SYNC_SERVER in imports_of(p)}
    assert importers == set()


@pytest.mark.cpython_only
def test_a_runtime_that_syncs_loads_no_web_stack() -> None:
    probe = (
        "import json, sys, agrun\n"
        "from agrun.storage import MemoryStorage\n"
        "agrun.create_runtime(storage=MemoryStorage(), sync={'url': 'http://127.0.0.1:1'})\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    assert "agrun.adapters.sync_client" in loaded
    assert {m for m in loaded if m.split(".")[0] in SERVER_ONLY or m == SYNC_SERVER} == set()
