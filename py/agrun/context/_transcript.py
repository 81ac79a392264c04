"""The message window inside a build: admitted newest first as one contiguous suffix.

Units (a message and the tool results answering it) are kept or dropped whole; the
current request's unit is already in the pack (it is protected); duplicates of a later
tool round trip and tool results whose call lies before the window are left out. The
recent turns come first; older units may take only a share of what is left until L2
memory and the conversation summary have had their turn, then the rest.
"""

from __future__ import annotations

from typing import Any

from ._item import Item
from ._ledger import Ledger
from ._pack import DropReason
from ._plan import Plan
from ._request import Message
from ._summary import summarize
from ._window import is_said_by_person, wire_units

__all__ = ["Transcript", "unit_end"]

_Unit = tuple[int, int, list[Item] | None, int]


class Transcript:
    """One build's walk down the message window, newest unit first."""

    def __init__(self, plan: Plan, ledger: Ledger) -> None:
        self.plan = plan
        self.ledger = ledger
        self.window = plan.window
        self.units = wire_units(self.window)
        self.closed = False
        self.pending: _Unit | None = None
        self.recent_left = plan.req.options.keep_recent_turns
        self.seen: set[tuple[Any, ...]] = set()
        self.kept_from = len(self.window)

    def admit_recent(self) -> None:
        """The most recent turns (each opened by a person), while they fit."""
        self._admit_until(self.ledger.available, recent=True)

    def admit_older(self, share: float) -> None:
        """Older units, up to ``share`` of the budget still free."""
        used = self.ledger.used
        self._admit_until(used + int(share * (self.ledger.available - used)), recent=False)

    def admit_rest(self) -> None:
        """Older units while they fit; everything older than the first misfit is dropped."""
        self._admit_until(self.ledger.available, recent=False)

    def _key(self, start: int, end: int) -> tuple[Any, ...] | None:
        head = self.window[start]
        if head.role != "assistant" or head.content or not head.tool_calls or end - start < 2:
            return None
        calls = tuple(
            (c.name, c.arguments if isinstance(c.arguments, str) else repr(c.arguments))
            for c in head.tool_calls
        )
        return (calls, tuple(m.content for m in self.window[start + 1 : end]))

    def _next(self) -> _Unit | None:
        if self.pending is not None:
            unit, self.pending = self.pending, None
            return unit
        plan, ledger = self.plan, self.ledger
        for start, end in self.units:
            if start <= plan.anchor < end:
                return (start, end, None, 0)
            if self.window[start].role == "tool":
                self._drop(start, end, "orphan_tool_result")
                continue
            key = self._key(start, end)
            if key is not None:
                ledger.dedup_checked += 1
                if key in self.seen:
                    ledger.dedup_hits += 1
                    self._drop(start, end, "duplicate")
                    continue
                self.seen.add(key)
            items = [plan.message_item(ledger, i) for i in range(start, end)]
            return (start, end, items, sum(plan.count(item) for item in items))
        return None

    def _admit_until(self, cap: int, *, recent: bool) -> None:
        ledger = self.ledger
        while not self.closed and not (recent and self.recent_left <= 0):
            unit = self._next()
            if unit is None:
                self.closed = True
                return
            start, end, items, cost = unit
            if items is not None:
                if ledger.used + cost > cap:
                    if cap < ledger.available:
                        self.pending = unit
                    else:
                        self._close(end)
                    return
                ledger.take(items)
            self.kept_from = start
            if recent and is_said_by_person(self.window[start]):
                self.recent_left -= 1

    def _drop(self, start: int, end: int, reason: DropReason) -> None:
        window = self.window
        self.ledger.drop("message", reason, window[start].id, window[end - 1].id, end - start)
        if reason == "over_budget":
            self.ledger.truncate("L0", window[start].id)

    def _close(self, end: int) -> None:
        """Everything before ``end`` except the current request's unit is over budget."""
        self.closed = True
        anchor = self.plan.anchor
        if 0 <= anchor < end:
            anchor_end = unit_end(self.window, anchor)
            if anchor_end < end:
                self._drop(anchor_end, end, "over_budget")
            if anchor > 0:
                self._drop(0, anchor, "over_budget")
        elif end > 0:
            self._drop(0, end, "over_budget")

    def summary(self) -> Item | None:
        """The L2 summary of the newest messages not (yet) in the pack, if any."""
        plan = self.plan
        options = plan.req.options
        if not options.summary_max_tokens or "L2" not in options.layers:
            return None
        picked: list[Message] = []
        anchor_end = unit_end(self.window, plan.anchor) if plan.anchor >= 0 else -1
        floor = max(self.kept_from - 8 * options.summary_scan, 0)
        for index in range(self.kept_from - 1, floor - 1, -1):
            if plan.anchor <= index < anchor_end or len(picked) >= options.summary_scan:
                continue
            message = self.window[index]
            if message.content and (
                is_said_by_person(message)
                or (message.role == "assistant" and not message.tool_calls)
            ):
                picked.append(message)
        if not picked:
            return None
        content, sources, records = summarize(
            picked[::-1],
            query=plan.query,
            limit=options.summary_max_tokens,
            tokenizer=plan.tok,
            ranker=plan.ranker,
            redactor=plan.redactor,
            replay=plan.replay,
        )
        if not content:
            return None
        self.ledger.records.extend(records)
        item = Item("L2", "summary", content, sources, (2, 2, 0, 0), compressed=True)
        plan.count(item)
        return item


def unit_end(window: Any, start: int) -> int:
    """End of the wire unit that starts at ``start``: past the tool results after it."""
    end = start + 1
    while end < len(window) and window[end].role == "tool":
        end += 1
    return end
