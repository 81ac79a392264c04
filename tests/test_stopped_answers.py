"""A stopped answer survives: a cancelled turn keeps the answer as far as the person saw it
(issue 23.4, 23.7), marked ``cancelled``, and later windows read it as cut short.

What it keeps: the person's message (marked, as every failed or cancelled turn's) and one
assistant message with the answer's text so far; no tool traffic. The next turn's model
sees both with a note, recall never brings the stopped answer back on its own, and the mark
survives export, import and resume.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import agrun
from agrun import CancelToken, FunctionSkill, SkillContext, SkillHelpers
from agrun.chat import ModelReply, ModelRequest, TextDelta
from agrun.context import Message, is_recallable
from agrun.memory import noted_failures
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime


def lookup(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    return "Lisbon: clear"


LOOKUP = FunctionSkill(
    "lookup",
    lookup,
    description="Looks a city up.",
    parameters={"type": "object", "properties": {}},
)


class Stoppable:
    """A model that calls `lookup` first, then streams half an answer and waits until the
    run is cancelled (`reached` is set once the half is out); later turns answer at once."""

    def __init__(self) -> None:
        self.reached = asyncio.Event()
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> Any:
        self.requests.append(request)
        if len(self.requests) == 2:
            yield TextDelta(text="It is clear in Lis")
            self.reached.set()
            await asyncio.sleep(30)
        first = ModelReply(text="Let me check.", tool_calls=(tool_call("lookup", {}),))
        script = ScriptedProvider(lambda _: first if len(self.requests) == 1 else "Done.")
        async for event in script.stream(request):
            yield event


async def stopped_turn(**options: Any) -> tuple[agrun.Runtime, Stoppable, agrun.RunResult]:
    model = Stoppable()
    runtime = make_runtime(LOOKUP, provider=model, model="scripted", **options)
    token = CancelToken()
    task = asyncio.ensure_future(runtime.run("Weather in Lisbon?", signal=token))
    await asyncio.wait_for(model.reached.wait(), 5)
    token.cancel("stopped by the person")
    result = await asyncio.wait_for(task, 5)
    return runtime, model, result


async def test_a_stopped_answer_is_kept_marked_without_its_tool_traffic() -> None:
    runtime, _, result = await stopped_turn()
    assert result.state.status == "cancelled"
    run_id = result.state.run_id
    kept = [(m.id, m.role, m.content, m.run_status, m.error_code) for m in runtime.history]
    assert kept == [
        (f"{run_id}:user", "user", "Weather in Lisbon?", "cancelled", "cancelled"),
        (
            f"{run_id}:assistant",
            "assistant",
            "Let me check.\n\nIt is clear in Lis",
            "cancelled",
            "cancelled",
        ),
    ]
    assert result.messages == runtime.history


async def test_the_next_window_reads_it_as_cut_short_and_recall_never_brings_it_back() -> None:
    runtime, model, _ = await stopped_turn()
    answered = await runtime.run("Go on.")
    assert answered.ok and answered.output == "Done."
    sent = [(m.role, m.content) for m in model.requests[-1].messages if m.role != "system"]
    assert sent[:2] == [
        (
            "user",
            "Weather in Lisbon?\n"
            "[stopped: the person stopped the answer that follows before it was finished]",
        ),
        (
            "assistant",
            "Let me check.\n\nIt is clear in Lis\n"
            "[cut short: the person stopped this answer before it was finished]",
        ),
    ]
    assert sent[-1][0] == "user" and sent[-1][1].endswith("Go on.")
    stopped = runtime.history[1]
    assert not is_recallable(stopped)
    assert is_recallable(stopped.model_copy(update={"run_status": None}))


def test_a_cancelled_ask_without_an_answer_is_still_not_answered() -> None:
    asked = Message(
        id="r:user", role="user", content="hi", run_status="cancelled", error_code="cancelled"
    )
    after = Message(id="s:user", role="user", content="again")
    assert [m.content for m in noted_failures((asked, after))] == [
        "hi\n[not answered: this turn was cancelled (cancelled)]",
        "again",
    ]


async def test_a_stop_before_any_text_keeps_the_ask_alone() -> None:
    reached = asyncio.Event()

    class Silent:
        async def stream(self, request: ModelRequest) -> Any:
            reached.set()
            await asyncio.sleep(30)
            yield TextDelta(text="never")

    runtime = make_runtime(provider=Silent(), model="scripted")
    token = CancelToken()
    task = asyncio.ensure_future(runtime.run("slow", signal=token))
    await asyncio.wait_for(reached.wait(), 5)
    token.cancel("the person left")
    await asyncio.wait_for(task, 5)
    assert [(m.role, m.run_status) for m in runtime.history] == [("user", "cancelled")]


async def test_the_stopped_answer_survives_export_import_and_resume() -> None:
    store = MemoryStorage()
    runtime, _, _ = await stopped_turn(storage=store)
    exported = await runtime.export_session()
    messages = json.loads(exported)["session"]["turns"][0]["messages"]
    assert [(m["role"], m["runStatus"]) for m in messages] == [
        ("user", "cancelled"),
        ("assistant", "cancelled"),
    ]
    other = make_runtime(storage=MemoryStorage())
    await other.import_session(exported)
    assert other.history == runtime.history
    resumed = make_runtime(storage=store)
    await resumed.open()
    assert resumed.history == runtime.history
