"""What a model call streams back, as typed, tagged events, and the reply they add up to.

A provider yields `TextDelta`, `ToolCallDelta` and, last, one `Finish`; `assemble` (a pure
fold) turns them into a `ModelReply`. Tool calls arrive in pieces keyed by ``index``: the
first piece names the call (id, name), later ones append to its JSON arguments.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .._base import Model
from ._messages import ToolCallRequest

__all__ = [
    "Finish",
    "FinishReason",
    "ModelReply",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "Usage",
]

FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "other"]


class Usage(Model):
    """Tokens a call cost, as the provider counted them."""

    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class TextDelta(Model):
    """More of the reply's text."""

    kind: Literal["text"] = "text"
    text: str


class ToolCallDelta(Model):
    """A piece of one tool call (``index`` says which)."""

    kind: Literal["tool_call"] = "tool_call"
    index: int = Field(ge=0)
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    """More of the arguments' JSON text."""


class Finish(Model):
    """The end of the stream: why the model stopped, and what it cost."""

    kind: Literal["finish"] = "finish"
    reason: FinishReason
    usage: Usage | None = None


StreamEvent = Annotated[TextDelta | ToolCallDelta | Finish, Field(discriminator="kind")]


class ModelReply(Model):
    """A whole model reply: its text, its tool calls, why it stopped, what it cost."""

    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    finish_reason: FinishReason = "stop"
    usage: Usage | None = None
