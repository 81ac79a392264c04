"""What a turn taught: the facts, preferences and decisions a person stated (spec 000,
"Session Memory Loop").

Two extractors give the same `Extraction`: `extract_by_rules`, deterministic, for when no
model is at hand (it knows the usual ways people say "my name is", "I prefer", "we
decided", "remember:"), and the model itself, asked with `EXTRACTION_PROMPT` for JSON that
`parse_extraction` checks with the `Extraction` model. Every item is a verbatim sentence of
what the person said: extraction never invents, it only picks.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import Field, ValidationError

from .._base import Model, json_nests_deeper

__all__ = [
    "EXTRACTION_PROMPT",
    "Extraction",
    "ExtractionRefused",
    "extract_by_rules",
    "extraction_schema",
    "parse_extraction",
]

# The system prompt of an extraction call (the test model is trained on these very words).
EXTRACTION_PROMPT = (
    "Extract durable memory from the conversation turn. Reply with JSON only: "
    '{"facts": [...], "preferences": [...], "decisions": [...]}.'
)
MAX_ITEMS = 20
MAX_ITEM_CHARS = 500


class Extraction(Model):
    """What one turn states about the person and the work: verbatim sentences."""

    facts: tuple[str, ...] = Field(default=(), max_length=MAX_ITEMS)
    """About the person: name, place, work, things they own ("my name is Ann")."""
    preferences: tuple[str, ...] = Field(default=(), max_length=MAX_ITEMS)
    """What they like, prefer, avoid ("I prefer tea")."""
    decisions: tuple[str, ...] = Field(default=(), max_length=MAX_ITEMS)
    """What was decided or agreed ("we decided to ship on Friday")."""

    @property
    def empty(self) -> bool:
        return not (self.facts or self.preferences or self.decisions)


def extraction_schema() -> dict[str, object]:
    """The JSON Schema a structured-output extraction call asks for."""
    item = {"type": "string", "maxLength": MAX_ITEM_CHARS}
    lists = {"type": "array", "items": item, "maxItems": MAX_ITEMS}
    return {
        "type": "object",
        "properties": {"facts": lists, "preferences": lists, "decisions": lists},
        "required": ["facts", "preferences", "decisions"],
        "additionalProperties": False,
    }


class ExtractionRefused(Exception):
    """A model's extraction reply that is not the JSON asked for (internal)."""


def parse_extraction(text: str, said: str) -> Extraction:
    """Read a model's extraction reply; keep only sentences the person really said.

    Raises:
        ExtractionRefused: not JSON, not the shape asked for; the message says why, for
            the correction the model gets.
    """
    body = _json_object_text(text)
    if json_nests_deeper(body, 4):
        raise ExtractionRefused("the reply nests deeper than the schema allows")
    try:
        extraction = Extraction.model_validate_json(body)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "the reply"
        raise ExtractionRefused(f"{where}: {first['msg']}") from None
    # A model may paraphrase or invent: only what the person's own words hold is kept.
    spoken = _normal(said)
    return Extraction(
        facts=_grounded(extraction.facts, spoken),
        preferences=_grounded(extraction.preferences, spoken),
        decisions=_grounded(extraction.decisions, spoken),
    )


def _json_object_text(text: str) -> str:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ExtractionRefused("the reply holds no JSON object")
    return text[start : end + 1]


def _grounded(items: tuple[str, ...], spoken: str) -> tuple[str, ...]:
    kept: list[str] = []
    for item in items:
        text = item.strip()
        if text and len(text) <= MAX_ITEM_CHARS and _normal(text) in spoken and text not in kept:
            kept.append(text)
    return tuple(kept)


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


# -- the rule-based extractor ------------------------------------------------------------

Kind = Literal["facts", "preferences", "decisions"]
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_CUES: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    (
        "facts",
        re.compile(
            r"\b(my name is|i am called|call me|i live in|i'm from|i am from|i work as|i work at|"
            r"i work for|i'm a|i am a|my job is|my birthday is|i was born|my wife|my husband|"
            r"my partner|my son|my daughter|my kids?|my dog|my cat|i have (?:a|two|three)|"
            r"i moved to|i speak|my email is|my favou?rite)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "preferences",
        re.compile(
            r"\b(i prefer|i'd rather|i would rather|i like|i love|i enjoy|i hate|i dislike|"
            r"i don't like|i do not like|i can't stand|i avoid|i'm allergic|i am allergic|"
            r"i'm vegetarian|i am vegetarian|i'm vegan|please always|please never|"
            r"i always|i never)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "decisions",
        re.compile(
            r"\b(we decided|we've decided|we have decided|i decided|i've decided|"
            r"let's go with|let us go with|we agreed|we'll go with|we will go with|"
            r"the decision is|we chose|we picked|we're going with|we are going with|"
            r"i'll go with|i will go with|decided to)\b",
            re.IGNORECASE,
        ),
    ),
)
_REMEMBER = re.compile(r"^\s*remember\s*:\s*(?P<text>.+)$", re.IGNORECASE | re.DOTALL)
_QUESTION = re.compile(r"\?\s*$")


def extract_by_rules(said: str) -> Extraction:
    """The facts, preferences and decisions ``said`` states, by the usual cues; questions
    state nothing ("do I like tea?" is not a preference)."""
    remember = _REMEMBER.match(said)
    found: dict[Kind, list[str]] = {"facts": [], "preferences": [], "decisions": []}
    text = remember.group("text") if remember else said
    for match in _SENTENCE.finditer(text):
        sentence = match.group().strip()
        if not sentence or _QUESTION.search(sentence):
            continue
        for kind, cue in _CUES:
            if cue.search(sentence):
                if sentence not in found[kind]:
                    found[kind].append(sentence)
                break
    return Extraction(
        facts=tuple(found["facts"][:MAX_ITEMS]),
        preferences=tuple(found["preferences"][:MAX_ITEMS]),
        decisions=tuple(found["decisions"][:MAX_ITEMS]),
    )


def extraction_request_text(user: str, assistant: str) -> str:
    """The user message of an extraction call: the turn, as the prompt format says."""
    return f"user: {user}\nassistant: {assistant}"


def extraction_json(extraction: Extraction) -> str:
    """An extraction as the JSON a model would reply with (for tests and corpora)."""
    return json.dumps(
        {
            "facts": list(extraction.facts),
            "preferences": list(extraction.preferences),
            "decisions": list(extraction.decisions),
        }
    )
