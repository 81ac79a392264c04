"""Deterministic stand-ins for the core's ports, for testing your own agent and for replays.

They are real implementations, not mocks: a `FixedClock` is a clock that advances by a
fixed step, `SequentialIds` is an id source that counts, `MemoryStorage` is a complete
`Storage` that keeps everything in memory, `ScriptedProvider` is a model whose replies a
function of the request writes, `TestModel` a model that calls every tool it is offered
with schema-valid arguments and then answers, and `replay_provider(export)` a model that
answers with a recorded session's replies and fails on the first request that differs.
"""

from __future__ import annotations

from ._scripted import ScriptedProvider, tool_call
from ._testmodel import TestModel
from .storage import MemoryStorage
from .trace import ReplayDiverged, ReplayProvider, replay_provider

__all__ = [
    "FixedClock",
    "MemoryStorage",
    "ReplayDiverged",
    "ReplayProvider",
    "ScriptedProvider",
    "SequentialIds",
    "TestModel",
    "replay_provider",
    "tool_call",
]


class FixedClock:
    """A clock that starts at ``start_ms`` and advances ``step_ms`` on every reading."""

    def __init__(self, start_ms: int = 1_700_000_000_000, step_ms: int = 1) -> None:
        self._next = start_ms
        self._step = step_ms

    def now_ms(self) -> int:
        now = self._next
        self._next += self._step
        return now


class SequentialIds:
    """Ids ``<prefix>-1``, ``<prefix>-2``... with one counter per prefix."""

    def __init__(self) -> None:
        self._counters: dict[str, int] = {}

    def new_id(self, prefix: str) -> str:
        count = self._counters.get(prefix, 0) + 1
        self._counters[prefix] = count
        return f"{prefix}-{count}"
