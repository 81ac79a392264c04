"""What a function's docstring tells a model: its summary, and a line per parameter.

Three common styles are read, whichever the docstring uses:

- Google: an ``Args:`` (or ``Arguments:``, ``Parameters:``) section of ``name: text`` or
  ``name (type): text`` lines, continuation lines indented further;
- Sphinx: ``:param name: text`` (or ``:param type name: text``) fields;
- NumPy: a ``Parameters`` heading underlined with dashes, then ``name : type`` lines with the
  text indented below.

The summary is everything before the first section or field. Nothing here is strict: a
docstring in no known style is all summary, and its parameters go undescribed.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["Docstring", "parse_docstring"]

_GOOGLE_ARGS = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$")
_GOOGLE_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|Notes?|"
    r"Attributes|See Also|Warnings?|References|Todo)\s*:\s*$"
)
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_FIELD = re.compile(r"^:(\w+)(?:\s+([^:]*?))?\s*:\s*(.*)$")
_NUMPY_RULE = re.compile(r"^-{3,}\s*$")
_NUMPY_ITEM = re.compile(r"^(\w+)\s*(?::.*)?$")


@dataclass(frozen=True, slots=True)
class Docstring:
    """A docstring read: the summary, and each documented parameter's text by name."""

    summary: str = ""
    parameters: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> Docstring:
    """Read ``doc`` (a function's ``__doc__``, indented or not)."""
    text = inspect.cleandoc(doc or "")
    if not text:
        return Docstring()
    lines = text.splitlines()
    end = _summary_end(lines)
    summary = "\n".join(lines[:end]).strip()
    parameters = _google(lines) or _sphinx(lines) or _numpy(lines)
    return Docstring(summary=summary, parameters=parameters)


def _summary_end(lines: list[str]) -> int:
    for index, line in enumerate(lines):
        stripped = line.strip()
        if _GOOGLE_SECTION.match(stripped) or _SPHINX_FIELD.match(stripped):
            return index
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if stripped and _NUMPY_RULE.match(following.strip()):
            return index
    return len(lines)


def _google(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    start = next((i for i, line in enumerate(lines) if _GOOGLE_ARGS.match(line.strip())), None)
    if start is None:
        return found
    base: int | None = None
    name = ""
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            break  # the next section
        base = indent if base is None else base
        item = _GOOGLE_ITEM.match(line.strip())
        if indent == base and item:
            name = item.group(1).lstrip("*")
            found[name] = item.group(2).strip()
        elif name:
            found[name] = f"{found[name]} {line.strip()}".strip()
    return found


def _sphinx(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    name = ""
    for line in lines:
        stripped = line.strip()
        match = _SPHINX_FIELD.match(stripped)
        if match:
            kind, words, text = match.groups()
            name = ""
            if kind in ("param", "parameter", "arg", "argument") and words:
                name = words.split()[-1]
                found[name] = text.strip()
        elif name and stripped:
            found[name] = f"{found[name]} {stripped}".strip()
    return found


def _numpy(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    start = next(
        (
            i
            for i, line in enumerate(lines[:-1])
            if line.strip() in ("Parameters", "Arguments")
            and _NUMPY_RULE.match(lines[i + 1].strip())
        ),
        None,
    )
    if start is None:
        return found
    name = ""
    for index, line in enumerate(lines[start + 2 :], start + 2):
        if not line.strip():
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if _NUMPY_RULE.match(following.strip()):
            break  # the next section's heading
        indent = len(line) - len(line.lstrip())
        item = _NUMPY_ITEM.match(line.strip())
        if indent == 0 and item:
            name = item.group(1)
            found[name] = ""
        elif name:
            found[name] = f"{found[name]} {line.strip()}".strip()
    return found
