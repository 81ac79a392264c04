"""`Runtime.stream`: one turn as an async iterator of tokens, events and, last, the result."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from ..context import ContextEvent
from ._events import RuntimeEvent
from ._result import RunResult

__all__ = ["EventItem", "ResultItem", "StreamItem", "TokenItem", "stream_run"]


@dataclass(frozen=True, slots=True)
class TokenItem:
    """A piece of the model's reply, as it streamed."""

    text: str
    kind: Literal["token"] = "token"


@dataclass(frozen=True, slots=True)
class EventItem:
    """An event of the turn (the same ones subscribers get)."""

    event: RuntimeEvent | ContextEvent
    kind: Literal["event"] = "event"


@dataclass(frozen=True, slots=True)
class ResultItem:
    """The turn's result: always the last item."""

    result: RunResult
    kind: Literal["result"] = "result"


StreamItem = TokenItem | EventItem | ResultItem


async def stream_run(
    subscribe: Callable[[Callable[[RuntimeEvent | ContextEvent], object]], Callable[[], None]],
    run: Callable[[Callable[[str], None]], Awaitable[RunResult]],
) -> AsyncIterator[StreamItem]:
    """Run one turn (``run(on_token)``) and yield its items as they happen; ``subscribe``
    delivers the runtime's events meanwhile.

    Raises:
        whatever `Runtime.run` raises, when the result would come.
    """
    queue: asyncio.Queue[StreamItem | None] = asyncio.Queue()
    unsubscribe = subscribe(lambda event: queue.put_nowait(EventItem(event)))
    task = asyncio.ensure_future(run(lambda text: queue.put_nowait(TokenItem(text))))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (item := await queue.get()) is not None:
            yield item
        yield ResultItem(task.result())
    finally:
        unsubscribe()
        if not task.done():
            # The caller stopped listening: the run it started is cancelled, not orphaned.
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
