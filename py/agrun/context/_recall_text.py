"""What recall reads in a text: normalized terms, sentences, the speaker's label, and dates.

All of it is plain, deterministic string work, the same for a message and for the query,
so a turn and a question that say one thing in two spellings meet on one term:

- terms are lower-cased words without stop words, lightly stemmed ("signed", "signs" ->
  "sign"); numbers in words become digits ("thirty-six" -> "36", "third" -> "3"), so a
  question that writes "3" finds a turn that said "three";
- a speaker's label is the ``Name:`` a transcript line opens with (after an optional
  ``[...]`` header), the way multi-party chats are written into user messages;
- dates are read in the usual English forms ("14 March 2024", "March 14, 2024", "the
  14th of March", "mid-March 2024", "2024-03-14") and, against the day a message was
  said, the relative ones ("yesterday", "three days ago", "last Tuesday", "this morning").

Days are counted from 1970-01-01 (``at_ms // DAY_MS``, UTC), by plain Gregorian
arithmetic (the package reads no clock and imports no time module); a date is a range
``(first, last)`` of them, one day long or a whole part of a month.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from ..ports import Span

__all__ = [
    "DAY_MS",
    "DateRange",
    "dates_in",
    "iso_day",
    "sentence_spans",
    "speaker_label",
    "stem",
    "term_set",
    "terms_of",
]

DateRange = tuple[int, int]
DAY_MS = 86_400_000


def _words(text: str) -> list[str]:
    return text.split()


STOP_WORDS = frozenset(
    _words(
        """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during each
    few for from further get got had has have having he her here hers herself him himself his
    how i if in into is it its itself just let me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom whose why will with
    would you your yours yourself yourselves s t d ll re ve m don didn doesn isn wasn aren
    weren won wouldn couldn shouldn oh ok okay yes yeah hey hi ha so really still well"""
    )
)

_WORD = re.compile(r"[a-z]+|[0-9]+(?:st|nd|rd|th)?")
_ONES = _words(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
)
_TENS = _words("_ _ twenty thirty forty fifty sixty seventy eighty ninety")
_ORDINALS = _words(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
)
_NUMBER = {word: n for n, word in enumerate(_ONES)}
_NUMBER.update({word: n for n, word in enumerate(_ORDINALS) if n})
_NUMBER.update({word: 10 * n for n, word in enumerate(_TENS) if word != "_"})
_NUMBER.update({word[:-1] + "ieth": 10 * n for n, word in enumerate(_TENS) if word != "_"})
_VOWEL = frozenset("aeiouy")


def stem(word: str) -> str:
    """A light English stem: plurals, ``-ed`` / ``-ing`` and a final ``e`` removed, so the
    forms of one word meet (``hired``, ``hires``, ``hire`` -> ``hir``). Not a linguistic
    stem: only the same for words that differ in those endings."""
    if len(word) <= 3 or word[-1].isdigit():
        return word
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and _VOWEL & set(base):
            word = base
            if len(word) >= 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def terms_of(text: str) -> list[str]:
    """The normalized terms of ``text``, in order (see the module docstring)."""
    if len(text) > _REMEMBERED_CHARS:
        return _terms(text)
    return list(_remembered_terms(text))


# The same history texts are read again every turn (recall, attribution, the content
# store's listing): the terms of short ones are remembered, by value, so the answer cannot
# change; long ones are not kept alive for it.
_REMEMBERED_CHARS = 4_000


@functools.lru_cache(maxsize=4_096)
def _remembered_terms(text: str) -> tuple[str, ...]:
    return tuple(_terms(text))


def term_set(text: str) -> frozenset[str]:
    """The set of ``text``'s normalized terms: what an overlap count compares (a trace's
    attribution and the content store's listing ask it of every history text, every turn)."""
    if len(text) > _REMEMBERED_CHARS:
        return frozenset(_terms(text))
    return _remembered_term_set(text)


@functools.lru_cache(maxsize=4_096)
def _remembered_term_set(text: str) -> frozenset[str]:
    return frozenset(_remembered_terms(text))


