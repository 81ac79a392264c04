"""A seeded corpus of long multi-session chats with questions about old turns (bench only).

Run: python bench/recall_corpus.py [--seed 0] [--conversations 24] [--out corpus.json]

Pure standard library and deterministic: the same seed gives the same corpus, byte for
byte (``dumps(build_corpus(seed))``). ``bench/context_recall.py`` measures how much of
each question's evidence a context pack keeps.

Each conversation is either two friends chatting (both speak as ``user``; every message
starts with the speaker's name) or a person and an assistant. It runs over 16-22 sessions;
the first message of a session starts with ``[Session 3, 14 March 2024]``. Facts sit
mid-turn: an evidence turn opens with a greeting or filler sentence, the fact comes after.
Every topic also leaves distractor turns that use its words (and the words its questions
use) in other contexts, and replies that name the topic without saying anything.

Question types, by what makes the evidence hard or easy to find:

- ``lexical``: reuses the evidence's words.
- ``paraphrase``: other words and synonyms for the same thing.
- ``date``: names a date the evidence never writes: the event's absolute date where the
  turn said "last Tuesday", or the session's date for something said that day.
- ``number``: a number written the other way ("3" where the turn said "three").
- ``temporal``: "what did she do after X": evidence is X's turn and the turn after it,
  which shares no words with the question.
- ``update``: a fact that changed later: evidence is the old and the new turn.
- ``speaker``: names who said it; the other party said the same kind of thing.
- ``when``: asks when; the answer is the day the turn was said (with the turn's "last
  Tuesday" when it says one), which only the turn's date tells (``recall_answers.py``).
- ``after_match``: the turn states several things; the sentence sharing the question's
  words is not the one holding the answer, which is next to it.
- ``multi_hop``: one item per turn, spread over 3-4 sessions; the answer is all of them.
- ``wrong_speaker``: asks about the party who did not say it ("what did Jonas ..." for
  Maya's turn; "you" for the person's own turn in a chat with an assistant).

Every question records ``answer_words``: what a pack must hold to answer it (a day as
its ISO date, found in a pack as ``2024-03-14`` or ``14 March 2024``).

A question is asked at the end of a session after its last evidence turn (half of them
at the end of the conversation): its request is the messages before that point, then
the question as the person's last message.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from recall_answers import AFTER_MATCH, ANSWER_SLOTS, MULTI_HOP

__all__ = ["QUESTION_TYPES", "build_corpus", "dumps"]

QUESTION_TYPES = (
    "lexical",
    "paraphrase",
    "date",
    "number",
    "temporal",
    "update",
    "speaker",
    "when",
    "after_match",
    "multi_hop",
    "wrong_speaker",
)


def word_list(text: str) -> list[str]:
    """The space-separated words of ``text`` (for the long word lists below)."""
    return text.split()


_ANSWER_STOP = frozenset(
    word_list(
        """a an and at by for from in into is it of on or the to with my your his her their our
    i me we you he she they was were be been do did does that this"""
    )
)


# --- Topics -----------------------------------------------------------------------------
#
# A topic belongs to one speaker of a conversation. Its facts are said in that speaker's
# voice; questions use {who} ("I" / "Maya"), {whom} ("me" / "Maya"), {whose} ("my" /
# "Maya's"), {poss} ("my" / "her"), {does} ("do" / "does") and {is} ("am" / "is"), so one
# template reads right in both kinds of chat.
# A fact whose ``say`` holds {when} happened on a day named relative to the session
# ("last Tuesday"); its ``date`` question names that day absolutely. A fact with ``n``
# holds a number, written as a word in the turn and as digits in the question, or the
# other way round. ``kw`` are the phrases replies use; ``distract`` are other-context
# sentences sharing the topic's (and its questions') words.

TOPICS: list[dict[str, Any]] = [
    {
        "key": "bakery",
        "kw": ["your bakery", "the shop", "the new place"],
        "facts": [
            {
                "say": "I finally signed the lease on the bakery space {when}.",
                "hint": "the shop premises",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} sign the lease on the bakery space?",
                    "paraphrase": "When did {who} commit to renting the shop premises?",
                    "date": "What did {who} put {poss} name to for the new business {on_date}?",
                },
            },
            {
                "say": "The oven alone cost {n} thousand euros, which nearly broke me.",
                "n": [6, 19],
                "decoys": [
                    "My cousin spent {m} thousand euros on a car that barely runs.",
                    "The roof repair at my parents' place cost {m} thousand euros.",
                ],
                "hint": "the equipment costs",
                "answer": "the oven",
                "ask": {
                    "lexical": "How much did the oven cost?",
                    "paraphrase": "What was the price of the big baking appliance for the shop?",
                    "number": "Which purchase for the business came to {n} thousand?",
                },
            },
            {
                "say": "I've hired a pastry chef called {third} who used to work at a hotel.",
                "hint": "staff for the shop",
                "answer": "{third}",
                "ask": {
                    "lexical": "Who did {who} hire as pastry chef?",
                    "paraphrase": "Who is making the cakes and desserts at {whose} shop?",
                },
            },
        ],
        "temporal": {
            "event": "I got the keys to the bakery {when}.",
            "after": "The very first thing I did was paint the whole front a dark green.",
            "ask": "What did {who} do right after getting the keys to the shop?",
            "answer": "painted the front dark green",
        },
        "update": {
            "old": "We're aiming to open the bakery on the first of May.",
            "new": "Opening day is pushed back to the middle of June now, the oven is late.",
            "ask": "When is {whose} bakery opening now?",
            "answer": "mid-June",
        },
        "distract": [
            "The bakery near the station had a queue out the door again this morning.",
            "My cousin keeps saying small shops never make money in the first year.",
            "I walked past three empty shops on the high street, it's grim.",
            "I signed up for the bike lease scheme at work, finally.",
            "Our landlord wants us to commit to renting the flat for two more years.",
            "The premises of my old office are a climbing gym now.",
            "I burned the bread again, I should leave baking to the professionals.",
        ],
    },
    {
        "key": "running",
        "kw": ["the running", "your training", "the race"],
        "facts": [
            {
                "say": "I ran my first half marathon {when} and finished just under two hours.",
                "hint": "the long race",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} run {poss} first half marathon?",
                    "paraphrase": "When did {who} complete a 21 km event for the first time?",
                    "date": "Which race did {who} take part in {on_date}?",
                },
            },
            {
                "say": "My knee started hurting around kilometre {n}, so I walked for a bit.",
                "n": [11, 19],
                "decoys": [
                    "The hotel was {m} km from the beach, which nobody mentioned.",
                    "There's a {m} km charity walk in May if you fancy it.",
                ],
                "hint": "the sore joint",
                "answer": "{whose} knee started hurting",
                "ask": {
                    "lexical": "When did {whose} knee start hurting during the race?",
                    "paraphrase": "At what distance did {who} get joint pain on the course?",
                    "number": "What happened to {whom} at the {n} km mark?",
                },
            },
            {
                "say": "The new trainers are the blue Asics my physio recommended.",
                "hint": "new sports gear",
                "answer": "blue Asics",
                "ask": {
                    "lexical": "Which trainers did {who} buy?",
                    "paraphrase": "What footwear did {who} get on the advice of a therapist?",
                },
            },
        ],
        "temporal": {
            "event": "I crossed the finish line of the city 10k {when}.",
            "after": "Then I went straight to the pub with the club for a huge plate of chips.",
            "ask": "What did {who} do after finishing the ten kilometre race in town?",
            "answer": "went to the pub with the club for chips",
        },
        "update": {
            "old": "I'm doing three runs a week at the moment.",
            "new": "I've dropped down to two runs a week, my knee needs the rest.",
            "ask": "How many times a week {is} {who} running these days?",
            "answer": "two",
        },
        "distract": [
            "My neighbour runs a little repair café on Saturdays.",
            "The trains were running late all week.",
            "I watched the marathon on TV while eating crisps.",
            "My knee clicks when I climb the stairs, it's age.",
            "Those trainers in the shop window were ridiculous.",
            "Physio appointments are impossible to get round here.",
            "The race for the parking spaces at work is getting intense.",
        ],
    },
    {
        "key": "dog",
        "kw": ["the puppy", "{pet}", "the little one"],
        "slots": {
            "pet": ["Biscuit", "Pepper", "Mochi", "Olive", "Scout", "Waffles", "Juniper"],
            "breed": ["beagle", "spaniel", "greyhound", "border collie", "dachshund"],
        },
        "facts": [
            {
                "say": "We got the puppy from the rescue {when}, a {breed} we've named {pet}.",
                "hint": "the new four-legged family member",
                "answer": "{pet}",
                "ask": {
                    "lexical": "What did {who} name the puppy from the rescue?",
                    "paraphrase": "What is the name of {whose} new dog?",
                    "date": "What did {who} bring home from the animal shelter {on_date}?",
                },
            },
            {
                "say": "{pet} weighs {n} kilos already and eats like a horse.",
                "n": [7, 16],
                "decoys": [
                    "The neighbour's cat is {m} kg, it's basically a small dog.",
                    "My suitcase was {m} kg over the limit, so I wore three jumpers.",
                ],
                "hint": "how big the pet is getting",
                "answer": "{pet}",
                "ask": {
                    "lexical": "How many kilos does {pet} weigh?",
                    "paraphrase": "How heavy is {whose} dog?",
                    "number": "Which of {whose} animals is {n} kg?",
                },
            },
            {
                "say": "The vet said {pet} has a mild allergy to chicken, so we changed food.",
                "hint": "the pet's health",
                "answer": "chicken",
                "ask": {
                    "lexical": "What is {pet} allergic to, according to the vet?",
                    "paraphrase": "Which ingredient makes {whose} dog unwell?",
                },
            },
        ],
        "temporal": {
            "event": "{pet} slipped the lead in the park {when} and ran off.",
            "after": "We knocked on doors for two hours until a postman found {pet} by the canal.",
            "ask": "What happened after {whose} dog got away in the park?",
            "answer": "a postman found the dog by the canal after two hours",
        },
        "update": {
            "old": "{pet} sleeps in a crate in the kitchen.",
            "new": "We gave up on the crate, {pet} sleeps on our bed now.",
            "ask": "Where does {whose} dog sleep these days?",
            "answer": "on the bed",
        },
        "distract": [
            "My sister's cat brought in a dead mouse again.",
            "The vet bill for my parents' old dog was enormous.",
            "There's a new dog park opening near the river.",
            "I'm not a puppy person, honestly, too much chaos.",
            "Chicken curry tonight, I think, it's the only thing in the fridge.",
            "A huge dog knocked me off my bike on the canal path.",
            "The animal shelter near work is looking for volunteers.",
        ],
    },
    {
        "key": "job",
        "kw": ["the new job", "work", "the move"],
        "slots": {"company": ["Northwind", "Brightlane", "Kestrel Labs", "Halden", "Bluefin"]},
        "facts": [
            {
                "say": "I handed in my notice at the old place {when}.",
                "hint": "leaving the old job",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} hand in {poss} notice?",
                    "paraphrase": "When did {who} resign from the previous employer?",
                    "date": "What did {who} tell {poss} old employer {on_date}?",
                },
            },
            {
                "say": "The new job at {company} pays {n} thousand more a year.",
                "n": [4, 15],
                "decoys": [
                    "My brother earns {m} thousand a year less than his boss.",
                    "The flat by the park costs {m} thousand a year in rent.",
                ],
                "hint": "the salary",
                "answer": "{n_digit} thousand more",
                "ask": {
                    "lexical": "How much more does the new job at {company} pay?",
                    "paraphrase": "How big is {whose} pay rise with the new employer?",
                    "number": "Where will {who} earn {n} thousand extra each year?",
                },
            },
            {
                "say": "My new manager is called {third} and used to be a teacher.",
                "hint": "the new boss",
                "answer": "{third}",
                "ask": {
                    "lexical": "Who is {whose} new manager?",
                    "paraphrase": "Who is the boss in {whose} new role, and what was their career?",
                },
            },
        ],
        "temporal": {
            "event": "My last day at the old office was {when}.",
            "after": "I took the whole team out for dumplings and nobody cried, a relief.",
            "ask": "What did {who} do after the final day at the previous workplace?",
            "answer": "took the team out for dumplings",
        },
        "update": {
            "old": "I start at {company} on the first Monday of the month.",
            "new": "HR moved my start date back two weeks because of a laptop delay.",
            "ask": "When {does} {who} begin at {company} now?",
            "answer": "two weeks later than planned",
        },
        "distract": [
            "My brother is job hunting again, poor thing.",
            "I had to give notice to the gym to cancel my membership.",
            "Someone at work resigned by email, very dramatic.",
            "My manager at the charity shop is lovely.",
            "Teachers are so underpaid, it's a scandal.",
            "The new intern keeps calling me boss, it's weird.",
            "The old office building is being turned into flats.",
        ],
    },
    {
        "key": "trip",
        "kw": ["the trip", "{city}", "the holiday"],
        "slots": {"city": ["Lisbon", "Kyoto", "Porto", "Krakow", "Seville", "Ljubljana"]},
        "facts": [
            {
                "say": "We booked the flights to {city} {when}, it's finally happening.",
                "hint": "the holiday plans",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} book the flights to {city}?",
                    "paraphrase": "When did {who} buy plane tickets for the getaway?",
                    "date": "What travel arrangements did {who} make {on_date}?",
                },
            },
            {
                "say": "The apartment there has {n} bedrooms and a terrace.",
                "n": [2, 5],
                "decoys": [
                    "My aunt's house has {m} bedrooms and one bathroom, chaos.",
                    "The cottage we rented last year had {m} bedrooms.",
                ],
                "hint": "where they're staying",
                "answer": "{n_digit}",
                "ask": {
                    "lexical": "How many bedrooms does the apartment in {city} have?",
                    "paraphrase": "How many rooms to sleep in does the holiday rental offer?",
                    "number": "Which place that {who} mentioned has {n} bedrooms?",
                },
            },
            {
                "say": "My partner is mostly excited about the food market near the cathedral.",
                "hint": "the sightseeing wishes",
                "answer": "the food market near the cathedral",
                "ask": {
                    "lexical": "What is {whose} partner excited about in {city}?",
                    "paraphrase": "What is {whose} other half looking forward to most abroad?",
                },
            },
        ],
        "temporal": {
            "event": "We landed in {city} {when} after a bumpy flight.",
            "after": "We dumped the bags and went straight out for pastries and coffee.",
            "ask": "What did {who} do once the plane touched down?",
            "answer": "went out for pastries and coffee",
        },
        "update": {
            "old": "We're staying for a week.",
            "new": "We extended the trip by four days, we couldn't bear to leave.",
            "ask": "How long is {whose} stay in {city} now?",
            "answer": "a week and four days",
        },
        "distract": [
            "My flight to the conference got cancelled twice.",
            "Tickets for the concert sold out in minutes.",
            "Our old apartment had the tiniest kitchen.",
            "I've never understood the appeal of markets, too crowded.",
            "The cathedral bells woke me at six every morning.",
            "My partner booked a table for Friday, somewhere fancy.",
            "The holiday traffic on the motorway was horrendous.",
        ],
    },
    {
        "key": "kitchen",
        "kw": ["the kitchen", "the renovation", "the builders"],
        "facts": [
            {
                "say": "The builders knocked down the wall between kitchen and dining room {when}.",
                "hint": "the building work at home",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did the builders knock down the kitchen wall?",
                    "paraphrase": "When was the partition between the cooking and eating areas "
                    "removed at {whose} house?",
                    "date": "What happened to the layout of {whose} house {on_date}?",
                },
            },
            {
                "say": "The quote for the new kitchen came in at {n} thousand pounds.",
                "n": [8, 24],
                "decoys": [
                    "The garage gave me a quote of {m} thousand pounds for the car.",
                    "The neighbours' extension cost {m} thousand pounds, apparently.",
                ],
                "hint": "the cost of the work",
                "answer": "{n_digit} thousand pounds",
                "ask": {
                    "lexical": "How much was the quote for the new kitchen?",
                    "paraphrase": "What estimate did {who} get for redoing the cooking area?",
                    "number": "What did {who} get a {n} thousand pound quote for?",
                },
            },
            {
                "say": "We went for dark green cabinets and a wooden worktop in the end.",
                "hint": "the design choices",
                "answer": "dark green cabinets and a wooden worktop",
                "ask": {
                    "lexical": "What cabinets did {who} choose for the kitchen?",
                    "paraphrase": "What colour are {whose} new cupboards?",
                },
            },
        ],
        "temporal": {
            "event": "The plumber finally connected the new sink {when}.",
            "after": "We celebrated by cooking a proper meal for the first time in a month, "
            "just pasta, but still.",
            "ask": "What did {who} do once the sink was hooked up?",
            "answer": "cooked a proper meal (pasta)",
        },
        "update": {
            "old": "The builders say the kitchen will be done by the end of the month.",
            "new": "Now they're saying the kitchen won't be finished until after Christmas.",
            "ask": "When is {whose} kitchen supposed to be finished now?",
            "answer": "after Christmas",
        },
        "distract": [
            "My mum repainted her dining room a horrible orange.",
            "The builders next door start drilling at seven every morning.",
            "I got a quote for fixing the car and nearly fainted.",
            "Green is such a calming colour for a bedroom.",
            "We ate takeaway on the floor again, very glamorous.",
            "The cupboards at work are full of broken chairs.",
            "My house is a mess, there's dust on every surface.",
        ],
    },
    {
        "key": "back",
        "kw": ["your back", "the appointment", "the pain"],
        "facts": [
            {
                "say": "I finally saw the doctor about my back {when}.",
                "hint": "the spine problem",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} see the doctor about {poss} back?",
                    "paraphrase": "When did {who} get a medical appointment for the spine problem?",
                    "date": "Which appointment did {who} have {on_date}?",
                },
            },
            {
                "say": "The doctor told me to do the stretches {n} times a day.",
                "n": [2, 6],
                "decoys": [
                    "The baby next door wakes up {m} times a night.",
                    "I check my email {m} times a day, it's a problem.",
                ],
                "hint": "the exercises",
                "answer": "{n_digit} times a day",
                "ask": {
                    "lexical": "How often did the doctor tell {who} to do the stretches?",
                    "paraphrase": "How many daily repetitions of exercises were prescribed?",
                    "number": "What should {who} repeat {n} times daily?",
                },
            },
            {
                "say": "The MRI showed a slipped disc, nothing that needs surgery though.",
                "hint": "the test results",
                "answer": "a slipped disc",
                "ask": {
                    "lexical": "What did the MRI of {whose} back show?",
                    "paraphrase": "What did the scan reveal about {whose} spine?",
                },
            },
        ],
        "temporal": {
            "event": "I had the MRI at the hospital {when}.",
            "after": "I treated myself to a massive breakfast at the café across the road.",
            "ask": "What did {who} do straight after the hospital imaging appointment?",
            "answer": "had a big breakfast at the café across the road",
        },
        "update": {
            "old": "I'm on the strong painkillers for now.",
            "new": "I've stopped the painkillers, just ibuprofen when it flares up.",
            "ask": "What {is} {who} taking for the back pain now?",
            "answer": "ibuprofen when needed",
        },
        "distract": [
            "My doctor's surgery has a new booking system that nobody understands.",
            "I've got a stiff neck from sleeping on the sofa.",
            "My dad had back surgery years ago and swears by it.",
            "The hospital car park costs a fortune.",
            "Stretching before yoga is so boring.",
            "I found a box of old discs in the attic, pure nostalgia.",
            "The scan of my passport was too blurry for the form.",
        ],
    },
    {
        "key": "allotment",
        "kw": ["the allotment", "the plot", "the veg"],
        "facts": [
            {
                "say": "We got the allotment {when}, after ages on the waiting list.",
                "hint": "the vegetable plot",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} get the allotment?",
                    "paraphrase": "When was {who} given a plot to grow vegetables?",
                    "date": "What did {who} finally get off a waiting list {on_date}?",
                },
            },
            {
                "say": "We've planted {n} tomato plants, which is probably too many.",
                "n": [8, 30],
                "decoys": [
                    "My mum planted {m} rose bushes along the fence.",
                    "I've killed {m} houseplants this year alone.",
                ],
                "hint": "what's growing",
                "answer": "{n_digit}",
                "ask": {
                    "lexical": "How many tomato plants did {who} plant?",
                    "paraphrase": "How many tomatoes {is} {who} growing?",
                    "number": "What did {who} plant {n} of?",
                },
            },
            {
                "say": "Slugs ate every single one of my lettuces overnight.",
                "hint": "the garden pests",
                "answer": "slugs",
                "ask": {
                    "lexical": "What ate {whose} lettuces?",
                    "paraphrase": "Which pests destroyed {whose} salad greens?",
                },
            },
        ],
        "temporal": {
            "event": "The first courgettes were ready to pick {when}.",
            "after": "I gave half of them to the old man on the next plot, he's been so kind.",
            "ask": "What did {who} do after picking the first courgettes?",
            "answer": "gave half to the old man on the next plot",
        },
        "update": {
            "old": "The allotment shed is falling apart.",
            "new": "My dad helped me rebuild the shed, it's solid now.",
            "ask": "What state is the shed at {whose} allotment in now?",
            "answer": "rebuilt, solid",
        },
        "distract": [
            "My neighbour's garden is all plastic grass.",
            "Tomato soup for lunch again, I'm so boring.",
            "The waiting list for the dentist is three months.",
            "Slugs everywhere on the path after the rain.",
            "I'm hopeless with plants, they all die on me.",
            "The old man at the bus stop told me his life story.",
            "Growing your own vegetables sounds like so much work.",
        ],
    },
    {
        "key": "piano",
        "kw": ["the piano", "the lessons", "the recital"],
        "facts": [
            {
                "say": "I had my first piano lesson {when}, my hands were shaking.",
                "hint": "the music lessons",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} have {poss} first piano lesson?",
                    "paraphrase": "When did {who} start learning the keyboard with a teacher?",
                    "date": "What did {who} start {on_date}?",
                },
            },
            {
                "say": "The teacher charges {n} euros a lesson, which is fair.",
                "n": [25, 60],
                "decoys": [
                    "The gym charges {m} euros a month now.",
                    "Parking in town is {m} euros a day, it's a joke.",
                ],
                "hint": "the price of the lessons",
                "answer": "{n_digit} euros",
                "ask": {
                    "lexical": "How much does {whose} piano teacher charge a lesson?",
                    "paraphrase": "What {does} {who} pay per class for music tuition?",
                    "number": "Who charges {whom} {n} euros a time?",
                },
            },
            {
                "say": "I'm learning an easy Moonlight Sonata for the spring recital.",
                "hint": "the recital piece",
                "answer": "an easy Moonlight Sonata",
                "ask": {
                    "lexical": "What {is} {who} learning for the spring recital?",
                    "paraphrase": "Which Beethoven piece {is} {who} practising for the concert?",
                },
            },
        ],
        "temporal": {
            "event": "I played in the recital {when}, in front of about forty people.",
            "after": "Afterwards I hid in the toilets for ten minutes until my teacher found me.",
            "ask": "What did {who} do once the performance was over?",
            "answer": "hid in the toilets until the teacher found them",
        },
        "update": {
            "old": "I practise in the mornings before work.",
            "new": "I've switched to practising at night, the neighbours complained.",
            "ask": "When {does} {who} practise the piano now?",
            "answer": "at night",
        },
        "distract": [
            "Someone always plays the piano at the station, usually badly.",
            "My nephew has a drum lesson on Thursdays.",
            "The concert was cancelled because the singer was ill.",
            "My hands are freezing, the heating is broken again.",
            "Teachers deserve medals, honestly.",
            "The keyboard on my laptop is missing a key.",
            "Music at the gym is always far too loud.",
        ],
    },
    {
        "key": "wedding",
        "kw": ["the wedding", "{third}", "the big day"],
        "facts": [
            {
                "say": "My sister {third} got engaged {when}, on a beach, very dramatic.",
                "hint": "the family news",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {whose} sister {third} get engaged?",
                    "paraphrase": "When did {whose} sibling accept a marriage proposal?",
                    "date": "What family news did {who} get {on_date}?",
                },
            },
            {
                "say": "They've invited {n} guests to the wedding, which is madness.",
                "n": [60, 250],
                "decoys": [
                    "The hotel had {m} guests and one working lift.",
                    "We invited {m} people to the housewarming and half came.",
                ],
                "hint": "the size of the celebration",
                "answer": "{n_digit}",
                "ask": {
                    "lexical": "How many guests are invited to the wedding?",
                    "paraphrase": "How many people are coming to {whose} sister's big day?",
                    "number": "Which celebration expects {n} guests?",
                },
            },
            {
                "say": "I'm going to be the one giving the speech, so no pressure.",
                "hint": "the role at the celebration",
                "answer": "giving the speech",
                "ask": {
                    "lexical": "Who is giving the speech at the wedding?",
                    "paraphrase": "What part will {who} play at the marriage celebration?",
                },
            },
        ],
        "temporal": {
            "event": "We went dress shopping with {third} {when}.",
            "after": "She ended up buying the very first dress she tried on, after six hours.",
            "ask": "What happened after {who} went looking for wedding outfits with {poss} sister?",
            "answer": "she bought the first dress she tried on",
        },
        "update": {
            "old": "The wedding is going to be in a barn in the countryside.",
            "new": "They've changed the venue to a hotel by the sea, the barn flooded.",
            "ask": "Where is {whose} sister's wedding going to be held now?",
            "answer": "a hotel by the sea",
        },
        "distract": [
            "Another engagement announcement on my feed, everyone is getting married.",
            "The beach was packed on Sunday.",
            "My speech at the team meeting went terribly.",
            "Guests at the hotel next door were partying till three.",
            "Dress codes for work events confuse me.",
            "My cousin's wedding last year had a taco truck.",
            "My sister's big day out at the races was a washout.",
        ],
    },
    {
        "key": "car",
        "kw": ["the car", "driving", "the Fiat"],
        "facts": [
            {
                "say": "I passed my driving test {when}, on the third attempt.",
                "hint": "getting on the road",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} pass {poss} driving test?",
                    "paraphrase": "When did {who} get {poss} licence?",
                    "date": "What exam did {who} get through {on_date}?",
                },
            },
            {
                "say": "The second-hand car I bought has {n} thousand miles on the clock.",
                "n": [30, 95],
                "decoys": [
                    "My dad's old van did {m} thousand miles before it died.",
                    "The lorry driver said he does {m} thousand miles a year.",
                ],
                "hint": "the used car",
                "answer": "{n_digit} thousand miles",
                "ask": {
                    "lexical": "How many miles does {whose} car have on the clock?",
                    "paraphrase": "What is the mileage of the used vehicle {who} bought?",
                    "number": "Which vehicle has {n} thousand miles on it?",
                },
            },
            {
                "say": "It's a little red Fiat that my uncle was selling.",
                "hint": "where the car came from",
                "answer": "{whose} uncle",
                "ask": {
                    "lexical": "Who sold {whom} the little red Fiat?",
                    "paraphrase": "What vehicle did {who} purchase from a relative?",
                },
            },
        ],
        "temporal": {
            "event": "I got the car back from the garage {when}.",
            "after": "Straight away I drove to the coast on my own and sang all the way.",
            "ask": "What did {who} do once the vehicle was repaired?",
            "answer": "drove to the coast alone, singing",
        },
        "update": {
            "old": "I park on the street outside the flat.",
            "new": "I've rented a garage round the corner now, after the mirror got smashed.",
            "ask": "Where {does} {who} keep {poss} car now?",
            "answer": "a rented garage round the corner",
        },
        "distract": [
            "The driving on the ring road is terrifying.",
            "My uncle sold his boat, finally.",
            "Red wine gives me a headache these days.",
            "The test results at work came back fine.",
            "Miles of traffic on the way home tonight.",
            "The garage door at my parents' house is stuck again.",
            "Used bookshops are my weakness.",
        ],
    },
    {
        "key": "dinner",
        "kw": ["the dinner party", "the cooking", "the food"],
        "facts": [
            {
                "say": "I hosted my first proper dinner party {when}, eight round a tiny table.",
                "hint": "having people over",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} host {poss} first proper dinner party?",
                    "paraphrase": "When did {who} cook for a group of friends at home?",
                    "date": "Who did {who} have round for a meal {on_date}?",
                },
            },
            {
                "say": "The lamb took {n} hours in the oven.",
                "n": [3, 7],
                "decoys": [
                    "The bread needed {m} hours to rise.",
                    "Cooking for my dad's party took {m} hours in total.",
                ],
                "hint": "the main course",
                "answer": "the lamb",
                "ask": {
                    "lexical": "How long did the lamb take in the oven?",
                    "paraphrase": "How long did the meat roast for?",
                    "number": "What needed {n} hours of cooking?",
                },
            },
            {
                "say": "Dessert was a lemon tart from a recipe of my grandmother's.",
                "hint": "the pudding",
                "answer": "a lemon tart, grandmother's recipe",
                "ask": {
                    "lexical": "What was the dessert at the dinner party?",
                    "paraphrase": "What sweet course did {who} serve, and whose recipe was it?",
                },
            },
        ],
        "temporal": {
            "event": "The dinner party guests finally went home {when}.",
            "after": "I left every dish in the sink and slept on the sofa in my clothes.",
            "ask": "What did {who} do once everyone had left {poss} place?",
            "answer": "left the dishes and slept on the sofa",
        },
        "update": {
            "old": "I'm vegetarian these days.",
            "new": "I've started eating fish again, the doctor said my iron is low.",
            "ask": "What {does} {who} eat now, diet-wise?",
            "answer": "eats fish again",
        },
        "distract": [
            "My grandmother never wrote any recipes down.",
            "The lemon tree on the balcony died.",
            "Eight people in the lift at work, it was awful.",
            "Lamb is so expensive right now.",
            "The party next door went on till four.",
            "I burnt my hand on the oven door.",
            "A group of friends from school want to meet up.",
        ],
    },
    {
        "key": "spanish",
        "kw": ["the Spanish", "the course", "the class"],
        "facts": [
            {
                "say": "I enrolled in an evening course in Spanish {when}.",
                "hint": "the language classes",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} enrol in the Spanish evening course?",
                    "paraphrase": "When did {who} sign up for night classes in a foreign language?",
                    "date": "What did {who} register for {on_date}?",
                },
            },
            {
                "say": "There are only {n} of us in the class, so there's no hiding.",
                "n": [4, 9],
                "decoys": [
                    "My niece's class has {m} students and one exhausted teacher.",
                    "Only {m} students turned up to the lecture.",
                ],
                "hint": "the classmates",
                "answer": "{n_digit}",
                "ask": {
                    "lexical": "How many people are in the Spanish class?",
                    "paraphrase": "How small is {whose} language group?",
                    "number": "Which class has only {n} students?",
                },
            },
            {
                "say": "The teacher is from Valencia and makes us sing in every lesson.",
                "hint": "the teacher",
                "answer": "Valencia",
                "ask": {
                    "lexical": "Where is the Spanish teacher from?",
                    "paraphrase": "Where does {whose} language tutor come from?",
                },
            },
        ],
        "temporal": {
            "event": "I sat the oral exam {when}, my mind went blank at first.",
            "after": "Then I went home and watched three episodes of a Mexican soap to recover.",
            "ask": "What did {who} do after the speaking test?",
            "answer": "watched three episodes of a Mexican soap",
        },
        "update": {
            "old": "Class is on Tuesday evenings.",
            "new": "The class moved to Thursday evenings because the room was double-booked.",
            "ask": "Which evening is {whose} language class on now?",
            "answer": "Thursday",
        },
        "distract": [
            "My niece is doing Spanish at school and hates it.",
            "The evening news is too depressing to watch.",
            "Valencia oranges are on offer at the market.",
            "Nobody sang at the karaoke night, tragic.",
            "Exam season makes the library unbearable.",
            "I signed up for a newsletter by accident and now they email daily.",
            "A foreign film at the cinema had no subtitles, chaos.",
        ],
    },
    {
        "key": "flat",
        "kw": ["the new flat", "the move", "the place"],
        "facts": [
            {
                "say": "We moved into the new flat {when}, in the pouring rain.",
                "hint": "the new home",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} move into the new flat?",
                    "paraphrase": "When did {who} relocate to the current home?",
                    "date": "Where did {who} settle in {on_date}?",
                },
            },
            {
                "say": "It's on the {n} floor and the lift is broken half the time.",
                "n": [3, 14],
                "decoys": [
                    "The office moved to the {m} floor.",
                    "My friend lives on the {m} floor with no lift.",
                ],
                "ordinal": True,
                "hint": "the building",
                "answer": "the {n_digit} floor",
                "ask": {
                    "lexical": "Which floor is the new flat on?",
                    "paraphrase": "How high up is {whose} apartment?",
                    "number": "Which home did {who} say is on the {n} floor?",
                },
            },
            {
                "say": "The best part is the view of the river from the bathroom window.",
                "hint": "the view",
                "answer": "the river",
                "ask": {
                    "lexical": "What view does the new flat have from the bathroom window?",
                    "paraphrase": "What can {who} see from the washroom at home?",
                },
            },
        ],
        "temporal": {
            "event": "The removal van arrived {when}, three hours late.",
            "after": "We ended up ordering pizza and eating it sitting on the boxes.",
            "ask": "What did {who} do after the movers turned up?",
            "answer": "ate pizza sitting on the boxes",
        },
        "update": {
            "old": "We're renting the flat for now.",
            "new": "We've made an offer to buy the flat from the landlord, and he accepted.",
            "ask": "Will {who} stay a tenant, or become the owner of the home?",
            "answer": "buying it from the landlord",
        },
        "distract": [
            "The river path is flooded again.",
            "My friend's flat has no bathroom window at all.",
            "The lift at the office was stuck for an hour.",
            "Pizza on a Monday is a sign of defeat.",
            "My boxes from university are still at my parents'.",
            "The landlord raised the rent at my old place.",
            "The view from my desk is a brick wall.",
        ],
    },
    {
        "key": "foodbank",
        "kw": ["the food bank", "volunteering", "the shifts"],
        "facts": [
            {
                "say": "I started volunteering at the food bank {when}.",
                "hint": "the volunteering",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} start volunteering at the food bank?",
                    "paraphrase": "When did {who} begin helping out at the charity that hands "
                    "out groceries?",
                    "date": "What unpaid work did {who} take up {on_date}?",
                },
            },
            {
                "say": "We packed {n} parcels on my first shift.",
                "n": [40, 160],
                "decoys": [
                    "I packed {m} boxes for my sister's move.",
                    "The post office lost {m} parcels last month.",
                ],
                "hint": "the first shift",
                "answer": "{n_digit}",
                "ask": {
                    "lexical": "How many parcels did {who} pack on the first shift?",
                    "paraphrase": "How many boxes of supplies did {who} prepare the first time?",
                    "number": "What did {who} pack {n} of?",
                },
            },
            {
                "say": "The coordinator is a retired nurse, {third}, who runs it like an army.",
                "hint": "the person in charge",
                "answer": "{third}",
                "ask": {
                    "lexical": "Who runs the food bank?",
                    "paraphrase": "Who is the person in charge at {whose} volunteering place?",
                },
            },
        ],
        "temporal": {
            "event": "We had the big Christmas collection at the supermarket {when}.",
            "after": "I went home and slept for eleven hours straight.",
            "ask": "What did {who} do after the festive collection?",
            "answer": "slept eleven hours",
        },
        "update": {
            "old": "I do a shift every Saturday morning.",
            "new": "I've moved to Wednesday evenings, Saturdays clash with everything now.",
            "ask": "When {does} {who} volunteer now?",
            "answer": "Wednesday evenings",
        },
        "distract": [
            "The supermarket was out of bread again.",
            "A parcel for my neighbour was left with me.",
            "My aunt was a nurse for forty years.",
            "Christmas adverts already, in October.",
            "The army surplus store closed down.",
            "I packed for the weekend in ten minutes flat.",
            "Charity shops are the best place for winter coats.",
        ],
    },
    {
        "key": "books",
        "kw": ["the book club", "the novel", "the reading"],
        "facts": [
            {
                "say": "I joined a book club at the library {when}.",
                "hint": "the reading group",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} join the book club at the library?",
                    "paraphrase": "When did {who} become part of a reading group?",
                    "date": "What did {who} join {on_date}?",
                },
            },
            {
                "say": "This month's novel is {n} pages long and I'm only halfway.",
                "n": [400, 900],
                "decoys": [
                    "The contract was {m} pages long.",
                    "My thesis was {m} pages and nobody read it.",
                ],
                "hint": "this month's book",
                "answer": "{n_digit} pages",
                "ask": {
                    "lexical": "How many pages is this month's novel?",
                    "paraphrase": "How thick is the book {who} {is} reading for the group?",
                    "number": "Which book is {n} pages long?",
                },
            },
            {
                "say": "Everyone hated the ending except me, I thought it was perfect.",
                "hint": "the discussion",
                "answer": "{who} loved it, the others hated it",
                "ask": {
                    "lexical": "What did {who} think of the ending when everyone hated it?",
                    "paraphrase": "How did {whose} opinion of the conclusion differ from the "
                    "others?",
                },
            },
        ],
        "temporal": {
            "event": "I finished the novel on the train {when}.",
            "after": "I immediately started it again from the beginning, which I never do.",
            "ask": "What did {who} do after reaching the last page of the book?",
            "answer": "started it again",
        },
        "update": {
            "old": "The book club meets in the library.",
            "new": "The book club moved to the pub because the library closes early now.",
            "ask": "Where does the book club meet now?",
            "answer": "the pub",
        },
        "distract": [
            "The library fines are outrageous.",
            "My train was cancelled so I read for an hour on the platform.",
            "Club nights are wasted on me these days.",
            "The ending of that TV series made me so angry.",
            "Half the pages of my cookbook are stuck together.",
            "A group of us from work do a pub quiz on Thursdays.",
            "My reading glasses are somewhere in this flat.",
        ],
    },
    {
        "key": "climbing",
        "kw": ["the climbing", "the wall", "the crag"],
        "facts": [
            {
                "say": "I did my first outdoor climb {when}, at a crag near the coast.",
                "hint": "the climbing",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} do {poss} first outdoor climb?",
                    "paraphrase": "When did {who} first go rock climbing outside?",
                    "date": "What did {who} try for the first time {on_date}?",
                },
            },
            {
                "say": "I managed to get to the top {n} times in one afternoon.",
                "n": [3, 9],
                "decoys": [
                    "The kids went down the slide {m} times in an afternoon.",
                    "I went up and down the stairs {m} times today.",
                ],
                "hint": "how the session went",
                "answer": "{n_digit} times",
                "ask": {
                    "lexical": "How many times did {who} get to the top in one afternoon?",
                    "paraphrase": "How often did {who} reach the summit of the route?",
                    "number": "Who made it up {n} times in an afternoon?",
                },
            },
            {
                "say": "My climbing partner is someone from work called {third}.",
                "hint": "the climbing partner",
                "answer": "{third}",
                "ask": {
                    "lexical": "Who is {whose} climbing partner?",
                    "paraphrase": "Which colleague holds the rope for {whom}?",
                },
            },
        ],
        "temporal": {
            "event": "I took a fall on the overhang {when}, nothing broken.",
            "after": "I bought a proper helmet the very next day.",
            "ask": "What did {who} do after falling on the climb?",
            "answer": "bought a helmet",
        },
        "update": {
            "old": "I climb at the indoor wall on Mondays.",
            "new": "I've switched to Fridays, the Monday crowd is too much.",
            "ask": "Which day {does} {who} go climbing now?",
            "answer": "Fridays",
        },
        "distract": [
            "My partner at work keeps stealing my stapler.",
            "The top shelf of the kitchen is impossible to reach.",
            "Prices are climbing again everywhere.",
            "A helmet saved my cousin's life on his bike.",
            "The rope swing in the park finally snapped.",
            "Someone from work ran up the stairs to the tenth floor for charity.",
            "The outdoor pool opens next month.",
        ],
    },
    {
        "key": "money",
        "kw": ["the money", "the savings", "the loan"],
        "facts": [
            {
                "say": "I finally paid off my student loan {when}.",
                "hint": "the debt",
                "answer": "{date}",
                "ask": {
                    "lexical": "When did {who} pay off the student loan?",
                    "paraphrase": "When did {who} clear {poss} university debt?",
                    "date": "What did {who} finish paying {on_date}?",
                },
            },
            {
                "say": "I'm putting aside {n} hundred a month for a deposit on a flat.",
                "n": [2, 9],
                "decoys": [
                    "The nursery costs {m} hundred a month now.",
                    "My phone bill is {m} hundred a year, somehow.",
                ],
                "hint": "the saving plan",
                "answer": "a deposit on a flat",
                "ask": {
                    "lexical": "How much {does} {who} put aside a month for a deposit?",
                    "paraphrase": "How much {is} {who} saving monthly towards buying a home?",
                    "number": "What {is} {who} saving {n} hundred a month for?",
                },
            },
            {
                "say": "My financial adviser thinks I buy far too many concert tickets.",
                "hint": "the spending habits",
                "answer": "too many concert tickets",
                "ask": {
                    "lexical": "What does {whose} financial adviser think?",
                    "paraphrase": "What spending habit did {whose} money expert criticise?",
                },
            },
        ],
        "temporal": {
            "event": "The last loan payment went out {when}.",
            "after": "I cancelled the direct debit and bought myself a very nice bottle of wine.",
            "ask": "What did {who} do after the final repayment?",
            "answer": "cancelled the direct debit and bought wine",
        },
        "update": {
            "old": "I bank with the big high-street bank.",
            "new": "I've switched to an online bank, the old one charged me for everything.",
            "ask": "Which bank {does} {who} use now?",
            "answer": "an online bank",
        },
        "distract": [
            "The concert was brilliant but the tickets cost a fortune.",
            "My student days feel so long ago.",
            "The bank on the corner is closing.",
            "A deposit for the holiday cottage is due Friday.",
            "My adviser at the job centre was useless.",
            "University open days are chaos.",
            "I found a twenty in an old coat pocket.",
        ],
    },
]

# --- Speaker subjects ---------------------------------------------------------------------
#
# Two friends each say the same kind of thing with a different answer; the question names
# one of them. With an assistant, the person quotes a relative's advice and the assistant
# gives its own; the question asks for one of the two.

FRIEND_SUBJECTS: list[dict[str, Any]] = [
    {
        "say": "I'll bring {opt} to the picnic on Sunday.",
        "opts": ["a potato salad", "homemade lemonade", "a cheese board", "the folding chairs"],
        "ask": "What did {speaker} say {pron} would bring to the picnic?",
    },
    {
        "say": "For the long weekend I'm thinking of {opt}.",
        "opts": ["renting a cabin", "a cheap flight to Rome", "staying home", "camping"],
        "ask": "What was {speaker} thinking of doing over the long weekend?",
    },
    {
        "say": "For my dad's birthday I got him {opt}.",
        "opts": ["a coffee grinder", "rugby tickets", "a jigsaw of his home town", "slippers"],
        "ask": "What did {speaker} give {poss} father for his birthday?",
    },
    {
        "say": "I've been watching {opt} every night this week.",
        "opts": ["a Danish crime drama", "a baking show", "an old sitcom", "an octopus film"],
        "ask": "What has {speaker} been binge-watching lately?",
    },
    {
        "say": "My resolution this year is {opt}.",
        "opts": ["to stop buying coffee out", "to read a book a month", "to learn to swim"],
        "ask": "What New Year's resolution did {speaker} make?",
    },
    {
        "say": "I'm going to see {opt} live next month.",
        "opts": ["an old punk band", "a jazz trio", "a string quartet", "an Irish folk singer"],
        "ask": "Who is {speaker} going to see in concert?",
    },
    {
        "say": "My new neighbour {opt}.",
        "opts": ["plays the trumpet at midnight", "brought me a cake", "has four cats"],
        "ask": "What did {speaker} say about {poss} new neighbour?",
    },
    {
        "say": "When I was little I wanted to be {opt}.",
        "opts": ["an astronaut", "a vet", "a lorry driver", "a ballet dancer", "a detective"],
        "ask": "What did {speaker} dream of becoming as a kid?",
    },
    {
        "say": "I dropped my phone {opt} and the screen is cracked.",
        "opts": ["in the bath", "down the stairs at the station", "in a puddle", "off a wall"],
        "ask": "Where did {speaker} drop {poss} phone?",
    },
    {
        "say": "I take my coffee {opt}, always have.",
        "opts": ["black with no sugar", "with oat milk", "with two sugars", "iced"],
        "ask": "How does {speaker} take {poss} coffee?",
    },
    {
        "say": "My first ever job was {opt}.",
        "opts": ["washing dishes", "delivering newspapers", "selling ice cream", "babysitting"],
        "ask": "What was {speaker}'s first job?",
    },
]

ASSISTANT_SUBJECTS: list[dict[str, Any]] = [
    {
        "person": "My {rel} keeps telling me that for the sleep problem I should {a}.",
        "assistant": "For the sleep problem, I'd suggest you {b}.",
        "opts": ["cut out coffee after noon", "keep the phone out of the bedroom", "read first"],
        "ask_you": "What did you suggest I do about my sleep?",
        "ask_rel": "What does my {rel} think would help me sleep?",
    },
    {
        "person": "My {rel} says that for the fig tree I should {a}.",
        "assistant": "For the fig tree, my advice would be to {b}.",
        "opts": ["move it closer to the window", "water it less often", "repot it"],
        "ask_you": "What did you advise me to do for the fig tree?",
        "ask_rel": "What did my {rel} say would save the fig tree?",
    },
    {
        "person": "My {rel} says that for the presentation nerves I should {a}.",
        "assistant": "For the presentation nerves, I'd recommend you {b}.",
        "opts": ["practise in front of a mirror", "record a run-through", "start with a joke"],
        "ask_you": "What did you recommend for my presentation nerves?",
        "ask_rel": "What did my {rel} tell me to do before the presentation?",
    },
    {
        "person": "My {rel} thinks that if saving money is the goal I should {a}.",
        "assistant": "If saving money is the goal, I'd {b} first.",
        "opts": ["cancel the streaming subscriptions", "cook in bulk on Sundays", "sell the bike"],
        "ask_you": "What did you say I should do first to save money?",
        "ask_rel": "How does my {rel} think I should save money?",
    },
    {
        "person": "My {rel} says that with the guitar I should {a}.",
        "assistant": "With the guitar, I'd suggest you {b}.",
        "opts": ["learn three chords first", "practise ten minutes a day", "use a metronome"],
        "ask_you": "What was your suggestion for learning the guitar?",
        "ask_rel": "What does my {rel} say is the trick with the guitar?",
    },
    {
        "person": "My {rel} says that to get back into fitness I should {a}.",
        "assistant": "To get back into fitness gently, you could {b}.",
        "opts": ["start with swimming", "join a beginner yoga class", "walk to work"],
        "ask_you": "How did you suggest I get back into fitness?",
        "ask_rel": "What does my {rel} want me to do to get fit?",
    },
    {
        "person": "My {rel} says that for the anniversary I should get my partner {a}.",
        "assistant": "For the anniversary, I'd go for {b}.",
        "opts": ["a weekend away", "a framed photo", "concert tickets", "a handwritten letter"],
        "ask_you": "What did you think I should get my partner for our anniversary?",
        "ask_rel": "What did my {rel} suggest as an anniversary present?",
    },
    {
        "person": "My {rel} says that for the flat search I should {a}.",
        "assistant": "For the flat search, I'd {b}.",
        "opts": ["look further out", "get a guarantor ready", "ask about the heating bills"],
        "ask_you": "What was your advice on my flat search?",
        "ask_rel": "What flat-hunting tip did my {rel} give me?",
    },
    {
        "person": "My {rel} says that to beat the procrastination I should {a}.",
        "assistant": "To beat the procrastination, try to {b}.",
        "opts": ["work in short blocks", "turn off notifications", "start with the worst task"],
        "ask_you": "What did you tell me to try against procrastination?",
        "ask_rel": "What does my {rel} say is the way to stop putting things off?",
    },
    {
        "person": "My {rel} says that for the cold I should {a}.",
        "assistant": "For the cold, I'd {b}.",
        "opts": ["drink hot water with honey", "take a day off", "gargle with salt water"],
        "ask_you": "What did you recommend for my cold?",
        "ask_rel": "What did my {rel} tell me to do about my cold?",
    },
]

# --- Small talk ---------------------------------------------------------------------------

OPENERS = [
    "Hey!",
    "Hi!",
    "Morning!",
    "Oh, hello.",
    "Ha, yes.",
    "Right, so.",
    "Okay, news.",
    "Oh, that reminds me.",
    "Sorry, it's been a hectic week.",
    "Honestly, what a day.",
    "Thanks for asking!",
    "Good to hear from you.",
    "Oh wow, where do I start.",
    "Long story, but here goes.",
    "Ugh, Mondays.",
    "So, funny thing.",
    "You'll laugh at this.",
    "Quick update.",
    "Hmm, let me think.",
    "Oh, before I forget.",
    "Ha, you know me.",
    "Phew.",
]
NAMING_OPENERS = ["Ha, {name}, guess what.", "Oh {name}, you'll laugh.", "Right, {name}, listen."]
AFTER_OPENERS = ["Anyway.", "And then, get this.", "Oh, and the best bit.", "Ha, thanks.", "So."]
TAILS = [
    "Anyway, how are you?",
    "How's your week going?",
    "What have you been up to?",
    "Still can't quite believe it.",
    "We'll see how it goes.",
    "Anyway, enough about me.",
    "Wish me luck.",
    "More soon.",
]
SMALL_TALK = [
    "It rained all {weekday} so I didn't leave the house.",
    "I've been craving {food} all week.",
    "Work has been relentless, three deadlines at once.",
    "My {rel} called for an hour about nothing in particular.",
    "We watched a film last night that was far too long.",
    "The heating in my building is making strange noises.",
    "I finally cleaned out the fridge, it was grim.",
    "I'm trying to drink more water, with mixed results.",
    "The neighbours had a party until late again.",
    "I fell asleep on the sofa at nine, very rock and roll.",
    "There's a new café on the corner that does amazing {food}.",
    "My phone battery dies by lunchtime these days.",
    "I've been listening to a podcast about ancient Rome on the bus.",
    "It's been so {weather} that I can't decide what to wear.",
    "I spent the whole evening sorting old photos.",
    "My inbox is a disaster zone.",
    "We're thinking of getting a new sofa, the old one eats coins.",
    "I keep meaning to call my {rel} back.",
    "The bus was so full this morning I had to wait for the next one.",
    "I tried a new recipe for {food} and it was a disaster.",
    "Someone left a huge box of doughnuts in the office kitchen.",
    "I've started doing the crossword on my lunch break.",
    "The weekend went by in a flash.",
    "My washing machine flooded the bathroom floor.",
    "It's my turn to host the quiz night next week.",
    "I bought a houseplant, let's see how long it survives.",
    "The roadworks are everywhere, it took an hour to get home.",
    "My {rel} sent me a meme I didn't understand at all.",
    "I've been sleeping terribly, too much screen time probably.",
    "We had {food} on {weekday} and I'm still thinking about it.",
    "The weather can't make up its mind, {weather} one minute and sunny the next.",
    "I reorganised my wardrobe and found three identical jumpers.",
    "My laptop decided to update itself in the middle of a call.",
    "I walked to work for once and felt very smug.",
    "There was a fox in the street at midnight, just staring at me.",
    "I'm rewatching an old series because I can't face anything new.",
    "I lost an hour looking for my keys, they were in my hand.",
    "My {rel} is visiting next month, so the spare room needs clearing.",
    "The cinema near us shut down, which is sad.",
    "I finally fixed the wobbly table with a folded beer mat.",
    "Lunch today was crackers and a sad apple.",
    "I signed up for a yoga app and used it once.",
    "The post office queue was out the door on {weekday}.",
    "We've been playing a ridiculous board game every evening.",
    "It's {weather} here again, typical.",
    "I've got a dentist appointment I'm dreading.",
    "I made enough {food} to feed an army.",
    "The trains on {weekday} were a disaster, signal failure again.",
]
FRIEND_REPLIES = [
    "No way, {kw}? {body}",
    "Oh, that's big news about {kw}! {body}",
    "Ha, classic. {body}",
    "Tell me more about {kw} when we meet. {body}",
    "Love that. {body}",
    "Oof. {body}",
    "That's so you. {body}",
    "Wait, {kw} already? {body}",
]
ASSISTANT_REPLIES = [
    "That's a real milestone for {kw}. {body}",
    "Thanks for telling me about {kw}. {body}",
    "It sounds like {kw} is taking up a lot of energy. {body}",
    "Nice! {body}",
    "Good to know. {body}",
    "How are you feeling about {kw} now? {body}",
]
ASSISTANT_TALK = [
    "Let me know if you'd like to talk any of it through.",
    "It sounds like you've had a full week.",
    "Rest counts as progress too.",
    "Small routines can make a big difference.",
    "I'm glad you're taking some time for yourself.",
    "That's worth keeping an eye on.",
    "Would it help to make a short plan for the week?",
    "Sometimes a slower week is exactly what's needed.",
    "I hope the rest of the week is kinder to you.",
    "That sounds frustrating, but fixable.",
    "It might help to write down what's worrying you.",
    "A bit of fresh air tends to help on days like that.",
    "It's fine to let some things slide when you're this busy.",
]
ASSISTANT_OPENERS = ["Good question.", "Happy to help.", "Sure.", "Understood.", "Of course."]

FOODS = ["ramen", "tacos", "banana bread", "dumplings", "pho", "falafel", "lasagne", "curry"]
WEATHER = ["warm", "cold", "grey", "windy", "humid", "damp"]
RELATIVES = ["sister", "brother", "mum", "dad", "aunt", "flatmate", "cousin"]
FEMALE = ["Maya", "Priya", "Hannah", "Sofia", "Amara", "Leonie", "Chloe", "Ines", "Nadia", "Ruth"]
MALE = ["Jonas", "Tom", "Ravi", "Marco", "Samuel", "Felix", "Omar", "Daniel", "Luca", "Kwame"]
THIRD = ["Agnes", "Bruno", "Carla", "Greta", "Hugo", "Ivy", "Jules", "Lena", "Milo", "Nora"]

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ONES = word_list(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
)
TENS = word_list("_ _ twenty thirty forty fifty sixty seventy eighty ninety")
ORDINALS = word_list(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
    "twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
)

# --- Text helpers ---------------------------------------------------------------------


def number_words(n: int) -> str:
    """``n`` (0-999) in words: 3 -> "three", 45 -> "forty-five", 120 -> "one hundred and twenty"."""
    if n < 20:
        return ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return TENS[tens] + (f"-{ONES[ones]}" if ones else "")
    hundreds, rest = divmod(n, 100)
    return f"{ONES[hundreds]} hundred" + (f" and {number_words(rest)}" if rest else "")


def ordinal_digits(n: int) -> str:
    """3 -> "3rd", 11 -> "11th", 22 -> "22nd"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def number_forms(n: int, *, ordinal: bool = False) -> tuple[str, str]:
    """``n`` in words and in digits: ("three", "3"), or ("third", "3rd")."""
    if ordinal:
        return ORDINALS[n], ordinal_digits(n)
    return number_words(n), str(n)


