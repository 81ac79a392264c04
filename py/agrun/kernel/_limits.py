"""Per-run usage limits: how many model requests, tokens and tool calls one run may spend.

The shape is pydantic-ai's ``UsageLimits`` (``request_limit``, ``tool_calls_limit``,
``input_tokens_limit``, ``output_tokens_limit``, ``total_tokens_limit``), given per run:
``run(text, usage_limits=UsageLimits(request_limit=3))``; a page gives
``run(text, { usageLimits: { requestLimit: 3 } })``. A limit that is passed fails the run
with ``usage_limit_exceeded`` and a message naming the limit and the counts.

The checks, and when they run (as pydantic-ai's): the request limit before each model call
(a call that would be one too many is never made); the token limits after each call, on the
run's sums (tokens are known only once the provider has answered); the tool-call limit
before a cycle's tool calls run (none of a batch that would pass it runs). Every model call
of the run counts: the answer's cycles and the calls that carry a correction frame. The
memory extraction, which runs after ``run()`` has returned, is not the run's and does not
count (it is one bounded call, listed in ``last_run.calls_by_purpose``).

This is a hard stop; ``run_token_budget`` is the soft one (at 80 % of it the model is asked
to answer with what it has). Both may be set: the budget asks first, the limit stops.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

from .._base import ConfigError, Model
from ..chat import Usage

__all__ = ["UsageLimits"]


class UsageLimits(Model):
    """Limits on what one run may spend; None (the default) for no limit."""

    request_limit: int | None = Field(None, ge=1)
    """Model requests (calls), answer and corrections alike."""
    tool_calls_limit: int | None = Field(None, ge=0)
    """Tool calls that run (refused calls are bounded by ``max_corrections`` instead)."""
    input_tokens_limit: int | None = Field(None, ge=1)
    """Prompt tokens, summed over the run's model calls."""
    output_tokens_limit: int | None = Field(None, ge=1)
    """Reply tokens, summed over the run's model calls."""
    total_tokens_limit: int | None = Field(None, ge=1)
    """Prompt and reply tokens, summed over the run's model calls."""

    @classmethod
    def of(cls, value: Any) -> UsageLimits | None:
        """``value`` as limits: a `UsageLimits`, a mapping of its fields (snake_case or
        camelCase), or None.

        Raises:
            ConfigError: anything else, or a limit that is not a whole number in range.
        """
        if value is None or isinstance(value, UsageLimits):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(
                f"usage_limits must be an agrun.UsageLimits or a mapping of its fields, "
                f"got {type(value).__name__}"
            )
        try:
            return cls.model_validate(dict(value), strict=True)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ConfigError(
                f"usage_limits.{where}: {first['msg']}, got {first.get('input')!r}"
            ) from None

    def before_request(self, made: int) -> str | None:
        """Why the next model request may not be made after ``made``, or None."""
        limit = self.request_limit
        if limit is not None and made >= limit:
            return (
                f"the next model request would exceed the request_limit of {limit} "
                f"(requests={made})"
            )
        return None

    def before_tool_calls(self, made: int, asked: int) -> str | None:
        """Why ``asked`` more tool calls may not run after ``made``, or None."""
        limit = self.tool_calls_limit
        if limit is not None and made + asked > limit:
            return (
                f"the model's {asked} tool call(s) would exceed the tool_calls_limit of "
                f"{limit} (tool_calls={made})"
            )
        return None

    def after_call(self, usage: Usage) -> str | None:
        """Which token limit the run's ``usage`` so far has passed, or None."""
        for name, used, limit in (
            ("input_tokens", usage.prompt_tokens, self.input_tokens_limit),
            ("output_tokens", usage.completion_tokens, self.output_tokens_limit),
            ("total_tokens", usage.total_tokens, self.total_tokens_limit),
        ):
            if limit is not None and used > limit:
                return f"the run exceeded the {name}_limit of {limit} ({name}={used})"
        return None
