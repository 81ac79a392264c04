"""Errors of context synthesis.

    AgrunError                      (agrun._errors)
    ├── ConfigError                 (agrun._errors)
    │   └── ContextRequestInvalid   the request does not have the documented shape
    ├── ContextBuildingFailed       the protected minimum does not fit the budget, or an
    │   │                           extension failed (the cause is chained)
    │   └── ContextPackIncomplete   the built pack failed its self-check (a protected
    │                               entry missing, or over budget)
    └── ContextBuildCancelled       the caller's ``cancelled`` callable asked the build to stop

A build never sends an over-budget or headless prompt: when the system prompt, policies,
direction fields and current request alone exceed the budget, it raises instead.
"""

from __future__ import annotations

from pydantic import ValidationError

from .._base import AgrunError, ConfigError
from ._events import ContextBuildingFailedEvent

__all__ = [
    "ContextBuildCancelled",
    "ContextBuildingFailed",
    "ContextPackIncomplete",
    "ContextRequestInvalid",
]


class ContextRequestInvalid(ConfigError):
    """A context request does not have the documented shape (docs/context.md)."""

    code = "invalid_context_request"

    @classmethod
    def from_validation(cls, what: str, error: ValidationError) -> ContextRequestInvalid:
        """Name the first few bad fields by their camelCase path, as the caller wrote them."""
        problems = [
            f"{'.'.join(str(part) for part in item['loc']) or '(top)'}: {item['msg']}"
            for item in error.errors(include_url=False)[:3]
        ]
        more = error.error_count() - len(problems)
        tail = f" (and {more} more)" if more > 0 else ""
        return cls(f"{what} is malformed: {'; '.join(problems)}{tail}")


class ContextBuildingFailed(AgrunError):
    """The protected minimum of a pack does not fit its budget.

    ``event`` is the `ContextBuildingFailedEvent` that was emitted; its ``items`` name
    what did not fit. Raise the budget, shorten the system prompt or policies, or pass a
    shorter request.
    """

    code = "context_building_failed"

    def __init__(self, event: ContextBuildingFailedEvent) -> None:
        self.event = event
        if event.needed is None:
            super().__init__(event.reason)
            return
        listed = ", ".join(event.items)
        super().__init__(
            f"{event.reason}: the protected minimum needs {event.needed} tokens but the "
            f"budget leaves {event.available} ({listed}); raise the budget or shorten these"
        )


class ContextPackIncomplete(ContextBuildingFailed):
    """A built pack failed the check every build ends with: the current request, a
    direction field (a pending clarification among them) or another protected entry is
    not in it as it was made, or it is over its budget.

    A bug, never a state of the request: the pack is not sent. ``event.items`` names what
    is missing as ``<kind>:<name or id>``.
    """

    code = "context_pack_incomplete"


class ContextBuildCancelled(AgrunError):
    """The build stopped because its ``cancelled`` callable answered true (spec 001 §14).

    Not a `ContextBuildingFailed`: nothing is wrong with the request, so a caller that
    retries failed builds must not retry this one. ``event`` is the
    `ContextBuildingFailedEvent` (reason ``"cancelled"``) that was emitted; no pack, and
    no `ContextPackBuilt` event, comes out of a cancelled build.
    """

    code = "context_build_cancelled"

    def __init__(self, event: ContextBuildingFailedEvent) -> None:
        self.event = event
        super().__init__("the context build was cancelled by its caller")
