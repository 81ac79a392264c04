"""Compile what a page imports to bytecode, with the Python that will import it: Pyodide's.

Run inside Pyodide (tools/precompile.mjs boots the vendored one under Node), since bytecode is
only good for the exact Python version that wrote it:

    precompile.py wheels OUT_DIR WHEEL...
    precompile.py stdlib STDLIB_ZIP OUT_ZIP MODULES_FILE

Pyodide's npm package ships its standard library and PyPI ships wheels as .py sources, so a
page compiles every module it imports on every visit: most of the time Pyodide and agrun
take to start (docs/performance.md). Each module is compiled as the import system compiles
it (optimize 0) into an unchecked-hash .pyc (PEP 552: valid whatever the files' times, which
unpacking a zip does not keep).

``wheels``: every module of each wheel has its source replaced by its .pyc, as Pyodide ships
its own packages (agrun's too: nothing in a page reads its sources since pydantic stopped
reading field docstrings from them, and they were a third of its wheel). RECORD is rewritten
to list what the wheel now holds.

``stdlib``: the modules MODULES_FILE lists (paths inside the zip, one a line: those a boot and a
first turn import) have their sources replaced by their .pyc; the rest of the library stays
source, so the zip grows by the compiled modules only.

Outputs depend on the inputs only: entries keep their order and their times.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import importlib.util
import marshal
import zipfile
from pathlib import Path

SITE_PACKAGES = "/lib/python3.14/site-packages"
STDLIB = "/lib/python314.zip"
# PEP 552 flags: bit 0 = hash-based, bit 1 = check the source. Unchecked: never re-read.
UNCHECKED_HASH = 0b01


def pyc_bytes(source: bytes, filename: str) -> bytes:
    """A .pyc of ``source`` for this interpreter, valid without its source being checked."""
    code = compile(source, filename, "exec", dont_inherit=True, optimize=0)
    header = importlib.util.MAGIC_NUMBER + UNCHECKED_HASH.to_bytes(4, "little")
    return header + importlib.util.source_hash(source) + marshal.dumps(code)


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write(target: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, data: bytes) -> None:
    entry = zipfile.ZipInfo(name, date_time=info.date_time)
    entry.external_attr = info.external_attr
    target.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)


def compile_wheel(wheel: Path, out: Path) -> int:
    """Write ``out``, a copy of ``wheel`` with its modules compiled; returns how many were."""
    written: list[tuple[str, bytes]] = []
    compiled = 0
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(out, "w") as target:
        record = None
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                record = info
                continue
            head = info.filename.split("/", 1)[0]
            pyc = None
            if info.filename.endswith(".py") and not head.endswith((".dist-info", ".data")):
                # Not this Python's code (a test fixture, say): left as source.
                with contextlib.suppress(SyntaxError):
                    pyc = pyc_bytes(data, f"{SITE_PACKAGES}/{info.filename}")
            if pyc is None:
                _write(target, info, info.filename, data)
                written.append((info.filename, data))
            else:
                compiled += 1
                name = info.filename.removesuffix(".py") + ".pyc"
                _write(target, info, name, pyc)
                written.append((name, pyc))
        if record is None:
            raise SystemExit(f"{wheel.name}: no .dist-info/RECORD")
        lines = [record_line(path, data) for path, data in written] + [f"{record.filename},,"]
        _write(target, record, record.filename, ("\n".join(lines) + "\n").encode())
    return compiled


def compile_stdlib(stdlib: Path, out: Path, modules: set[str]) -> int:
    """Write ``out``, a copy of the standard library's zip with ``modules`` compiled."""
    compiled: set[str] = set()
    with zipfile.ZipFile(stdlib) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename in modules:
                pyc = pyc_bytes(data, f"{STDLIB}/{info.filename}")
                _write(target, info, info.filename.removesuffix(".py") + ".pyc", pyc)
                compiled.add(info.filename)
            else:
                target.writestr(info, data, compress_type=info.compress_type)
    if modules - compiled:
        raise SystemExit(f"{stdlib.name} has no {sorted(modules - compiled)}")
    return len(compiled)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    wheels = commands.add_parser("wheels")
    wheels.add_argument("out", type=Path)
    wheels.add_argument("wheels", type=Path, nargs="+")
    stdlib = commands.add_parser("stdlib")
    stdlib.add_argument("stdlib", type=Path)
    stdlib.add_argument("out", type=Path)
    stdlib.add_argument("modules", type=Path)
    args = parser.parse_args(argv)
    if args.command == "wheels":
        args.out.mkdir(parents=True, exist_ok=True)
        for wheel in args.wheels:
            count = compile_wheel(wheel, args.out / wheel.name)
            print(f"{wheel.name}: {count} modules compiled")
    else:
        modules = set(args.modules.read_text().split())
        count = compile_stdlib(args.stdlib, args.out, modules)
        print(f"{args.stdlib.name}: {count} modules compiled")


if __name__ == "__main__":
    main()
