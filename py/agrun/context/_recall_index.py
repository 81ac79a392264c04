"""The recall index: each message of a log read once, so recall over a long session is cheap.

A `RecallIndex` holds, for every message of a log in order, what recall reads in it
(``_recall_text``): its normalized terms and their counts, its speaker, the day it was
said and the days it talks about; and, over the whole log, the positions of each term
(postings), of each day, and running totals, so that document frequencies and lengths
over any stretch of the log come from two look-ups instead of a walk.

It is append-only and grows as turns are committed (`extend`): the runtime keeps one
beside the session history (``kernel/_history.History``) and makes it anew when a stored
session is resumed. A build only reads it: the messages of the request past what the
index holds (the turn in progress) are read into a small index of their own, and a build
given an index that does not start with the request's messages reads the whole log
itself. With or without an index, a build gives the same pack; the index only saves
the reading.

Messages are indexed raw (before redaction): terms only score, they are never shown; what
a recalled turn shows is cut from the redacted text by the recall stage.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..ports import Span
from ._recall_text import DAY_MS, DateRange, dates_in, sentence_spans, speaker_label, terms_of
from ._request import Message
from ._window import is_said_by_person

__all__ = ["RecallIndex", "Sentence", "TurnFacts", "is_recallable", "read_sentences", "read_turn"]

# A date longer than this (a whole month) says too little about a day to index it by day.
_LONGEST_DATE = 31


def is_recallable(message: Message) -> bool:
    """Whether recall may bring ``message`` back: something a person said, or a plain
    assistant reply; never a tool call or result, one of the library's own frames, nor an
    answer the person stopped (recalled alone it would read as a finished answer)."""
    if not message.content.strip():
        return False
    if message.role == "assistant":
        return not message.tool_calls and message.run_status is None
    return is_said_by_person(message)


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a turn, as a passage is chosen from it."""

    span: Span
    terms: frozenset[str]
    """Its normalized terms (the speaker's label left out: it is kept with any passage)."""
    dates: tuple[DateRange, ...]
    """The days it names."""


