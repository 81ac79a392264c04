# ruff: noqa: SIM905
"""Word pools for the synthetic data, each split into a training part and a held-out part.

`split(pool)` is deterministic: every 7th item (by position) is held out, so held-out prompts
use tool names, values and phrasings the model never saw in training.
"""

from __future__ import annotations

import random
from typing import TypeVar

T = TypeVar("T")


def split(pool: list[T], held_out: bool) -> list[T]:
    """The training part (held_out=False) or the held-out part (every 7th item) of a pool."""
    return [x for i, x in enumerate(pool) if (i % 7 == 3) == held_out]


CITIES = """Paris Rome Berlin Madrid Lisbon Vienna Prague Warsaw Dublin Oslo Stockholm Helsinki
Copenhagen Amsterdam Brussels Zurich Geneva Athens Istanbul Cairo Nairobi Lagos Accra Dakar
Tokyo Osaka Kyoto Seoul Busan Beijing Shanghai Hanoi Bangkok Manila Jakarta Singapore Delhi
Mumbai Chennai Karachi Dhaka Tehran Dubai Doha Riyadh Sydney Melbourne Perth Auckland Lima
Bogota Quito Santiago Montevideo Caracas Havana Toronto Montreal Vancouver Chicago Boston
Denver Seattle Portland Austin Dallas Houston Phoenix Miami Atlanta Detroit Nashville Memphis
Reykjavik Tallinn Riga Vilnius Krakow Budapest Bucharest Sofia Belgrade Zagreb Ljubljana
Porto Seville Valencia Marseille Lyon Nice Munich Hamburg Cologne Milan Naples Turin Florence
Edinburgh Glasgow Cardiff Belfast Leeds Manchester Liverpool Bristol Oxford Cambridge Kigali
Lusaka Harare Tunis Algiers Rabat Casablanca Marrakesh Windhoek Gaborone Maputo""".split()

MULTI_CITIES = [
    "New York",
    "Los Angeles",
    "San Francisco",
    "Buenos Aires",
    "Mexico City",
    "Cape Town",
    "Hong Kong",
    "Kuala Lumpur",
    "Rio de Janeiro",
    "Sao Paulo",
    "New Delhi",
    "Abu Dhabi",
    "Tel Aviv",
    "Salt Lake City",
    "Las Vegas",
    "San Diego",
    "St Louis",
    "Ho Chi Minh City",
    "Addis Ababa",
    "Dar es Salaam",
    "Santa Cruz",
    "La Paz",
    "Port Louis",
    "Baton Rouge",
]

NAMES = """Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy
Rupert Sybil Trent Victor Walter Yasmin Zoe Amir Bea Chen Dmitri Elena Farid Gita Hugo Ines
Jonas Keiko Lena Marco Nadia Omar Priya Quinn Rosa Sven Tariq Uma Vera Wen Ximena Yusuf Zara
Anja Bruno Clara Diego Emma Felix Greta Hana Igor Julia Kofi Lucia Mateo Nora Oskar Paula
Raul Sofia Tomas Ursula Viktor Wanda Xavier Yara Zeno Ada Boris Cleo Dario Esme Fatima Gus
Hiro Ingrid Jamal Kira Liam Mila Nils Ola Pia Rami Saskia Theo Ulla Vince Willa""".split()

SURNAMES = """Smith Garcia Mueller Rossi Dubois Silva Kowalski Novak Tanaka Kim Nguyen Patel
Okafor Mensah Johansson Larsen Murphy Costa Fischer Moreau Ivanova Haddad Cohen Sato Park
Lopez Schmidt Bianchi Santos Jensen""".split()

JOBS = """teacher nurse engineer chef pilot plumber designer lawyer doctor farmer baker writer
painter dentist pharmacist architect electrician carpenter librarian accountant translator
photographer journalist gardener firefighter mechanic programmer scientist musician actor
tailor barista cashier surveyor geologist veterinarian""".split()

COLORS = """red blue green yellow purple orange teal magenta crimson navy olive maroon beige
turquoise indigo silver gold coral lavender amber""".split()

