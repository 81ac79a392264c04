"""Recall (spec 001 "retrieve -> rank"): the older turns that answer the request.

The message window keeps the newest turns; what lies beyond it is searched here, against
the request (its input, and the goal, query and topic of the direction fields), and the
best turns come back as L2 entries of kind ``recalled_turn``: one per message, its id as
the source, in conversation order, each whole (up to ``_WHOLE_TURN`` tokens) or cut to
its most relevant sentence with the sentence before and after it (the answer is often
next to the sentence that shares the question's words): verbatim spans of the redacted
text, with the speaker's ``Name:`` label when the text opens with one, recorded like
every compression so a replay applies them. Each is headed by the day it was said
(``[2024-03-14] ``, from ``Message.at_ms``): many answers ("when did she ...") are only
in when a turn was said. Once every other stage has had its turn, the room left is
topped up with the next turns, a turn that does not fit cut to its best sentence alone,
and what room no match fills with the turns just below the window, newest first.

Scoring is Okapi BM25 over the turns' normalized terms (``_recall_text``), plus signals
that need no model, each of which can be turned on or off
(``ContextOptions.recall_signals``; all but ``entities`` are on by default):

- ``speaker``: a person the request names by their ``Name:`` label, or "you" (the
  assistant) / "I" (the user) in a chat with an assistant; other speakers' turns count
  less;
- ``entities``: names (capitalized inside a sentence) and numbers in the request count
  double (off by default: on the recall benchmark it gained nothing at any budget, since
  numbers already meet through their normalized spelling);
- ``dates``: a turn that names the day the request names ("last Tuesday", resolved
  against the day it was said, ``Message.at_ms``) scores like a rare shared word, one
  said that day half that; the date's own words are not search words;
- ``question``: "what did she do after ..." favours turns that tell of something done on
  a day ("yesterday I ...") and brings the same speaker's next turn with each recalled
  one ("before": the previous one); "now" / "these days" favours newer turns;
- ``exchange``: a reply's words count half for the turn it answers (replies name what
  they answer), and a recalled question brings its answer;
- ``similarity``: with ``ContextRequest.recall_similarity`` (an embedding model's cosine
  similarity of older turns to the request, given as data by the runtime's embedder), a
  turn close in meaning scores up to ``_SIMILAR`` rare shared words: what a paraphrase
  ("how heavy is the dog" for "Scout weighs 10 kilos") shares with no word.

Only turns scoring above zero are recalled, best first (ties: newer first), while they fit
their share of the budget; the best of the rest are reported as passed over. A turn is a
message a person said or a plain assistant reply: tool calls and results (which must stay
together) and the library's own frames are never recalled, and nothing of the current
request's unit or the window is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .._base import trusted
from ..ports import Span
from ._compress import apply_spans, check_spans
from ._item import Item
from ._ledger import Ledger
from ._pack import CompressionRecord, RecallHit
from ._plan import Plan
from ._recall_index import RecallIndex, TurnFacts, read_sentences
from ._recall_text import DAY_MS, DateRange, dates_in, iso_day, terms_of
from ._transcript import Transcript

__all__ = ["PASSED_OVER", "recall"]

_K1 = 1.2
_B = 0.75
_EXCHANGE = 0.5
"""Share of a reply's score credited to the turn it answers."""
_OTHER_SPEAKER = 0.3
"""Weight of a turn by another speaker than the one the request names."""
_OTHER_ROLE = 0.5
"""Weight of a turn by the other role than the one "you" / "I" points at."""
_EVENT_DAY = 1.0
"""A turn naming the request's day scores this many rare shared words."""
_SAID_DAY = 0.5
"""A turn said on the request's day scores this many rare shared words."""
_EVENT_TOLD = 0.5
"""For after / before questions: a turn that tells of something on a day ("yesterday")
scores this many rare shared words."""
_NEWER = 0.5
"""For "now" questions: the newest candidate weighs this much more than the oldest."""
_ENTITY = 2.0
_SIMILAR = 2.0
"""A turn as close in meaning to the request as can be scores this many rare shared words."""
_SIMILAR_FLOOR = 0.2
"""Cosine similarity at or below which a turn gains nothing (unrelated text is not 0)."""
_COMMON = 4
"""A word held by more than 1 / _COMMON of the searched turns is a common one."""
_COMMON_WALK = 512
"""How many of a common word's newest turns are scored when no rarer word matched."""
_NEAR = 4
"""How many messages away the same speaker's next (or previous) turn may be."""
PASSED_OVER = 8
"""How many passed-over turns the pack reports."""
_MISFITS = 64
"""Give up after this many candidates in a row did not fit."""
_FILL_MISFITS = 4
"""The recency fill gives up after this many turns in a row did not fit even cut: the
room left is then smaller than a dated sentence, and each try costs a cut and a count."""
_WHOLE_LIMIT = 120
"""A turn recalled with no sentence to cut to is kept whole up to this many tokens, else
its leading sentences within it."""
_BEFORE_MATCH = 1
"""Sentences kept before the one that matches the request best."""
_AFTER_MATCH = 1
"""Sentences kept after the one that matches the request best: the answer is often
in the sentence after the one that shares the question's words."""
_WHOLE_TURN = 120
"""A turn costing at most this many tokens is recalled whole, not cut. (60 cut a fifth
of LoCoMo's turns people wrote and lost answers in them; bench/recall_locomo.py.)"""
SHORT = "short passage"
"""The strategy of a turn cut to its best sentence alone, to fit the room left."""

