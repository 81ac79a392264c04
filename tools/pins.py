"""Versions from pins.env, the one place they are pinned, for the Python tools, benchmarks
and tests (build.sh sources the file itself)."""

from __future__ import annotations

from pathlib import Path

PINS = Path(__file__).resolve().parent.parent / "pins.env"


def pinned(name: str) -> str:
    """The value pins.env gives ``name``; a KeyError names it if there is none."""
    for line in PINS.read_text().splitlines():
        if line.startswith(f"{name}="):
            return line.split("=", 1)[1].strip()
    raise KeyError(f"pins.env has no {name}")
