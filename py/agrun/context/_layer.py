"""The extension point for layers of a host's own (spec 001 section 18)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ._pack import ContextEntry
from ._request import ContextRequest

__all__ = ["ContextLayer"]


@runtime_checkable
class ContextLayer(Protocol):
    """An extension that contributes entries of its own.

    Its entries are redacted, re-counted and admitted after events, in the order given;
    a layer with ``early = True`` (optional; a short index the model needs to act, like
    the runtime's list of stored bodies) is admitted before older transcript instead, right
    after tool outputs. (Its signature speaks context's own types, so it lives here rather
    than in `agrun.ports`.)
    """

    name: str

    def entries(self, request: ContextRequest) -> Sequence[ContextEntry]:
        """The entries this layer offers for ``request``."""
        ...