_YOU = re.compile(
    r"\b(?:did|do|does|have|had|would|could|will|can|were)\s+you\b|"
    r"\byou\s+(?:said|say|told|tell|recommended|recommend|suggested|suggest|mentioned|"
    r"advised|gave|thought)\b",
    re.IGNORECASE,
)
_I = re.compile(r"\b(?:I|me|my|mine|myself)\b")
_AFTER = re.compile(r"\b(?:after|afterwards|once|following|next)\b", re.IGNORECASE)
_BEFORE = re.compile(r"\b(?:before|beforehand|prior to|leading up to)\b", re.IGNORECASE)
_NOW = re.compile(
    r"\b(?:now|these days|currently|at the moment|anymore|any more|nowadays|latest|still)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|[0-9]+")


@dataclass
class _Query:
    """What the request asks, as recall reads it."""

    weights: dict[str, float]
    speaker: str | None = None
    role: str | None = None
    dates: list[DateRange] = field(default_factory=list)
    after: bool = False
    before: bool = False
    now: bool = False
    idf: dict[str, float] = field(default_factory=dict)
    """Weight times idf of each query term, once scored (for cutting passages)."""
    unit: float = 1.0
    """The idf of a word found once: what a date match is worth."""


class _Log:
    """The log as recall reads it: the runtime's index, then the turn in progress."""

    def __init__(self, plan: Plan) -> None:
        messages = plan.messages
        self.size = len(messages)
        self.lo = max(0, self.size - plan.req.options.recall_scan)
        index = plan.recall_index
        if index is not None and index.describes(messages):
            held = len(index)
            self.parts = [index, self._read(plan, held)]
        else:
            self.parts = [self._read(plan, self.lo)]
        self.speakers = {name for part in self.parts for name in part.speakers}

    @staticmethod
    def _read(plan: Plan, start: int) -> RecallIndex:
        index = RecallIndex(base=start)
        for message in plan.messages[start:]:
            plan.checkpoint.step()
            index.extend((message,))
        return index

    def turn(self, position: int) -> TurnFacts:
        for part in self.parts:
            if part.base <= position < part.end:
                return part.turn(position)
        raise IndexError(position)

    def recallable(self, lo: int, hi: int) -> int:
        return sum(part.recallable(lo, hi) for part in self.parts)

    def total_length(self, lo: int, hi: int) -> int:
        return sum(part.total_length(lo, hi) for part in self.parts)

    def postings(self, term: str, lo: int, hi: int) -> list[tuple[int, TurnFacts]]:
        return [p for part in self.parts for p in part.postings(term, lo, hi)]

    def frequency(self, term: str, lo: int, hi: int) -> int:
        return sum(part.frequency(term, lo, hi) for part in self.parts)

    def said_on(self, day: int, lo: int, hi: int) -> list[int]:
        return [p for part in self.parts for p in part.said_on(day, lo, hi)]

    def position_of(self, message_id: str) -> int | None:
        for part in reversed(self.parts):
            position = part.position_of(message_id)
            if position is not None:
                return position
        return None

    def talking_of(self, day: int, lo: int, hi: int) -> list[int]:
        return [p for part in self.parts for p in part.talking_of(day, lo, hi)]

    def dated(self, lo: int, hi: int) -> list[int]:
        return [p for part in self.parts for p in part.dated(lo, hi)]


