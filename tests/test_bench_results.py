"""bench/_results.py: the benches' JSON becomes a Markdown table and a valid PNG (issue 22.7)."""

from __future__ import annotations

import importlib.util
import struct
import sys
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.cpython_only

BENCH = Path(__file__).resolve().parent.parent / "bench" / "_results.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_results", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def outputs() -> dict[str, Any]:
    recall = {"answered": 0.5, "kept": {"all": 0.6}}
    return {
        "boot": {"runs": 2, "cold": {"bare_ms": 2000.0, "agrun_ms": 3000.0},
                 "warm": {"bare_ms": 1000.0, "agrun_ms": 1250.0}},
        "model_overhead": None,
        "model_overhead:why": "failed (no server)",
        "context_build": {"budget": 8000, "mix": "mixed", "sizes": [
            {"size": 1000, "agrun_ms": 4.0, "langchain_ms": 8.0}]},
        "tokenizer_error": {"worst_under": 0.02, "margin": 0.1, "categories": {
            "prose": {"real": 100, "estimate": 110, "worst_under": 0.02}}},
        "context_recall": {"budgets": [2000], "results": {
            "agrun": {"2000": {"answered": 0.75, "kept": {"all": 0.9}}},
            "bm25": {"2000": recall}}},
        "session_memory_growth": {"turns": 1000, "rows": [
            {"turn": 500, "session_memory_bytes": 4000, "history_bytes": 100},
            {"turn": 1000, "session_memory_bytes": 4100, "history_bytes": 200}]},
        "not_run": {"token_calibration": "needs llama-server"},
    }  # fmt: skip


def test_rows_give_each_ratio_and_the_command_that_made_it() -> None:
    results = load()
    commands = {"boot": "python bench/boot.py --runs 2", "token_calibration": "python tc.py"}
    table = results.rows(outputs(), commands)
    by_measure = {r.measure.split(" (")[0]: r for r in table}
    cold = by_measure["boot, cold"]
    assert cold.ratio == pytest.approx(1.5)
    assert cold.command == "python bench/boot.py --runs 2"
    assert by_measure["context build, 1,000 messages, budget 8,000"].ratio == pytest.approx(0.5)
    assert by_measure["answer coverage, budget 2,000"].ratio == pytest.approx(1.5)
    assert by_measure["estimator, worst under-count vs o200k"].ratio == pytest.approx(0.2)
    memory = next(r for r in table if r.measure.startswith("session memory"))
    assert memory.ratio == pytest.approx(1.025)
    assert by_measure["per-turn overhead"].agrun == "not run: failed (no server)"
    assert by_measure["token_calibration"].agrun == "not run: needs llama-server"

    text = results.markdown(table)
    lines = text.splitlines()
    assert lines[0] == "| measure | agrun | baseline | ratio | command |"
    assert all(line.count(" | ") == 4 for line in lines if line.startswith("| "))
    assert "| 1.50 | `python bench/boot.py --runs 2` |" in text
    # A pipe inside a cell is escaped, so it cannot add a column.
    piped = results.Row("a | b", "1", "2", 0.5, "x | y")
    assert results.markdown([piped]).splitlines()[2] == "| a \\| b | 1 | 2 | 0.50 | `x \\| y` |"


def read_png(data: bytes) -> dict[bytes, bytes]:
    """The chunks of a PNG, each CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, pos = {}, 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body)
        chunks[kind] = body
        pos += 12 + length
    return chunks


def test_png_is_a_valid_image_with_one_bar_per_charted_ratio() -> None:
    results = load()
    bars = results.chart_bars(results.rows(outputs(), {}))
    labels = [label for label, _ in bars]
    assert "BOOT COLD / PYODIDE" in labels and "ANSWERS 2000 / BM25" in labels
    chunks = read_png(results.png(bars))
    assert list(chunks) == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (8, 2)
    pixels = zlib.decompress(chunks[b"IDAT"])
    assert len(pixels) == height * (1 + 3 * width)
    # Bars are drawn: the bar colour appears, and a longer ratio draws more of it.
    bar = bytes((70, 120, 190))
    short = zlib.decompress(read_png(results.png([("A", 0.5)]))[b"IDAT"])
    long = zlib.decompress(read_png(results.png([("A", 1.5)]))[b"IDAT"])
    assert 0 < short.count(bar) < long.count(bar)
