"""What each step of issue 14.6 gained: bench/page_speed.py run on four builds of the page,
each the one before it plus one step, against stock Pyodide measured in the same run.

    .venv/bin/python bench/page_speed_steps.py [--rounds 3] [--before COMMIT]

    before     boot.js and engine.js as they were before the work (--before, default: the
               parent of the commit that added web/snapshot.js), put where today's are
               (web/boot/, web/engine/): the interpreter first, then
               agrun's wheels; wheels and the standard library as PyPI and npm ship them
    parallel   today's boot.js with snapshots switched off: wheels fetched while the
               interpreter starts (loadPyodide's `packages`); the same source wheels
    bytecode   + the wheels and the imported standard library compiled to .pyc at build time
    snapshot   + the memory snapshot (today's dist/ as built: the one a first visit saves; the
               one the build ships is restored only with shippedSnapshot, see page_speed.py)

The variants are made from dist/ and .cache/ under a temporary folder; warm visits come from
the HTTP cache in all four (a changed boot.js would not match the service worker's manifest).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _browser import ROOT
from pins import pinned

DIST = ROOT / "dist"
STEPS = ("before", "parallel", "bytecode", "snapshot")
SNAPSHOT_STORE = "const store = await snapshotStore(indexURL, identity);"


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def source_wheels() -> list[Path]:
    """The runtime's wheels before bytecode: PyPI's, and agrun's as built."""
    cache = ROOT / ".cache" / "wheels"
    wheels = sorted([*cache.glob("runtime/*.whl"), *cache.glob("wasm/*.whl")])
    return wheels + sorted((ROOT / "build" / "wheel").glob("agrun-*.whl"))


def with_source_wheels(folder: Path) -> None:
    """Put the source wheels, the stock standard library and their lock into folder/pyodide."""
    pyodide = folder / "pyodide"
    stock = ROOT / ".cache" / f"pyodide-{pinned('PYODIDE_VERSION')}"
    for wheel in pyodide.glob("*.whl"):
        wheel.unlink()
    wheels = source_wheels() + sorted((ROOT / ".cache" / "wheels").glob("optional/*.whl"))
    for wheel in wheels:
        shutil.copy2(wheel, pyodide / wheel.name)
    (pyodide / "python_stdlib.zip").unlink()
    shutil.copy2(stock / "python_stdlib.zip", pyodide / "python_stdlib.zip")
    lock = [sys.executable, str(ROOT / "tools" / "make_lock.py")]
    lock += [
        "--base",
        str(stock / "pyodide-lock.json"),
        "--out",
        str(pyodide / "pyodide-lock.json"),
    ]
    subprocess.run([*lock, *map(str, wheels)], check=True)


def without_snapshots(folder: Path) -> None:
    boot = folder / "boot" / "boot.js"
    text = boot.read_text(encoding="utf-8")
    if SNAPSHOT_STORE not in text:
        raise SystemExit("web/boot/boot.js changed: update SNAPSHOT_STORE in this script")
    boot.write_text(text.replace(SNAPSHOT_STORE, "const store = null;"), encoding="utf-8")
    # Nor the snapshot the build ships (a first visit would restore it).
    for shipped in (folder / "pyodide").glob("agrun-snapshot*"):
        shipped.unlink()


def make_variant(step: str, root: Path, before: str) -> Path:
    folder = root / step
    shutil.copytree(DIST, folder, ignore=shutil.ignore_patterns("wllama", "models"))
    # The variants differ in what they load; none gets the service worker's stamp.
    (folder / "precache.json").unlink()
    if step == "before":
        for name, now in (("boot.js", "boot/boot.js"), ("engine.js", "engine/engine.js")):
            (folder / now).write_text(git("show", f"{before}:web/{name}"), encoding="utf-8")
    if step in ("before", "parallel"):
        with_source_wheels(folder)
    if step in ("parallel", "bytecode"):
        without_snapshots(folder)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--before", help="the commit whose boot.js is the 'before' step")
    args = parser.parse_args()
    if not (DIST / "agrun.js").is_file():
        raise SystemExit("dist/ is not built: run ./build.sh")
    added = git("log", "--diff-filter=A", "--format=%H", "--", "web/snapshot.js").split()
    before = args.before or f"{added[-1]}^"
    with tempfile.TemporaryDirectory(prefix="agrun-steps-") as tmp:
        for step in STEPS:
            folder = make_variant(step, Path(tmp), before)
            print(f"\n===== {step} =====", flush=True)
            command = [sys.executable, str(ROOT / "bench" / "page_speed.py"), "--sw", "off"]
            command += ["--rounds", str(args.rounds), "--turns", str(args.turns)]
            subprocess.run([*command, "--dist", str(folder)], check=True)


if __name__ == "__main__":
    main()
