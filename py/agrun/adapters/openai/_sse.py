"""An incremental Server-Sent Events decoder: bytes in any chunking, whole events out.

It follows the WHATWG event-stream rules that matter for chat completions: lines end in
CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the next are one
line end); ``data:`` lines of one event are joined with ``\\n``; a blank line dispatches;
``:`` starts a comment; one space after the colon is dropped. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...chat import ProviderProtocolError

__all__ = ["SseDecoder", "SseEvent"]

_LINE_END = re.compile(rb"\r\n|\r|\n")
# A hostile or broken server could send one endless line; stop holding it at some point.
_MAX_LINE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its joined ``data`` and its ``event`` type (``message`` if unnamed)."""

    data: str
    event: str = "message"


class SseDecoder:
    """Feed it the body's chunks as they come (`feed`), then `close` at the end.

    The events it returns do not depend on where the chunks were split.
    """

    def __init__(self, max_line_bytes: int = _MAX_LINE_BYTES) -> None:
        self._pending = b""
        self._skip_lf = False  # the last chunk ended in CR: an LF next is the same line end
        self._first_line = True
        self._data: list[str] = []
        self._event = ""
        self._max_line_bytes = max_line_bytes

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events completed by ``chunk``.

        Raises:
            ProviderProtocolError: a line grew longer than the decoder will hold.
        """
        if not chunk:
            return []
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        buffer = self._pending + chunk
        events: list[SseEvent] = []
        start = 0
        for match in _LINE_END.finditer(buffer):
            # Line ends are ASCII and never inside a multi-byte UTF-8 sequence, so a whole
            # line always decodes on its own.
            self._line(buffer[start : match.start()].decode("utf-8", "replace"), events)
            start = match.end()
            if match.group() == b"\r" and start == len(buffer):
                self._skip_lf = True
        self._pending = buffer[start:]
        if len(self._pending) > self._max_line_bytes:
            raise ProviderProtocolError(
                f"the provider sent a stream line longer than {self._max_line_bytes} bytes"
            )
        return events

    def close(self) -> list[SseEvent]:
        """The end of the body: an event whose data lines all arrived but whose blank line
        did not is still given (servers often omit the last one); an unfinished line is not."""
        self._pending = b""
        events: list[SseEvent] = []
        self._dispatch(events)
        return events

    def _line(self, line: str, events: list[SseEvent]) -> None:
        if self._first_line:
            self._first_line = False
            line = line.removeprefix("\ufeff")
        if not line:
            self._dispatch(events)
            return
        if line.startswith(":"):
            return  # a comment: keep-alive pings, mostly
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        # id: and retry: are for reconnecting EventSources; a POST is never resumed.

    def _dispatch(self, events: list[SseEvent]) -> None:
        if self._data:
            events.append(SseEvent("\n".join(self._data), self._event or "message"))
        self._data = []
        self._event = ""
