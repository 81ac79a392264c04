"""Reading a stored session back into the kernel's models, keeping whatever is readable.

What the runtime resumes with is exactly what an import is checked against: one reader,
so a file the runtime accepts is a file it can read back, and a damaged session on disk
(an older writer's bug, a hand edit, a partial write) still opens: each record that does
not read is left out and named, never deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..context import Message
from ..memory import InquiryContext, MemoryEntry, SessionMemory
from ..storage import SessionSnapshot
from ._models import LastRun

__all__ = ["ReadSession", "read_session"]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ReadSession:
    """A stored session as the kernel's models, and what could not be read."""

    history: tuple[Message, ...]
    memory: tuple[MemoryEntry, ...]
    last_run: LastRun | None
    session_memory: SessionMemory | None
    inquiry: InquiryContext | None
    last_event_seq: int
    damage: tuple[str, ...]


def read_session(snapshot: SessionSnapshot) -> ReadSession:
    """Every record of ``snapshot`` the kernel can read; the others named in ``damage``."""
    damage = list(snapshot.damage)
    history: list[Message] = []
    memory: list[MemoryEntry] = []
    last_seq = 0
    for turn in snapshot.turns:
        where = f"turn {turn.seq}"
        history.extend(_read(Message, turn.messages, f"{where} messages", damage))
        memory.extend(_read(MemoryEntry, turn.memory_entries, f"{where} memoryEntries", damage))
        for position, event in enumerate(turn.events):
            seq, kind = event.get("seq"), event.get("kind")
            if type(seq) is not int or seq < 1 or not isinstance(kind, str):
                damage.append(f"{where} events[{position}]: needs an integer seq and a kind")
                continue
            last_seq = max(last_seq, seq)
    return ReadSession(
        history=tuple(history),
        memory=tuple(memory),
        last_run=_one(LastRun, snapshot.last_run, "lastRun", damage),
        session_memory=_one(SessionMemory, snapshot.session_memory, "sessionMemory", damage),
        inquiry=_one(InquiryContext, snapshot.inquiry, "inquiry", damage),
        last_event_seq=last_seq,
        damage=tuple(damage),
    )


def _one(
    model: type[M], value: Mapping[str, Any] | None, where: str, damage: list[str]
) -> M | None:
    if value is None:
        return None
    found = _read(model, (value,), where, damage)
    return found[0] if found else None


def _read(
    model: type[M], items: Iterable[Mapping[str, Any]], where: str, damage: list[str]
) -> list[M]:
    read = []
    for position, item in enumerate(items):
        try:
            read.append(model.model_validate(item))
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            field = ".".join(str(part) for part in first["loc"]) or "<record>"
            damage.append(f"{where}[{position}].{field}: {first['msg']}")
    return read
