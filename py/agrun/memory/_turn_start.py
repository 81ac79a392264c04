"""What one run starts from: the session's memory as the turn opens, frozen (spec 000).

The memory loop hands a run one `TurnStart`; the run reads from it what it needs (the
snapshot its state shows, the read-attempt signal of a recall question, the clarification
rule, and in a model turn the pack's evidence and direction), each worked out once, when
first read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..context import Direction, MemoryItem
from ._clarification import ClarificationAsk, ClarificationDecision, decide_clarification
from ._global_memory import GlobalEntry
from ._inquiry import InquiryContext
from ._log import MemoryEntry, live_entries
from ._session_memory import SessionMemory, recall_matches
from ._snapshot import ContextSnapshot, ReadAttemptSignal

__all__ = ["TurnStart"]

# Memory kinds a pack sorts into evidence sections; any other kind is a remembered note.
EVIDENCE_KINDS = ("fact", "preference", "decision", "summary")


@dataclass(frozen=True, kw_only=True)
class TurnStart:
    """The session's memory as a run that was told ``said`` starts."""

    said: str
    """The run's input (after the door's redaction)."""
    session_memory: SessionMemory | None
    inquiry: InquiryContext | None
    entries: tuple[MemoryEntry, ...]
    """The memory log, oldest first."""
    global_entries: tuple[GlobalEntry, ...]
    """Global memory's live entries (none when it is disabled)."""

    @cached_property
    def snapshot(self) -> ContextSnapshot:
        """The two canonical layers, as the run's state shows them."""
        return ContextSnapshot(session_memory=self.session_memory, inquiry_context=self.inquiry)

    @cached_property
    def read_signal(self) -> ReadAttemptSignal | None:
        """For a recall-style question: whether the session's confirmed evidence has it."""
        said = self.said
        question = said.rstrip().endswith("?") or said.lower().startswith(("what", "who", "where"))
        if not question or self.session_memory is None:
            return None
        matches = recall_matches(self.session_memory, said)
        return ReadAttemptSignal(
            kind="evidence",
            target=said.strip()[:200],
            found=bool(matches),
            sources=tuple(item.source for item in matches[:5]),
        )

    def clarify(self, ask: ClarificationAsk) -> ClarificationDecision:
        """The last-resort rule, for this turn's input and the session's evidence."""
        return decide_clarification(ask, said=self.said, memory=self.session_memory)

    @cached_property
    def evidence(self) -> tuple[tuple[MemoryItem, ...], dict[str, str]]:
        """What a model turn's pack is offered as memory, each with its evidence kind: the
        session memory's facts, preferences and decisions (L2) and summary (L3), the memory
        log's live entries (L2; the runtime's observations are not offered: the transcript
        says them already), and global memory (L3). The same sentence is offered once."""
        items: list[MemoryItem] = []
        kinds: dict[str, str] = {}
        seen: set[str] = set()

        def offer(id: str, text: str, kind: str, layer: str, seq: int) -> None:
            key = " ".join(text.lower().split())
            if not key or key in seen:
                return
            seen.add(key)
            pack_kind = kind if kind in EVIDENCE_KINDS else "note"
            items.append(MemoryItem(id=id, text=text, kind=pack_kind, layer=layer, seq=seq))  # type: ignore[arg-type]
            kinds[id] = pack_kind

        memory = self.session_memory
        if memory is not None:
            for position, (kind, item) in enumerate(memory.items()):
                offer(f"evidence:{item.source}:{position}", item.text, kind, "L2", position)
            if memory.summary:
                offer("evidence:summary", memory.summary, "summary", "L3", 0)
        for entry in live_entries(self.entries):
            if entry.kind != "observation":
                offer(entry.id, entry.text, entry.kind, "L2", 10_000 + entry.seq)
        for position, row in enumerate(self.global_entries):
            offer(row.id, row.text, row.kind, "L3", position)
        return tuple(items), kinds

    @cached_property
    def direction(self) -> Direction:
        """The inquiry's direction fields, for the pack to protect first."""
        inquiry = self.inquiry
        if inquiry is None:
            return Direction()
        pending = inquiry.pending_clarification
        resolved = inquiry.last_clarification_resolution
        return Direction(
            active_goal=inquiry.active_goal,
            active_topic=inquiry.active_topic,
            active_query=inquiry.active_query,
            pending_clarification=None if pending is None else pending.question,
            last_clarification_resolution=None
            if resolved is None
            else f"{resolved.question} -> {resolved.answer}",
            selected_source=None if inquiry.selected_source is None else inquiry.selected_source.id,
            last_read_source=None
            if inquiry.last_read_source is None
            else inquiry.last_read_source.id,
        )
