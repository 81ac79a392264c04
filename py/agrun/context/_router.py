"""The router's context (spec 001 section 5.4): its own L2, no raw execution context.

The router decides what to do next; it sees the direction fields, the current request,
what people said and the assistant's plain replies, and the router's own summaries of
finished stages. Tool traffic, artifacts, tool outputs, events and the session's L2
never reach it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ._build import build_context
from ._errors import ContextRequestInvalid
from ._pack import ContextPack
from ._request import ContextRequest, RouterContextRequest
from ._window import is_said_by_person

__all__ = ["build_router_context"]


def build_router_context(
    request: RouterContextRequest | Mapping[str, Any], **kwargs: Any
) -> ContextPack:
    """Build the router's pack; keyword arguments are those of `build_context`."""
    if not isinstance(request, RouterContextRequest):
        try:
            request = RouterContextRequest.model_validate(request)
        except ValidationError as error:
            raise ContextRequestInvalid.from_validation("the router request", error) from None
    messages = tuple(
        m
        for m in request.messages
        if is_said_by_person(m) or (m.role == "assistant" and m.content and not m.tool_calls)
    )
    memory = tuple(m.model_copy(update={"layer": "L2"}) for m in request.router_memory)
    inner = ContextRequest(
        messages=messages,
        input=request.input,
        stage="router",
        system_prompt=request.system_prompt,
        direction=request.direction,
        memory=memory,
        policies=request.policies,
        budget=request.budget,
        options=request.options.model_copy(update={"layers": ("L0", "L2")}),
        causation_id=request.causation_id,
    )
    return build_context(inner, **kwargs)
