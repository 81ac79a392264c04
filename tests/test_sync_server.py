"""Sync: runtimes on their own stores (a phone's, a laptop's) syncing one session through the
sync server (agrun.adapters.sync_server) on a real PostgreSQL; docs/storage.md "Sync".

CPython only: the server needs Starlette and psycopg. The app is called in process through
httpx's ASGI transport, and once through uvicorn over a real socket.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import agrun
from agrun.storage import MemoryStorage, SyncError, SyncForbidden, TurnCommit
from agrun.testing import FixedClock
from planted_secrets import PLANTED, hits

if sys.platform != "emscripten":  # the server's side: CPython only (collected in Pyodide too)
    import httpx
    import psycopg

    from agrun.adapters.postgres import PostgresStorage
    from agrun.adapters.sync_server import create_sync_app
    from agrun.adapters.sync_tokens import PostgresTokens

pytestmark = pytest.mark.cpython_only

ROOT = Path(__file__).resolve().parent.parent
URL = "http://sync.test"


class AsgiTransport:
    """The runtime's `SyncTransport` straight into the app (no socket), counting calls."""

    def __init__(self, app: Any) -> None:
        self._client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL)
        self.calls: list[str] = []
        self.drop_push_reply = False

    async def post(self, url: str, body: str, headers: Mapping[str, str]) -> tuple[int, str]:
        self.calls.append(url.rsplit("/", 1)[-1])
        response = await self._client.post(url, content=body, headers=dict(headers))
        if self.drop_push_reply and url.endswith("/push"):
            # The server did the work; the answer is lost on the way (a dropped connection).
            self.drop_push_reply = False
            raise SyncError("connection reset")
        return response.status_code, response.text


@pytest.fixture
def server(postgres_conninfo: str) -> Iterator[tuple[PostgresStorage, Any]]:
    store = PostgresStorage(postgres_conninfo)
    app = create_sync_app(store, PostgresTokens(postgres_conninfo))
    yield store, app


def device(app: Any, session: str = "chat", token: str | None = None) -> agrun.Runtime:
    """A runtime with a store of its own (one browser), random run ids as in a page."""
    return agrun.create_runtime(
        clock=FixedClock(),
        storage=MemoryStorage(),
        session_id=session,
        sync={"url": URL, "token": token},
        sync_transport=AsgiTransport(app),
    )


async def turn_ids(store: Any, session: str = "chat") -> list[str]:
    snapshot = await store.load_session(session)
    return [] if snapshot is None else [turn.turn_id for turn in snapshot.turns]


def said(runtime: agrun.Runtime) -> list[str]:
    return [m.content or "" for m in runtime.history if m.role == "user"]


async def test_two_devices_offline_then_online_hold_the_same_session(server: Any) -> None:
    store, app = server
    laptop = device(app)
    await laptop.run("one")
    first = await laptop.sync()
    assert first.token and len(first.pushed) == 1 and first.pulled == ()
    phone = device(app, token=first.token)
    got = await phone.sync()
    assert got.pushed == () and got.pulled == first.pushed and said(phone) == ["one"]

    # Both offline: each writes turns the other and the server do not have.
    await laptop.run("laptop a")
    await laptop.run("laptop b")
    await phone.run("phone a")

    back = await laptop.sync()
    assert len(back.pushed) == 2 and back.pulled == ()
    merged = await phone.sync()
    assert len(merged.pushed) == 1 and merged.pulled == back.pushed
    last = await laptop.sync()
    assert last.pushed == () and last.pulled == merged.pushed

    # The rule: the server's order, which is the order the pushes reached it.
    expected = ["one", "laptop a", "laptop b", "phone a"]
    assert said(laptop) == said(phone) == expected
    server_ids = await turn_ids(store)
    assert len(server_ids) == len(set(server_ids)) == 4
    for runtime in (laptop, phone):
        assert await turn_ids(runtime._keeper.storage) == server_ids  # type: ignore[union-attr]
    exports = {await r.export_session() for r in (laptop, phone)}
    assert exports == {await store.export_session("chat")}
    # And the next turn goes on from the merged session, on either device.
    await phone.run("after")
    assert said(phone)[-1] == "after" and len(phone.history) == 10


async def test_a_retried_push_stores_each_turn_once(server: Any) -> None:
    store, app = server
    laptop = device(app)
    await laptop.run("one")
    await laptop.sync()
    await laptop.run("two")
    transport = laptop._sync._transport  # type: ignore[union-attr]
    transport.drop_push_reply = True
    with pytest.raises(SyncError):
        await laptop.sync()
    assert len(await turn_ids(store)) == 2  # stored, though the page never heard
    again = await laptop.sync()
    assert again.pushed == () and again.pulled == ()
    assert len(await turn_ids(store)) == 2
    assert await turn_ids(laptop._keeper.storage) == await turn_ids(store)  # type: ignore[union-attr]


