"""`ScriptedProvider`: a real `Provider` whose replies a function writes (for your tests).

Like pydantic-ai's FunctionModel: ``ScriptedProvider(lambda request: "hello")``. The function
gets each `ModelRequest` and returns the reply: text, a `ModelReply` (tool calls and all), or
the stream events themselves; it may be async, and may raise a `ProviderError` to fail the
call. Text streams in word-sized deltas, tool calls in two pieces each, then one `Finish`
with a usage the provider counts (about four characters a token), so a run sees what a real
provider would send.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from .chat import (
    Finish,
    ModelReply,
    ModelRequest,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)

__all__ = ["Script", "ScriptedProvider", "tool_call"]

Answer = str | ModelReply | Sequence[StreamEvent]
Script = Callable[[ModelRequest], Answer | Awaitable[Answer]]
_WORD = re.compile(r"\S+\s*|\s+")


def tool_call(
    name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None
) -> ToolCallRequest:
    """A tool call for a scripted reply, e.g. ``tool_call("add", {"a": 1})``."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return ToolCallRequest(id=id or f"call-{name}", name=name, arguments=text)


class ScriptedProvider:
    """A provider that answers with what ``script(request)`` returns; ``requests`` keeps
    every request it was sent, in order.

    The runtime's own calls (the memory extraction after an answer) reach the script only
    when asked: with ``extraction=True``, or a runtime made with
    ``memory_extraction="model"``. Otherwise ``"auto"`` extracts by the rules, and the
    script sees the turn's calls alone.
    """

    def __init__(
        self, script: Script, *, chars_per_token: int = 4, extraction: bool = False
    ) -> None:
        self._script = script
        self._chars = chars_per_token
        self.answers_extraction = extraction
        """Whether ``memory_extraction="auto"`` sends this provider the extraction call."""
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        scripted = self._script(request)
        answer: Answer = await scripted if inspect.isawaitable(scripted) else scripted
        if isinstance(answer, str):
            answer = ModelReply(text=answer)
        if isinstance(answer, ModelReply):
            for event in self._events(request, answer):
                yield event
            return
        for event in answer:
            yield event

    def _events(self, request: ModelRequest, reply: ModelReply) -> list[StreamEvent]:
        events: list[StreamEvent] = [TextDelta(text=piece) for piece in _WORD.findall(reply.text)]
        for index, call in enumerate(reply.tool_calls):
            half = len(call.arguments) // 2
            events.append(
                ToolCallDelta(
                    index=index, id=call.id, name=call.name, arguments=call.arguments[:half]
                )
            )
            events.append(ToolCallDelta(index=index, arguments=call.arguments[half:]))
        usage = reply.usage or Usage(
            prompt_tokens=self._tokens(json.dumps([m.to_wire() for m in request.messages])),
            completion_tokens=self._tokens(
                reply.text + "".join(c.arguments for c in reply.tool_calls)
            ),
        )
        reason = reply.finish_reason if not reply.tool_calls else "tool_calls"
        events.append(Finish(reason=reason, usage=usage))
        return events

    def _tokens(self, text: str) -> int:
        return -(-len(text) // self._chars)
