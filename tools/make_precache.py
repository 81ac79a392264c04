"""Write dist/precache.json, the list of files agrun's service worker (web/sw.js) caches, and
stamp the build's version into dist/sw.js.

    python tools/make_precache.py DIST [--exclude GLOB]...

The manifest lists every file of the build with its size and sha256, except the worker
itself, the manifest, what only the tests put into dist/ (``e2e-*``), and what a page may
fetch but need not work offline with (``NOT_PRECACHED``: the embedding model); ``--exclude``
leaves out more.
Its ``version`` is the sha256 of everything else in it (the files and the worker's own
source), so any change to what a page is served gives a new version: the worker caches
each version under a name of its own and never mixes two. The version is also written
into dist/sw.js, so the browser sees a changed worker script and installs the new build.
Run it last, after everything else is in dist/ (build.sh's assemble() does).
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import re
from pathlib import Path
from typing import Any

MANIFEST = "precache.json"
WORKER = "sw.js"
FORMAT = "agrun.precache"
FORMAT_VERSION = 1
# What the e2e suite puts into dist/ and no page needs: test_pyodide_packages.py serves its
# wheels from a folder of its own (e2e-packages-*) while it runs.
TEST_ONLY = ("e2e-*",)
# Served but not precached: the 25 MB sentence-embedding model of recall's opt-in embedder
# (docs/context.md), which a page that wants it fetches, and which no page needs offline; and
# the 28 MB memory snapshot a page that asks for it (`shippedSnapshot`) restores on its first
# visit and then keeps in Cache Storage itself (web/boot/snapshot.js).
NOT_PRECACHED = ("models/minilm-*", "pyodide/agrun-snapshot*")
# The worker's one stamped line; the rest of web/sw.js is copied as it is.
STAMP = re.compile(r"^const BUILD = .*;$", re.MULTILINE)
UNSTAMPED = "const BUILD = null;"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def excluded(relative: str, patterns: tuple[str, ...]) -> bool:
    """Whether a dist-relative path (or a folder it is in) matches one of ``patterns``."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(fnmatch.fnmatchcase(p, pattern) for p in prefixes for pattern in patterns)


def unstamped_worker(text: str) -> str:
    """The worker's source with its version line put back to null, so stamping it again
    (the manifest rewritten for the same files) gives the same version."""
    if len(STAMP.findall(text)) != 1:
        raise SystemExit(f"{WORKER} has no single 'const BUILD = ...;' line to stamp")
    return STAMP.sub(UNSTAMPED, text)


def build_manifest(dist: Path, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The manifest of ``dist``: every file (sorted by path) with its size and sha256."""
    patterns = (MANIFEST, WORKER, *TEST_ONLY, *NOT_PRECACHED, *exclude)
    files = []
    for path in sorted(p for p in dist.rglob("*") if p.is_file()):
        relative = path.relative_to(dist).as_posix()
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        if excluded(relative, patterns):
            continue
        files.append({"path": relative, "size": path.stat().st_size, "sha256": sha256_file(path)})
    worker = unstamped_worker((dist / WORKER).read_text(encoding="utf-8"))
    body: dict[str, Any] = {
        "format": FORMAT,
        "formatVersion": FORMAT_VERSION,
        "worker": hashlib.sha256(worker.encode()).hexdigest(),
        "bytes": sum(f["size"] for f in files),
        "files": files,
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    version = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    return {"version": version, **body}


def write_precache(dist: Path, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """Write ``dist/precache.json`` and stamp its version into ``dist/sw.js``."""
    if not (dist / WORKER).is_file():
        raise SystemExit(f"{dist / WORKER} is missing: copy web/sw.js into {dist} first")
    manifest = build_manifest(dist, exclude)
    (dist / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    worker = dist / WORKER
    stamped = STAMP.sub(f"const BUILD = '{manifest['version']}';", worker.read_text("utf-8"))
    worker.write_text(stamped, encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dist", type=Path)
    parser.add_argument(
        "--exclude", action="append", default=[], metavar="GLOB", help="leave files out"
    )
    args = parser.parse_args(argv)
    manifest = write_precache(args.dist, tuple(args.exclude))
    mib = manifest["bytes"] / (1 << 20)
    print(f"precache: {len(manifest['files'])} files, {mib:.1f} MiB, version {manifest['version']}")


if __name__ == "__main__":
    main()
