"""Overflow order: what the request needs, kept by agrun's order and by spec 001 §9's.

Run: .venv/bin/python bench/context_overflow.py [--quick] [--json PATH] [--seed 0]
     [--conversations 24] [--budgets 1000,2000,4000,8000] [--window 3] [--l2 sentences|facts]

Spec 001 §9 has an overflowing pack shed its L2 entries first, oldest first: L2 memory
would be the first thing to go, before older transcript and events. agrun admits older
transcript up to ``transcriptShare`` of the free budget, recalled turns, then the L2
memory that shares a content word with the request (by relevance) and the merged L3
entry, then the rest of the transcript, then events, then the L2 memory that does not
(newest first, so its oldest goes first). This measures which order keeps more of what a
question needs, on the same requests and budgets:

- ``agrun``: the pipeline's own order (``_build._admit_by_priority``).
- ``by age``: agrun's order before L2 was ranked: all of L2, newest first, before the
  rest of the transcript and events.
- ``spec``: recent turns, steering, approvals, artifacts, tool outputs, then all older
  transcript, events and extension layers, and L2 (the summary, then memory newest
  first) only after them, so it is the first to be left out.

The requests come from the recall corpus (``bench/recall_corpus.py``: long multi-session
chats, questions naming their evidence turns). For a question asked at the end of
session ``s``, the retrieval cursor is the start of session ``s - window + 1``: the last
``window`` sessions are the live transcript, and everything before the cursor is what a
memory writer has already put into L2. Each evidence fact therefore lives in one place:

- ``l2``: its turn lies before the cursor. L2 holds one memory item per earlier turn:
  the fact sentence where the turn has one, else the turn's longest sentence
  (``--l2 sentences``, a writer that cannot tell facts from chatter), or only the fact
  sentences (``--l2 facts``, a perfect writer).
- ``event``: every third turn of the window has its last sentence (its fact sentence, if
  it has one) moved out of the message into an event record at the turn's time, so the
  text exists once, in a different place.
- ``transcript``: any other fact in the window, older or recent.

A fact is *kept* when its sentence is in the content of some entry of the pack. Shares
are over evidence facts; ``macro`` is the mean of the shares of the places that hold
evidence (a question equally likely to need each). The script first checks that its run of agrun's own order
gives the exact pack ``build_context`` gives.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from agrun.context import ContextPack, build_context, validate_request
from agrun.context import _build as pipeline
from agrun.context import _inputs as inputs
from agrun.context._item import Item
from agrun.context._ledger import Ledger
from agrun.context._plan import Plan
from agrun.context._recall import recall
from agrun.context._transcript import Transcript
from recall_corpus import build_corpus, stats

ORDERS = ("agrun", "by age", "spec")
PLACES = ("l2", "transcript", "event")
MINUTE_MS = 60_000
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


# --- The two orders ---------------------------------------------------------------------


def spec_order(plan: Plan, ledger: Ledger, transcript: Transcript) -> list[Item]:
    """Spec 001 §9 read literally: L2 goes first on overflow, so it is admitted last of
    L0-L2 (newest first: the oldest L2 first to go); L3/L4 after it as before."""
    offer = pipeline._offer
    transcript.admit_recent()
    offer(plan, ledger, inputs.steering(plan, ledger))
    offer(plan, ledger, inputs.approvals(plan, ledger))
    offer(plan, ledger, inputs.artifacts(plan, ledger))
    offer(plan, ledger, inputs.tool_outputs(plan, ledger))
    transcript.admit_rest()
    offer(plan, ledger, inputs.events(plan, ledger))
    for extension in plan.extensions:
        offer(plan, ledger, inputs.extension(plan, extension))
    transcript.reserve_summary()
    transcript.place_summary()
    l2 = inputs.session_memory(plan, ledger)
    ledger.admit_each(newest_first(l2))
    merged = inputs.merged_memory(plan, ledger, l2.moved, related=False)
    offer(plan, ledger, inputs.deep_memory(plan, ledger, merged))
    return l2.moved


def newest_first(l2: inputs.SessionL2) -> list[Item]:
    """All of L2 below the cap, newest first, whatever the request."""
    return sorted(l2.relevant + l2.unrelated, key=lambda item: item.order, reverse=True)


def age_order(plan: Plan, ledger: Ledger, transcript: Transcript) -> list[Item]:
    """agrun's order before L2 was ranked (issue 18.5): all of L2, newest first, before
    the older transcript's tail and events."""
    offer = pipeline._offer
    transcript.admit_recent()
    offer(plan, ledger, inputs.steering(plan, ledger))
    offer(plan, ledger, inputs.approvals(plan, ledger))
    offer(plan, ledger, inputs.artifacts(plan, ledger))
    offer(plan, ledger, inputs.tool_outputs(plan, ledger))
    options = plan.req.options
    free = ledger.available - ledger.used
    transcript.admit_older(options.transcript_share * (1.0 - options.recall_share))
    recall(plan, ledger, transcript, ledger.used + int(options.recall_share * free))
    transcript.reserve_summary()
    l2 = inputs.session_memory(plan, ledger)
    ledger.admit_each(newest_first(l2))
    transcript.admit_rest()
    transcript.place_summary()
    offer(plan, ledger, inputs.events(plan, ledger))
    for extension in plan.extensions:
        offer(plan, ledger, inputs.extension(plan, extension))
    merged = inputs.merged_memory(plan, ledger, l2.moved, related=False)
    offer(plan, ledger, inputs.deep_memory(plan, ledger, merged))
    return l2.moved


