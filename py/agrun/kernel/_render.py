"""A context pack rendered into the chat messages a model is sent (docs/prompt format).

The system message holds the system prompt, the active policies and steering notes, and
then the evidence as separate sections (direction, facts, preferences, decisions, summary,
remembered notes, recalled turns, stored content), so the model is not handed one loose
memory blob. The live window follows as chat messages, in conversation order, each with the
role, tool calls and tool-call id it was said with. The library's own frames (corrections,
the wrap-up) are user messages: they speak to the model, and no pack takes them for the
person's request (their ``author`` says who wrote them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._base import trusted
from ..chat import ChatMessage, ToolCallRequest
from ..context import ContextEntry, ContextPack

__all__ = ["DEFAULT_SYSTEM_PROMPT", "SECTIONS", "render_messages"]

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."

# Evidence sections in the order they are written, by the memory kind that fills each.
SECTIONS = (
    ("direction", "Direction"),
    ("fact", "Facts"),
    ("preference", "Preferences"),
    ("decision", "Decisions"),
    ("summary", "Summary"),
    ("note", "Remembered"),
    ("recalled", "Recalled turns"),
    ("content", "Stored content"),
    ("context", "Context"),
)


def render_messages(
    pack: ContextPack, *, memory_kinds: Mapping[str, str] | None = None
) -> tuple[ChatMessage, ...]:
    """The chat messages for ``pack``: one system message, then the window.

    Args:
        pack: the built pack.
        memory_kinds: the kind (fact, preference, ...) of each memory item offered to the
            pack, by id: which section a memory entry belongs to.
    """
    kinds = memory_kinds or {}
    prompt: list[str] = []
    sections: dict[str, list[str]] = {}
    window: list[ChatMessage] = []
    for entry in pack.entries():
        if entry.layer == "content":
            # The content store's advert (kernel/_content.ContentAdvert): refs, never bodies.
            sections.setdefault("content", []).append(f"- {entry.content}")
            continue
        match entry.kind:
            case "system":
                prompt.insert(0, entry.content)
            case "policy" | "steering":
                prompt.append(entry.content)
            case "direction":
                sections.setdefault("direction", []).append(f"- {entry.name}: {entry.content}")
            case "memory" | "merged_memory":
                kind = kinds.get(entry.sources[0], "note")
                section = kind if kind in ("fact", "preference", "decision", "summary") else "note"
                sections.setdefault(section, []).extend(_bullets(entry.content))
            case "summary":
                sections.setdefault("summary", []).append(entry.content)
            case "recalled_turn":
                sections.setdefault("recalled", []).append(f"[{entry.role}] {entry.content}")
            case "message":
                _append(window, _message(entry))
            case _:
                label = f"{entry.kind} {entry.name}" if entry.name else entry.kind
                sections.setdefault("context", []).append(f"[{label}] {entry.content}")
    system = "\n".join(prompt) if prompt else DEFAULT_SYSTEM_PROMPT
    written = [
        f"## {title}\n" + "\n".join(sections[key]) for key, title in SECTIONS if key in sections
    ]
    if written:
        system = system + "\n\n" + "\n".join(written)
    return (ChatMessage(role="system", content=system), *window)


def _append(window: list[ChatMessage], message: ChatMessage) -> None:
    """Add ``message`` to the window; a user message right after another (a turn that got
    no answer, then the next ask) joins it, since chat templates that require the roles to
    alternate refuse two in a row."""
    last = window[-1] if window else None
    if (
        last is not None
        and last.role == message.role == "user"
        and isinstance(last.content, str)
        and isinstance(message.content, str)
    ):
        window[-1] = last.model_copy(update={"content": f"{last.content}\n\n{message.content}"})
        return
    window.append(message)


def _bullets(text: str) -> list[str]:
    return [f"- {line}" for line in text.splitlines() if line.strip()]


def _message(entry: ContextEntry) -> ChatMessage:
    role: Any = entry.role or "user"
    if role == "assistant" and entry.tool_calls:
        calls = tuple(
            ToolCallRequest(id=call.id, name=call.name, arguments=_arguments(call.arguments))
            for call in entry.tool_calls
        )
        return ChatMessage(role="assistant", content=entry.content or None, tool_calls=calls)
    if role == "tool":
        return ChatMessage(
            role="tool", content=entry.content, tool_call_id=entry.tool_call_id, name=entry.name
        )
    # Most of a window, every call: a pack entry's role and text are valid by construction,
    # so the message is made without validating them again.
    return trusted(
        ChatMessage,
        {
            "role": role,
            "content": entry.content,
            "tool_calls": (),
            "tool_call_id": None,
            "name": None,
        },
    )


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