def read_sentences(
    text: str, day: int | None
) -> tuple[tuple[Sentence, ...], tuple[str, Span] | None, list[str]]:
    """The sentences of ``text``, its speaker label, and all its terms (label included)."""
    label = speaker_label(text)
    skip = label[1][1] if label is not None else 0
    found = list(dates_in(text, day))
    sentences = []
    terms = terms_of(text[label[1][0] : skip]) if label is not None else []
    for a, b in sentence_spans(text):
        words = terms_of(text[max(a, skip) : b])
        terms.extend(words)
        dates = tuple(r for (start, _), r in found if a <= start < b)
        sentences.append(Sentence((a, b), frozenset(words), dates))
    return tuple(sentences), label, terms


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What recall reads in one message."""

    id: str
    content: str
    """The raw text, kept to check that the index still describes the same message."""
    role: str
    recallable: bool
    terms: Mapping[str, int]
    """Normalized term -> count (empty when not recallable)."""
    length: int
    """How many terms."""
    speaker: str | None
    """The ``Name:`` label the text opens with, lower-cased, if any."""
    day: int | None
    """The day it was said (days since 1970-01-01), from ``Message.at_ms``."""
    events: tuple[DateRange, ...]
    """The days it talks about, relative ones resolved against ``day``."""
    sentences: tuple[Sentence, ...] = ()
    """Its sentences, for cutting a passage out of it."""
    label: Span | None = None
    """The span of its speaker label (with any ``[...]`` header before it)."""

    def same(self, message: Message) -> bool:
        """Whether this describes ``message`` (same id, role and text)."""
        return (
            self.id == message.id
            and self.role == message.role
            and (self.content is message.content or self.content == message.content)
        )


def read_turn(message: Message) -> TurnFacts:
    """Read ``message`` for recall."""
    day = None if message.at_ms is None else message.at_ms // DAY_MS
    if not is_recallable(message):
        return TurnFacts(message.id, message.content, message.role, False, {}, 0, None, day, ())
    text = message.content
    sentences, label, terms = read_sentences(text, day)
    counts = Counter(terms)
    return TurnFacts(
        message.id,
        text,
        message.role,
        True,
        dict(counts),
        len(terms),
        None if label is None else label[0],
        day,
        tuple(d for sentence in sentences for d in sentence.dates),
        sentences,
        None if label is None else label[1],
    )


class RecallIndex:
    """An append-only index of a message log for recall (see the module docstring).

    ``base`` is the position of its first message in the log (a build's index of the
    turn in progress starts where the runtime's ends).
    """

    def __init__(self, messages: Iterable[Message] = (), *, base: int = 0) -> None:
        self.base = base
        self.end = base
        """The position one past the last message held."""
        self._turns: list[TurnFacts] = []
        self._postings: dict[str, list[int]] = {}
        self._by_day: dict[int, list[int]] = {}
        self._by_event: dict[int, list[int]] = {}
        self._dated: list[int] = []
        self._by_id: dict[str, int] = {}
        self._recallable = [0]
        self._lengths = [0]
        self.speakers: Counter[str] = Counter()
        """Speaker labels seen, with how many messages each opens."""
        self.extend(messages)

    def __len__(self) -> int:
        return len(self._turns)

    def extend(self, messages: Iterable[Message]) -> None:
        """Read and add ``messages``, which follow the ones held."""
        for message in messages:
            self.add(read_turn(message))

    def add(self, turn: TurnFacts) -> None:
        """Add one message already read (`read_turn`)."""
        position = self.end
        self.end += 1
        self._turns.append(turn)
        self._recallable.append(self._recallable[-1] + turn.recallable)
        self._lengths.append(self._lengths[-1] + turn.length)
        for term in turn.terms:
            self._postings.setdefault(term, []).append(position)
        if turn.recallable:
            self._by_id[turn.id] = position
            if turn.day is not None:
                self._by_day.setdefault(turn.day, []).append(position)
            days: set[int] = set()
            for first, last in turn.events:
                if last - first < _LONGEST_DATE:
                    days.update(range(first, last + 1))
            for day in sorted(days):
                self._by_event.setdefault(day, []).append(position)
            if turn.events:
                self._dated.append(position)
            if turn.speaker is not None:
                self.speakers[turn.speaker] += 1

    def turn(self, position: int) -> TurnFacts:
        """What was read in the message at ``position`` of the log."""
        return self._turns[position - self.base]

    def describes(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` start with the messages held here (checked at both ends:
        the runtime feeds its index the log it builds from; this guards against a
        foreign one)."""
        held = len(self._turns)
        if self.base != 0 or held > len(messages):
            return False
        if not held:
            return True
        return self._turns[0].same(messages[0]) and self._turns[-1].same(messages[held - 1])

    # -- look-ups over a stretch [lo, hi) of the log ---------------------------------------

    def _clip(self, lo: int, hi: int) -> tuple[int, int]:
        return max(lo - self.base, 0), max(min(hi - self.base, len(self._turns)), 0)

    def recallable(self, lo: int, hi: int) -> int:
        """How many recallable messages lie in ``[lo, hi)``."""
        a, b = self._clip(lo, hi)
        return self._recallable[b] - self._recallable[a] if b > a else 0

    def total_length(self, lo: int, hi: int) -> int:
        """How many terms the messages in ``[lo, hi)`` hold."""
        a, b = self._clip(lo, hi)
        return self._lengths[b] - self._lengths[a] if b > a else 0

    def positions(self, term: str, lo: int, hi: int) -> list[int]:
        """Positions in ``[lo, hi)`` of the messages holding ``term``, ascending."""
        return _between(self._postings.get(term, ()), lo, hi)

    def postings(self, term: str, lo: int, hi: int) -> list[tuple[int, TurnFacts]]:
        """The messages in ``[lo, hi)`` holding ``term``, with their positions."""
        turns, base = self._turns, self.base
        return [(p, turns[p - base]) for p in self.positions(term, lo, hi)]

    def frequency(self, term: str, lo: int, hi: int) -> int:
        """How many messages in ``[lo, hi)`` hold ``term``."""
        held = self._postings.get(term)
        if not held:
            return 0
        return bisect_left(held, hi) - bisect_left(held, lo)

    def said_on(self, day: int, lo: int, hi: int) -> list[int]:
        """Positions in ``[lo, hi)`` of recallable messages said on ``day``."""
        return _between(self._by_day.get(day, ()), lo, hi)

    def talking_of(self, day: int, lo: int, hi: int) -> list[int]:
        """Positions in ``[lo, hi)`` of recallable messages that name ``day``."""
        return _between(self._by_event.get(day, ()), lo, hi)

    def dated(self, lo: int, hi: int) -> list[int]:
        """Positions in ``[lo, hi)`` of recallable messages that name a day."""
        return _between(self._dated, lo, hi)

    def position_of(self, message_id: str) -> int | None:
        """The position of the recallable message ``message_id`` (the last, if an id came
        twice), or None."""
        return self._by_id.get(message_id)


def _between(positions: Sequence[int], lo: int, hi: int) -> list[int]:
    if not positions:
        return []
    return list(positions[bisect_left(positions, lo) : bisect_left(positions, hi)])
