"""Session memory: the durable evidence of one session, rebuilt at the end of every turn
(spec 000, "Session Context Model").

Facts, preferences and decisions the person stated (each a verbatim sentence, with the
message it came from), a compacted summary of older evidence, and the ids of the recent
turns. `rebuild` makes the next one from the last one and a successful turn's extraction:
it is rebuilt, not accumulated: a restated item moves to the newest place, and once the
evidence passes its token cap the oldest items are merged, verbatim, into the summary (the
session's L3), so memory per session stays flat however long the session runs. Failed turns
never reach it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from pydantic import Field

from .._base import Model
from ..ports import Tokenizer
from ._extraction import Extraction
from ._slots import content_words

__all__ = ["Evidence", "SessionMemory", "Statement", "rebuild", "recall_matches", "statements"]

KINDS = ("facts", "preferences", "decisions")
# Tokens the evidence may take (the pack's L2) before the oldest is merged into the summary,
# the summary's own cap (its oldest lines go first), and how many recent turns are named.
EVIDENCE_CAP = 1200
SUMMARY_CAP = 1500
RECENT_TURNS = 6


class Evidence(Model):
    """One confirmed item: what the person said, where, when."""

    text: str
    """The sentence, verbatim."""
    source: str
    """The id of the message it was said in."""
    run_id: str
    """The turn that extracted it."""


class SessionMemory(Model):
    """The session's durable semantic layer (rebuilt by `rebuild`, stored whole)."""

    facts: tuple[Evidence, ...] = ()
    preferences: tuple[Evidence, ...] = ()
    decisions: tuple[Evidence, ...] = ()
    summary: str = ""
    """Older evidence, merged verbatim (one line each, newest last): the session's L3."""
    recent_turns: tuple[str, ...] = ()
    """Ids of the person's messages of the last few turns, oldest first."""
    revision: int = Field(0, ge=0)
    """How many turns have rebuilt it."""

    def items(self) -> list[tuple[str, Evidence]]:
        """Every evidence item with its kind (``fact``, ``preference``, ``decision``)."""
        return [(kind[:-1], item) for kind in KINDS for item in getattr(self, kind)]


def rebuild(
    previous: SessionMemory | None,
    extraction: Extraction,
    *,
    source: str,
    run_id: str,
    tokenizer: Tokenizer,
    evidence_cap: int = EVIDENCE_CAP,
    summary_cap: int = SUMMARY_CAP,
) -> SessionMemory:
    """The session memory after a successful turn whose person's message is ``source``."""
    memory = previous or SessionMemory()
    lists: dict[str, list[Evidence]] = {kind: list(getattr(memory, kind)) for kind in KINDS}
    for kind in KINDS:
        for text in getattr(extraction, kind):
            key = _key(text)
            # Restated: the old item gives way, the new one is the newest.
            lists[kind] = [item for item in lists[kind] if _key(item.text) != key]
            lists[kind].append(Evidence(text=text, source=source, run_id=run_id))
    summary_lines = memory.summary.splitlines() if memory.summary else []
    merged = _cap(lists, evidence_cap, tokenizer)
    summary_lines.extend(merged)
    while summary_lines and tokenizer.count("\n".join(summary_lines)) > summary_cap:
        summary_lines.pop(0)
    recent = (*memory.recent_turns, source)[-RECENT_TURNS:]
    return SessionMemory(
        facts=tuple(lists["facts"]),
        preferences=tuple(lists["preferences"]),
        decisions=tuple(lists["decisions"]),
        summary="\n".join(summary_lines),
        recent_turns=recent,
        revision=memory.revision + 1,
    )


def _cap(lists: dict[str, list[Evidence]], cap: int, tokenizer: Tokenizer) -> list[str]:
    """Take the oldest items out until the evidence fits ``cap``; returns them, oldest first."""
    merged: list[str] = []
    total = sum(tokenizer.count(item.text) for items in lists.values() for item in items)
    while total > cap:
        # The oldest item of the longest list goes first: no kind is emptied by another.
        kind = max(KINDS, key=lambda k: (len(lists[k]), -KINDS.index(k)))
        oldest = lists[kind].pop(0)
        total -= tokenizer.count(oldest.text)
        merged.append(oldest.text)
    return merged


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


class Statement(NamedTuple):
    """One confirmed sentence of the session, wherever session memory keeps it."""

    text: str
    source: str
    """The id of the message it was said in, or ``"summary"`` for a line of the summary
    (merging keeps the sentence, not where it came from)."""


def statements(memory: SessionMemory | None) -> list[Statement]:
    """Every confirmed sentence: the summary's lines (older evidence, merged there when the
    evidence passed its cap), then the facts, preferences and decisions. Merging into the
    summary only shrinks the evidence: what it holds is still confirmed, so everything that
    reads the evidence reads it too."""
    if memory is None:
        return []
    merged = [Statement(line, "summary") for line in memory.summary.splitlines() if line.strip()]
    return merged + [Statement(item.text, item.source) for _, item in memory.items()]


def recall_matches(memory: SessionMemory | None, question: str) -> Sequence[Statement]:
    """The confirmed sentences (the summary's too) that share a content word with
    ``question``, best first."""
    words = content_words(question)
    scored = []
    for statement in statements(memory):
        shared = words & content_words(statement.text)
        if shared:
            scored.append((len(shared), statement))
    return [statement for _, statement in sorted(scored, key=lambda pair: -pair[0])]
