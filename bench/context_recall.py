"""Context recall: how much of a question's evidence each context strategy keeps.

Run: .venv/bin/python bench/context_recall.py [--part held-out|tune] [--quick] [--json PATH]
     [--seed N] [--conversations 24] [--budgets 500,2000,4000] [--variants A,B]
     [--embeddings URL]

The corpus has two parts fixed in advance (``PARTS``): ``tune`` (seed 0), the only one
choices are made on, and ``held-out`` (seed 1, the default), the one figures are reported
from. The first table is answer coverage: the share of questions whose every answer word
(``answer_words``, a day as ISO or long date) is in the pack, the question left out, with
the paired difference to BM25 (exact sign test). ``--variants`` adds agrun variants by
name (``VARIANTS``; ``PATCHES`` are ways to cut a turn, set on ``context/_recall.py``).

The corpus is ``bench/recall_corpus.py`` (seeded: long multi-session chats, questions
naming their evidence turns). For each question the request is the conversation up to
the point it is asked, then the question as the person's last message. Three strategies
fill the same budget, each paying for a turn what agrun's pack pays (the default
tokenizer counting the turn framed as ``render_entry`` frames it, the question included):

- ``recency``: the newest whole turns, while they fit.
- ``bm25``: plain Okapi BM25 over whole turns (the question is the query), taken in score
  order (ties: newer first) while they fit.
- ``agrun``: ``build_context`` with its default options, given the conversation's
  `RecallIndex` as a runtime keeps one (messages carry ``atMs``: noon of their session's
  day, a minute apart). ``--ablation`` and ``--shares`` run variants of it.
- ``agrun + similarity`` (with ``--embeddings URL``, an OpenAI-compatible ``/embeddings``
  server such as llama-server with ``models/minilm-l6-q8.gguf``, see docs/context.md): the
  same, with ``recallSimilarity`` as the runtime's embedder fills it (the 64 earlier turns
  closest to the question). Vectors are cached in ``.cache/bench/``.

An evidence turn is *kept* when its id is among the sources of an entry of the pack. The
second table is stricter: the fact sentence itself must be in the content of an entry
made from that turn (a first-sentence summary of the turn names it, but holds only the
small talk it opens with). Shares are over evidence turns (a question with two counts
twice). Times are CPU time per build, the median over all builds: agrun's from a
validated request (validation is linear and separate), the baselines' from the dicts.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import hashlib
import json
import math
import re
import statistics
import time
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from agrun.context import (
    ContextEntry,
    ContextRequest,
    RecallIndex,
    Tokenizer,
    _recall,
    build_context,
    default_tokenizer,
    nearest,
    render_entry,
    unit_vector,
    validate_request,
)
from recall_corpus import QUESTION_TYPES, build_corpus, stats

METHODS = ["recency", "bm25", "agrun"]
# What a method returns: for each kept message id, the texts the pack holds from it.
Kept = dict[str, list[str]]

# --- Requests -------------------------------------------------------------------------


_DAY_MS = 86_400_000
_EPOCH = dt.date(1970, 1, 1)


def said_at(conversation: dict[str, Any], position: int) -> int:
    """When message ``position`` was said (epoch ms): its own ``atMs`` when the corpus
    knows it, else noon of its session's day, a minute per message after the session's
    first, as a runtime stamps the messages it keeps."""
    message = conversation["messages"][position]
    if "atMs" in message:
        return int(message["atMs"])
    session = message["session"]
    day = dt.date.fromisoformat(conversation["sessions"][session]["date"])
    first = conversation["sessions"][session - 1]["end"] if session else 0
    return (day - _EPOCH).days * _DAY_MS + _DAY_MS // 2 + (position - first) * 60_000


def wire(conversation: dict[str, Any], position: int) -> dict[str, Any]:
    """A corpus message as a request message: people's turns are ``author: person``."""
    message = conversation["messages"][position]
    out = {"id": message["id"], "role": message["role"], "content": message["content"]}
    if message["role"] == "user":
        out["author"] = "person"
    out["atMs"] = said_at(conversation, position)
    return out


def request(conversation: dict[str, Any], question: dict[str, Any]) -> dict[str, Any]:
    """The request for ``question``: the turns before it is asked, then the question (a
    minute after the last of them)."""
    prefix = question["prefix"]
    messages = [wire(conversation, p) for p in range(prefix)]
    messages.append(
        {
            "id": question["id"],
            "role": "user",
            "content": question["text"],
            "author": "person",
            "atMs": messages[-1]["atMs"] + 60_000,
        }
    )
    return {"messages": messages, "input": question["text"]}


