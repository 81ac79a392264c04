"""The message window inside a build: admitted newest first as one contiguous suffix.

Units (a message and the tool results answering it) are kept or dropped whole; the
current request's unit is already in the pack (it is protected, even when it lies
before the cursor); duplicates of a later tool round trip and tool results whose call
lies before the window are left out. The recent turns come first; older units may take
only a share of what is left until L2 memory and the conversation summary have had
their turn, then the rest.

Older turns the recall stage brought back (``_recall``) lie below the window as L2
entries. If the window later reaches one of them with budget to spare, it takes the whole
message into the window and the recalled entry goes back out, so the window stays a
contiguous suffix and no message is in the pack twice; runs left out around recalled
messages are reported as dropped, each run on its own.

Positions are indexes into the whole message log; the walk never goes below the
window's start (``plan.start``, the cursor).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._item import Item
from ._ledger import Ledger
from ._pack import CompressionRecord, DropReason
from ._plan import Plan
from ._request import Message
from ._summary import summarize
from ._window import is_said_by_person, wire_units

__all__ = ["Transcript"]

_Unit = tuple[int, int, list[Item] | None, int]


class Transcript:
    """One build's walk down the message window, newest unit first."""

    def __init__(self, plan: Plan, ledger: Ledger) -> None:
        self.plan = plan
        self.ledger = ledger
        self.messages = plan.messages
        self.units = wire_units(self.messages, plan.start)
        self.closed = False
        self.pending: _Unit | None = None
        self.recent_left = plan.req.options.keep_recent_turns
        self.seen: set[tuple[Any, ...]] = set()
        self.kept_from = len(self.messages)
        self.recalled: dict[int, list[Item]] = {}
        """Recalled messages below the window, by position, with their entries."""
        self.closed_at: int | None = None
        """Where the window closed on a unit that did not fit, until `finish` reports it."""
        self.orphans: list[tuple[int, int]] = []
        """The units taken back out of the window's head, oldest first, until `finish`
        reports them."""
        self.held: Item | None = None
        """The room held for the L2 summary until the window is done (`reserve_summary`)."""
        self.summary_records: list[CompressionRecord] = []
        """The compressions of the summary last written."""
        self.summarized: frozenset[str] = frozenset()
        """The messages the placed summary speaks for (recall leaves them to it)."""
        self.taken: list[tuple[int, list[Item] | None]] = []
        """The window's units as admitted, newest first: where each starts, and its items
        (None for the current request's unit, which is protected)."""

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
        head = self.messages[start]
        if head.role != "assistant" or head.content or not head.tool_calls or end - start < 2:
            return None
        calls = tuple(
            (c.name, c.arguments if isinstance(c.arguments, str) else repr(c.arguments))
            for c in head.tool_calls
        )
        return (calls, tuple(m.content for m in self.messages[start + 1 : end]))

    def _next(self) -> _Unit | None:
        if self.pending is not None:
            unit, self.pending = self.pending, None
            return unit
        plan, ledger = self.plan, self.ledger
        for start, end in self.units:
            # Orphans and duplicates are dropped without leaving this loop: it can walk a
            # long stretch of the log, so it asks whether to stop.
            plan.checkpoint.step()
            if start < plan.anchor_end and plan.anchor < end:
                # The current request's unit (or, when the request lies just before the
                # cursor, the part of it inside the window) is in the pack already.
                return (start, end, None, 0)
            if self.messages[start].role == "tool":
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
            return (start, end, items, sum(plan.counted(item) for item in items))
        return None

    def _admit_until(self, cap: int, *, recent: bool) -> None:
        ledger = self.ledger
        while not self.closed and not (recent and self.recent_left <= 0):
            unit = self._next()
            if unit is None:
                self.closed = True
                self._open_on_a_turn()
                return
            start, end, items, cost = unit
            if items is not None:
                # A recalled message the window reaches is held whole here instead.
                freed = self.recalled.get(start, [])
                if ledger.used + cost - sum(item.tokens for item in freed) > cap:
                    if cap < ledger.available:
                        self.pending = unit
                    else:
                        self._close(end)
                    return
                if freed:
                    ledger.remove(freed)
                    del self.recalled[start]
                ledger.take(items)
            self.taken.append((start, items))
            self.kept_from = start
            if recent and is_said_by_person(self.messages[start]):
                self.recent_left -= 1

    def _drop(self, start: int, end: int, reason: DropReason) -> None:
        messages = self.messages
        self.ledger.drop("message", reason, messages[start].id, messages[end - 1].id, end - start)
        if reason == "over_budget":
            self.ledger.truncate("L0", messages[start].id)

    def _close(self, end: int) -> None:
        """Nothing before ``end`` joins the window; `finish` reports it."""
        self.closed = True
        self.closed_at = end
        self._open_on_a_turn()

    def _open_on_a_turn(self) -> None:
        """Once the window is closed, make it open on a user-role message (a person's turn,
        or one of the library's frames) or on a tool call of the current turn's own loop,
        never on an assistant's reply or call whose question was left out: chat templates
        that require the roles to alternate refuse ``[system, assistant, user, ...]``. The
        messages taken back out are reported as ``orphan_reply``; their tokens go to the
        stages after this one.

        A current request below the window is placed before it and opens it; a window
        with nothing that could open it (no request, no call) is left as it is."""
        plan, taken = self.plan, self.taken
        if 0 <= plan.anchor < self.kept_from or not any(self._opens(start) for start, _ in taken):
            return
        while not self._opens(taken[-1][0]):
            start, items = taken.pop()
            assert items is not None  # the current request's unit opens with a person
            self.ledger.remove(items)
            self.orphans.append((start, start + len(items)))  # `finish` reports, after recall
        self.kept_from = taken[-1][0]

    def _opens(self, start: int) -> bool:
        """Whether the unit at ``start`` may open the window: a user-role message, or an
        assistant's tool call of the current turn (at or after its request)."""
        message = self.messages[start]
        if message.role != "assistant":
            return True
        return bool(message.tool_calls) and (self.plan.anchor < 0 or start >= self.plan.anchor)

    def finish(self) -> None:
        """Report what the window left out when it closed: everything before the misfit
        except the current request's unit and the recalled messages is over budget, one run
        per stretch between them, newest first. Called once the build has admitted all it
        will: recall may still take a turn from below the window after it closed (a reply
        taken out of the window's head too: then it is recalled, not dropped)."""
        orphans, self.orphans = self.orphans, []
        if orphans:
            # Only the units taken out: a duplicate the walk dropped between them (or
            # above them) is reported already, so no message is in two runs.
            lo, hi = orphans[0][0], orphans[-1][1]
            between = set(range(lo, hi)).difference(*(range(a, b) for a, b in orphans))
            self._drop_around(lo, hi, sorted(between.union(self.recalled)), "orphan_reply")
        end = self.closed_at
        if end is None:
            return
        self.closed_at = None
        plan = self.plan
        start, anchor, anchor_end = plan.start, plan.anchor, plan.anchor_end
        kept = sorted(p for p in self.recalled if start <= p < end)
        if anchor >= 0 and anchor < end and anchor_end > start:
            kept.extend(range(max(anchor, start), min(anchor_end, end)))
            kept.sort()
        self._drop_around(start, end, kept, "over_budget")

    def _drop_around(self, start: int, end: int, kept: list[int], reason: DropReason) -> None:
        """Report ``start:end`` dropped for ``reason``, less the positions in ``kept``
        (sorted): one run per stretch between them, newest first."""
        run_end = end
        for position in reversed(kept):
            if position < start or position >= run_end:
                continue
            if position + 1 < run_end:
                self._drop(position + 1, run_end, reason)
            run_end = position
        if run_end > start:
            self._drop(start, run_end, reason)

    def reserve_summary(self) -> None:
        """Hold the L2 summary's place at its priority, while the window is still open.

        The summary may only say what the window leaves out, and the window takes more
        after this (`admit_rest`), so the summary is written at the end (`place_summary`)
        and here only its room is held: what a summary of the messages below the window
        costs now. The room is worked out without ``replay``, so a replayed build holds the
        same room and admits the same window."""
        item = self._summarize(replay={})
        if item is None:
            return
        if self.ledger.admit(item):
            self.held = item
        else:
            self.ledger.drop("summary", "over_budget", item.sources[0], item.sources[-1])
            self.ledger.truncate("L2", item.sources[0])

    def place_summary(self) -> None:
        """Write the summary of what the window left out into the room held for it; its
        lines are the only conversation compressions recorded."""
        held, self.held = self.held, None
        if held is None:
            return
        self.ledger.remove((held,))
        limit = self.plan.req.options.summary_max_tokens
        while limit > 0:
            item = self._summarize(replay=self.plan.replay, limit=limit)
            if item is None:
                return
            if item.tokens <= held.tokens:
                self.summarized = frozenset(item.sources)
                self.ledger.take((item,))
                self.ledger.records.extend(self.summary_records)
                return
            limit -= item.tokens - held.tokens

    def _summarize(
        self, *, replay: Mapping[tuple[str, str], CompressionRecord], limit: int | None = None
    ) -> Item | None:
        """The L2 summary of the newest messages below the window, counted, or None."""
        plan = self.plan
        options = plan.req.options
        if not options.summary_max_tokens or "L2" not in options.layers:
            return None
        picked: list[Message] = []
        floor = max(self.kept_from - 8 * options.summary_scan, plan.start)
        for index in range(self.kept_from - 1, floor - 1, -1):
            plan.checkpoint.step()
            if (
                plan.anchor <= index < plan.anchor_end
                or len(picked) >= options.summary_scan
                or index in self.recalled
            ):
                continue
            message = self.messages[index]
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
            limit=options.summary_max_tokens if limit is None else limit,
            tokenizer=plan.tok,
            ranker=plan.ranker,
            redactor=plan.redactor,
            replay=replay,
        )
        if not content:
            return None
        self.summary_records = records
        item = Item("L2", "summary", content, sources, (2, 2, 0, 0), compressed=True)
        plan.count(item)
        return item
