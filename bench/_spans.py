"""Where a model turn's time goes: wall-clock spans around agrun's phases, for benchmarks.

    spans = install()          # wraps the methods in TARGETS (for the whole process)
    ...                        # run some turns
    spans.report()             # [(label, calls, total ms, ms per turn)], run() first
    uninstall()

Runs in CPython and, loaded as source text, inside Pyodide (bench/model_overhead.py sends it
to the page). Wall time, awaits included: ``request -> response head`` holds the network and
the server. Diagnostic only: the wrappers cost about a microsecond per call, so a benchmark
measures with them off.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import time
from typing import Any

# (module, class or None for a module function, attribute, label); indented labels are
# parts of the unindented one above them.
TARGETS = [
    ("agrun.kernel._runtime", "Runtime", "run", "run() in Python"),
    ("agrun.kernel._runtime", "Runtime", "_sync_session", "  turn start: session read"),
    ("agrun.kernel._model_run", "ModelRun", "_orient_model", "  orient: pack + render"),
    ("agrun.kernel._runtime", "Runtime", "build_context", "    context build"),
    ("agrun.kernel._model_run", None, "render_messages", "    render messages"),
    ("agrun.kernel._model_run", "ModelRun", "_decide_model", "  decide: the model call"),
    ("agrun.adapters.openai._provider", None, "request_body", "    request body"),
    ("agrun.adapters.openai._provider", None, "encode_body", "    JSON encode"),
    ("agrun.adapters.openai._provider", "OpenAIProvider", "_open", "    request -> response head"),
    ("agrun.memory._continuity", "Continuity", "close_turn", "  close turn: session memory"),
    # Before the answer by default; after it, inside `_keep_after`, with commit_after_answer.
    ("agrun.kernel._runtime", "Runtime", "_commit_turn", "  commit: the turn"),
    ("agrun.kernel._runtime", "Runtime", "_keep_after", "after the answer, until idle()"),
    ("agrun.kernel._runtime", "Runtime", "_keep_trace", "  trace: kept for why()"),
    ("agrun.kernel._keeper", "SessionKeeper", "commit", "  commit: storage (every commit)"),
]

_originals: list[tuple[Any, str, Any]] = []


class Spans:
    """Accumulated wall time per label."""

    def __init__(self) -> None:
        self.total: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def add(self, label: str, seconds: float) -> None:
        self.total[label] = self.total.get(label, 0.0) + seconds
        self.calls[label] = self.calls.get(label, 0) + 1

    def reset(self) -> None:
        self.total.clear()
        self.calls.clear()

    def report(self) -> list[tuple[str, int, float, float]]:
        """``(label, calls, total ms, ms per run() call)`` in TARGETS order."""
        turns = max(1, self.calls.get(TARGETS[0][3], 0))
        return [
            (label, self.calls[label], self.total[label] * 1e3, self.total[label] * 1e3 / turns)
            for *_, label in TARGETS
            if label in self.calls
        ]


def _wrap(original: Any, label: str, spans: Spans) -> Any:
    if inspect.iscoroutinefunction(original):

        @functools.wraps(original)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                spans.add(label, time.perf_counter() - start)

        return timed_async

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spans.add(label, time.perf_counter() - start)

    return timed


def install() -> Spans:
    """Wrap every target that exists here (the provider's only where it is imported)."""
    uninstall()
    spans = Spans()
    for module_name, class_name, attribute, label in TARGETS:
        module = importlib.import_module(module_name)
        owner = getattr(module, class_name) if class_name else module
        original = owner.__dict__[attribute] if class_name else getattr(module, attribute)
        _originals.append((owner, attribute, original))
        setattr(owner, attribute, _wrap(original, label, spans))
    return spans


def uninstall() -> None:
    """Put every wrapped method back."""
    while _originals:
        owner, attribute, original = _originals.pop()
        setattr(owner, attribute, original)
