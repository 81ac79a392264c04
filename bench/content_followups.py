"""Content follow-ups (issue 13): "format that as a table" after the answer has left the
prompt, measured over scripted multi-session conversations.

Run: .venv/bin/python bench/content_followups.py [--json PATH]
     [--llama-server http://127.0.0.1:PORT]

Five sessions (a trip, a code review, cooking with a store of four entries, a history
lesson, a garden) each ask for storable content (long answers, lists, JSON: a model's text or a host
skill's object) and then follow it up: reformat ("format that as a table"), summarize
("summarize your last answer"), compare ("compare that with the Lisbon itinerary"), right
after the answer or several turns later, and sometimes a follow-up of a follow-up. Every
turn is a model turn through a real runtime (history, pack, ``## Stored content``,
``read_content``), except the host's skill runs that return objects.

A follow-up succeeds when the runtime emitted ``ContentRetrieved`` with ``found=true`` for
the ref of every answer it is about, and the final answer holds text from each of those
bodies (four consecutive words of it). The success rate counts the follow-ups whose
answers were still stored when they were asked (the spec's "when the prior turn produced
storable content"); the others (evicted by the small store) are reported apart.

Two models answer the follow-ups:

- ``scripted``: agrun's `ScriptedProvider` playing a good model. It finds the answer a
  follow-up is about from the prompt alone: the ``## Stored content`` lines (ref, kind,
  size, first line), linked to the conversation by their first line and by the note a long
  reply leaves in history (``[… N bytes in all: ref]``); "that" or "your last answer" is
  the newest, a named topic is the best match. It calls ``read_content`` for each, then
  transforms the bodies (a table, a summary, a comparison).
- ``model``: a real model behind llama-server (``--llama-server URL``), e.g. the tiny test
  model, started with ``.cache/llama-server-*/llama-server --jinja --no-repack -t 1
  -m models/agrun-tiny.gguf --host 127.0.0.1 --port 8091``. The answers that produce
  content are scripted in both runs (a tiny model cannot write them); only the follow-up
  turns go to the real model.

The pack sizes are the scripted sessions' again with ``content_store=False``: the same
turns, the good model answering follow-ups from the history instead. Tokens are each
pack's ``budget_used`` (``ContextPackBuilt``): the first pack of every model turn (the
same point of the same conversation in both runs), and every pack (a follow-up that reads
content makes a second call, with the body as the tool's result).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import agrun
from agrun import FunctionSkill, SkillContext, SkillHelpers
from agrun.chat import ChatMessage, ModelReply, ModelRequest, StreamEvent
from agrun.context import default_tokenizer
from agrun.ports import Provider
from agrun.testing import FixedClock, ScriptedProvider, SequentialIds, tool_call

Intent = Literal["reformat", "summarize", "compare"]
TOKENS = default_tokenizer()

# --- The sessions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One turn of a session.

    ``answer`` is what the writer replies to a ``produce`` or ``chat`` turn, or the object
    the host's skill returns for a ``skill`` turn; a ``followup`` names the steps whose
    answers it is about (``targets``).
    """

    kind: Literal["produce", "skill", "chat", "followup"]
    text: str
    answer: Any = None
    intent: Intent | None = None
    targets: tuple[int, ...] = ()


@dataclass(frozen=True)
class Session:
    name: str
    steps: tuple[Step, ...]
    limits: Mapping[str, Any] = field(default_factory=dict)
    """The content store's limits (``content_store=...``); empty for the defaults."""


def produce(text: str, answer: str) -> Step:
    return Step("produce", text, answer)


def skill(text: str, answer: dict[str, Any]) -> Step:
    return Step("skill", text, answer)


def chat(text: str, answer: str) -> Step:
    return Step("chat", text, answer)


def follow(intent: Intent, text: str, *targets: int) -> Step:
    return Step("followup", text, intent=intent, targets=targets)


def paragraphs(title: str, parts: list[tuple[str, list[str]]]) -> str:
    """A long answer: a title line, then a heading line and a paragraph for each part."""
    lines = [title]
    for heading, sentences in parts:
        lines += ["", heading, " ".join(sentences)]
    return "\n".join(lines)


def bullets(title: str, items: list[str]) -> str:
    return "\n".join([title, *(f"- {item}" for item in items)])


