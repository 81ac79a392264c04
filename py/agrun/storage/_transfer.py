"""Export files: one session as JSON, and the careful reading of one.

An import trusts nothing: the text is size-limited, parsed with duplicate keys, NaN and
deep nesting refused, then validated strictly (`ExportFile`). Anything wrong raises
`ImportRejected` before a store is touched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from .._base import ConfigError, find_uncrossable, json_nests_deeper
from ._errors import ImportRejected
from ._records import (
    EXPORT_FORMAT,
    FORMAT_VERSION,
    ContentRecord,
    ExportFile,
    JsonObject,
    SessionSnapshot,
    StoredTurn,
    TurnCommit,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_IMPORT_BYTES",
    "dump_session",
    "encode_commit",
    "encode_json",
    "number_memory",
    "parse_session",
    "read_snapshot",
]

MAX_IMPORT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64


def encode_json(value: Any, *, ascii_only: bool = False) -> str:
    """Compact JSON for one stored payload (``ascii_only``: non-ASCII characters escaped).

    Raises:
        ConfigError: the payload holds something JSON cannot carry exactly (a set, NaN,
            bytes, an integer beyond JavaScript's safe range...), named by its path.
    """
    problem = find_uncrossable(value)
    if problem is not None:
        raise ConfigError(f"storage records must be JSON-ready plain data: {problem}")
    return json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only)


def encode_commit(commit: TurnCommit, *, ascii_only: bool = False) -> str:
    """``encode_json(commit.model_dump(by_alias=True))``, without that copy of every body:
    the fields as they are, under their wire names, are checked and encoded (when they are
    plain data the dump would be equal to them). A commit holding anything else is dumped
    first as before, so what it is refused for (or encoded as) is what it was.

    Raises:
        ConfigError: as `encode_json`.
    """
    fields = {
        field.serialization_alias or field.alias or name: getattr(commit, name)
        for name, field in TurnCommit.model_fields.items()
    }
    try:
        return encode_json(fields, ascii_only=ascii_only)
    except ConfigError:
        return encode_json(commit.model_dump(by_alias=True), ascii_only=ascii_only)


def number_memory(entries: list[JsonObject], stored: int) -> list[JsonObject]:
    """Memory entries of a commit numbered after the ``stored`` ones the session holds.

    A memory entry's ``seq`` is its place in the session's memory log, and the store is
    the one that knows that place: a commit retried after other writers went first
    (another tab, a turn kept pending) still gets unique, gapless numbers on disk.
    """
    return [{**entry, "seq": stored + offset} for offset, entry in enumerate(entries, start=1)]


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
    # Before any recursive parse: json's parser recurses per level, and inside Pyodide a
    # few thousand levels overflow the WebAssembly stack and kill the interpreter.
    if json_nests_deeper(text, MAX_DEPTH):
        raise ImportRejected(f"export file nests deeper than {MAX_DEPTH} levels")
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)
    except RecursionError:
        raise ImportRejected(f"export file nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        raise ImportRejected(f"export file is not valid JSON: {error}") from None
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
        session = ExportFile.model_validate(data).session
    except ValidationError as error:
        raise ImportRejected(f"export file is invalid: {_problems(error)}") from None
    # The store's own record, checked strictly here, so an entry of the wrong types is
    # refused at the door instead of reported unreadable when the session opens.
    for position, entry in enumerate(session.content_entries):
        try:
            ContentRecord.model_validate(entry)
        except ValidationError as error:
            where = f"session.contentEntries.{position}."
            raise ImportRejected(f"export file is invalid: {where}{_problems(error)}") from None
    return session


def _problems(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '<file>'}: {e['msg']}" for e in error.errors()[:5]
    )


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicated key {key!r}")
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_snapshot(raw: Mapping[str, Any], session_id: str) -> SessionSnapshot:
    """A session as a store read it back, keeping whatever is readable.

    Never raises for what is inside: a turn, item or snapshot that does not have the
    record's shape is left out and named in ``damage`` (it stays on disk), so no stored
    session can become unopenable. The strict checks of an import (seq 1..n, unique ids)
    are not applied: a store returns what it holds.
    """
    damage: list[str] = []
    turns: list[StoredTurn] = []
    for index, item in enumerate(_listed(raw.get("turns"), "turns", damage), start=1):
        if not isinstance(item, Mapping):
            damage.append(f"turn #{index}: not an object")
            continue
        fields: dict[str, Any] = {
            "seq": item.get("seq"),
            "turnId": item.get("turnId"),
            "committedAtMs": item.get("committedAtMs"),
        }
        for name in ("messages", "events", "memoryEntries"):
            fields[name] = _objects(item.get(name), f"turn #{index} {name}", damage)
        try:
            turns.append(StoredTurn.model_validate(fields))
        except ValidationError as error:
            damage.append(f"turn #{index}: {_first(error)}")
    content = []
    for entry in _objects(raw.get("contentEntries"), "contentEntries", damage):
        if isinstance(entry.get("ref"), str) and entry["ref"]:
            content.append(entry)
        else:
            damage.append("contentEntries: an entry without a ref")
    return SessionSnapshot.model_construct(
        session_id=session_id,
        turns=turns,
        session_memory=_object(raw.get("sessionMemory"), "sessionMemory", damage),
        inquiry=_object(raw.get("inquiry"), "inquiry", damage),
        content_entries=content,
        last_run=_object(raw.get("lastRun"), "lastRun", damage),
        damage=tuple(damage),
    )


def _objects(value: Any, what: str, damage: list[str]) -> list[dict[str, Any]]:
    kept = []
    for position, item in enumerate(_listed(value, what, damage)):
        if isinstance(item, dict):
            kept.append(item)
        else:
            damage.append(f"{what}[{position}]: not an object")
    return kept


def _listed(value: Any, what: str, damage: list[str]) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    damage.append(f"{what}: not a list")
    return []


def _object(value: Any, what: str, damage: list[str]) -> dict[str, Any] | None:
    if value is None or isinstance(value, dict):
        return value
    damage.append(f"{what}: not an object")
    return None


def _first(error: ValidationError) -> str:
    item = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in item["loc"]) or "<value>"
    return f"{where}: {item['msg']}"
