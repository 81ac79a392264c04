"""Finds and masks secrets in a text with the shapes of the catalog (or any patterns)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ._catalog import (
    CATALOG,
    PLACEHOLDER,
    SecretShape,
    reads_as_random,
    reads_as_template,
    reads_as_token,
    reads_as_word,
)

__all__ = [
    "DEFAULT_SECRET_HINTS",
    "DEFAULT_SECRET_PATTERNS",
    "MASK",
    "PatternRedactor",
    "SecretHit",
]

MASK = "[REDACTED]"

DEFAULT_SECRET_PATTERNS: tuple[str, ...] = tuple(shape.pattern for shape in CATALOG)
"""The catalog's patterns. A group named ``keep`` is left in place."""

DEFAULT_SECRET_HINTS: tuple[str, ...] = tuple(
    sorted({hint.lower() for shape in CATALOG for hint in shape.hints})
)
"""Lower-case substrings one of which every default pattern's match contains."""

# Masking can, in principle, let a pattern match where it did not before; passes repeat
# until nothing is found, and this bounds them.
_MAX_PASSES = 4

# A turn hands the same big text to the redactor several times (the input at the door,
# then to the turn's close; the output, then to its observation and the content filter):
# the last few long texts found clean are remembered by identity, so each is scanned once.
_REMEMBERED = 3
_LONG = 4096
# Shorter texts come back turn after turn (a trace and the content filter see every text of
# the pack, which holds the session's history): their answers are remembered by value, up to
# this many characters in all (then the memo starts over). The answer is a pure function of
# the text, so the memo never changes one.
_MEMO_CHARS = 1_000_000


@dataclass(frozen=True, slots=True)
class SecretHit:
    """A secret at ``text[start:end]`` (its label, if kept, lies before ``start``)."""

    rule: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Rule:
    name: str
    pattern: str
    hints: frozenset[str]  # empty: always run (once the redactor's own hints pass)
    line_local: bool  # scan only the lines that hold one of the hints
    next_line: bool  # and the line after each
    gate_pattern: str | None  # searched once per text before the rule runs
    gate_lines: bool  # scan the lines that hold the gate instead of those holding a hint
    shape: SecretShape | None  # None: a host's pattern, every match is a secret

    # Compiled on first use: compiling the whole catalog cost more than a runtime's creation
    # (and a page's warm start, whose memory snapshot is taken before any runtime exists),
    # while most texts hold the hints of few shapes, so most patterns are never compiled.
    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)

    @property
    def gate(self) -> re.Pattern[str] | None:
        return None if self.gate_pattern is None else _compiled(self.gate_pattern)

    @property
    def keeps(self) -> bool:
        return "keep" in self.regex.groupindex