LISBON = paragraphs(
    "Three-day itinerary for Lisbon:",
    [
        ("Day 1: Alfama and the castle", [
            "Start early at the Castelo de Sao Jorge before the tour groups arrive.",
            "Walk down through the lanes of Alfama, stopping at the Miradouro de Santa Luzia.",
            "Have lunch at a small tasca near the cathedral and try the grilled sardines.",
            "In the evening, book a table at a fado house; the smaller ones are the best.",
        ]),
        ("Day 2: Belem and the river", [
            "Take tram 15 to Belem and visit the Jeronimos Monastery when it opens.",
            "Queue for the custard tarts at the old bakery, it moves quickly.",
            "Walk along the river to the Tower of Belem and the Monument to the Discoveries.",
            "On the way back, stop at the LX Factory for dinner and the bookshop.",
        ]),
        ("Day 3: Baixa, Chiado and Bairro Alto", [
            "Cross the Praca do Comercio and ride the Santa Justa lift for the view.",
            "Spend the afternoon in Chiado: cafes, bookshops and the Carmo ruins.",
            "End with sunset at the Miradouro de Sao Pedro de Alcantara.",
            "Bairro Alto comes alive late, so have a rest before going out.",
        ]),
        ("Getting around", [
            "Buy a rechargeable Viva Viagem card for trams, metro and ferries.",
            "The hills are steep and the pavements slippery, so wear good shoes.",
            "Most sights are walkable, but tram 28 saves your legs on the way up.",
        ]),
        ("Where to eat", [
            "For seafood, the simple places around the Ribeira market beat the tourist menus.",
            "The Time Out Market is convenient for groups who cannot agree on one dish.",
            "Lunch is the cheap meal: look for the prato do dia written on a board outside.",
            "Dinner starts late, rarely before eight, and reservations help on weekends.",
        ]),
        ("If it rains", [
            "The Gulbenkian Museum can fill a whole afternoon and its garden is lovely after rain.",
            "The tile museum in a former convent is worth the short taxi ride.",
            "The Oceanarium in Parque das Nacoes is a good choice with children.",
        ]),
        ("Day trips", [
            "Sintra is forty minutes away by train and deserves a full day of its own.",
            "Cascais and its beaches are an easy half day along the coast line from Cais do Sodre.",
            "Setubal and the Arrabida hills need a car but reward you with quiet beaches.",
        ]),
    ],
)  # fmt: skip
PACKING = bullets(
    "Packing list for the Lisbon trip:",
    ["comfortable walking shoes with a good grip", "a light rain jacket",
     "sunglasses and sunscreen", "a reusable water bottle", "a power adapter for type F plugs",
     "a small day bag for the trams", "a scarf for the evening wind by the river",
     "cash for the small tascas", "a phrasebook or an offline translation app"],
)  # fmt: skip
BUDGET = {
    "budget": {"food": 45, "lodging": 80, "museums": 20, "transport": 12},
    "city": "Lisbon",
    "currency": "EUR",
}
SINTRA = paragraphs(
    "Day trip to Sintra from Lisbon:",
    [
        ("Morning", [
            "Take the train from Rossio station; it runs every twenty minutes.",
            "Go straight up to the Pena Palace before the crowds arrive.",
        ]),
        ("Afternoon", [
            "Walk through the park to the Moorish Castle for the view of the coast.",
            "Have a late lunch in the old town and try the travesseiros pastry.",
            "Visit the Quinta da Regaleira and its initiation well before it closes.",
        ]),
    ],
)  # fmt: skip
GUESTHOUSE = (
    "I found a guesthouse in Alfama for 70 euros a night. Compare with your previous answer."
)

RETRY = paragraphs(
    "How the retry policy of the HTTP client works:",
    [
        ("What is retried", [
            "A request is retried when the server answers 429, 408 or any 5xx status.",
            "A refused connection is retried too, because the server may be restarting.",
            "Anything else, a 400 or a 404 for example, fails at once: retrying cannot help.",
        ]),
        ("How long it waits", [
            "The wait doubles after each attempt, starting at half a second.",
            "A Retry-After header from the server wins over the computed wait.",
            "Every wait gets a random jitter so that many clients do not retry in step.",
        ]),
        ("When it gives up", [
            "After three retries the last error is raised to the caller with its status.",
            "A streamed reply is never retried once its body has started to arrive.",
            "Cancelling the caller aborts the wait and the request immediately.",
        ]),
        ("What to watch", [
            "Each retry is logged with its attempt number and the wait it chose.",
            "A burst of retries usually means the server is overloaded, not broken.",
        ]),
        ("How to test it", [
            "The transport is injected, so a test hands the client a fake that fails twice.",
            "The sleep function is injected too, so the test records the waits instead of waiting.",
            "One test checks that a 404 is never retried and fails after exactly one request.",
            "Another checks that the Retry-After value is used when the server sends it.",
        ]),
        ("What not to do", [
            "Do not retry a request that changes data unless it carries an idempotency key.",
            "Do not raise the retry count to hide a slow server; fix the timeout instead.",
            "Do not retry inside the retry: a helper that retries on its own multiplies the load.",
        ]),
        ("Where it lives", [
            "The policy is a small class of its own, so the transport code never sleeps or counts.",
            "The client asks it after each failure whether to try again and how long to wait.",
            "Changing the policy for one call is a keyword argument, not a subclass.",
        ]),
    ],
)  # fmt: skip
ISSUES = bullets(
    "Open issues from the sprint review:",
    ["the importer drops rows with empty dates", "search is slow on the archive page",
     "the export button is hidden on small screens", "flaky test in the payment module",
     "missing translations in the settings page", "the nightly backup job ran twice",
     "password reset mails land in spam", "no retry when the upload service times out"],
)  # fmt: skip
STAGING = (
    "Config for the staging server:\n"
    '{"environment": "staging", "replicas": 2, "database": "pg-staging-01",\n'
    ' "log_level": "debug", "feature_flags": ["new-search", "dark-mode"]}'
)
PRODUCTION = (
    "Config for the production server:\n"
    '{"environment": "production", "replicas": 6, "database": "pg-prod-cluster",\n'
    ' "log_level": "warning", "feature_flags": ["dark-mode"]}'
)
DEPLOYS = {
    "deployment": {"api": "healthy", "version": "4.2.1", "web": "degraded", "worker": "healthy"},
    "region": "eu-west",
}

