"""What the peers' translated tests share: messages, a fixed-cost tokenizer, pack readers and
a runtime on the scripted model.

Every test module in this folder translates one peer file: its module constants ``PEER_REPO``
and ``PEER_FILE`` name where the cases come from, and each test's docstring names the case
(`docs/context.md`, "Peers' test cases that do not apply, and why", lists the ones left out).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import agrun
from agrun.chat import ModelReply, ModelRequest
from agrun.context import ContextPack, ContextRequest, Message
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime

# Recall and the L2 summary off: the window alone decides what a pack holds.
WINDOW_ONLY: dict[str, Any] = {"recallShare": 0, "summaryMaxTokens": 0}


class PerMessage:
    """A tokenizer that prices every non-empty text at ``cost`` tokens, the way LangChain's
    ``dummy_token_counter`` prices every message at 10: budgets then count messages."""

    def __init__(self, cost: int = 10) -> None:
        self.cost = cost

    def count(self, text: str) -> int:
        return self.cost if text else 0


def msg(id: str, role: str, content: str = "", **fields: Any) -> Message:
    """One message of a log (``role`` user/assistant/tool/system)."""
    return Message(id=id, role=role, content=content, **fields)  # type: ignore[arg-type]


def context_request(**fields: Any) -> ContextRequest:
    """A `ContextRequest` from keywords, sub-models as plain dicts (validated like the wire)."""
    return ContextRequest.model_validate(fields)


def person(id: str, content: str) -> Message:
    return msg(id, "user", content)


def calls(id: str, *call_ids: str, content: str = "", name: str = "look") -> Message:
    """An assistant message asking for the tool calls ``call_ids``."""
    return msg(id, "assistant", content, tool_calls=[{"id": c, "name": name} for c in call_ids])


def result(id: str, call_id: str, content: str = "ok", name: str = "look") -> Message:
    return msg(id, "tool", content, tool_call_id=call_id, name=name)


def window(pack: ContextPack) -> list[str]:
    """Ids of the messages in the pack's window, in the order the model reads them."""
    return [e.sources[0] for e in pack.entries() if e.kind == "message"]


def kinds(pack: ContextPack) -> list[str]:
    return [e.kind for e in pack.entries()]


def dropped_ids(pack: ContextPack, messages: list[Message]) -> set[str]:
    """Ids of every message a dropped run of ``pack`` covers."""
    index = {m.id: i for i, m in enumerate(messages)}
    out: set[str] = set()
    for run in pack.compression_metadata.dropped:
        if run.kind == "message":
            out.update(m.id for m in messages[index[run.first] : index[run.last] + 1])
    return out


# -- a model turn on the scripted provider ----------------------------------------------


def look_skill(output: Callable[[int], str]) -> agrun.FunctionSkill:
    """The ``look`` tool: its n-th call returns ``output(n)``."""
    counter = {"n": 0}

    def look(input: str, context: agrun.SkillContext, helpers: agrun.SkillHelpers) -> str:
        counter["n"] += 1
        return output(counter["n"])

    return agrun.FunctionSkill("look", look, description="Looks one thing up.")


class ToolRounds:
    """A script that calls ``name`` on the first ``rounds`` model calls of each turn, then
    answers. A request whose last message is the person's input starts a turn."""

    def __init__(self, rounds: int, name: str = "look", answer: str = "final answer") -> None:
        self.rounds = rounds
        self.name = name
        self.answer = answer
        self.made = 0

    def __call__(self, request: ModelRequest) -> ModelReply | str:
        last = request.messages[-1]
        if last.role == "user" and last.content and not last.content.startswith("You are close"):
            self.made = 0
        if self.made >= self.rounds:
            return self.answer
        self.made += 1
        return ModelReply(tool_calls=(tool_call(self.name, {"input": "next"}, id=f"c{self.made}"),))


def agent(
    script: Any, *skills: Any, **options: Any
) -> tuple[agrun.Runtime, ScriptedProvider, list[Any]]:
    """A runtime on ``script``, its provider (which keeps every request), and every event it
    emitted, the context builds' included."""
    provider = ScriptedProvider(script)
    events: list[Any] = []
    options.setdefault("memory_extraction", "rules")
    options.setdefault("global_memory", False)
    runtime = make_runtime(
        *skills, provider=provider, model="scripted", on_event=events.append, **options
    )
    return runtime, provider, events


def said(request: ModelRequest, text: str) -> bool:
    """Whether ``request`` carries ``text`` as a user message."""
    return any(m.role == "user" and m.content == text for m in request.messages)


def fails_once_then_says() -> tuple[Any, agrun.FunctionSkill]:
    """A model that calls ``say`` until a call returns, then answers with what it returned,
    and a ``say`` tool that raises the first time and returns "x" after."""
    attempts = {"n": 0}

    def flaky(input: str, context: agrun.SkillContext, helpers: agrun.SkillHelpers) -> str:
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise TypeError("undefined method '<<' for nil")
        return "x"

    def script(request: ModelRequest) -> ModelReply | str:
        results = [m.content or "" for m in request.messages if m.role == "tool"]
        if results and not results[-1].startswith("error"):
            return results[-1]
        return ModelReply(tool_calls=(tool_call("say", {"input": "x"}, id=f"c{len(results)}"),))

    return script, agrun.FunctionSkill("say", flaky, description="Says it.")
