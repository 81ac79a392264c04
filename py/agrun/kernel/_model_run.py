"""A model turn: each OODAE cycle is one model step, and the skills are its tools.

Per cycle:

- observe: the input, the memory size, the previous cycle's observation;
- orient: build the context pack from the session (history, memory, this turn so far) under
  the model's calibrated budget and render it into the request (near the end of the run, a
  ``budget_wrap_up`` frame asks for an answer and no tools are offered);
- decide: call the model and stream its reply (tokens go to ``on_token`` as they arrive): it
  answers, or it calls tools;
- act: run the tool calls, in parallel, each as its skill with checked arguments; a call
  whose tool is unknown or whose arguments do not fit is answered with an error result and a
  ``schema_correction`` frame (bounded: past ``max_corrections`` the run fails); every result
  stays paired with its call;
- evaluate: an answer finishes the run; tool results start the next cycle.

Everything the turn says goes into its messages (the person's input, the assistant's calls,
the results, the library's frames with their ``author``, the answer): the history gets them
only if the run succeeds.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from array import array
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar, cast, get_args

from ..chat import (
    ModelReply,
    ModelRequest,
    ProviderError,
    ReplyBuilder,
    TextDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)
from ..content import READ_CONTENT, ContentStore, ReadContent
from ..context import (
    SESSION_L2_SHARE,
    Author,
    Budget,
    ContextBuildCancelled,
    ContextBuildingFailed,
    ContextOptions,
    ContextPack,
    ContextPackBuilt,
    ContextRequest,
    Message,
    TokenCalibration,
    ToolCall,
)
from ..memory import MemoryView, noted_failures
from ..ports import Provider, Tokenizer
from ..trace import (
    Attribution,
    CallTrace,
    RunTrace,
    TraceRecipe,
    attribute,
    call_trace,
    similarities,
)
from ._driver import RunDriver, RunInputs, StopRun
from ._events import (
    ModelCallFailed,
    ModelCallFinished,
    ModelCallStarted,
    ObservationDerived,
    ToolCallFinished,
)
from ._invoke import Invocation, invoke
from ._limits import UsageLimits
from ._models import (
    ActRecord,
    DecideRecord,
    ErrorCode,
    EvaluateRecord,
    OrientRecord,
    StepAction,
)
from ._observation import observe_output
from ._output import OutputRefused, OutputSpec
from ._render import DEFAULT_SYSTEM_PROMPT, render_messages
from ._reply_cap import ReplyCap, cap_tool_result, tool_result_limit
from ._skill_view import SkillContext
from ._state import Move
from ._stream_mask import StreamMask, TokenPassage
from ._tools import ArgumentsRefused, read_arguments, tool_spec

__all__ = ["ModelRun", "ModelSettings"]

T = TypeVar("T")

CONTENT_TOOL = ReadContent()

# Share of the run's token budget after which the model is asked to wrap up.
WRAP_UP_SHARE = 0.8
WRAP_UP_TEXT = (
    "You are close to the limit of this turn. Answer now with what you have, without "
    "calling any more tools."
)


@dataclass(frozen=True)
class ModelSettings:
    """How a runtime's model turns call their provider."""

    provider: Provider
    model: str | None = None
    system_prompt: str | None = None
    context_window: int = 8192
    """The model's whole window in its own tokens: prompt and reply."""
    max_reply_tokens: int = 512
    temperature: float | None = None
    max_corrections: int = 2
    """How many refused tool calls a run may have before it fails."""
    run_token_budget: int | None = None
    """Tokens (prompt + reply, summed over the run's calls) after which the model is asked
    to wrap up (at 80 %); None: only the cycle limit asks."""


class _ModelCall(TypedDict):
    """The fields every event of one model call carries."""

    run_id: str
    cycle: int
    model: str | None
    pack_id: str


