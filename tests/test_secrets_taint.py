"""Secrets never leave (issue 19.1-19.3): planted in every way a secret can enter a turn,
looked for in every place a turn leaves data.

Planted: in the person's input, in a tool call's arguments (the model's), in a tool's result,
in the model's reply, in a skill's raised error, in a provider's error, in a memory note and a
skill's ``append_memory``. Read back: every row of every SQLite table (CPython), the export,
every event, ``lastRun``, the run results, and the requests the model was sent. With
redaction on (the default) none of them holds a planted secret; with it off, the person's
own words stay as said in history and in what the model is sent, and nothing else holds one.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import agrun
from agrun import FunctionSkill, SkillContext, SkillHelpers
from agrun.chat import ModelReply, ModelRequest, ProviderUnavailable
from agrun.storage import MemoryStorage
from agrun.testing import ScriptedProvider, tool_call
from conftest import make_runtime
from planted_secrets import PLANTED, hits

ALL = " and ".join(text for text, _ in PLANTED.values())


# What the tools were called with (the model's arguments, as a skill gets them).
TOOL_INPUTS: list[str] = []


def lookup(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    TOOL_INPUTS.append(input)
    helpers.append_memory({"kind": "fact", "text": f"the vault holds {ALL}"})
    return f"found: {ALL}"


def broken(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
    raise ValueError(f"auth failed for {ALL}")


SKILLS = (
    FunctionSkill("lookup", lookup, description="Looks a thing up."),
    FunctionSkill("broken", broken, description="Always fails."),
)


def script(request: ModelRequest) -> str | ModelReply:
    said = next(m.content or "" for m in reversed(request.messages) if m.role == "user")
    if request.response_format is not None:  # the memory extraction
        return json.dumps({"facts": [f"My key is {ALL}"], "preferences": [], "decisions": []})
    if request.messages[-1].role == "tool":
        return f"Done. Here it is again: {ALL}"
    if "look" in said:
        return ModelReply(tool_calls=(tool_call("lookup", {"input": ALL}),))
    if "break" in said:
        return ModelReply(tool_calls=(tool_call("broken", {"input": ALL}),))
    if "fail" in said:
        raise ProviderUnavailable(f"upstream said: bad credentials {ALL}")
    return f"Noted. {ALL}"


async def talk(runtime: agrun.Runtime) -> list[Any]:
    results = []
    for said in (
        f"please look up {ALL}",
        "now break it",
        "then fail",
        f"remember: {ALL}",
        f"my secrets are {ALL}",
    ):
        results.append(await runtime.run(said))
        await runtime.idle()
    return results


def sqlite_rows(path: Path) -> list[str]:
    """Every value of every row of every table, as text."""
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return [
            str(value) for t in tables for row in db.execute(f"SELECT * FROM {t}") for value in row
        ]


def wire(value: Any) -> str:
    return json.dumps(value, default=lambda v: v.to_wire() if hasattr(v, "to_wire") else str(v))


@pytest.mark.cpython_only
async def test_with_redaction_on_no_planted_secret_is_stored_exported_or_sent(
    tmp_path: Path,
) -> None:
    events: list[Any] = []
    TOOL_INPUTS.clear()
    provider = ScriptedProvider(script)
    db = tmp_path / "taint.db"
    runtime = make_runtime(
        *SKILLS, provider=provider, model="scripted", storage=str(db), on_event=events.append
    )
    results = await talk(runtime)
    # The failing tool's error goes back to the model; the provider's error fails its turn.
    assert [r.state.status for r in results] == [
        "succeeded",
        "succeeded",
        "failed",
        "succeeded",
        "succeeded",
    ]
    # The error paths really carried the secrets in: the errors are there, masked.
    assert any("auth failed for" in m.content for m in results[1].messages if m.role == "tool")
    assert results[2].error is not None and "bad credentials" in results[2].error.message
    exported = await runtime.export_session()
    places = {
        "sqlite rows": "\n".join(sqlite_rows(db)),
        "export": exported,
        "events": wire([e.to_wire() for e in events]),
        "results": wire([r.to_wire() for r in results]),
        "lastRun": wire(runtime.state.to_wire()),
        "history": wire([m.to_wire() for m in runtime.history]),
        "memory": wire([e.to_wire() for e in runtime.memory.read_all()]),
        "sent to the model": wire([r.to_wire() for r in provider.requests]),
        "a tool's arguments": wire(TOOL_INPUTS),
    }
    assert TOOL_INPUTS, "the tool was called"
    assert {place: hits(text) for place, text in places.items() if hits(text)} == {}


@pytest.mark.cpython_only
async def test_with_redaction_off_only_the_persons_words_keep_their_secrets(
    tmp_path: Path,
) -> None:
    events: list[Any] = []
    db = tmp_path / "taint-off.db"
    runtime = make_runtime(
        *SKILLS,
        provider=ScriptedProvider(script),
        model="scripted",
        storage=str(db),
        on_event=events.append,
        redact_secrets=False,
    )
    results = await talk(runtime)
    with sqlite3.connect(db) as db_rows:
        kept = {
            table: "\n".join(str(row) for row in db_rows.execute(f"SELECT * FROM {table}"))
            for table in ("events", "memory_entries", "global_memory", "content", "runtime_state")
        }
        sessions = "\n".join(str(row) for row in db_rows.execute("SELECT * FROM sessions"))
    places = {
        **kept,
        "sessions (session memory, inquiry)": sessions,
        "events": wire([e.to_wire() for e in events]),
        "errors": wire([r.error.to_wire() for r in results if r.error is not None]),
        "steps": wire([[s.to_wire() for s in r.steps] for r in results]),
        "lastRun": wire(runtime.state.to_wire()),
        "memory": wire([e.to_wire() for e in runtime.memory.read_all()]),
    }
    assert {place: hits(text) for place, text in places.items() if hits(text)} == {}
    # The person's words are kept as said: redaction off is the host's choice.
    assert hits(runtime.history[0].content)


def notes(runtime: agrun.Runtime) -> list[str]:
    return [e.text for e in runtime.memory.read_all() if e.kind == "note"]


async def test_a_remember_note_with_a_secret_is_refused_by_the_one_gate() -> None:
    refused: list[Any] = []

    def no_customer_ids(entry: Any) -> Any:
        refused.append(entry)
        return "customer id" if "CUST-" in json.dumps(entry) else None

    for redact in (True, False):
        runtime = make_runtime(
            storage=MemoryStorage(), sensitivity_filter=no_customer_ids, redact_secrets=redact
        )
        said = await runtime.run("remember: my password=hunter2hunter2 and CUST-77")
        assert said.ok and "won't remember" in str(said.output)
        assert "hunter2hunter2" not in str(said.output)
        assert notes(runtime) == []
        # The host's hook alone refuses a note agrun's filter lets through.
        plain = await runtime.run("remember: my customer id is CUST-77")
        assert plain.ok and "won't remember" in str(plain.output)
        assert notes(runtime) == []
        ok = await runtime.run("remember: I like window seats")
        assert ok.ok and notes(runtime) == ["I like window seats"]
    assert refused  # the hook was asked


async def test_a_skills_append_memory_goes_through_the_gate_too() -> None:
    def keeps(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        helpers.append_memory({"text": "the customer is CUST-9"})
        helpers.append_memory({"text": "the deploy key is " + PLANTED["github token"][0]})
        helpers.append_memory({"text": "the customer likes tea"})
        return "kept what may be kept"

    events: list[Any] = []
    runtime = make_runtime(
        FunctionSkill("keeps", keeps),
        sensitivity_filter=lambda entry: "customer id" if "CUST-" in json.dumps(entry) else None,
        redact_secrets=False,
        on_event=events.append,
    )
    result = await runtime.run("go", skill="keeps")
    assert result.ok
    assert [e.text for e in runtime.memory.read_all() if e.source == "skill"] == [
        "the customer likes tea"
    ]
    dropped = [e for e in events if e.kind == "MemoryRequestDropped"]
    assert len(dropped) == 2
    assert all("refused by the sensitive-content filter" in e.reason for e in dropped)
    assert not hits(wire([e.to_wire() for e in events]))


async def test_a_raised_error_is_masked_in_every_trace() -> None:
    secret = PLANTED["anthropic key"][0]

    def fails(input: str, context: SkillContext, helpers: SkillHelpers) -> str:
        raise ValueError(f"auth failed for key {secret}")

    events: list[Any] = []
    runtime = make_runtime(
        FunctionSkill("fails", fails), on_event=events.append, redact_secrets=False
    )
    result = await runtime.run("go", skill="fails")
    assert result.error is not None and result.error.code == "skill_error"
    assert "auth failed for key" in result.error.message and secret not in result.error.message
    observation = result.state.observation
    assert observation is not None and secret not in observation.summary
    assert not any(secret in step.detail for step in result.steps)
    assert not any(secret in json.dumps(e.to_wire()) for e in events)
    last = runtime.state.last_run
    assert last is not None and secret not in json.dumps(last.to_wire())
