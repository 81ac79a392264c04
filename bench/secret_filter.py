"""The sensitive-content filter and the redactor on the scanners' fixture corpus, per split.

Run: .venv/bin/python bench/secret_filter.py [--split heldout|tune|all]
[--rows ROUND|old|all] [--misses]   (ROUND: a round named in rounds.json, first to fourteenth)

Reads tests/data/secrets_corpus/*.jsonl (built by bench/secret_fixtures.py from gitleaks',
detect-secrets', trufflehog's, Nosey Parker's, Kingfisher's, secretlint's, ripsecrets',
whispers', talisman's and semgrep-rules' own test fixtures, leaky-repo's leaked config
files, rows written for agrun, and benign configs and docs from other repositories) and
prints, for the chosen split:

- recall on the seed's categories (spec 000's list: generic labels, the named provider
  formats, PEM private keys, JWTs), recall on every secret, and the false-positive rate
  on benign texts;
- for the filter (``SensitiveContentFilter().check(text)`` refuses: the text would not
  reach persistent memory) and for the redactor (``PatternRedactor().redact(text)``
  changes the text).

The catalog is tuned on the ``tune`` split only; ``heldout`` (the default) is the figure
to report. ``--misses`` lists what was missed or refused wrongly; use it on ``tune``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agrun.sensitive import PatternRedactor, SensitiveContentFilter

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "secrets_corpus"


# Which round each file came in: tests/data/secrets_corpus/rounds.json.
ROUNDS: dict[str, str] = json.loads((CORPUS / "rounds.json").read_text(encoding="utf-8"))["rounds"]


def round_of(stem: str) -> str:
    return ROUNDS[stem]


def load(split: str, rows: str = "all") -> list[dict[str, Any]]:
    """Rows of ``split`` (heldout, tune, all) from the ``rows`` files: one round's (a name
    rounds.json gives), the first two's (old) or every file (all)."""
    paths = [
        path
        for path in sorted(CORPUS.glob("*.jsonl"))
        if rows == "all"
        or round_of(path.stem) == rows
        or (rows == "old" and round_of(path.stem) in ("first", "second"))
    ]
    loaded = [
        json.loads(line)
        for path in paths
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return [row for row in loaded if split == "all" or row["split"] == split]


@dataclass
class Score:
    seed: tuple[int, int] = (0, 0)
    secrets: tuple[int, int] = (0, 0)
    benign: tuple[int, int] = (0, 0)

    @staticmethod
    def ratio(pair: tuple[int, int]) -> str:
        hit, total = pair
        return f"{hit}/{total} = {hit / total:.3f}" if total else "n/a"


def score(rows: list[dict[str, Any]], flags: Any, misses: list[str], name: str) -> Score:
    s = Score()
    for row in rows:
        flagged = bool(flags(row["text"]))
        if row["label"] == "secret":
            s.secrets = (s.secrets[0] + flagged, s.secrets[1] + 1)
            if row["seed"]:
                s.seed = (s.seed[0] + flagged, s.seed[1] + 1)
            if not flagged:
                misses.append(f"{name} miss [{row['category']}] {row['text'][:160]!r}")
        else:
            s.benign = (s.benign[0] + flagged, s.benign[1] + 1)
            if flagged:
                misses.append(f"{name} false positive [{row['category']}] {row['text'][:160]!r}")
    return s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("heldout", "tune", "all"), default="heldout")
    parser.add_argument(
        "--rows",
        choices=(*dict.fromkeys(ROUNDS.values()), "old", "all"),  # rounds.json's, in order
        default="all",
    )
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    rows = load(args.split, args.rows)
    check = SensitiveContentFilter().check
    redactor = PatternRedactor()
    misses: list[str] = []
    results = {
        "filter (refused)": score(rows, lambda t: not check(t).allowed, misses, "filter"),
        "redactor (masked)": score(rows, lambda t: redactor.redact(t) != t, misses, "redactor"),
    }
    print(f"split: {args.split}, rows: {args.rows}\n")
    print("| | seed recall | all-secret recall | false positives |")
    print("|---|---:|---:|---:|")
    for name, s in results.items():
        print(f"| {name} | {s.ratio(s.seed)} | {s.ratio(s.secrets)} | {s.ratio(s.benign)} |")
    if args.misses:
        print()
        print("\n".join(misses))


if __name__ == "__main__":
    main()
