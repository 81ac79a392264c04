"""The skill's view of a run: what it may read (`SkillContext`) and ask for (`SkillHelpers`).

Two separate views (spec 000, "Cross-Run Cooperation"): ``context.state`` is what is
happening now, ``context.memory`` is what was kept from earlier runs. Both are read-only.
A skill changes nothing directly; it returns output and asks through its helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._base import ConfigError, HelpersClosedError, ReadOnlyError
from ..content import ContentEntry, ContentRefNotFound
from ..memory import (
    ClarificationAsk,
    ClarificationDecision,
    InquiryNotes,
    MemoryEntryRequest,
    MemoryView,
    SourceRef,
    parse_request,
)
from ._models import RunState

__all__ = ["SkillContext", "SkillHelpers"]


class SkillContext:
    """Read-only: the current run's state and the runtime's memory."""

    __slots__ = ("_arguments", "_content", "_memory", "_read_state")
    _read_state: Callable[[], RunState]
    _memory: MemoryView
    _arguments: Any
    _content: Callable[[str], ContentEntry] | None

    def __init__(
        self,
        read_state: Callable[[], RunState],
        memory: MemoryView,
        arguments: Any = None,
        content: Callable[[str], ContentEntry] | None = None,
    ) -> None:
        object.__setattr__(self, "_read_state", read_state)
        object.__setattr__(self, "_memory", memory)
        object.__setattr__(self, "_arguments", arguments)
        object.__setattr__(self, "_content", content)

    def __setattr__(self, name: str, value: Any) -> None:
        raise ReadOnlyError(f"SkillContext.{name} is read-only: the runtime owns run state")

    @property
    def state(self) -> RunState:
        """The run's state right now (phase is ``act`` while the skill runs); frozen."""
        return self._read_state()

    @property
    def memory(self) -> MemoryView:
        """What earlier runs retained: ``context.memory.read_all()``."""
        return self._memory

    def content(self, ref: str) -> ContentEntry:
        """A stored body by its ``content_ref`` (an earlier reply, in full), read-only.

        Raises:
            ContentRefNotFound: nothing is stored under ``ref`` (evicted, expired, never).
        """
        if self._content is None:
            raise ContentRefNotFound(ref)
        return self._content(ref)

    @property
    def arguments(self) -> Any:
        """When a model called this skill as a tool: its checked arguments (an instance of
        the skill's ``input_model``, or the plain dict); None when it runs as a skill."""
        return self._arguments


class SkillHelpers:
    """What a skill may ask of the runtime during one cycle; closed when its run returns."""

    __slots__ = ("_clarify", "_closed", "_cycle_request", "_notes", "_requests", "_skill")

    def __init__(
        self,
        skill: str,
        *,
        notes: InquiryNotes | None = None,
        clarify: Callable[[ClarificationAsk], ClarificationDecision] | None = None,
    ) -> None:
        self._skill = skill
        self._requests: list[MemoryEntryRequest] = []
        self._cycle_request: str | None = None
        self._closed = False
        self._notes = notes if notes is not None else InquiryNotes()
        self._clarify = clarify

    def append_memory(self, entry: Any) -> MemoryEntryRequest:
        """Ask the runtime to remember ``entry`` if this run succeeds.

        Args:
            entry: a dict with ``text`` and optional ``kind`` (default ``"note"``) and
                ``data`` (a JSON object), or a `MemoryEntryRequest`.

        Returns:
            The checked request, as the runtime will append it.

        Raises:
            MemoryEntryError: the entry is malformed; ``error.field`` names the bad field.
            HelpersClosedError: the skill's run has already returned.
        """
        self._check_open("append_memory")
        request = parse_request(entry)
        self._requests.append(request)
        return request

    def request_cycle(self, reason: str = "") -> None:
        """Ask for another OODAE cycle after this one, with the same skill.

        The runtime derives this cycle's observation, then observes, orients, decides and
        acts again (the skill sees the observation in ``context.state.observation``).
        Runs are bounded by ``max_cycles``: asking past it fails the run ``cycle_limit``.

        Raises:
            ConfigError: ``reason`` is not a string.
            HelpersClosedError: the skill's run has already returned.
        """
        self._check_open("request_cycle")
        if not isinstance(reason, str):
            raise ConfigError(f"request_cycle(reason) takes a string, got {type(reason).__name__}")
        self._cycle_request = reason

    def note_sources(self, candidates: Any, selected: Any = None) -> None:
        """Tell the runtime which sources this turn found (``candidates``) and chose
        (``selected``): each a source id, or ``{"id", "title"}``. They become the inquiry's
        candidate and selected sources if the run succeeds."""
        self._check_open("note_sources")
        if not isinstance(candidates, (list, tuple)):
            raise ConfigError(
                f"note_sources(candidates) takes a list of sources, got {type(candidates).__name__}"
            )
        self._notes.candidates = [_source(item) for item in candidates]
        if selected is not None:
            self._notes.selected = _source(selected)

    def note_search(self, query: str) -> None:
        """Tell the runtime this turn searched for ``query`` (the inquiry's last search)."""
        self._check_open("note_search")
        if not isinstance(query, str):
            raise ConfigError(f"note_search(query) takes a string, got {type(query).__name__}")
        self._notes.search = query

    def note_read(self, source: Any) -> None:
        """Tell the runtime this turn read ``source`` (the inquiry's last read source)."""
        self._check_open("note_read")
        self._notes.read = _source(source)

    def ask_clarification(
        self,
        question: str,
        *,
        missing: str,
        optional: bool = False,
        default: Any = None,
        direct_tool: str | None = None,
        options: Any = (),
    ) -> ClarificationDecision:
        """Ask whether to put ``question`` to the person. Clarification is a last resort:
        the answer is ``ask=False`` (with what to go on with) when the input is optional, a
        safe default applies, a low-risk direct tool path exists, or a confirmed sentence of
        the session holds the ``missing`` input itself (a date for ``"date"``; the word for
        an input of no recognisable kind). Only with ``ask=True`` does the question become
        the inquiry's pending clarification (if the run succeeds), open until a turn answers
        it; return it as your output."""
        self._check_open("ask_clarification")
        ask = ClarificationAsk(
            question=question,
            missing=missing,
            optional=optional,
            default=default,
            direct_tool=direct_tool,
            options=tuple(options),
        )
        decision = (
            self._clarify(ask)
            if self._clarify is not None
            else ClarificationDecision(ask=True, reason="ask")
        )
        if decision.ask:
            self._notes.asks.append(ask)
        return decision

    def _check_open(self, method: str) -> None:
        if self._closed:
            raise HelpersClosedError(
                f"helpers.{method}() was called after skill {self._skill!r} returned; "
                "call helpers only while your run is in progress"
            )

    def _close(self) -> tuple[tuple[MemoryEntryRequest, ...], str | None]:
        # The runtime takes what was asked for and shuts the door on later calls.
        self._closed = True
        return tuple(self._requests), self._cycle_request


def _source(value: Any) -> SourceRef:
    if isinstance(value, SourceRef):
        return value
    if isinstance(value, str):
        return SourceRef(id=value)
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return SourceRef(id=value["id"], title=str(value.get("title", "")))
    raise ConfigError(f"a source is an id (str) or {{'id', 'title'}}, got {type(value).__name__}")