def long_date(day: dt.date) -> str:
    """The form session headers use: "14 March 2024"."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def date_phrase(day: dt.date, rng: random.Random) -> str:
    """``day`` as a question names it, in one of several absolute forms."""
    month = MONTHS[day.month - 1]
    part = "early " if day.day <= 10 else "mid-" if day.day <= 20 else "late "
    forms = [
        f"on {day.day} {month} {day.year}",
        f"on {month} {day.day}, {day.year}",
        f"on the {ordinal_digits(day.day)} of {month} {day.year}",
        f"on {WEEKDAYS[day.weekday()]}, {day.day} {month}",
        f"in {part}{month} {day.year}",
    ]
    return rng.choice(forms)


def relative_day(session: dt.date, rng: random.Random) -> tuple[str, dt.date]:
    """A day shortly before ``session`` named relative to it ("last Tuesday"), and the day."""
    kind = rng.randrange(6)
    if kind == 0:
        return "yesterday", session - dt.timedelta(days=1)
    if kind == 1:
        return "the day before yesterday", session - dt.timedelta(days=2)
    if kind == 2:
        back = rng.randint(3, 5)
        return f"{number_words(back)} days ago", session - dt.timedelta(days=back)
    if kind == 3:
        return "this morning", session
    back = rng.randint(3, 6)
    day = session - dt.timedelta(days=back)
    prefix = "last" if kind == 4 else "on"
    return f"{prefix} {WEEKDAYS[day.weekday()]}", day


def fill(template: str, slots: dict[str, str]) -> str:
    """``template`` with its ``{slots}`` filled (a missing slot is a bug: KeyError)."""
    return template.format_map(slots)


# --- The model ------------------------------------------------------------------------


@dataclass
class Line:
    """One message before it gets an id: who says it, its text, the fact it carries."""

    speaker: str
    """``A`` (the person, always ``user``) or ``B`` (the friend or the assistant)."""
    text: str
    """The text without the session header or the speaker's name."""
    fact: str | None = None
    """The sentence that answers a question, verbatim in ``text``."""
    id: str = ""
    """Set once the conversation is laid out."""


