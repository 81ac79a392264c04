"""agrun's error tree, split by whose fault it is.

    AgrunError
    ├── ConfigError                 the caller's: bad options, bad input, unknown names
    │   ├── InputError              run() was given an input it cannot take
    │   ├── UnknownSkillError       a skill name that no registered skill has
    │   ├── DuplicateSkillError     two skills with one name
    │   ├── MemoryEntryError        a skill asked to append a malformed memory entry
    │   └── ReentrantCallError      a skill called its own runtime (run, import, export)
    ├── OutputNotSerializableError  a skill's output cannot cross into JavaScript
    ├── ReadOnlyError               a change to what only the runtime may change
    ├── HelpersClosedError          a skill used its helpers after its turn was over
    ├── TransitionError             a move the transitions table forbids (a kernel bug)
    └── StorageError                the outside world's: persistence failed

A skill's own failure (it raised, timed out, returned output that cannot cross into
JavaScript) is not raised to the caller: it is a named outcome, a `RunError` inside the
`RunResult` of a failed run. Every message names the bad value and says what to do instead.
"""

from __future__ import annotations

__all__ = [
    "AgrunError",
    "ConfigError",
    "DuplicateSkillError",
    "HelpersClosedError",
    "InputError",
    "MemoryEntryError",
    "OutputNotSerializableError",
    "ReadOnlyError",
    "ReentrantCallError",
    "StorageError",
    "TransitionError",
    "UnknownSkillError",
]


class AgrunError(Exception):
    """Base of every error agrun raises on purpose."""

    code: str = "agrun_error"


class ConfigError(AgrunError, ValueError):
    """The caller passed an option or value agrun cannot use."""

    code = "config_error"


class InputError(ConfigError, TypeError):
    """``run()`` was given an input it cannot take."""

    code = "invalid_input"


class UnknownSkillError(ConfigError, LookupError):
    """A skill was asked for by a name no registered skill has."""

    code = "unknown_skill"

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        self.name = name
        self.known = known
        listed = ", ".join(repr(k) for k in known) or "none"
        super().__init__(f"no skill named {name!r}; registered skills: {listed}")


class DuplicateSkillError(ConfigError):
    """Two skills were registered under one name."""

    code = "duplicate_skill"

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"two skills are named {name!r}: give each skill a unique name")


class MemoryEntryError(ConfigError):
    """A requested memory entry is malformed; ``field`` names the offending field."""

    code = "invalid_memory_entry"

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"memory entry field {field!r}: {problem}")


class ReentrantCallError(ConfigError):
    """A skill called back into the runtime that is running it (``run``, ``open``,
    ``import_session``, ``export_session``): that call would wait for its own run to end."""

    code = "reentrant_call"

    def __init__(self, method: str) -> None:
        self.method = method
        super().__init__(
            f"{method}() was called from inside a skill of the same runtime, which would wait "
            "for its own run to end; return output (or use helpers.request_cycle()) instead"
        )


class OutputNotSerializableError(AgrunError, TypeError):
    """A skill's output cannot cross into JavaScript as plain data.

    The kernel finds this itself for Python output; a bridge that converts a foreign
    skill's output raises it from the skill's ``run``, and the run then fails with the
    code ``output_not_serializable`` and this error's message.
    """

    code = "output_not_serializable"


class ReadOnlyError(AgrunError, AttributeError):
    """An attempt to change state the runtime owns (run state, memory entries, results)."""

    code = "read_only"


class HelpersClosedError(AgrunError, RuntimeError):
    """A skill called its helpers after its ``run`` had returned."""

    code = "helpers_closed"


class TransitionError(AgrunError, RuntimeError):
    """The kernel tried a move its transitions table forbids. Always a bug in agrun."""

    code = "illegal_transition"

    def __init__(self, state: str, event: str) -> None:
        self.state = state
        self.event = event
        super().__init__(f"illegal transition: event {event!r} in state {state!r}")


class StorageError(AgrunError):
    """Persistence failed in the outside world (disk, IndexedDB, quota)."""

    code = "storage_error"
