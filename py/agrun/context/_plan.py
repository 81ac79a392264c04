"""What one build knows before it admits anything: the request, its tools, and what
follows from them (the limit, the window, the current request, the query).

Read-only for the stages (its `Checkpoint` counts steps, nothing else changes). Its
helpers make candidate items, every text that reaches an entry redacted; the
compressions they apply are written to the `Ledger` the caller passes.

Message positions are indexes into the whole ``request.messages``: the window is
``messages[start:]``, and the current request, looked for over the whole list, may lie
before it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._base import canonical_json
from ..ports import Compressor, Ranker, Redactor, Tokenizer
from ._cancel import Checkpoint
from ._compress import apply_spans, check_spans
from ._item import Item
from ._layer import ContextLayer
from ._ledger import Ledger
from ._memo import BuildMemo, Kept
from ._pack import CompressionRecord, entry_tag, frame, tool_calls_text
from ._recall_index import RecallIndex
from ._recall_text import DAY_MS, iso_day
from ._request import ContextRequest, Message, ToolCall
from ._window import current_request_index, unit_end

__all__ = ["DIRECTION_FIELDS", "LAYERS", "Plan", "text_of"]

LAYERS = ("L0", "L1", "L2", "L3", "L4")
DIRECTION_FIELDS = (
    ("active_goal", "activeGoal"),
    ("active_topic", "activeTopic"),
    ("active_query", "activeQuery"),
    ("pending_clarification", "pendingClarification"),
    ("last_clarification_resolution", "lastClarificationResolution"),
    ("selected_source", "selectedSource"),
    ("last_read_source", "lastReadSource"),
)


def text_of(value: Any) -> str:
    """A direction value or tool arguments as text (JSON with sorted keys if not a string)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return canonical_json(value)


