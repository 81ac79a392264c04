"""agrun: a pure-Python agent runtime for web pages (Pyodide) and CPython."""

from ._errors import AgrunError, ConfigError, InputError
from ._models import RunResult, RunState
from ._ports import Clock, Ids
from ._runtime import Runtime, create_runtime

__all__ = [
    "AgrunError",
    "Clock",
    "ConfigError",
    "Ids",
    "InputError",
    "RunResult",
    "RunState",
    "Runtime",
    "create_runtime",
]
__version__ = "0.1.0"