DRINKS = [
    "green tea",
    "black coffee",
    "orange juice",
    "sparkling water",
    "hot chocolate",
    "lemonade",
    "herbal tea",
    "iced coffee",
    "mint tea",
    "apple juice",
    "oat milk latte",
    "espresso",
    "chai",
    "cold brew",
    "ginger ale",
    "still water",
    "jasmine tea",
    "cocoa",
]

FOODS = [
    "pasta",
    "sushi",
    "tacos",
    "pizza",
    "curry",
    "salad",
    "ramen",
    "dumplings",
    "pancakes",
    "oatmeal",
    "falafel",
    "soup",
    "noodles",
    "rice",
    "burritos",
    "waffles",
    "omelettes",
    "toast",
    "paella",
    "risotto",
    "kebab",
    "porridge",
    "bagels",
    "muffins",
]

MEALS = ["breakfast", "lunch", "dinner", "dessert", "brunch", "a snack", "supper"]

HOBBIES = [
    "jazz music",
    "hiking",
    "chess",
    "reading novels",
    "cycling",
    "board games",
    "painting",
    "gardening",
    "swimming",
    "yoga",
    "photography",
    "knitting",
    "running",
    "fishing",
    "camping",
    "baking bread",
    "classical music",
    "old movies",
    "sci-fi books",
    "crosswords",
    "pottery",
    "surfing",
    "climbing",
    "birdwatching",
    "jigsaw puzzles",
    "podcasts",
]

DISLIKES = [
    "waking up early",
    "loud music",
    "spam calls",
    "long meetings",
    "cold weather",
    "traffic jams",
    "spicy food",
    "crowded trains",
    "small talk",
    "rainy days",
    "slow internet",
    "paperwork",
    "waiting in line",
    "horror movies",
    "mosquitoes",
]

ATTRS = [
    "favorite color",
    "dog's name",
    "cat's name",
    "birthday",
    "email address",
    "phone number",
    "hometown",
    "favorite book",
    "car",
    "shoe size",
    "blood type",
    "middle name",
    "favorite band",
    "zodiac sign",
    "student id",
    "apartment number",
    "favorite sport",
    "locker code",
    "license plate",
    "bank",
    "dentist",
    "landlord",
    "team name",
    "project code",
    "manager",
    "wifi name",
    "favorite movie",
    "allergy",
]

THINGS = ["cats", "dogs", "kids", "brothers", "sisters", "bikes", "plants", "cars", "guitars"]

TOPICS = [
    "launch",
    "budget",
    "deadline",
    "release",
    "logo",
    "venue",
    "menu",
    "roadmap",
    "website",
    "pricing",
    "hiring plan",
    "offsite",
    "migration",
    "database",
    "design",
    "campaign",
    "newsletter",
    "onboarding",
    "office move",
    "conference",
    "contract",
    "vendor",
    "schedule",
    "test plan",
    "backup policy",
    "rollout",
    "party",
    "trip",
    "wedding",
    "garden",
    "renovation",
    "app name",
    "mascot",
    "workshop",
    "sprint",
]

DECISION_ACTIONS = [
    "delay",
    "cancel",
    "move",
    "approve",
    "simplify",
    "postpone",
    "split",
    "redo",
    "freeze",
    "shorten",
    "expand",
    "review",
    "outsource",
    "announce",
    "pause",
    "restart",
]

OPTIONS = [
    "plan B",
    "the blue version",
    "option two",
    "the cheaper vendor",
    "the small room",
    "Postgres",
    "the red logo",
    "a Friday release",
    "the beach venue",
    "weekly updates",
    "the open source tool",
    "a monthly plan",
    "the shorter name",
    "the second draft",
    "remote work",
    "the early slot",
    "a team lunch",
    "the bigger budget",
    "a soft launch",
]

DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

MONTHS = """January February March April May June July August September October November
December""".split()

ITEMS = [
    "milk",
    "eggs",
    "bread",
    "batteries",
    "stamps",
    "flowers",
    "a charger",
    "coffee beans",
    "light bulbs",
    "dog food",
    "printer paper",
    "a birthday card",
    "apples",
    "rice",
    "toothpaste",
    "tape",
    "a notebook",
    "soap",
    "candles",
    "cheese",
    "tomatoes",
    "glue",
]

