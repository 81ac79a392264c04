"""Decides whether an entry may be kept in memory: no secret in its text, metadata or keys."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .._base import MAX_PLAIN_DEPTH, CheckedDict, CheckedList, plain_copy
from ._redactor import PatternRedactor

__all__ = ["HostFilter", "SensitiveContentFilter", "Verdict", "is_secret_key_name"]

HostFilter = Callable[[Any], bool | str | None]
"""A host's own check: True or a reason string refuses the entry; False, None or "" pass."""

_KEY_RULE = "secret key name"


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Names (words joined, lower case) that hold a credential whatever their value.
_SECRET_NAMES = _names(
    "password passwords passwd passphrase pwd pword secret secrets token bearer authorization "
    "apikey xapikey privatekey privkey secretkey secretkeybase accesskey secretaccesskey "
    "clientsecret apisecret appsecret accesstoken refreshtoken authtoken idtoken sessiontoken "
    "apitoken credential credentials authkey encryptionkey signingkey masterkey accountkey "
    "subscriptionkey"
)
# A first word that makes the name a flag or a limit about a secret, not the secret itself.
_FLAG_WORDS = _names(
    "is has should use uses require requires need needs allow allows enable enabled "
    "disable disabled show hide no min max num"
)
# Words before "token" that make it guard a page or a form, not an account.
_HARMLESS_TOKENS = _names("page next sync csrf xsrf continuation cursor")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@lru_cache(maxsize=4096)  # the same few keys come back in every entry a turn checks
def is_secret_key_name(name: str) -> bool:
    """Whether a key named ``name`` holds a credential (any case, any separator:
    ``apiKey``, ``api_key``, ``X-API-Key``, ``client_secret``, ``accessToken``)."""
    words = [word.lower() for word in _WORDS.findall(name)]
    if not words or (len(words) > 1 and words[0] in _FLAG_WORDS):
        return False
    if len(words) > 1 and words[-1] == "token" and words[-2] in _HARMLESS_TOKENS:
        return False
    return any("".join(words[-n:]) in _SECRET_NAMES for n in (1, 2, 3))


@dataclass(frozen=True, slots=True)
class Verdict:
    """The filter's answer: ``reasons`` name each hit as ``path: rule``, never its value."""

    allowed: bool
    reasons: tuple[str, ...] = ()


