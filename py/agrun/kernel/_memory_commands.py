"""The built-in memory commands: "remember: ...", "what do you remember", "forget ...".

They work with or without a model, through the memory contract like any skill: remembering
asks for a ``note`` entry; forgetting asks for a ``forget`` tombstone naming the entry it
forgets (the log stays append-only); the lists read the memory's `live_entries`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..memory import FORGET, REMEMBER, MemoryEntry, is_memory_command, live_entries
from ..sensitive import Verdict
from ._skill_view import SkillContext, SkillHelpers

__all__ = ["MEMORY_COMMANDS", "Gate", "MemoryCommands"]

# The write gate: whether an entry may be kept (agrun's sensitive-content filter and the host's).
Gate = Callable[[Any], Verdict]

MEMORY_COMMANDS = "memory"
# The entries a person can list and forget: what was remembered and what was stated.
_LISTED = ("note", "fact", "preference", "decision")


class MemoryCommands:
    """The skill behind the memory commands (registered first, before the host's skills)."""

    name = MEMORY_COMMANDS
    description = (
        "Remembers, lists and forgets notes: 'remember: ...', 'what do you remember', 'forget ...'."
    )

    def __init__(self, gate: Gate | None = None) -> None:
        self._gate = gate

    def applies(self, input: str) -> bool:
        return is_memory_command(input)

    def run(self, input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        remember = REMEMBER.match(input)
        if remember:
            text = remember.group("text").strip()
            note = {"kind": "note", "text": text, "data": {"command": "remember"}}
            verdict = None if self._gate is None else self._gate(note)
            if verdict is not None and not verdict.allowed:
                # Said back without the words: the reply is stored too.
                return (
                    "I won't remember that: it looks like it holds something that must not be "
                    f"kept ({'; '.join(verdict.reasons)})."
                )
            helpers.append_memory(note)
            return f"I'll remember that: {text}"
        entries = [e for e in live_entries(context.memory.read_all()) if e.kind in _LISTED]
        forget = FORGET.match(input)
        if forget:
            return self._forget(forget.group("text").strip(), entries, helpers)
        if not entries:
            return "I don't remember anything yet."
        return "I remember:\n" + "\n".join(f"- {entry.text}" for entry in entries)

    def _forget(self, text: str, entries: list[MemoryEntry], helpers: SkillHelpers) -> str:
        wanted = _words(text)
        matches = [e for e in entries if wanted and wanted <= _words(e.text)]
        if not matches:
            return f"I don't remember anything like {text!r}."
        data: dict[str, Any] = {"forgets": matches[-1].id}
        helpers.append_memory(
            {"kind": "forget", "text": f"forget: {matches[-1].text}", "data": data}
        )
        return f"Forgotten: {matches[-1].text}"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))