# Bounded like re's own cache: a host making redactors of ever new patterns keeps no more.
@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class PatternRedactor:
    """Replaces every match of a set of regular expressions with ``[REDACTED]``.

    The defaults are the catalog's shapes, each scanned only when one of its own hints is
    in the text, and then only on the lines holding one. Other patterns are scanned on the
    whole text and named ``pattern <index>`` in hits.
    """

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
        self.hints = tuple(hint.lower() for hint in hints) if hints is not None else None
        known = {shape.pattern: shape for shape in CATALOG}
        self._rules = tuple(
            _rule(pattern, known.get(pattern), index) for index, pattern in enumerate(self.patterns)
        )
        # The default hints are the catalog rules' own, lower-cased: their probes decide.
        own = self.hints == DEFAULT_SECRET_HINTS and all(p in known for p in self.patterns)
        self._gate = None if own else self.hints
        every = sorted(set().union(*(rule.hints for rule in self._rules)))
        # Hints grouped by their anchor (and whether they are cased): a text lacking the
        # anchor lacks every hint of its group, found in one search instead of one a hint.
        groups: dict[tuple[str, bool], list[str]] = {}
        for hint in every:
            groups.setdefault((_anchor(hint), hint != hint.lower()), []).append(hint)
        self._probes = tuple(
            (anchor, cased, tuple(hints)) for (anchor, cased), hints in sorted(groups.items())
        )
        self._clean: list[str] = []
        self._memo: dict[str, tuple[SecretHit, ...]] = {}
        self._memo_chars = 0
        # A host's pattern with no hints may match any text.
        self._unhinted = any(not rule.hints for rule in self._rules)

    def find(self, text: str) -> tuple[SecretHit, ...]:
        """Every secret in ``text``, in order of position (hits may overlap)."""
        if not text:
            return ()
        if len(text) < _LONG:
            known = self._memo.get(text)
            if known is None:
                known = self._scan(text)
                if self._memo_chars + len(text) > _MEMO_CHARS:
                    self._memo.clear()
                    self._memo_chars = 0
                self._memo[text] = known
                self._memo_chars += len(text)
            return known
        if any(text is clean for clean in self._clean):
            return ()
        hits = self._scan(text)
        if not hits:
            self._clean = [text, *self._clean[: _REMEMBERED - 1]]
        return hits

    def mentions(self, text: str) -> bool:
        """Whether ``text`` holds a hint of one of the patterns (a substring every match of
        it contains): where it holds none, `find` finds nothing, however it goes on."""
        return self._unhinted or bool(self._present(text, text.lower()))

    def _present(self, text: str, lowered: str) -> set[str]:
        """The hints ``text`` holds (one with a capital letter as written, others in any
        case)."""
        return {
            hint
            for anchor, cased, hints in self._probes
            if anchor in (haystack := text if cased else lowered)
            for hint in hints
            if hint in haystack
        }

    def _scan(self, text: str) -> tuple[SecretHit, ...]:
        text = _uncoloured(text)
        lowered = text.lower()
        if self._gate is not None and not any(hint in lowered for hint in self._gate):
            return ()
        present = self._present(text, lowered)
        # lower() keeps offsets for all but a few non-ASCII letters; else scan whole texts.
        aligned = len(lowered) == len(text) and "\n" in text
        hits: list[SecretHit] = []
        for rule in self._rules:
            if rule.hints and present.isdisjoint(rule.hints):
                continue
            gate = rule.gate
            if gate is not None and gate.search(text) is None:
                continue
            if rule.line_local and aligned and gate is not None and rule.gate_lines:
                spans = _gate_lines(text, gate)
            elif rule.line_local and aligned:
                spans = _lines(text, lowered, rule.hints & present, rule.next_line)
            else:
                spans = [(0, len(text))]
            for start, end in spans:
                for match in rule.regex.finditer(text, start, end):
                    begin = match.start()
                    if rule.keeps and match.group("keep") is not None:
                        begin = match.end("keep")
                    if match.end() <= begin:
                        continue
                    if rule.shape is not None and not _is_secret(
                        rule.shape, text, begin, match.end()
                    ):
                        continue
                    hits.append(SecretHit(rule.name, begin, match.end()))
        # Windows of neighbouring lines overlap: a match may be found twice.
        unique = sorted(set(hits), key=lambda hit: (hit.start, hit.end, hit.rule))
        return tuple(unique)

    def redact(self, text: str) -> str:
        """``text`` with each secret replaced by ``[REDACTED]`` (labels stay); idempotent."""
        for _ in range(_MAX_PASSES):
            hits = self.find(text)
            if not hits:
                break
            text = _mask(text, hits)
        return text


# A terminal's colour and style codes (a log's \x1b[1;31m) say nothing of a secret, and they
# glue a letter to what follows them (...31mpassword=..., ...0msk-ant-...): every pattern
# scans them as spaces of the same length, so a hit's offsets are the text's own.
_SGR = re.compile(r"\x1b\[[0-9;]{0,32}m")


def _uncoloured(text: str) -> str:
    if "\x1b" not in text:
        return text
    return _SGR.sub(lambda code: " " * len(code.group()), text)


