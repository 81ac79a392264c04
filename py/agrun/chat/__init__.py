"""What crosses the `Provider` port: chat messages, tool specs, stream events, errors."""

from ._assemble import ReplyBuilder
from ._errors import (
    ProviderError,
    ProviderHttpError,
    ProviderProtocolError,
    ProviderRateLimited,
    ProviderReplyTooLong,
    ProviderStreamCut,
    ProviderTimeout,
    ProviderUnavailable,
)
from ._messages import ChatMessage, ChatRole, ModelRequest, ToolCallRequest, ToolSpec
from ._stream import (
    Finish,
    FinishReason,
    ModelReply,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
)

__all__ = [
    "ChatMessage",
    "ChatRole",
    "Finish",
    "FinishReason",
    "ModelReply",
    "ModelRequest",
    "ProviderError",
    "ProviderHttpError",
    "ProviderProtocolError",
    "ProviderRateLimited",
    "ProviderReplyTooLong",
    "ProviderStreamCut",
    "ProviderTimeout",
    "ProviderUnavailable",
    "ReplyBuilder",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallRequest",
    "ToolSpec",
    "Usage",
]
