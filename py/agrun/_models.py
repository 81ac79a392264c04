"""The kernel's data: one run's state and result (spec 000, "State Model").

Python spells fields in snake_case; every model carries camelCase aliases so the same
model crosses into JavaScript unchanged (``model_dump(by_alias=True)``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

RunStatus = Literal["running", "succeeded", "failed", "cancelled"]


class Model(BaseModel):
    """Base for agrun's models: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready, camelCase form that crosses into JavaScript."""
        return self.model_dump(mode="json", by_alias=True)


class RunState(Model):
    """What one ``run()`` is doing now. Not a history, and no output field."""

    run_id: str
    status: RunStatus
    step_count: int = 0
    selected_skill: str | None = None


class RunResult(Model):
    """What ``run()`` returns: the skill's output beside the run's final state."""

    output: Any
    state: RunState