CURRY = paragraphs(
    "Recipe for a vegetable curry for four people:",
    [
        ("Ingredients", [
            "One onion, three cloves of garlic, a thumb of ginger and two tablespoons of curry paste.",
            "Two sweet potatoes, a head of cauliflower, a can of chickpeas and a can of coconut milk.",
            "A handful of spinach, a lime and fresh coriander to finish.",
        ]),
        ("Method", [
            "Soften the onion in oil for eight minutes, then add the garlic, ginger and paste.",
            "Stir for a minute until fragrant, add the sweet potatoes and the cauliflower.",
            "Pour in the coconut milk and a glass of water and simmer for twenty minutes.",
            "Add the chickpeas and the spinach for the last five minutes.",
            "Finish with lime juice and coriander, and serve with rice or flatbread.",
        ]),
        ("Tips", [
            "Roasting the cauliflower first gives it a deeper flavour.",
            "The curry tastes even better the next day, so make a double batch.",
            "If the sauce is too thin, simmer it uncovered for ten more minutes.",
        ]),
        ("Variations", [
            "Swap the sweet potatoes for butternut squash in the autumn.",
            "Add a handful of red lentils with the coconut milk for a thicker, richer curry.",
            "For more heat, fry a sliced green chilli with the onion.",
            "A spoon of peanut butter stirred in at the end makes it rounder and nuttier.",
        ]),
        ("Serving and storing", [
            "Serve with basmati rice, warm flatbread and a bowl of plain yoghurt on the side.",
            "It keeps for three days in the fridge and freezes well for a month.",
        ]),
    ],
)  # fmt: skip
RICE = bullets(
    "Ideas for cooking with leftover rice:",
    ["egg fried rice with spring onions", "rice pudding with cinnamon",
     "stuffed peppers with tomato sauce", "crispy rice cakes", "a quick rice soup with ginger",
     "arancini with mozzarella"],
)  # fmt: skip
DESSERT = paragraphs(
    "A quick dessert: chocolate mousse in ten minutes:",
    [
        ("Steps", [
            "Melt one hundred grams of dark chocolate over a bowl of hot water.",
            "Whip two hundred millilitres of cream until soft peaks form.",
            "Fold the chocolate into the cream and chill for an hour.",
        ]),
    ],
)  # fmt: skip
SHOPPING = bullets(
    "Shopping list for the vegetable curry:",
    ["one onion", "garlic and ginger", "red curry paste", "two sweet potatoes", "a cauliflower",
     "a can of chickpeas", "a can of coconut milk", "spinach", "a lime", "fresh coriander"],
)  # fmt: skip

FRENCH = paragraphs(
    "Causes of the French Revolution in short:",
    [
        ("Money", [
            "The crown was close to bankruptcy after the wars, including the support for America.",
            "Taxes fell on the Third Estate while the nobles and the clergy paid little.",
        ]),
        ("Ideas", [
            "The Enlightenment questioned the divine right of kings and praised popular sovereignty.",
            "Pamphlets spread these ideas quickly among the educated middle class.",
        ]),
        ("Bread", [
            "Poor harvests in 1788 doubled the price of bread in Paris.",
            "Hunger turned political anger into crowds in the streets.",
        ]),
        ("Politics", [
            "The Estates General of 1789 deadlocked over voting by order or by head.",
            "The Third Estate declared itself the National Assembly and swore the Tennis Court Oath.",
        ]),
        ("The king", [
            "Louis XVI hesitated between reform and force, and lost the trust of both sides.",
            "Troops gathering around Paris in July 1789 made people fear a royal coup.",
            "The dismissal of the popular minister Necker was the spark for the Bastille.",
        ]),
        ("Society", [
            "A growing middle class had wealth but no political voice.",
            "Peasants still owed feudal dues, and rumours of aristocratic plots caused the Great Fear.",
            "Paris had a large, hungry and well informed population that could act quickly.",
        ]),
        ("Abroad", [
            "The American example showed that a people could overthrow a king and write a constitution.",
            "Soldiers and officers who had fought in America came home with new ideas.",
            "Neighbouring monarchies watched nervously, which later turned the revolution into war.",
        ]),
        ("Why it matters", [
            "Historians still argue about which cause weighed most; most agree none was enough alone.",
            "The money crisis forced the meeting, the ideas shaped it, and hunger brought the crowds.",
        ]),
    ],
)  # fmt: skip
DATES = bullets(
    "Key dates of the French Revolution:",
    ["5 May 1789: the Estates General opens", "20 June 1789: the Tennis Court Oath",
     "14 July 1789: the storming of the Bastille", "26 August 1789: the Declaration of the "
     "Rights of Man", "21 January 1793: the execution of Louis XVI", "27 July 1794: the fall "
     "of Robespierre"],
)  # fmt: skip
AMERICAN = paragraphs(
    "Causes of the American Revolution in short:",
    [
        ("Taxes", [
            "After the Seven Years War, Britain taxed the colonies to pay its debts.",
            "The Stamp Act and the tea duties were passed without colonial representation.",
        ]),
        ("Ideas", [
            "Colonists read the same Enlightenment writers and claimed the rights of Englishmen.",
            "No taxation without representation became the rallying cry.",
        ]),
        ("Events", [
            "The Boston Massacre and the Boston Tea Party hardened both sides.",
            "The Intolerable Acts of 1774 led to the First Continental Congress.",
        ]),
        ("Distance", [
            "An ocean away, Parliament governed by slow letters and misread the colonists' mood.",
            "The colonies had run their own assemblies for generations and were used to it.",
            "Local militias already existed and could be turned against the crown.",
        ]),
        ("Outcome", [
            "Fighting began at Lexington and Concord in April 1775.",
            "The Declaration of Independence followed in July 1776, drafted mostly by Jefferson.",
        ]),
        ("Trade", [
            "The Navigation Acts forced colonial trade through British ports and ships.",
            "Merchants in Boston and Philadelphia lost money and turned to smuggling.",
            "Boycotts of British goods became the colonists' first shared political weapon.",
        ]),
        ("Leaders", [
            "Samuel Adams organised protest in Boston and the Sons of Liberty spread it.",
            "Thomas Paine's pamphlet Common Sense sold in the hundreds of thousands in 1776.",
            "George Washington gave the Continental Army a commander both sides respected.",
        ]),
    ],
)  # fmt: skip
QUIZ = {
    "quiz": {"q1": "When did the Bastille fall?", "q2": "What was the Tennis Court Oath?",
             "q3": "Who was executed in January 1793?"},
    "topic": "French Revolution",
}  # fmt: skip

