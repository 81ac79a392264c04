"""agrun's error tree, split by whose fault it is.

    AgrunError
    ├── ConfigError          the caller's: bad options, bad input, unknown names
    │   └── InputError       run() was given an input it cannot take
    └── StorageError         the outside world's: persistence failed

Every message names the bad value and says what to do instead.
"""

from __future__ import annotations

__all__ = ["AgrunError", "ConfigError", "InputError"]


class AgrunError(Exception):
    """Base of every error agrun raises on purpose."""

    code: str = "agrun_error"


class ConfigError(AgrunError, ValueError):
    """The caller passed an option or value agrun cannot use."""

    code = "config_error"


class InputError(ConfigError, TypeError):
    """``run()`` was given an input it cannot take."""

    code = "invalid_input"
