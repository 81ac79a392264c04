"""What a missing input is, and whether a text holds it (spec 000, "Clarification Boundary").

A skill names the input it lacks in a few words (``missing="date"``, ``"dentist"``). From
those words comes a `Slot`: its key words, and for a few kinds whose values have a shape a
pattern can recognise (a date, a time, an email address, a phone number, a number), that
kind. A text is about the slot when it holds a value of the slot's kind or, for a slot of no
kind, names one of its key words. Both the evidence check and the check that a turn answers
a pending clarification read it, so "about the missing input" means one thing. Pure and
deterministic: words and patterns, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Slot", "SlotKind", "content_words", "slot_of"]

SlotKind = Literal["date", "time", "email", "phone", "number"]

_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_WEEKDAY = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_PATTERNS: dict[SlotKind, re.Pattern[str]] = {
    "date": re.compile(
        rf"\b(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?|"
        rf"\d{{1,2}}\.\d{{1,2}}\.\d{{2,4}}|"
        rf"{_DAY}\s+(?:of\s+)?(?:{_MONTH})|(?:{_MONTH})\s+{_DAY}|"
        # A month alone only after a word that makes it one ("in May", not "I may").
        rf"(?:in|on|by|until|till|from|since|for|next|this|early|mid|late)[\s-]+(?:{_MONTH})|"
        rf"{_WEEKDAY}|today|tomorrow|tonight|yesterday|"
        rf"(?:next|this|coming)\s+(?:week|weekend|month|year)|the\s+\d{{1,2}}(?:st|nd|rd|th)"
        rf")\b",
        re.IGNORECASE,
    ),
    "time": re.compile(
        r"\b(?:\d{1,2}:\d{2}|\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|noon|midnight|\d{1,2}\s+o'clock)",
        re.IGNORECASE,
    ),
    "email": re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    "phone": re.compile(r"(?<![\w+])\+?\d[\d\s().-]{5,}\d\b"),
    "number": re.compile(
        r"\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
        r"twelve|a dozen)\b",
        re.IGNORECASE,
    ),
}
# Which words in what a skill says is missing name each kind. The first kind that matches
# wins, so "phone number" is a phone, not a number.
_KIND_WORDS: tuple[tuple[SlotKind, frozenset[str]], ...] = (
    ("phone", frozenset({"phone", "mobile", "telephone", "cell"})),
    ("email", frozenset({"email", "e-mail", "mail"})),
    ("date", frozenset({"date", "day", "when", "deadline", "birthday", "checkin", "checkout"})),
    ("time", frozenset({"time", "hour", "o'clock"})),
    ("number", frozenset({"number", "count", "amount", "quantity", "many", "much"})),
)
# Words too common to say what a text is about.
STOP_WORDS = frozenset(
    {
        "what", "who", "where", "when", "which", "how", "why", "did", "does", "the", "and",
        "you", "your", "about", "remember", "tell", "know", "was", "were", "are", "for",
        "with", "that", "this", "have", "has", "had", "can", "could", "would", "should",
        "from", "my", "me", "is", "a", "an", "of", "to", "in", "on", "it", "i",
    }
)  # fmt: skip


def content_words(text: str) -> set[str]:
    """The words of ``text`` that can say what it is about: lower case, a plural's final
    "s" dropped (so "dates" meets "date"), stop words and words under three letters out."""
    words = set()
    for word in re.findall(r"[\w'-]+", text.lower()):
        if len(word) < 3 or word in STOP_WORDS:
            continue
        words.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return words


@dataclass(frozen=True)
class Slot:
    """A missing input: its key words and, if it has one, the kind of value it takes."""

    words: frozenset[str]
    kind: SlotKind | None

    def held_by(self, text: str) -> bool:
        """Whether ``text`` holds this input: a value of its kind or, for a slot of no
        kind, one of its key words. A text that only shares a word with the request does
        not."""
        if self.kind is not None:
            return bool(_PATTERNS[self.kind].search(text))
        return bool(self.words & content_words(text))

    def named_by(self, text: str) -> int:
        """How many of the slot's key words ``text`` names (to rank what holds it)."""
        return len(self.words & content_words(text))


def slot_of(missing: str) -> Slot:
    """The slot ``missing`` (what a skill said it lacks) describes."""
    raw = set(re.findall(r"[\w'-]+", missing.lower()))
    kind = next((kind for kind, words in _KIND_WORDS if raw & words), None)
    return Slot(words=frozenset(content_words(missing)), kind=kind)