ADMIT: dict[str, Callable[[Plan, Ledger, Transcript], list[Item]]] = {
    "agrun": pipeline._admit_by_priority,
    "by age": age_order,
    "spec": spec_order,
}


def build(order: str, request: Any) -> ContextPack:
    """The pack ``request`` gets when its inputs are admitted in ``order``."""
    return pipeline._run(pipeline._plan(request), pipeline._ignore, admit=ADMIT[order])


# --- Requests ---------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    """The sentences of a corpus turn (they end with ``.``, ``!`` or ``?``)."""
    return [s for s in _SENTENCE.split(text.strip()) if s]


def case(
    conversation: dict[str, Any], question: dict[str, Any], window: int, l2: str
) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """The request for ``question``, each evidence turn's fact, and where each fact lives."""
    history = conversation["messages"][: question["prefix"]]
    last = history[-1]["session"]
    cursor = next(i for i, m in enumerate(history) if m["session"] >= last - window + 1)
    messages: list[dict[str, Any]] = []
    memory: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    place: dict[str, str] = {}
    for index, turn in enumerate(history):
        fact = turn.get("fact")
        if index < cursor:
            if fact is not None:
                place[turn["id"]] = "l2"
                memory.append(
                    {"id": f"l2-{turn['id']}", "text": fact, "kind": "fact", "seq": index}
                )
            elif l2 == "sentences":
                longest = max(sentences(turn["content"]), key=len)
                memory.append({"id": f"l2-{turn['id']}", "text": longest, "seq": index})
            continue
        content = turn["content"]
        parts = sentences(content)
        if (index - cursor) % 3 == 2 and len(parts) > 1:
            moved = fact if fact is not None else parts[-1]
            content = " ".join(content.replace(moved, " ").split())
            events.append(
                {"id": f"ev-{turn['id']}", "kind": "Said", "text": moved, "atMs": index * MINUTE_MS}
            )
            if fact is not None:
                place[turn["id"]] = "event"
        elif fact is not None:
            place[turn["id"]] = "transcript"
        author = {"author": "person"} if turn["role"] == "user" else {}
        messages.append({"id": turn["id"], "role": turn["role"], "content": content} | author)
    messages.append(
        {"id": question["id"], "role": "user", "content": question["text"], "author": "person"}
    )
    facts = {m["id"]: m["fact"] for m in history if "fact" in m}
    request = {
        # Messages before the cursor are in memory: they are not sent at all.
        "messages": [{"id": f"gone-{i}", "role": "assistant"} for i in range(cursor)] + messages,
        "cursor": cursor,
        "input": question["text"],
        "memory": memory,
        "events": events,
        "nowMs": len(history) * MINUTE_MS,
    }
    return request, facts, place


