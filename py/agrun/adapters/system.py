"""Real time and ids for a live runtime (CPython or Pyodide)."""

from __future__ import annotations

import time
import uuid

__all__ = ["SystemClock", "UuidIds"]


class SystemClock:
    """Wall-clock time from the host."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class UuidIds:
    """Random UUID4 ids, prefixed so a reader knows what kind of thing they name."""

    def new_id(self, prefix: str) -> str:
        return f"{prefix}-{uuid.uuid4().hex}"
