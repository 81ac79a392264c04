"""One run, driven through its OODAE cycles: observe, orient, decide, act, evaluate.

The driver owns every change to the run: it moves the run only through the transitions
table (``_state``), records each phase in ``oodae.cycles`` and the steps trace, emits an
event for each change, and at the end either commits the run's memory (success) or drops
it and records the drop (failure, cancellation). Nothing reaches memory before the run
has succeeded, so a run that stops part way leaves nothing half-applied.

Per cycle:

- observe: the input, the memory size and the previous cycle's observation;
- orient: the caller's named skill, or which skills' matchers apply;
- decide: pick the skill (rule in ``_skills``) and say why;
- act: run it, bounded by its timeout, interruptible by the run's cancel token;
- evaluate: check the output can cross into JavaScript, derive the observation, and
  either finish, or start another cycle if the skill asked (up to ``max_cycles``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .._base import find_uncrossable, thaw
from .._base._cancel import CancelToken
from ..content import ContentEntry, ContentReader, reply_text
from ..context import Message
from ..memory import (
    InquiryNotes,
    MemoryEntry,
    MemoryEntryRequest,
    MemoryLog,
    MemoryView,
    ReadAttemptSignal,
    TurnStart,
)
from ..ports import Ids
from ..sensitive import Verdict
from ..trace import RunTrace
from ._bus import EventBus
from ._events import (
    INPUT_PREVIEW,
    ContentRetrieved,
    CycleRequested,
    MemoryAppended,
    MemoryRequestDropped,
    ObservationDerived,
    PhaseEntered,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    SkillSelected,
)
from ._invoke import invoke
from ._models import (
    ActRecord,
    CycleRecord,
    DecideRecord,
    ErrorCode,
    EvaluateRecord,
    LastRun,
    ObserveRecord,
    Oodae,
    OrientRecord,
    RunError,
    RunState,
    Step,
    StepAction,
)
from ._observation import observe_failure, observe_output, remembered
from ._result import RunResult
from ._skill_view import SkillContext, SkillHelpers
from ._skills import MatcherFailed, SkillRegistry
from ._state import Move, Position, advance, phase_of, status_of

__all__ = ["RunDriver", "RunInputs", "RunSettings", "StopRun", "redact_data", "reply_text"]


@dataclass(frozen=True, slots=True)
class RunSettings:
    """The runtime options one run obeys."""

    max_cycles: int
    skill_timeout_s: float | None
    remember_observations: bool
    redact: Callable[[str], str] | None = None
    """Masks secrets in a run's output before it is observed, remembered or stored (and in
    the tool results a model is sent); None when redaction is off."""
    redact_watch: Callable[[str], bool] | None = None
    """Whether a text may hold a secret ``redact`` would mask (agrun's redactor: one of its
    hints is in it); a reply streams word by word while its line holds none. None: any
    text may (a host's redactor), so a stream is held back further."""
    scrub: Callable[[str], str] | None = None
    """Masks secrets in what the run reports about itself (error messages, step details):
    traces are stored and exported, so this is on even when ``redact`` is off."""
    gate: Callable[[Any], Verdict] | None = None
    """The one check in front of every memory write (the sensitive-content filter and the
    host's ``sensitivity_filter``): an entry it refuses is dropped, never appended."""


@dataclass(frozen=True, kw_only=True)
class RunInputs:
    """What one run is handed by the runtime: its input, where its skills and memory are,
    how it reports and obeys, and what the session's memory was as the turn opened."""

    run_id: str
    input: str
    """The turn's input, after the door's redaction."""
    registry: SkillRegistry
    memory: MemoryLog
    """The session's memory log: read during the run, appended to if it succeeds."""
    ids: Ids
    bus: EventBus
    settings: RunSettings
    token: CancelToken
    start: TurnStart
    """The session's memory as the turn opened (from the memory loop)."""
    content: ContentReader | None = None
    """How the run reads stored bodies; None when the runtime keeps no content."""


# Any event a run makes: it is stamped by the bus and kept in the run's result.
E = TypeVar("E", bound=RuntimeEvent)


class StopRun(Exception):
    """Ends the run early, failed or cancelled, with ``error`` (never leaves the kernel)."""

    def __init__(self, error: RunError) -> None:
        self.error = error


class RunDriver:
    """Carries one run from start to its end. Used once, under the runtime's lock."""

    # Whether `trace` makes a record: a skill run calls no model, so it has none to keep.
    makes_trace = False

    def __init__(self, inputs: RunInputs, *, requested_skill: str | None = None) -> None:
        self._run_id = inputs.run_id
        self._reader = inputs.content
        self._input = inputs.input
        self._requested = requested_skill
        self._registry = inputs.registry
        self._memory = inputs.memory
        self._ids = inputs.ids
        self._bus = inputs.bus
        self._settings = inputs.settings
        self._token = inputs.token
        self._start = inputs.start
        self._position: Position = "idle"
        # The state is kept as plain fields and frozen into a RunState only when read:
        # a run changes it a few dozen times and is read a handful.
        self._fields: dict[str, Any] = {
            "run_id": inputs.run_id,
            "status": "running",
            "context_snapshot": inputs.start.snapshot,
            "read_attempt_signal": inputs.start.read_signal,
        }
        # What the run's skills tell of the inquiry; taken in only if the run succeeds.
        self.notes = InquiryNotes()
        # A model turn's tool outputs, by call id (kept as content when asked to).
        self.tool_outputs: list[tuple[str, Any]] = []
        self._cycles: list[dict[str, Any]] = []
        self._snapshot: RunState | None = None
        self._steps: list[Step] = []
        self._requests: list[tuple[str, MemoryEntryRequest]] = []
        self._skill: str | None = None
        self._cycle_request: str | None = None
        self._output: Any = None
        self._started_at = 0
        self.events: list[RuntimeEvent] = []
        self.cancelled_result: RunResult | None = None
        self.last_run: LastRun | None = None

    @property
    def state(self) -> RunState:
        """The run's state right now (a frozen snapshot)."""
        if self._snapshot is None:
            cycles = tuple(CycleRecord(**record) for record in self._cycles)
            self._snapshot = RunState(**self._fields, oodae=Oodae(cycles=cycles))
        return self._snapshot

    async def drive(self) -> RunResult:
        """Run every cycle and close the run.

        Returns:
            The result, whether the run succeeded, failed or was cancelled by its token.

        Raises:
            asyncio.CancelledError: the task running it was cancelled; the run is closed
                as cancelled first.
        """
        started = self._emit(
            RunStarted(
                run_id=self._run_id,
                input=self._input[:INPUT_PREVIEW],
                input_chars=len(self._input),
                requested_skill=self._requested,
            )
        )
        self._started_at = started.at
        move: Move = "start"
        try:
            while True:
                await self._run_cycle(move)
                if not self._wants_another_cycle():
                    return self._finish()
                move = "repeat"
        except StopRun as stop:
            return self._stop(stop.error)
        except asyncio.CancelledError:
            # Kept so the runtime can still commit the closed turn before the error goes on.
            self.cancelled_result = self._stop(
                self._error("cancelled", "the task running the run was cancelled")
            )
            raise

    def _wants_another_cycle(self) -> bool:
        return self._cycle_request is not None

    def trace(self) -> RunTrace | None:
        """The run's trace (its model calls); None for a skill run, which calls no model."""
        return None

    async def _run_cycle(self, move: Move) -> None:
        self._cycles.append({"cycle": len(self._cycles) + 1})
        self._enter(move)
        self._observe()
        self._enter("next")
        candidates = self._orient()
        self._enter("next")
        skill = self._decide(candidates)
        self._enter("next")
        output = await self._act(skill)
        self._enter("next")
        self._evaluate(skill, output)

    @property
    def _cycle(self) -> int:
        return len(self._cycles)

    def _enter(self, move: Move) -> None:
        self._position = advance(self._position, move)
        phase = phase_of(self._position)
        assert phase is not None
        self._update(status=status_of(self._position), phase=phase, cycle_count=self._cycle)
        self._emit(PhaseEntered(run_id=self._run_id, phase=phase, cycle=self._cycle))
        if self._token.cancelled:
            raise StopRun(self._error("cancelled", self._token.reason or "cancelled"))

    def _observe(self) -> None:
        previous = self._fields.get("observation")
        count = len(self._memory)
        chars = len(self._input)
        record = ObserveRecord(input_chars=chars, memory_count=count, previous=previous)
        self._record("observe", record)
        seen = f"; previous cycle {previous.outcome}" if previous else ""
        self._step("observe", f"input of {chars} characters; {count} memory entries{seen}")

    def _orient(self) -> tuple[str, ...]:
        candidates: tuple[str, ...] = ()
        if self._cycle > 1:
            detail = f"continuing with {self._skill!r}"
        elif self._requested is not None:
            detail = f"the caller named {self._requested!r}"
        else:
            try:
                candidates = self._registry.candidates(self._input)
            except MatcherFailed as exc:
                self._step("orient", str(exc), exc.skill)
                raise StopRun(self._error("matcher_error", str(exc), skill=exc.skill)) from exc
            names = ", ".join(repr(name) for name in candidates)
            detail = f"matching skills: {names}" if candidates else "no skill's matcher applies"
        self._record("orient", OrientRecord(requested_skill=self._requested, candidates=candidates))
        self._step("orient", detail)
        return candidates

    def _decide(self, candidates: tuple[str, ...]) -> str:
        if self._cycle > 1 and self._skill is not None:
            skill = self._skill
            reason = f"continued: {skill!r} asked for another cycle ({self._cycle_request})"
        elif self._requested is not None:
            skill = self._requested
            reason = f"explicit: the caller asked for {skill!r}"
        elif candidates:
            skill = candidates[0]
            reason = f"matched: {skill!r} is the first registered skill whose matcher applies"
        else:
            skill = self._registry.default
            reason = f"default: no matcher applies, so the default skill {skill!r}"
        self._skill = skill
        self._update(selected_skill=skill)
        self._emit(
            SkillSelected(run_id=self._run_id, skill=skill, reason=reason, cycle=self._cycle)
        )
        self._record("decide", DecideRecord(skill=skill, reason=reason))
        self._step("select_skill", reason, skill)
        return skill

    async def _act(self, name: str) -> Any:
        skill = self._registry.get(name)
        helpers = self._helpers(name)
        context = SkillContext(
            lambda: self.state, MemoryView(self._memory), content=self._content_reader()
        )
        self._cycle_request = None
        timeout = getattr(skill, "timeout_s", None) or self._settings.skill_timeout_s
        args = (self._input, context, helpers)
        try:
            ended = await invoke(skill, args, timeout=timeout, token=self._token)
        finally:
            requests, cycle_request = helpers._close()
            self._requests.extend((name, request) for request in requests)
        if ended.outcome != "returned":
            cycle_request = None
        self._cycle_request = cycle_request
        record = ActRecord(
            skill=name,
            outcome=ended.outcome,
            memory_requests=len(requests),
            cycle_request=cycle_request,
        )
        self._record("act", record)
        self._step("run_skill", f"skill {name!r} {ended.outcome.replace('_', ' ')}", name)
        if ended.code is not None:
            raise StopRun(self._error(ended.code, ended.problem))
        return ended.output

    def _content_reader(self) -> Callable[[str], ContentEntry] | None:
        return None if self._reader is None else self._read_content

    def _read_content(self, ref: str) -> ContentEntry:
        # Every retrieval shows in the run's events, found or not (spec 002), and in the
        # run's read-attempt signal (the last read wins).
        assert self._reader is not None
        found = False
        try:
            entry = self._reader.get(ref)
            found = True
            return entry
        finally:
            self._emit(
                ContentRetrieved(
                    run_id=self._run_id, ref=ref, found=found, counters=self._reader.counters()
                )
            )
            self._update(
                read_attempt_signal=ReadAttemptSignal(
                    kind="content", target=ref, found=found, sources=(ref,) if found else ()
                )
            )

    def _helpers(self, skill: str) -> SkillHelpers:
        return SkillHelpers(skill, notes=self.notes, clarify=self._start.clarify)

    def _noted_read(self) -> None:
        # A skill that read a source makes the run's read-attempt signal say so.
        read = self.notes.read
        signal = self._fields.get("read_attempt_signal")
        if read is not None and (
            signal is None or signal.kind != "source" or signal.target != read.id
        ):
            self._update(
                read_attempt_signal=ReadAttemptSignal(
                    kind="source", target=read.id, found=True, sources=(read.id,)
                )
            )

    def _redacted(self, output: Any) -> Any:
        redact = self._settings.redact
        return output if redact is None else redact_data(output, redact)

    def _evaluate(self, skill: str, output: Any) -> None:
        output = self._redacted(output)
        self._noted_read()
        problem = find_uncrossable(output)
        if problem is not None:
            self._record("evaluate", EvaluateRecord(outcome="failed", next="fail"))
            message = f"skill {skill!r} returned output that cannot cross into JS: {problem}"
            raise StopRun(self._error("output_not_serializable", message))
        observation = observe_output(self._cycle, skill, output, self._settings.scrub)
        self._update(observation=observation)
        self._emit(ObservationDerived(run_id=self._run_id, observation=observation))
        self._output = output
        detail = f"observation: {observation.outcome}, {observation.output_kind} output"
        self._step("evaluate", detail, skill)
        if self._cycle_request is None:
            self._record("evaluate", EvaluateRecord(outcome="succeeded", next="finish"))
            return
        if self._cycle >= self._settings.max_cycles:
            self._record("evaluate", EvaluateRecord(outcome="succeeded", next="fail"))
            limit = self._settings.max_cycles
            message = f"skill {skill!r} asked for cycle {self._cycle + 1}, past max_cycles={limit}"
            raise StopRun(self._error("cycle_limit", message))
        self._record("evaluate", EvaluateRecord(outcome="succeeded", next="continue"))
        self._step("request_cycle", f"another cycle: {self._cycle_request}", skill)
        self._emit(
            CycleRequested(run_id=self._run_id, reason=self._cycle_request, cycle=self._cycle)
        )

    def _finish(self) -> RunResult:
        self._position = advance(self._position, "finish")
        self._update(status=status_of(self._position), phase=None)
        pending: list[tuple[str, MemoryEntryRequest, Any]] = [
            (skill, request, "skill") for skill, request in self._requests
        ]
        observation = self._fields.get("observation")
        derived = remembered(observation) if observation else None
        if derived is not None and self._settings.remember_observations and self._skill:
            pending.append((self._skill, derived, "observation"))
        for skill, request, source in pending:
            refusal = self._refusal(request)
            if refusal is not None:
                detail = f"dropped {request.kind} entry request ({refusal})"
                self._step("drop_memory_request", detail, skill)
                self._emit(
                    MemoryRequestDropped(
                        run_id=self._run_id, request=self._masked(request), reason=refusal
                    )
                )
                continue
            entry = MemoryEntry(
                id=self._ids.new_id("mem"),
                seq=len(self._memory) + 1,
                run_id=self._run_id,
                kind=request.kind,
                text=request.text,
                data=request.data,
                created_at=self._bus.now(),
                source=source,
                skill=skill,
            )
            self._memory.append(entry)
            self._step("append_memory", f"appended {entry.kind} entry {entry.id}", skill)
            self._emit(MemoryAppended(run_id=self._run_id, entry=entry))
        self._step("finish", f"run succeeded after {self._cycle} cycle(s)", self._skill)
        return self._close()

    def _stop(self, error: RunError) -> RunResult:
        cancelled = error.code == "cancelled"
        self._position = advance(self._position, "cancel" if cancelled else "fail")
        observation = observe_failure(error)
        status = status_of(self._position)
        self._update(status=status, phase=None, error=error, observation=observation)
        self._emit(ObservationDerived(run_id=self._run_id, observation=observation))
        reason = f"run {status}: requested memory is not kept"
        for skill, request in self._requests:
            detail = f"dropped {request.kind} entry request ({reason})"
            self._step("drop_memory_request", detail, skill)
            self._emit(MemoryRequestDropped(run_id=self._run_id, request=request, reason=reason))
        self._step("cancel" if cancelled else "fail", error.message, error.skill)
        self._output = None
        return self._close(error)

    def _close(self, error: RunError | None = None) -> RunResult:
        finished_at = self._bus.now()
        state = self.state
        self.last_run = LastRun(
            run_id=self._run_id,
            status=state.status,
            selected_skill=state.selected_skill,
            cycle_count=state.cycle_count,
            step_count=state.step_count,
            observation=state.observation,
            error=state.error,
            started_at=self._started_at,
            finished_at=finished_at,
            **self._last_run_extra(),
        )
        self._emit(_ending(self._run_id, self.last_run, error), at=finished_at)
        return RunResult(
            output=self._output,
            state=state,
            steps=tuple(self._steps),
            error=state.error,
            events=tuple(self.events),
            messages=self._turn_messages() if state.status == "succeeded" else self._kept_ask(),
        )

    def _kept_ask(self) -> tuple[Message, ...]:
        """What a failed or cancelled turn leaves in the history: the person's message alone,
        marked with how the run ended, so the next turn's window sees what was asked ("try
        again" works). No partial answer, tool traffic, frame or memory entry is kept."""
        state = self.state
        if state.status not in ("failed", "cancelled"):
            return ()
        return (
            Message(
                id=f"{self._run_id}:user",
                role="user",
                content=self._input,
                run_status=state.status,
                error_code=None if state.error is None else state.error.code,
            ),
        )

    def _turn_messages(self) -> tuple[Message, ...]:
        """What a successful turn adds to the history: the person's input and the reply."""
        return (
            Message(id=f"{self._run_id}:user", role="user", content=self._input),
            Message(
                id=f"{self._run_id}:assistant", role="assistant", content=reply_text(self._output)
            ),
        )

    def _masked(self, request: MemoryEntryRequest) -> MemoryEntryRequest:
        """A refused request as its event reports it: its texts scrubbed (events are kept)."""
        scrub = self._settings.scrub
        if scrub is None:
            return request
        return request.model_copy(
            update={"text": scrub(request.text), "data": redact_data(thaw(request.data), scrub)}
        )

    def _refusal(self, request: MemoryEntryRequest) -> str | None:
        """Why the write gate refuses to keep ``request``, or None when it may be kept."""
        gate = self._settings.gate
        if gate is None:
            return None
        verdict = gate({"kind": request.kind, "text": request.text, "data": thaw(request.data)})
        if verdict.allowed:
            return None
        return "refused by the sensitive-content filter: " + "; ".join(verdict.reasons)

    def _last_run_extra(self) -> dict[str, Any]:
        """Fields a kind of run adds to its `LastRun` (a model turn's usage)."""
        return {}

    def _error(self, code: ErrorCode, message: str, *, skill: str | None = None) -> RunError:
        scrub = self._settings.scrub
        return RunError(
            code=code,
            message=message if scrub is None else scrub(message),
            skill=skill or self._skill,
            phase=self._fields.get("phase"),
            cycle=self._cycle,
        )

    def _update(self, **changes: Any) -> None:
        self._fields.update(changes)
        self._snapshot = None

    def _record(self, phase: str, record: Any) -> None:
        self._cycles[-1][phase] = record
        self._snapshot = None

    def _step(self, action: StepAction, detail: str, skill: str | None = None) -> None:
        scrub = self._settings.scrub
        step = Step(
            index=len(self._steps) + 1,
            cycle=self._cycle,
            phase=self._fields.get("phase"),
            action=action,
            detail=detail if scrub is None else scrub(detail),
            skill=skill,
        )
        self._steps.append(step)
        self._update(step_count=len(self._steps))

    def _emit(self, event: E, *, at: int | None = None) -> E:
        stamped = self._bus.emit(event, at=at)
        self.events.append(stamped)
        return stamped


def _ending(
    run_id: str, summary: LastRun, error: RunError | None
) -> RunFinished | RunFailed | RunCancelled:
    """The event that closes a run: finished, or failed or cancelled with ``error``."""
    if error is None:
        return RunFinished(run_id=run_id, summary=summary)
    if error.code == "cancelled":
        return RunCancelled(run_id=run_id, error=error, summary=summary)
    return RunFailed(run_id=run_id, error=error, summary=summary)


def redact_data(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` with every string in it (keys aside) passed through ``redact``."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_data(item, redact) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(item, redact) for item in value]
    return value
