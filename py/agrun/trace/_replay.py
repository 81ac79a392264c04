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

from .._base import AgrunError
from ..chat import (
    Finish,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from ..storage import parse_session
from ._trace import CallTrace, RequestShape, RunTrace, request_shape
from ._traces import TRACE_PREFIX

__all__ = ["RecordedCall", "ReplayDiverged", "ReplayProvider", "replay_provider"]


class ReplayDiverged(AgrunError):
    """A replayed request differs from the recorded one (or goes past the recording)."""

    code = "replay_diverged"

    def __init__(self, number: int, run_id: str | None, cycle: int | None, how: str) -> None:
        self.number = number
        self.run_id = run_id
        self.cycle = cycle
        self.how = how
        where = f" (run {run_id!r}, cycle {cycle})" if run_id is not None else ""
        super().__init__(f"replay diverged at model call {number}{where}: {how}")


@dataclass(frozen=True)
class RecordedCall:
    """One recorded model call and the run it was part of."""

    run_id: str
    call: CallTrace


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
        self.inputs: list[str] = []
        """The person's message of each traced turn, in order: what to run again."""
        for turn in snapshot.turns:
            row = traces.get(turn.turn_id)
            if row is None:
                continue
            trace = RunTrace.model_validate(row["body"])
            self.calls.extend(RecordedCall(trace.run_id, call) for call in trace.calls)
            said = [m for m in turn.messages if m.get("role") == "user"]
            if said:
                self.inputs.append(str(said[0].get("content", "")))
        self.position = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        number = self.position + 1
        if self.position >= len(self.calls):
            raise ReplayDiverged(
                number, None, None, f"the recording holds {len(self.calls)} calls, not more"
            )
        recorded = self.calls[self.position]
        self.position += 1
        call = recorded.call
        how = _difference(call.request, request_shape(request))
        if how is not None:
            raise ReplayDiverged(number, recorded.run_id, call.cycle, how)
        if call.reply is None:
            raise _failure(call.failed or "provider_error")
        if call.reply.text:
            yield TextDelta(text=call.reply.text)
        for index, (call_id, name, arguments) in enumerate(call.reply.tool_calls):
            yield ToolCallDelta(index=index, id=call_id, name=name, arguments=arguments)
        yield Finish(reason=call.reply.finish_reason, usage=call.reply.usage)


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
