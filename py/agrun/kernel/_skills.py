"""Skills: what a skill is, the registry that holds them, and how one is chosen.

A skill is any object with a ``name``, a ``description`` and a ``run(input, context,
helpers)`` that returns the output or an awaitable of it (a coroutine, a task, a
JavaScript promise). It may also have:

- ``applies(input) -> bool``: a deterministic, synchronous matcher saying the skill fits;
- ``timeout_s``: seconds its ``run`` may take, overriding the runtime's ``skill_timeout_s``;
- ``input_model`` (a pydantic model) or ``parameters`` (a JSON Schema): the arguments it
  takes when a model calls it as a tool (``kernel/_tools.py``).

Selection rule (the decide phase), first that holds wins:

1. a later cycle continues with the skill that asked for it;
2. the skill the caller named (``run(input, skill=...)``);
3. the first skill, in registration order, whose ``applies`` returns True;
4. the default skill.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel

from .._base import ConfigError, DuplicateSkillError, UnknownSkillError, is_positive_number
from ._memory_commands import MEMORY_COMMANDS, Gate, MemoryCommands

if TYPE_CHECKING:
    from ._skill_view import SkillContext, SkillHelpers

__all__ = ["EchoSkill", "FunctionSkill", "MatcherFailed", "Skill", "SkillRegistry"]


@runtime_checkable
class Skill(Protocol):
    """What the runtime needs from a skill (``applies`` and ``timeout_s`` are optional)."""

    name: str
    description: str

    def run(self, input: str, context: SkillContext, helpers: SkillHelpers) -> Awaitable[Any] | Any:
        """Do the work for ``input``; return (or resolve to) plain JSON-able output."""
        ...


RunFunction = Callable[[str, "SkillContext", "SkillHelpers"], Awaitable[Any] | Any]


@dataclass(frozen=True, slots=True)
class FunctionSkill:
    """A skill made of functions: ``FunctionSkill("greet", greet, applies=...)``."""

    name: str
    run: RunFunction
    description: str = ""
    applies: Callable[[str], bool] | None = None
    timeout_s: float | None = None
    input_model: type[BaseModel] | None = None
    """As a model's tool: a pydantic model of its arguments (their JSON Schema is what the
    model is offered; the checked instance is ``context.arguments``)."""
    parameters: dict[str, Any] | None = None
    """As a model's tool: a JSON Schema of its arguments, when there is no input model."""