async def test_the_endpoint_refuses_a_session_the_caller_does_not_own(server: Any) -> None:
    store, app = server
    laptop = device(app)
    await laptop.run("mine")
    token = (await laptop.sync()).token
    for wrong in (None, "x" * 43, token[:-1] + ("A" if token[-1] != "A" else "B")):  # type: ignore[index]
        intruder = device(app, token=wrong)
        await intruder.run("theirs")
        with pytest.raises(SyncForbidden) as refused:
            await intruder.sync()
        assert refused.value.code == "sync_forbidden"
        assert said(intruder) == ["theirs"]  # nothing taken from, or given to, the server
    assert await turn_ids(store) == await turn_ids(laptop._keeper.storage)  # type: ignore[union-attr]

    # A raw call gets a typed 403 body; a session a worker created directly is owned by none.
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL) as client:
        reply = await client.post(
            "/pull", json={"sessionId": "chat"}, headers={"authorization": "Bearer nope"}
        )
        assert reply.status_code == 403 and reply.json()["error"]["code"] == "sync_forbidden"
        await store.commit_turn(TurnCommit(session_id="worker", turn_id="w1"))
        reply = await client.post("/push", json={"sessionId": "worker", "turns": []})
        assert reply.status_code == 403
        small = create_sync_app(store, max_body_bytes=1000)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=small), base_url=URL
        ) as limited:
            reply = await limited.post("/pull", json={"sessionId": "chat", "pad": "x" * 1000})
            assert reply.status_code == 413
        reply = await client.post("/push", content=b"[1]")
        assert reply.status_code == 400 and reply.json()["error"]["code"] == "sync_rejected"


async def test_two_first_pushes_of_one_session_issue_one_token(server: Any) -> None:
    store, app = server
    a, b = device(app, "race"), device(app, "race")
    await a.run("a")
    await b.run("b")
    outcomes = await asyncio.gather(a.sync(), b.sync(), return_exceptions=True)
    won = [o for o in outcomes if isinstance(o, agrun.kernel.SyncResult)]
    lost = [o for o in outcomes if isinstance(o, SyncForbidden)]
    assert len(won) == len(lost) == 1 and won[0].token
    assert len(await turn_ids(store, "race")) == 1


async def test_secrets_never_reach_the_servers_rows(server: Any, postgres_conninfo: str) -> None:
    store, app = server
    secrets = [text for text, _ in PLANTED.values()]
    laptop = device(app)
    await laptop.run("hello")
    # Planted past the runtime's door, as an older writer or a hand edit could have left
    # them in the page's store: the page's gate must mask them before they leave.
    local = laptop._keeper.storage  # type: ignore[union-attr]
    await local.commit_turn(
        TurnCommit(
            session_id="chat",
            turn_id="planted",
            messages=[{"id": "m-planted", "role": "user", "content": " ".join(secrets)}],
            memory_entries=[{"id": "e-planted", "kind": "note", "text": secrets[0]}],
        )
    )
    pushed = await laptop.sync()
    assert "planted" in pushed.pushed
    # A client that skips the page's gate: the server gates what it stores itself.
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL) as client:
        raw = {
            "sessionId": "chat",
            "turns": [
                {
                    "seq": 1,
                    "turnId": "raw",
                    "messages": [{"id": "m-raw", "role": "user", "content": " ".join(secrets)}],
                    "memoryEntries": [{"id": "e-raw", "kind": "note", "text": secrets[1]}],
                }
            ],
            "sessionMemory": {"note": secrets[2]},
        }
        reply = await client.post(
            "/push", json=raw, headers={"authorization": f"Bearer {pushed.token}"}
        )
        assert reply.status_code == 200 and reply.json()["pushed"] == ["raw"]
    rows = []
    with psycopg.connect(postgres_conninfo) as conn:
        for (table,) in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall():
            rows += [json.dumps(r, default=str) for r in conn.execute(f"SELECT * FROM {table}")]
    assert len(rows) > 5
    stored = "\n".join(rows)
    assert hits(stored) == []
    snapshot = await store.load_session("chat")
    assert snapshot is not None
    assert [t.turn_id for t in snapshot.turns] == [*(await turn_ids(local))[:2], "raw"]
    assert all(not t.memory_entries for t in snapshot.turns[1:])  # refused, dropped


async def test_over_uvicorn_with_the_default_http_stack(postgres_conninfo: str) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from sync_serve import serving_sync
    finally:
        sys.path.remove(str(ROOT / "tools"))
    with serving_sync(postgres_conninfo) as url:
        laptop = agrun.create_runtime(storage=MemoryStorage(), sync={"url": url})
        await laptop.run("over http")
        got = await laptop.sync()
        phone = agrun.create_runtime(storage=MemoryStorage(), sync={"url": url, "token": got.token})
        assert (await phone.sync()).pulled == got.pushed and said(phone) == ["over http"]
    unreachable = agrun.create_runtime(storage=MemoryStorage(), sync={"url": url})
    await unreachable.run("x")
    with pytest.raises(SyncError, match="could not be reached"):
        await unreachable.sync()


async def test_sync_needs_the_option_and_storage() -> None:
    with pytest.raises(agrun.ConfigError, match="sync\\(\\) needs the sync option"):
        await agrun.create_runtime(storage=MemoryStorage()).sync()
    with pytest.raises(agrun.ConfigError, match="sync needs storage"):
        agrun.create_runtime(sync={"url": URL})
    with pytest.raises(agrun.ConfigError, match="url"):
        agrun.create_runtime(storage=MemoryStorage(), sync={"url": "ftp://x"})
