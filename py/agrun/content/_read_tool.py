"""How a run reaches the store (spec 002): the pack's listing of stored bodies, the model's
``read_content`` tool, a run's reader, and the history kept free of finished reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._base import canonical_json
from ..context import ContextEntry, ContextRequest, Message
from ._store import ContentEntry, ContentStore

__all__ = ["READ_CONTENT", "ContentAdvert", "ContentReader", "ReadContent", "compact_reads"]


@dataclass(frozen=True)
class ContentAdvert:
    """The pack's extension layer that lists stored bodies (ref, kind, bytes, first line):
    the newest, and those the request names (`ContentStore.listed`), oldest first; never
    the bodies themselves, nor an expired one."""

    store: ContentStore
    now: Callable[[], int]
    count: int = 5
    name: str = "content"
    early: bool = True
    """Admitted before older transcript: without its refs the model cannot reach a body."""

    def entries(self, request: ContextRequest) -> list[ContextEntry]:
        return [
            ContextEntry(
                id=f"content:{entry.ref}",
                layer=self.name,
                kind="extension",
                content=f"{entry.ref} ({entry.kind}, {entry.bytes} bytes): {entry.preview()}",
                sources=(entry.ref,),
                tokens=0,
            )
            for entry in self.store.listed(self.count, now_ms=self.now(), about=_about(request))
        ]


def _about(request: ContextRequest) -> str:
    """What a pack's request says it is about: its input and the direction's topic and query."""
    direction = request.direction
    said = (request.input, direction.active_topic, direction.active_query)
    return " ".join(s for s in said if isinstance(s, str))


READ_CONTENT = "read_content"


def compact_reads(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The turn's messages without its successful ``read_content`` round trips.

    A read is plumbing: the body is already in the store, was whole in the turn's own model
    calls, and the reply that used it follows in the history. Kept there, even as a note,
    every later pack would pay for the call and its result again (the events keep each
    retrieval: ``ContentRetrieved``). A failed read stays, call and error, so a later call
    still sees that the ref is gone.
    """
    reads = {
        call.id for message in messages for call in message.tool_calls if call.name == READ_CONTENT
    }
    failed = {
        message.tool_call_id
        for message in messages
        if message.role == "tool"
        and message.tool_call_id in reads
        and message.content.startswith("error")
    }
    done = reads - failed
    if not done:
        return messages
    kept: list[Message] = []
    for message in messages:
        if message.role == "tool" and message.tool_call_id in done:
            continue
        if any(call.id in done for call in message.tool_calls):
            calls = tuple(call for call in message.tool_calls if call.id not in done)
            if not calls and not message.content:
                continue
            message = message.model_copy(update={"tool_calls": calls})
        kept.append(message)
    return tuple(kept)


class ReadContent:
    """The built-in tool a model reads a stored body with (offered while the store holds
    any): ``read_content({"ref": ...})`` gives the body, or fails with
    `ContentRefNotFound` for a ref that is not there."""

    name = READ_CONTENT
    description = (
        "Read the full body of an earlier answer, by the ref listed under Stored content. "
        "Use it to reformat, summarize or compare what was said before. Only the refs "
        "listed there exist: copy one exactly, never make one up. A ref that is not listed "
        "(unknown, evicted or expired) returns the error content_ref_not_found, not a body."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 (read-only by convention, like a schema)
        "type": "object",
        "properties": {"ref": {"type": "string", "description": "The content ref."}},
        "required": ["ref"],
        "additionalProperties": False,
    }

    def run(self, input: str, context: Any, helpers: Any) -> str:
        entry = context.content(context.arguments["ref"])
        body = entry.body
        return body if isinstance(body, str) else canonical_json(body)


@dataclass(frozen=True)
class ContentReader:
    """How a run reads the store: by ref, at the clock's time (a run emits the events)."""

    store: ContentStore
    now: Callable[[], int]

    def get(self, ref: str) -> ContentEntry:
        return self.store.get(ref, now_ms=self.now())

    def counters(self) -> dict[str, int]:
        return self.store.counters()
