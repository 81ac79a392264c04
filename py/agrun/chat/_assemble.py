"""Adding streamed events up into a `ModelReply` (a pure fold, one event at a time)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._errors import ProviderProtocolError, ProviderStreamCut
from ._messages import ToolCallRequest
from ._stream import Finish, ModelReply, StreamEvent, TextDelta, ToolCallDelta

__all__ = ["ReplyBuilder"]


@dataclass
class _Call:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


class ReplyBuilder:
    """Takes a stream's events in order (`add`) and gives the whole reply (`reply`)."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _Call] = {}
        self._finish: Finish | None = None

    @property
    def text(self) -> str:
        """The text so far (what a cut stream leaves)."""
        return "".join(self._text)

    def add(self, event: StreamEvent) -> None:
        """Take the next event.

        Raises:
            ProviderProtocolError: an event after the finish, or a tool call renamed.
        """
        if self._finish is not None:
            raise ProviderProtocolError(f"the provider sent a {event.kind} event after its finish")
        match event:
            case TextDelta():
                self._text.append(event.text)
            case ToolCallDelta():
                call = self._calls.setdefault(event.index, _Call())
                if event.id:
                    call.id = call.id or event.id
                if event.name:
                    if call.name and call.name != event.name:
                        raise ProviderProtocolError(
                            f"tool call {event.index} was named {call.name!r}, then {event.name!r}"
                        )
                    call.name = event.name
                call.arguments.append(event.arguments)
            case Finish():
                self._finish = event

    def reply(self, *, call_id: str = "call") -> ModelReply:
        """The whole reply; a tool call without an id gets ``<call_id>-<index>``.

        Raises:
            ProviderStreamCut: the stream never finished.
            ProviderProtocolError: a tool call never got a name.
        """
        if self._finish is None:
            raise ProviderStreamCut(
                "the model's stream ended before it finished", partial_text=self.text
            )
        calls = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if not call.name:
                raise ProviderProtocolError(f"the provider sent tool call {index} without a name")
            arguments = "".join(call.arguments).strip() or "{}"
            calls.append(
                ToolCallRequest(
                    id=call.id or f"{call_id}-{index}", name=call.name, arguments=arguments
                )
            )
        reason = self._finish.reason
        if calls and reason == "stop":
            reason = "tool_calls"  # some servers say stop after tool calls: the calls win
        return ModelReply(
            text=self.text, tool_calls=tuple(calls), finish_reason=reason, usage=self._finish.usage
        )
