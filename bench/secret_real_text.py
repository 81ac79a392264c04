"""The redactor on real text nobody labelled: what it would mask in a machine's own files.

Run: .venv/bin/python bench/secret_real_text.py ROOT... [--rule NAME] [--show N]

Walks each ROOT (text files up to 5 MB, gzipped ones too: Debian's docs and man pages),
cuts every file into chunks of six lines and runs the catalog on each chunk, as a memory
note or a tool's output of that size would meet it. It prints how many chunks were scanned,
how many hold a hit, the chunks hit per rule, and the first ``--show`` hits (rule, file,
the match with what surrounds it).

There is no ground truth here: a machine's documentation, libraries and configs hold almost
no real secrets, so nearly every hit is a false positive to read. ``--rule`` runs one shape
alone (its hints first, then the checks the redactor makes on a match), quick enough to
check a new shape against every file before it is kept; the twenty-first pass of issue
19.4 did that for a word as a URL's password (docs/continuity.md).
"""

from __future__ import annotations

import argparse
import gzip
import os
from collections import Counter
from collections.abc import Callable, Iterator

from agrun.sensitive import PatternRedactor, SecretHit
from agrun.sensitive._catalog import CATALOG

_CHUNK_LINES = 6
_MAX_BYTES = 5_000_000


def texts(roots: list[str]) -> Iterator[tuple[str, str]]:
    """(path, text) of every readable text file under ``roots``."""
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                path = os.path.join(folder, name)
                try:
                    if os.path.islink(path) or os.path.getsize(path) > _MAX_BYTES:
                        continue
                    if path.endswith(".gz"):
                        with gzip.open(path) as packed:
                            data = packed.read(_MAX_BYTES)
                    else:
                        with open(path, "rb") as plain:
                            data = plain.read()
                except (OSError, EOFError, gzip.BadGzipFile):
                    continue
                if b"\0" in data[:4096]:
                    continue  # binary
                yield path, data.decode("utf-8", "replace")


def chunks(text: str) -> Iterator[str]:
    lines = text.splitlines()
    for start in range(0, len(lines), _CHUNK_LINES):
        yield "\n".join(lines[start : start + _CHUNK_LINES])


def finder(rule: str | None) -> Callable[[str], tuple[SecretHit, ...]]:
    """What hits a chunk: the whole catalog, or one shape alone (with the same checks on
    what it matches)."""
    patterns = [shape.pattern for shape in CATALOG if rule is None or shape.name == rule]
    if not patterns:
        raise SystemExit(f"no shape named {rule!r} in the catalog")
    return (PatternRedactor() if rule is None else PatternRedactor(patterns)).find


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--rule", help="one shape's name, as a hit reports it")
    parser.add_argument("--show", type=int, default=20)
    args = parser.parse_args()
    find = finder(args.rule)
    files = scanned = hit_chunks = 0
    per_rule: Counter[str] = Counter()
    shown: list[str] = []
    for path, text in texts(args.roots):
        files += 1
        for chunk in chunks(text):
            scanned += 1
            hits = find(chunk)
            if hits:
                hit_chunks += 1
                per_rule.update({hit.rule for hit in hits})
                if len(shown) < args.show:
                    hit = hits[0]
                    around = chunk[max(0, hit.start - 60) : hit.end + 20]
                    shown.append(f"{hit.rule} | {path} | {around!r}")
    print(f"files: {files}, six-line chunks: {scanned}, chunks with a hit: {hit_chunks}")
    for name, count in per_rule.most_common():
        print(f"  {count:7d}  {name}")
    for line in shown:
        print(line)


if __name__ == "__main__":
    main()
