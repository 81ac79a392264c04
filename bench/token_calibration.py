"""Self-calibrating token budgets against a real tokenizer (issue 10.8).

Run: .venv/bin/python bench/token_calibration.py [--turns 40] [--window 2048]

A session against llama-server running the test model (models/agrun-tiny.gguf: a byte-level
BPE of 1,024 tokens, which counts about three times agrun's estimate) through the OpenAI
adapter. Each turn's message is long enough that the window binds after a few turns. For each
model call it records agrun's estimate of the pack, the factor it planned with, and what the
server really counted (``usage.prompt_tokens``), against the window's prompt budget (window
minus the reply's reservation). Two sessions side by side: the prior factor 1.0 (trust the
estimate) and 3.0. A good calibration keeps every real count under the budget and, once the
model has been seen, uses most of it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path
from typing import Any

from agrun import create_runtime
from agrun.adapters.openai import llama_server
from agrun.storage import MemoryStorage

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from llama_process import llama_server_running

REPLY = 128

TOPICS = ("harbour", "market", "bridge", "library", "orchard", "lighthouse", "station", "museum")


def message(n: int) -> str:
    topic = TOPICS[n % len(TOPICS)]
    return (
        f"Turn {n}: tell me about the old {topic} of the town, who built it, what it was used "
        f"for over the years, and whether people still go there on Sunday afternoons."
    )


async def session(url: str, window: int, prior: float, turns: int) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    started: dict[str, Any] = {}

    def note(event: Any) -> None:
        if event.kind == "ContextPackBuilt":
            # The factor this pack was planned with (the runtime learns after each call).
            started["estimate"] = event.budget_used
            started["factor"] = runtime.token_factors.get("None", prior)
        elif event.kind == "ModelCallFinished" and event.usage is not None:
            calls.append(
                {
                    "estimate": started.get("estimate", 0),
                    "factor": started.get("factor", prior),
                    "actual": event.usage.prompt_tokens,
                }
            )

    runtime = create_runtime(
        provider=llama_server(url),
        context_window=window,
        max_reply_tokens=REPLY,
        temperature=0.0,
        token_factor=prior,
        memory_extraction="rules",
        storage=MemoryStorage(),
        on_event=note,
    )
    failures: list[str] = []
    for n in range(turns):
        result = await runtime.run(message(n))
        if result.error is not None:
            failures.append(f"{result.error.code}: {result.error.message[:160]}")
    for call in calls:
        call["budget"] = window - REPLY
    return [*calls, {"failures": failures}]


def report(label: str, rows: list[dict[str, Any]]) -> None:
    failures = rows[-1]["failures"]
    calls = rows[:-1]
    over = [c for c in calls if c["actual"] > c["budget"]]
    bound = [c for c in calls if c["actual"] > 0.5 * c["budget"]]
    use = [c["actual"] / c["budget"] for c in calls[len(calls) // 2 :]]
    ratio = [c["actual"] / c["estimate"] for c in calls if c["estimate"]]
    print(f"\n## prior factor {label}")
    print(f"model calls: {len(calls)}, failed turns: {len(failures)} {failures}")
    print(f"real prompt tokens over the budget: {len(over)} of {len(calls)}")
    print(f"calls with the window binding (> half the budget): {len(bound)}")
    print(
        f"budget used by real counts, second half of the session: median {statistics.median(use):.2f}, max {max(use):.2f}"
    )
    print(f"real / estimated tokens: median {statistics.median(ratio):.2f}, max {max(ratio):.2f}")
    print("| call | estimate | factor | real | budget |")
    print("|---:|---:|---:|---:|---:|")
    for n, c in enumerate(calls, 1):
        if n <= 3 or n % 5 == 0:
            print(f"| {n} | {c['estimate']} | {c['factor']:.2f} | {c['actual']} | {c['budget']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--window", type=int, default=2048)
    args = parser.parse_args()
    with llama_server_running(args.window) as url:
        for prior in (1.0, 3.0):
            rows = asyncio.run(session(url, args.window, prior, args.turns))
            report(f"{prior}", rows)


if __name__ == "__main__":
    main()