# The garden session was written after the listing learned to show what a request names
# (the other four had shown the gap): a check that the change is not fitted to them.
WATERING = paragraphs(
    "Watering schedule for the vegetable garden:",
    [
        ("Tomatoes", [
            "Water deeply twice a week at the base of the plant, never on the leaves.",
            "In a heat wave, add a third watering and mulch the soil with straw.",
        ]),
        ("Lettuce and herbs", [
            "Shallow roots dry out fast: a little water every morning works best.",
            "Basil wilts in the afternoon sun but recovers by evening; do not drown it.",
        ]),
        ("Beans and courgettes", [
            "Once a week is enough until they flower, then every three days.",
            "Courgettes drink a lot when the fruit swells, about ten litres a plant.",
        ]),
    ],
)  # fmt: skip
SHADE = bullets(
    "Plants that grow well in shade:",
    ["hostas with their large blue leaves", "ferns such as the lady fern", "foxgloves for height",
     "hellebores that flower in late winter", "wild garlic under the trees",
     "mint, which grows almost anywhere", "astilbe for a damp corner"],
)  # fmt: skip
SOIL = {"soil_test": {"nitrogen": "low", "ph": 6.2, "phosphorus": "medium", "potassium": "high"},
        "bed": "north bed"}  # fmt: skip
PESTS = bullets(
    "Slug control without chemicals:",
    ["go out with a torch after rain and pick them off", "sink a beer trap into the soil",
     "ring young plants with crushed eggshells or grit", "water in the morning, not at night",
     "encourage frogs and birds with a small pond"],
)  # fmt: skip

SESSIONS = (
    Session("trip", (
        produce("Plan a three-day itinerary for Lisbon.", LISBON),
        follow("reformat", "format that as a table", 0),
        produce("Give me a packing list for the trip.", PACKING),
        follow("summarize", "summarize your last answer", 2),
        skill("Estimate my daily budget in Lisbon.", BUDGET),
        follow("compare", GUESTHOUSE, 4),
        chat("Thanks, that helps.", "You're welcome!"),
        follow("reformat", "format the budget as a table", 4),
        produce("Plan a day trip to Sintra.", SINTRA),
        follow("compare", "compare that with the Lisbon itinerary", 8, 0),
        chat("Great.", "Glad it helps."),
        follow("summarize", "summarize the itinerary for Lisbon", 0),
        follow("reformat", "put the packing list in a table", 2),
        follow("summarize", "Summarize that.", 12),
        follow("reformat", "turn your last answer into a bulleted list", 13),
    )),
    Session("code review", (
        produce("Explain how the retry policy of our HTTP client works.", RETRY),
        follow("summarize", "summarize your last answer", 0),
        produce("List the open issues from the sprint review.", ISSUES),
        follow("reformat", "format that as a table", 2),
        produce("Write the config for the staging server.", STAGING),
        chat("ok", "Anything else?"),
        follow("reformat", "format the staging config as a table", 4),
        produce("Now the config for the production server.", PRODUCTION),
        follow("compare", "compare the production config with the staging config", 7, 4),
        follow("summarize", "give me the key points of the retry policy", 0),
        chat("Thanks!", "You're welcome."),
        skill("Show the deployment status.", DEPLOYS),
        follow("reformat", "format that as a table", 11),
        follow("summarize", "summarize the open issues", 2),
    )),
    Session("cooking", (
        produce("Give me a recipe for a vegetable curry.", CURRY),
        follow("reformat", "format that as a table", 0),
        produce("What can I cook with leftover rice?", RICE),
        follow("summarize", "summarize your last answer", 2),
        chat("Nice.", "Enjoy!"),
        produce("Suggest a quick dessert.", DESSERT),
        follow("compare", "compare that with the curry recipe", 5, 0),
        follow("reformat", "put the dessert in a table", 5),
        produce("Make a shopping list for the curry.", SHOPPING),
        follow("summarize", "Summarize that.", 8),
        follow("reformat", "format the shopping list as a table", 8),
        follow("summarize", "give me the key points of the dessert", 5),
        follow("compare", "compare the shopping list with the rice ideas", 8, 2),
    ), {"max_entries": 4}),
    Session("history lesson", (
        produce("Summarize the causes of the French Revolution.", FRENCH),
        follow("reformat", "turn that into a bulleted list", 0),
        produce("List the key dates of the revolution.", DATES),
        follow("reformat", "format that as a table", 2),
        chat("Interesting.", "It is a fascinating period."),
        produce("Explain the causes of the American Revolution.", AMERICAN),
        follow("compare", "compare that with the causes of the French Revolution", 5, 0),
        follow("summarize", "summarize your last answer", 6),
        skill("Make a short quiz about it.", QUIZ),
        follow("reformat", "format the quiz as a table", 8),
        follow("summarize", "summarize the key dates", 2),
        follow("compare", "compare your last two answers", 10, 9),
    )),
    Session("garden", (
        produce("How often should I water my vegetables?", WATERING),
        chat("My tomatoes look fine so far.", "Good to hear."),
        produce("Which plants grow in shade?", SHADE),
        follow("reformat", "make that a table", 2),
        skill("Read the soil test for the north bed.", SOIL),
        follow("summarize", "summarize the watering schedule", 0),
        produce("How do I keep slugs away?", PESTS),
        chat("Thanks a lot.", "Happy gardening!"),
        follow("reformat", "put the slug control tips in a table", 6),
        follow("compare", "compare the shade plants with the slug control tips", 2, 6),
        follow("reformat", "format the soil test as a table", 4),
        follow("summarize", "give me the key points of your last answer", 10),
    )),
)  # fmt: skip

