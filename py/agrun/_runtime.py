"""The runtime: the one object a host creates and calls ``run()`` on."""

from __future__ import annotations

from ._errors import InputError
from ._models import RunResult, RunState
from ._ports import Clock, Ids
from .adapters.system import SystemClock, UuidIds

__all__ = ["Runtime", "create_runtime"]


class Runtime:
    """Runs skills for a host. Create it with `create_runtime`."""

    def __init__(self, *, clock: Clock, ids: Ids) -> None:
        self._clock = clock
        self._ids = ids

    async def run(self, input: str) -> RunResult:
        """Run the built-in echo skill on ``input``.

        Raises:
            InputError: ``input`` is not a string.
        """
        if not isinstance(input, str):
            raise InputError(f"run() takes a string input, got {type(input).__name__}: pass text")
        state = RunState(
            run_id=self._ids.new_id("run"), status="succeeded", step_count=1, selected_skill="echo"
        )
        return RunResult(output=f"echo: {input}", state=state)


def create_runtime(*, clock: Clock | None = None, ids: Ids | None = None) -> Runtime:
    """Create a runtime. Real time and ids unless the caller passes fixed ones."""
    return Runtime(clock=clock or SystemClock(), ids=ids or UuidIds())