@dataclass
class Block:
    """Lines that stay together in one session, in order."""

    lines: list[Line]
    session: int


@dataclass
class Candidate:
    """A question before it is chosen: its text, type, evidence lines and answer."""

    text: str
    type: str
    evidence: list[Line]
    answer: str
    words: list[str] | None = None
    """The answer's words as the evidence says them (ISO dates for a day only the turn's
    date tells); None: the answer's words found in the evidence."""


@dataclass
class Person:
    """A speaker: a name and the pronouns a question uses for them."""

    name: str
    pron: str
    poss: str


@dataclass
class Conversation:
    """One conversation while it is being built."""

    index: int
    kind: str
    people: dict[str, Person]
    dates: list[dt.date]
    blocks: list[Block] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)


# --- Building one conversation ----------------------------------------------------------


class Builder:
    """Builds conversation ``index`` from its own seeded generator."""

    def __init__(self, seed: int, index: int) -> None:
        self.rng = random.Random(seed * 10_007 + index)
        rng = self.rng
        kind = "friends" if index % 2 == 0 else "assistant"
        first = self._person(rng.choice([FEMALE, MALE]), set())
        if kind == "friends":
            second = self._person(rng.choice([FEMALE, MALE]), {first.name})
        else:
            second = Person("the assistant", "it", "its")
        start = dt.date(2023, 1, 2) + dt.timedelta(days=rng.randrange(540))
        dates = [start]
        for _ in range(rng.randint(16, 22) - 1):
            dates.append(dates[-1] + dt.timedelta(days=rng.randint(2, 12)))
        self.conv = Conversation(index, kind, {"A": first, "B": second}, dates)
        self.thirds = [t for t in THIRD if t not in (first.name, second.name)]

    def _person(self, names: list[str], taken: set[str]) -> Person:
        name = self.rng.choice([n for n in names if n not in taken])
        if names is FEMALE:
            return Person(name, "she", "her")
        return Person(name, "he", "his")

    # -- slots and small talk ----------------------------------------------------------

    def ask_slots(self, owner: str) -> dict[str, str]:
        """How questions refer to ``owner``: the person asks about themselves as "I"."""
        conv = self.conv
        person = conv.people[owner]
        if conv.kind == "assistant":
            return {
                "who": "I",
                "whom": "me",
                "whose": "my",
                "poss": "my",
                "does": "do",
                "is": "am",
                "other": "you",
            }
        other = conv.people["B" if owner == "A" else "A"]
        return {
            "who": person.name,
            "whom": person.name,
            "whose": f"{person.name}'s",
            "poss": person.poss,
            "does": "does",
            "is": "is",
            "other": other.name,
        }

    def small(self) -> str:
        """One sentence of small talk, its slots filled."""
        rng = self.rng
        slots = {
            "weekday": rng.choice(WEEKDAYS),
            "food": rng.choice(FOODS),
            "weather": rng.choice(WEATHER),
            "rel": rng.choice(RELATIVES),
        }
        return fill(rng.choice(SMALL_TALK), slots)

    def say(self, speaker: str, sentence: str, *, after: bool = False, opener: str = "") -> Line:
        """An evidence line: filler first, then ``sentence``, sometimes a tail."""
        rng = self.rng
        parts = [opener or rng.choice(AFTER_OPENERS if after else OPENERS)]
        if rng.random() < 0.35:
            parts.append(self.small())
        parts.append(sentence)
        if rng.random() < 0.4:
            parts.append(rng.choice(TAILS))
        return Line(speaker, " ".join(parts), fact=sentence)

    def reply(self, speaker: str, kw: str) -> Line:
        """A reply naming the topic (``kw``) without adding anything to it."""
        rng = self.rng
        if self.conv.kind == "assistant":
            text = fill(
                rng.choice(ASSISTANT_REPLIES), {"kw": kw, "body": rng.choice(ASSISTANT_TALK)}
            )
        else:
            text = fill(rng.choice(FRIEND_REPLIES), {"kw": kw, "body": self.small()})
        return Line(speaker, text)

    def chat(self, speaker: str) -> Line:
        """A turn of pure small talk."""
        rng = self.rng
        if self.conv.kind == "assistant" and speaker == "B":
            return Line(speaker, " ".join(rng.sample(ASSISTANT_TALK, rng.randint(1, 2))))
        parts = [rng.choice(OPENERS), self.small()]
        if rng.random() < 0.6:
            parts.append(self.small())
        if rng.random() < 0.3:
            parts.append(rng.choice(TAILS))
        return Line(speaker, " ".join(parts))

    def other(self, speaker: str) -> str:
        """The other party of the conversation."""
        return "B" if speaker == "A" else "A"

    def add(self, lines: list[Line], session: int) -> None:
        """Put ``lines`` into ``session`` as one block (their order is kept)."""
        self.conv.blocks.append(Block(lines, session))

    def fact_session(self) -> int:
        """A session for a fact: any but the last, so every question has one after it."""
        return self.rng.randrange(len(self.conv.dates) - 1)

    # -- topics ------------------------------------------------------------------------

    def topic(self, spec: dict[str, Any], owner: str) -> None:
        """Lay out one topic's facts, temporal pair, update and distractors for ``owner``."""
        rng = self.rng
        slots = {k: rng.choice(v) for k, v in spec.get("slots", {}).items()}
        slots["third"] = rng.choice(self.thirds)
        kws = [fill(k, slots) for k in spec["kw"]]
        for fact in spec["facts"]:
            self.fact(fact, owner, slots, kws)
        self.temporal(spec["temporal"], owner, slots, kws)
        self.update(spec["update"], owner, slots, kws)
        for sentence in spec["distract"]:
            self.distractor(fill(sentence, slots))

    def fact(self, fact: dict[str, Any], owner: str, slots: dict[str, str], kws: list[str]) -> None:
        """One fact's turn and reply, its questions, and its number's decoys if it has one."""
        rng = self.rng
        session = self.fact_session()
        said = dict(slots)
        asked = dict(slots) | self.ask_slots(owner)
        when: dt.date | None = None
        if "{when}" in fact["say"]:
            said["when"], when = relative_day(self.conv.dates[session], rng)
        if "n" in fact:
            n = self.number_slots(fact, said, asked)
            for decoy in fact["decoys"]:
                self.distractor(fill(decoy, slots | {"m": self.decoy_number(fact, n)}))
        line = self.say(owner, fill(fact["say"], said))
        self.add([line, self.reply(self.other(owner), rng.choice(kws))], session)
        asked["date"] = long_date(when or self.conv.dates[session])
        answer = fill(fact["answer"], asked)
        for kind, template in fact["ask"].items():
            words = None
            if when is not None:
                # A dated fact's questions may name its day (the "date" one does).
                asked["on_date"] = date_phrase(when, rng)
                if kind == "lexical" and template.startswith("When"):
                    # Said as "last Tuesday": the answer is that phrase and the day it
                    # was said on, which only the turn's date tells.
                    kind = "when"
                    words = [*said["when"].split(), self.conv.dates[session].isoformat()]
            self.conv.candidates.append(
                Candidate(fill(template, asked), kind, [line], answer, words)
            )
        if when is None and "{who" in fact["ask"].get("lexical", ""):
            # The same question about the other party, who never said it.
            text = fill(fact["ask"]["lexical"], asked | self.wrong_slots(owner))
            self.conv.candidates.append(Candidate(text, "wrong_speaker", [line], answer))
        if when is None:
            # Something said on the session's day: the question names that day.
            on_date = date_phrase(self.conv.dates[session], rng)
            template = rng.choice(
                [
                    "What did {who} say about {hint} {on_date}?",
                    "What did {who} tell {other} about {hint} {on_date}?",
                ]
            )
            text = fill(template, asked | {"hint": fact["hint"], "on_date": on_date})
            self.conv.candidates.append(Candidate(text, "date", [line], line.fact or ""))

    def number_slots(
        self, fact: dict[str, Any], said: dict[str, str], asked: dict[str, str]
    ) -> int:
        """The number as words in one of turn and question, as digits in the other."""
        rng = self.rng
        n = rng.randint(*fact["n"])
        words, digits = number_forms(n, ordinal=fact.get("ordinal", False))
        said["n"], asked["n"] = (words, digits) if rng.random() < 0.6 else (digits, words)
        asked["n_digit"] = digits
        return n

    def decoy_number(self, fact: dict[str, Any], n: int) -> str:
        """Another number of the same kind, for a decoy sharing the question's other words."""
        low, high = fact["n"]
        m = self.rng.choice([k for k in range(low, high + 1) if k != n])
        return self.rng.choice(number_forms(m, ordinal=fact.get("ordinal", False)))

    def temporal(
        self, spec: dict[str, str], owner: str, slots: dict[str, str], kws: list[str]
    ) -> None:
        """An event and, two turns later, what the owner did next: one question for both."""
        rng = self.rng
        session = self.fact_session()
        said = dict(slots)
        said["when"], _ = relative_day(self.conv.dates[session], rng)
        event = self.say(owner, fill(spec["event"], said))
        after = self.say(owner, fill(spec["after"], said), after=True)
        other = self.other(owner)
        self.add([event, self.reply(other, rng.choice(kws)), after, self.chat(other)], session)
        asked = dict(slots) | self.ask_slots(owner)
        text = fill(spec["ask"], asked)
        self.conv.candidates.append(Candidate(text, "temporal", [event, after], spec["answer"]))

    def update(
        self, spec: dict[str, str], owner: str, slots: dict[str, str], kws: list[str]
    ) -> None:
        """A fact and, in a later session, its change: one question for both."""
        rng = self.rng
        last = len(self.conv.dates) - 2
        first = rng.randrange(last)
        later = rng.randint(first + 1, last)
        old = self.say(owner, fill(spec["old"], slots))
        new = self.say(owner, fill(spec["new"], slots))
        other = self.other(owner)
        self.add([old, self.reply(other, rng.choice(kws))], first)
        self.add([new, self.reply(other, rng.choice(kws))], later)
        asked = dict(slots) | self.ask_slots(owner)
        text = fill(spec["ask"], asked)
        self.conv.candidates.append(Candidate(text, "update", [old, new], spec["answer"]))

    def wrong_slots(self, owner: str) -> dict[str, str]:
        """How a question names the party who did not say it: the other friend, or the
        assistant ("you") for what the person said."""
        if self.conv.kind == "friends":
            return self.ask_slots(self.other(owner))
        return {
            "who": "you",
            "whom": "you",
            "whose": "your",
            "poss": "your",
            "does": "do",
            "is": "are",
            "other": "me",
        }

    def after_match(self, spec: dict[str, Any], owner: str) -> None:
        """A turn whose sentence matching the question is not the one holding the answer:
        its questions (what, when, and what naming the wrong speaker)."""
        rng = self.rng
        session = self.fact_session()
        slots = {key: rng.choice(values) for key, values in ANSWER_SLOTS.items()}
        slots["third"] = rng.choice(self.thirds)
        for key in ("n", "m", "year"):
            if key in spec:
                slots[key] = str(rng.randint(*spec[key]))
        if "m" in slots and slots["m"] == slots.get("n"):
            slots["m"] = str(int(slots["m"]) + 1)
        answer = fill(spec["answer"], slots)
        lead = spec["lead"]
        line = self.say(owner, f"{answer} {lead}" if spec.get("first") else f"{lead} {answer}")
        line.fact = answer
        other = self.other(owner)
        self.add([line, self.reply(other, lead.split()[-1].rstrip(".").lower())], session)
        asked = self.ask_slots(owner)
        words = [slots[key] for key in spec["words"]]
        for kind, slots_asked in (("after_match", asked), ("wrong_speaker", None)):
            names = slots_asked or asked | self.wrong_slots(owner)
            text = fill(spec["ask"], names)
            self.conv.candidates.append(Candidate(text, kind, [line], answer, words))
        day = self.conv.dates[session]
        text = fill(spec["when"], asked)
        self.conv.candidates.append(
            Candidate(text, "when", [line], long_date(day), [day.isoformat()])
        )

    def multi_hop(self, spec: dict[str, Any], owner: str) -> None:
        """One item per turn over several sessions; the question asks for all of them."""
        rng = self.rng
        items = rng.sample(spec["items"], rng.randint(3, 4))
        sessions = sorted(rng.sample(range(len(self.conv.dates) - 1), len(items)))
        lines = []
        for item, session in zip(items, sessions, strict=True):
            slots = {"item": item, "venue": rng.choice(spec.get("venue", ["-"]))}
            line = self.say(owner, fill(spec["say"], slots))
            lines.append(line)
            self.add([line, self.chat(self.other(owner))], session)
        text = fill(spec["ask"], self.ask_slots(owner))
        self.conv.candidates.append(Candidate(text, "multi_hop", lines, ", ".join(items), items))

    def distractor(self, sentence: str) -> None:
        """A turn using a topic's words in another context, anywhere in the conversation."""
        rng = self.rng
        speaker = "A" if self.conv.kind == "assistant" else rng.choice("AB")
        line = Line(speaker, " ".join([rng.choice(OPENERS), sentence, self.small()]))
        self.add([line, self.chat(self.other(speaker))], rng.randrange(len(self.conv.dates)))

    # -- speakers ----------------------------------------------------------------------

    def friends_subject(self, spec: dict[str, Any]) -> None:
        """Both friends answer the same thing differently; the question names one."""
        rng = self.rng
        opts = rng.sample(spec["opts"], 2)
        asked = rng.choice("AB")
        person = self.conv.people[asked]
        lines = {}
        for speaker, opt in zip("AB", opts, strict=True):
            # The other one names the asked friend, so the name alone does not tell them apart.
            naming = fill(rng.choice(NAMING_OPENERS), {"name": person.name})
            opener = "" if speaker == asked else naming
            lines[speaker] = self.say(speaker, fill(spec["say"], {"opt": opt}), opener=opener)
            self.add([lines[speaker], self.chat(self.other(speaker))], self.fact_session())
        text = fill(spec["ask"], {"speaker": person.name, "pron": person.pron, "poss": person.poss})
        answer = opts[0 if asked == "A" else 1]
        self.conv.candidates.append(Candidate(text, "speaker", [lines[asked]], answer))

    def assistant_subject(self, spec: dict[str, Any]) -> None:
        """The person quotes a relative, the assistant advises; the question picks one."""
        rng = self.rng
        a, b = rng.sample(spec["opts"], 2)
        rel = rng.choice(RELATIVES)
        person = self.say("A", fill(spec["person"], {"rel": rel, "a": a}))
        advice = fill(spec["assistant"], {"b": b})
        helper = Line("B", f"{rng.choice(ASSISTANT_OPENERS)} {advice}", fact=advice)
        self.add([person, helper], self.fact_session())
        if rng.random() < 0.5:
            candidate = Candidate(spec["ask_you"], "speaker", [helper], b)
        else:
            candidate = Candidate(fill(spec["ask_rel"], {"rel": rel}), "speaker", [person], a)
        self.conv.candidates.append(candidate)

    # -- the whole conversation --------------------------------------------------------

    def build(self, words_target: int, questions: int) -> dict[str, Any]:
        """The conversation as the corpus holds it: 9 topics, 8 stray distractors, 7
        speaker subjects, small talk up to ``words_target`` words, ``questions`` questions."""
        rng = self.rng
        conv = self.conv
        topics = rng.sample(TOPICS, 9)
        for spec in topics:
            owner = "A" if conv.kind == "assistant" else rng.choice("AB")
            self.topic(spec, owner)
        for spec in rng.sample([t for t in TOPICS if t not in topics], 4):
            for sentence in rng.sample(spec["distract"], 2):
                self.distractor(fill(sentence, {"pet": "Rex", "city": "Rome", "third": "Sam"}))
        for spec in rng.sample(AFTER_MATCH, 6):
            self.after_match(spec, "A" if conv.kind == "assistant" else rng.choice("AB"))
        for spec in rng.sample(MULTI_HOP, 3):
            self.multi_hop(spec, "A" if conv.kind == "assistant" else rng.choice("AB"))
        if conv.kind == "friends":
            for spec in rng.sample(FRIEND_SUBJECTS, 7):
                self.friends_subject(spec)
        else:
            for spec in rng.sample(ASSISTANT_SUBJECTS, 7):
                self.assistant_subject(spec)
        messages, ends = self.layout(words_target)
        return {
            "id": f"c{conv.index:02d}",
            "kind": conv.kind,
            "people": [conv.people["A"].name, conv.people["B"].name],
            "sessions": [
                {"date": day.isoformat(), "end": end}
                for day, end in zip(conv.dates, ends, strict=True)
            ],
            "messages": messages,
            "questions": self.questions(questions, ends),
        }

    def layout(self, words_target: int) -> tuple[list[dict[str, Any]], list[int]]:
        """Sessions in order: an opening turn, the session's blocks shuffled among small
        talk until the session holds its share of ``words_target``. Returns the messages
        and the index one past each session's last message."""
        rng = self.rng
        conv = self.conv
        share = words_target // len(conv.dates)
        messages: list[dict[str, Any]] = []
        ends: list[int] = []
        for session, day in enumerate(conv.dates):
            blocks = [b.lines for b in conv.blocks if b.session == session]
            words = sum(len(line.text.split()) for lines in blocks for line in lines)
            while words < share:
                lines = [self.chat("A"), self.chat("B")]
                words += sum(len(line.text.split()) for line in lines)
                blocks.append(lines)
            rng.shuffle(blocks)
            opening = self.chat("A")
            other = conv.people["B"].name
            greeting = f"Hey {other}!" if conv.kind == "friends" else "Hi again!"
            opening.text = f"[Session {session + 1}, {long_date(day)}] {greeting} {opening.text}"
            ordered = [opening, self.chat("B"), *(line for block in blocks for line in block)]
            for line in ordered:
                line.id = f"c{conv.index:02d}m{len(messages):04d}"
                messages.append(self.message(line, session))
            ends.append(len(messages))
        return messages, ends

    def message(self, line: Line, session: int) -> dict[str, Any]:
        """``line`` as a corpus message: id, role, session, content, and its fact if any."""
        conv = self.conv
        if conv.kind == "assistant":
            role = "user" if line.speaker == "A" else "assistant"
            content = line.text
        else:
            # Both friends are people: the name says who is talking.
            role = "user"
            content = line.text
            name = conv.people[line.speaker].name
            if content.startswith("[Session"):
                header, rest = content.split("] ", 1)
                content = f"{header}] {name}: {rest}"
            else:
                content = f"{name}: {content}"
        out: dict[str, Any] = {"id": line.id, "role": role, "session": session}
        out["content"] = content
        if line.fact is not None:
            out["fact"] = line.fact
        return out

    def questions(self, wanted: int, ends: list[int]) -> list[dict[str, Any]]:
        """``wanted`` questions, drawn round-robin over the types so that each is well
        represented; each asked at the end of a session after its evidence."""
        rng = self.rng
        by_type: dict[str, list[Candidate]] = {t: [] for t in QUESTION_TYPES}
        for candidate in self.conv.candidates:
            by_type[candidate.type].append(candidate)
        for pool in by_type.values():
            rng.shuffle(pool)
        chosen: list[Candidate] = []
        while len(chosen) < wanted and any(by_type.values()):
            for kind in QUESTION_TYPES:
                if by_type[kind] and len(chosen) < wanted:
                    chosen.append(by_type[kind].pop())
        session_of = {}
        for session, end in enumerate(ends):
            start = ends[session - 1] if session else 0
            for index in range(start, end):
                session_of[f"c{self.conv.index:02d}m{index:04d}"] = session
        out = []
        for number, candidate in enumerate(chosen):
            ids = [line.id for line in candidate.evidence]
            latest = max(session_of[i] for i in ids)
            last = len(ends) - 1
            asked = last if rng.random() < 0.5 else rng.randint(latest + 1, last)
            out.append(
                {
                    "id": f"c{self.conv.index:02d}q{number:03d}",
                    "type": candidate.type,
                    "text": candidate.text,
                    "evidence": ids,
                    "answer": candidate.answer,
                    "answer_words": answer_words(candidate),
                    "prefix": ends[asked],
                }
            )
        return out


