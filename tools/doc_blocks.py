"""The fenced code blocks of README.md and docs/*.md, for the tests that run them (issue 24.7).

A fence's info string is a language and optional ``key=value`` attributes:

    ```python                 runs as pasted, in a fresh CPython process (tests/test_docs_run.py)
    ```python run=servers     the same, with servers in place of the ones it names: an
                              OpenAI-compatible double (tools/openai_double.py) at MODEL_SERVER,
                              a throwaway PostgreSQL (tools/pg_server.py) at POSTGRES
    ```python run=fragment    runs with names the test prepares (tests/test_docs_run.py says which)
    ```js / ```html           run in a page in headless Chromium (e2e/test_docs_run.py);
                              ``run=fragment``: inside a wrapper that test provides
    ```json                   parsed as JSON
    ```sh ```text ```ts ```pyi   not run: shell commands, listings and diagrams, TypeScript and
                              Python signatures

A ``# -> text`` (Python) or ``// -> text`` (JS) comment is output: the lines the block prints,
in order, must be exactly these. Any other language, or a fence without one, is an error, so
no block slips through untested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN_IN_CPYTHON = frozenset({"python"})
RUN_IN_CHROMIUM = frozenset({"js", "html"})
PARSED = frozenset({"json"})
NOT_RUN = frozenset({"sh", "text", "ts", "pyi"})
LANGUAGES = RUN_IN_CPYTHON | RUN_IN_CHROMIUM | PARSED | NOT_RUN

MODEL_SERVER = "http://127.0.0.1:8080"
POSTGRES = "postgresql://app@db/agent"

_FENCE = re.compile(r"^(?P<indent> *)```(?P<info>.*)$")
_OUTPUT = re.compile(r"(?:#|//) -> (?P<text>.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, attributes and text."""

    doc: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    language: str
    attributes: dict[str, str] = field(default_factory=dict)
    text: str = ""

    @property
    def name(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def expected_output(self) -> list[str]:
        """The ``# -> `` / ``// -> `` lines, in order: what running it must print."""
        return [m["text"].rstrip() for m in map(_OUTPUT.search, self.text.splitlines()) if m]


def docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one doc, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent = len(opening["indent"])
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise ValueError(f"{path.name}:{index + 1}: a fence that is never closed")
        language, *pairs = opening["info"].split() or [""]
        attributes = dict(pair.partition("=")[::2] for pair in pairs)
        body = "\n".join(line[indent:] for line in lines[index + 1 : end]) + "\n"
        found.append(Block(str(path.relative_to(ROOT)), index + 1, language, attributes, body))
        index = end + 1
    return found


def all_blocks() -> list[Block]:
    return [block for path in docs() for block in blocks(path)]
