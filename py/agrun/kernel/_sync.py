"""A runtime's session synced with a server: pull, push what the server lacks, take its session.

The merge rule is the two tabs' rule (``agrun.storage._sync``; docs/storage.md "Sync"): the
server numbers turns in the order pushes reach it and writes a turn id once, and the page
then holds the server's session whole. What leaves the page goes through the runtime's
write gate first (`gate_push`), and a server runs the same gate on what it stores.

All I/O goes through the `SyncTransport` port; the runtime calls `SessionSync.run` under its
turn lock (and a page under the session's Web Lock), so no turn of this runtime or of
another tab commits between the push and the take-up.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from .._base import StorageError, json_nests_deeper
from ..ports import SyncTransport
from ..sensitive import Verdict
from ..storage import (
    StoredTurn,
    SyncError,
    SyncForbidden,
    SyncPush,
    SyncReply,
    dump_session,
    push_for,
)
from ..storage._transfer import MAX_DEPTH, MAX_IMPORT_BYTES
from ._driver import redact_data
from ._keeper import SessionKeeper

__all__ = ["SessionSync", "SyncResult", "gate_push"]


@dataclass(frozen=True, slots=True)
class SyncResult:
    """What one sync did: turn ids the server stored for the first time (``pushed``), turn
    ids this runtime took from the server (``pulled``), and the session's token (keep it:
    every later sync of the session, from any device, must show it)."""

    pushed: tuple[str, ...]
    pulled: tuple[str, ...]
    token: str | None

    def to_wire(self) -> dict[str, Any]:
        return {"pushed": list(self.pushed), "pulled": list(self.pulled), "token": self.token}


def gate_push(
    push: SyncPush, *, mask: Callable[[str], str], check: Callable[[Any], Verdict]
) -> SyncPush:
    """``push`` with no secret in it: every text masked (messages, events, snapshots,
    ``lastRun``), and the memory entries and content entries the write gate refuses
    dropped (a content body is kept whole or not at all: its digest covers it)."""
    turns = [
        StoredTurn(
            seq=turn.seq,
            turn_id=turn.turn_id,
            committed_at_ms=turn.committed_at_ms,
            messages=redact_data(turn.messages, mask),
            events=redact_data(turn.events, mask),
            memory_entries=[
                redact_data(entry, mask) for entry in turn.memory_entries if check(entry).allowed
            ],
        )
        for turn in push.turns
    ]
    return SyncPush(
        turns=turns,
        session_memory=_masked(push.session_memory, mask),
        inquiry=_masked(push.inquiry, mask),
        content_entries=[
            entry
            for entry in push.content_entries
            if check(entry).allowed and redact_data(entry, mask) == entry
        ],
        last_run=_masked(push.last_run, mask),
    )


def _masked(value: dict[str, Any] | None, mask: Callable[[str], str]) -> dict[str, Any] | None:
    return None if value is None else redact_data(value, mask)


class SessionSync:
    """Syncs one session with the server at ``url``, holding the session's token."""

    def __init__(
        self,
        *,
        url: str,
        token: str | None,
        transport: SyncTransport,
        mask: Callable[[str], str],
        check: Callable[[Any], Verdict],
    ) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self._transport = transport
        self._mask = mask
        self._check = check

    async def run(self, keeper: SessionKeeper) -> SyncResult:
        """Pull the server's session, push the turns it lacks, take up the merged session.

        Raises:
            SyncForbidden: the server refused the token; nothing changed.
            SyncError: the server could not be reached or failed, or local storage has
                commits still waiting; nothing local changed.
        """
        if keeper.pending:
            raise SyncError(
                f"{keeper.pending} turn(s) are not in local storage yet (it is failing): "
                "sync again once storage_status() shows no pending commits"
            )
        sid = keeper.session_id
        local = await keeper.storage.load_session(sid)
        remote = (await self._call("pull", {"sessionId": sid})).session
        pushed: tuple[str, ...] = ()
        push = SyncPush() if local is None else push_for(local, remote)
        if push.turns:
            gated = gate_push(push, mask=self._mask, check=self._check)
            reply = await self._call("push", {"sessionId": sid, **gated.to_wire()})
            if reply.token is not None:
                self.token = reply.token
            remote, pushed = reply.session, tuple(reply.pushed)
        held = [] if local is None else [turn.turn_id for turn in local.turns]
        if remote is None or [turn.turn_id for turn in remote.turns] == held:
            return SyncResult(pushed, (), self.token)
        lost = set(held) - {turn.turn_id for turn in remote.turns}
        if lost:
            # Taking the server's session now would drop them here: keep ours, say so.
            raise SyncError(f"the server did not store {len(lost)} turn(s) of this session")
        pulled = tuple(t.turn_id for t in remote.turns if t.turn_id not in set(held))
        try:
            await keeper.import_(dump_session(remote), replace=True)
        except StorageError as error:
            raise SyncError(f"the server's session could not be stored here: {error}") from None
        return SyncResult(pushed, pulled, self.token)

    async def _call(self, action: str, body: dict[str, Any]) -> SyncReply:
        headers = {"content-type": "application/json"}
        if self.token is not None:
            headers["authorization"] = f"Bearer {self.token}"
        status, text = await self._transport.post(
            f"{self.url}/{action}", json.dumps(body, separators=(",", ":")), headers
        )
        if status == 403:
            raise SyncForbidden(
                f"the sync server refused session {body['sessionId']!r}: {_said(text)}"
            )
        if status != 200:
            raise SyncError(f"the sync server answered {status} to {action}: {_said(text)}")
        return _reply(text)


def _reply(text: str) -> SyncReply:
    if len(text) > MAX_IMPORT_BYTES or json_nests_deeper(text, MAX_DEPTH):
        raise SyncError("the sync server's reply is too large or too deep")
    try:
        return SyncReply.model_validate(json.loads(text))
    except (ValueError, ValidationError) as error:
        raise SyncError(f"the sync server's reply is not a sync reply: {error}") from None


def _said(text: str) -> str:
    """The error message a server's JSON body gives, else the start of the body."""
    try:
        error = json.loads(text)["error"]
        return str(error["message"])[:300]
    except (ValueError, KeyError, TypeError):
        return text[:300]