def _words_of(text: str) -> list[str]:
    return [w.strip(".,!?'\"():;").lower() for w in text.split()]


def answer_words(candidate: Candidate) -> list[str]:
    """The words a pack must hold to answer ``candidate``: the ones it records, else those
    of its answer that its evidence says (stop words and the question's own words left
    out), else those of its evidence's fact sentences that the question does not say."""
    asked = set(_words_of(candidate.text))
    if candidate.words is not None:
        return list(candidate.words)
    said = {w for line in candidate.evidence for w in _words_of(line.text)}
    out = []
    for word in _words_of(candidate.answer):
        if word and word in said and word not in asked and word not in _ANSWER_STOP:
            out.append(word)
    if not out:
        for line in candidate.evidence:
            for word in _words_of(line.fact or ""):
                if word and word not in asked and word not in _ANSWER_STOP:
                    out.append(word)
    return list(dict.fromkeys(out))


def build_corpus(
    seed: int = 0, conversations: int = 24, *, words: int = 12_500, questions: int = 66
) -> dict[str, Any]:
    """The corpus for ``seed``: ``conversations`` chats of about ``words`` words each
    (about 1.5 tokens a word by agrun's default tokenizer) with ``questions`` questions each.

    Conversation ``i`` depends only on ``seed`` and ``i``, so a smaller corpus is a prefix
    of a larger one. Each question's request is ``messages[:prefix]`` plus its text.
    """
    return {
        "seed": seed,
        "conversations": [Builder(seed, i).build(words, questions) for i in range(conversations)],
    }


def dumps(corpus: dict[str, Any]) -> str:
    """Canonical JSON: the same corpus gives the same bytes."""
    return json.dumps(corpus, ensure_ascii=False, sort_keys=True, indent=1)


def stats(corpus: dict[str, Any]) -> dict[str, Any]:
    """Counts for a report: conversations, messages, words, questions by type."""
    convs = corpus["conversations"]
    types = Counter(q["type"] for c in convs for q in c["questions"])
    words = [sum(len(m["content"].split()) for m in c["messages"]) for c in convs]
    return {
        "conversations": len(convs),
        "sessions": sum(len(c["sessions"]) for c in convs),
        "messages": sum(len(c["messages"]) for c in convs),
        "words_min": min(words),
        "words_max": max(words),
        "questions": sum(types.values()),
        "by_type": {t: types[t] for t in QUESTION_TYPES},
        "two_evidence": sum(len(q["evidence"]) == 2 for c in convs for q in c["questions"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--out", help="write the corpus as JSON here")
    args = parser.parse_args()
    corpus = build_corpus(args.seed, args.conversations)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(dumps(corpus))
    json.dump(stats(corpus), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
