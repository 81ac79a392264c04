"""Sync's rule and the runtime's side of it, without a web server: a transport that answers
like the sync server (tests/test_sync_server.py runs the real one on PostgreSQL), and the
gate on what a device sends (docs/storage.md "Sync"). Runs in CPython and in Pyodide.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

import agrun
from agrun.kernel import gate_push
from agrun.sensitive import PatternRedactor, SensitiveContentFilter
from agrun.storage import (
    MemoryStorage,
    SyncError,
    SyncForbidden,
    SyncPush,
    SyncReply,
    push_commits,
    push_for,
)
from agrun.testing import FixedClock
from planted_secrets import PLANTED, hits


class Server:
    """The sync server's rule over a `MemoryStorage`, one token for every session."""

    def __init__(self) -> None:
        self.store = MemoryStorage()
        self.token = "t0k3n"
        self.answer: tuple[int, str] | None = None  # a canned reply instead, when set
        self.keep_only: int | None = None  # store only this many of a push's turns
        self.bodies: list[str] = []

    async def post(self, url: str, body: str, headers: Mapping[str, str]) -> tuple[int, str]:
        self.bodies.append(body)
        if self.answer is not None:
            return self.answer
        data = json.loads(body)
        sid = data.pop("sessionId")
        if headers.get("authorization", f"Bearer {self.token}") != f"Bearer {self.token}":
            return 403, json.dumps({"error": {"code": "sync_forbidden", "message": "not yours"}})
        issued = None if "authorization" in headers else self.token
        if url.endswith("/pull"):
            return 200, json.dumps(SyncReply(session=await self.store.load_session(sid)).to_wire())
        push = SyncPush.model_validate(data)
        before = await self.store.load_session(sid)
        held = set() if before is None else {t.turn_id for t in before.turns}
        for commit in push_commits(sid, push)[: self.keep_only]:
            await self.store.commit_turn(commit)
        reply = SyncReply(
            session=await self.store.load_session(sid),
            pushed=[t.turn_id for t in push.turns if t.turn_id not in held][: self.keep_only],
            token=issued,
        )
        return 200, json.dumps(reply.to_wire())


def device(server: Server, name: str, token: str | None = None) -> agrun.Runtime:
    return agrun.create_runtime(
        clock=FixedClock(),
        ids=_Named(name),
        storage=MemoryStorage(),
        session_id="s",
        sync={"url": "http://sync.test/", "token": token},
        sync_transport=server,
    )


class _Named:
    """Ids unique to one device, as random ids are in a page."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._next = 0

    def new_id(self, prefix: str) -> str:
        self._next += 1
        return f"{prefix}-{self._name}-{self._next}"


async def turn(runtime: agrun.Runtime, text: str) -> str:
    """Run a turn and return its id (the run id)."""
    return (await runtime.run(text)).state.run_id


def said(runtime: agrun.Runtime) -> list[str]:
    return [m.content or "" for m in runtime.history if m.role == "user"]


async def test_devices_converge_in_the_order_pushes_reach_the_server() -> None:
    server = Server()
    a = device(server, "a")
    a1 = await turn(a, "a1")
    first = await a.sync()
    assert first.token == server.token and first.pushed == (a1,)
    b = device(server, "b", token=first.token)
    b1, b2 = await turn(b, "b1"), await turn(b, "b2")
    a2 = await turn(a, "a2")
    assert (await b.sync()).pulled == (a1,)
    got = await a.sync()
    assert got.pushed == (a2,) and got.pulled == (b1, b2)
    await b.sync()
    assert said(a) == said(b) == ["a1", "b1", "b2", "a2"]
    assert await a.export_session() == await b.export_session()
    # A sync with nothing new posts the pull alone and changes nothing.
    calls = len(server.bodies)
    again = await a.sync()
    assert (again.pushed, again.pulled) == ((), ()) and len(server.bodies) == calls + 1


async def test_a_device_never_takes_a_session_missing_its_turns() -> None:
    server = Server()
    a = device(server, "a", token=server.token)
    await a.run("one")
    two = await turn(a, "two")
    server.keep_only = 1
    with pytest.raises(SyncError, match="did not store 1 turn"):
        await a.sync()
    assert said(a) == ["one", "two"]
    server.keep_only = None
    assert (await a.sync()).pushed == (two,)


@pytest.mark.parametrize(
    ("answer", "error", "says"),
    [
        (
            (403, '{"error": {"code": "sync_forbidden", "message": "not yours"}}'),
            SyncForbidden,
            "not yours",
        ),
        ((500, "boom"), SyncError, "answered 500 to pull: boom"),
        ((200, "not json"), SyncError, "not a sync reply"),
        (
            (200, '{"session": {"sessionId": "s", "turns": [{"seq": 2, "turnId": "x"}]}}'),
            SyncError,
            "not a sync reply",
        ),
        ((200, "[" * 100 + "]" * 100), SyncError, "too large or too deep"),
    ],
)
async def test_a_bad_answer_is_a_typed_error_and_changes_nothing(
    answer: tuple[int, str], error: type[Exception], says: str
) -> None:
    server = Server()
    a = device(server, "a")
    await a.run("kept")
    before = await a.export_session()
    server.answer = answer
    with pytest.raises(error, match=says):
        await a.sync()
    assert await a.export_session() == before
    assert a.storage_status()["pending"] == 0


async def test_the_gate_masks_secrets_and_leaves_a_clean_session_as_it_is() -> None:
    store = MemoryStorage()
    runtime = agrun.create_runtime(storage=store, session_id="s", redact_secrets=False)
    await runtime.run("hello, I prefer tea")
    await runtime.run("remember: I live in Lisbon")
    clean = await store.load_session("s")
    assert clean is not None
    patterns = PatternRedactor()
    gate = SensitiveContentFilter(redactor=patterns)
    push = push_for(clean, None)
    assert push.content_entries and any(t.memory_entries for t in push.turns)
    assert gate_push(push, mask=patterns.redact, check=gate.check) == push

    secrets = " ".join(text for text, _ in PLANTED.values())
    await runtime.run(f"my keys: {secrets}")  # kept as said: redact_secrets is off
    tainted = await store.load_session("s")
    assert tainted is not None and hits(json.dumps(tainted.to_wire()))
    gated = gate_push(push_for(tainted, clean), mask=patterns.redact, check=gate.check)
    assert len(gated.turns) == 1 and hits(json.dumps(gated.to_wire())) == []


async def test_what_a_runtime_sends_is_gated() -> None:
    server = Server()
    a = agrun.create_runtime(
        clock=FixedClock(),
        storage=MemoryStorage(),
        redact_secrets=False,
        sync={"url": "http://sync.test"},
        sync_transport=server,
    )
    secrets = " ".join(text for text, _ in PLANTED.values())
    await a.run(f"my keys: {secrets}")
    assert hits(json.dumps([m.content for m in a.history]))  # here, as said
    await a.sync()
    assert hits("\n".join(server.bodies)) == []
    assert hits(await server.store.export_session("default")) == []