# --- The good model -------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_ADVERT = re.compile(r"^- (\S+) \((\w+), (\d+) bytes\): (.*)$")
_NOTE = re.compile(r"\[… \d+ bytes in all: (\S+)\]$")
# Words that say what to do or point, not what about.
_NOT_TOPIC = {
    "format", "that", "as", "a", "an", "the", "table", "tables", "summarize", "summary", "your",
    "last", "answer", "answers", "compare", "with", "previous", "give", "me", "key", "points",
    "of", "put", "in", "into", "turn", "bulleted", "list", "please", "now", "this", "two", "it",
    "what", "you", "said", "about",
}  # fmt: skip


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def intent_of(text: str) -> Intent | None:
    """Whether the person asks to reformat, summarize or compare an earlier answer."""
    lowered = text.lower()
    if "compare" in lowered:
        return "compare"
    if "summar" in lowered or "key points" in lowered:
        return "summarize"
    if re.search(r"\b(format|table|bulleted)\b", lowered):
        return "reformat"
    return None


@dataclass
class Candidate:
    """An earlier answer the prompt shows: its ref (if the store advertises or the history
    note names it), its text as the history holds it, and what it was about."""

    ref: str | None
    text: str
    about: str


def candidates(request: ModelRequest) -> list[Candidate]:
    """The earlier answers a model can see in ``request``, oldest first."""
    system = request.messages[0].content or ""
    adverts = [m.groups() for line in system.splitlines() if (m := _ADVERT.match(line))]
    window = list(request.messages[1:])
    found: list[Candidate] = []
    for index, message in enumerate(window):
        if message.role != "assistant" or message.tool_calls or not message.content:
            continue
        asked = next((m.content or "" for m in reversed(window[:index]) if m.role == "user"), "")
        note = _NOTE.search(message.content)
        found.append(Candidate(note.group(1) if note else None, message.content, asked))
    linked = {c.ref for c in found if c.ref}
    for ref, _kind, _size, preview in adverts:
        if ref in linked:
            continue
        # An advert's first line names the answer it stands for: the newest reply that starts
        # so (a line cut to fit ends in "…", its last word maybe cut too).
        head = words(preview[:-1])[:-1] if preview.endswith("…") else words(preview)
        head = head[:8]
        match = next(
            (c for c in reversed(found) if c.ref is None and words(c.text)[: len(head)] == head),
            None,
        )
        if match is not None:
            match.ref = ref
        else:
            found.insert(0, Candidate(ref, preview, ""))  # older than the window
    return found


def pick(text: str, found: list[Candidate], intent: Intent) -> list[Candidate]:
    """The answers a follow-up is about: those its topic words name best, else the newest
    (two for "your last two answers" or a comparison that names nothing)."""
    sentence = next((s for s in re.split(r"(?<=[.!?])\s+", text) if intent_of(s)), text)
    if "last two" in sentence.lower():
        return found[-2:]
    groups = (
        re.split(r"\bwith\b", sentence, flags=re.IGNORECASE) if intent == "compare" else [sentence]
    )
    chosen: list[Candidate] = []
    for group in groups:
        topic = set(words(group)) - _NOT_TOPIC - {"compare"}
        # What the person asked for names an answer best; its first line next (a reformatted
        # answer repeats the words of its source, but was asked for as "format that").
        scored = [(2 * len(topic & set(words(c.about))) + len(topic & set(words(title(c)))), c)
                  for c in found]  # fmt: skip
        best = max((score for score, _ in scored), default=0)
        if topic and best > 0:
            hit = next(c for score, c in reversed(scored) if score == best)
        elif re.search(r"\b(that|this|last|previous)\b", group.lower()) and found:
            hit = found[-1]
        else:
            continue
        if hit not in chosen:
            chosen.append(hit)
    return chosen


def title(candidate: Candidate) -> str:
    return candidate.text.split("\n", 1)[0]