@dataclass(frozen=True)
class Plan:
    """One build's inputs and tools, and the values derived from them once."""

    req: ContextRequest
    tok: Tokenizer
    ranker: Ranker
    redactor: Redactor
    compressors: Mapping[str, Compressor]
    extensions: Sequence[ContextLayer]
    replay: Mapping[tuple[str, str], CompressionRecord]
    checkpoint: Checkpoint = field(default_factory=lambda: Checkpoint(None))
    recall_index: RecallIndex | None = None
    """The runtime's index of the log, if it keeps one (``_recall_index``)."""
    memo: BuildMemo | None = None
    """The entries earlier builds of the log made of its messages, if the caller keeps them
    (``_memo``)."""
    kept_entries: dict[int, Kept] = field(init=False, default_factory=dict)
    """This build's entries that came from (or went into) the memo, by ``id``, so the
    pack's digest reuses their JSON; filled in at assembly."""
    messages: tuple[Message, ...] = field(init=False)
    """The whole message log (``req.messages``)."""
    start: int = field(init=False)
    """Where the window starts: the cursor, at most the log's length."""
    anchor: int = field(init=False)
    """Index of the current request in ``messages`` (found over all of it), or ``-1``."""
    anchor_end: int = field(init=False)
    """End of the current request's wire unit (its tool results), or ``-1``."""
    query: str = field(init=False)
    limit: int = field(init=False)

    def __post_init__(self) -> None:
        if self.memo is not None:
            self.memo.made_with(self.redactor, self.tok)
        req = self.req
        messages = req.messages
        # Spec 003: the request is found over the whole log, not only the window. A
        # cursor moved past it (its turn already summarized into memory) must not make
        # the build lose the one message the run is about, nor pick a later one instead.
        anchor = current_request_index(messages, req.input)
        direction = req.direction
        parts = [
            text_of(v)
            for v in (direction.active_goal, direction.active_query, direction.active_topic)
        ]
        budget = req.budget
        limits = [budget.limit]
        if req.model is not None and req.model in budget.per_model:
            limits.append(budget.per_model[req.model])
        if req.stage is not None and req.stage in budget.per_stage:
            limits.append(budget.per_stage[req.stage])
        object.__setattr__(self, "messages", messages)
        object.__setattr__(self, "start", min(req.cursor, len(messages)))
        object.__setattr__(self, "anchor", anchor)
        object.__setattr__(self, "anchor_end", unit_end(messages, anchor) if anchor >= 0 else -1)
        object.__setattr__(self, "query", " ".join([p for p in parts if p] + [req.input or ""]))
        object.__setattr__(self, "limit", min(limits))

    def event_base(self) -> dict[str, Any]:
        """The fields every event of this build carries."""
        return {"causation_id": self.req.causation_id, "stage": self.req.stage}

    def count(self, item: Item) -> int:
        """Count ``item`` as it will be rendered, frame included, and remember it."""
        tag = entry_tag(item.kind, item.role, item.name)
        item.tokens = self.tok.count(frame(tag, item.content, tool_calls_text(item.tool_calls)))
        return item.tokens

    def counted(self, item: Item) -> int:
        """``item``'s tokens: counted now unless they were already."""
        return item.tokens or self.count(item)

    def compress(
        self, ledger: Ledger, data_type: str, source: str, text: str, limit: int
    ) -> tuple[str, bool]:
        """``text`` compressed to ``limit`` tokens if it is over, the record kept in ``ledger``."""
        recorded = self.replay.get((data_type, source))
        before = self.tok.count(text)
        if recorded is None:
            if before <= limit:
                return text, False
            compressor = self.compressors[data_type]
            spans = tuple(compressor.compress(text, limit=limit, tokenizer=self.tok))
            strategy = compressor.name
        else:
            spans, strategy = tuple(recorded.spans), recorded.strategy
        check_spans(spans, text, source)
        out = apply_spans(text, spans)
        ledger.records.append(
            CompressionRecord.model_construct(
                source=source,
                data_type=data_type,
                strategy=strategy,
                spans=spans,
                tokens_before=before,
                tokens_after=self.tok.count(out),
            )
        )
        return out, True

    def redact_name(self, name: str | None) -> str | None:
        """A name that reaches the model (a tool's, an artifact's), redacted like text."""
        return None if name is None else self.redactor.redact(name)

    def message_item(self, ledger: Ledger, index: int, *, compress: bool = True) -> Item:
        """The candidate for ``messages[index]``: redacted (text, name, tool calls), tool
        results compressed; from the memo when an earlier build made it the same way."""
        message = self.messages[index]
        day = self.day_opened(index)
        memo = self.memo
        if memo is None or message.role == "tool":
            return self._message_item(ledger, message, index, day, compress)
        kept = memo.find(index, message, day)
        if kept is None:
            item = self._message_item(ledger, message, index, day, compress)
            kept = Kept(
                message,
                day,
                item.content,
                item.name,
                item.tool_calls,
                self.count(item),
            )
            memo.keep(index, kept)
            item.kept = kept
            return item
        return _message_entry(
            message, index, kept.content, kept.name, kept.tool_calls, tokens=kept.tokens, kept=kept
        )

    def _message_item(
        self, ledger: Ledger, message: Message, index: int, day: int | None, compress: bool
    ) -> Item:
        content = self.redactor.redact(message.content)
        compressed = False
        if compress and message.role == "tool" and message.name not in self.req.options.whole_tools:
            limit = self.req.options.max_tool_output_tokens
            content, compressed = self.compress(ledger, "tool_output", message.id, content, limit)
        if day is not None:
            content = f"[{iso_day(day)}] {content}"
        calls = tuple(self._redacted_call(call) for call in message.tool_calls)
        name = self.redact_name(message.name)
        return _message_entry(message, index, content, name, calls, compressed=compressed)

    def day_opened(self, index: int) -> int | None:
        """The day ``messages[index]`` opens, if it is the first message said that day.

        A conversation that spans days reads differently when the model can see where one
        sitting ends and the next begins ("yesterday" means another day then), so the first
        message of each day carries the date, short; a conversation held today has no marks.
        The first message of the log opens a day when that day is not the request's today.
        Tool results are part of their call's turn and never open one.
        """
        message = self.messages[index]
        if message.at_ms is None or message.role == "tool":
            return None
        day = message.at_ms // DAY_MS
        if index > 0:
            # Only the message just before is asked: a log without times there says nothing.
            at = self.messages[index - 1].at_ms
            return day if at is not None and at // DAY_MS != day else None
        now = self.req.now_ms
        return day if now is not None and now // DAY_MS != day else None

    def _redacted_call(self, call: ToolCall) -> ToolCall:
        # The call's name and arguments reach the model; its id is a reference the
        # provider pairs results with, so it is kept as it is (like every id).
        update: dict[str, Any] = {}
        name = self.redactor.redact(call.name)
        if name != call.name:
            update["name"] = name
        text = text_of(call.arguments)
        scrubbed = self.redactor.redact(text)
        if scrubbed != text:
            update["arguments"] = scrubbed
        return call.model_copy(update=update) if update else call

    def rank(self, items: list[Item]) -> list[Item]:
        """``items`` scored against the query, most relevant first (ties: newer first)."""
        scores = self.ranker.score(self.query, [item.content for item in items])
        for item, score in zip(items, scores, strict=True):
            item.score = float(score)
        return sorted(items, key=lambda i: (-(i.score or 0.0), -i.order[-1]))


def _message_entry(
    message: Message,
    index: int,
    content: str,
    name: str | None,
    calls: tuple[Any, ...],
    **rest: Any,
) -> Item:
    """The L0 candidate for ``message`` at ``index``, from its texts as they reach the model."""
    return Item(
        "L0",
        "message",
        content,
        (message.id,),
        (0, 4, index),
        role=message.role,
        name=name,
        tool_calls=calls,
        tool_call_id=message.tool_call_id,
        **rest,
    )
