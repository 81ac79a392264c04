"""One table of the main ratios: runs the benches in quick sizes and writes
bench/results.md and bench/results.png (issue 22.7).

Run: .venv/bin/python bench/results.py [--out bench] [--only boot,context_build,...]
     (after ./build.sh; ``./build.sh bench`` calls it)

Each bench runs in its own process with ``--json``; what it wrote becomes rows of the table
(bench/_results.py), each naming the command that made it. A bench that fails or cannot
run here gets a "not run" row saying why. Sizes are the quick ones below (a few minutes on
a loaded 2-core machine); run a bench alone with its defaults for the full figures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import chart_bars, markdown, png, rows

ROOT = Path(__file__).resolve().parent.parent

# name -> the bench's arguments (quick sizes), without --json.
BENCHES: dict[str, list[str]] = {
    "boot": ["bench/boot.py", "--runs", "3"],
    "model_overhead": [
        "bench/model_overhead.py",
        "--no-chromium",
        "--rounds",
        "12",
        "--warm",
        "2",
        "--no-profile",
    ],
    "kernel": ["bench/kernel_overhead.py", "--runs", "300", "--repeat", "3"],
    "context_build": ["bench/context_build.py", "--sizes", "1000,10000"],
    "tokenizer_error": ["bench/tokenizer_error.py"],
    "context_recall": ["bench/context_recall.py", "--quick"],
    "session_memory_growth": ["bench/session_memory_growth.py", "--turns", "1000"],
}

# Benches left out of the quick table, and why (their own commands give their figures).
NOT_RUN: dict[str, tuple[str, str]] = {
    "token_calibration": (
        ".venv/bin/python bench/token_calibration.py",
        "needs llama-server and the test model (kept out of the quick table)",
    ),
    "recall with similarity": (
        ".venv/bin/python bench/context_recall.py --quick --embeddings URL",
        "needs llama-server serving models/minilm-l6-q8.gguf",
    ),
}


def command(args: list[str]) -> str:
    return ".venv/bin/python " + " ".join(args)


def run(name: str, args: list[str], folder: Path) -> tuple[Any, str]:
    """The bench's JSON, or None and why it is missing."""
    path = folder / f"{name}.json"
    print(f"== {command(args)}", flush=True)
    # This checkout's agrun, whatever the venv has installed.
    paths = [str(ROOT / "py"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    proc = subprocess.run(
        [sys.executable, *args, "--json", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    sys.stdout.write(proc.stdout[-2000:])
    if path.exists():
        return json.loads(path.read_text()), ""
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return None, f"failed ({last[:120]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench")
    parser.add_argument("--only", help="comma-separated names of BENCHES to run")
    parser.add_argument("--keep", type=Path, help="keep each bench's JSON in this folder")
    args = parser.parse_args()
    chosen = args.only.split(",") if args.only else list(BENCHES)
    outputs: dict[str, Any] = {"not_run": {}}
    commands = {name: command(a) for name, a in BENCHES.items()}
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for name in chosen:
            data, why = run(name, BENCHES[name], folder)
            outputs[name] = data
            if data is None:
                outputs[f"{name}:why"] = why
    for name, (cmd, why) in NOT_RUN.items():
        commands[name] = cmd
        outputs["not_run"][name] = why
    table = rows(outputs, commands)
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    text = (
        "# Benchmark results\n\n"
        f"Written by `./build.sh bench` (bench/results.py) on {today}, CPython "
        f"{platform.python_version()}, headless Chromium for the boot rows. Measured on a "
        "loaded 2-core machine shared with other work, in the quick sizes each command shows: "
        "the ratios are the point, the absolute times are noisy. Ratio = agrun / baseline "
        "(lower is better for times and for the estimator's worst under-count; higher is "
        "better for coverage; about 1.00 is the goal for memory over turns).\n\n"
        "![ratios](results.png)\n\n"
        + markdown(table)
        + "\nThe other benches in bench/ (page speed, storage, kernel and session growth in "
        "Chromium, the secret filter, extraction quality) give their figures when run alone; "
        "each file's header says how.\n"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.md").write_text(text, encoding="utf-8")
    (args.out / "results.png").write_bytes(png(chart_bars(table)))
    print(f"wrote {args.out / 'results.md'} and {args.out / 'results.png'}")


if __name__ == "__main__":
    main()