def recall(
    plan: Plan, ledger: Ledger, transcript: Transcript, cap: int
) -> Callable[[frozenset[str]], None] | None:
    """Admit recalled turns from below the window while ``ledger.used`` stays within
    ``cap``; note them in ``transcript.recalled`` and the figures in ``ledger.recall``.

    Returns the top-up, to call once every other stage has had its turn: it fills what
    room is left with the next turns (or their best sentence alone), from below the
    window as it ended, leaving out the messages given (the summary's sources)."""
    options = plan.req.options
    if options.recall_share <= 0 or "L2" not in options.layers:
        return None
    log = _Log(plan)
    lo = max(plan.start, log.lo)
    hi = transcript.kept_from
    if hi <= lo:
        return None
    query = _read_query(plan, log)
    scores = _score(plan, log, query, lo, hi)
    note = ledger.recall
    note.searched = log.recallable(lo, hi) - _anchor_recallable(plan, log, lo, hi)
    note.matched = len(scores)
    ranked = sorted(scores, key=lambda p: (-scores[p], -p))
    taken: set[int] = set()
    _admit(plan, ledger, transcript, log, query, ranked, scores, (lo, hi), cap, taken)

    def top_up(summarized: frozenset[str]) -> None:
        end = min(hi, transcript.kept_from)
        rest = [
            p
            for p in ranked
            if p < end and p not in taken and plan.messages[p].id not in summarized
        ]
        _admit(
            plan, ledger, transcript, log, query, rest, scores, (lo, end), ledger.available, taken
        )
        _fill_recent(plan, ledger, transcript, log, query, (lo, end), summarized, taken)

    return top_up


def _fill_recent(
    plan: Plan,
    ledger: Ledger,
    transcript: Transcript,
    log: _Log,
    query: _Query,
    bounds: tuple[int, int],
    summarized: frozenset[str],
    taken: set[int],
) -> None:
    """Fill the room no match could with the turns just below the window, newest first,
    each whole or cut to its best (else its opening) sentence: at a small budget the
    window often stops at a unit too big to fit, leaving room the turns it holds would
    fill. Matched nothing, so each is recalled ``via`` ``recent``."""
    lo, hi = bounds
    note = ledger.recall
    misfits = 0
    for position in range(hi - 1, lo - 1, -1):
        if misfits >= _FILL_MISFITS or ledger.available - ledger.used <= 0:
            break
        if (
            position in taken
            or plan.anchor <= position < plan.anchor_end
            or not log.turn(position).recallable
            or plan.messages[position].id in summarized
        ):
            continue
        plan.checkpoint.step()
        item, record, hit = _recalled(plan, log, query, position, 0.0, "recent")
        if ledger.used + item.tokens > ledger.available:
            item, record, hit = _recalled(plan, log, query, position, 0.0, "recent", short=True)
        if ledger.used + item.tokens > ledger.available:
            misfits += 1
            continue
        misfits = 0
        ledger.take((item,))
        if record is not None:
            ledger.records.append(record)
        note.hits.append((item, hit))
        taken.add(position)
        transcript.recalled[position] = [item]


def _anchor_recallable(plan: Plan, log: _Log, lo: int, hi: int) -> int:
    a, b = max(plan.anchor, lo), min(plan.anchor_end, hi)
    return log.recallable(a, b) if plan.anchor >= 0 and b > a else 0


def _today(plan: Plan) -> int | None:
    req = plan.req
    at = req.now_ms
    if at is None and plan.anchor >= 0:
        at = plan.messages[plan.anchor].at_ms
    if at is None and plan.messages:
        at = plan.messages[-1].at_ms
    return None if at is None else at // DAY_MS


