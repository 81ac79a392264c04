"""Recall and false positives of the sensitive-content filter and the redactor, side by side.

Run: .venv/bin/python bench/sensitive_filter.py [--per-category 60] [--seed N] [--misses]

On the seeded corpus of bench/secrets_corpus.py it measures, per category:

- the filter (``SensitiveContentFilter().check(entry)``): a positive is caught when the
  entry is refused; a benign entry is a false positive when it is refused;
- the redactor (``PatternRedactor().redact(text)``, dict entries as their JSON): a
  positive is caught when no 8-character piece of the secret is left; a benign text is a
  false positive when it comes back changed;
- the floor, the dozen patterns agrun redacted with before this catalog, through the same
  engine, so the gain is measured in the same run.

Two categories were written after the catalog was tuned (``held-out``); the shapes left
out on purpose are measured apart. Then CPU time per text (best of a few runs) and, as a
check on real code with no ground truth, how many lines of the CPython standard library
that mention passwords, tokens or keys the redactor would touch. It prints markdown.
"""

from __future__ import annotations

import argparse
import json
import re
import sysconfig
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agrun.sensitive import PatternRedactor, SensitiveContentFilter
from secrets_corpus import SEED, UNCOVERED, Sample, benign, positives, uncovered

# The redactor's patterns and hints before this catalog (agrun.context, spec 001 s17).
FLOOR_PATTERNS = (
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    r"\bsk-ant-[A-Za-z0-9_\-]{16,}",
    r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{16,}",
    r"\bAIza[0-9A-Za-z_\-]{30,}",
    r"\bya29\.[0-9A-Za-z_\-]{20,}",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    r"(?P<keep>\b(?i:bearer)\s+)[A-Za-z0-9._~+/\-]{16,}=*",
    r"(?P<keep>\b(?i:password|passwd|pwd|api[_-]?key|secret|access[_-]?token|token)"
    r"[\"']?\s*[=:]\s*[\"']?)[^\s\"',;]{4,}",
)
FLOOR_HINTS = (
    "private key", "sk-", "aiza", "ya29.", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "akia", "asia", "xox", "eyj", "bearer", "pass", "pwd", "api", "secret",
    "token",
)  # fmt: skip
CREDENTIAL_WORDS = re.compile(r"(?i)pass|pwd|token|secret|api.?key|auth|bearer|credential")


def as_text(entry: Any) -> str:
    return entry if isinstance(entry, str) else json.dumps(entry, ensure_ascii=False)


def leaked(secret: str, redacted: str) -> bool:
    """Whether an 8-character piece of ``secret`` (all of it, if shorter) is still there."""
    width = min(8, len(secret))
    return any(secret[i : i + width] in redacted for i in range(len(secret) - width + 1))


def by_category(samples: Iterable[Sample]) -> dict[str, list[Sample]]:
    groups: dict[str, list[Sample]] = {}
    for sample in samples:
        groups.setdefault(sample.category, []).append(sample)
    return groups


def rate(hits: int, total: int) -> str:
    return f"{hits / total:.3f}" if total else "n/a"


class Judge:
    """Scores the filter, the redactor and the floor on samples, and keeps the misses."""

    def __init__(self) -> None:
        self.filter = SensitiveContentFilter()
        self.redactor = PatternRedactor()
        self.floor = PatternRedactor(FLOOR_PATTERNS, hints=FLOOR_HINTS)
        self.misses: list[tuple[str, str, str]] = []

    def positive(self, sample: Sample) -> tuple[bool, bool | None, bool | None]:
        caught = not self.filter.check(sample.entry).allowed
        if not caught:
            self.misses.append(("filter miss", sample.category, as_text(sample.entry)))
        if sample.secret is None:
            return caught, None, None
        text = as_text(sample.entry)
        masked = not leaked(sample.secret, self.redactor.redact(text))
        if not masked:
            self.misses.append(("redactor miss", sample.category, text))
        return caught, masked, not leaked(sample.secret, self.floor.redact(text))

    def benign(self, sample: Sample) -> tuple[bool, bool, bool]:
        verdict = self.filter.check(sample.entry)
        if not verdict.allowed:
            self.misses.append(("filter false positive", sample.category, str(verdict.reasons)))
        text = as_text(sample.entry)
        return (
            not verdict.allowed,
            self.redactor.redact(text) != text,
            self.floor.redact(text) != text,
        )


def positive_table(judge: Judge, samples: list[Sample], title: str) -> tuple[int, int, int]:
    print(f"\n### {title}\n")
    print("| category | n | filter recall | redactor recall | floor recall |")
    print("|---|---:|---:|---:|---:|")
    total = caught_all = 0
    for category, group in by_category(samples).items():
        scores = [judge.positive(sample) for sample in group]
        caught = sum(s[0] for s in scores)
        judged = [s for s in scores if s[1] is not None]
        masked = sum(bool(s[1]) for s in judged)
        floor = sum(bool(s[2]) for s in judged)
        total, caught_all = total + len(group), caught_all + caught
        print(
            f"| {category} | {len(group)} | {rate(caught, len(group))} | "
            f"{rate(masked, len(judged))} | {rate(floor, len(judged))} |"
        )
    return total, caught_all, 0