def _rule(pattern: str, shape: SecretShape | None, index: int) -> _Rule:
    if shape is None:
        _compiled(pattern)  # a host's pattern: a bad one is refused now, not at a first scan
        return _Rule(f"pattern {index}", pattern, frozenset(), False, False, None, False, None)
    line_local = not shape.multiline
    return _Rule(
        shape.name,
        pattern,
        frozenset(shape.hints),
        line_local,
        shape.next_line,
        shape.gate or None,
        shape.gate_lines,
        shape,
    )


def _is_secret(shape: SecretShape, text: str, start: int, end: int) -> bool:
    """Whether a match of ``shape`` at ``text[start:end]`` is a secret. Checked here, on
    the match only, because a look-ahead at every position would cost far more: a match
    holding a placeholder run (xxxxxx, EXAMPLE) is a sample or a value to be filled in
    (but a key block's body is checked by its own pattern: base64 can hold any run), a
    labelled value of letters only must not read as a name, and a ``random`` shape's value
    must read as random."""
    value = text[start:end]
    # A password's host may be example.com and the password still a real one's shape: the
    # token past a URL's credentials is its host, not part of the value.
    if shape.family != "pem" and _placeholder(text, start, end, shape.family != "url"):
        return False
    if all(len(set(part)) <= 1 for part in _SEPARATORS.split(value)):
        # One character repeated (1111, ____), in each part (5555555555:AAAA...): a value
        # to be filled in.
        return False
    if _in_key_vault_reference(text, start, end):
        return False
    if shape.family == "label" and _test_status(text, start):
        return False
    if shape.family in ("label", "url") and (
        # A name closing a call or a comparison (aliceSecret === bobSecret)): the pattern
        # ends a value at ")" only after a plain word, so camelCase is judged here.
        reads_as_word(value.rstrip(")")) or reads_as_template(_opened(text, start) + value)
    ):
        return False
    if shape.family == "token":
        return reads_as_token(value)
    return not shape.random or reads_as_random(value)


_SEPARATORS = re.compile(r"[:_.-]+")
# An Azure app setting's Key Vault reference, in both of its documented forms, closed.
_KEY_VAULT_OPEN = "@Microsoft.KeyVault("
_KEY_VAULT = re.compile(
    re.escape(_KEY_VAULT_OPEN) + r"(?:SecretUri=https://[^\s)\"'<>]{1,300}"
    r"|VaultName=[^\s)\"';]{1,127};SecretName=[^\s)\"';]{1,127}(?:;SecretVersion=[0-9a-f]{32})?)\)"
)
_KEY_VAULT_REACH = 360  # past the longest reference the pattern takes