# --- Measuring --------------------------------------------------------------------------


class Tally:
    """Evidence facts kept, by order, budget and place; and the L2 tokens packs hold."""

    def __init__(self) -> None:
        self.total: Counter[str] = Counter()
        self.kept: dict[tuple[str, int], Counter[str]] = {}
        self.l2_tokens: Counter[tuple[str, int]] = Counter()
        self.builds: Counter[tuple[str, int]] = Counter()

    def add(self, key: tuple[str, int], pack: ContextPack, needed: list[tuple[str, str]]) -> None:
        kept = self.kept.setdefault(key, Counter())
        contents = [entry.content for entry in pack.entries()]
        for fact, where in needed:
            if any(fact in content for content in contents):
                kept[where] += 1
        self.l2_tokens[key] += pack.metrics.l2_tokens
        self.builds[key] += 1

    def shares(self, key: tuple[str, int]) -> dict[str, float]:
        kept = self.kept.get(key, Counter())
        out = {p: round(kept[p] / self.total[p], 4) for p in PLACES if self.total[p]}
        out["all"] = round(sum(kept.values()) / sum(self.total.values()), 4)
        present = [p for p in PLACES if p in out]
        out["macro"] = round(sum(out[p] for p in present) / len(present), 4)
        return out


def measure(corpus: dict[str, Any], budgets: list[int], window: int, l2: str, quick: bool) -> Tally:
    """Every question through both orders at every budget."""
    tally = Tally()
    checked = False
    for conversation in corpus["conversations"]:
        questions = conversation["questions"][:: 3 if quick else 1]
        for question in questions:
            request, facts, place = case(conversation, question, window, l2)
            needed = [(facts[e], place[e]) for e in question["evidence"]]
            for _, where in needed:
                tally.total[where] += 1
            for budget in budgets:
                validated = validate_request(request | {"budget": {"limit": budget}})
                if not checked:
                    # The bench's run of agrun's order is the pipeline's, byte for byte.
                    assert build("agrun", validated).to_json() == build_context(validated).to_json()
                    checked = True
                for order in ORDERS:
                    tally.add((order, budget), build(order, validated), needed)
    return tally


# --- Reporting --------------------------------------------------------------------------


def table(tally: Tally, budgets: list[int]) -> str:
    """Markdown: a row per budget and order, a column per place."""
    head = ["budget", "order", *PLACES, "all", "macro", "L2 tokens / pack"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for budget in budgets:
        for order in ORDERS:
            key = (order, budget)
            got = tally.shares(key)
            l2 = tally.l2_tokens[key] / max(tally.builds[key], 1)
            cells = [f"{budget:,}", order, *(f"{got.get(p, 0.0):.2f}" for p in PLACES)]
            cells += [f"{got['all']:.2f}", f"{got['macro']:.2f}", f"{l2:,.0f}"]
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--budgets", default="1000,2000,4000,8000")
    parser.add_argument("--window", type=int, default=3, help="sessions after the cursor")
    parser.add_argument("--l2", choices=("sentences", "facts"), default="sentences")
    parser.add_argument(
        "--quick", action="store_true", help="3 conversations, every third question"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    corpus = build_corpus(args.seed, 3 if args.quick else args.conversations)
    tally = measure(corpus, budgets, args.window, args.l2, args.quick)
    figures = stats(corpus)
    asked = sum(len(c["questions"][:: 3 if args.quick else 1]) for c in corpus["conversations"])
    print(
        f"Overflow order, seed {args.seed}: {figures['conversations']} conversations, "
        f"{asked:,} questions (window {args.window} sessions, L2 {args.l2}); "
        "evidence facts by place: " + ", ".join(f"{p} {tally.total[p]:,}" for p in PLACES) + ".\n"
    )
    print("Share of the evidence facts the pack keeps:\n")
    print(table(tally, budgets))
    if args.json:
        out = {
            "seed": args.seed,
            "window": args.window,
            "l2": args.l2,
            "budgets": budgets,
            "evidence": dict(tally.total),
            "results": {
                order: {str(b): tally.shares((order, b)) for b in budgets} for order in ORDERS
            },
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
