"""What crosses between a page's session and a sync server, and the rule that merges them.

The rule is the one two tabs on one session follow (docs/storage.md "Sync"): the store, here
the server, numbers turns in the order their commits reach it, and a turn id it already
holds is written once. So a push appends the turns the server lacks, in the order the page
committed them, after whatever other devices pushed meanwhile, and the page then takes the
server's session whole, as a tab takes up what another tab committed. A session's
snapshots (session memory, inquiry, ``lastRun``) are those of the last turn committed;
content entries are upserted by ref. Nothing here does I/O.

Wire (JSON, camelCase), one session per request, ``Authorization: Bearer <token>``:

    POST <url>/sessions/<id>/pull   {}                 -> SyncReply (token: null)
    POST <url>/sessions/<id>/push   SyncPush           -> SyncReply (token on the first push)
    403 {"error": {"code": "sync_forbidden", ...}}     the token does not own the session
"""

from __future__ import annotations

from pydantic import Field

from ._errors import StorageError
from ._records import JsonObject, Record, SessionSnapshot, StoredTurn, TurnCommit, TurnId

__all__ = [
    "SyncError",
    "SyncForbidden",
    "SyncPush",
    "SyncReply",
    "push_commits",
    "push_for",
]


class SyncError(StorageError):
    """The sync server could not be reached, failed, or answered something that is not a
    sync reply; nothing local changed (turns already pushed stay pushed: a retry skips them)."""

    code = "sync_failed"


class SyncForbidden(SyncError):
    """The server refused the session: the token given does not own it (or none was given
    for a session someone owns). Nothing changed on either side."""

    code = "sync_forbidden"


class SyncPush(Record):
    """Turns a page holds and the server lacks, in the page's order, with the page's
    current snapshots (they go with the last of those turns)."""

    turns: list[StoredTurn] = Field(default_factory=list)
    session_memory: JsonObject | None = None
    inquiry: JsonObject | None = None
    content_entries: list[JsonObject] = Field(default_factory=list)
    last_run: JsonObject | None = None


class SyncReply(Record):
    """The server's answer: its whole session after the call (None: it holds none), the
    turn ids this push stored for the first time, and the session's token when this call
    issued it (the first push of a session nobody owned)."""

    session: SessionSnapshot | None = None
    pushed: list[TurnId] = Field(default_factory=list)
    token: str | None = None


def push_for(local: SessionSnapshot, remote: SessionSnapshot | None) -> SyncPush:
    """What ``local`` has to send a server holding ``remote``: its turns the server lacks."""
    known = set() if remote is None else {turn.turn_id for turn in remote.turns}
    turns = [turn for turn in local.turns if turn.turn_id not in known]
    if not turns:
        return SyncPush()
    return SyncPush(
        turns=turns,
        session_memory=local.session_memory,
        inquiry=local.inquiry,
        content_entries=local.content_entries,
        last_run=local.last_run,
    )


def push_commits(session_id: str, push: SyncPush) -> list[TurnCommit]:
    """The commits a server writes for ``push``, one per turn in order; the last carries the
    snapshots and content entries (the session's are those of the last commit)."""
    commits = []
    for index, turn in enumerate(push.turns, start=1):
        last = index == len(push.turns)
        commits.append(
            TurnCommit(
                session_id=session_id,
                turn_id=turn.turn_id,
                committed_at_ms=turn.committed_at_ms,
                messages=turn.messages,
                events=turn.events,
                memory_entries=turn.memory_entries,
                session_memory=push.session_memory if last else None,
                inquiry=push.inquiry if last else None,
                content_entries=push.content_entries if last else [],
                last_run=push.last_run if last else None,
            )
        )
    return commits
