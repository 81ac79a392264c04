"""The skill's view of a run: what it may read (`SkillContext`) and ask for (`SkillHelpers`).

Two separate views (spec 000, "Cross-Run Cooperation"): ``context.state`` is what is
happening now, ``context.memory`` is what was kept from earlier runs. Both are read-only.
A skill changes nothing directly; it returns output and asks through its helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._base import ConfigError, HelpersClosedError, ReadOnlyError
from ._memory import MemoryEntryRequest, MemoryView, parse_request
from ._models import RunState

__all__ = ["SkillContext", "SkillHelpers"]


class SkillContext:
    """Read-only: the current run's state and the runtime's memory."""

    __slots__ = ("_arguments", "_memory", "_read_state")
    _read_state: Callable[[], RunState]
    _memory: MemoryView
    _arguments: Any

    def __init__(
        self, read_state: Callable[[], RunState], memory: MemoryView, arguments: Any = None
    ) -> None:
        object.__setattr__(self, "_read_state", read_state)
        object.__setattr__(self, "_memory", memory)
        object.__setattr__(self, "_arguments", arguments)

    def __setattr__(self, name: str, value: Any) -> None:
        raise ReadOnlyError(f"SkillContext.{name} is read-only: the runtime owns run state")

    @property
    def state(self) -> RunState:
        """The run's state right now (phase is ``act`` while the skill runs); frozen."""
        return self._read_state()

    @property
    def memory(self) -> MemoryView:
        """What earlier runs retained: ``context.memory.read_all()``."""
        return self._memory

    @property
    def arguments(self) -> Any:
        """When a model called this skill as a tool: its checked arguments (an instance of
        the skill's ``input_model``, or the plain dict); None when it runs as a skill."""
        return self._arguments


class SkillHelpers:
    """What a skill may ask of the runtime during one cycle; closed when its run returns."""

    __slots__ = ("_closed", "_cycle_request", "_requests", "_skill")

    def __init__(self, skill: str) -> None:
        self._skill = skill
        self._requests: list[MemoryEntryRequest] = []
        self._cycle_request: str | None = None
        self._closed = False

    def append_memory(self, entry: Any) -> MemoryEntryRequest:
        """Ask the runtime to remember ``entry`` if this run succeeds.

        Args:
            entry: a dict with ``text`` and optional ``kind`` (default ``"note"``) and
                ``data`` (a JSON object), or a `MemoryEntryRequest`.

        Returns:
            The checked request, as the runtime will append it.

        Raises:
            MemoryEntryError: the entry is malformed; ``error.field`` names the bad field.
            HelpersClosedError: the skill's run has already returned.
        """
        self._check_open("append_memory")
        request = parse_request(entry)
        self._requests.append(request)
        return request

    def request_cycle(self, reason: str = "") -> None:
        """Ask for another OODAE cycle after this one, with the same skill.

        The runtime derives this cycle's observation, then observes, orients, decides and
        acts again (the skill sees the observation in ``context.state.observation``).
        Runs are bounded by ``max_cycles``: asking past it fails the run ``cycle_limit``.

        Raises:
            ConfigError: ``reason`` is not a string.
            HelpersClosedError: the skill's run has already returned.
        """
        self._check_open("request_cycle")
        if not isinstance(reason, str):
            raise ConfigError(f"request_cycle(reason) takes a string, got {type(reason).__name__}")
        self._cycle_request = reason

    def _check_open(self, method: str) -> None:
        if self._closed:
            raise HelpersClosedError(
                f"helpers.{method}() was called after skill {self._skill!r} returned; "
                "call helpers only while your run is in progress"
            )

    def _close(self) -> tuple[tuple[MemoryEntryRequest, ...], str | None]:
        # The runtime takes what was asked for and shuts the door on later calls.
        self._closed = True
        return tuple(self._requests), self._cycle_request
