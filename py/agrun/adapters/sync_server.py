"""The sync server: an ASGI app (Starlette) that keeps pages' sessions in a `Storage`.

A page's runtime with the ``sync`` option pulls a session from here, pushes the turns the
server lacks and takes the merged session back (the rule is in ``agrun.storage._sync``;
docs/storage.md "Sync"). Run it on PostgreSQL, so any number of server processes (and
CPython workers running the same sessions) share them::

    python -m agrun.adapters.sync_server postgresql://user@host/db --port 8765

or mount `create_sync_app` in your own ASGI app. Every call names a session and shows the
session's token (``Authorization: Bearer``); the first push of a session nobody owns
issues it. What the server stores goes through the same write gate as a runtime's (secrets
masked, refused memory entries dropped), whatever the client did.

Starlette and uvicorn are imported only here: nothing a page or ``import agrun`` loads
imports this module.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._base import json_nests_deeper
from ..kernel import gate_push
from ..ports import SessionLocks, Storage
from ..sensitive import PatternRedactor, SensitiveContentFilter
from ..storage import (
    MAX_SESSION_ID,
    StorageError,
    StorageRetryableError,
    SyncPush,
    SyncReply,
    push_commits,
)
from ..storage._transfer import MAX_DEPTH, MAX_IMPORT_BYTES
from .sync_tokens import MemoryTokens, PostgresTokens, TokenBook, digest, new_token, owns

__all__ = ["create_sync_app", "main"]


class _Refused(Exception):
    """A call answered with an error status and a typed body, nothing changed."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def create_sync_app(
    storage: Storage,
    tokens: TokenBook | None = None,
    *,
    sensitivity_filter: Callable[[Any], Any] | None = None,
    allow_origins: Sequence[str] = (),
    max_body_bytes: int = MAX_IMPORT_BYTES,
) -> Starlette:
    """The sync endpoint over ``storage``: ``POST /pull`` and ``POST /push``.

    Args:
        storage: where sessions are kept (`PostgresStorage` for more than one process).
        tokens: where session tokens' digests are kept; in memory if None (one process).
        sensitivity_filter: the host's own check, run after agrun's secret filter on every
            memory and content entry stored (as a runtime's ``sensitivity_filter``).
        allow_origins: pages on other origins allowed to call (CORS); none by default.
        max_body_bytes: the largest request body read (64 MiB, the import limit).
    """
    book = MemoryTokens() if tokens is None else tokens
    patterns = PatternRedactor()
    gate = SensitiveContentFilter(extra=sensitivity_filter, redactor=patterns)

    async def authorize(request: Request, session_id: str, *, claim: bool) -> str | None:
        """Check the caller owns ``session_id``; a push may claim one nobody owns and gets
        its new token back."""
        presented = _bearer(request)
        stored = await book.lookup(session_id)
        if stored is None:
            if await storage.session_info(session_id) is not None:
                raise _Refused(403, "sync_forbidden", "this session was not created by sync")
            if not claim:
                return None
            token = new_token()
            if await book.claim(session_id, digest(token)):
                return token
            stored = await book.lookup(session_id)  # another first push won the race
        if stored is None or not owns(stored, presented):
            raise _Refused(403, "sync_forbidden", "the token does not own this session")
        return None

    async def pull(request: Request) -> Response:
        session_id, _ = await _read(request, max_body_bytes)
        await authorize(request, session_id, claim=False)
        snapshot = await storage.load_session(session_id)
        return _answer(SyncReply(session=snapshot))

    async def push(request: Request) -> Response:
        session_id, data = await _read(request, max_body_bytes)
        try:
            wanted = SyncPush.model_validate(data)
        except ValidationError as error:
            raise _Refused(400, "sync_rejected", f"not a sync push: {error}") from None
        issued = await authorize(request, session_id, claim=True)
        gated = gate_push(wanted, mask=patterns.redact, check=gate.check)
        async with _session_lock(storage, session_id):
            before = await storage.load_session(session_id, all_events=False)
            held = set() if before is None else {turn.turn_id for turn in before.turns}
            for commit in push_commits(session_id, gated):
                await storage.commit_turn(commit)
            after = await storage.load_session(session_id)
        pushed = [turn.turn_id for turn in gated.turns if turn.turn_id not in held]
        return _answer(SyncReply(session=after, pushed=pushed, token=issued))

    def handled(
        endpoint: Callable[[Request], Any],
    ) -> Callable[[Request], Any]:
        async def call(request: Request) -> Response:
            try:
                response: Response = await endpoint(request)
            except _Refused as refused:
                return _error(refused.status, refused.code, str(refused))
            except StorageRetryableError as error:
                return _error(503, error.code, "storage is busy or unreachable: retry")
            except StorageError as error:
                return _error(500, error.code, "storage failed")
            return response

        return call

    middleware = []
    if allow_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(allow_origins),
                allow_methods=["POST"],
                allow_headers=["authorization", "content-type"],
            )
        )
    return Starlette(
        routes=[
            Route("/pull", handled(pull), methods=["POST"]),
            Route("/push", handled(push), methods=["POST"]),
        ],
        middleware=middleware,
    )


@contextlib.asynccontextmanager
async def _session_lock(storage: Storage, session_id: str) -> AsyncIterator[None]:
    """The session's turn lock where the store has one (PostgreSQL): a push is written as
    one block against other server processes' pushes and workers' turns."""
    if isinstance(storage, SessionLocks):
        async with storage.hold_session(session_id):
            yield
    else:
        yield


async def _read(request: Request, limit: int) -> tuple[str, dict[str, Any]]:
    """The body's ``sessionId`` and the rest, checked before it is parsed."""
    chunks: list[bytes] = []
    size = 0
    # Read as it streams, so a body over the limit is refused without being held whole.
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _Refused(413, "sync_rejected", f"the body is over {limit} bytes")
        chunks.append(chunk)
    text = b"".join(chunks).decode("utf-8", "replace")
    if json_nests_deeper(text, MAX_DEPTH):
        raise _Refused(400, "sync_rejected", f"the body nests deeper than {MAX_DEPTH} levels")
    try:
        data = json.loads(text)
    except ValueError:
        raise _Refused(400, "sync_rejected", "the body is not JSON") from None
    if not isinstance(data, dict):
        raise _Refused(400, "sync_rejected", "the body is not a JSON object")
    session_id = data.pop("sessionId", None)
    if not isinstance(session_id, str) or not 0 < len(session_id) <= MAX_SESSION_ID:
        raise _Refused(400, "sync_rejected", "sessionId must be a string of 1-256 characters")
    return session_id, data


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _answer(reply: SyncReply) -> Response:
    return Response(
        json.dumps(reply.to_wire(), separators=(",", ":")), media_type="application/json"
    )


def _error(status: int, code: str, message: str) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m agrun.adapters.sync_server URL``: serve sync with uvicorn on PostgreSQL."""
    import uvicorn

    from .postgres import PostgresStorage

    parser = argparse.ArgumentParser(description="agrun's sync server (docs/storage.md)")
    parser.add_argument("conninfo", help="the PostgreSQL URL: postgresql://user@host/db")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--allow-origin", action="append", default=[], dest="origins")
    args = parser.parse_args(argv)
    app = create_sync_app(
        PostgresStorage(args.conninfo), PostgresTokens(args.conninfo), allow_origins=args.origins
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
