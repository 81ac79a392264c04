"""`replay_provider`: a model that answers with a recorded session's replies (issue 22.4).

Spec 001 section 13's inference-skipping replay: packs are still built (so budget logic,
ranking and compression are checked) but no model is called. A session export carries,
per model call, the request's shape and the reply (the run traces, `kernel/_trace.py`);
`ReplayProvider` hands the replies back in order, after checking each request matches the
recorded one. The first call that differs is a `ReplayDiverged` naming it and how, so a
test of a user's own agent (pytest, Playwright) runs a recorded conversation offline and
fails on the first change in what the model would have been sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal

from .._base import AgrunError
from ..chat import (
    Finish,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from ..ports import Ids
from ..storage import parse_session
from ._trace import CallTrace, ExtractionTrace, RequestShape, RunTrace, request_shape
from ._traces import TRACE_PREFIX

__all__ = ["RecordedCall", "RecordedIds", "ReplayDiverged", "ReplayProvider", "replay_provider"]


class ReplayDiverged(AgrunError):
    """A replayed request differs from the recorded one (or goes past the recording)."""

    code = "replay_diverged"

    def __init__(self, number: int, run_id: str | None, cycle: int | None, how: str) -> None:
        self.number = number
        self.run_id = run_id
        self.cycle = cycle
        """The run's cycle; None for a call of the memory extraction after the answer."""
        self.how = how
        step = f"cycle {cycle}" if cycle is not None else "its memory extraction"
        where = f" (run {run_id!r}, {step})" if run_id is not None else ""
        super().__init__(f"replay diverged at model call {number}{where}: {how}")


@dataclass(frozen=True)
class RecordedCall:
    """One recorded model call and the run it was part of: an answer's call, or one of the
    memory extraction's after it (``memory_extraction="model"``)."""

    run_id: str
    call: CallTrace | ExtractionTrace

    @property
    def purpose(self) -> Literal["answer", "extraction"]:
        return "answer" if isinstance(self.call, CallTrace) else "extraction"


class ReplayProvider:
    """A `Provider` that answers each call with the recorded reply, in order."""

    def __init__(self, export: str | bytes) -> None:
        snapshot = parse_session(export)
        traces = {
            row["ref"][len(TRACE_PREFIX) :]: row
            for row in snapshot.content_entries
            if str(row.get("ref", "")).startswith(TRACE_PREFIX)
        }
        self.calls: list[RecordedCall] = []
        self.run_ids: list[str] = []
        """The run id of each traced turn, in order: what `RecordedIds` hands out again."""
        self.inputs: list[str] = []
        """The person's message of each traced turn, in order: what to run again."""
        for turn in snapshot.turns:
            row = traces.get(turn.turn_id)
            if row is None:
                continue
            trace = RunTrace.model_validate(row["body"])
            self.calls.extend(RecordedCall(trace.run_id, call) for call in trace.calls)
            self.calls.extend(RecordedCall(trace.run_id, call) for call in trace.extractions)
            self.run_ids.append(trace.run_id)
            said = [m for m in turn.messages if m.get("role") == "user"]
            if said:
                self.inputs.append(str(said[0].get("content", "")))
        self.position = 0
        self.diverged: ReplayDiverged | None = None
        """The first divergence, raised again by every later call."""
        # A recording whose turns closed with a model extraction replays them (in
        # memory_extraction "auto"); one made with the rules is replayed with the rules.
        self.answers_extraction = any(c.purpose == "extraction" for c in self.calls)

    def ids(self, fallback: Ids) -> RecordedIds:
        """An `Ids` port that gives each replayed run the recorded run's id (so what the
        packs name by run id, the content store's refs, is what was recorded); other ids,
        and runs past the recording, come from ``fallback``."""
        return RecordedIds(self.run_ids, fallback)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self.diverged is not None:
            # Once diverged, every later call says where: a divergence in a memory
            # extraction (run after the answer, off run()'s path) reaches the next run().
            raise self.diverged
        number = self.position + 1
        if self.position >= len(self.calls):
            self.diverged = ReplayDiverged(
                number, None, None, f"the recording holds {len(self.calls)} calls, not more"
            )
            raise self.diverged
        recorded = self.calls[self.position]
        self.position += 1
        call = recorded.call
        how = _difference(call.request, request_shape(request))
        if how is not None:
            if recorded.purpose == "extraction":
                how += " (the recorded call is the memory extraction after the answer)"
            cycle = call.cycle if isinstance(call, CallTrace) else None
            self.diverged = ReplayDiverged(number, recorded.run_id, cycle, how)
            raise self.diverged
        if call.reply is None:
            raise _failure(call.failed or "provider_error")
        if call.reply.text:
            yield TextDelta(text=call.reply.text)
        for index, (call_id, name, arguments) in enumerate(call.reply.tool_calls):
            yield ToolCallDelta(index=index, id=call_id, name=name, arguments=arguments)
        yield Finish(reason=call.reply.finish_reason, usage=call.reply.usage)


class RecordedIds:
    """Ids for a replay: the recorded run ids in order for ``run``, ``fallback`` for the rest."""

    def __init__(self, run_ids: list[str], fallback: Ids) -> None:
        self._runs = iter(run_ids)
        self._fallback = fallback

    def new_id(self, prefix: str) -> str:
        if prefix == "run":
            recorded = next(self._runs, None)
            if recorded is not None:
                return recorded
        return self._fallback.new_id(prefix)


def replay_provider(export: str | bytes) -> ReplayProvider:
    """A provider that replays the model calls recorded in ``export`` (a session export's
    text: `Runtime.export_session`, or ``rt.exportSession()`` in a page); its ``inputs``
    are the person's messages to run again, in order.

    Raises:
        ImportRejected: the text is not a session export.
    """
    return ReplayProvider(export)


def _difference(recorded: RequestShape, sent: RequestShape) -> str | None:
    """How ``sent`` differs from ``recorded``, in words; None when it does not."""
    if recorded.digest == sent.digest:
        return None
    for field in ("model", "max_tokens", "temperature", "tools"):
        was, now = getattr(recorded, field), getattr(sent, field)
        if was != now:
            return f"{field} is {now!r}, the recording has {was!r}"
    for index, (was, now) in enumerate(zip(recorded.messages, sent.messages, strict=False)):
        if was != now:
            what = "role" if was[0] != now[0] else "content"
            return (
                f"message {index} ({now[0]}) differs in its {what} from the recording's ({was[0]})"
            )
    if len(recorded.messages) != len(sent.messages):
        return (
            f"the request has {len(sent.messages)} messages, the recording {len(recorded.messages)}"
        )
    return "the request differs from the recording (outside its messages and settings)"


def _failure(code: str) -> ProviderError:
    error = ProviderError(f"the recorded call failed ({code})")
    error.code = code
    return error
