"""tools/precompile.py, the build step that ships bytecode to the page (docs/performance.md).

The build runs it inside the vendored Pyodide; here it runs in CPython, whose bytecode it then
writes, so the compiled wheels can be imported and checked for what they do."""

from __future__ import annotations

import base64
import hashlib
import importlib
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.cpython_only

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import precompile  # noqa: E402

FILES = {
    "demo_pkg/__init__.py": b"",
    "demo_pkg/mod.py": b'def answer() -> str:\n    return "compiled"\n',
    "demo_pkg/fixture.py": b"this is not python (a test fixture a wheel ships)\n",
    "demo_pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n",
    "demo_pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\n",
}


def make_wheel(folder: Path) -> Path:
    wheel = folder / "demo_pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as out:
        for name, data in {**FILES, "demo_pkg-1.0.dist-info/RECORD": b""}.items():
            out.writestr(zipfile.ZipInfo(name, date_time=(2024, 5, 6, 7, 8, 10)), data)
    return wheel


def record_of(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read("demo_pkg-1.0.dist-info/RECORD").decode()
    return {line.split(",", 1)[0]: line.split(",", 1)[1] for line in text.splitlines()}


@pytest.fixture
def importable(tmp_path: Path) -> Iterator[Path]:
    """A folder on sys.path for unpacked wheels; demo_pkg forgotten afterwards."""
    site = tmp_path / "site"
    site.mkdir()
    sys.path.insert(0, str(site))
    yield site
    sys.path.remove(str(site))
    for name in [n for n in sys.modules if n == "demo_pkg" or n.startswith("demo_pkg.")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def test_a_wheel_gets_bytecode_in_place_of_its_sources(tmp_path: Path, importable: Path) -> None:
    out = tmp_path / "out.whl"
    assert precompile.compile_wheel(make_wheel(tmp_path), out) == 2
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
        zf.extractall(importable)
    assert {"demo_pkg/__init__.pyc", "demo_pkg/mod.pyc"} <= names
    assert "demo_pkg/mod.py" not in names
    assert "demo_pkg/fixture.py" in names  # not this Python's code: left as it was
    # The bytecode alone runs.
    assert importlib.import_module("demo_pkg.mod").answer() == "compiled"


def test_the_record_lists_what_the_wheel_now_holds(tmp_path: Path) -> None:
    out = tmp_path / "out.whl"
    precompile.compile_wheel(make_wheel(tmp_path), out)
    record = record_of(out)
    with zipfile.ZipFile(out) as zf:
        assert set(record) == set(zf.namelist())
        for name, line in record.items():
            if name.endswith("RECORD"):
                assert line == ","
                continue
            data = zf.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert line == f"sha256={digest.decode()},{len(data)}"


def test_the_output_depends_on_the_input_only(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    first, second = tmp_path / "a.whl", tmp_path / "b.whl"
    precompile.compile_wheel(wheel, first)
    precompile.compile_wheel(wheel, second)
    assert first.read_bytes() == second.read_bytes()
    with zipfile.ZipFile(first) as zf:
        assert {info.date_time for info in zf.infolist()} == {(2024, 5, 6, 7, 8, 10)}


def test_the_standard_library_compiles_the_modules_it_is_told(tmp_path: Path) -> None:
    stdlib, out = tmp_path / "stdlib.zip", tmp_path / "out.zip"
    with zipfile.ZipFile(stdlib, "w") as zf:
        zf.writestr("used.py", "X = 1\n")
        zf.writestr("unused.py", "Y = 2\n")
    assert precompile.compile_stdlib(stdlib, out, {"used.py"}) == 1
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == ["unused.py", "used.pyc"]
        assert zf.read("unused.py") == b"Y = 2\n"
        header = zf.read("used.pyc")[:8]
    assert header == importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little")
    with pytest.raises(SystemExit, match=r"missing\.py"):
        precompile.compile_stdlib(stdlib, tmp_path / "x.zip", {"used.py", "missing.py"})
