"""`TestModel`: a model that calls every tool it is offered, then answers (for your tests).

Like pydantic-ai's TestModel: with no script to write, a run on it exercises each tool's
wiring end to end (its schema, the argument check, the function, the result's way back).
On a turn's first call it calls every tool offered (or those named in ``call_tools``) with
the smallest arguments their JSON Schema accepts (``_schema_values.py``); once the results
are back it answers with a JSON object of them by tool name, e.g. ``{"add":3}``. A call
with nothing to call answers ``text``. A structured-output call (``response_format``) gets
the smallest value of its schema.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from ._base import ConfigError
from ._schema_values import SchemaValueError, minimal_value
from ._scripted import Answer, ScriptedProvider
from .chat import ChatMessage, ModelReply, ModelRequest, ToolCallRequest, ToolSpec

__all__ = ["TestModel"]


class TestModel(ScriptedProvider):
    """A provider that calls the tools it is offered with schema-valid arguments, then
    answers naming their results; ``requests`` keeps every request, as for the
    `ScriptedProvider` it is."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    def __init__(
        self,
        *,
        call_tools: Sequence[str] | Literal["all"] = "all",
        text: str = "success (no tool calls)",
        extraction: bool = False,
        chars_per_token: int = 4,
    ) -> None:
        """
        Args:
            call_tools: which offered tools to call: ``"all"``, or their names.
            text: the answer when there is no tool to call.
            extraction: whether ``memory_extraction="auto"`` sends it the runtime's
                extraction calls (answered with the smallest valid JSON).
            chars_per_token: how it counts the usage it reports.

        Raises:
            ConfigError: ``call_tools`` is neither ``"all"`` nor a list of names.
        """
        if call_tools != "all" and (
            isinstance(call_tools, str) or not all(isinstance(n, str) for n in call_tools)
        ):
            raise ConfigError(f"call_tools must be 'all' or a list of names, got {call_tools!r}")
        super().__init__(self._answer, chars_per_token=chars_per_token, extraction=extraction)
        self._call_tools = call_tools if call_tools == "all" else frozenset(call_tools)
        self._text = text
        self._calls = 0

    def _answer(self, request: ModelRequest) -> Answer:
        if request.response_format is not None:
            schema = request.response_format.get("json_schema", {}).get("schema", {})
            return json.dumps(self._value(schema, "the response format"))
        if request.messages and request.messages[-1].role == "tool":
            return _results(request.messages)
        tools = [spec for spec in request.tools if self._wanted(spec)]
        if not tools:
            return self._text
        return ModelReply(tool_calls=tuple(self._call(spec) for spec in tools))

    def _wanted(self, spec: ToolSpec) -> bool:
        return self._call_tools == "all" or spec.name in self._call_tools

    def _call(self, spec: ToolSpec) -> ToolCallRequest:
        self._calls += 1
        arguments = self._value(spec.parameters, f"tool {spec.name!r}")
        return ToolCallRequest(
            id=f"test-call-{self._calls}", name=spec.name, arguments=json.dumps(arguments)
        )

    def _value(self, schema: dict[str, Any], what: str) -> Any:
        try:
            return minimal_value(schema)
        except SchemaValueError as error:
            raise ConfigError(f"TestModel cannot make a value for {what}: {error}") from None


def _results(messages: Sequence[ChatMessage]) -> str:
    # The tool results since the model's last call, by tool name.
    results: dict[str, Any] = {}
    for message in reversed(messages):
        if message.role != "tool":
            break
        results[message.name or message.tool_call_id or "tool"] = _data(message.content or "")
    ordered = dict(reversed(results.items()))
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))


def _data(text: str) -> Any:
    # A result that is JSON is shown as the data it is, not as a string of it.
    try:
        return json.loads(text)
    except ValueError:
        return text