def body_lines(body: str) -> list[str]:
    """The lines of a body as a table or a summary takes them: JSON as key-value pairs."""
    text = body.strip()
    if text.startswith("{"):
        try:
            return [f"{key}: {value}" for key, value in leaves(json.loads(text))]
        except ValueError:
            pass
    return [line.lstrip("- ").strip() for line in text.splitlines() if line.strip()]


def leaves(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for key in value for pair in leaves(value[key], key)]
    return [(prefix, value)]


def transform(intent: Intent, bodies: list[str], request: str) -> str:
    """The good model's answer from the bodies it read."""
    if intent == "reformat":
        lines = body_lines(bodies[0])
        if "bullet" in request.lower():
            return "\n".join(f"- {line}" for line in lines)
        if bodies[0].lstrip().startswith("{"):
            pairs = [line.split(": ", 1) for line in lines]
            return "| key | value |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in pairs)
        return "| # | item |\n|---|---|\n" + "\n".join(
            f"| {n} | {line} |" for n, line in enumerate(lines, 1)
        )
    if intent == "summarize":
        lines = body_lines(bodies[0])
        return f"In short: {'; '.join(lines[:3])} ({len(lines)} points in all)."
    parts = [f"{n}. {'; '.join(body_lines(b)[:2])}" for n, b in enumerate(bodies, 1)]
    return "Side by side:\n" + "\n".join(parts)


class GoodModel:
    """The scripted model's script: it writes the planned answers, and answers follow-ups as
    a good model would, from what the prompt shows."""

    def __init__(self, answers: Mapping[str, str]) -> None:
        self._answers = answers

    def __call__(self, request: ModelRequest) -> str | ModelReply:
        messages = request.messages
        said = next(m.content or "" for m in reversed(messages) if m.role == "user")
        last = messages[-1]
        if last.role == "user" and said in self._answers:
            return self._answers[said]
        intent = intent_of(said)
        if last.role == "tool":
            results = trailing_tool_results(messages)
            if intent is None or any(r.startswith("error:") for r in results):
                return "I no longer have that answer stored, so I cannot work from it."
            return transform(intent, results, said)
        if intent is None:
            return "I see."
        found = candidates(request)
        chosen = pick(said, found, intent)
        if not chosen:
            return "I have no earlier answer to work from."
        if any(tool.name == "read_content" for tool in request.tools):
            reads = [c for c in chosen if c.ref is not None]
            if reads:
                calls = tuple(
                    tool_call("read_content", {"ref": c.ref}, id=f"read-{n}")
                    for n, c in enumerate(reads)
                )
                return ModelReply(tool_calls=calls)
        # Nothing to read (no store, or a short answer whose ref the prompt no longer shows):
        # work from the copy in the history.
        return transform(intent, [c.text for c in chosen], said)


def trailing_tool_results(messages: tuple[ChatMessage, ...]) -> list[str]:
    results: list[str] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        results.insert(0, message.content or "")
    return results


# --- Running the sessions -------------------------------------------------------------


class Recording:
    """A provider that keeps every request it passes on (what the model was shown)."""

    def __init__(self, inner: Provider) -> None:
        self._inner = inner
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        async for event in self._inner.stream(request):
            yield event


class FollowUpRouter:
    """A provider that lets the model under test answer the follow-up turns and the
    scripted writer every other turn (set ``follow_up`` before each turn)."""

    def __init__(self, writer: Provider, model: Provider) -> None:
        self._writer = writer
        self._model = model
        self.follow_up = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        source = self._model if self.follow_up else self._writer
        async for event in source.stream(request):
            yield event


def records(session: Session) -> FunctionSkill:
    """The host's skill that returns the session's objects (run by name, never by the
    model: its description matches no follow-up)."""
    objects = {step.text: step.answer for step in session.steps if step.kind == "skill"}

    def run(input: str, context: SkillContext, helpers: SkillHelpers) -> Any:
        return objects[input]

    return FunctionSkill("records", run, description="Returns a host record by its key.")


def body_text(output: Any) -> str:
    """A stored body as ``read_content`` gives it to a model."""
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def holds_text_of(answer: str, body: str, run: int = 4) -> bool:
    """Whether ``answer`` holds ``run`` consecutive words of ``body``."""
    said = f" {' '.join(words(answer))} "
    seq = words(body)
    return any(f" {' '.join(seq[i : i + run])} " in said for i in range(len(seq) - run + 1))


@dataclass
class FollowUp:
    """How one follow-up went."""

    session: str
    step: int
    intent: Intent
    position: str
    """``newest``: about the newest answer; ``older``: an earlier one; ``two``: two answers."""
    eligible: bool
    """Every answer it is about was still stored when it was asked."""
    retrieved: bool
    holds_text: bool
    whole: bool
    """The model was shown every body it is about whole, as a tool result."""
    ref_shown: bool
    """The ref of every answer it is about was in the prompt (advertised, or noted in
    history) when it was asked: else no model can name it."""
    misses: int
    output: str

    @property
    def success(self) -> bool:
        return self.retrieved and self.holds_text


