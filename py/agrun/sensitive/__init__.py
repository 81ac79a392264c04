"""Keeps secrets out of memory and context: a catalog of secret shapes, a redactor, a filter."""

# PatternRedactor masks secrets in a text; SensitiveContentFilter refuses entries whose
# text, metadata or key names hold one, then asks the host's own check. Both use CATALOG.
# Only the standard library is imported.

from ._catalog import CATALOG, SecretShape
from ._filter import HostFilter, SensitiveContentFilter, Verdict, is_secret_key_name
from ._redactor import (
    DEFAULT_SECRET_HINTS,
    DEFAULT_SECRET_PATTERNS,
    MASK,
    PatternRedactor,
    SecretHit,
)

__all__ = [
    "CATALOG",
    "DEFAULT_SECRET_HINTS",
    "DEFAULT_SECRET_PATTERNS",
    "MASK",
    "HostFilter",
    "PatternRedactor",
    "SecretHit",
    "SecretShape",
    "SensitiveContentFilter",
    "Verdict",
    "is_secret_key_name",
]
