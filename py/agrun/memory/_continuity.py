"""Session continuity: the loop that closes each successful turn (spec 000, "Session Memory
Loop").

    session history → extraction → structured evidence (session memory) → the next prompt,
    rebuilt with separate evidence sections → a direct answer or a clarification

At the end of a successful turn `close_turn` extracts what the person stated (the model,
asked for structured JSON and corrected once, or the rule-based extractor), keeps what the
sensitive-content filter allows, rebuilds the session memory, moves the inquiry context on,
and picks the global-memory promotions. A failed turn never gets here, so neither a failure
nor an unresolved ambiguity is promoted into confirmed memory. What it makes is committed
with the turn, in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..chat import ChatMessage, ModelReply, ModelRequest, ProviderError, ReplyBuilder, Usage
from ..context import Message
from ..ports import Clock, Ids, Provider, Tokenizer
from ..sensitive import SensitiveContentFilter
from ._events import (
    Emit,
    GlobalMemoryPromoted,
    MemoryEvent,
    SessionMemoryKept,
    SessionMemoryRebuilt,
)
from ._extraction import (
    EXTRACTION_PROMPT,
    Extraction,
    ExtractionRefused,
    extract_by_rules,
    extraction_request_text,
    extraction_schema,
    parse_extraction,
)
from ._global_memory import GlobalEntry, GlobalMemory
from ._inquiry import InquiryContext, InquiryNotes, next_inquiry
from ._log import MemoryEntry
from ._session_memory import SessionMemory, rebuild
from ._turn_start import TurnStart

__all__ = ["Continuity", "ExtractionCall", "ExtractionMode", "TurnClose"]

ExtractionMode = Literal["auto", "model", "rules", "off"]
EXTRACTION_REPLY_TOKENS = 256


@dataclass(frozen=True)
class ExtractionCall:
    """One model call of the extraction: what it sent and what came back (None with the
    provider error's code when it failed), for the run's trace and ``lastRun``."""

    request: ModelRequest
    reply: ModelReply | None
    failed: str | None = None

    @property
    def usage(self) -> Usage:
        """What it cost: the provider's usage (nothing counted when it failed or said none)."""
        return Usage() if self.reply is None or self.reply.usage is None else self.reply.usage


@dataclass(frozen=True)
class TurnClose:
    """What a successful turn adds to the session beside its messages and memory entries."""

    session_memory: SessionMemory | None
    inquiry: InquiryContext | None
    promotions: tuple[GlobalEntry, ...]
    events: tuple[MemoryEvent, ...]
    extraction_calls: tuple[ExtractionCall, ...] = ()
    """The model calls the extraction made, in order: ``lastRun`` counts them, the run's
    trace keeps them (a replay answers them too)."""


@dataclass
class Continuity:
    """The loop that starts and closes a session's turns (the session's state is its
    owner's: a turn starts from it and its close hands back what it becomes)."""

    session_id: str
    tokenizer: Tokenizer
    ids: Ids
    clock: Clock
    emit: Emit
    """Stamps an event the loop built and hands it to the runtime's subscribers."""
    global_memory: GlobalMemory
    sensitivity: SensitiveContentFilter
    provider: Provider | None = None
    model: str | None = None
    mode: ExtractionMode = "auto"
    scrub: Callable[[str], str] | None = None
    """Masks secrets in what the inquiry keeps of a turn (its goal, topic, query are stored
    with the session, even with redaction of the person's words off)."""
    _events: list[MemoryEvent] = field(default_factory=list)
    _calls: list[ExtractionCall] = field(default_factory=list)

    # -- what a run starts from --------------------------------------------------------

    def start_turn(
        self,
        said: str,
        *,
        session_memory: SessionMemory | None,
        inquiry: InquiryContext | None,
        entries: tuple[MemoryEntry, ...],
    ) -> TurnStart:
        """What a run that was told ``said`` starts from: the session's memory and inquiry,
        the memory log's ``entries``, and global memory's live entries, as of now."""
        return TurnStart(
            said=said,
            session_memory=session_memory,
            inquiry=inquiry,
            entries=entries,
            global_entries=self.global_memory.entries(),
        )

    # -- what a successful turn leaves ----------------------------------------------------

    def calls_model(self, said: str) -> bool:
        """Whether closing a turn that said ``said`` calls the model (the extraction): then
        the runtime closes it after the answer is out, never on the answer's path.

        Global memory off skips the semantic extraction call in every mode (spec 000): the
        session memory is then extracted by the rules. So does ``"auto"`` with a provider
        that says ``answers_extraction = False`` (a test double not asked to answer them)."""
        return (
            self.provider is not None
            and self.global_memory.enabled
            and (self.mode == "model" or (self.mode == "auto" and _takes_extraction(self.provider)))
            and not _is_remember(said)
        )

    async def close_turn(
        self,
        start: TurnStart,
        run_id: str,
        messages: Sequence[Message],
        notes: InquiryNotes,
    ) -> TurnClose:
        """Extract, filter, rebuild and promote for the successful turn ``run_id``, which
        started from ``start`` and added ``messages`` to the history."""
        said = start.said
        self._events = []
        self._calls = []
        reply = next((m.content for m in reversed(messages) if m.role == "assistant"), "")
        extraction, how = await self._extract(said, reply, run_id)
        source = next((m.id for m in messages if m.role == "user"), f"{run_id}:user")
        memory = start.session_memory
        if extraction is not None:
            kept = self._screen(extraction, run_id)
            memory = rebuild(memory, kept, source=source, run_id=run_id, tokenizer=self.tokenizer)
            if not kept.empty:
                # Every turn rebuilds it (its recent turns move on); the event marks new evidence.
                self._emit(
                    SessionMemoryRebuilt(
                        run_id=run_id,
                        revision=memory.revision,
                        source=how,
                        facts=len(memory.facts),
                        preferences=len(memory.preferences),
                        decisions=len(memory.decisions),
                    )
                )
        asked = said if self.scrub is None else self.scrub(said)
        inquiry = notes.apply(next_inquiry(start.inquiry, asked, run_id), run_id)
        promotions = self._promotions(extraction, how, said, run_id)
        return TurnClose(memory, inquiry, promotions, tuple(self._events), tuple(self._calls))

    async def _extract(
        self, said: str, reply: str, run_id: str
    ) -> tuple[Extraction | None, Literal["model", "rules", "remember"]]:
        if self.mode == "off":
            return None, "rules"
        how: Literal["model", "rules", "remember"] = "remember" if _is_remember(said) else "rules"
        if not self.calls_model(said):
            return extract_by_rules(said), how
        extraction = await self._extract_by_model(said, reply, run_id)
        return (extraction, "model") if extraction is not None else (None, "model")

    async def _extract_by_model(self, said: str, reply: str, run_id: str) -> Extraction | None:
        messages: list[ChatMessage] = [
            ChatMessage(role="system", content=EXTRACTION_PROMPT),
            ChatMessage(role="user", content=extraction_request_text(said, reply)),
        ]
        problem = ""
        for attempt in (1, 2):
            try:
                text = await self._call(messages)
            except ProviderError as error:
                problem = f"the extraction call failed: {error}"
                break
            try:
                return parse_extraction(text, said)
            except ExtractionRefused as refused:
                problem = f"the extraction reply was refused ({refused})"
                if attempt == 1:
                    messages += [
                        ChatMessage(role="assistant", content=text),
                        ChatMessage(
                            role="user",
                            content=f"That reply was not usable: {refused}. Reply with the JSON "
                            "object only, with the three lists.",
                        ),
                    ]
        self._emit(SessionMemoryKept(run_id=run_id, reason=problem))
        return None

    async def _call(self, messages: Sequence[ChatMessage]) -> str:
        assert self.provider is not None
        request = ModelRequest(
            messages=tuple(messages),
            model=self.model,
            max_tokens=EXTRACTION_REPLY_TOKENS,
            temperature=0.0,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "extraction", "schema": extraction_schema()},
            },
        )
        builder = ReplyBuilder()
        try:
            async for event in self.provider.stream(request):
                builder.add(event)
        except ProviderError as error:
            # Counted when made, failed or not.
            self._calls.append(ExtractionCall(request, None, error.code))
            raise
        reply = builder.reply()
        self._calls.append(ExtractionCall(request, reply))
        return reply.text

    def _screen(self, extraction: Extraction, run_id: str) -> Extraction:
        """Only what the sensitive-content filter allows reaches session memory."""
        kept: dict[str, tuple[str, ...]] = {}
        refused: list[str] = []
        for kind in ("facts", "preferences", "decisions"):
            allowed = []
            for text in getattr(extraction, kind):
                verdict = self.sensitivity.check({"text": text})
                if verdict.allowed:
                    allowed.append(text)
                else:
                    refused.append(f"{kind}: " + "; ".join(verdict.reasons))
            kept[kind] = tuple(allowed)
        if refused:
            reason = "refused by the sensitive-content filter: " + " | ".join(refused)
            self._emit(SessionMemoryKept(run_id=run_id, reason=reason))
        return Extraction(**kept)

    def _promotions(
        self,
        extraction: Extraction | None,
        how: Literal["model", "rules", "remember"],
        said: str,
        run_id: str,
    ) -> tuple[GlobalEntry, ...]:
        if extraction is None or not self.global_memory.enabled:
            return ()
        entries = [
            GlobalEntry(
                id=self.ids.new_id("gmem"),
                kind=kind,
                text=text,
                confidence=confidence,
                session_id=self.session_id,
                created_at=self.clock.now_ms(),
            )
            for kind, text, confidence in self.global_memory.candidates(extraction, how=how)
        ]
        if not entries:
            return ()
        screened = self.global_memory.screen(entries)
        ids = tuple(e.id for e in screened.promoted)
        self._emit(GlobalMemoryPromoted(run_id=run_id, ids=ids, refused=screened.refused))
        return screened.promoted

    def _emit(self, event: MemoryEvent) -> None:
        self._events.append(self.emit(event))


def _is_remember(said: str) -> bool:
    # A memory command is extracted by the rules whatever the mode: the person said it.
    return said.lstrip().lower().startswith("remember")


def _takes_extraction(provider: Provider) -> bool:
    # A test double scripted for the answer only says so; any other provider takes them.
    return getattr(provider, "answers_extraction", True) is not False