@dataclass
class SessionRun:
    follow_ups: list[FollowUp] = field(default_factory=list)
    first_packs: list[int] = field(default_factory=list)
    """Per model turn, the tokens of its first pack."""
    all_packs: list[int] = field(default_factory=list)
    advert_tokens: list[int] = field(default_factory=list)
    """Per model turn, what the first prompt's ``## Stored content`` section costs."""
    round_trip_tokens: list[int] = field(default_factory=list)
    """Per model turn, what earlier turns' tool calls and results cost in its first prompt."""
    failed: int = 0

    def note_packs(self, events: list[Any], first: ModelRequest) -> None:
        """A model turn's packs (its ``ContextPackBuilt`` events) and its first prompt."""
        packs = [e.budget_used for e in events if e.kind == "ContextPackBuilt"]
        self.first_packs.append(packs[0])
        self.all_packs.extend(packs)
        system = first.messages[0].content or ""
        advert = system.split("## Stored content\n", 1)[1] if "## Stored content" in system else ""
        self.advert_tokens.append(TOKENS.count(advert))
        self.round_trip_tokens.append(sum(
            TOKENS.count((m.content or "") + "".join(c.arguments for c in m.tool_calls))
            for m in first.messages if m.role == "tool" or m.tool_calls
        ))  # fmt: skip


@dataclass
class Answers:
    """What a session's turns left so far: each step's ref and body, the newest answer."""

    refs: dict[int, str | None] = field(default_factory=dict)
    bodies: dict[int, str] = field(default_factory=dict)
    latest: int | None = None

    def position(self, step: Step) -> str:
        if len(step.targets) > 1:
            return "two"
        return "newest" if step.targets[0] == self.latest else "older"


def judge(
    session: Session, index: int, answers: Answers, result: Any, events: list[Any],
    requests: list[ModelRequest], eligible: bool,
) -> FollowUp:  # fmt: skip
    """How the follow-up ``session.steps[index]`` went, from its events and prompts."""
    step = session.steps[index]
    found = {e.ref for e in events if e.kind == "ContentRetrieved" and e.found}
    output = result.output if result.ok and isinstance(result.output, str) else ""
    shown = {m.content for r in requests for m in r.messages if m.role == "tool"}
    prompt = "\n".join(m.content or "" for m in requests[0].messages)
    refs, bodies = answers.refs, answers.bodies
    return FollowUp(
        session=session.name,
        step=index,
        intent=step.intent or "reformat",
        position=answers.position(step),
        eligible=eligible,
        retrieved=all(refs[t] in found for t in step.targets),
        holds_text=all(holds_text_of(output, bodies[t]) for t in step.targets),
        whole=all(bodies[t] in shown for t in step.targets),
        ref_shown=all(str(refs[t]) in prompt for t in step.targets),
        misses=sum(1 for e in events if e.kind == "ContentRetrieved" and not e.found),
        output=output[:200],
    )


async def play(
    session: Session, provider: Provider, *, store: bool, router: FollowUpRouter | None = None,
    model_options: Mapping[str, Any] | None = None,
) -> SessionRun:  # fmt: skip
    """Run ``session`` through a fresh runtime; what its follow-ups and packs did."""
    events: list[Any] = []
    recording = Recording(provider)
    runtime = agrun.create_runtime(
        clock=FixedClock(),
        ids=SequentialIds(),
        provider=recording,
        skills=[records(session)],
        memory_extraction="rules",
        content_store=dict(session.limits) if store else False,
        on_event=events.append,
        **(model_options or {}),
    )
    out, answers = SessionRun(), Answers()
    for index, step in enumerate(session.steps):
        start, asked = len(events), len(recording.requests)
        if router is not None:
            router.follow_up = step.kind == "followup"
        # Whether the answers it is about are still held (not evicted) as it is asked.
        held = runtime._session.content.entries if runtime._session.content is not None else {}
        eligible = all(answers.refs.get(t) in held for t in step.targets)
        skill = "records" if step.kind == "skill" else None
        result = await runtime.run(step.text, skill=skill)
        turn, requests = events[start:], recording.requests[asked:]
        if requests:
            out.note_packs(turn, requests[0])
        out.failed += not result.ok
        if step.kind == "followup":
            out.follow_ups.append(judge(session, index, answers, result, turn, requests, eligible))
        answers.refs[index] = result.messages[-1].content_ref if result.ok else None
        answers.bodies[index] = body_text(result.output) if result.ok else ""
        if result.ok:
            answers.latest = index
    return out


def answers_of(sessions: tuple[Session, ...]) -> dict[str, str]:
    return {
        step.text: step.answer
        for session in sessions
        for step in session.steps
        if step.kind in ("produce", "chat")
    }


async def measure(server: str | None) -> dict[str, dict[str, list[SessionRun]]]:
    """Every session with the scripted good model (store on and off) and, given a server,
    with its model answering the follow-ups."""
    answers = answers_of(SESSIONS)
    runs: dict[str, dict[str, list[SessionRun]]] = {"scripted": {"on": [], "off": []}}
    for session in SESSIONS:
        for store in ("on", "off"):
            scripted = ScriptedProvider(GoodModel(answers))
            run = await play(session, scripted, store=store == "on")
            runs["scripted"][store].append(run)
    if server is not None:
        from agrun.adapters.openai import llama_server

        runs["model"] = {"on": []}
        model = llama_server(server, max_retries=1)
        for session in SESSIONS:
            router = FollowUpRouter(ScriptedProvider(GoodModel(answers)), model)
            run = await play(session, router, store=True, router=router,
                             model_options=TINY_MODEL)  # fmt: skip
            runs["model"]["on"].append(run)
    return runs


# The tiny test model's window (2,048 tokens) and its small vocabulary: about twice agrun's
# estimate per text (the calibration refines it from the server's usage); greedy, so a run
# can be repeated.
TINY_MODEL = {"context_window": 2048, "max_reply_tokens": 256, "token_factor": 2.0,
              "temperature": 0.0}  # fmt: skip

