"""Secret scrubbing before anything reaches a pack (spec 001 section 17).

The default `PatternRedactor` replaces common credential shapes with ``[REDACTED]``. It
is a floor, not the full sensitive-content filter (that comes with global memory); a
host can pass any object with a ``redact(text) -> str`` method instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["DEFAULT_SECRET_HINTS", "DEFAULT_SECRET_PATTERNS", "PatternRedactor"]

MASK = "[REDACTED]"


DEFAULT_SECRET_PATTERNS: tuple[str, ...] = (
    # PEM private keys, whole block.
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    # Anthropic and OpenAI style keys.
    r"\bsk-ant-[A-Za-z0-9_\-]{16,}",
    r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{16,}",
    # Google API keys and OAuth access tokens.
    r"\bAIza[0-9A-Za-z_\-]{30,}",
    r"\bya29\.[0-9A-Za-z_\-]{20,}",
    # GitHub tokens.
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    # AWS access key ids.
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    # Slack tokens.
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",
    # JSON Web Tokens.
    r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    # Bearer tokens in headers (the word "Bearer" stays).
    r"(?P<keep>\b(?i:bearer)\s+)[A-Za-z0-9._~+/\-]{16,}=*",
    # password=..., api_key: "...", "token": "..." (the name stays).
    r"(?P<keep>\b(?i:password|passwd|pwd|api[_-]?key|secret|access[_-]?token|token)"
    r"[\"']?\s*[=:]\s*[\"']?)[^\s\"',;]{4,}",
)
"""Credential shapes the default redactor masks. A group named ``keep`` is left in place."""

DEFAULT_SECRET_HINTS: tuple[str, ...] = (
    "private key",
    "sk-",
    "aiza",
    "ya29.",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "akia",
    "asia",
    "xox",
    "eyj",
    "bearer",
    "pass",
    "pwd",
    "api",
    "secret",
    "token",
)
"""Lower-case substrings one of which every default pattern's match contains."""


class PatternRedactor:
    """Replaces every match of a set of regular expressions with ``[REDACTED]``."""

    def __init__(
        self,
        patterns: Iterable[str] = DEFAULT_SECRET_PATTERNS,
        *,
        hints: Iterable[str] | None = None,
    ) -> None:
        """``hints``: lower-case substrings one of which any match contains; texts with none
        are passed through untouched. Defaults to `DEFAULT_SECRET_HINTS` for the default
        patterns and to none (every text is scanned) for others."""
        self.patterns = tuple(patterns)
        if hints is None and self.patterns == DEFAULT_SECRET_PATTERNS:
            hints = DEFAULT_SECRET_HINTS
        self.hints = tuple(hints) if hints is not None else None
        self._regexes = tuple(re.compile(p) for p in self.patterns)
        # One pass to tell whether any pattern can match; most texts hold no secret.
        self._any = re.compile(
            "|".join(f"(?:{re.sub(r'[(][?]P<keep>', '(', p)})" for p in self.patterns)
        )

    def redact(self, text: str) -> str:
        """``text`` with each secret replaced by ``[REDACTED]``."""
        if not text:
            return text
        if self.hints is not None:
            lowered = text.lower()
            if not any(hint in lowered for hint in self.hints):
                return text
        if self._any.search(text) is None:
            return text
        for regex in self._regexes:
            text = regex.sub(_mask, text)
        return text


def _mask(match: re.Match[str]) -> str:
    kept = match.groupdict().get("keep") or ""
    return kept + MASK
