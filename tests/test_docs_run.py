"""Every code block of README.md and docs/*.md runs, and prints what it says (issue 24.7).

Python blocks run here, each in a fresh CPython process in an empty folder, as a reader
would paste them (the fence languages and attributes: tools/doc_blocks.py); JS and HTML
blocks run in a page in e2e/test_docs_run.py. The docs' generated tables are checked too.

CPython only: a block is a whole program (``asyncio.run``, SQLite files, a subprocess, an
HTTP double), which Pyodide under Node cannot start.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agrun
from agrun.context import build_context, validate_request

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
try:
    import doc_blocks
finally:
    sys.path.remove(str(ROOT / "tools"))

pytestmark = pytest.mark.cpython_only

BLOCKS = doc_blocks.all_blocks()
PYTHON = [b for b in BLOCKS if b.language in doc_blocks.RUN_IN_CPYTHON]
JSON = [b for b in BLOCKS if b.language in doc_blocks.PARSED]

# What a ``run=fragment`` block is given, by doc: the names its text says it uses.
FRAGMENT_PRELUDE = {
    # "One entry point": `request` is a context request, as the JSON below it shows.
    "docs/context.md": 'request = {"input": "Find the invoice total"}\n',
}
PACKAGE_DIR = str(Path(agrun.__file__).resolve().parent.parent)


def _run(text: str, cwd: Path) -> list[str]:
    env = {**os.environ, "PYTHONPATH": PACKAGE_DIR}
    done = subprocess.run(
        [sys.executable, "-c", text],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"the block failed:\n{done.stderr}"
    return [line.rstrip() for line in done.stdout.splitlines()]


def test_every_fence_says_what_it_is() -> None:
    unknown = [
        f"{b.name} ```{b.language}" for b in BLOCKS if b.language not in doc_blocks.LANGUAGES
    ]
    assert unknown == [], f"fences in a language the tests neither run nor skip: {unknown}"
    attributes = {
        f"{b.name} {key}={value}"
        for b in BLOCKS
        for key, value in b.attributes.items()
        if key != "run" or value not in ("servers", "fragment")
    }
    assert attributes == set(), "unknown fence attributes"


def test_the_docs_have_blocks_to_run() -> None:
    # So a change to the parser that finds nothing fails instead of passing quietly.
    readme = [b for b in PYTHON if b.doc == "README.md"]
    assert len(readme) >= 3 and readme[0].attributes == {}, (
        "README's first Python block runs as pasted"
    )
    assert all(b.expected_output for b in readme), "every README Python block shows its output"


@pytest.mark.parametrize("block", PYTHON, ids=[b.name for b in PYTHON])
def test_a_python_block_runs_and_prints_what_it_says(
    block: doc_blocks.Block, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    text = block.text
    mode = block.attributes.get("run")
    if mode == "servers":
        double: Any = request.getfixturevalue("double")
        postgres: str = request.getfixturevalue("postgres_conninfo")
        for server, there in (
            (doc_blocks.MODEL_SERVER, double.url),
            (doc_blocks.POSTGRES, postgres),
        ):
            assert server in text, f"a run=servers block without {server}"
            text = text.replace(server, there)
    elif mode == "fragment":
        text = FRAGMENT_PRELUDE[block.doc] + text
    printed = _run(text, tmp_path)
    assert printed == block.expected_output
    if mode == "servers":
        assert double.requests, "the block never called the model"


@pytest.mark.parametrize("block", JSON, ids=[b.name for b in JSON])
def test_a_json_block_is_json(block: doc_blocks.Block) -> None:
    data = json.loads(block.text)
    if block.doc == "docs/context.md":
        # The request "as JavaScript sends it" is one the runtime takes, and builds a pack.
        pack = build_context(validate_request(data))
        assert pack.budget_used > 0


def test_the_docs_tables_are_generated_from_the_code() -> None:
    generator = runpy.run_path(str(ROOT / "tools" / "gen_docs_tables.py"))
    for name, (doc, _) in generator["TABLES"].items():
        text = doc.read_text(encoding="utf-8")
        assert text == generator["render"](name, text), f"run tools/gen_docs_tables.py ({name})"


def test_the_tables_list_every_option_and_storage_method() -> None:
    generator = runpy.run_path(str(ROOT / "tools" / "gen_docs_tables.py"))
    options = generator["options_table"]()
    for name, field in agrun.kernel.RuntimeConfig.model_fields.items():
        assert f"| `{name}` | `{field.alias}` | `{field.default!r}` |" in options
    storage = generator["storage_table"]()
    for method in agrun.ports.STORAGE_METHODS:
        assert f"| `async def {method}(" in storage