class SensitiveContentFilter:
    """Refuses entries that hold a secret; anything else is the host's to judge.

    ``check`` walks the entry (mappings, lists, tuples, sets, dataclasses, objects with a
    ``model_dump()``), once per container even when it refers to itself, and refuses it
    when a key is named like a credential (whatever its value), when a key or a string
    matches a secret shape, when it nests deeper than ``max_depth``, or when it cannot be
    read. Then the host's ``extra`` check, if any, sees the entry; an exception it raises
    refuses the entry too.
    """

    def __init__(
        self,
        *,
        extra: HostFilter | None = None,
        redactor: PatternRedactor | None = None,
        max_depth: int = 64,
    ) -> None:
        self.extra = extra
        self.redactor = redactor if redactor is not None else PatternRedactor()
        self.max_depth = max_depth

    def check(self, entry: Any) -> Verdict:
        """Whether ``entry`` may be kept, and why not."""
        reasons: list[str] = []
        try:
            if not self._plain_and_clean(entry):
                self._walk(entry, reasons)
        except Exception as exc:  # a hostile or broken entry is refused, not trusted
            reasons.append(f"$: unreadable entry ({type(exc).__name__})")
        return self._verdict(entry, reasons)

    def clean_copy(
        self,
        value: Any,
        *,
        scrub: Callable[[str], str] | None = None,
        frozen: tuple[type[CheckedDict[str, Any]], type[CheckedList[Any]]] | None = None,
    ) -> tuple[Any, bool] | None:
        """``plain_copy(value, scrub=scrub)`` when that copy is plain data in which `check`
        finds nothing as an entry's ``body`` (no secret in a string or a key, no key named
        like a credential, not too deep); None otherwise, and the caller's slower path
        (`check`) names why. The scrub, the copy, the crossing check and the scan for
        secrets in one walk (``frozen``: made of those read-only types, as `plain_copy`
        makes it). The host's check is not asked: `check_host` asks it."""
        # As a body, the value sits one level below the entry `check` is given.
        depth = min(MAX_PLAIN_DEPTH, self.max_depth - 1)
        return plain_copy(
            value,
            max_depth=depth,
            scrub=scrub,
            clean_text=self._clean_text,
            clean_key=self._clean_key,
            frozen=frozen,
        )

    def check_host(self, entry: Any) -> Verdict:
        """What `check` says of an ``entry`` whose body `clean_copy` made: only the host's
        own check is left to ask."""
        return self._verdict(entry, [])

    def _verdict(self, entry: Any, reasons: list[str]) -> Verdict:
        if self.extra is not None:
            reasons += self._ask_host(self.extra, entry)
        unique = tuple(dict.fromkeys(reasons))
        return Verdict(allowed=not unique, reasons=unique)

    def _clean_text(self, text: str) -> bool:
        return not self.redactor.find(text)

    def _clean_key(self, key: str) -> bool:
        return not (self.redactor.find(key) or is_secret_key_name(key))

    def _plain_and_clean(self, entry: Any) -> bool:
        """Whether ``entry`` is plain JSON-shaped data (dicts, lists, tuples, strings, numbers,
        None) that `_walk` would find nothing in. Most entries are: this answers without
        building a path for every node; anything else (a hit, another type) is left to the
        walk, which names each reason, so the verdict is the walk's either way."""
        find = self.redactor.find
        seen: set[int] = set()
        stack: list[tuple[Any, int]] = [(entry, 0)]
        while stack:
            node, depth = stack.pop()
            kind = type(node)
            if kind is str:
                if find(node):
                    return False
                continue
            if node is None or kind is int or kind is float or kind is bool:
                continue
            if kind is dict:
                items: Any = node.items()
            elif kind is list or kind is tuple:
                items = None
            else:
                return False
            # Depth before the cycle check: a container met twice (shared, or the one empty
            # tuple) may be too deep on the path the walk takes to it.
            if depth >= self.max_depth:
                return False
            if id(node) in seen:
                continue
            seen.add(id(node))
            if items is None:
                stack += ((value, depth + 1) for value in node)
                continue
            for key, value in items:
                if type(key) is str:
                    if find(key) or is_secret_key_name(key):
                        return False
                elif not isinstance(key, int):
                    return False
                stack.append((value, depth + 1))
        return True

    def _walk(self, entry: Any, reasons: list[str]) -> None:
        seen: set[int] = set()
        alive: list[Any] = []  # containers made here stay alive, so their ids stay unique
        stack: list[tuple[str, Any, int]] = [("$", entry, 0)]
        while stack:
            path, node, depth = stack.pop()
            if isinstance(node, str):
                reasons += (f"{path}: {hit.rule}" for hit in self.redactor.find(node))
                continue
            if isinstance(node, bytes | bytearray):
                stack.append((path, bytes(node).decode("utf-8", "replace"), depth))
                continue
            children = _children(node)
            if children is None or id(node) in seen:
                continue
            seen.add(id(node))
            alive.append(children)
            if depth >= self.max_depth:
                reasons.append(f"{path}: nested deeper than {self.max_depth}")
                continue
            pushed: list[tuple[str, Any, int]] = []
            for key, value in children:
                if isinstance(key, int):
                    pushed.append((f"{path}[{key}]", value, depth + 1))
                    continue
                name = key if isinstance(key, str) else str(key)
                hits = self.redactor.find(name)
                child = path + self._segment(name, bool(hits))
                if is_secret_key_name(name):
                    reasons.append(f"{child}: {_KEY_RULE}")
                reasons += (f"{child}: {hit.rule} in key" for hit in hits)
                pushed.append((child, value, depth + 1))
            stack += reversed(pushed)  # popped in document order

    def _segment(self, name: str, secret: bool) -> str:
        """``.name``, or ``["name"]`` for other names; a secret in a name is masked."""
        if not secret and _PLAIN_KEY.fullmatch(name):
            return f".{name}"
        shown = self.redactor.redact(name) if secret else name
        return f"[{json.dumps(shown, ensure_ascii=False)}]"

    def _ask_host(self, host: HostFilter, entry: Any) -> list[str]:
        try:
            answer = host(entry)
        except Exception as exc:  # fail closed: a host check that breaks refuses
            return [f"$: host filter failed ({type(exc).__name__})"]
        if answer is None or answer is False or answer == "":
            return []
        if answer is True:
            return ["$: host filter"]
        if isinstance(answer, str):
            return [f"$: {self.redactor.redact(answer)}"]
        return [f"$: host filter answered {type(answer).__name__}"]


def _children(node: Any) -> list[tuple[object, Any]] | None:
    """``node``'s (key or index, value) pairs, or None when it holds nothing to scan."""
    if isinstance(node, Mapping):
        return list(node.items())
    if isinstance(node, list | tuple):
        return list(enumerate(node))
    if isinstance(node, set | frozenset):
        return list(enumerate(sorted(node, key=repr)))
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return [(f.name, getattr(node, f.name)) for f in dataclasses.fields(node)]
    dump = getattr(node, "model_dump", None)
    if callable(dump) and not isinstance(node, type):
        dumped = dump()
        return list(dumped.items()) if isinstance(dumped, Mapping) else [(0, dumped)]
    return None
