"""What a model call sends: OpenAI-style chat messages, tool specs and the request.

The runtime renders a context pack into a `ModelRequest`; every provider adapter speaks
this shape (the OpenAI-compatible wire format maps onto it field by field), so a host's own
provider in JavaScript receives ``request.messages`` as plain OpenAI chat messages.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .._base import Model

__all__ = ["ChatMessage", "ChatRole", "ModelRequest", "ToolCallRequest", "ToolSpec"]

ChatRole = Literal["system", "user", "assistant", "tool"]


class ToolCallRequest(Model):
    """One tool call as a model made it (and as the next request replays it)."""

    id: str
    """The call's id; the tool's result answers it (``ChatMessage.tool_call_id``)."""
    name: str
    """The tool's name."""
    arguments: str = "{}"
    """The arguments as the JSON text the model wrote (not yet checked)."""


class ChatMessage(Model):
    """One chat message, OpenAI style."""

    role: ChatRole
    content: str | None = None
    """The text; None for an assistant message that only calls tools."""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    """For assistant messages: the calls it makes."""
    tool_call_id: str | None = None
    """For tool messages: the call this result answers."""
    name: str | None = None
    """For tool messages: the tool's name."""


class ToolSpec(Model):
    """A tool offered to the model: a skill, by name, with a JSON Schema for its arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """A JSON Schema (an object schema) of the arguments."""


class ModelRequest(Model):
    """One model call."""

    messages: tuple[ChatMessage, ...]
    """The conversation as the model sees it: rendered from the run's context pack."""
    tools: tuple[ToolSpec, ...] = ()
    model: str | None = None
    """The model's name, if the provider serves several."""
    max_tokens: int | None = Field(None, ge=1)
    """The longest reply."""
    temperature: float | None = Field(None, ge=0)
    stop: tuple[str, ...] = ()
    tool_choice: Literal["auto", "none", "required"] | None = None
    response_format: dict[str, Any] | None = None
    """Structured output: ``{"type": "json_schema", "json_schema": {"name", "schema"}}``."""
    pack_id: str | None = None
    """The digest of the context pack this request was rendered from (for tracing)."""
