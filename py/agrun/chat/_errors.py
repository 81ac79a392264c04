"""Errors of model calls: the outside world's fault, split by what a caller can do.

    AgrunError
    └── ProviderError               the model provider failed
        ├── ProviderHttpError       the provider refused the request (4xx), with its message
        ├── ProviderRateLimited     429, still, after the bounded retries
        ├── ProviderUnavailable     5xx or no connection, still, after the bounded retries
        ├── ProviderTimeout         no answer within the time allowed
        ├── ProviderStreamCut       the stream ended before its finish
        ├── ProviderReplyTooLong    the reply ran far past its token or byte bound
        └── ProviderProtocolError   the reply broke the wire format (malformed JSON, a tool
                                    call with no name, events after the finish)

Inside a run none of these is raised: the run fails with the error's ``code`` as its
`RunError` code, the session stays as it was, and nothing is appended. Messages never carry
an API key (adapters redact what a provider echoes back).
"""

from __future__ import annotations

from .._base import AgrunError

__all__ = [
    "ProviderError",
    "ProviderHttpError",
    "ProviderProtocolError",
    "ProviderRateLimited",
    "ProviderReplyTooLong",
    "ProviderStreamCut",
    "ProviderTimeout",
    "ProviderUnavailable",
]


class ProviderError(AgrunError):
    """A model provider failed."""

    code = "provider_error"


class ProviderHttpError(ProviderError):
    """The provider refused the request with a 4xx status; ``status`` and its message."""

    code = "provider_http_error"

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(f"the model provider refused the request (HTTP {status}): {message}")


class ProviderRateLimited(ProviderError):
    """429 Too Many Requests, still, after the bounded retries."""

    code = "provider_rate_limited"

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(message)


class ProviderUnavailable(ProviderError):
    """5xx or no connection, still, after the bounded retries."""

    code = "provider_unavailable"


class ProviderTimeout(ProviderError):
    """No answer (or no next piece of the stream) within the time allowed."""

    code = "provider_timeout"


class ProviderStreamCut(ProviderError):
    """The stream ended before its finish; what had arrived is in ``partial_text``."""

    code = "provider_stream_cut"

    def __init__(self, message: str, partial_text: str = "") -> None:
        self.partial_text = partial_text
        super().__init__(message)


class ProviderReplyTooLong(ProviderError):
    """The reply grew far past the tokens asked for (or past a byte bound): the call was
    ended there; what had arrived is in ``partial_text``."""

    code = "provider_reply_too_long"

    def __init__(self, message: str, partial_text: str = "") -> None:
        self.partial_text = partial_text
        super().__init__(message)


class ProviderProtocolError(ProviderError):
    """The provider's reply broke the wire format."""

    code = "provider_protocol_error"
