"""Write a pyodide-lock.json that lists exactly the wheels we ship.

The npm package's own lock lists ~350 wheels that are not shipped and whose hashes would
not match PyPI's, so agrun writes its own: the npm lock's ``info`` block (its abi_version
must match the runtime) and one entry per wheel, read from the wheel itself.

    python tools/make_lock.py --base NPM_LOCK --out LOCK WHEEL...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# The environment Pyodide 314 reports to markers: CPython 3.14 on emscripten.
PYODIDE_MARKERS = {
    "implementation_name": "cpython",
    "implementation_version": "3.14.2",
    "os_name": "posix",
    "platform_machine": "wasm32",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_system": "Emscripten",
    "platform_version": "",
    "python_full_version": "3.14.2",
    "python_version": "3.14",
    "sys_platform": "emscripten",
    "extra": "",
}


def _dist_info(wheel: zipfile.ZipFile) -> str:
    for name in wheel.namelist():
        head = name.split("/", 1)[0]
        if head.endswith(".dist-info"):
            return head
    raise SystemExit(f"{wheel.filename}: no .dist-info folder")


def _imports(wheel: zipfile.ZipFile, dist_info: str) -> list[str]:
    names = set(wheel.namelist())
    top_level = f"{dist_info}/top_level.txt"
    if top_level in names:
        found = wheel.read(top_level).decode().split()
    else:
        found = []
        for name in names:
            head, _, rest = name.partition("/")
            if head.endswith((".dist-info", ".data")):
                continue
            if rest == "__init__.py" or (not rest and head.endswith(".py")):
                found.append(head.removesuffix(".py"))
    return sorted({name for name in found if not name.startswith("_") or name == "_pytest"})


def _depends(metadata: str, shipped: set[str]) -> list[str]:
    depends = []
    for line in Parser().parsestr(metadata).get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        marker: Marker | None = requirement.marker
        if marker is not None and not marker.evaluate(PYODIDE_MARKERS):
            continue
        name = canonicalize_name(requirement.name)
        if name not in shipped:
            raise SystemExit(f"{line!r} is needed but no wheel for {name} is listed")
        depends.append(name)
    return sorted(set(depends))


def package_entry(path: Path, shipped: set[str]) -> dict[str, object]:
    with zipfile.ZipFile(path) as wheel:
        dist_info = _dist_info(wheel)
        metadata = wheel.read(f"{dist_info}/METADATA").decode()
        meta = Parser().parsestr(metadata)
        return {
            "name": canonicalize_name(meta["Name"]),
            "version": meta["Version"],
            "file_name": path.name,
            "install_dir": "site",
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "package_type": "package",
            "imports": _imports(wheel, dist_info),
            "depends": _depends(metadata, shipped),
            "unvendored_tests": False,
            "shared_library": False,
        }


def wheel_name(path: Path) -> str:
    return canonicalize_name(re.split(r"-\d", path.name, maxsplit=1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", type=Path, required=True, help="the npm package's lock")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("wheels", type=Path, nargs="+")
    args = parser.parse_args()
    shipped = {wheel_name(path) for path in args.wheels}
    info = json.loads(args.base.read_text())["info"]
    packages = {}
    for path in sorted(args.wheels):
        entry = package_entry(path, shipped)
        packages[str(entry["name"])] = entry
    lock = {"info": info, "packages": packages}
    args.out.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
