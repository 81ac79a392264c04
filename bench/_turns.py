"""A realistic turn for the storage benchmarks: what one run of a chat agent commits."""

from __future__ import annotations

from typing import Any

WORDS = [
    "the",
    "runtime",
    "keeps",
    "session",
    "history",
    "memory",
    "entries",
    "and",
    "inquiry",
    "context",
    "for",
    "later",
    "turns",
]


def text(n: int, seed: int) -> str:
    return " ".join(WORDS[(seed + i) % len(WORDS)] for i in range(n))


def turn_fields(n: int) -> dict[str, Any]:
    """camelCase-free field values of turn ``n`` (about 5 KB of JSON)."""
    return {
        "committed_at_ms": 1_700_000_000_000 + n,
        "messages": [
            {"id": f"m{n}u", "role": "user", "text": text(35, n)},
            {"id": f"m{n}a", "role": "assistant", "text": text(140, n + 1)},
        ],
        "events": [
            {"id": f"e{n}-{k}", "kind": kind, "runId": f"run-{n}", "at": n * 10 + k}
            for k, kind in enumerate(
                ["run_started", "skill_selected", "observed", "memory_appended", "run_finished"]
            )
        ],
        "memory_entries": [{"id": f"mem{n}", "kind": "fact", "text": text(20, n + 2)}],
        "session_memory": {
            "summary": text(120, n),
            "facts": [text(10, n + k) for k in range(5)],
            "recentTurns": n,
        },
        "inquiry": {
            "activeGoal": text(8, n),
            "activeQuery": text(6, n + 3),
            "selectedSource": None,
        },
        "content_entries": [{"ref": f"c{n}", "kind": "text", "bytes": 1500, "body": "x" * 1500}],
        "last_run": {"runId": f"run-{n}", "status": "succeeded", "stepCount": 3},
    }
