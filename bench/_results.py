"""The results table and chart from the benches' JSON (bench/results.py runs them).

Pure: ``rows(outputs)`` turns each bench's JSON (or None when it was not run) into rows of
measure, agrun, baseline, ratio and the command that made it; ``markdown(rows)`` formats them
and ``png(bars)`` draws the ratios as horizontal bars. The PNG is written by hand (zlib and
struct, a 5x7 pixel font) so the chart needs no plotting library.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Any

__all__ = ["Row", "chart_bars", "markdown", "png", "rows"]


@dataclass(frozen=True)
class Row:
    measure: str
    agrun: str
    baseline: str
    ratio: float | None  # agrun / baseline; None when there is no ratio to give
    command: str
    chart: str = ""  # the bar's label when the row is one of the charted ones


def _ms(v: float) -> str:
    return f"{v:,.1f} ms" if v < 100 else f"{v:,.0f} ms"


def _not_run(measure: str, command: str, why: str) -> Row:
    return Row(measure, f"not run: {why}", "", None, command)


def rows(outputs: dict[str, Any], commands: dict[str, str]) -> list[Row]:
    """The table's rows; a bench whose output is None gets a "not run" row saying why."""
    out: list[Row] = []
    boot = outputs.get("boot")
    cmd = commands.get("boot", "")
    if boot is None:
        out.append(_not_run("boot", cmd, outputs.get("boot:why", "no output")))
    else:
        for mode in ("cold", "warm"):
            f = boot[mode]
            out.append(
                Row(
                    f"boot, {mode} (createRuntime + first run vs loadPyodide)",
                    _ms(f["agrun_ms"]),
                    f"Pyodide {_ms(f['bare_ms'])}",
                    f["agrun_ms"] / f["bare_ms"],
                    cmd,
                    f"BOOT {mode.upper()} / PYODIDE",
                )
            )
    model = outputs.get("model_overhead")
    cmd = commands.get("model_overhead", "")
    if model is None:
        out.append(_not_run("per-turn overhead", cmd, outputs.get("model_overhead:why", "")))
    else:
        first = True
        for r in model["rows"]:
            if r["measure"] != "turn":
                continue
            out.append(
                Row(
                    f"model turn, {r['env']} {r['variant']} (overhead {r['overhead_ms']:.2f} ms)",
                    _ms(r["agrun_ms"]),
                    f"direct call {_ms(r['direct_ms'])}",
                    r["agrun_ms"] / r["direct_ms"],
                    cmd,
                    "TURN / DIRECT CALL" if first else "",
                )
            )
            first = False
    kernel = outputs.get("kernel")
    cmd = commands.get("kernel", "")
    if kernel is not None:
        for name, f in kernel["rows"].items():
            if name == "bare await":
                continue
            out.append(
                Row(
                    f"kernel per run, {name} (CPU)",
                    f"{f['cpu_us']:,.0f} µs",
                    f"bare await {kernel['rows']['bare await']['cpu_us']:.2f} µs",
                    None,
                    cmd,
                )
            )
    build = outputs.get("context_build")
    cmd = commands.get("context_build", "")
    if build is None:
        out.append(_not_run("context build", cmd, outputs.get("context_build:why", "")))
    else:
        for f in build["sizes"]:
            out.append(
                Row(
                    f"context build, {f['size']:,} messages, budget {build['budget']:,} (CPU)",
                    _ms(f["agrun_ms"]),
                    f"trim_messages {_ms(f['langchain_ms'])}",
                    f["agrun_ms"] / f["langchain_ms"],
                    cmd,
                    f"BUILD {f['size']} / TRIM_MESSAGES",
                )
            )
    tok = outputs.get("tokenizer_error")
    cmd = commands.get("tokenizer_error", "")
    if tok is not None:
        real = sum(c["real"] for c in tok["categories"].values())
        est = sum(c["estimate"] for c in tok["categories"].values())
        out.append(
            Row(
                "estimator, worst under-count vs o200k (against its margin)",
                f"{tok['worst_under']:.1%}",
                f"margin {tok['margin']:.0%}",
                tok["worst_under"] / tok["margin"],
                cmd,
                "ESTIMATOR WORST / MARGIN",
            )
        )
        out.append(
            Row(
                "estimator, total tokens vs o200k (raw, before margin)",
                f"{est:,}",
                f"o200k {real:,}",
                est / real,
                cmd,
                "ESTIMATE / O200K",
            )
        )
    recall = outputs.get("context_recall")
    cmd = commands.get("context_recall", "")
    if recall is None:
        out.append(_not_run("recall", cmd, outputs.get("context_recall:why", "")))
    else:
        res = recall["results"]
        for budget in recall["budgets"]:
            a, b = res["agrun"][str(budget)], res["bm25"][str(budget)]
            label = f"budget {budget:,}"
            out.append(
                Row(
                    f"answer coverage, {label} (agrun vs BM25)",
                    f"{a['answered']:.1%}",
                    f"BM25 {b['answered']:.1%}",
                    a["answered"] / b["answered"] if b["answered"] else None,
                    cmd,
                    f"ANSWERS {budget} / BM25",
                )
            )
            out.append(
                Row(
                    f"evidence turns kept, {label} (agrun vs BM25)",
                    f"{a['kept']['all']:.1%}",
                    f"BM25 {b['kept']['all']:.1%}",
                    a["kept"]["all"] / b["kept"]["all"] if b["kept"]["all"] else None,
                    cmd,
                    f"RECALL {budget} / BM25",
                )
            )
    growth = outputs.get("session_memory_growth")
    cmd = commands.get("session_memory_growth", "")
    if growth is None:
        out.append(_not_run("memory over turns", cmd, outputs.get("session_memory_growth:why", "")))
    else:
        last = growth["rows"][-1]
        middle = next(r for r in growth["rows"] if r["turn"] >= growth["turns"] // 2)
        out.append(
            Row(
                f"session memory stored, turn {last['turn']:,} vs turn {middle['turn']:,}",
                f"{last['session_memory_bytes']:,} B",
                f"{middle['session_memory_bytes']:,} B",
                last["session_memory_bytes"] / middle["session_memory_bytes"],
                cmd,
                f"MEMORY T{last['turn']} / T{middle['turn']}",
            )
        )
        out.append(
            Row(
                f"history, turn {last['turn']:,} vs turn {middle['turn']:,} (grows, for scale)",
                f"{last['history_bytes']:,} B",
                f"{middle['history_bytes']:,} B",
                last["history_bytes"] / middle["history_bytes"],
                cmd,
            )
        )
    for name, why in outputs.get("not_run", {}).items():
        out.append(_not_run(name, commands.get(name, ""), why))
    return out


def markdown(table: list[Row]) -> str:
    """A Markdown table; pipes in cells are escaped so a command cannot split a row."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| measure | agrun | baseline | ratio | command |", "|---|---:|---:|---:|---|"]
    for r in table:
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}"
        cmd = f"`{cell(r.command)}`" if r.command else ""
        lines.append(
            f"| {cell(r.measure)} | {cell(r.agrun)} | {cell(r.baseline)} | {ratio} | {cmd} |"
        )
    return "\n".join(lines) + "\n"


def chart_bars(table: list[Row]) -> list[tuple[str, float]]:
    return [(r.chart, r.ratio) for r in table if r.chart and r.ratio is not None]


# 5x7 glyphs, one int of 5 bits per row (the high bit is the left column).
_FONT: dict[str, tuple[int, ...]] = {
    " ": (0, 0, 0, 0, 0, 0, 0),
    "A": (14, 17, 17, 31, 17, 17, 17),
    "B": (30, 17, 17, 30, 17, 17, 30),
    "C": (14, 17, 16, 16, 16, 17, 14),
    "D": (30, 17, 17, 17, 17, 17, 30),
    "E": (31, 16, 16, 30, 16, 16, 31),
    "F": (31, 16, 16, 30, 16, 16, 16),
    "G": (14, 17, 16, 23, 17, 17, 15),
    "H": (17, 17, 17, 31, 17, 17, 17),
    "I": (14, 4, 4, 4, 4, 4, 14),
    "J": (7, 2, 2, 2, 2, 18, 12),
    "K": (17, 18, 20, 24, 20, 18, 17),
    "L": (16, 16, 16, 16, 16, 16, 31),
    "M": (17, 27, 21, 21, 17, 17, 17),
    "N": (17, 17, 25, 21, 19, 17, 17),
    "O": (14, 17, 17, 17, 17, 17, 14),
    "P": (30, 17, 17, 30, 16, 16, 16),
    "Q": (14, 17, 17, 17, 21, 18, 13),
    "R": (30, 17, 17, 30, 20, 18, 17),
    "S": (15, 16, 16, 14, 1, 1, 30),
    "T": (31, 4, 4, 4, 4, 4, 4),
    "U": (17, 17, 17, 17, 17, 17, 14),
    "V": (17, 17, 17, 17, 17, 10, 4),
    "W": (17, 17, 17, 21, 21, 21, 10),
    "X": (17, 17, 10, 4, 10, 17, 17),
    "Y": (17, 17, 10, 4, 4, 4, 4),
    "Z": (31, 1, 2, 4, 8, 16, 31),
    "0": (14, 17, 19, 21, 25, 17, 14),
    "1": (4, 12, 4, 4, 4, 4, 14),
    "2": (14, 17, 1, 2, 4, 8, 31),
    "3": (31, 2, 4, 2, 1, 17, 14),
    "4": (2, 6, 10, 18, 31, 2, 2),
    "5": (31, 16, 30, 1, 1, 17, 14),
    "6": (6, 8, 16, 30, 17, 17, 14),
    "7": (31, 1, 2, 4, 8, 8, 8),
    "8": (14, 17, 17, 14, 17, 17, 14),
    "9": (14, 17, 17, 15, 1, 2, 12),
    ".": (0, 0, 0, 0, 0, 12, 12),
    ",": (0, 0, 0, 0, 12, 4, 8),
    "/": (0, 1, 2, 4, 8, 16, 0),
    "-": (0, 0, 0, 31, 0, 0, 0),
    "_": (0, 0, 0, 0, 0, 0, 31),
    ":": (0, 12, 12, 0, 12, 12, 0),
    "(": (2, 4, 8, 8, 8, 4, 2),
    ")": (8, 4, 2, 2, 2, 4, 8),
    "%": (24, 25, 2, 4, 8, 19, 3),
}

_SCALE = 2  # each font pixel drawn as 2x2
_BG, _FG, _BAR, _ONE = (255, 255, 255), (20, 20, 20), (70, 120, 190), (200, 60, 60)


def _text(canvas: list[bytearray], x: int, y: int, text: str) -> None:
    for ch in text.upper():
        glyph = _FONT.get(ch, _FONT[" "])
        for row, bits in enumerate(glyph):
            for col in range(5):
                if bits & (16 >> col):
                    _fill(canvas, x + col * _SCALE, y + row * _SCALE, _SCALE, _SCALE, _FG)
        x += 6 * _SCALE


def _fill(canvas: list[bytearray], x: int, y: int, w: int, h: int, rgb: tuple[int, ...]) -> None:
    for yy in range(max(0, y), min(len(canvas), y + h)):
        line = canvas[yy]
        for xx in range(max(0, x), min(len(line) // 3, x + w)):
            line[3 * xx : 3 * xx + 3] = bytes(rgb)


def png(bars: list[tuple[str, float]], title: str = "AGRUN / BASELINE") -> bytes:
    """Horizontal bars of the ratios, a red line at 1.0, each bar labelled with its ratio."""
    label_w = (max((len(label) for label, _ in bars), default=0) + 1) * 6 * _SCALE
    plot_w, bar_h, gap, top = 420, 16, 8, 40
    top_ratio = max([2.0, *(r for _, r in bars)])
    width = 10 + label_w + plot_w + 80
    height = top + len(bars) * (bar_h + gap) + 20
    canvas = [bytearray(bytes(_BG) * width) for _ in range(height)]
    _text(canvas, 10, 10, f"{title} (RED LINE: 1.0)")
    x0 = 10 + label_w
    # The 1.0 line first, so bars and figures are drawn over it.
    one = x0 + round(plot_w / top_ratio)
    _fill(canvas, one, top - 4, 2, len(bars) * (bar_h + gap), _ONE)
    for i, (label, ratio) in enumerate(bars):
        y = top + i * (bar_h + gap)
        _text(canvas, 10, y + 1, label)
        _fill(canvas, x0, y, max(1, round(plot_w * ratio / top_ratio)), bar_h, _BAR)
        _text(canvas, x0 + round(plot_w * ratio / top_ratio) + 6, y + 1, f"{ratio:.2f}")
    raw = b"".join(b"\x00" + bytes(line) for line in canvas)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )
