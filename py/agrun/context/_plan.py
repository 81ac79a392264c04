"""What one build knows before it admits anything: the request, its tools, and what
follows from them (the limit, the window, the current request, the query).

Read-only for the stages. Its helpers make candidate items; the compressions they apply
are written to the `Ledger` the caller passes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ports import Compressor, Ranker, Redactor, Tokenizer
from ._compress import apply_spans, check_spans
from ._item import Item
from ._layer import ContextLayer
from ._ledger import Ledger
from ._pack import CompressionRecord, entry_tag, frame, tool_calls_text
from ._request import ContextRequest, Message, ToolCall
from ._window import current_request_index

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
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


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
    window: tuple[Message, ...] = field(init=False)
    anchor: int = field(init=False)
    query: str = field(init=False)
    limit: int = field(init=False)

    def __post_init__(self) -> None:
        req = self.req
        window = req.messages[req.cursor :]
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
        object.__setattr__(self, "window", window)
        object.__setattr__(self, "anchor", current_request_index(window, req.input))
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

    def message_item(self, ledger: Ledger, index: int, *, compress: bool = True) -> Item:
        """The candidate for window message ``index``: redacted, tool results compressed."""
        message = self.window[index]
        content = self.redactor.redact(message.content)
        compressed = False
        if compress and message.role == "tool":
            limit = self.req.options.max_tool_output_tokens
            content, compressed = self.compress(ledger, "tool_output", message.id, content, limit)
        calls = tuple(self._redacted_call(call) for call in message.tool_calls)
        return Item(
            "L0",
            "message",
            content,
            (message.id,),
            (0, 4, index),
            role=message.role,
            name=message.name,
            tool_calls=calls,
            tool_call_id=message.tool_call_id,
            compressed=compressed,
        )

    def _redacted_call(self, call: ToolCall) -> ToolCall:
        text = text_of(call.arguments)
        scrubbed = self.redactor.redact(text)
        return call if scrubbed == text else call.model_copy(update={"arguments": scrubbed})

    def rank(self, items: list[Item]) -> list[Item]:
        """``items`` scored against the query, most relevant first (ties: newer first)."""
        scores = self.ranker.score(self.query, [item.content for item in items])
        for item, score in zip(items, scores, strict=True):
            item.score = float(score)
        return sorted(items, key=lambda i: (-(i.score or 0.0), -i.order[-1]))