def _read_query(plan: Plan, log: _Log) -> _Query:
    signals = set(plan.req.options.recall_signals)
    text = plan.query
    query = _Query(weights={})
    if "dates" in signals:
        # The date's own words ("16", "September") are not what the turn says.
        chars = list(text)
        for (a, b), found in dates_in(text, _today(plan)):
            query.dates.append(found)
            chars[a:b] = " " * (b - a)
        text = "".join(chars)
    for term in terms_of(text):
        query.weights[term] = 1.0
    if "entities" in signals:
        for term in _entities(text):
            if term in query.weights:
                query.weights[term] = _ENTITY
    if "speaker" in signals:
        for word in _WORD.findall(text):
            name = word.lower()
            if name in log.speakers:
                query.speaker = query.speaker or name
        if query.speaker is None:
            if _YOU.search(text):
                query.role = "assistant"
            elif _I.search(text):
                query.role = "user"
    if "question" in signals:
        query.before = _BEFORE.search(text) is not None
        query.after = not query.before and _AFTER.search(text) is not None
        query.now = _NOW.search(text) is not None
    return query


def _entities(text: str) -> list[str]:
    """Terms of the names (capitalized, not opening a sentence) and numbers in ``text``."""
    out: list[str] = []
    opening = True
    for match in _WORD.finditer(text):
        word = match.group()
        if word[0].isdigit() or (word[0].isupper() and not opening and word != "I"):
            out.extend(terms_of(word))
        tail = text[match.end() : match.end() + 2]
        opening = bool(tail) and tail[0] in ".!?"
    return out


def _score(plan: Plan, log: _Log, query: _Query, lo: int, hi: int) -> dict[int, float]:
    signals = set(plan.req.options.recall_signals)
    checkpoint = plan.checkpoint
    stats_lo, stats_hi = log.lo, log.size
    count = max(log.recallable(stats_lo, stats_hi), 1)
    average = (log.total_length(stats_lo, stats_hi) / count) or 1.0
    query.unit = math.log(1.0 + (count - 0.5) / 1.5)

    def candidate(position: int) -> bool:
        return lo <= position < hi and not plan.anchor <= position < plan.anchor_end

    lexical: dict[int, float] = {}
    facts: dict[int, TurnFacts] = {}
    anchor, anchor_end = plan.anchor, plan.anchor_end
    # BM25's length norm, folded: k1 * (1 - b + b * length / average).
    fixed, per_term = _K1 * (1.0 - _B), _K1 * _B / average
    frequencies = {term: log.frequency(term, stats_lo, stats_hi) for term in query.weights}
    for term in sorted(query.weights, key=lambda t: (frequencies[t], t)):
        checkpoint.step()
        weight, frequency = query.weights[term], frequencies[term]
        idf = weight * math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
        query.idf[term] = idf
        gain = idf * (_K1 + 1.0)
        # A word in more than a quarter of the turns only reranks the turns that share a
        # rarer word with the request, if any do: walking all its postings would cost
        # more than every other stage, for turns that would rank last.
        # With no rarer word shared, only its newest turns are walked.
        common = _COMMON * frequency > count
        if common and lexical:
            pairs = [(p, t) for p, t in facts.items() if term in t.terms]
        else:
            pairs = log.postings(term, lo, hi)
            if common:
                pairs = pairs[-_COMMON_WALK:]
        for position, turn in pairs:
            if anchor <= position < anchor_end:
                continue
            tf = turn.terms[term]
            score = gain * tf / (tf + fixed + per_term * turn.length)
            lexical[position] = lexical.get(position, 0.0) + score
            facts[position] = turn
    scores = dict(lexical)
    for first, last in query.dates:
        bonuses = ((_EVENT_DAY, log.talking_of), (_SAID_DAY, log.said_on))
        for day in range(first, min(last, first + 30) + 1):
            for bonus, find in bonuses:
                for position in find(day, lo, hi):
                    checkpoint.step()
                    if candidate(position):
                        scores[position] = scores.get(position, 0.0) + bonus * query.unit
    if query.after or query.before:
        # "What did she do after ...": the event was told as one, on a day.
        for position in log.dated(lo, hi):
            checkpoint.step()
            if candidate(position):
                scores[position] = scores.get(position, 0.0) + _EVENT_TOLD * query.unit
    if "similarity" in signals and plan.req.recall_similarity:
        for position, closeness in _similar(plan, log, lo, hi):
            if candidate(position):
                bonus = _SIMILAR * query.unit * (closeness - _SIMILAR_FLOOR) / (1 - _SIMILAR_FLOOR)
                scores[position] = scores.get(position, 0.0) + bonus
    if "exchange" in signals:
        for position, score in lexical.items():
            before = position - 1
            if not candidate(before):
                continue
            if before not in facts:
                facts[before] = log.turn(before)
            if _replies(facts[before], facts[position]):
                scores[before] = scores.get(before, 0.0) + _EXCHANGE * score
    span = max(hi - lo, 1)
    out: dict[int, float] = {}
    for position, score in scores.items():
        turn = facts.get(position) or log.turn(position)
        if query.speaker is not None and turn.speaker is not None:
            score *= 1.0 if turn.speaker == query.speaker else _OTHER_SPEAKER
        elif query.role is not None and turn.role != query.role:
            score *= _OTHER_ROLE
        if query.now:
            score *= 1.0 + _NEWER * (position - lo) / span
        if score > 0:
            out[position] = round(score, 4)
    return out


