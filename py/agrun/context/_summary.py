"""The conversation's L2 summary: extractive, so it can only shrink what was said.

Transcript that no longer fits the window is not lost silently: the newest dropped
messages each offer their first sentence, the sentences most relevant to the goal/query
are kept within the summary's token limit, and they are listed in the order they were
said. Every line is a span of a message, recorded for replay.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..ports import Ranker, Redactor, Span, Tokenizer
from ._compress import check_spans
from ._pack import CompressionRecord
from ._request import Message

__all__ = ["first_sentence", "summarize"]

_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)|\n")
_MAX_CHARS = 300


def first_sentence(text: str) -> Span | None:
    """The span of ``text``'s first sentence (at most 300 chars, cut at a space), or None."""
    start = len(text) - len(text.lstrip())
    if start >= len(text):
        return None
    found = _SENTENCE_END.search(text, start)
    end = found.end() if found else len(text)
    if text[end - 1 : end] == "\n":
        end -= 1
    if end - start > _MAX_CHARS:
        cut = text.rfind(" ", start, start + _MAX_CHARS)
        end = cut if cut > start else start + _MAX_CHARS
    end = len(text[:end].rstrip())
    return (start, end) if end > start else None


def summarize(
    messages: Sequence[Message],
    *,
    query: str,
    limit: int,
    tokenizer: Tokenizer,
    ranker: Ranker,
    redactor: Redactor,
    replay: Mapping[tuple[str, str], CompressionRecord],
) -> tuple[str, tuple[str, ...], list[CompressionRecord]]:
    """Summary text, its source message ids and its compression records ("" when empty)."""
    replaying = any(kind == "conversation" for kind, _ in replay)
    chosen: list[tuple[int, Message, str, tuple[Span, ...]]] = []
    strategy = "first_sentence"
    candidates: list[tuple[int, Message, str, tuple[Span, ...]]] = []
    for position, message in enumerate(messages):
        text = redactor.redact(message.content)
        if replaying:
            record = replay.get(("conversation", message.id))
            if record is not None:
                check_spans(record.spans, text, message.id)
                chosen.append((position, message, text, tuple(record.spans)))
                strategy = record.strategy
            continue
        span = first_sentence(text)
        if span is not None:
            candidates.append((position, message, text, (span,)))
    if not replaying:
        sentences = [text[s[0][0] : s[0][1]] for _, _, text, s in candidates]
        scores = ranker.score(query, sentences)
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], -i))
        used = 0
        for i in order:
            cost = tokenizer.count(sentences[i]) + 1
            if used + cost <= limit:
                used += cost
                chosen.append(candidates[i])
        chosen.sort(key=lambda c: c[0])
    lines: list[str] = []
    records: list[CompressionRecord] = []
    for _, message, text, spans in chosen:
        line = "\n".join(text[a:b] for a, b in spans)
        lines.append(line)
        records.append(
            CompressionRecord.model_construct(
                source=message.id,
                data_type="conversation",
                strategy=strategy,
                spans=spans,
                tokens_before=tokenizer.count(text),
                tokens_after=tokenizer.count(line),
            )
        )
    return "\n".join(lines), tuple(m.id for _, m, _, _ in chosen), records