def cost(tokenizer: Tokenizer, message: dict[str, Any]) -> int:
    """What a whole turn costs in a pack: its text framed the way agrun renders entries."""
    entry = ContextEntry.model_construct(
        id=message["id"],
        layer="L0",
        kind="message",
        content=message["content"],
        sources=(message["id"],),
        tokens=0,
        role=message["role"],
        name=None,
        tool_calls=(),
    )
    return tokenizer.count(render_entry(entry))


# --- The baselines ----------------------------------------------------------------------


def recency(req: dict[str, Any], budget: int) -> Kept:
    """The newest whole turns that fit after the question (a contiguous suffix)."""
    tokenizer = default_tokenizer()
    *history, question = req["messages"]
    left = budget - cost(tokenizer, question)
    kept: Kept = {}
    for message in reversed(history):
        left -= cost(tokenizer, message)
        if left < 0:
            break
        kept[message["id"]] = [message["content"]]
    return kept


_TERM = re.compile(r"\w+")


def terms(text: str) -> list[str]:
    """Lower-cased word tokens, the way plain BM25 implementations split text."""
    return _TERM.findall(text.lower())


def bm25_scores(query: str, documents: list[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Okapi BM25 of each document for ``query`` (idf over ``documents``, never negative)."""
    wanted = set(terms(query))
    bags = [Counter(terms(doc)) for doc in documents]
    lengths = [sum(bag.values()) for bag in bags]
    average = (sum(lengths) / len(lengths)) if lengths else 1.0
    having = Counter(term for bag in bags for term in wanted & bag.keys())
    idf = {t: math.log(1.0 + (len(bags) - having[t] + 0.5) / (having[t] + 0.5)) for t in wanted}
    scores = []
    for bag, length in zip(bags, lengths, strict=True):
        norm = k1 * (1.0 - b + b * length / (average or 1.0))
        scores.append(
            sum(idf[t] * bag[t] * (k1 + 1.0) / (bag[t] + norm) for t in wanted & bag.keys())
        )
    return scores


def bm25(req: dict[str, Any], budget: int) -> Kept:
    """Whole turns by BM25 score against the question, best first, while they fit."""
    tokenizer = default_tokenizer()
    *history, question = req["messages"]
    left = budget - cost(tokenizer, question)
    scores = bm25_scores(question["content"], [m["content"] for m in history])
    order = sorted(range(len(history)), key=lambda i: (-scores[i], -i))
    kept: Kept = {}
    for index in order:
        left -= cost(tokenizer, history[index])
        if left < 0:
            break
        kept[history[index]["id"]] = [history[index]["content"]]
    return kept


# --- agrun --------------------------------------------------------------------------------

SIGNALS = ("speaker", "entities", "dates", "question", "exchange")
# agrun's variants: each is build_context with these options over its defaults.
VARIANTS: dict[str, dict[str, Any]] = {
    "agrun": {},
    "lexical only": {"recallSignals": []},
    **{f"lexical + {s}": {"recallSignals": [s]} for s in SIGNALS},
    **{f"all - {s}": {"recallSignals": [x for x in SIGNALS if x != s]} for s in SIGNALS},
    "whole turns": {"recallPassages": False},
    "no recall": {"recallShare": 0},
    "agrun + similarity": {},
}


USED = "#used"
"""A key of agrun's `Kept` that holds the pack's ``budgetUsed`` (not a message id)."""


def agrun(validated: ContextRequest, index: RecallIndex) -> Kept:
    """What agrun's pack holds, by source message id (the pack's own entries)."""
    pack = build_context(validated, recall_index=index)
    kept: Kept = {}
    for entry in pack.entries():
        for source in entry.sources:
            kept.setdefault(source, []).append(entry.content)
    if any(message.id not in kept for message in validated.messages):
        # Only a pack that left something out could have filled more of its budget.
        kept[USED] = [str(pack.budget_used)]
    return kept


# --- Answer coverage --------------------------------------------------------------------

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MONTHS = "January February March April May June July August September October November December"


def answer_found(word: str, text: str, words: set[str]) -> bool:
    """Whether the pack (``text``, its lower-cased ``words``) holds one answer word: a day
    (ISO) as ``2024-03-14`` or ``14 March 2024``, anything else as all its word tokens."""
    day = _ISO.match(word)
    if day is not None:
        year, month, date = (int(x) for x in day.groups())
        long = f"{date} {_MONTHS.split()[month - 1]} {year}".lower()
        return word in text or long in text.lower()
    return all(t in words for t in terms(word))


def answered(question: dict[str, Any], kept: Kept) -> bool:
    """Whether every answer word of ``question`` is in what the pack keeps (the question
    itself left out)."""
    text = "\n".join(
        t for key, texts in kept.items() if key not in (question["id"], USED) for t in texts
    )
    words = set(terms(text))
    return all(answer_found(word, text, words) for word in question["answer_words"])


# --- Similarity -------------------------------------------------------------------------

SIMILAR = "agrun + similarity"
"""agrun's default options, with ``recallSimilarity`` (in VARIANTS under this name)."""
_CACHE = Path(__file__).resolve().parent.parent / ".cache" / "bench"


def embedded(corpus: dict[str, Any], url: str) -> dict[str, array]:
    """Unit vectors of every message and question of ``corpus`` by id, from the embedding
    server at ``url`` (cached per corpus and model: a probe text's vector names the model)."""
    from agrun.adapters.openai import llama_server

    server = llama_server(url)
    texts = {
        item["id"]: item.get("content", item.get("text"))
        for c in corpus["conversations"]
        for item in [*c["messages"], *c["questions"]]
    }
    probe = asyncio.run(server.embed(["what is this model"]))[0]
    model = hashlib.sha256(array("f", probe).tobytes()).hexdigest()[:12]
    name = f"recall-vectors-{corpus['seed']}-{len(corpus['conversations'])}-{model}"
    ids_file, data_file = _CACHE / f"{name}.json", _CACHE / f"{name}.f32"
    if ids_file.exists() and data_file.exists():
        ids = json.loads(ids_file.read_text())
        flat = array("f", data_file.read_bytes())
        size = len(flat) // len(ids)
        return {key: flat[i * size : (i + 1) * size] for i, key in enumerate(ids)}

    async def embed_all() -> list[list[float]]:
        keys, out = list(texts), []
        for start in range(0, len(keys), 64):
            out += await server.embed([texts[k] for k in keys[start : start + 64]])
        return out

    vectors = {key: unit_vector(v) for key, v in zip(texts, asyncio.run(embed_all()), strict=True)}
    _CACHE.mkdir(parents=True, exist_ok=True)
    ids_file.write_text(json.dumps(list(vectors)))
    data_file.write_bytes(b"".join(v.tobytes() for v in vectors.values()))
    return vectors


def similarity(
    vectors: dict[str, array], req: dict[str, Any], question: dict[str, Any]
) -> dict[str, float]:
    """``recallSimilarity`` for ``question``'s request, as the runtime's embedder fills it."""
    earlier = ((m["id"], vectors[m["id"]]) for m in req["messages"][:-1])
    return nearest(vectors[question["id"]], earlier)


# --- Measuring ------------------------------------------------------------------------


class Tally:
    """Evidence turns kept, per method, budget and question type, and the build times."""

    def __init__(
        self,
        methods: list[str],
        budgets: list[int],
        judge: Callable[[dict[str, Any], Kept], bool] | None = None,
    ) -> None:
        keys = [(m, b) for m in methods for b in budgets]
        self.methods = methods
        self.judge = judge or answered
        """Whether a pack holds a question's whole answer (``answered`` by default)."""
        self.questions: Counter[str] = Counter()
        self.total: Counter[str] = Counter()
        self.kept = {k: Counter[str]() for k in keys}
        self.fact = {k: Counter[str]() for k in keys}
        self.answered = {k: Counter[str]() for k in keys}
        self.paired: dict[tuple[str, int], list[bool]] = {k: [] for k in keys}
        """Per question, in order: whether the pack held the whole answer."""
        self.used: dict[tuple[str, int], list[int]] = {k: [] for k in keys}
        """agrun's ``budgetUsed`` per build."""
        self.seconds: dict[tuple[str, int], list[float]] = {k: [] for k in keys}

    def add(
        self,
        key: tuple[str, int],
        question: dict[str, Any],
        facts: dict[str, str],
        kept: Kept,
        seconds: float,
    ) -> None:
        self.seconds[key].append(seconds)
        if USED in kept:
            self.used[key].append(int(kept[USED][0]))
        full = self.judge(question, kept)
        self.paired[key].append(full)
        self.answered[key][question["type"]] += full
        for evidence in question["evidence"]:
            if evidence not in kept:
                continue
            self.kept[key][question["type"]] += 1
            if any(facts[evidence] in text for text in kept[evidence]):
                self.fact[key][question["type"]] += 1

    def count(self, question: dict[str, Any]) -> None:
        """Note ``question`` and its evidence turns (the denominators)."""
        self.questions[question["type"]] += 1
        self.total[question["type"]] += len(question["evidence"])


PARTS = {"tune": 0, "held-out": 1}
"""The corpus's two parts, by seed, fixed before any choice was measured: choices are
made on ``tune``; the figures reported are ``held-out``'s, which nothing was tuned on."""

PATCHES: dict[str, dict[str, Any]] = {
    "best sentence": {"_BEFORE_MATCH": 0, "_AFTER_MATCH": 0},
    "sentence + next": {"_BEFORE_MATCH": 0, "_AFTER_MATCH": 1},
    "sentence +-1": {"_BEFORE_MATCH": 1, "_AFTER_MATCH": 1},
    "sentence +-1 or whole to 60": {"_BEFORE_MATCH": 1, "_AFTER_MATCH": 1, "_WHOLE_TURN": 60},
    "sentence + next or whole to 60": {"_BEFORE_MATCH": 0, "_AFTER_MATCH": 1, "_WHOLE_TURN": 60},
}
VARIANTS.update({name: {} for name in PATCHES})
"""Variants of how recall cuts a turn (``context/_recall.py``'s constants), by name."""


class patched:
    """Set ``_recall``'s constants for the builds inside, then put them back."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values
        self.saved: dict[str, Any] = {}

    def __enter__(self) -> None:
        for name, value in self.values.items():
            self.saved[name] = getattr(_recall, name)
            setattr(_recall, name, value)

    def __exit__(self, *exc: object) -> None:
        for name, value in self.saved.items():
            setattr(_recall, name, value)


def timed(fn: Callable[[], Kept]) -> tuple[Kept, float]:
    """What ``fn`` returns, and the CPU seconds it took."""
    started = time.process_time()
    kept = fn()
    return kept, time.process_time() - started


def measure(
    corpus: dict[str, Any],
    budgets: list[int],
    quick: bool,
    methods: list[str],
    options: dict[str, Any] | None = None,
    vectors: dict[str, array] | None = None,
    judge: Callable[[dict[str, Any], Kept], bool] | None = None,
) -> Tally:
    """Run every question of ``corpus`` through every method at every budget.

    agrun's builds get a `RecallIndex` of the conversation kept up to the question's
    prefix, as a runtime keeps one beside its history (questions are taken in prefix
    order for that; the pack is the same without it, see tests/test_context_recall.py).
    """
    tally = Tally(methods, budgets, judge)
    for conversation in corpus["conversations"]:
        facts = {m["id"]: m["fact"] for m in conversation["messages"] if "fact" in m}
        questions = conversation["questions"]
        if quick:
            questions = questions[::3]
        index = RecallIndex()
        for question in sorted(questions, key=lambda q: (q["prefix"], q["id"])):
            tally.count(question)
            req = request(conversation, question)
            index.extend(validate_request({"messages": req["messages"][len(index) : -1]}).messages)
            for budget in budgets:
                for method in methods:
                    if method == "recency":
                        call = partial(recency, req, budget)
                    elif method == "bm25":
                        call = partial(bm25, req, budget)
                    else:
                        extra = (options or {}) | VARIANTS[method]
                        body = req | {"budget": {"limit": budget}, "options": extra}
                        if method == SIMILAR and vectors is not None:
                            body["recallSimilarity"] = similarity(vectors, req, question)
                        call = partial(agrun, validate_request(body), index)
                    with patched(PATCHES.get(method, {})):
                        kept, seconds = timed(call)
                    tally.add((method, budget), question, facts, kept, seconds)
    return tally


# --- Reporting ------------------------------------------------------------------------


def shares(
    tally: Tally, counts: dict[tuple[str, int], Counter[str]], key: tuple[str, int]
) -> dict[str, float]:
    """Share kept overall and per type, for one method and budget."""
    got = counts[key]
    total = sum(tally.total.values())
    out = {"all": round(sum(got.values()) / total, 4) if total else 0.0}
    for kind in QUESTION_TYPES:
        if tally.total[kind]:
            out[kind] = round(got[kind] / tally.total[kind], 4)
    return out


def table(tally: Tally, counts: dict[tuple[str, int], Counter[str]], budgets: list[int]) -> str:
    """Markdown: one row per question type, one column per budget and method."""
    keys = [(m, b) for b in budgets for m in tally.methods]
    head = ["type", "questions", "evidence turns", *(f"{m} {b:,}" for m, b in keys)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    by_key = {key: shares(tally, counts, key) for key in keys}
    for kind in ["all", *QUESTION_TYPES]:
        if kind == "all":
            asked, n = sum(tally.questions.values()), sum(tally.total.values())
        else:
            asked, n = tally.questions[kind], tally.total[kind]
        if not n:
            continue
        cells = [kind, f"{asked:,}", f"{n:,}", *(f"{by_key[key][kind]:.2f}" for key in keys)]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def timing_table(tally: Tally, budgets: list[int]) -> str:
    """Markdown: the median CPU milliseconds per build, by method and budget."""
    head = ["method", *(f"{b:,}" for b in budgets)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method in tally.methods:
        cells = [f"{statistics.median(tally.seconds[(method, b)]) * 1e3:.1f}" for b in budgets]
        rows.append("| " + " | ".join([method, *cells]) + " |")
    return "\n".join(rows)


def corpus_figures(corpus: dict[str, Any]) -> dict[str, Any]:
    """The corpus's stats, with its conversations' size in agrun's default tokens."""
    tokenizer = default_tokenizer()
    sizes = [
        sum(tokenizer.count(m["content"]) for m in c["messages"]) for c in corpus["conversations"]
    ]
    return stats(corpus) | {
        "tokens_min": min(sizes),
        "tokens_median": int(statistics.median(sizes)),
        "tokens_max": max(sizes),
    }


def report(corpus: dict[str, Any], tally: Tally, budgets: list[int]) -> dict[str, Any]:
    """Everything the run found, as the JSON file holds it."""
    figures = corpus_figures(corpus)
    results = {
        method: {
            str(b): {
                "kept": shares(tally, tally.kept, (method, b)),
                "fact_kept": shares(tally, tally.fact, (method, b)),
                "answered": round(
                    sum(tally.paired[(method, b)]) / max(len(tally.paired[(method, b)]), 1), 4
                ),
                "median_ms": round(statistics.median(tally.seconds[(method, b)]) * 1e3, 3),
            }
            for b in budgets
        }
        for method in tally.methods
    }
    return {
        "seed": corpus["seed"],
        "budgets": budgets,
        "corpus": figures,
        "questions_measured": dict(tally.questions),
        "evidence_turns": dict(tally.total),
        "results": results,
    }


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test (McNemar's, exact) on the questions the two methods
    disagree on: the chance of a split this uneven if either were as likely to win."""
    n = wins + losses
    if not n:
        return 1.0
    k = min(wins, losses)
    tail = sum(
        math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2))
        for i in range(k + 1)
    )
    return min(1.0, 2 * tail)


def answer_table(tally: Tally, budgets: list[int], against: str = "bm25") -> str:
    """Markdown: answer coverage (share of questions whose every answer word is in the
    pack) per method and budget, with each method's paired difference to ``against``:
    +diff (questions only it answers / only ``against`` answers, sign-test p)."""
    head = ["method", *(f"{b:,}" for b in budgets)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method in tally.methods:
        cells = []
        for b in budgets:
            mine = tally.paired[(method, b)]
            share = sum(mine) / len(mine) if mine else 0.0
            cell = f"{share:.3f}"
            if method != against and against in tally.methods:
                theirs = tally.paired[(against, b)]
                wins = sum(x and not y for x, y in zip(mine, theirs, strict=True))
                losses = sum(y and not x for x, y in zip(mine, theirs, strict=True))
                diff = (wins - losses) / len(mine)
                cell += f" ({diff:+.3f}; {wins}/{losses}, p={sign_test(wins, losses):.1g})"
            cells.append(cell)
        rows.append("| " + " | ".join([method, *cells]) + " |")
    return "\n".join(rows)


def answer_type_table(
    tally: Tally, budgets: list[int], kinds: Sequence[str] = QUESTION_TYPES
) -> str:
    """Markdown: answer coverage by question type (``kinds``, the corpus's by default),
    one column per budget and method."""
    keys = [(m, b) for b in budgets for m in tally.methods]
    head = ["type", "questions", *(f"{m} {b:,}" for m, b in keys)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for kind in kinds:
        n = tally.questions[kind]
        if n:
            cells = [f"{tally.answered[key][kind] / n:.2f}" for key in keys]
            rows.append("| " + " | ".join([kind, str(n), *cells]) + " |")
    return "\n".join(rows)


def fill_table(tally: Tally, budgets: list[int]) -> str:
    """Markdown: agrun's ``budgetUsed`` / limit per budget, mean and lowest, over the
    packs that left a message out (one that holds the whole conversation is done)."""
    rows = ["| method | " + " | ".join(f"{b:,}: mean / lowest" for b in budgets) + " |"]
    rows.append("|" + "---|" * (len(budgets) + 1))
    for method in tally.methods:
        if not tally.used[(method, budgets[0])]:
            continue
        cells = []
        for b in budgets:
            used = tally.used[(method, b)]
            cells.append(f"{statistics.mean(used) / b:.3f} / {min(used) / b:.3f}")
        rows.append("| " + " | ".join([method, *cells]) + " |")
    return "\n".join(rows)


def summary_table(tally: Tally, budgets: list[int]) -> str:
    """Markdown: one row per method, the share of evidence turns (and facts) kept."""
    head = ["method", *(f"{b:,}: turns / facts" for b in budgets)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method in tally.methods:
        cells = [
            f"{shares(tally, tally.kept, (method, b))['all']:.3f} / "
            f"{shares(tally, tally.fact, (method, b))['all']:.3f}"
            for b in budgets
        ]
        rows.append("| " + " | ".join([method, *cells]) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--part",
        choices=sorted(PARTS),
        default="held-out",
        help="the corpus part: held-out (seed 1, reported) or tune (seed 0, tuned on)",
    )
    parser.add_argument("--seed", type=int, help="a corpus seed instead of --part's")
    parser.add_argument("--variants", help="agrun variants to run besides (comma-separated)")
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--budgets", default="500,2000,4000")
    parser.add_argument(
        "--quick", action="store_true", help="3 conversations, every third question"
    )
    parser.add_argument(
        "--ablation",
        action="store_true",
        help="agrun with each recall signal alone and each left out, whole turns, no recall",
    )
    parser.add_argument(
        "--shares", help="agrun at these recallShare values (comma-separated) instead"
    )
    parser.add_argument(
        "--embeddings", metavar="URL", help="also agrun with this embedding server's vectors"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    seed = PARTS[args.part] if args.seed is None else args.seed
    corpus = build_corpus(seed, 3 if args.quick else args.conversations)
    methods = list(METHODS)
    if args.variants:
        methods += args.variants.split(",")
    if args.ablation:
        methods = list(VARIANTS)
    if args.shares:
        for share in args.shares.split(","):
            VARIANTS[f"recallShare {share}"] = {"recallShare": float(share)}
        methods = [f"recallShare {share}" for share in args.shares.split(",")]
    vectors = None
    if args.embeddings:
        vectors = embedded(corpus, args.embeddings)
        methods.append(SIMILAR)
    tally = measure(corpus, budgets, args.quick, methods, vectors=vectors)
    out = report(corpus, tally, budgets)
    c = out["corpus"]
    print(
        f"Context recall, seed {seed} ({args.part if args.seed is None else 'own seed'}): {c['conversations']} conversations "
        f"({c['sessions']} sessions, {c['messages']:,} messages, "
        f"{c['tokens_min']:,}-{c['tokens_max']:,} tokens each by agrun's default tokenizer), "
        f"{sum(tally.questions.values()):,} questions, "
        f"{sum(tally.total.values()):,} evidence turns.\n"
    )
    print("Answer coverage (every answer word in the pack), paired against BM25:\n")
    print(answer_table(tally, budgets))
    print("\nAnswer coverage by question type:\n")
    print(answer_type_table(tally, budgets))
    print("\nBudget used by agrun's packs that left a message out (budgetUsed / limit):\n")
    print(fill_table(tally, budgets))
    print()
    if args.ablation or args.shares or args.variants:
        print("Share of evidence turns / facts kept, by variant and budget:\n")
        print(summary_table(tally, budgets))
    else:
        print("Evidence turns kept (the turn's id is among the sources of a pack entry):\n")
        print(table(tally, tally.kept, budgets))
        print("\nEvidence facts kept (the fact sentence is in an entry made from its turn):\n")
        print(table(tally, tally.fact, budgets))
    print("\nMedian CPU ms per build, by budget:\n")
    print(timing_table(tally, budgets))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
