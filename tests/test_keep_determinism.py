"""Keeping a turn by the quick paths (issue 25.5) writes what the slow paths write.

A 30-turn SQLite session with fixed clock and ids and secrets in its inputs and replies
leaves the same rows, byte for byte, whether
a body (a trace, a reply) is scrubbed, checked, scanned for secrets and copied in one walk
(the quick path) or scrubbed, then copied, then checked (the slow path it replaced).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import agrun
from agrun.chat import ModelRequest
from agrun.testing import FixedClock, ScriptedProvider, SequentialIds

pytestmark = pytest.mark.cpython_only

SECRET = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2


def _reply(request: ModelRequest) -> Any:
    count = len(request.messages)
    if count % 5 == 0:
        return f"Your key {SECRET} is noted (turn {count})."
    return f"Noted: {count} messages so far. ✓"


def _input(n: int) -> str:
    if n % 4 == 1:
        return f"turn {n}: my token is {SECRET}, keep it safe"
    return f"turn {n}: what is the weather like in Paris today? é {n * 1.5}"


async def session_rows(path: Path, turns: int = 30) -> dict[str, list[tuple[Any, ...]]]:
    """Run the session into a SQLite file at ``path``; every table's rows, in order."""
    from agrun.adapters.sqlite import SqliteStorage  # absent in Pyodide

    storage = SqliteStorage(path)
    runtime = agrun.create_runtime(
        provider=ScriptedProvider(_reply),
        model="scripted",
        memory_extraction="rules",
        storage=storage,
        clock=FixedClock(),
        ids=SequentialIds(),
    )
    for n in range(turns):
        result = await runtime.run(_input(n))
        await runtime.idle()
        assert result.ok, result.error
    await storage.close()
    db = sqlite3.connect(path)
    try:
        tables = [
            name
            for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    finally:
        db.close()


async def test_the_quick_paths_keep_the_rows_the_slow_paths_keep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick = await session_rows(tmp_path / "quick.sqlite3")
    assert any(rows for rows in quick.values())
    contents = [row for row in quick["content"] if "trace:" in str(row)]
    assert contents, "the traces are kept as content rows"
    # The slow path: no one-walk scrub, copy and scan, for a trace or any other body.
    monkeypatch.setattr(
        "agrun.sensitive.SensitiveContentFilter.clean_copy", lambda self, value, **_: None
    )
    slow = await session_rows(tmp_path / "slow.sqlite3")
    assert quick == slow
