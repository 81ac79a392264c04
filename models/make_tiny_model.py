"""Make agrun-tiny.gguf: a tiny llama-architecture, tool-calling chat model for agrun's
real-model tests, trained from scratch on seeded synthetic data (see README.md here).

    python models/make_tiny_model.py --stop-at 400   # the committed agrun-tiny.gguf

Needs torch (CPU), tokenizers, jinja2, numpy and gguf in the running Python. Deterministic
for a given seed, thread count and torch build. CI never runs this: it uses the committed GGUF.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiny import tokenizer as tokmod
from tiny.cases import cases_of, encode, exact_ok, format_ok
from tiny.data import Generator
from tiny.export import export
from tiny.model import Config, Llama
from tiny.template import render


def cpu_minutes() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) / 60


def batches(
    data: list[tuple[list[int], list[int]]], budget: int, rng: random.Random
) -> list[list[int]]:
    """Group example indices into batches of similar length, at most `budget` padded tokens."""
    order = list(range(len(data)))
    rng.shuffle(order)
    out: list[list[int]] = []
    for c in range(0, len(order), 512):
        chunk = sorted(order[c : c + 512], key=lambda i: len(data[i][0]))
        cur: list[int] = []
        for i in chunk:
            n = len(data[i][0])
            if cur and n * (len(cur) + 1) > budget:
                out.append(cur)
                cur = []
            cur.append(i)
        if cur:
            out.append(cur)
    rng.shuffle(out)
    return out


def collate(
    data: list[tuple[list[int], list[int]]], idx: list[int], pad: int, other: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Inputs, next-token targets and per-target loss weights: 1 for reply tokens, `other`
    for the rest of the conversation (so the model also learns the format it reads), 0 for
    padding."""
    n = max(len(data[i][0]) for i in idx)
    ids = torch.full((len(idx), n), pad, dtype=torch.long)
    weight = torch.zeros((len(idx), n))
    for r, i in enumerate(idx):
        a, m = data[i]
        ids[r, : len(a)] = torch.tensor(a)
        weight[r, : len(m)] = torch.tensor(m, dtype=torch.float) * (1 - other) + other
    return ids[:, :-1], ids[:, 1:], weight[:, 1:]


def evaluate(model: Llama, tok: Any, seed: int, n: int, log: Any = None) -> dict[str, Any]:
    """Greedy-decode held-out cases; per behaviour: count, exact rate, format rate."""
    gen = Generator(seed, held_out=True)
    stop = {tok.token_to_id("<|im_end|>"), tok.token_to_id("<|endoftext|>")}
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    model.eval()
    kinds = Generator.KINDS
    for j in range(n):
        ex = gen.example(kinds[j % len(kinds)])
        for case in cases_of(ex):
            ids = tok.encode(case.prompt).ids
            if len(ids) > model.cfg.ctx - 200:
                continue
            out = model.generate(ids, stop)
            reply = tok.decode([i for i in out if i not in stop], skip_special_tokens=False)
            s = stats[case.kind]
            s["n"] += 1
            s["exact"] += exact_ok(case, reply)
            s["format"] += format_ok(case, reply)
            if log is not None and not exact_ok(case, reply):
                log.write(
                    json.dumps(
                        {
                            "kind": case.kind,
                            "want": case.expected,
                            "got": reply,
                            "request": case.request,
                        }
                    )
                    + "\n"
                )
    model.train()
    return {
        k: {
            "n": v["n"],
            "exact": round(v["exact"] / v["n"], 3),
            "format": round(v["format"] / v["n"], 3),
        }
        for k, v in sorted(stats.items())
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "agrun-tiny.gguf")
    ap.add_argument("--seed", type=int, default=20251201)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=384)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ctx", type=int, default=2048)
    ap.add_argument("--examples", type=int, default=9000)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--lr", type=float, default=4e-3)
    ap.add_argument(
        "--other-weight",
        type=float,
        default=0.3,
        help="loss weight of non-reply tokens (reply tokens weigh 1)",
    )
    ap.add_argument("--eval", type=int, default=240, help="held-out examples to decode")
    ap.add_argument("--report", type=Path, default=None, help="write metrics JSON here")
    ap.add_argument("--errors", type=Path, default=None, help="write held-out misses here")
    ap.add_argument(
        "--save",
        type=Path,
        default=None,
        help="also save torch weights here (and tokenizer.json beside), every 200 steps",
    )
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument(
        "--stop-at",
        type=int,
        default=0,
        help="stop after this many steps (the LR schedule still spans --steps)",
    )
    ap.add_argument(
        "--from-weights",
        type=Path,
        default=None,
        help="skip training: load these weights (from --save), then export and evaluate",
    )
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    rng = random.Random(args.seed)
    t0 = time.time()

    gen = Generator(args.seed)
    examples = [gen.example() for _ in range(args.examples)]
    tok = tokmod.train(render(e.messages, e.tools) for e in examples[:4000])
    data = [encode(tok, e) for e in examples]
    data = [d for d in data if len(d[0]) <= args.ctx]
    ntok = sum(len(d[0]) for d in data)
    print(
        f"data: {len(data)} examples, {ntok} tokens, "
        f"{sum(sum(m) for _, m in data)} target tokens, {time.time() - t0:.0f}s",
        flush=True,
    )

    cfg = Config(
        dim=args.dim,
        layers=args.layers,
        ffn=args.ffn,
        heads=args.heads,
        kv_heads=args.heads,
        ctx=args.ctx,
    )
    model = Llama(cfg)
    print(f"model: {model.n_params()} params {cfg}", flush=True)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
        eps=1e-8,
    )
    pad = tok.token_to_id("<|endoftext|>")
    warm = max(1, args.steps // 30)

    def lr_at(s: int) -> float:
        if s < warm:
            return args.lr * (s + 1) / warm
        p = (s - warm) / max(1, args.steps - warm)
        return args.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * p)))

    hidden = model.hidden if args.no_compile else torch.compile(model.hidden, dynamic=True)
    if args.save:
        tok.save(str(args.save.with_suffix(".tokenizer.json")))
    step, seen, ema = 0, 0, None
    t_train = time.time()
    last = min(args.steps, args.stop_at or args.steps)
    if args.from_weights:
        model.load_state_dict(torch.load(args.from_weights))
        last = 0
    while step < last:
        for idx in batches(data, args.batch_tokens, rng):
            if step >= last:
                break
            x, y, w = collate(data, idx, pad, args.other_weight)
            keep = w > 0
            h = hidden(x)[keep]
            ce = F.cross_entropy(model.logits(h), y[keep], reduction="none")
            loss = (ce * w[keep]).sum() / w[keep].sum()
            for g in opt.param_groups:
                g["lr"] = lr_at(step)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            seen += x.numel()
            ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
            step += 1
            if step % 25 == 0 or step == args.steps:
                el = time.time() - t_train
                print(
                    f"step {step}/{args.steps} loss {loss.item():.4f} ema {ema:.4f} "
                    f"lr {lr_at(step):.2e} tok {seen} {seen / el:.0f} tok/s "
                    f"wall {el / 60:.1f}m cpu {cpu_minutes():.1f}m",
                    flush=True,
                )
            if args.save and step % 100 == 0:
                torch.save(model.state_dict(), args.save)
    train_wall = (time.time() - t_train) / 60
    train_cpu = cpu_minutes()

    if args.save:
        torch.save(model.state_dict(), args.save)
    export(model, tok, args.out)
    errors = args.errors.open("w") if args.errors else None
    metrics = evaluate(model, tok, args.seed + 1, args.eval, errors)
    if errors:
        errors.close()
    report = {
        "seed": args.seed,
        "threads": args.threads,
        "params": model.n_params(),
        "config": cfg.__dict__,
        "examples": len(data),
        "train_tokens_seen": seen,
        "steps": (args.stop_at or args.steps) if args.from_weights else step,
        "schedule_steps": args.steps,
        "final_loss_ema": round(ema or 0.0, 4),
        "train_wall_minutes": round(train_wall, 1),
        "train_cpu_minutes": round(train_cpu, 1),
        "total_wall_minutes": round((time.time() - t0) / 60, 1),
        "heldout": metrics,
    }
    print(json.dumps(report, indent=1))
    if args.report:
        args.report.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
