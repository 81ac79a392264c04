"""What web/agrun.js calls: a runtime whose every answer crosses into JavaScript as JSON.

JSON text is the only thing that crosses, in both directions, so no Python proxy ever
leaks into a page and no JavaScript object is kept alive by Python. Errors cross as data
(``{"ok": false, "error": {...}}``) and the JS side rebuilds them as typed errors.
"""

from __future__ import annotations

import json
from typing import Any

from ..._errors import AgrunError
from ..._runtime import Runtime, create_runtime

__all__ = ["RuntimeBridge", "create_bridge", "error_to_wire"]


def error_to_wire(error: BaseException) -> dict[str, Any]:
    """The plain-data form of an error, for the JS side to rebuild."""
    if isinstance(error, AgrunError):
        return {"type": type(error).__name__, "code": error.code, "message": str(error)}
    return {
        "type": type(error).__name__,
        "code": "internal_error",
        "message": f"agrun failed unexpectedly: {type(error).__name__}: {error}",
    }


def _ok(result: Any) -> str:
    return json.dumps({"ok": True, "result": result}, allow_nan=False)


def _failed(error: BaseException) -> str:
    return json.dumps({"ok": False, "error": error_to_wire(error)})


class RuntimeBridge:
    """A `Runtime` seen from JavaScript: JSON in, JSON out."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    async def run(self, input: str) -> str:
        try:
            result = await self._runtime.run(input)
        except Exception as error:
            return _failed(error)
        return _ok(result.to_wire())


def create_bridge(config_json: str) -> RuntimeBridge:
    """Create a runtime for a page from its JSON config."""
    json.loads(config_json)
    return RuntimeBridge(create_runtime())
