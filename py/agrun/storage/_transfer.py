"""Export files: one session as JSON, and the careful reading of one.

An import trusts nothing: the text is size-limited, parsed with duplicate keys, NaN and
deep nesting refused, then validated strictly (`ExportFile`). Anything wrong raises
`ImportRejected` before a store is touched.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from .._base import ConfigError, find_uncrossable
from ._errors import ImportRejected
from ._records import EXPORT_FORMAT, FORMAT_VERSION, ExportFile, SessionSnapshot

__all__ = ["MAX_DEPTH", "MAX_IMPORT_BYTES", "dump_session", "encode_json", "parse_session"]

MAX_IMPORT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64


def encode_json(value: Any) -> str:
    """Compact JSON for one stored payload.

    Raises:
        ConfigError: the payload holds something JSON cannot carry exactly (a set, NaN,
            bytes, an integer beyond JavaScript's safe range...), named by its path.
    """
    problem = find_uncrossable(value)
    if problem is not None:
        raise ConfigError(f"storage records must be JSON-ready plain data: {problem}")
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def dump_session(snapshot: SessionSnapshot) -> str:
    """The export file for ``snapshot``."""
    envelope = {
        "format": EXPORT_FORMAT,
        "formatVersion": FORMAT_VERSION,
        "session": snapshot.to_wire(),
    }
    return encode_json(envelope)


def parse_session(text: str | bytes, *, max_bytes: int = MAX_IMPORT_BYTES) -> SessionSnapshot:
    """Read an export file.

    Raises:
        ImportRejected: the text is too large, not JSON, too deep, of another format or
            version, or fails validation (wrong types, gaps in seq, duplicated ids).
    """
    if isinstance(text, bytes | bytearray):
        if len(text) > max_bytes:
            raise ImportRejected(f"export file is {len(text)} bytes, over the {max_bytes} limit")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            raise ImportRejected(f"export file is not UTF-8: {error}") from None
    if not isinstance(text, str):
        raise ImportRejected(f"an export file is JSON text, got {type(text).__name__}")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise ImportRejected(f"export file is {size} bytes, over the {max_bytes} limit")
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)
    except RecursionError:
        raise ImportRejected(f"export file nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        raise ImportRejected(f"export file is not valid JSON: {error}") from None
    _check_depth(data)
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise ImportRejected(f"not an agrun session export (expected format {EXPORT_FORMAT!r})")
    version = data.get("formatVersion")
    if type(version) is not int or version < 1:
        raise ImportRejected(f"export formatVersion must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise ImportRejected(
            f"export formatVersion {version} is newer than this agrun reads ({FORMAT_VERSION}): "
            "upgrade agrun to import it"
        )
    try:
        return ExportFile.model_validate(data).session
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '<file>'}: {e['msg']}"
            for e in error.errors()[:5]
        )
        raise ImportRejected(f"export file is invalid: {problems}") from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicated key {key!r}")
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _check_depth(data: Any) -> None:
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ImportRejected(f"export file nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