def _terms(text: str) -> list[str]:
    out: list[str] = []
    tens = -1
    for match in _WORD.finditer(text.lower()):
        word = match.group()
        if word[0].isdigit():
            digits = word.rstrip("stndrh") or word
            if tens >= 0:
                out.append(str(tens))
                tens = -1
            out.append(digits.lstrip("0") or "0")
            continue
        value = _NUMBER.get(word)
        if value is not None:
            # "thirty-six" is two words that make one number.
            if tens >= 0 and 0 < value < 10:
                out.append(str(tens + value))
                tens = -1
                continue
            if tens >= 0:
                out.append(str(tens))
                tens = -1
            if value >= 20 and value % 10 == 0 and word in _TENS:
                tens = value
            else:
                out.append(str(value))
            continue
        if tens >= 0:
            out.append(str(tens))
            tens = -1
        if word in STOP_WORDS:
            continue
        out.append(stem(word))
    if tens >= 0:
        out.append(str(tens))
    return out


_BOUNDARY = re.compile(r"[.!?]+(?=\s|$)|\n")


def sentence_spans(text: str) -> list[Span]:
    """The ``[start, end)`` spans of ``text``'s sentences, stripped, in order (a sentence
    ends at ``.``, ``!`` or ``?`` before a space or the end, or at a line break)."""
    out: list[Span] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        end = match.start() if match.group() == "\n" else match.end()
        _add_stripped(text, start, end, out)
        start = match.end()
    _add_stripped(text, start, len(text), out)
    return out


