"""Templates for the recall corpus's answer questions (bench only; ``recall_corpus.py``).

Issue 25: on natural conversations a turn states several things, and the answer often
sits in the sentence next to the one that shares words with the question. These
templates give the corpus such turns, and questions whose evidence is spread over many:

- ``AFTER_MATCH``: a turn whose ``lead`` sentence shares the question's words and whose
  ``answer`` sentence (next to it: after, or before when ``first`` says so) holds the
  answer and none of the question's content words. ``words`` names the slots whose values
  are the answer's words.
- ``MULTI_HOP``: one item of a kind per turn, spread over several sessions; the question
  asks for all of them, so the answer is every item.

Slots: ``{third}`` a third person, ``{colour}``, ``{animal}``, ``{city}``, ``{month}``,
``{n}`` / ``{m}`` / ``{year}`` numbers in digits (each in its range), ``{nth}`` an ordinal word; questions use the
owner slots of ``recall_corpus.Builder.ask_slots`` ({who}, {whose}, ...).
"""

from __future__ import annotations

from typing import Any

__all__ = ["AFTER_MATCH", "ANSWER_SLOTS", "MULTI_HOP"]

ANSWER_SLOTS: dict[str, list[str]] = {
    "colour": ["turquoise", "mustard", "crimson", "lilac", "scarlet", "maroon"],
    "animal": ["flamingo", "walrus", "hedgehog", "pelican", "tortoise", "badger"],
    "city": ["Lisbon", "Krakow", "Ghent", "Bologna", "Tallinn", "Porto", "Seville"],
    "month": ["February", "April", "July", "September", "November"],
    "nth": ["second", "fourth", "fifth", "seventh"],
}

AFTER_MATCH: list[dict[str, Any]] = [
    {
        "lead": "We finally threw the housewarming party at the new flat.",
        "answer": "{third} turned up with a {colour} lamp shaped like a {animal}.",
        "words": ["third", "colour", "animal"],
        "ask": "What did someone bring to {whose} housewarming party?",
        "when": "When did {who} throw the housewarming party?",
    },
    {
        "lead": "I had the job interview at the insurance company.",
        "answer": "They want me to start in {month}, on {n} thousand a year.",
        "n": [31, 58],
        "words": ["month", "n"],
        "ask": "What came of {whose} job interview at the insurance company?",
        "when": "When did {who} have the job interview at the insurance company?",
    },
    {
        "lead": "My sister's wedding plans are finally settled.",
        "answer": "It will be in {city}, in a barn owned by a farmer called {third}.",
        "words": ["city", "third"],
        "ask": "What did {who} say about {poss} sister's wedding plans?",
        "when": "When did {who} say {poss} sister's wedding plans were settled?",
    },
    {
        "lead": "We got the results of the house survey back.",
        "answer": "The roof needs {n} new tiles and the boiler dates from {year}.",
        "n": [12, 48],
        "year": [1961, 1989],
        "words": ["n", "year"],
        "ask": "What did the house survey find for {whom}?",
        "when": "When did {who} get the results of the house survey?",
    },
    {
        "lead": "The camping trip with the kids went well in the end.",
        "answer": "We pitched up near {city} and spotted a {animal} by the river.",
        "words": ["city", "animal"],
        "ask": "Where did {who} go on the camping trip with the kids?",
        "when": "When did {who} tell {other} about the camping trip with the kids?",
    },
    {
        "lead": "I finally picked a name for the new band.",
        "answer": "We're calling ourselves the {colour} {animal}s, and {third} plays drums.",
        "words": ["colour", "animal", "third"],
        "ask": "What name did {who} pick for the new band?",
        "when": "When did {who} pick a name for the new band?",
    },
    {
        "lead": "The quiz night at the pub went better than expected.",
        "answer": "We came {nth} out of {n} teams, all thanks to {third}.",
        "n": [11, 29],
        "words": ["nth", "n", "third"],
        "ask": "How did {who} do at the pub quiz night?",
        "when": "When did {who} go to the pub quiz night?",
    },
    {
        "lead": "I finally booked the summer holiday.",
        "answer": "Two weeks in {city}, flying out in {month}.",
        "words": ["city", "month"],
        "ask": "Where {is} {who} going on the summer holiday?",
        "when": "When did {who} book the summer holiday?",
    },
    {
        "first": True,
        "lead": "That's what the vet said about the cat's blood test.",
        "answer": "Her kidneys are fine, but she has to lose {n} hundred grams by {month}.",
        "n": [2, 9],
        "words": ["n", "month"],
        "ask": "What did the vet say about {whose} cat's blood test?",
        "when": "When did {who} hear from the vet about the cat's blood test?",
    },
    {
        "first": True,
        "lead": "So that was the meeting with the bank about the mortgage.",
        "answer": "They offered {n} percent fixed for {m} years, with {third} as our adviser.",
        "n": [3, 6],
        "m": [2, 10],
        "words": ["n", "m", "third"],
        "ask": "What came out of {whose} meeting with the bank about the mortgage?",
        "when": "When did {who} have the meeting with the bank about the mortgage?",
    },
]

MULTI_HOP: list[dict[str, Any]] = [
    {
        "say": "I saw {item} live at the {venue}, what a gig.",
        "items": ["Kestrel", "Marrowbone", "Tinderbox", "Halcyon", "Bluebell", "Ferrous"],
        "venue": ["arena", "old theatre", "student union", "jazz cellar"],
        "ask": "Which bands did {who} see live?",
    },
    {
        "say": "Work sent me to {item} for three days, and the hotel was dreadful.",
        "items": ["Rotterdam", "Antwerp", "Leipzig", "Gdansk", "Marseille", "Turin"],
        "ask": "Which cities has work sent {whom} to?",
    },
    {
        "say": "I've just finished reading {item}, I couldn't put it down.",
        "items": ["Middlemarch", "Rebecca", "Persuasion", "Dune", "Beloved", "Kindred"],
        "ask": "Which books did {who} finish reading?",
    },
    {
        "say": "I tried cooking {item} from the new cookbook and it worked.",
        "items": ["risotto", "goulash", "paella", "moussaka", "biryani", "shakshuka"],
        "ask": "Which dishes did {who} cook from the new cookbook?",
    },
]
