"""A store's sessions seen as conversations: listed with their titles, renamed, cleared or
deleted by id (docs/storage.md, "Conversations").

The runtime calls these under its turn lock. A session other than the runtime's own is
locked too when the store is shared by processes (`SessionLocks`), so a worker's turn on it
never interleaves with its deletion. What the runtime holds of its own session is dropped by
the caller (`SessionKeeper.forget`) once the store has dropped it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from .._base import ConfigError
from ..ports import SessionLocks
from ..storage import SessionNotFound
from ._keeper import SessionKeeper

__all__ = ["MAX_TITLE_CHARS", "check_session_id", "check_title", "empty_session", "name_session"]

# A title is a line in a list, not a document.
MAX_TITLE_CHARS = 200


def check_session_id(method: str, session_id: object) -> str:
    """``session_id`` if it is a non-empty string.

    Raises:
        ConfigError: it is not.
    """
    if not isinstance(session_id, str) or not session_id:
        raise ConfigError(f"{method}() takes a session id (a non-empty str), got {session_id!r}")
    return session_id


def check_title(title: object) -> str | None:
    """``title`` with its outer spaces trimmed, or None (no title).

    Raises:
        ConfigError: it is not a string, is blank, or is longer than `MAX_TITLE_CHARS`.
    """
    if title is None:
        return None
    if not isinstance(title, str) or not title.strip():
        raise ConfigError(f"a session title is a non-blank str or None, got {title!r}")
    trimmed = title.strip()
    if len(trimmed) > MAX_TITLE_CHARS:
        raise ConfigError(
            f"a session title holds at most {MAX_TITLE_CHARS} characters, got {len(trimmed)}"
        )
    return trimmed


@contextlib.asynccontextmanager
async def _other_session_lock(keeper: SessionKeeper, session_id: str) -> AsyncIterator[None]:
    # The runtime's own session is already locked by the runtime's turn lock.
    store = keeper.storage
    if session_id == keeper.session_id or not isinstance(store, SessionLocks):
        yield
        return
    async with store.hold_session(session_id):
        yield


async def name_session(keeper: SessionKeeper, session_id: str, title: str | None) -> None:
    """Store ``title`` with ``session_id``.

    Raises:
        SessionNotFound: the session is neither stored nor the runtime's own.
    """
    async with _other_session_lock(keeper, session_id):
        store = keeper.storage
        if session_id != keeper.session_id and await store.session_info(session_id) is None:
            raise SessionNotFound(session_id)
        await store.rename_session(session_id, title)


async def empty_session(keeper: SessionKeeper, session_id: str, *, keep: bool) -> bool:
    """Clear (``keep``) or delete ``session_id`` in the store.

    Returns:
        Whether it is the runtime's own session (the caller then drops what it holds).

    Raises:
        SessionNotFound: the session is neither stored nor the runtime's own.
    """
    own = session_id == keeper.session_id
    async with _other_session_lock(keeper, session_id):
        store = keeper.storage
        found = await (store.clear_session if keep else store.delete_session)(session_id)
    if not found and not own:
        raise SessionNotFound(session_id)
    return own
