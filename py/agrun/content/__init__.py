"""The response content store (spec 002): what the agent said, kept whole behind a
``content_ref``, and the ``read_content`` tool that reaches it."""

from ._read_tool import READ_CONTENT, ContentAdvert, ContentReader, ReadContent, compact_reads
from ._store import (
    ContentDigestMismatch,
    ContentEntry,
    ContentLimits,
    ContentRefNotFound,
    ContentStore,
    read_entries,
    reply_text,
    verified,
)

__all__ = [
    "READ_CONTENT",
    "ContentAdvert",
    "ContentDigestMismatch",
    "ContentEntry",
    "ContentLimits",
    "ContentReader",
    "ContentRefNotFound",
    "ContentStore",
    "ReadContent",
    "compact_reads",
    "read_entries",
    "reply_text",
    "verified",
]
