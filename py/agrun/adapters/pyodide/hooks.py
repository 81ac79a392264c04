"""The page's synchronous hooks into context building, seen by the kernel as its ports.

``countTokens`` (a `Tokenizer`), ``ranker`` (a `Ranker`), ``compressors`` (`Compressor` by data
type) and ``redactor`` (a `Redactor`) are plain JavaScript functions the page passed to
createRuntime; the host object (web/engine/host.js) calls them and answers JSON or text. What they
answer is checked here: a hook that returns the wrong shape fails the build with a
`ConfigError` naming it, not with a confusing error deeper down.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pyodide.ffi import JsProxy

from ..._base import ConfigError
from ...ports import Span, Tokenizer
from ._proxies import lent_proxies

__all__ = ["JsCompressor", "JsRanker", "JsRedactor", "JsTokenizer"]


class JsTokenizer:
    """The page's own token counter (``createRuntime({ countTokens })``)."""

    name = "host countTokens"

    def __init__(self, host: JsProxy, method: str = "countTokens") -> None:
        # ``method``: the host's method that calls the function (``whatIfCountTokens``:
        # the one a page gave ``rt.whatIf``).
        self._count = getattr(host, method)

    def count(self, text: str) -> int:
        counted = self._count(text)
        if not isinstance(counted, int) or isinstance(counted, bool) or counted < 0:
            raise ConfigError(f"countTokens must return a whole number >= 0, got {counted!r}")
        return counted


class JsRanker:
    """The page's ranker: ``ranker(query, documents) => number[]``, one score each."""

    def __init__(self, host: JsProxy, method: str = "rank") -> None:
        self._rank = getattr(host, method)

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        scores = json.loads(self._rank(query, json.dumps(list(documents))))
        if not isinstance(scores, list) or len(scores) != len(documents):
            raise ConfigError(
                f"ranker must return one number per document ({len(documents)}), got {scores!r}"
            )
        if not all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores):
            raise ConfigError(f"ranker must return numbers, got {scores!r}")
        return [float(s) for s in scores]


class JsCompressor:
    """The page's compressor for one data type: ``(text, { limit, countTokens }) =>
    [[start, end], ...]``, the character spans of ``text`` to keep."""

    def __init__(self, host: JsProxy, data_type: str) -> None:
        self._host = host
        self._type = data_type
        self.name = f"host {data_type}"

    def compress(self, text: str, *, limit: int, tokenizer: Tokenizer) -> list[Span]:
        with lent_proxies(tokenizer.count) as (count,):
            spans = json.loads(self._host.compress(self._type, text, limit, count))
        if not isinstance(spans, list) or not all(_is_span(span) for span in spans):
            raise ConfigError(
                f"compressors.{self._type} must return [[start, end], ...] of whole numbers, "
                f"got {spans!r}"
            )
        return [(span[0], span[1]) for span in spans]


class JsRedactor:
    """The page's redactor: ``(text) => text`` with its secrets replaced."""

    def __init__(self, host: JsProxy) -> None:
        self._host = host

    def redact(self, text: str) -> str:
        redacted = self._host.redact(text)
        if not isinstance(redacted, str):
            raise ConfigError(f"redactor must return a string, got {redacted!r}")
        return redacted


def _is_span(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in value)
    )
