"""Calling a skill: any awaitable, under a deadline, interruptible by a cancel token.

The skill runs in a task of its own, so the run can stop waiting for it (timeout, token)
without being cancelled itself, and a cancellation of the run's own task reaches the
skill before it goes on up. The outcome is a plain value; the run driver decides what it
means for the run.
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass
from typing import Any, Literal

from .._base import OutputNotSerializableError, find_unstorable
from .._base._cancel import CancelToken
from ._models import ErrorCode

__all__ = ["MAX_OUTPUT_DEPTH", "Invocation", "invoke"]

# How long a cancelled or timed-out skill gets to unwind before the run moves on without it.
GRACE_S = 1.0

# How deep a skill's output may nest. Its body is stored four levels down in an export file
# (session, contentEntries, entry, body), which may nest 64: half that leaves room, and
# what is refused here never reaches the recursive code (redaction, JSON) after it.
MAX_OUTPUT_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Invocation:
    """How one call of a skill's ``run`` ended."""

    outcome: Literal["returned", "raised", "timed_out", "cancelled"]
    output: Any = None
    code: ErrorCode | None = None
    """The run error this outcome means, if it is not a return."""
    problem: str = ""
    """For a person: what went wrong, naming the skill."""


async def invoke(
    skill: Any, args: tuple[Any, ...], *, timeout: float | None, token: CancelToken
) -> Invocation:
    """Call ``skill.run(*args)`` and wait for its output.

    Raises:
        asyncio.CancelledError: the calling task was cancelled; the skill was cancelled
            and given `GRACE_S` to unwind first.
    """
    name = skill.name
    try:
        pending = skill.run(*args)
    except Exception as exc:
        return _raised(name, exc)
    if not inspect.isawaitable(pending):
        return _returned(name, pending)
    task = _start(_resolve(pending))
    if task.done() and not token.cancelled:
        # It finished without waiting on anything: no loop turn, no timer (see `_start`).
        return _ended(name, task)
    token._attach(task)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        await _settle(task)
        raise
    finally:
        token._detach(task)
    if token.cancelled:
        # Cancellation wins even over a skill that finished anyway: nothing is kept.
        await _settle(task)
        return Invocation("cancelled", code="cancelled", problem=token.reason or "cancelled")
    if not done:
        task.cancel()
        await _settle(task)
        problem = f"skill {name!r} did not finish within {timeout} s"
        return Invocation("timed_out", code="skill_timeout", problem=problem)
    return _ended(name, task)


def _start(coro: Any) -> asyncio.Task[Any]:
    # Started eagerly where Python can (3.12+, so in Pyodide): a skill that returns without
    # waiting never costs a turn of the event loop. In a page every turn of Pyodide's loop
    # is a setTimeout, which browsers clamp to 4 ms once nested: that clamp was most of a
    # run's cost there.
    loop = asyncio.get_running_loop()
    try:
        return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg]
    except TypeError:
        return loop.create_task(coro)


def _ended(name: str, task: asyncio.Task[Any]) -> Invocation:
    if task.cancelled():
        return Invocation("raised", code="skill_error", problem=f"skill {name!r} was cancelled")
    exc = task.exception()
    if exc is not None:
        return _raised(name, exc)
    return _returned(name, task.result())


def _returned(name: str, output: Any) -> Invocation:
    # Checked at the door, for a skill the run called and for a model's tool call alike:
    # a lone surrogate has no UTF-8 form and a deep nest overflows the stack, anywhere after.
    problem = find_unstorable(output, max_depth=MAX_OUTPUT_DEPTH)
    if problem is not None:
        problem = f"skill {name!r} returned output that cannot be kept: {problem}"
        return Invocation("raised", code="output_not_serializable", problem=problem)
    return Invocation("returned", output)


def _raised(name: str, exc: BaseException) -> Invocation:
    if isinstance(exc, OutputNotSerializableError):
        return Invocation("raised", code="output_not_serializable", problem=str(exc))
    problem = f"skill {name!r} raised {type(exc).__name__}: {exc}"
    return Invocation("raised", code="skill_error", problem=problem)


async def _resolve(pending: Any) -> Any:
    # Any awaitable (coroutine, future, JavaScript promise) becomes a task this way.
    return await pending


async def _settle(task: asyncio.Future[Any]) -> None:
    # Give a stopped skill a moment to unwind; one that ignores cancellation is left behind.
    await asyncio.wait({task}, timeout=GRACE_S)
    if task.done() and not task.cancelled():
        task.exception()
