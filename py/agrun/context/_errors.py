"""Errors of context synthesis.

    AgrunError                      (agrun._errors)
    └── ContextBuildingFailed       the protected minimum does not fit the budget, or an
                                    extension failed (the cause is chained)

A build never sends an over-budget or headless prompt: when the system prompt, policies,
direction fields and current request alone exceed the budget, it raises instead.
"""

from __future__ import annotations

from .._errors import AgrunError
from ._events import ContextBuildingFailedEvent

__all__ = ["ContextBuildingFailed"]


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
