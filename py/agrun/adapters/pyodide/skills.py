"""JavaScript skills, seen by the kernel as ordinary skills.

A page's skill runs in JavaScript; the kernel awaits it like any other. What crosses is
JSON text: the skill's view (input, run state, memory) goes out, its output comes back.
The two helper callbacks are proxies that live exactly as long as one call of the skill,
and are destroyed when it ends, however it ends.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pyodide.ffi import JsProxy

from ..._base import AgrunError, OutputNotSerializableError
from ...kernel import SkillContext, SkillHelpers
from ._proxies import lent_proxies
from ._wire import error_json, ok_json

__all__ = ["JavaScriptError", "JsSkill", "js_skills"]


class JavaScriptError(Exception):
    """What a JavaScript skill threw, described (it may not be an Error at all)."""


class JsSkill:
    """One skill of the page, run through the page's host object."""

    def __init__(self, host: JsProxy, index: int, descriptor: dict[str, Any]) -> None:
        self.name: str = descriptor["name"]
        self.description: str = descriptor["description"]
        self._host = host
        self._index = index
        if descriptor["hasApplies"]:
            self.applies = self._applies
        if descriptor.get("parameters") is not None:
            # The JSON Schema of its arguments when a model calls it as a tool.
            self.parameters: dict[str, Any] = descriptor["parameters"]

    def _applies(self, input: str) -> bool:
        return bool(self._host.applies(self._index, input))

    async def run(self, input: str, context: SkillContext, helpers: SkillHelpers) -> Any:
        payload = json.dumps(
            {"input": input, "state": context.state.to_wire(), "arguments": context.arguments}
        )
        # The skill's one way back into Python (``helper(name, argument_json)``) lives
        # exactly as long as this call.
        helpers_by_name: dict[str, Any] = {
            "readMemory": lambda _: [e.to_wire() for e in context.memory.read_all()],
            "readContent": context.content,
            "appendMemory": helpers.append_memory,
            "requestCycle": helpers.request_cycle,
            "noteSources": lambda args: helpers.note_sources(
                args["candidates"], args.get("selected")
            ),
            "noteSearch": helpers.note_search,
            "noteRead": helpers.note_read,
            "askClarification": lambda args: helpers.ask_clarification(**_clarification(args)),
        }

        def helper(name: str, argument_json: str) -> str:
            return _answer(helpers_by_name[name], argument_json)

        with lent_proxies(helper) as (call_helper,):
            call = self._host.callSkill(self._index, payload, call_helper)
            try:
                reply = json.loads(await call.promise)
            except asyncio.CancelledError:
                call.abort("agrun cancelled this skill")
                raise
        if reply["ok"]:
            return reply["output"]
        if "raised" in reply:
            raise JavaScriptError(reply["raised"])
        raise OutputNotSerializableError(f"skill {self.name!r} returned {reply['problem']}")


def _answer(helper: Any, argument_json: str) -> str:
    # A helper's typed error crosses back as data; the JS side throws it as an AgrunError.
    try:
        result = helper(json.loads(argument_json))
    except AgrunError as error:
        return error_json(error)
    return ok_json(result.to_wire() if hasattr(result, "to_wire") else result)


def _clarification(args: dict[str, Any]) -> dict[str, Any]:
    names = {"directTool": "direct_tool"}
    return {names.get(key, key): value for key, value in args.items()}


def js_skills(host: JsProxy, descriptors: list[dict[str, Any]]) -> list[JsSkill]:
    """The page's skills, in the order the page listed them."""
    return [JsSkill(host, index, descriptor) for index, descriptor in enumerate(descriptors)]