# --- Reporting ----------------------------------------------------------------------------


def rate(follow_ups: list[FollowUp], whole: bool = False) -> str:
    counted = [f for f in follow_ups if f.eligible]
    if not counted:
        return "-"
    won = sum(f.success and (f.whole or not whole) for f in counted)
    return f"{won}/{len(counted)} = {won / len(counted):.0%}"


def success_table(runs: dict[str, dict[str, list[SessionRun]]]) -> str:
    models = list(runs)
    every = {m: [f for r in runs[m]["on"] for f in r.follow_ups] for m in models}
    head = ["follow-ups", "n", "answers still stored"]
    head += [f"{m}{suffix}" for m in models for suffix in ("", ", body shown whole")]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    base = every[models[0]]
    groups: list[tuple[str, Any]] = [("all", lambda f: True)]
    groups += [(f"intent: {i}", lambda f, i=i: f.intent == i) for i in ("reformat", "summarize",
                                                                         "compare")]  # fmt: skip
    groups += [(f"about: {p}", lambda f, p=p: f.position == p) for p in ("newest", "older", "two")]
    for label, keep in groups:
        chosen = [f for f in base if keep(f)]
        cells = [label, str(len(chosen)), str(sum(f.eligible for f in chosen))]
        cells += [rate([f for f in every[m] if keep(f)], whole) for m in models
                  for whole in (False, True)]  # fmt: skip
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def pack_table(runs: dict[str, list[SessionRun]]) -> tuple[str, dict[str, Any]]:
    figures: dict[str, Any] = {}
    for store in ("on", "off"):
        first = [n for r in runs[store] for n in r.first_packs]
        every = [n for r in runs[store] for n in r.all_packs]
        figures[store] = {"turns": len(first), "calls": len(every),
                          "median_first": statistics.median(first),
                          "median_all": statistics.median(every)}  # fmt: skip
    for store in ("on", "off"):
        figures[store]["median_advert"] = statistics.median(
            n for r in runs[store] for n in r.advert_tokens
        )
        figures[store]["median_round_trips"] = statistics.median(
            n for r in runs[store] for n in r.round_trip_tokens
        )
    on, off = figures["on"], figures["off"]
    figures["growth_first"] = on["median_first"] / off["median_first"] - 1
    figures["growth_all"] = on["median_all"] / off["median_all"] - 1
    head = ["content store", "model turns", "median tokens, first pack of a turn", "model calls",
            "median tokens, every pack", "of a first pack: Stored content",
            "of a first pack: earlier tool round trips"]  # fmt: skip
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for store in ("on", "off"):
        f = figures[store]
        rows.append(f"| {store} | {f['turns']} | {f['median_first']:g} | {f['calls']} | "
                    f"{f['median_all']:g} | {f['median_advert']:g} | "
                    f"{f['median_round_trips']:g} |")  # fmt: skip
    rows.append(f"| growth | | {figures['growth_first']:+.1%} | | {figures['growth_all']:+.1%} "
                "| | |")  # fmt: skip
    return "\n".join(rows), figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--llama-server", metavar="URL", help="also measure this server's model")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args()
    runs = asyncio.run(measure(args.llama_server))
    follow_ups = [f for r in runs["scripted"]["on"] for f in r.follow_ups]
    print(
        f"Content follow-ups: {len(SESSIONS)} sessions, "
        f"{sum(len(s.steps) for s in SESSIONS)} turns, {len(follow_ups)} follow-ups.\n"
    )
    print("Success (the body of every answer it is about retrieved, and text of it in the "
          "final answer), over the follow-ups whose answers were still stored:\n")  # fmt: skip
    print(success_table(runs))
    evicted = [f for f in follow_ups if not f.eligible]
    for model in runs:
        gone = [f for r in runs[model]["on"] for f in r.follow_ups if not f.eligible]
        failed = sum(r.failed for r in runs[model]["on"])
        misses = sum(f.misses for r in runs[model]["on"] for f in r.follow_ups)
        lost = [f for r in runs[model]["on"] for f in r.follow_ups if f.eligible and not f.success]
        hidden = sum(not f.ref_shown for f in lost)
        print(
            f"\n{model}: {len(lost)} failed follow-ups, {hidden} of them about an answer whose "
            f"ref the prompt did not show; {len(gone)} follow-ups about evicted answers "
            f"({sum(f.holds_text for f in gone)} answered with their text anyway); "
            f"{misses} read_content misses; {failed} failed turns."
        )
    table, figures = pack_table(runs["scripted"])
    print("\nPack size (scripted sessions, agrun's token estimate), content store on vs off:\n")
    print(table)
    if args.json:
        out = {
            "sessions": [s.name for s in SESSIONS],
            "server": args.llama_server,
            "evicted": len(evicted),
            "packs": figures,
            "follow_ups": {
                model: [f.__dict__ | {"success": f.success} for r in by["on"] for f in r.follow_ups]
                for model, by in runs.items()
            },
            "failed_turns": {m: sum(r.failed for r in by["on"]) for m, by in runs.items()},
            "success": {
                model: Counter(
                    "success" if f.success else "failure"
                    for r in by["on"]
                    for f in r.follow_ups
                    if f.eligible
                )
                for model, by in runs.items()
            },
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