class ModelRun(RunDriver):
    """One model turn, carried from start to end (used once, under the runtime's lock)."""

    makes_trace = True

    def __init__(
        self,
        inputs: RunInputs,
        *,
        model: ModelSettings,
        history: tuple[Message, ...],
        build: Callable[[ContextRequest, Callable[[], bool]], ContextPack],
        tokenizer: Tokenizer,
        calibration: TokenCalibration,
        on_token: Callable[[str], None] | None,
        content_store: ContentStore | None = None,
        similar: Callable[[], Awaitable[dict[str, float]]] | None = None,
        embed: Callable[[Sequence[str]], Awaitable[Sequence[array[float]]]] | None = None,
        limits: UsageLimits | None = None,
        output: OutputSpec | None = None,
    ) -> None:
        super().__init__(inputs)
        self._wanted = output
        self.typed_output: Any = None
        self._plain: Any = None
        """With an output spec, the checked answer as ``result.output`` carries it."""
        self._limits = limits
        self._spent = Usage()  # what the limits count: the provider's usage, else estimated
        self._tools_run = 0
        self._find_similar = similar
        self._embed = embed
        """The embedder's vectors, for attribution by meaning (None: no embedder)."""
        self._similarity: dict[str, float] | None = None
        self._store = content_store
        self._model = model
        self._prior = noted_failures(history)
        self._build = build
        self._tokenizer = tokenizer
        self._calibration = calibration
        self._on_token = on_token
        self._turn: list[Message] = [
            Message(id=f"{self._run_id}:user", role="user", content=self._input)
        ]
        self._answered = False
        self._streaming: ReplyBuilder | None = None  # the model call under way, if one is
        self._corrections = 0
        self._wrapped_up = False
        self._usage = Usage()
        self._calls = 0
        self._label = model.model or "model"
        self._pack: ContextPack | None = None
        self._pack_id = ""
        self._cycle_requests: list[tuple[Any, ...]] = []
        # The run's trace (issue 22.1): one record per model call, and what the answer used.
        # Each model call's trace, made when the run's trace is asked for (after the answer).
        self._traced: list[Callable[[], CallTrace]] = []
        # The answer's attribution by words is made when the trace is (after the answer,
        # `trace`); by meaning (an embedder) during the run, which it is a step of.
        self._attribution: Attribution | None = None
        self._attribute_later: functools.partial[Attribution] | None = None
        self._answer = ""
        self._factor = 1.0
        self._digest = ""
        self._recipe: TraceRecipe | None = None

    # -- the cycle -----------------------------------------------------------------------

    def _wants_another_cycle(self) -> bool:
        return not self._answered

    async def _run_cycle(self, move: Move) -> None:
        self._cycles.append({"cycle": len(self._cycles) + 1})
        self._enter(move)
        self._observe()
        self._enter("next")
        if self._similarity is None and self._find_similar is not None:
            self._similarity = await self._similar_turns(self._find_similar)
        request = self._orient_model()
        self._enter("next")
        reply = await self._decide_model(request)
        self._enter("next")
        self._cycle_requests = []
        await self._act_model(reply)
        self._enter("next")
        self._evaluate_model(reply)
        if self._answered and self._embed is not None:
            await self._attribute_by_meaning(self._embed)

    def _orient_model(self) -> ModelRequest:
        settings = self._model
        wrap_up = self._cycle >= self._settings.max_cycles or self._over_token_budget()
        if wrap_up and not self._wrapped_up:
            self._wrapped_up = True
            self._frame("budget_wrap_up", WRAP_UP_TEXT)
            self._step("wrap_up", "near the end of the run: the model is asked to answer")
        specs = () if wrap_up else self._tool_specs()
        tools_cost = self._tokenizer.count(json.dumps([s.to_wire() for s in specs]))
        factor = self._calibration.factor(settings.model)
        limit = max(1, int((settings.context_window - settings.max_reply_tokens) / factor))
        memory, kinds = self._start.evidence
        request = ContextRequest(
            messages=(*self._prior, *self._turn),
            input=self._input,
            model=settings.model,
            system_prompt=self._system_prompt(),
            direction=self._start.direction,
            recall_similarity=self._similarity or {},
            memory=memory,
            budget=Budget(
                limit=limit,
                reserve=min(tools_cost, limit - 1),
                session_l2_cap=int(limit * SESSION_L2_SHARE),
            ),
            # L3 holds the session's merged summary and global memory; a body read with
            # read_content reaches the model whole.
            options=ContextOptions(layers=("L0", "L1", "L2", "L3"), whole_tools=(READ_CONTENT,)),
            causation_id=self._run_id,
        )
        # The build announces its pack's digest (sha256 of pack.to_json()); taking it from
        # there spares serializing the whole pack a second time on every model call.
        built: list[str] = []

        def note_digest(event: object) -> None:
            if isinstance(event, ContextPackBuilt):
                built.append(event.pack_digest)

        unsubscribe = self._bus.subscribe(note_digest)
        try:
            pack = self._build(request, lambda: self._token.cancelled)
        except ContextBuildCancelled as error:
            raise StopRun(self._error("cancelled", self._token.reason or str(error))) from error
        except ContextBuildingFailed as error:
            self._step("build_context", str(error))
            raise StopRun(self._error("context_building_failed", str(error))) from error
        finally:
            unsubscribe()
        self._pack = pack
        digest = built[-1] if built else hashlib.sha256(pack.to_json().encode()).hexdigest()
        self._pack_id = digest[:16]
        self._digest, self._factor = digest, factor
        self._recipe = TraceRecipe(
            prior=len(self._prior),
            request=request.model_dump(mode="json", by_alias=True, exclude={"messages"}),
            turn=tuple(m.to_wire() for m in self._turn),
            content_advert=self._store is not None,
            # A run's own bodies are stored as it ends: the store held, at every build of
            # the run, what it held when the run started.
            at_ms=self._started_at,
        )
        names = tuple(spec.name for spec in specs)
        self._record(
            "orient",
            OrientRecord(
                requested_skill=None,
                candidates=names,
                pack_id=self._pack_id,
                budget_used=pack.budget_used,
                budget_limit=pack.budget_limit,
            ),
        )
        entries = sum(len(layer) for layer in pack.layers.values())
        self._step(
            "build_context",
            f"context pack {self._pack_id}: {entries} entries, "
            f"{pack.budget_used}/{pack.budget_limit} tokens; tools: {', '.join(names) or 'none'}",
        )
        return ModelRequest(
            messages=render_messages(pack, memory_kinds=kinds),
            tools=specs,
            model=settings.model,
            max_tokens=settings.max_reply_tokens,
            temperature=settings.temperature,
            pack_id=self._pack_id,
            response_format=None if self._wanted is None else self._wanted.response_format(),
        )

    def _system_prompt(self) -> str:
        prompt = self._model.system_prompt or DEFAULT_SYSTEM_PROMPT
        return prompt if self._wanted is None else f"{prompt}\n\n{self._wanted.instruction()}"

    async def _similar_turns(
        self, find: Callable[[], Awaitable[dict[str, float]]]
    ) -> dict[str, float]:
        """Recall's similarity for this run (once: the request does not change between
        cycles)."""
        found = await self._embedding(find(), "build_context", "recall goes on without similarity")
        if found is None:
            return {}
        self._step("build_context", f"{len(found)} older turns close in meaning to the request")
        return found

    async def _attribute_by_meaning(
        self, embed: Callable[[Sequence[str]], Awaitable[Sequence[array[float]]]]
    ) -> None:
        """The answer's attribution with the embedder's similarity added (issue 22.2)."""
        later, pack, text = self._attribute_later, self._pack, self._answer
        if later is None or pack is None:
            return
        try:
            close = await self._embedding(
                similarities(text, pack.entries(), embed),
                "evaluate",
                "attribution goes on by words alone",
            )
        except StopRun:
            if not self._token.cancelled:
                raise
            # The answer is already there: a cancel now stops the embedder, never the
            # answer, whose attribution stays by words alone.
            self._step("evaluate", "cancelled while attributing: attribution by words alone")
            return
        if close is not None:
            call = later.keywords["call"]
            self._attribution = attribute(text, pack.entries(), call=call, similarity=close)
            self._attribute_later = None

    async def _embedding(self, work: Awaitable[T], action: StepAction, otherwise: str) -> T | None:
        """``work``, which calls the embedder; None if it failed (an embedder that fails
        leaves its signal out, never the turn). Cancelling the run stops it at once (a
        resumed session's first turn may embed many turns)."""
        task = asyncio.ensure_future(work)
        self._token._attach(task)
        try:
            return await task
        except asyncio.CancelledError:
            if not self._token.cancelled:
                raise
            raise StopRun(self._error("cancelled", self._token.reason or "cancelled")) from None
        except Exception as error:  # a host's embedder may raise anything
            self._step(action, f"the embedder failed, {otherwise}: {error}")
            return None
        finally:
            self._token._detach(task)

    def _call(self) -> _ModelCall:
        return {
            "run_id": self._run_id,
            "cycle": self._cycle,
            "model": self._model.model,
            "pack_id": self._pack_id,
        }

    async def _decide_model(self, request: ModelRequest) -> ModelReply:
        if self._limits is not None:
            self._stop_over_limit(self._limits.before_request(self._calls))
        tools = tuple(spec.name for spec in request.tools)
        counters = None if self._store is None else self._store.counters()
        self._emit(
            ModelCallStarted(
                **self._call(),
                messages=len(request.messages),
                tools=tools,
                content_store=counters,
            )
        )
        builder = ReplyBuilder()
        self._streaming = builder
        task = asyncio.ensure_future(self._consume(request, builder))
        self._token._attach(task)
        try:
            reply = await task
        except asyncio.CancelledError:
            if not self._token.cancelled:
                raise  # the run's own task was cancelled: let it go on up
            self._emit(
                ModelCallFailed(
                    **self._call(),
                    code="cancelled",
                    message="cancelled",
                    partial_text=builder.text,
                )
            )
            self._trace_call(request, None, "cancelled")
            raise StopRun(self._error("cancelled", self._token.reason or "cancelled")) from None
        except ProviderError as error:
            partial = getattr(error, "partial_text", "") or builder.text
            self._emit(
                ModelCallFailed(
                    **self._call(),
                    code=error.code,
                    message=str(error),
                    partial_text=partial,
                )
            )
            self._trace_call(request, None, error.code)
            self._step("call_model", f"the model call failed: {error}")
            raise StopRun(self._error(_code(error.code), str(error))) from error
        finally:
            self._token._detach(task)
        self._streaming = None
        self._calls += 1
        if reply.usage is not None:
            self._usage = self._usage + reply.usage
            estimated = self._pack.budget_used if self._pack is not None else 0
            self._calibration.observe(self._model.model, estimated, reply.usage.prompt_tokens)
        self._trace_call(request, reply, None)
        called = tuple(call.name for call in reply.tool_calls)
        self._emit(
            ModelCallFinished(
                **self._call(),
                finish_reason=reply.finish_reason,
                usage=reply.usage,
                text_chars=len(reply.text),
                tool_calls=called,
            )
        )
        if self._limits is not None:
            self._spent = self._spent + (reply.usage or self._estimated(reply))
            self._stop_over_limit(self._limits.after_call(self._spent))
        reason = f"called {', '.join(called)}" if called else "answered"
        self._update(selected_skill=self._label)
        self._record("decide", DecideRecord(skill=self._label, reason=f"the model {reason}"))
        self._step("call_model", f"the model {reason} ({reply.finish_reason})", self._label)
        return reply

    async def _consume(self, request: ModelRequest, builder: ReplyBuilder) -> ModelReply:
        # A reply far past max_reply_tokens ends the call here, before it reaches the turn.
        cap = ReplyCap(self._tokenizer, self._model.max_reply_tokens)
        shown = self._shown_tokens()
        stream = self._model.provider.stream(request)
        try:
            async for event in stream:
                cap.add(event)
                builder.add(event)
                if isinstance(event, TextDelta) and event.text and shown is not None:
                    shown.add(event.text)
        except asyncio.CancelledError:
            # Stopped: what was held back goes on, masked, as the turn keeps it (the answer
            # as far as it streamed). A failed call's is not: the turn keeps none of it.
            if shown is not None:
                shown.finish()
            raise
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        if shown is not None:
            shown.finish()
        return builder.reply(call_id=f"{self._run_id}:c{self._cycle}")

    def _shown_tokens(self) -> StreamMask | TokenPassage | None:
        """Where the reply's pieces go as they stream: with redaction on, masked as the
        finished reply will be (`StreamMask`); else as the provider sent them."""
        if self._on_token is None:
            return None
        if self._settings.redact is None:
            return TokenPassage(self._on_token)
        return StreamMask(self._settings.redact, self._on_token, watch=self._settings.redact_watch)

    async def _act_model(self, reply: ModelReply) -> None:
        if not reply.tool_calls:
            if self._wanted is not None and not self._read_output(reply):
                return
            self._answered = True
            self._record("act", ActRecord(skill=self._label, outcome="returned", memory_requests=0))
            return
        if self._settings.redact is not None:
            # Masked like the person's input: a secret in the model's arguments reaches no
            # skill, history, event or export (and so not the next model call either).
            calls = tuple(
                c.model_copy(update={"arguments": self._redacted(c.arguments)})
                for c in reply.tool_calls
            )
            reply = reply.model_copy(update={"tool_calls": calls})
        self._turn.append(
            Message(
                id=f"{self._run_id}:a{self._cycle}",
                role="assistant",
                content=self._redacted(reply.text),
                tool_calls=tuple(
                    ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in reply.tool_calls
                ),
            )
        )
        prepared = [self._prepare(call) for call in reply.tool_calls]
        if self._limits is not None:
            runnable = sum(1 for _, problem in prepared if problem is None)
            self._stop_over_limit(self._limits.before_tool_calls(self._tools_run, runnable))
            self._tools_run += runnable
        ran = await asyncio.gather(
            *(
                self._run_tool(call, ready)
                for call, ready in zip(reply.tool_calls, prepared, strict=True)
            )
        )
        outcomes = []
        for call, (content, outcome) in zip(reply.tool_calls, ran, strict=True):
            self._turn.append(
                Message(
                    id=f"{self._run_id}:t{self._cycle}:{call.id}",
                    role="tool",
                    content=content,
                    tool_call_id=call.id,
                    name=call.name,
                )
            )
            outcomes.append(f"{call.name}:{outcome}")
        record = ActRecord(
            skill=self._label,
            outcome="returned",
            memory_requests=sum(len(requests) for requests in self._cycle_requests),
            tool_calls=tuple(outcomes),
        )
        self._record("act", record)
        refused = [
            (call, problem)
            for call, (_, problem) in zip(reply.tool_calls, prepared, strict=True)
            if problem is not None
        ]
        if refused:
            self._correct(refused)

    def _prepare(self, call: ToolCallRequest) -> tuple[Any, str | None]:
        """The skill and checked arguments for ``call``, or why it cannot run."""
        if call.name == READ_CONTENT and self._offers_content():
            try:
                return (CONTENT_TOOL, read_arguments(CONTENT_TOOL, call.arguments)), None
            except ArgumentsRefused as refusal:
                return None, f"the arguments for {call.name!r} do not fit its parameters: {refusal}"
        if call.name not in self._registry.names:
            known = ", ".join(self._registry.names)
            return None, f"there is no tool named {call.name!r} (tools: {known})"
        skill = self._registry.get(call.name)
        try:
            return (skill, read_arguments(skill, call.arguments)), None
        except ArgumentsRefused as refusal:
            return None, f"the arguments for {call.name!r} do not fit its parameters: {refusal}"

    async def _run_tool(
        self, call: ToolCallRequest, prepared: tuple[Any, str | None]
    ) -> tuple[str, str]:
        """Run one tool call; its result text for the model, and its outcome."""
        target, problem = prepared
        if problem is not None:
            self._emit(
                ToolCallFinished(
                    run_id=self._run_id,
                    cycle=self._cycle,
                    call_id=call.id,
                    tool=call.name,
                    outcome="refused",
                    detail=problem,
                )
            )
            self._step("call_tool", f"tool call {call.name!r} refused: {problem}", call.name)
            return f"error: {problem}", "refused"
        skill, arguments = target
        helpers = self._helpers(skill.name)
        context = SkillContext(
            lambda: self.state,
            MemoryView(self._memory),
            arguments.value,
            content=self._content_reader(),
        )
        timeout = getattr(skill, "timeout_s", None) or self._settings.skill_timeout_s
        try:
            ended = await invoke(
                skill, (arguments.input, context, helpers), timeout=timeout, token=self._token
            )
        finally:
            requests, _ = helpers._close()
            self._cycle_requests.append(requests)
            self._requests.extend((skill.name, request) for request in requests)
        # However much a skill returns, the turn (and so history) keeps a bounded result.
        text, cut_from = cap_tool_result(
            _result_text(ended), tool_result_limit(self._model.context_window)
        )
        self._emit(
            ToolCallFinished(
                run_id=self._run_id,
                cycle=self._cycle,
                call_id=call.id,
                tool=call.name,
                outcome=ended.outcome,
                detail=ended.problem,
                cut_from_bytes=cut_from,
            )
        )
        if skill is not CONTENT_TOOL and ended.outcome == "returned":
            self.tool_outputs.append((call.id, ended.output))
        self._step("call_tool", f"tool {call.name!r} {ended.outcome.replace('_', ' ')}", call.name)
        if ended.code == "cancelled":
            raise StopRun(self._error("cancelled", ended.problem, skill=call.name))
        self._noted_read()
        return self._redacted(text), ended.outcome

    def _correct(self, refused: list[tuple[ToolCallRequest, str]]) -> None:
        self._corrections += len(refused)
        if self._corrections > self._model.max_corrections:
            call, problem = refused[0]
            unknown = problem.startswith("there is no tool")
            code: ErrorCode = "unknown_tool" if unknown else "invalid_tool_arguments"
            message = (
                f"the model's tool calls were refused {self._corrections} times (the bound is "
                f"{self._model.max_corrections}); last: {problem}"
            )
            raise StopRun(self._error(code, message, skill=call.name))
        lines = [f"- {call.name}: {problem}" for call, problem in refused]
        self._frame(
            "schema_correction",
            "These tool calls were not run:\n" + "\n".join(lines) + "\nCall the tool again with "
            "arguments that match its parameters, or answer without it.",
        )
        self._step("correct_tool_call", f"{len(refused)} tool call(s) sent back for correction")

    def _read_output(self, reply: ModelReply) -> bool:
        """Whether the answer is the output asked for; if not, it goes back to the model
        with a correction frame (within ``max_corrections``)."""
        assert self._wanted is not None
        text = self._redacted(reply.text)
        try:
            self._plain, self.typed_output = self._wanted.read(text)
            return True
        except OutputRefused as refusal:
            problem = str(refusal)
        self._turn.append(
            Message(id=f"{self._run_id}:a{self._cycle}", role="assistant", content=text)
        )
        self._record("act", ActRecord(skill=self._label, outcome="returned", memory_requests=0))
        self._corrections += 1
        if self._corrections > self._model.max_corrections:
            message = (
                f"the model's answer did not fit the output schema {self._wanted.name!r} "
                f"{self._corrections} times (the bound is {self._model.max_corrections}); "
                f"last: {problem}"
            )
            raise StopRun(self._error("output_validation_failed", message))
        self._frame(
            "schema_correction",
            f"Your answer does not fit the output schema: {problem}\nAnswer again with one "
            "JSON value that matches the schema, and nothing else.",
        )
        self._step("correct_output", f"the answer sent back for correction: {problem}")
        return False

    def _evaluate_model(self, reply: ModelReply) -> None:
        if self._answered:
            text = self._redacted(reply.text)
            observation = observe_output(self._cycle, self._label, text, self._settings.scrub)
            self._update(observation=observation)
            self._emit(ObservationDerived(run_id=self._run_id, observation=observation))
            self._output = text if self._wanted is None else self._plain
            self._answer = text
            if self._pack is not None:
                self._attribute_later = functools.partial(
                    attribute, text, self._pack.entries(), call=len(self._traced) - 1
                )
            self._turn.append(
                Message(id=f"{self._run_id}:assistant", role="assistant", content=text)
            )
            self._record("evaluate", EvaluateRecord(outcome="succeeded", next="finish"))
            self._step(
                "evaluate", f"the model answered ({len(reply.text)} characters)", self._label
            )
            return
        called = ", ".join(call.name for call in reply.tool_calls)
        summary = f"called {called}" if called else "answered with output that does not fit"

        observation = observe_output(self._cycle, self._label, summary, self._settings.scrub)
        self._update(observation=observation)
        self._emit(ObservationDerived(run_id=self._run_id, observation=observation))
        if self._cycle >= self._settings.max_cycles:
            self._record("evaluate", EvaluateRecord(outcome="succeeded", next="fail"))
            limit = self._settings.max_cycles
            message = f"the model still called tools at cycle {self._cycle}, the max_cycles={limit}"
            raise StopRun(self._error("cycle_limit", message))
        self._record("evaluate", EvaluateRecord(outcome="succeeded", next="continue"))
        self._step("evaluate", f"tool results go back to the model ({summary})", self._label)

    # -- the trace -----------------------------------------------------------------------

    def _trace_call(
        self, request: ModelRequest, reply: ModelReply | None, failed: str | None
    ) -> None:
        if self._pack is None:
            return
        self._traced.append(
            functools.partial(
                call_trace,
                cycle=self._cycle,
                pack=self._pack,
                digest=self._digest,
                factor=self._factor,
                request=request,
                reply=reply,
                failed=failed,
                recipe=self._recipe,
            )
        )

    def trace(self) -> RunTrace | None:
        """Why the run answered as it did: each model call's pack, and what the answer used.
        Made when asked for (the runtime asks after the answer): none of it is needed
        before."""
        attribution = self._attribution
        if attribution is None and self._attribute_later is not None:
            attribution = self._attribute_later()
        return RunTrace(
            run_id=self._run_id,
            model=self._model.model,
            status=self.state.status,
            calls=tuple(make() for make in self._traced),
            attribution=attribution,
        )

    # -- helpers -------------------------------------------------------------------------

    def _stop_over_limit(self, problem: str | None) -> None:
        if problem is not None:
            self._step("limit", problem)
            raise StopRun(self._error("usage_limit_exceeded", problem))

    def _estimated(self, reply: ModelReply) -> Usage:
        """A call's tokens when its provider reports none: the pack as planned and the
        reply as counted, so a limit holds with any provider."""
        said = reply.text + "".join(call.name + call.arguments for call in reply.tool_calls)
        prompt = self._pack.budget_used if self._pack is not None else 0
        return Usage(prompt_tokens=prompt, completion_tokens=self._tokenizer.count(said))

    def _frame(self, author: Author, text: str) -> None:
        index = sum(1 for m in self._turn if m.author == author) + 1
        self._turn.append(
            Message(id=f"{self._run_id}:{author}:{index}", role="user", content=text, author=author)
        )

    def _tool_specs(self) -> tuple[ToolSpec, ...]:
        specs = [tool_spec(self._registry.get(name)) for name in self._registry.tools]
        if self._offers_content():
            specs.append(tool_spec(CONTENT_TOOL))
        return tuple(specs)

    def _offers_content(self) -> bool:
        reader = self._reader
        return (
            reader is not None
            and reader.store.holds_live(reader.now())
            and READ_CONTENT not in self._registry.names
        )

    def _over_token_budget(self) -> bool:
        budget = self._model.run_token_budget
        return budget is not None and self._usage.total_tokens >= WRAP_UP_SHARE * budget

    def _turn_messages(self) -> tuple[Message, ...]:
        return tuple(self._turn)

    def _kept_ask(self) -> tuple[Message, ...]:
        """A cancelled turn also keeps the answer as far as the person saw it (its text,
        masked like any reply), marked ``cancelled``: a stopped answer survives a reload.
        Its tool traffic is not kept, and later windows read it noted as cut short
        (`agrun.memory.noted_failures`), never as a finished answer."""
        asked = super()._kept_ask()
        if self.state.status != "cancelled" or not asked:
            return asked
        shown = [m.content for m in self._turn if m.role == "assistant" and m.content]
        if self._streaming is not None and self._streaming.text:
            shown.append(self._redacted(self._streaming.text))
        text = "\n\n".join(shown)
        if not text.strip():
            return asked
        stopped = Message(
            id=f"{self._run_id}:assistant",
            role="assistant",
            content=text,
            run_status="cancelled",
            error_code=asked[0].error_code,
        )
        return (*asked, stopped)

    def _last_run_extra(self) -> dict[str, Any]:
        return {
            "usage": self._usage,
            "model_calls": self._calls,
            "calls_by_purpose": {"answer": self._calls},
        }


def _result_text(ended: Invocation) -> str:
    if ended.outcome == "returned":
        output = ended.output
        if isinstance(output, str):
            return output
        return json.dumps(output, ensure_ascii=False, separators=(",", ":"), default=str)
    return f"error: {ended.problem}"


def _code(code: str) -> ErrorCode:
    # Every ProviderError code is a RunError code; an unknown one is reported as the family's.
    for known in get_args(ErrorCode):
        if known == code:
            return cast(ErrorCode, known)
    return "provider_error"