class EchoSkill:
    """The built-in default skill: answers ``echo: <input>``."""

    name = "echo"
    description = "Replies with the input, prefixed by 'echo: '."

    async def run(self, input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        return f"echo: {input}"


class MatcherFailed(Exception):
    """A skill's ``applies`` raised or returned something other than a bool (internal)."""

    def __init__(self, skill: str, problem: str) -> None:
        self.skill = skill
        super().__init__(f"skill {skill!r} matcher {problem}")


class SkillRegistry:
    """The runtime's skills by name, fixed when the runtime is created."""

    def __init__(
        self,
        skills: Iterable[Any],
        default: Any,
        *,
        memory_commands: bool = True,
        gate: Gate | None = None,
    ) -> None:
        """Check and register ``skills`` and the ``default`` (a skill, a name, or None for echo).

        With ``memory_commands``, the built-in memory commands ("remember: ...", "what do
        you remember", "forget ...") answer their inputs first (a host skill of the same
        name replaces them); they are not among `names` and never offered as tools. ``gate``
        is the write gate they ask before remembering (the runtime's sensitivity check).

        Raises:
            ConfigError: a skill is malformed or ``default`` names no skill.
            DuplicateSkillError: two skills share a name.
        """
        if isinstance(skills, (str, bytes)) or not isinstance(skills, Iterable):
            raise ConfigError(f"skills must be a list of skills, got {type(skills).__name__}")
        self._skills: dict[str, Any] = {}
        for index, skill in enumerate(skills):
            self._add(check_skill(skill, f"skills[{index}]"))
        # The built-in echo is a fallback for skill runs, never a tool a model is offered.
        self._implicit: str | None = None
        if default is None:
            default = EchoSkill()
            self._implicit = default.name if default.name not in self._skills else None
        self._commands: dict[str, Any] = {}
        if memory_commands and MEMORY_COMMANDS not in self._skills:
            self._commands[MEMORY_COMMANDS] = MemoryCommands(gate)
        if isinstance(default, str):
            self.get(default)
            self._default = default
        else:
            skill = check_skill(default, "default_skill")
            if self._skills.get(skill.name) is not skill:
                self._add(skill)
            self._default = skill.name

    def add(self, skill: Any) -> None:
        """Register one more skill after the runtime was made (``runtime.tool``); a model
        is offered it from its next call on.

        Raises:
            ConfigError: the skill is malformed.
            DuplicateSkillError: a skill of that name is registered.
        """
        self._add(check_skill(skill, "tool"))
        # As at creation: a host skill of a built-in command's name replaces the command.
        self._commands.pop(skill.name, None)

    def _add(self, skill: Any) -> None:
        if skill.name in self._skills:
            raise DuplicateSkillError(skill.name)
        self._skills[skill.name] = skill

    @property
    def names(self) -> tuple[str, ...]:
        """Every skill name, in registration order (the default last unless listed)."""
        return tuple(self._skills)

    def command_for(self, input: str) -> str | None:
        """The built-in command that answers ``input`` ("remember: ..."), if any."""
        for name, command in self._commands.items():
            if command.applies(input):
                return name
        return None

    @property
    def tools(self) -> tuple[str, ...]:
        """The skills a model is offered as tools: every registered one but the built-in
        fallback."""
        return tuple(name for name in self._skills if name != self._implicit)

    @property
    def default(self) -> str:
        """The default skill's name."""
        return self._default

    def get(self, name: str) -> Any:
        """The skill called ``name``.

        Raises:
            UnknownSkillError: no such skill; the message lists the known ones.
        """
        found = self._skills.get(name) or self._commands.get(name)
        if found is None:
            raise UnknownSkillError(name, self.names)
        return found

    def candidates(self, input: str) -> tuple[str, ...]:
        """Names of the skills whose matcher applies to ``input``, in registration order.

        Raises:
            MatcherFailed: a matcher raised or did not return a bool.
        """
        found = []
        for name, skill in self._skills.items():
            applies = getattr(skill, "applies", None)
            if applies is None:
                continue
            try:
                verdict = applies(input)
            except Exception as exc:
                raise MatcherFailed(name, f"raised {type(exc).__name__}: {exc}") from exc
            if not isinstance(verdict, bool):
                raise MatcherFailed(name, f"returned {type(verdict).__name__}, not a bool")
            if verdict:
                found.append(name)
        return tuple(found)


def check_skill(skill: Any, where: str) -> Any:
    """Return ``skill`` if it has what a skill needs.

    Raises:
        ConfigError: naming ``where`` and the missing or bad attribute.
    """
    name = getattr(skill, "name", None)
    if not isinstance(name, str) or not name or name != name.strip():
        raise ConfigError(f"{where}.name must be a non-empty string without edge spaces: {name!r}")
    if not isinstance(getattr(skill, "description", None), str):
        raise ConfigError(f"{where} ({name!r}) needs a string description")
    if not callable(getattr(skill, "run", None)):
        raise ConfigError(f"{where} ({name!r}) needs a callable run(input, context, helpers)")
    applies = getattr(skill, "applies", None)
    if applies is not None and not callable(applies):
        raise ConfigError(f"{where} ({name!r}).applies must be callable or None")
    timeout = getattr(skill, "timeout_s", None)
    if timeout is not None and not is_positive_number(timeout):
        raise ConfigError(f"{where} ({name!r}).timeout_s must be a positive number: {timeout!r}")
    return skill
