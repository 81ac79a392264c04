"""Bounds on what a model call and a tool call may put into a turn (and so into history,
the store and an export), whatever the provider or the skill sends.

A reply is capped while it streams: its text and tool calls are counted with the runtime's
tokenizer, and past ``4 × max_reply_tokens + 1024`` tokens (or 16 bytes per such token,
for text a tokenizer counts as few tokens) the call ends with `ProviderReplyTooLong`. The
margin absorbs the difference between the runtime's estimate and the model's own tokens: a
server that honours ``max_tokens`` never reaches it, one that ignores it is stopped early.
A tool result is cut to 8 bytes per token of the model's window (at least 64 KiB): more
could never be shown to the model whole anyway. Pure: no I/O.
"""

from __future__ import annotations

from ..chat import ProviderReplyTooLong, StreamEvent, TextDelta, ToolCallDelta
from ..ports import Tokenizer

__all__ = [
    "REPLY_BYTES_PER_TOKEN",
    "ReplyCap",
    "cap_tool_result",
    "tool_result_limit",
]

REPLY_TOKEN_MARGIN = 4
REPLY_TOKEN_SLACK = 1024
REPLY_BYTES_PER_TOKEN = 16
TOOL_RESULT_BYTES_PER_TOKEN = 8
TOOL_RESULT_MIN_BYTES = 64 * 1024
# The reply is re-counted whole each time it has grown by this factor (and once it holds
# as many characters as the cap has tokens): linear work in all, at most this overshoot.
_RECOUNT_GROWTH = 1.25


class ReplyCap:
    """Counts one reply as it streams (`add` each event before using it)."""

    def __init__(self, tokenizer: Tokenizer, max_reply_tokens: int) -> None:
        self._tokenizer = tokenizer
        self.max_reply_tokens = max_reply_tokens
        self.max_tokens = REPLY_TOKEN_MARGIN * max_reply_tokens + REPLY_TOKEN_SLACK
        self.max_bytes = REPLY_BYTES_PER_TOKEN * self.max_tokens
        self._pieces: list[str] = []
        self._chars = 0
        self._bytes = 0
        self._next_count = self.max_tokens

    def add(self, event: StreamEvent) -> None:
        """Count ``event``'s text, tool-call name and arguments.

        Raises:
            ProviderReplyTooLong: the reply is now past the token or byte cap (``event``
                is not part of it: the caller keeps only what came before).
        """
        if isinstance(event, TextDelta):
            pieces = [event.text]
        elif isinstance(event, ToolCallDelta):
            pieces = [event.id or "", event.name or "", event.arguments]
        else:
            return
        added = sum(len(piece.encode("utf-8", "surrogatepass")) for piece in pieces)
        if self._bytes + added > self.max_bytes:
            raise self._too_long(f"{self._bytes + added:,} bytes")
        self._bytes += added
        self._pieces.extend(piece for piece in pieces if piece)
        self._chars += sum(len(piece) for piece in pieces)
        if self._chars >= self._next_count:
            tokens = self._tokenizer.count("".join(self._pieces))
            if tokens > self.max_tokens:
                raise self._too_long(f"about {tokens:,} tokens")
            self._next_count = max(self._chars + 1, int(self._chars * _RECOUNT_GROWTH))

    def _too_long(self, size: str) -> ProviderReplyTooLong:
        return ProviderReplyTooLong(
            f"the model's reply ran past {size}, far over max_reply_tokens="
            f"{self.max_reply_tokens} (the bound is {self.max_tokens:,} tokens or "
            f"{self.max_bytes:,} bytes): the call was ended there"
        )


def tool_result_limit(context_window: int) -> int:
    """The most UTF-8 bytes one tool result may put into the turn."""
    return max(TOOL_RESULT_MIN_BYTES, TOOL_RESULT_BYTES_PER_TOKEN * context_window)


def cap_tool_result(text: str, limit: int) -> tuple[str, int | None]:
    """``text`` cut to ``limit`` UTF-8 bytes (on a character boundary) with a note saying
    so, and its size in bytes; or ``text`` as it is and None when it fits."""
    if len(text) * 4 <= limit:
        return text, None  # even all 4-byte characters would fit: no need to encode
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, None
    kept = data[:limit].decode("utf-8", "ignore")
    note = f"\n[agrun: this result was cut to its first {limit:,} of {len(data):,} bytes]"
    return kept + note, len(data)
