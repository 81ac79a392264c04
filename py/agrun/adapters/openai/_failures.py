"""What a failed HTTP exchange means, and when to try again. Pure: the caller sleeps.

    4xx (not 408, 429)      ProviderHttpError with the provider's own message, at once
    408                     retried, then ProviderTimeout
    429                     retried (Retry-After honoured), then ProviderRateLimited
    5xx, no connection      retried with exponential backoff, then ProviderUnavailable

Retries happen only before the first byte of a reply's body is used: a stream that breaks
later is `ProviderStreamCut`, never sent twice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any

from ...chat import (
    ProviderError,
    ProviderHttpError,
    ProviderProtocolError,
    ProviderRateLimited,
    ProviderTimeout,
    ProviderUnavailable,
)
from ._json import parse_json
from ._scrub import Scrubber

__all__ = [
    "RetryPolicy",
    "error_message",
    "http_failure",
    "is_retryable",
    "retry_after_s",
    "stream_failure",
    "unreachable",
]

# Enough of a provider's message to act on; the rest is usually an HTML error page.
_MESSAGE_LIMIT = 500


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded retries with capped exponential backoff: retry ``n`` (1-based) waits
    ``initial_delay_s * 2**(n-1)``, at most ``max_delay_s``, unless the provider said how
    long (Retry-After), which is honoured up to ``max_retry_after_s`` (longer: give up)."""

    max_retries: int = 3
    initial_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 60.0

    def delay_s(self, retry: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before retry number ``retry``, or None: do not retry."""
        if retry < 1 or retry > self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after_s else None
        return min(self.max_delay_s, self.initial_delay_s * 2.0 ** (retry - 1))


def is_retryable(status: int) -> bool:
    """Whether a request that got ``status`` may succeed if sent again unchanged."""
    return status in (408, 429) or status >= 500


def retry_after_s(headers: Mapping[str, str], *, now_s: float) -> float | None:
    """How long the provider asked to wait (names lower-cased), in seconds, or None.

    Reads ``retry-after-ms`` (OpenAI's) and then ``Retry-After`` as delay-seconds or as an
    HTTP date, which ``now_s`` (Unix seconds, the caller's clock) turns into a delay.
    """
    millis = _non_negative(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _non_negative(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # HTTP dates are GMT
    return max(0.0, when.timestamp() - now_s)


def _non_negative(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def error_message(body: bytes) -> str:
    """The provider's own words from an error body: OpenAI's ``{"error": {"message"}}``,
    a bare ``{"error": "..."}``, ``{"message"}``/``{"detail"}``, or the text itself.

    Raises:
        ProviderProtocolError: the body is JSON nested too deep to parse safely.
    """
    text = body.decode("utf-8", "replace").strip()
    try:
        parsed: Any = parse_json(text, "an error body")
    except ValueError:
        parsed = None
    message = _message_of(parsed) if parsed is not None else None
    if message is None:
        message = " ".join(text.split())
    message = message or "(no message)"
    if len(message) > _MESSAGE_LIMIT:
        message = message[:_MESSAGE_LIMIT] + "…"
    return message


def _message_of(parsed: Any) -> str | None:
    if not isinstance(parsed, dict):
        return None
    error = parsed.get("error", parsed)
    if isinstance(error, str):
        return error
    if not isinstance(error, dict):
        return None
    for key in ("message", "detail", "msg"):
        value = error.get(key)
        if isinstance(value, str) and value:
            code = error.get("code") or error.get("type")
            return f"{value} ({code})" if isinstance(code, str) and code else value
    return None


def http_failure(
    status: int,
    body: bytes,
    *,
    attempts: int,
    retry_after: float | None,
    scrub: Scrubber,
) -> ProviderError:
    """The typed error for a final failed status, after ``attempts`` tries; the message is
    the provider's own, with secrets masked (`ProviderProtocolError` for an error body
    nested too deep to read)."""
    try:
        message = scrub.message(error_message(body))
    except ProviderProtocolError as error:
        return ProviderProtocolError(f"HTTP {status}: {error}")
    tries = f" ({attempts} attempts)" if attempts > 1 else ""
    if status == 429:
        return ProviderRateLimited(
            f"the model provider is rate limiting requests (HTTP 429){tries}: {message}",
            retry_after_s=retry_after,
        )
    if status == 408:
        return ProviderTimeout(f"the model provider timed out (HTTP 408){tries}: {message}")
    if status >= 500:
        return ProviderUnavailable(f"the model provider failed (HTTP {status}){tries}: {message}")
    return ProviderHttpError(status, message)


def unreachable(url: str, reason: str, *, attempts: int, scrub: Scrubber) -> ProviderUnavailable:
    """The error for a connection that never gave a reply, after ``attempts`` tries."""
    tries = f" ({attempts} attempts)" if attempts > 1 else ""
    return ProviderUnavailable(
        scrub.message(f"could not reach the model provider at {url}{tries}: {reason}")
    )


def stream_failure(error: Any, *, scrub: Scrubber) -> ProviderError:
    """The error for an error object a provider sent inside a 200 stream (llama.cpp and
    others do): by its ``code`` if that is a 4xx status, else `ProviderUnavailable`."""
    message = scrub.message(error_message(json.dumps({"error": error}).encode()))
    code = error.get("code") if isinstance(error, dict) else None
    if code == 429:
        return ProviderRateLimited(f"the model provider is rate limiting requests: {message}")
    if isinstance(code, int) and 400 <= code < 500 and code != 408:
        return ProviderHttpError(code, message)
    return ProviderUnavailable(f"the model provider failed mid-stream: {message}")