def _similar(plan: Plan, log: _Log, lo: int, hi: int) -> list[tuple[int, float]]:
    """The positions in ``[lo, hi)`` of the request's similar turns above the floor, and how
    close each is. Only turns: an embedder may have been shown a tool result or a frame."""
    found: list[tuple[int, float]] = []
    for message_id, closeness in sorted(plan.req.recall_similarity.items()):
        plan.checkpoint.step()
        position = log.position_of(message_id)
        if closeness > _SIMILAR_FLOOR and position is not None and lo <= position < hi:
            found.append((position, min(closeness, 1.0)))
    return found


def _who(turn: TurnFacts) -> str:
    return turn.speaker or turn.role


def _replies(first: TurnFacts, second: TurnFacts) -> bool:
    # ``second`` answers ``first``: both recallable, said by different people.
    return first.recallable and second.recallable and _who(first) != _who(second)


def _admit(
    plan: Plan,
    ledger: Ledger,
    transcript: Transcript,
    log: _Log,
    query: _Query,
    ranked: Sequence[int],
    scores: dict[int, float],
    bounds: tuple[int, int],
    cap: int,
    taken: set[int],
) -> None:
    note = ledger.recall
    misfits = 0
    for position in ranked:
        if position in taken:
            continue
        if misfits >= _MISFITS or cap - ledger.used <= 0:
            break
        plan.checkpoint.step()
        first = _recalled(plan, log, query, position, scores[position], None)
        group = [first]
        if first[1] is None or first[1].strategy != SHORT:
            asks = first[0].content.rstrip().endswith("?")
            for neighbour, via in _neighbours(plan, log, query, position, bounds, taken, asks):
                group.append(
                    _recalled(plan, log, query, neighbour, scores.get(neighbour, 0.0), via)
                )
            while group and ledger.used + sum(g[0].tokens for g in group) > cap:
                group.pop()
            if not group:
                # The turn does not fit as it would be cut: its best sentence alone may.
                group = [_recalled(plan, log, query, position, scores[position], None, short=True)]
        if ledger.used + group[0][0].tokens > cap:
            misfits += 1
            continue
        misfits = 0
        for item, record, hit in group:
            ledger.take((item,))
            if record is not None:
                ledger.records.append(record)
            note.hits.append((item, hit))
            at = item.order[-1]
            taken.add(at)
            transcript.recalled[at] = [item]
    # The window may still grow over some of these; the pack keeps the first that it does not.
    note.passed_over.clear()
    for position in ranked:
        if len(note.passed_over) >= 2 * PASSED_OVER:
            break
        if position not in taken:
            values = {"id": plan.messages[position].id, "score": scores[position]}
            hit = trusted(RecallHit, values | {"passage": False, "via": None})
            note.passed_over.append((position, hit))


def _neighbours(
    plan: Plan,
    log: _Log,
    query: _Query,
    position: int,
    bounds: tuple[int, int],
    taken: set[int],
    asks: bool,
) -> list[tuple[int, str]]:
    """The turns that complete ``position``'s exchange for this request (``asks``: what
    is recalled of it is a question, so its answer comes along)."""
    lo, hi = bounds
    signals = plan.req.options.recall_signals
    turn = log.turn(position)
    out: list[tuple[int, str]] = []

    def free(p: int) -> bool:
        return (
            lo <= p < hi
            and p not in taken
            and not plan.anchor <= p < plan.anchor_end
            and log.turn(p).recallable
        )

    if query.after or query.before:
        step = 1 if query.after else -1
        for p in range(position + step, position + step * (_NEAR + 1), step):
            if not lo <= p < hi:
                break
            if log.turn(p).recallable and _who(log.turn(p)) == _who(turn):
                if free(p):
                    out.append((p, "after" if query.after else "before"))
                break
    if "exchange" in signals and asks:
        answer = position + 1
        if free(answer) and _replies(turn, log.turn(answer)) and answer not in (p for p, _ in out):
            out.append((answer, "answer"))
    return out