def benign_table(judge: Judge, samples: list[Sample]) -> tuple[int, int, int, int]:
    print("\n### Benign look-alikes (false-positive rate)\n")
    print("| category | n | filter | redactor | floor |")
    print("|---|---:|---:|---:|---:|")
    totals = [0, 0, 0, 0]
    for category, group in by_category(samples).items():
        scores = [judge.benign(sample) for sample in group]
        flagged = [sum(s[i] for s in scores) for i in range(3)]
        cells = " | ".join(rate(count, len(group)) for count in flagged)
        print(f"| {category} | {len(group)} | {cells} |")
        totals = [totals[0] + len(group)] + [
            a + b for a, b in zip(totals[1:], flagged, strict=True)
        ]
    return totals[0], totals[1], totals[2], totals[3]


def best_time(
    make: Callable[[], Callable[[str], object]], texts: list[str], runs: int = 3
) -> float:
    """CPU microseconds per text, best of ``runs``; each run on a fresh redactor or filter,
    since one remembers the answers for texts it has seen (a second run would time the memo)."""
    best = float("inf")
    for _ in range(runs):
        fn = make()
        start = time.process_time()
        for text in texts:
            fn(text)
        best = min(best, time.process_time() - start)
    return best / len(texts) * 1e6


def config_documents(size: int = 10_000) -> list[str]:
    """Documents of ``size`` characters joined from the benign configs and docs by other
    people (tests/data/secrets_corpus/fourth.jsonl, tune split): a long text full of
    ``name: value`` lines, each judged whole."""
    path = Path(__file__).resolve().parent.parent / "tests/data/secrets_corpus/fourth.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    joined = "\n".join(row["text"] for row in rows if row["split"] == "tune")
    return [joined[at : at + size] for at in range(0, len(joined) - size + 1, size)]


def timing_table(judge: Judge, pos: list[Sample], ben: list[Sample]) -> None:
    print("\n### CPU time per text (µs, best of 3)\n")
    print("| texts | redactor | floor | ratio | filter.check |")
    print("|---|---:|---:|---:|---:|")
    prose = "The quarterly report shows revenue up 4.2% driven by the EU market. " * 20
    for name, texts in (
        ("benign corpus", [as_text(s.entry) for s in ben]),
        ("positive corpus", [as_text(s.entry) for s in pos]),
        ("prose, 1.4 KB, no hint", [f"{i}. {prose}" for i in range(300)]),
        ("configs and docs, 10 KB", config_documents()),
    ):
        ours = best_time(lambda: PatternRedactor().redact, texts)
        floor = best_time(lambda: PatternRedactor(FLOOR_PATTERNS, hints=FLOOR_HINTS).redact, texts)
        check = best_time(lambda: SensitiveContentFilter().check, texts)
        print(f"| {name} | {ours:.1f} | {floor:.1f} | {ours / floor:.2f} | {check:.1f} |")


def real_code(judge: Judge) -> None:
    """Lines of the standard library that mention credentials: how many get touched."""
    root = Path(sysconfig.get_paths()["stdlib"])
    lines = flagged = 0
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for line in text.splitlines():
            if CREDENTIAL_WORDS.search(line):
                lines += 1
                flagged += bool(judge.redactor.find(line))
    print("\n### Real code, no ground truth\n")
    share = f"{flagged / max(lines, 1):.2%}"
    print(f"{root.name} standard library: {lines} lines mention credentials;")
    print(f"the redactor touches {flagged} of them ({share}).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-category", type=int, default=60)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--misses", action="store_true", help="print every miss")
    args = parser.parse_args()

    judge = Judge()
    pos = positives(args.seed, args.per_category)
    ben = benign(args.seed, args.per_category * 5 // 2)
    n_pos, caught, _ = positive_table(judge, pos, "Covered shapes (recall)")
    positive_table(judge, uncovered(args.seed, args.per_category // 2), "Left out on purpose")
    n_ben, fp_filter, fp_redactor, fp_floor = benign_table(judge, ben)
    print("\n### Totals\n")
    print(f"- filter recall on covered shapes: {caught}/{n_pos} = {caught / n_pos:.4f}")
    print(f"- filter false-positive rate: {fp_filter}/{n_ben} = {fp_filter / n_ben:.4f}")
    print(f"- redactor false-positive rate: {fp_redactor}/{n_ben} = {fp_redactor / n_ben:.4f}")
    print(f"- floor false-positive rate: {fp_floor}/{n_ben} = {fp_floor / n_ben:.4f}")
    timing_table(judge, pos, ben)
    real_code(judge)
    if args.misses:
        print("\n### Misses and false positives (covered shapes)\n")
        for kind, category, text in judge.misses:
            if category not in UNCOVERED:
                print(f"- {kind} [{category}]: {text[:200]!r}")


if __name__ == "__main__":
    main()
