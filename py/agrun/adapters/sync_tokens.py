"""Who owns a synced session: one token per session, issued by the sync server.

The server keeps only a token's SHA-256 (a leaked table does not hand out sessions) and
compares digests with `hmac.compare_digest`, in constant time. The first push of a session
nobody owns claims it; two first pushes racing for one id claim it once (the table's
primary key decides), and the loser is refused like any wrong token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import psycopg

__all__ = ["MemoryTokens", "PostgresTokens", "TokenBook", "digest", "new_token", "owns"]


def new_token() -> str:
    """A fresh session token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def digest(token: str) -> str:
    """What is stored for ``token``."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def owns(stored: str, presented: str | None) -> bool:
    """Whether ``presented`` is the token whose digest is ``stored``, in constant time."""
    return hmac.compare_digest(stored, digest(presented or ""))


class TokenBook(Protocol):
    """Where the digests live."""

    async def lookup(self, session_id: str) -> str | None:
        """The digest of ``session_id``'s token, or None if nobody owns it."""
        ...

    async def claim(self, session_id: str, token_digest: str) -> bool:
        """Record ``token_digest`` for ``session_id`` unless someone owns it: True if so."""
        ...


class MemoryTokens:
    """Digests in a dict: one server process, gone with it (tests, a demo)."""

    def __init__(self) -> None:
        self._digests: dict[str, str] = {}

    async def lookup(self, session_id: str) -> str | None:
        return self._digests.get(session_id)

    async def claim(self, session_id: str, token_digest: str) -> bool:
        if session_id in self._digests:
            return False
        self._digests[session_id] = token_digest
        return True


class PostgresTokens:
    """Digests in ``agrun_sync_tokens`` beside the sessions, shared by every server process."""

    def __init__(self, conninfo: str) -> None:
        """Connect once to create the table if it is missing.

        Raises:
            psycopg.Error: the server could not be reached or refused.
        """
        import psycopg  # only a PostgreSQL server needs it

        self.conninfo = conninfo
        with psycopg.connect(conninfo) as connection, connection.transaction():
            # Server processes starting together would race on CREATE TABLE IF NOT EXISTS.
            connection.execute("SELECT pg_advisory_xact_lock(hashtext('agrun_sync_tokens'))")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS agrun_sync_tokens "
                "(session_id text PRIMARY KEY, token_digest text NOT NULL)"
            )

    async def _connect(self) -> psycopg.AsyncConnection[tuple[object, ...]]:
        import psycopg

        return await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)

    async def lookup(self, session_id: str) -> str | None:
        async with await self._connect() as connection:
            cursor = await connection.execute(
                "SELECT token_digest FROM agrun_sync_tokens WHERE session_id = %s", (session_id,)
            )
            row = await cursor.fetchone()
        return None if row is None else str(row[0])

    async def claim(self, session_id: str, token_digest: str) -> bool:
        async with await self._connect() as connection:
            cursor = await connection.execute(
                "INSERT INTO agrun_sync_tokens (session_id, token_digest) VALUES (%s, %s) "
                "ON CONFLICT (session_id) DO NOTHING",
                (session_id, token_digest),
            )
            return cursor.rowcount == 1
