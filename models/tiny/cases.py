"""Training encodings (ids + loss mask) and evaluation cases from synthetic examples.

A case is one assistant turn of an example's last exchange: the prompt the server would
send (the template with add_generation_prompt), the exact expected reply, and checks that
judge a reply both exactly and by format (what agrun's protocol tests rely on).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tokenizers import Tokenizer

from .data import (
    DONT_KNOW,
    HERE_PREFIX,
    RECALL_PREFIX,
    RESULT_PREFIX,
    RESULTS_PREFIX,
    SAID_PREFIX,
    Example,
)
from .pools import GREETING_REPLY
from .template import render

END = "<|im_end|>"


def encode(tok: Tokenizer, ex: Example) -> tuple[list[int], list[int]]:
    """Token ids of the whole conversation and a 0/1 mask of the assistant replies' tokens
    (each reply's text and its closing <|im_end|>)."""
    text = render(ex.messages, ex.tools)
    spans: list[tuple[int, int]] = []
    for i, m in enumerate(ex.messages):
        if m["role"] != "assistant":
            continue
        prefix = render(ex.messages[:i], ex.tools, add_generation_prompt=True)
        assert text.startswith(prefix)
        end = text.index(END, len(prefix)) + len(END)
        spans.append((len(prefix), end))
    enc = tok.encode(text)
    mask = [0] * len(enc.ids)
    starts = {s for s, _ in spans}
    seen: set[int] = set()
    for j, (a, b) in enumerate(enc.offsets):
        for s, e in spans:
            if s <= a and b <= e:
                mask[j] = 1
        if a in starts:
            seen.add(a)
    assert seen == starts, "a reply does not start on a token boundary"
    return enc.ids, mask


@dataclass
class Case:
    kind: str
    prompt: str
    expected: str
    tools: list[dict[str, Any]] | None
    messages: list[dict[str, Any]]  # the conversation before the reply
    reply: dict[str, Any]  # the gold assistant message
    request: str


def cases_of(ex: Example) -> list[Case]:
    last_user = max(i for i, m in enumerate(ex.messages) if m["role"] == "user")
    out: list[Case] = []
    for i in range(last_user + 1, len(ex.messages)):
        m = ex.messages[i]
        if m["role"] != "assistant":
            continue
        prev = ex.messages[i - 1]
        if m.get("tool_calls"):
            names = [c["function"]["name"] for c in m["tool_calls"]]
            if names == ["read_content"]:
                kind = "content_call"
            else:
                kind = "tool_parallel" if len(names) > 1 else "tool"
        elif prev["role"] == "tool":
            kind = "content_answer" if prev.get("name") == "read_content" else "tool_answer"
        else:
            kind = ex.kind
        prompt = render(ex.messages[:i], ex.tools, add_generation_prompt=True)
        full = render(ex.messages[: i + 1], ex.tools)
        expected = full[len(prompt) : full.index(END, len(prompt))]
        out.append(
            Case(
                kind,
                prompt,
                expected,
                ex.tools,
                ex.messages[:i],
                m,
                str(ex.meta.get("request", "")),
            )
        )
    return out


CALL_RE = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.S)


def parse_calls(text: str) -> list[dict[str, Any]] | None:
    """The tool calls of a reply made only of <tool_call> blocks, or None if malformed."""
    blocks = CALL_RE.findall(text)
    rest = CALL_RE.sub("", text).strip()
    if not blocks or rest:
        return None
    calls = []
    for b in blocks:
        try:
            obj = json.loads(b)
        except json.JSONDecodeError:
            return None
        if (
            not isinstance(obj, dict)
            or not isinstance(obj.get("arguments"), dict)
            or not isinstance(obj.get("name"), str)
        ):
            return None
        calls.append(obj)
    return calls


def offered(tools: list[dict[str, Any]] | None) -> set[str]:
    return {t["function"]["name"] for t in tools or []}


def format_ok(case: Case, reply: str) -> bool:
    """Whether a reply has the right shape for its behaviour (not necessarily exact)."""
    k = case.kind
    if k in ("tool", "tool_parallel", "content_call"):
        calls = parse_calls(reply)
        if calls is None or any(c["name"] not in offered(case.tools) for c in calls):
            return False
        want = len(case.reply["tool_calls"])
        return len(calls) == want
    if k in ("tool_answer", "content_answer"):
        results: list[str] = []
        for m in reversed(case.messages):
            if m["role"] != "tool":
                break
            results.append(m["content"].split("\n")[0])
        pre = HERE_PREFIX if k == "content_answer" else (RESULT_PREFIX, RESULTS_PREFIX)
        return reply.startswith(pre) and all(r in reply for r in results)
    if k == "recall":
        return reply.startswith(RECALL_PREFIX) or reply == DONT_KNOW
    if k == "said":
        return reply.startswith(SAID_PREFIX)
    if k == "greeting":
        return reply == GREETING_REPLY
    if k == "extract":
        try:
            obj = json.loads(reply)
        except json.JSONDecodeError:
            return False
        return (
            isinstance(obj, dict)
            and sorted(obj) == ["decisions", "facts", "preferences"]
            and all(
                isinstance(v, list) and all(isinstance(s, str) for s in v) for v in obj.values()
            )
        )
    return False


def exact_ok(case: Case, reply: str) -> bool:
    """Whether a reply is exactly the behaviour's expected text (tool calls compared as
    parsed JSON, so key order and spacing do not matter)."""
    if case.kind in ("tool", "tool_parallel", "content_call"):
        calls = parse_calls(reply)
        want = [
            {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
            for c in case.reply["tool_calls"]
        ]
        return calls == want
    if case.kind == "extract":
        try:
            return bool(json.loads(reply) == json.loads(case.expected))
        except json.JSONDecodeError:
            return False
    return reply == case.expected
