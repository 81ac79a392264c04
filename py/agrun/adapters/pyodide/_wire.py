"""The JSON envelope every answer to JavaScript travels in: ``{"ok": ..., ...}``."""

from __future__ import annotations

import json
from typing import Any

from ..._base import AgrunError, ConfigError

__all__ = ["error_json", "error_to_wire", "ok_json"]


def error_to_wire(error: BaseException) -> dict[str, Any]:
    """The plain-data form of an error, for the JS side to rebuild as a typed error."""
    if isinstance(error, AgrunError):
        return {
            "type": type(error).__name__,
            "code": error.code,
            "message": str(error),
            # The caller's fault (bad options or input) becomes an AgrunConfigError in JS.
            "callersFault": isinstance(error, ConfigError),
        }
    return {
        "type": type(error).__name__,
        "code": "internal_error",
        "message": f"agrun failed unexpectedly: {type(error).__name__}: {error}",
    }


def ok_json(result: Any) -> str:
    return json.dumps({"ok": True, "result": result}, allow_nan=False)


def error_json(error: BaseException) -> str:
    return json.dumps({"ok": False, "error": error_to_wire(error)})
