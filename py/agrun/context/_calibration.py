"""Self-calibrating token counts: what the provider really counted, per model.

agrun's estimator counts a pack before the call; the provider reports what the prompt
really cost (``usage.prompt_tokens``). Their ratio, per model, corrects the pack's budget at
the next call: the budget is divided by the largest ratio seen lately (plus a little
headroom), so a model whose tokenizer counts more than the estimate still gets a prompt that
fits its window, and one that counts less gets to use more of it. Until a model has been
seen, the prior factor applies (1.0: trust the estimate, which errs high for o200k-like
tokenizers).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

__all__ = ["TokenCalibration"]

# Headroom over the largest ratio seen, and how many recent calls are remembered.
HEADROOM = 1.03
WINDOW = 20


class TokenCalibration:
    """Per model: the factor by which the provider's counts exceed the estimate."""

    def __init__(self, prior: float = 1.0) -> None:
        if prior <= 0:
            raise ValueError(f"the prior token factor must be positive, got {prior!r}")
        self.prior = prior
        self._ratios: dict[str | None, deque[float]] = {}

    def factor(self, model: str | None) -> float:
        """Real tokens per estimated token to plan with (the worst recent ratio, with
        headroom; the prior until the model has been seen)."""
        seen = self._ratios.get(model)
        if not seen:
            return self.prior
        return max(seen) * HEADROOM

    def observe(self, model: str | None, estimated: int, actual: int) -> None:
        """Record one call: ``estimated`` by agrun, ``actual`` by the provider."""
        if estimated <= 0 or actual <= 0:
            return
        self._ratios.setdefault(model, deque(maxlen=WINDOW)).append(actual / estimated)

    def restore(self, calls: Iterable[tuple[str | None, int, int]]) -> None:
        """Start again from recorded calls (model, estimated, actual), oldest first: what
        a resumed session learned before (its traces keep each call's figures)."""
        self._ratios = {}
        for model, estimated, actual in calls:
            self.observe(model, estimated, actual)

    def snapshot(self) -> dict[str, float]:
        """The factor per model seen so far (for diagnostics and docs)."""
        return {str(model): self.factor(model) for model in self._ratios}
