"""Extraction quality (issue 12): precision and recall of what a turn is taken to state.

Run: .venv/bin/python bench/extraction_quality.py [--seed 0] [--turns 240] [--json PATH]
     [--llama-server http://127.0.0.1:PORT]

The corpus is generated here, seeded and deterministic: person turns of several sentences,
each sentence labelled with the kind it states (``fact``, ``preference``, ``decision``) or
none. Beside the usual cues ("my name is", "I prefer", "we decided") it holds sentences
that state the same thing without them ("I grew up in Graz", "We settled on Postgres"),
sentences whose cue belongs to another kind ("My favourite city is Porto" is a preference),
and look-alikes that state nothing durable and must not be extracted: questions,
hypotheticals ("If we decided to move..."), reported speech about others ("My sister
prefers tea"), negations ("I'm not sure I like it"), small talk ("I have a question") and
``remember:`` notes. A ``remember:`` command is answered by the memory command (the note
goes to ``## Remembered``); agrun also runs the rules over its text, so a command whose text
states something of the person ("remember: I live in Lyon") is labelled with that sentence,
and one that only notes something ("remember: buy milk") with nothing.

Three extractors are measured on the same turns:

- ``rules``: `extract_by_rules` on the person's text.
- ``oracle``: agrun's own extraction call (a runtime with ``memory_extraction="model"``,
  read back from ``runtime.session_memory``) answered by a `ScriptedProvider` that replies
  the gold JSON: a check of the parse and grounding path, which must score 1.0.
- ``model``: the same call answered by a real model behind llama-server
  (``--llama-server URL``), e.g. the tiny test model:
  ``.cache/llama-server-*/llama-server --jinja --no-repack -t 1 -m models/agrun-tiny.gguf
  --host 127.0.0.1 --port 8091``.

Only the extraction call goes to the provider under test: the turn's own reply is scripted
(the router below), so every extractor sees the same ``user: ...\\nassistant: ...`` turn.

Scoring is per sentence: an extracted item counts for the sentence of the turn that holds
it (or, when it spans several, for each), so "my name is Ann" taken from "Hi, my name is
Ann." is right. An item right in kind is a true positive; in the wrong kind it is a false
positive of that kind and a miss of the other.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import agrun
from agrun.chat import ModelRequest, StreamEvent, TextDelta
from agrun.memory._extraction import Extraction, extract_by_rules, extraction_json
from agrun.ports import Provider
from agrun.testing import FixedClock, ScriptedProvider, SequentialIds

KINDS = ("facts", "preferences", "decisions")
# The label a sentence carries, by Extraction field.
KIND_OF = {"fact": "facts", "preference": "preferences", "decision": "decisions"}

# --- The corpus -------------------------------------------------------------------------

NAMES = ["Ann", "Bruno", "Chiara", "Dmitri", "Elif", "Farid", "Grace", "Hiro", "Ines",
         "Jonas", "Keiko", "Luis", "Maya", "Nils", "Olga", "Priya", "Rosa", "Sven", "Tariq",
         "Uma", "Viktor", "Wen", "Yara", "Zoe"]  # fmt: skip
CITIES = ["Lyon", "Porto", "Lisbon", "Oslo", "Kyoto", "Denver", "Tallinn", "Bologna", "Ghent",
          "Cork", "Tartu", "Leeds", "Malmo", "Graz", "Turku", "Bergen", "Seville", "Nantes"]  # fmt: skip
JOBS = ["nurse", "carpenter", "data analyst", "teacher", "pilot", "chef", "lawyer",
        "translator", "plumber", "architect", "librarian", "baker", "journalist"]  # fmt: skip
COMPANIES = ["a small bakery", "the city library", "a shipping firm", "a design studio",
             "the local hospital", "a bike shop", "an insurance company"]  # fmt: skip
PETS = ["cats", "dogs", "rabbits", "parrots", "goldfish"]
LANGUAGES = ["French", "German", "Spanish", "Italian", "Polish", "Japanese", "Dutch"]
DRINKS = ["green tea", "black coffee", "sparkling water", "mint tea", "hot chocolate",
          "lemonade", "espresso", "oat milk"]  # fmt: skip
FOODS = ["spicy food", "sushi", "olives", "mushrooms", "dark chocolate", "pasta", "curry",
         "blue cheese", "fresh bread", "ramen"]  # fmt: skip
ACTIVITIES = ["hiking", "swimming in the sea", "reading crime novels", "playing chess",
              "cycling to work", "cooking for friends", "painting", "gardening",
              "long train journeys"]  # fmt: skip
DISLIKES = ["loud music", "crowded trains", "long meetings", "cold weather", "flying",
            "waiting in queues", "spam calls", "emoji in emails"]  # fmt: skip
OPTIONS = ["Postgres", "the blue logo", "the Friday release", "the smaller venue", "option B",
           "the cheaper vendor", "a four-day sprint", "the night train", "the hotel near the "
           "station"]  # fmt: skip
ACTIONS = ["ship the beta on Friday", "move the launch to March", "hire a second designer",
           "cancel the offsite", "keep the old pricing", "rewrite the importer",
           "meet every Tuesday", "drop the mobile app for now", "use one repository",
           "book the venue in Ghent"]  # fmt: skip
TOPICS = ["the venue", "the budget", "the release date", "the logo", "the pricing",
          "the database", "the team lunch"]  # fmt: skip
OTHERS = ["My sister", "My colleague", "My neighbour", "My boss", "My friend Tom",
          "Our landlord", "My brother", "My teammate"]  # fmt: skip
CARS = ["Volvo", "Fiat", "Skoda", "Renault", "Toyota"]
SUBJECTS = ["chemistry", "history", "law", "music", "economics"]
MONTHS = ["March", "June", "August", "October", "December"]
REPLIES = ["Got it.", "Thanks, noted.", "Okay.", "Sounds good.", "Understood, thanks."]

# Each template: (category, label, text). A label is what the sentence states; None: nothing.
# Categories: "cue" (a cue the rules know), "plain" (no such cue), "cross" (a cue of another
# kind), and for the look-alikes the kind of look-alike.
Template = tuple[str, str | None, str]
POSITIVE: list[Template] = [
    ("cue", "fact", "My name is {name}."),
    ("cue", "fact", "Hi, my name is {name}."),
    ("cue", "fact", "I live in {city}."),
    ("cue", "fact", "I'm from {city}."),
    ("cue", "fact", "I work as a {job}."),
    ("cue", "fact", "I work at {company}."),
    ("cue", "fact", "I have two {pets}."),
    ("cue", "fact", "I moved to {city} in {year}."),
    ("cue", "fact", "I speak {language} and {language2}."),
    ("cue", "fact", "My birthday is in {month}."),
    ("cue", "fact", "Call me {name}."),
    ("plain", "fact", "I grew up in {city}."),
    ("plain", "fact", "I drive an old {car}."),
    ("plain", "fact", "I've been a {job} for {n} years."),
    ("plain", "fact", "I studied {subject} in {city}."),
    ("plain", "fact", "Everyone calls me {name}."),
    ("cue", "preference", "I prefer {drink} over {drink2}."),
    ("cue", "preference", "I like {food}."),
    ("cue", "preference", "I love {activity}."),
    ("cue", "preference", "I hate {dislike}."),
    ("cue", "preference", "I enjoy {activity} on weekends."),
    ("cue", "preference", "I'd rather take the train than fly."),
    ("cue", "preference", "I don't like {dislike}."),
    ("cue", "preference", "I can't stand {dislike}."),
    ("cue", "preference", "Please always answer in {language}."),
    ("cue", "preference", "I never drink {drink} after noon."),
    ("plain", "preference", "{Drink} is my drink of choice."),
    ("plain", "preference", "Mornings work best for me."),
    ("plain", "preference", "Short answers suit me better."),
    ("plain", "preference", "Nothing beats {food} on a rainy day."),
    ("plain", "preference", "I'm really into {activity}."),
    ("cross", "preference", "My favourite city is {city}."),
    ("cross", "preference", "I'm a big fan of {activity}."),
    ("cue", "decision", "We decided to {action}."),
    ("cue", "decision", "We've decided to {action}."),
    ("cue", "decision", "Let's go with {option}."),
    ("cue", "decision", "We agreed to {action}."),
    ("cue", "decision", "We're going with {option}."),
    ("cue", "decision", "I decided to {action}."),
    ("cue", "decision", "We chose {option}."),
    ("cue", "decision", "OK, we'll go with {option} then."),
    ("plain", "decision", "We settled on {option}."),
    ("plain", "decision", "We opted for {option}."),
    ("plain", "decision", "The team signed off on {option}."),
    ("plain", "decision", "{Option} it is, then."),
]
LOOK_ALIKES: list[Template] = [
    ("question", None, "Do I like {food}?"),
    ("question", None, "What is my name?"),
    ("question", None, "Where do I live?"),
    ("question", None, "Should we go with {option}?"),
    ("question", None, "Did we decide to {action}?"),
    ("question", None, "Have we agreed on {topic}?"),
    ("question", None, "What do I prefer to drink?"),
    ("question", None, "I wonder whether I like {food}."),
    ("hypothetical", None, "If I liked {food}, I would order it more often."),
    ("hypothetical", None, "If I lived in {city}, I would cycle everywhere."),
    ("hypothetical", None, "If we decided to {action}, the budget would change."),
    ("hypothetical", None, "If I love the trial, I will buy the full version."),
    ("hypothetical", None, "Imagine we agreed to {action}."),
    ("hypothetical", None, "Suppose I worked as a {job}."),
    ("reported", None, "{Other} prefers {drink}."),
    ("reported", None, "{Other} loves {activity}."),
    ("reported", None, "{Other} hates {dislike}."),
    ("reported", None, "{Other} lives in {city}."),
    ("reported", None, "{Other} decided to {action}."),
    ("reported", None, "{Other} thinks I like {food}."),
    ("reported", None, "{Other} said we agreed to {action}, but I doubt it."),
    ("negation", None, "We haven't decided on {topic} yet."),
    ("negation", None, "We didn't agree on {topic}."),
    ("negation", None, "I never said I liked {food}."),
    ("negation", None, "I'm not sure I like {option}."),
    ("negation", None, "Nobody decided to {action}."),
    ("negation", None, "I don't think we decided to {action}."),
    ("negation", None, "That was never my name."),
    ("small talk", None, "Hi there!"),
    ("small talk", None, "Thanks a lot."),
    ("small talk", None, "How are you today?"),
    ("small talk", None, "The weather is lovely today."),
    ("small talk", None, "Have a nice weekend!"),
    ("small talk", None, "I like that idea!"),
    ("small talk", None, "I love it, thanks!"),
    ("small talk", None, "I have a question."),
    ("small talk", None, "I'm a bit tired today."),
    ("small talk", None, "I'll go with the flow today."),
]
# ``remember:`` commands: the command's text, labelled like a sentence.
REMEMBER: list[Template] = [
    ("remember note", None, "buy milk on the way home"),
    ("remember note", None, "the meeting room is on the third floor"),
    ("remember note", None, "call {name} back on Monday"),
    ("remember note", None, "{other} prefers window seats"),
    ("remember note", None, "we still need to decide on {topic}"),
    ("remember statement", "fact", "I live in {city}"),
    ("remember statement", "fact", "my name is {name}"),
    ("remember statement", "preference", "I prefer {drink}"),
    ("remember statement", "decision", "we decided to {action}"),
]
LOOK_ALIKE_CATEGORIES = ("question", "hypothetical", "reported", "negation", "small talk",
                         "remember note")  # fmt: skip


@dataclass(frozen=True)
class Sentence:
    """One sentence of a turn, with what it states."""

    text: str
    label: str | None
    category: str


@dataclass(frozen=True)
class Turn:
    """One person turn: its sentences (joined by spaces) and the scripted reply."""

    id: str
    sentences: tuple[Sentence, ...]
    reply: str
    remember: bool = False

    @property
    def text(self) -> str:
        joined = " ".join(s.text for s in self.sentences)
        return f"remember: {joined}" if self.remember else joined

    def gold(self) -> Extraction:
        """The labels as the Extraction a perfect extractor returns."""
        found: dict[str, list[str]] = {kind: [] for kind in KINDS}
        for sentence in self.sentences:
            if sentence.label is not None:
                found[KIND_OF[sentence.label]].append(sentence.text)
        return Extraction(**{kind: tuple(items) for kind, items in found.items()})


def fill(template: str, rng: random.Random) -> str:
    """``template`` with its slots filled from the pools (each slot drawn once)."""
    drink, drink2 = rng.sample(DRINKS, 2)
    language, language2 = rng.sample(LANGUAGES, 2)
    option = rng.choice(OPTIONS)
    other = rng.choice(OTHERS)
    values = {
        "name": rng.choice(NAMES),
        "city": rng.choice(CITIES),
        "job": rng.choice(JOBS),
        "company": rng.choice(COMPANIES),
        "pets": rng.choice(PETS),
        "year": str(rng.randint(2009, 2024)),
        "n": str(rng.randint(2, 30)),
        "language": language,
        "language2": language2,
        "month": rng.choice(MONTHS),
        "car": rng.choice(CARS),
        "subject": rng.choice(SUBJECTS),
        "drink": drink,
        "drink2": drink2,
        "Drink": drink[0].upper() + drink[1:],
        "food": rng.choice(FOODS),
        "activity": rng.choice(ACTIVITIES),
        "dislike": rng.choice(DISLIKES),
        "option": option,
        "Option": option[0].upper() + option[1:],
        "action": rng.choice(ACTIONS),
        "topic": rng.choice(TOPICS),
        "Other": other,
        "other": other[0].lower() + other[1:],
    }
    return template.format(**values)


def build_corpus(seed: int, turns: int) -> list[Turn]:
    """``turns`` person turns, the same for the same seed.

    About one turn in twelve is a ``remember:`` command; the others hold two to five
    sentences, each a statement (45 %) or a look-alike (55 %), none twice in a turn.
    """
    rng = random.Random(seed)
    corpus: list[Turn] = []
    for number in range(turns):
        reply = rng.choice(REPLIES)
        if rng.random() < 0.08:
            category, label, template = rng.choice(REMEMBER)
            sentence = Sentence(fill(template, rng), label, category)
            corpus.append(Turn(f"t{number}", (sentence,), reply, remember=True))
            continue
        sentences: list[Sentence] = []
        size = rng.randint(2, 5)
        while len(sentences) < size:
            pool = POSITIVE if rng.random() < 0.45 else LOOK_ALIKES
            category, label, template = rng.choice(pool)
            text = fill(template, rng)
            if all(s.text != text for s in sentences):
                sentences.append(Sentence(text, label, category))
        corpus.append(Turn(f"t{number}", tuple(sentences), reply))
    return corpus


# --- Extractors -------------------------------------------------------------------------


class ExtractionRouter:
    """A provider that sends agrun's extraction call (the request with a
    ``response_format``) to the extractor under test, and the turn's own model call to a
    scripted reply, so the turn is the same whoever extracts. ``replies`` keeps the text of
    each extraction reply, to see what grounding dropped."""

    def __init__(self, extractor: Provider, reply: str) -> None:
        self._extractor = extractor
        self._chat = ScriptedProvider(lambda _request: reply)
        self.replies: list[str] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if request.response_format is None:
            async for event in self._chat.stream(request):
                yield event
            return
        self.replies.append("")
        async for event in self._extractor.stream(request):
            if isinstance(event, TextDelta):
                self.replies[-1] += event.text
            yield event


@dataclass
class Outcome:
    """What one extractor took from one turn."""

    extraction: Extraction
    calls: int = 0
    """Extraction calls made (2: the first reply was refused and corrected)."""
    kept: bool = False
    """Both replies were refused: the session memory was kept as it was."""
    proposed: int = 0
    """Items the last extraction reply held (before grounding)."""


async def through_runtime(turn: Turn, extractor: Provider) -> Outcome:
    """What agrun's turn-closing extraction makes of ``turn`` with ``extractor`` answering
    the extraction call (a fresh runtime per turn, so the session memory is this turn's)."""
    router = ExtractionRouter(extractor, turn.reply)
    events: list[Any] = []
    runtime = agrun.create_runtime(
        clock=FixedClock(),
        ids=SequentialIds(),
        provider=router,
        memory_extraction="model",
        global_memory=False,
        content_store=False,
        on_event=events.append,
    )
    result = await runtime.run(turn.text)
    if not result.ok:
        raise RuntimeError(f"turn {turn.id} failed: {result.error}")
    memory = runtime.session_memory
    extraction = Extraction(
        **{
            kind: tuple(item.text for item in getattr(memory, kind)) if memory else ()
            for kind in KINDS
        }
    )
    kept = any(e.kind == "SessionMemoryKept" for e in events)
    proposed = proposed_items(router.replies[-1]) if router.replies else 0
    return Outcome(extraction, calls=len(router.replies), kept=kept, proposed=proposed)


def proposed_items(reply: str) -> int:
    """How many distinct items a reply's JSON lists (0 when it is not the JSON asked for)."""
    try:
        value = json.loads(reply[reply.find("{") : reply.rfind("}") + 1])
    except ValueError:
        return 0
    if not isinstance(value, dict):
        return 0
    listed: set[tuple[str, str]] = set()
    for kind in KINDS:
        items = value.get(kind)
        if isinstance(items, list):
            listed |= {(kind, item) for item in items if isinstance(item, str) and item.strip()}
    return len(listed)


def oracle(turn: Turn) -> Provider:
    """A scripted model that replies the turn's gold JSON to the extraction call."""
    gold = extraction_json(turn.gold())
    return ScriptedProvider(lambda _request: gold)


# --- Scoring ----------------------------------------------------------------------------


def words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def attribute(item: str, kind: str, turn: Turn) -> list[int]:
    """The sentences of ``turn`` an extracted ``item`` comes from: the one holding it
    (preferring one labelled ``kind`` when several do), else every one it spans."""
    said = f" {words(item)} "
    holding = [i for i, s in enumerate(turn.sentences) if said in f" {words(s.text)} "]
    if holding:
        labelled = [i for i in holding if turn.sentences[i].label == kind]
        return (labelled or holding)[:1]
    return [i for i, s in enumerate(turn.sentences) if f" {words(s.text)} " in said]


@dataclass
class Tally:
    """Counts for one extractor over the corpus."""

    tp: Counter[str] = field(default_factory=Counter)
    fp: Counter[str] = field(default_factory=Counter)
    fn: Counter[str] = field(default_factory=Counter)
    looked_alike: Counter[str] = field(default_factory=Counter)
    """Look-alike sentences extracted (as anything), by category."""
    found: Counter[str] = field(default_factory=Counter)
    """Labelled sentences extracted in their kind, by category (cue, plain, cross...)."""
    calls: Counter[int] = field(default_factory=Counter)
    kept: int = 0
    proposed: int = 0
    """Items the extraction replies held; those not kept were not the person's words."""
    extracted: int = 0

    def add(self, turn: Turn, outcome: Outcome) -> None:
        predicted: set[tuple[int, str]] = set()
        for kind in KINDS:
            for item in getattr(outcome.extraction, kind):
                label = kind[:-1]
                sources = attribute(item, label, turn)
                if not sources:
                    self.fp[kind] += 1  # not from any sentence: cannot happen once grounded
                predicted.update((i, label) for i in sources)
        gold = {(i, s.label) for i, s in enumerate(turn.sentences) if s.label is not None}
        for index, label in predicted:
            kind = KIND_OF[label]
            if (index, label) in gold:
                self.tp[kind] += 1
            else:
                self.fp[kind] += 1
        for _, label in gold - predicted:
            self.fn[KIND_OF[label]] += 1
        hit = {index for index, _ in predicted}
        for index, sentence in enumerate(turn.sentences):
            if sentence.label is None and index in hit:
                self.looked_alike[sentence.category] += 1
            if sentence.label is not None and (index, sentence.label) in predicted:
                self.found[sentence.category] += 1
        self.calls[outcome.calls] += 1
        self.kept += outcome.kept
        if outcome.calls:
            self.proposed += outcome.proposed
            self.extracted += sum(len(getattr(outcome.extraction, kind)) for kind in KINDS)

    def scores(self) -> dict[str, dict[str, float | int]]:
        out: dict[str, dict[str, float | int]] = {}
        for kind in (*KINDS, "all"):
            keys = KINDS if kind == "all" else (kind,)
            tp = sum(self.tp[k] for k in keys)
            fp = sum(self.fp[k] for k in keys)
            fn = sum(self.fn[k] for k in keys)
            precision = tp / (tp + fp) if tp + fp else 1.0
            recall = tp / (tp + fn) if tp + fn else 1.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            out[kind] = {"precision": round(precision, 4), "recall": round(recall, 4),
                         "f1": round(f1, 4), "tp": tp, "fp": fp, "fn": fn}  # fmt: skip
        return out


def corpus_counts(corpus: list[Turn]) -> tuple[Counter[str], Counter[str]]:
    """Sentences by category, and labelled sentences by kind."""
    categories = Counter(s.category for t in corpus for s in t.sentences)
    kinds = Counter(s.label for t in corpus for s in t.sentences if s.label is not None)
    return categories, kinds


async def measure(
    corpus: list[Turn], extractors: dict[str, Callable[[Turn], Any]]
) -> dict[str, Tally]:
    tallies = {name: Tally() for name in extractors}
    for turn in corpus:
        for name, extract in extractors.items():
            outcome = extract(turn)
            if asyncio.iscoroutine(outcome):
                outcome = await outcome
            tallies[name].add(turn, outcome)
    return tallies


# --- Reporting --------------------------------------------------------------------------


def score_table(tallies: dict[str, Tally]) -> str:
    head = ["extractor", "kind", "precision", "recall", "F1", "TP", "FP", "FN"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, tally in tallies.items():
        for kind, s in tally.scores().items():
            cells = [name, kind, f"{s['precision']:.3f}", f"{s['recall']:.3f}", f"{s['f1']:.3f}",
                     str(s["tp"]), str(s["fp"]), str(s["fn"])]  # fmt: skip
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def category_table(tallies: dict[str, Tally], categories: Counter[str]) -> str:
    """Share of each category's sentences extracted: for statements, in their own kind
    (higher is better); for look-alikes, as anything (lower is better)."""
    names = list(tallies)
    head = ["sentences", "n", *names]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    statements = ["cue", "plain", "cross", "remember statement"]
    for category in [*statements, *LOOK_ALIKE_CATEGORIES]:
        n = categories[category]
        if not n:
            continue
        counts = [
            tallies[name].found[category]
            if category in statements
            else tallies[name].looked_alike[category]
            for name in names
        ]
        verb = "found" if category in statements else "extracted (wrongly)"
        cells = [f"{category}: {verb}", str(n), *(f"{c / n:.2f}" for c in counts)]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--turns", type=int, default=240)
    parser.add_argument("--llama-server", metavar="URL", help="also measure this server's model")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args()
    corpus = build_corpus(args.seed, args.turns)
    extractors: dict[str, Callable[[Turn], Any]] = {
        "rules": lambda turn: Outcome(extract_by_rules(turn.text)),
        "oracle": lambda turn: through_runtime(turn, oracle(turn)),
    }
    if args.llama_server:
        from agrun.adapters.openai import llama_server

        server = llama_server(args.llama_server, max_retries=1)
        extractors["model"] = lambda turn: through_runtime(turn, server)
    tallies = asyncio.run(measure(corpus, extractors))
    categories, kinds = corpus_counts(corpus)
    sentences = sum(categories.values())
    print(
        f"Extraction quality, seed {args.seed}: {len(corpus)} turns, {sentences} sentences "
        f"({kinds['fact']} facts, {kinds['preference']} preferences, {kinds['decision']} "
        f"decisions, {sentences - sum(kinds.values())} stating nothing).\n"
    )
    print("Precision and recall per kind:\n")
    print(score_table(tallies))
    print("\nBy kind of sentence:\n")
    print(category_table(tallies, categories))
    for name in ("oracle", "model"):
        if name in tallies:
            t = tallies[name]
            print(
                f"\n{name}: extraction calls per turn {dict(sorted(t.calls.items()))} "
                f"(0: a remember: command, extracted by the rules; 2: corrected once); "
                f"{t.kept} turns whose replies were refused twice; {t.proposed} items "
                f"proposed, {t.proposed - t.extracted} of them dropped by grounding (not "
                "the person's words)."
            )
    if args.json:
        out = {
            "seed": args.seed,
            "turns": len(corpus),
            "sentences": dict(categories),
            "labels": dict(kinds),
            "server": args.llama_server,
            "results": {
                name: {
                    "scores": tally.scores(),
                    "look_alikes_extracted": dict(tally.looked_alike),
                    "statements_found": dict(tally.found),
                    "extraction_calls": {str(k): v for k, v in tally.calls.items()},
                    "kept": tally.kept,
                    "proposed": tally.proposed,
                    "extracted_by_model_calls": tally.extracted,
                }
                for name, tally in tallies.items()
            },
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