def _in_key_vault_reference(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies inside a Key Vault reference
    (``@Microsoft.KeyVault(SecretUri=https://x.vault.azure.net/secrets/Api-Key/<version>)``):
    where the secret is kept and which version, not the secret. Looked for near the match
    only, so that many matches on one long line cost no more than the line."""
    near = text.rfind(_KEY_VAULT_OPEN, max(0, start - _KEY_VAULT_REACH), start)
    if near == -1:
        return False
    found = _KEY_VAULT.match(text, near, min(len(text), near + _KEY_VAULT_REACH))
    return found is not None and found.end() >= end


# A test's status at a line's start (DejaGnu, Automake's test logs): PASS: name; or
# DejaGnu's banner for the test file it runs next: Running /path/to/file.exp ...
_STATUS = re.compile(
    r"(?:PASS|FAIL|XPASS|XFAIL|KPASS|KFAIL|UNSUPPORTED|UNRESOLVED|UNTESTED|ERROR|SKIP): "
    r"|Running [^\s]{1,300}\.exp \.\.\.\r?$",
    re.MULTILINE,
)


def _test_status(text: str, start: int) -> bool:
    """Whether the value at ``start`` follows ``PASS: `` at a line's start in a run of test
    results: the line before or after is a test's status too (``PASS: ld-elf/now-1`` below
    ``FAIL: ld-elf/now-2``). One such line alone (``PASS: Hunter2``) is a password's."""
    begin = start - len("PASS: ")
    if begin < 0 or text[begin:start] != "PASS: " or (begin and text[begin - 1] != "\n"):
        return False
    after = text.find("\n", start)
    if after != -1 and _STATUS.match(text, after + 1):
        return True
    before = text.rfind("\n", 0, begin - 1) + 1 if begin else -1
    return before >= 0 and _STATUS.match(text, before) is not None


def _opened(text: str, start: int) -> str:
    """The template delimiter just before a match, if any: a label's pattern may take the
    ``@`` of ``password=@DB_PASSWORD@`` for its own (C#'s ``@"..."``)."""
    begin = start
    while begin > max(0, start - 2) and text[begin - 1] in "@#%":
        begin -= 1
    return text[begin:start]


_TOKEN_TAIL = 64  # how far past a match the token it sits in is looked through


def _placeholder(text: str, start: int, end: int, tail: bool = True) -> bool:
    """Whether the token holding ``text[start:end]`` is a placeholder (xxxxxx, EXAMPLE,
    "...####"): the match and, with ``tail``, the rest of its token, its letters, digits
    and ``*`` (a man page's font changes too), then a run of ``#``. Not past a separator:
    the next field, a URL's host or path (``ghp_...&redirect=example.com``,
    ``https://ghp_...@github.com/example/...``) is not the token's."""
    stop = end
    limit = min(len(text), end + _TOKEN_TAIL) if tail else end
    while stop < limit:
        if text[stop].isalnum() or text[stop] == "*":
            stop += 1
        elif text.startswith("\\f", stop):  # a man page's font change (\fIpassword\fP)
            stop += 3
        else:
            break
    while stop < limit and text[stop] == "#":  # a run of # (sk_...####), not a URL's #fragment
        stop += 1
    return PLACEHOLDER.search(text, start, stop) is not None


# Characters from the most to the least common in text; a hint's anchor is its rarest
# character, looked for first because a one-character search is much the cheapest.
_COMMON = " etaoinsrhldcumfpgwybvk.,-\n'\"():/0123456789_"


def _anchor(hint: str) -> str:
    return max(hint, key=lambda char: _COMMON.find(char) if char in _COMMON else len(_COMMON))


def _lines(
    text: str, lowered: str, hints: Iterable[str], next_line: bool = False
) -> list[tuple[int, int]]:
    """The [start, end) spans of the lines holding one of ``hints``, in order, deduplicated
    (a hint with a capital letter is looked for as written, others in any case); with
    ``next_line``, each span runs on to the end of the line after."""
    starts: set[int] = set()
    for hint in hints:
        haystack = text if hint != hint.lower() else lowered
        at = haystack.find(hint)
        while at != -1:
            starts.add(text.rfind("\n", 0, at) + 1)
            end = text.find("\n", at)
            at = haystack.find(hint, end) if end != -1 else -1
    spans: list[tuple[int, int]] = []
    for start in sorted(starts):
        end = text.find("\n", start)
        if next_line and end != -1:
            end = text.find("\n", end + 1)
        spans.append((start, len(text) if end == -1 else end))
    return spans


def _gate_lines(text: str, gate: re.Pattern[str]) -> list[tuple[int, int]]:
    """The [start, end) spans of the lines holding a match of ``gate``, in order."""
    spans: list[tuple[int, int]] = []
    found = gate.search(text)
    while found is not None:
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        end = len(text) if end == -1 else end
        spans.append((start, end))
        found = gate.search(text, end)
    return spans


def _mask(text: str, hits: tuple[SecretHit, ...]) -> str:
    """``text`` with the union of the hits' spans masked, one mask per run of overlaps."""
    parts: list[str] = []
    cursor = 0
    run_start, run_end = hits[0].start, hits[0].end
    for hit in hits[1:]:
        if hit.start <= run_end:
            run_end = max(run_end, hit.end)
            continue
        parts += [text[cursor:run_start], MASK]
        cursor = run_end
        run_start, run_end = hit.start, hit.end
    parts += [text[cursor:run_start], MASK, text[run_end:]]
    return "".join(parts)