LANGUAGES = """French German Spanish Italian Portuguese Dutch Swedish Polish Czech Greek
Turkish Japanese Korean Chinese Hindi Arabic Russian Finnish Danish Norwegian Hungarian
Romanian Vietnamese Thai Indonesian Swahili Hebrew Ukrainian Catalan Irish""".split()

CURRENCIES = """USD EUR GBP JPY CHF CAD AUD NZD SEK NOK DKK PLN CZK HUF INR CNY KRW BRL MXN
ZAR TRY SGD HKD THB""".split()

TICKERS = """AAPL MSFT GOOG AMZN TSLA NVDA META NFLX IBM ORCL INTC AMD SAP ADBE CSCO UBER
SHOP SPOT PYPL SNOW""".split()

WORDS = """apple river stone cloud garden window paper candle forest bridge harbor silver
pencil rocket lantern meadow ocean thunder violet copper marble orbit canyon falcon glacier
ember willow quartz saddle tundra beacon cobalt prism velvet maple lotus nectar pebble
summit comet breeze harvest island jungle kettle ladder magnet needle orchard planet quiver
ribbon shadow timber umbrella valley walnut yarn zephyr anchor basket cactus dolphin engine
feather goblet hammock igloo jacket kayak lemon mango napkin oyster parrot quilt radar
sandal tiger utensil vortex wagon yogurt zipper acorn blossom crystal drum eagle fossil
grape helmet ivory jasmine koala lizard mirror noodle olive pillow raven scarf tulip""".split()

NOUN_PHRASES = [
    "the quarterly report",
    "my vacation photos",
    "the team meeting",
    "a new playlist",
    "the grocery list",
    "the project plan",
    "my old laptop",
    "the kitchen sink",
    "the garden fence",
    "a birthday party",
    "the monthly invoice",
    "the train schedule",
    "the user survey",
    "the blog post",
    "the spare key",
    "a short story",
    "the car insurance",
    "the science fair",
    "the book club",
    "the yoga class",
    "the city council",
    "the new intern",
]

CHAT_VERBS = [
    "painted",
    "cleaned",
    "fixed",
    "visited",
    "finished",
    "started",
    "read",
    "watched",
    "cooked",
    "planned",
    "cancelled",
    "found",
    "lost",
    "bought",
    "sold",
    "moved",
    "wrote",
]

CHAT_TIMES = [
    "yesterday",
    "this morning",
    "last week",
    "today",
    "on Sunday",
    "last night",
    "in May",
    "an hour ago",
    "over the weekend",
    "recently",
    "earlier",
    "at noon",
]

GREETINGS = [
    "hi",
    "hello",
    "hey",
    "Hi!",
    "Hello!",
    "Hey there!",
    "hello there",
    "good morning",
    "Good morning!",
    "good evening",
    "Good afternoon!",
    "hi there",
    "Hey!",
    "hiya",
    "howdy",
    "Hello, how are you?",
    "hi, how are you?",
    "Hey, what's up?",
    "greetings",
    "Hi there!",
    "Good evening!",
    "hey hey",
    "yo",
    "Hello again!",
    "morning!",
    "Hi, good to see you.",
    "hello friend",
    "Hey, how's it going?",
]

GREETING_REPLY = "Hello! How can I help you today?"

HOST_PROMPTS = [
    "You are a helpful assistant.",
    "You are a concise assistant for a travel app.",
    "You are a friendly helper inside a note-taking app.",
    "You are an assistant that answers briefly.",
    "You help people plan their week.",
    "You are the support assistant of a small online shop.",
    "You are a careful assistant. Keep answers short.",
    "You are a helpful assistant.\nAnswer in plain text.",
    "You are a coding helper.",
    "You are an assistant for a home automation hub.",
    "You are a test assistant.",
    "Be helpful and polite.",
    "You are a research assistant.\nCite nothing you cannot see.",
    "You are a cooking assistant.",
]

SYLLABLES = """ka lo mi ne ru ta vo zi be do fa gu hi ja ko lu ma no pe qui ra si to ul
va we xo yu ze bra cle dri fro glu pla stu tri zor vin mel dar kin sol pix ron tek lum
nor bax""".split()


def pseudo_word(rng: random.Random, lo: int = 2, hi: int = 3) -> str:
    """A made-up word of lo..hi syllables (forces copying rather than recall)."""
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(lo, hi)))
