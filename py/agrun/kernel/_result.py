"""What ``run()`` returns: the skill's output beside the run's final state and trace."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import PlainSerializer

from .._base import AgrunError, Model, thaw
from ..context import Message
from ._events import RuntimeEvent
from ._models import RunError, RunState, Step

__all__ = ["RunFailedError", "RunResult", "UsageLimitExceeded"]


class RunFailedError(AgrunError):
    """A run that did not succeed, raised by `RunResult.raise_for_status` for a caller who
    wants an exception rather than a status to check.

    ``code`` is the run's error code (``provider_unavailable``, ``cancelled``, ...), so one
    ``except RunFailedError as e: if e.code == ...`` branches like the result would; ``result``
    is the whole `RunResult` (its steps and events say what happened).
    """

    def __init__(self, result: RunResult) -> None:
        error = result.error
        self.result = result
        self.status = result.state.status
        self.code = error.code if error is not None else "agrun_error"
        what = error.message if error is not None else "no error was recorded"
        super().__init__(f"the run {self.status} ({self.code}): {what}")


class UsageLimitExceeded(RunFailedError):
    """A run stopped by its `UsageLimits` (code ``usage_limit_exceeded``): what
    `RunResult.raise_for_status` raises for it, so ``except UsageLimitExceeded`` reads as it
    does with pydantic-ai."""


class RunResult(Model):
    """The outcome of one ``run()``: output, final state, steps trace and events.

    The skill's output lives here and only here (`RunState` has no output field).
    """

    # Frozen values a skill may return (e.g. a memory entry's data) go out as plain JSON.
    output: Annotated[Any, PlainSerializer(thaw)]
    """What the selected skill returned in the last cycle; None if the run did not succeed."""
    state: RunState
    """The run's final state (status succeeded, failed or cancelled)."""
    steps: tuple[Step, ...]
    """Everything the runtime did, in order."""
    error: RunError | None = None
    """Why the run failed or was cancelled; None on success."""
    events: tuple[RuntimeEvent, ...] = ()
    """Every event the run emitted, in order (what a store persists for this turn)."""
    messages: tuple[Message, ...] = ()
    """What the turn added to the session's history, in order: the person's message, the
    model's tool calls, their results and the library's frames, and the reply. Empty unless
    the run succeeded (a failed turn leaves the history as it was)."""

    @property
    def ok(self) -> bool:
        """Whether the run succeeded."""
        return self.state.status == "succeeded"

    def raise_for_status(self) -> RunResult:
        """This result if the run succeeded; else raise `RunFailedError` carrying it.

        A failed run is a result, not an exception (the person's words are kept, and the
        result says why), as httpx's responses are; this is the one-line way to turn it
        into one: ``output = (await rt.run(text)).raise_for_status().output``.
        """
        if not self.ok:
            limited = self.error is not None and self.error.code == "usage_limit_exceeded"
            raise (UsageLimitExceeded if limited else RunFailedError)(self)
        return self
