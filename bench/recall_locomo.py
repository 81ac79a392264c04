"""Context recall on LoCoMo: natural long conversations written by other people.

Run: .venv/bin/python bench/recall_locomo.py --data PATH [--part held-out|tune|all]
     [--budgets 500,2000,4000] [--variants A,B] [--against METHOD] [--json PATH]

PATH is LoCoMo's ``data/locomo10.zip`` (github.com/snap-research/locomo, Maharana et al.,
ACL 2024; CC BY-NC 4.0, so it is read from where you keep it, never copied into this
repository) or the folder of JSON files inside it. Ten conversations between two people,
19-32 sessions each over months, with questions people wrote and the turns that answer
them. The same measures as ``bench/context_recall.py`` (whose code this reuses) on text
agrun's generator did not write: answer coverage (every answer word in the pack) against
recency and plain BM25 over whole turns, paired, at each budget.

How LoCoMo becomes requests (chosen before anything was measured, and not tuned):

- The first speaker's turns are the person's (``user``), the second's the assistant's;
  every turn opens with its speaker's ``Name:`` (two people talk; the name is in the text
  for every method alike). A shared photo's caption follows the text as ``[shares a photo:
  ...]``, as LoCoMo's own prompts add it.
- A message is stamped with its session's date and time, a minute per message after the
  session's first.
- Every question is asked after the whole conversation, as the person's last message.
  Category 5 (adversarial: the answer is in no turn) is left out.
- An answer's words are its word tokens less English function words; the pack holds
  one when its text holds the token (a pack's ``[2023-05-08]`` counts as ``8 May 2023``).
  Answers that need a sum ("7 May 2023" for "yesterday" said on the 8th) are rarely whole
  in any pack: the comparison is paired, so every method meets the same questions.

Parts, fixed before any figure was seen: ``tune`` is the first five conversations in
LoCoMo's order (26, 30, 41, 42, 43), ``held-out`` the other five (44, 47-50).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import context_recall
from context_recall import (
    _MONTHS,
    METHODS,
    Kept,
    answer_table,
    answer_type_table,
    corpus_figures,
    fill_table,
    measure,
    terms,
)

PARTS = {"tune": (0, 5), "held-out": (5, 10), "all": (0, 10)}
"""Which of the ten conversations (in LoCoMo's order) each part holds."""

CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
"""LoCoMo's question categories, by the names its paper gives them (5, adversarial, is
left out: its answer is in no turn)."""

# Ways to cut a recalled turn tried on the tune part, besides context_recall's; "whole to
# 60" is how agrun cut before this benchmark (the default is now whole to 120).
context_recall.PATCHES.update(
    {
        "whole to 60": {"_WHOLE_TURN": 60},
        "whole to 90": {"_WHOLE_TURN": 90},
        "whole to 200": {"_WHOLE_TURN": 200},
        "+-2": {"_BEFORE_MATCH": 2, "_AFTER_MATCH": 2},
        "other speaker 0.6": {"_OTHER_SPEAKER": 0.6},
    }
)
context_recall.VARIANTS.update({name: {} for name in context_recall.PATCHES})
for share in (0.8, 0.9):
    context_recall.VARIANTS[f"recallShare {share}"] = {"recallShare": share}

_FUNCTION_WORDS_TEXT = """a an the and or but of to in on at by for with from as is are was were be been being
    it its this that these those he she they them his her their i me my we our you your
    do does did has have had not no so than then there what when where which who whom how
    about into over after before up down out off again very just also"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())

_SESSION_TIME = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})")


def session_ms(stamp: str) -> int:
    """Epoch ms of a LoCoMo session stamp such as ``1:56 pm on 8 May, 2023``."""
    match = _SESSION_TIME.search(stamp.lower())
    if match is None:
        raise ValueError(f"not a session time: {stamp!r}")
    hour, minute, half, day, month, year = match.groups()
    hours = int(hour) % 12 + (12 if half == "pm" else 0)
    when = dt.datetime(
        int(year),
        _MONTHS.lower().split().index(month) + 1,
        int(day),
        hours,
        int(minute),
        tzinfo=dt.UTC,
    )
    return int(when.timestamp() * 1000)


def read_locomo(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """LoCoMo's conversations as ``(name, raw sample)``, in its order (by sample number)."""
    if path.is_dir():
        files = {p.stem: p.read_text(encoding="utf-8") for p in path.glob("*.json")}
    else:
        with zipfile.ZipFile(path) as archive:
            files = {
                Path(name).stem: archive.read(name).decode("utf-8")
                for name in archive.namelist()
                if name.endswith(".json")
            }
    return [(name, json.loads(files[name])) for name in sorted(files, key=int)]


def answer_words(answer: Any) -> list[str]:
    """An answer's words: its word tokens less function words, each once, in order."""
    return list(dict.fromkeys(t for t in terms(str(answer)) if t not in _FUNCTION_WORDS))


def conversation(name: str, sample: dict[str, Any]) -> dict[str, Any]:
    """One LoCoMo sample in ``bench/recall_corpus.py``'s shape (messages, sessions, questions)."""
    first = sample["speaker_a"]
    messages: list[dict[str, Any]] = []
    sessions = []
    number = 1
    while f"session_{number}" in sample:
        start = session_ms(sample[f"session_{number}_date_time"])
        for offset, turn in enumerate(sample[f"session_{number}"]):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            messages.append(
                {
                    "id": f"{name}/{turn['dia_id']}",
                    "role": "user" if turn["speaker"] == first else "assistant",
                    "content": text,
                    "session": number - 1,
                    "fact": text,
                    "atMs": start + offset * 60_000,
                }
            )
        sessions.append({"end": len(messages)})
        number += 1
    ids = {m["id"] for m in messages}
    questions = []
    for n, qa in enumerate(sample["qa"]):
        kind = CATEGORIES.get(qa.get("category", 0))
        words = answer_words(qa.get("answer", ""))
        if kind is None or not words:
            continue
        evidence = [
            f"{name}/{ref.strip()}"
            for item in qa.get("evidence", [])
            for ref in str(item).replace(",", ";").split(";")
            if f"{name}/{ref.strip()}" in ids
        ]
        questions.append(
            {
                "id": f"{name}/q{n}",
                "text": qa["question"],
                "prefix": len(messages),
                "evidence": evidence,
                "answer_words": words,
                "type": kind,
            }
        )
    return {"messages": messages, "sessions": sessions, "questions": questions}


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def spelled(text: str) -> str:
    """``text`` with each ISO day also written out (``2023-05-08 8 May 2023``)."""

    def long(match: re.Match[str]) -> str:
        year, month, day = (int(x) for x in match.groups())
        return f"{match[0]} {day} {_MONTHS.split()[month - 1]} {year}"

    return _ISO_DAY.sub(long, text)


def answered(question: dict[str, Any], kept: Kept) -> bool:
    """Whether every answer word is in what the pack keeps (the question left out)."""
    text = spelled(
        "\n".join(t for key, texts in kept.items() if key != question["id"] for t in texts)
    )
    words = set(terms(text))
    return all(word in words for word in question["answer_words"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, required=True, help="locomo10.zip or its folder")
    parser.add_argument("--part", choices=sorted(PARTS), default="held-out")
    parser.add_argument("--budgets", default="500,2000,4000")
    parser.add_argument("--variants", help="agrun variants to run besides (comma-separated)")
    parser.add_argument("--against", help="also pair every method against this one")
    parser.add_argument("--json", metavar="PATH", help="also write the coverage as JSON")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    lo, hi = PARTS[args.part]
    conversations = [conversation(n, s) for n, s in read_locomo(args.data)[lo:hi]]
    corpus = {"seed": args.part, "conversations": conversations}
    methods = list(METHODS) + (args.variants.split(",") if args.variants else [])
    # LoCoMo's answers are words of prose, judged by ``answered`` here.
    tally = measure(corpus, budgets, False, methods, judge=answered)
    figures = corpus_figures(corpus)
    print(
        f"LoCoMo, part {args.part}: {len(conversations)} conversations, "
        f"{figures['sessions']} sessions, {figures['messages']:,} messages "
        f"({figures['tokens_min']:,}-{figures['tokens_max']:,} tokens each by agrun's "
        f"default tokenizer), {sum(tally.questions.values())} questions.\n"
    )
    print("Answer coverage (every answer word in the pack), paired against BM25:\n")
    print(answer_table(tally, budgets))
    if args.against:
        print(f"\nThe same, paired against {args.against}:\n")
        print(answer_table(tally, budgets, against=args.against))
    print("\nAnswer coverage by LoCoMo category:\n")
    print(answer_type_table(tally, budgets, list(CATEGORIES.values())))
    print("\nBudget used by agrun's packs (budgetUsed / limit):\n")
    print(fill_table(tally, budgets))
    if args.json:
        coverage = {
            f"{m} {b}": round(sum(tally.paired[(m, b)]) / len(tally.paired[(m, b)]), 4)
            for m in methods
            for b in budgets
        }
        Path(args.json).write_text(json.dumps(coverage, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