def _recalled(
    plan: Plan,
    log: _Log,
    query: _Query,
    position: int,
    score: float,
    via: str | None,
    *,
    short: bool = False,
) -> tuple[Item, CompressionRecord | None, RecallHit]:
    """The entry for the message at ``position``: its passage (``short``: its best
    sentence alone), or the whole turn; headed by the day it was said, when known."""
    message = plan.messages[position]
    text = plan.redactor.redact(message.content)
    recorded = plan.replay.get(("recalled_turn", message.id))
    spans: tuple[Span, ...] | None
    if recorded is not None:
        spans, strategy = tuple(recorded.spans), recorded.strategy
        check_spans(spans, text, message.id)
    else:
        strategy = SHORT if short else "passage"
        spans = _passage(plan, query, text, log.turn(position), short=short)
    record = None
    content = text
    if spans is not None and spans != ((0, len(text)),):
        content = apply_spans(text, spans)
        record = trusted(
            CompressionRecord,
            {
                "source": message.id,
                "data_type": "recalled_turn",
                "strategy": strategy,
                "spans": spans,
                "tokens_before": plan.tok.count(text),
                "tokens_after": plan.tok.count(content),
            },
        )
    if message.at_ms is not None:
        # Many answers are only in when a turn was said ("when did she ..."); the pack
        # says it, short, and the budget counts it.
        content = f"[{iso_day(message.at_ms // DAY_MS)}] {content}"
    item = Item(
        "L2",
        "recalled_turn",
        content,
        (message.id,),
        (2, 1, position),
        role=message.role,
        compressed=record is not None,
        score=score,
    )
    plan.count(item)
    hit = trusted(
        RecallHit, {"id": message.id, "score": score, "passage": record is not None, "via": via}
    )
    return item, record, hit


def _passage(
    plan: Plan, query: _Query, text: str, facts: TurnFacts, *, short: bool = False
) -> tuple[Span, ...] | None:
    """The spans to keep of ``text``: its best sentence with the ones around it
    (``_BEFORE_MATCH``, ``_AFTER_MATCH``; ``short``: the best alone), with the speaker's
    label, or None for the whole turn."""
    if text == facts.content:
        # Not changed by redaction: the sentences read when it was indexed apply.
        sentences, label = facts.sentences, facts.label
    else:
        read, named, _ = read_sentences(text, facts.day)
        sentences, label = read, None if named is None else named[1]
    cut = plan.req.options.recall_passages or short
    if cut and len(sentences) > 1 and (short or plan.tok.count(text) > _WHOLE_TURN):
        best: int | None = None
        best_score = 0.0
        for at, sentence in enumerate(sentences):
            score = sum(query.idf.get(term, 0.0) for term in sentence.terms)
            if query.dates and any(
                a0 <= found[1] and found[0] <= a1
                for found in sentence.dates
                for a0, a1 in query.dates
            ):
                score += _EVENT_DAY * query.unit
            if score > best_score:
                best, best_score = at, score
        if best is not None:
            first = best if short else max(best - _BEFORE_MATCH, 0)
            last = best if short else min(best + _AFTER_MATCH, len(sentences) - 1)
            if first == 0 and last == len(sentences) - 1:
                return None
            kept = (sentences[first].span[0], sentences[last].span[1])
            if label is not None and label[1] <= kept[0]:
                return (label, kept)
            return (kept,)
    if len(sentences) <= 1 or (not short and plan.tok.count(text) <= _WHOLE_LIMIT):
        return None
    if short:
        # Nothing matched in it: its opening sentence (the label is at its start).
        return ((sentences[0].span[0], sentences[0].span[1]),)
    # Nothing to cut to and too long to keep whole: its leading sentences, as one span.
    opening = sentences[0].span
    end = opening[1]
    used = plan.tok.count(text[opening[0] : end])
    for sentence in sentences[1:]:
        a, b = sentence.span
        used += plan.tok.count(text[a:b]) + 1
        if used > _WHOLE_LIMIT:
            break
        end = b
    return ((opening[0], end),)