def _add_stripped(text: str, start: int, end: int, out: list[Span]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append((start, end))


_LABEL = re.compile(
    r"\s*(?:\[[^\]\n]{0,80}\]\s*)?(?P<name>[A-Z][\w'\-]{0,30}(?: [A-Z][\w'\-]{0,30})?):(?=\s)"
)


def speaker_label(text: str) -> tuple[str, Span] | None:
    """The speaker a transcript line names (``"Maya: ..."``, ``"[10:02] Maya: ..."``),
    lower-cased, and the span of the label (header included), or None."""
    match = _LABEL.match(text)
    if match is None:
        return None
    return match.group("name").lower(), (len(text) - len(text.lstrip()), match.end())


_MONTHS = _words(
    "january february march april may june july august september october november december"
)
_MONTH = {name: n + 1 for n, name in enumerate(_MONTHS)}
_MONTH.update({name[:3]: n + 1 for n, name in enumerate(_MONTHS) if name != "may"})
_WEEKDAYS = _words("monday tuesday wednesday thursday friday saturday sunday")
_M = r"(?P<month>" + "|".join(sorted(_MONTH, key=len, reverse=True)) + r")\.?"
_WD = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")"
_NUM_WORD = r"(?P<count>\d+|" + "|".join(_ONES[1:]) + r"|a|an|a couple of)"
_DATE_FORMS = re.compile(
    "|".join(
        [
            r"\b(?P<iso>(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2}))\b",
            r"\b(?:" + _WD.replace("weekday", "wd1") + r",?\s+)?(?:the\s+)?"
            r"(?P<d1>\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _M + r"(?:,?\s+(?P<y1>\d{4}))?\b",
            r"\b(?:"
            + _WD.replace("weekday", "wd2")
            + r",?\s+)?"
            + _M.replace("month", "month2")
            + r"\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y2>\d{4}))?",
            r"\b(?P<part>early|mid|late)[-\s]+"
            + _M.replace("month", "month3")
            + r"(?:\s+(?P<y3>\d{4}))?\b",
            r"\b(?:in\s+)?" + _M.replace("month", "month4") + r"\s+(?P<y4>\d{4})\b",
            r"\b(?P<before>the day before yesterday)\b",
            r"\b(?P<yesterday>yesterday)\b",
            r"\b(?P<today>today|tonight|this (?:morning|afternoon|evening))\b",
            r"\b" + _NUM_WORD + r"\s+(?P<unit>days?|weeks?)\s+ago\b",
            r"\b(?P<lastweek>last week)\b",
            # "on Monday" is relative unless a date follows ("on Monday, 16 September").
            r"\b(?P<rel>last|on|this past)\s+" + _WD + r"\b(?!,?\s+(?:the\s+)?\d)"
            r"(?!,?\s+(?:" + "|".join(_MONTH) + r")\b)",
        ]
    ),
    re.IGNORECASE,
)
_COUNT = {"a": 1, "an": 1, "a couple of": 2} | {w: n for n, w in enumerate(_ONES)}


def _from_civil(year: int, month: int, day: int) -> int:
    # Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    year -= month <= 2
    era = year // 400
    of_era = year - era * 400
    of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146_097 + of_era * 365 + of_era // 4 - of_era // 100 + of_year - 719_468


def _to_civil(days: int) -> tuple[int, int, int]:
    days += 719_468
    era = days // 146_097
    of_era = days - era * 146_097
    year = (of_era - of_era // 1460 + of_era // 36_524 - of_era // 146_096) // 365
    of_year = of_era - (365 * year + year // 4 - year // 100)
    shifted = (5 * of_year + 2) // 153
    day = of_year - (153 * shifted + 2) // 5 + 1
    month = shifted + (3 if shifted < 10 else -9)
    return year + era * 400 + (month <= 2), month, day


def iso_day(days: int) -> str:
    """Day ``days`` (since 1970-01-01) as ``YYYY-MM-DD``."""
    year, month, day = _to_civil(days)
    return f"{year:04d}-{month:02d}-{day:02d}"


def _weekday(days: int) -> int:
    """Monday is 0 (1970-01-01 was a Thursday)."""
    return (days + 3) % 7


def _year(days: int) -> int:
    return _to_civil(days)[0]


def _day(year: int, month: int, day: int) -> int | None:
    if not (1 <= month <= 12 and day >= 1):
        return None
    found = _from_civil(year, month, day)
    return found if _to_civil(found) == (year, month, day) else None


def _recent(month: int, day: int, today: int | None, weekday: str | None) -> int | None:
    # A date without its year: the latest one on or before ``today`` (none without it)
    # that falls on the weekday the text names, if it names one.
    if today is None:
        return None
    year = _year(today)
    wanted = None if weekday is None else _WEEKDAYS.index(weekday.lower())
    for candidate in range(year, year - (7 if wanted is not None else 2), -1):
        found = _day(candidate, month, day)
        if found is None or found > today:
            continue
        if wanted is None or _weekday(found) == wanted:
            return found
    return None


def _month_part(year: int, month: int, part: str | None) -> DateRange | None:
    first = _day(year, month, 1)
    if first is None:
        return None
    last = (_day(year + month // 12, month % 12 + 1, 1) or first + 31) - 1
    if part == "early":
        return first, first + 9
    if part == "mid":
        return first + 10, first + 19
    if part == "late":
        return first + 20, last
    return first, last


def dates_in(text: str, today: int | None = None) -> Iterator[tuple[Span, DateRange]]:
    """Every date ``text`` names, with its span; relative ones ("yesterday") only when
    ``today`` (the day the text was said, in days since 1970-01-01) is known."""
    for match in _DATE_FORMS.finditer(text):
        found = _resolve(match, today)
        if found is not None:
            yield match.span(), found


def _resolve(match: re.Match[str], today: int | None) -> DateRange | None:
    g = match.groupdict()
    if g["iso"]:
        day = _day(int(g["iy"]), int(g["im"]), int(g["id"]))
        return None if day is None else (day, day)
    for d, m, y, w in (("d1", "month", "y1", "wd1"), ("d2", "month2", "y2", "wd2")):
        if g[d]:
            month = _MONTH[g[m].lower()]
            number = int(g[d])
            exact = _day(int(g[y]), month, number) if g[y] else None
            day = exact if g[y] else _recent(month, number, today, g[w])
            return None if day is None else (day, day)
    if g["month3"] or g["month4"]:
        month = _MONTH[(g["month3"] or g["month4"]).lower()]
        year_text = g["y3"] or g["y4"]
        if year_text:
            year = int(year_text)
        elif today is not None:
            year = _year(today)
        else:
            return None
        return _month_part(year, month, (g["part"] or "").lower() or None)
    if today is None:
        return None
    if g["before"]:
        return today - 2, today - 2
    if g["yesterday"]:
        return today - 1, today - 1
    if g["today"]:
        return today, today
    if g["unit"]:
        count = g["count"].lower()
        n = int(count) if count.isdigit() else _COUNT.get(count, 1)
        back = n * (7 if g["unit"].lower().startswith("week") else 1)
        return today - back, today - back
    if g["lastweek"]:
        monday = today - _weekday(today)
        return monday - 7, monday - 1
    if g["weekday"]:
        wanted = _WEEKDAYS.index(g["weekday"].lower())
        back = (_weekday(today) - wanted) % 7 or 7
        return today - back, today - back
    return None
