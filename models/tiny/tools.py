"""Tool specs for the synthetic data: hand-written families with natural requests, and
procedurally named tools with explicit "param value" requests.

A `ToolSpec` is one offered tool: its OpenAI-style JSON, and how a user may ask for it.
`ask(values)` renders a request; `values` maps param name -> the Python value that the
call's JSON arguments must carry (the text in the request is `str(value)`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from .pools import pseudo_word, split


@dataclass(frozen=True)
class Param:
    names: tuple[str, ...]
    type: str  # "string" | "integer" | "number"
    kind: str  # which value generator
    descs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Family:
    names: tuple[str, ...]
    descs: tuple[str, ...]
    params: tuple[Param, ...]
    asks: tuple[str, ...]  # {0}, {1}, ... are the values in param order
    asks2: tuple[str, ...] = ()  # parallel: {0} first value, {1} the second value of param 0
    results: tuple[str, ...] = ("OK",)
    keywords: tuple[str, ...] = ()


@dataclass
class ToolSpec:
    name: str
    description: str
    params: list[tuple[str, Param]]  # (chosen name, param)
    family: Family | None
    verb: str = ""
    noun: str = ""
    schema_extra: dict[str, Any] = field(default_factory=dict)

    def json(self, rng: random.Random) -> dict[str, Any]:
        props: dict[str, Any] = {}
        for pname, p in self.params:
            d: dict[str, Any] = {"type": p.type}
            if p.descs and rng.random() < 0.7:
                d["description"] = rng.choice(p.descs)
            props[pname] = d
        params: dict[str, Any] = {"type": "object", "properties": props}
        r = rng.random()
        if r < 0.75:
            params["required"] = [n for n, _ in self.params]
        elif r < 0.9:
            params["required"] = [self.params[0][0]]
        # llama-server fills a missing description with "", so an empty one is what a
        # tool without description looks like in the prompt
        desc = self.description if rng.random() < 0.95 else ""
        fn: dict[str, Any] = {"name": self.name, "description": desc, "parameters": params}
        return {"type": "function", "function": fn}

    def keywords(self) -> set[str]:
        words = set(split_name(self.name))
        words |= {w.strip(".,").lower() for w in self.description.split()}
        if self.family:
            words |= set(self.family.keywords)
        words |= {self.noun.lower(), self.verb.lower()}
        return {w for w in words if len(w) > 3 and w not in STOP}


STOP = {
    "the",
    "this",
    "that",
    "with",
    "from",
    "into",
    "for",
    "and",
    "given",
    "about",
    "their",
    "your",
    "some",
    "what",
    "when",
    "which",
    "return",
    "returns",
    "current",
    "name",
    "number",
    "other",
    "another",
    "value",
    "text",
    "item",
    "using",
    "there",
    "them",
}


def split_name(name: str) -> list[str]:
    out: list[str] = []
    cur = ""
    for ch in name:
        if ch in "_-.":
            if cur:
                out.append(cur.lower())
            cur = ""
        elif ch.isupper() and cur and not cur[-1].isupper():
            out.append(cur.lower())
            cur = ch
        else:
            cur += ch
    if cur:
        out.append(cur.lower())
    return out


STR, INT, NUM = "string", "integer", "number"
CITY = Param(
    ("city", "location", "city_name", "place", "town"),
    STR,
    "city",
    ("The city name", "City to look up", "Name of the city"),
)


FAMILIES: list[Family] = [
    Family(
        ("get_weather", "weather", "current_weather", "getWeather", "fetch_weather"),
        (
            "Get the current weather for a city.",
            "Look up today's weather in a city.",
            "Returns the weather conditions for a location.",
        ),
        (CITY,),
        (
            "What's the weather in {0}?",
            "weather in {0}",
            "How is the weather in {0} today?",
            "Tell me the weather for {0}.",
            "What is the weather like in {0}?",
            "Can you check the weather in {0}?",
            "weather {0}",
            "Get the weather in {0} please.",
        ),
        (
            "What's the weather in {0} and in {1}?",
            "weather in {0} and {1} please",
            "How is the weather in {0} and in {1}?",
            "Tell me the weather for {0} and {1}.",
        ),
        (
            "{0}: {t} C, {sky}",
            "{t} C and {sky}",
            '{{"city": "{0}", "temp_c": {t}}}',
            "Sunny, {t} degrees",
        ),
        ("weather",),
    ),
    Family(
        ("get_time", "current_time", "world_clock", "getTime", "local_time"),
        ("Get the current local time in a city.", "Tells the local time for a city."),
        (CITY,),
        (
            "What time is it in {0}?",
            "current time in {0}",
            "Tell me the time in {0}.",
            "What's the local time in {0}?",
            "time in {0} now?",
        ),
        ("What time is it in {0} and in {1}?", "Tell me the time in {0} and {1}."),
        ("{h}:{m}", "It is {h}:{m} in {0}.", "{h}:{m} local time"),
        ("time", "clock"),
    ),
    Family(
        ("get_stock_price", "stock_quote", "getStockPrice", "stock_price"),
        ("Look up the latest stock price for a ticker symbol.", "Get a stock quote by ticker."),
        (Param(("symbol", "ticker", "stock"), STR, "ticker", ("Ticker symbol",)),),
        (
            "What's the stock price of {0}?",
            "stock quote for {0}",
            "How much is {0} stock trading at?",
            "Get the stock price for {0}.",
            "price of {0} stock",
        ),
        ("What's the stock price of {0} and {1}?", "stock quotes for {0} and {1}"),
        ("{0} is at {p} USD", "{p}", '{{"symbol": "{0}", "price": {p}}}'),
        ("stock", "price", "ticker"),
    ),
    Family(
        ("convert_currency", "currency_convert", "convertCurrency", "exchange"),
        (
            "Convert an amount of money from one currency to another.",
            "Currency conversion between two currencies.",
        ),
        (
            Param(("amount", "value", "sum"), NUM, "money", ("Amount to convert",)),
            Param(("from_currency", "source", "from"), STR, "currency", ("Currency code",)),
            Param(("to_currency", "target", "to"), STR, "currency", ("Currency code",)),
        ),
        (
            "Convert {0} {1} to {2}.",
            "How much is {0} {1} in {2}?",
            "convert currency: {0} from {1} to {2}",
            "Please convert {0} {1} into {2}.",
        ),
        (),
        ("{p} {2}", "{0} {1} = {p} {2}"),
        ("convert", "currency", "money"),
    ),
    Family(
        ("set_timer", "start_timer", "timer", "setTimer", "countdown"),
        ("Start a countdown timer.", "Set a timer for a number of minutes."),
        (Param(("minutes", "duration", "mins"), INT, "minutes", ("Length in minutes",)),),
        (
            "Set a timer for {0} minutes.",
            "start a {0} minute timer",
            "timer {0} minutes please",
            "Please set a {0}-minute timer.",
            "Can you start a timer for {0} minutes?",
        ),
        (
            "Set a timer for {0} minutes and another timer for {1} minutes.",
            "start timers for {0} and {1} minutes",
        ),
        ("Timer set for {0} minutes.", "OK, {0} minutes.", "timer_id={n}"),
        ("timer",),
    ),
    Family(
        ("send_email", "email", "sendEmail", "compose_email", "mail_send"),
        ("Send an email to a recipient with a subject.", "Sends an email message."),
        (
            Param(("to", "recipient", "address", "email"), STR, "email", ("Recipient address",)),
            Param(("subject", "title", "topic"), STR, "phrase", ("Subject line",)),
        ),
        (
            "Send an email to {0} with subject {1}",
            "email {0} about {1}",
            "Please send an email to {0} with the subject {1}.",
            'Send {0} an email titled "{1}".',
        ),
        (),
        ("Email sent to {0}.", "sent", "Message queued for {0}."),
        ("email", "mail"),
    ),
    Family(
        ("translate_text", "translate", "translateText", "translator"),
        ("Translate text into another language.", "Translates a sentence to a language."),
        (
            Param(("text", "sentence", "source_text"), STR, "phrase", ("Text to translate",)),
            Param(
                ("target_language", "language", "lang", "to_language"),
                STR,
                "language",
                ("Language to translate into",),
            ),
        ),
        (
            'Translate "{0}" into {1}.',
            "translate {0} to {1}",
            "How do you say {0} in {1}?",
            'Please translate "{0}" to {1}.',
        ),
        (),
        ("{w}", "In {1}: {w}"),
        ("translate", "language"),
    ),
    Family(
        ("web_search", "search", "search_web", "webSearch", "internet_search"),
        ("Search the web for a query.", "Runs a web search and returns top results."),
        (Param(("query", "q", "terms", "search_query"), STR, "phrase", ("Search terms",)),),
        (
            "Search the web for {0}.",
            "search for {0}",
            "look up {0} online",
            "Can you search the web for {0}?",
            "web search {0}",
        ),
        ("Search the web for {0} and for {1}.", "search for {0} and also {1}"),
        ("Top result: {w} {w2}", "3 results about {0}", "{w}.com: {0}"),
        ("search", "web", "online"),
    ),
    Family(
        ("create_reminder", "add_reminder", "remind", "createReminder", "set_reminder"),
        ("Create a reminder with a text and a time.", "Adds a reminder for later."),
        (
            Param(("text", "task", "what", "message"), STR, "task", ("What to remember",)),
            Param(("time", "when", "at"), STR, "clock", ("When to remind",)),
        ),
        (
            "Remind me to {0} at {1}.",
            "create a reminder to {0} at {1}",
            "Please add a reminder: {0} at {1}",
            "Set a reminder to {0} at {1}.",
        ),
        (),
        ("Reminder saved for {1}.", "OK: {0} at {1}"),
        ("remind", "reminder"),
    ),
    Family(
        ("get_population", "population", "getPopulation", "population_of"),
        ("Get the population of a city.", "Returns how many people live in a city."),
        (CITY,),
        (
            "What is the population of {0}?",
            "population of {0}",
            "How many people live in {0}? Check the population.",
        ),
        ("What is the population of {0} and of {1}?",),
        ("{n}000 people", "{0} has {n} thousand people."),
        ("population", "people"),
    ),
    Family(
        ("get_distance", "calculate_distance", "distance", "getDistance"),
        ("Compute the distance between two cities.", "Distance in km between places."),
        (
            Param(("origin", "start", "from_city"), STR, "city", ("Start city",)),
            Param(("destination", "end", "to_city"), STR, "city", ("End city",)),
        ),
        (
            "How far is it from {0} to {1}?",
            "distance between {0} and {1}",
            "What is the distance from {0} to {1}?",
            "Calculate the distance from {0} to {1}.",
        ),
        (),
        ("{n} km", "{0} to {1}: {n} km"),
        ("distance", "far"),
    ),
    Family(
        ("search_flights", "find_flights", "flights", "searchFlights", "flight_search"),
        ("Find flights between two cities on a date.", "Search for available flights."),
        (
            Param(("origin", "from", "departure_city"), STR, "city", ("Departure city",)),
            Param(("destination", "to", "arrival_city"), STR, "city", ("Arrival city",)),
            Param(("date", "day", "departure_date"), STR, "date", ("Travel date",)),
        ),
        (
            "Find flights from {0} to {1} on {2}.",
            "search flights {0} to {1} on {2}",
            "Are there flights from {0} to {1} on {2}?",
            "I need a flight from {0} to {1} on {2}.",
        ),
        (),
        ("{n} flights found", "Flight {code} at {h}:{m}"),
        ("flight", "flights"),
    ),
    Family(
        ("book_hotel", "hotel_booking", "bookHotel", "reserve_hotel"),
        ("Book a hotel room in a city for a number of nights.", "Reserves a hotel room."),
        (CITY, Param(("nights", "num_nights", "stay_length"), INT, "small", ("How many nights",))),
        (
            "Book a hotel in {0} for {1} nights.",
            "reserve a hotel room in {0} for {1} nights",
            "I need a hotel in {0} for {1} nights.",
            "hotel in {0}, {1} nights",
        ),
        (),
        ("Booked: {w} Hotel, {1} nights", "confirmation {code}"),
        ("hotel", "book"),
    ),
    Family(
        ("find_recipe", "get_recipe", "recipe_search", "findRecipe", "recipes"),
        ("Find a recipe for a dish.", "Looks up a cooking recipe."),
        (Param(("dish", "food", "meal", "name"), STR, "food", ("Dish name",)),),
        (
            "Find me a recipe for {0}.",
            "recipe for {0}",
            "How do I cook {0}? Find a recipe.",
            "Get a recipe for {0} please.",
        ),
        ("Find recipes for {0} and {1}.", "recipe for {0} and one for {1}"),
        ("{0}: mix, cook 20 min, serve", "Recipe: {w} {0}"),
        ("recipe", "cook"),
    ),
    Family(
        ("define_word", "dictionary_lookup", "define", "defineWord", "lookup_word"),
        ("Look up the definition of a word.", "Dictionary definition of a word."),
        (Param(("word", "term", "entry"), STR, "word", ("The word",)),),
        (
            "Define {0}.",
            "What does {0} mean? Look up the definition.",
            "definition of {0}",
            "Look up {0} in the dictionary.",
        ),
        ("Define {0} and {1}.", "definitions of {0} and {1}"),
        ("{0}: a kind of {w}", "{0} (noun): {w2}"),
        ("define", "definition", "dictionary"),
    ),
    Family(
        ("add_numbers", "add", "sum_numbers", "addNumbers", "calculator_add"),
        ("Add two numbers.", "Returns the sum of two numbers."),
        (
            Param(("a", "x", "first"), NUM, "num", ("First number",)),
            Param(("b", "y", "second"), NUM, "num", ("Second number",)),
        ),
        ("Add {0} and {1}.", "What is {0} plus {1}?", "add {0} + {1}", "sum of {0} and {1}"),
        (),
        ("{p}", "sum = {p}"),
        ("plus", "sum"),
    ),
    Family(
        ("multiply", "multiply_numbers", "multiplyNumbers", "product"),
        ("Multiply two numbers.", "Returns the product of two numbers."),
        (
            Param(("a", "x", "left"), NUM, "num", ("First factor",)),
            Param(("b", "y", "right"), NUM, "num", ("Second factor",)),
        ),
        ("Multiply {0} by {1}.", "What is {0} times {1}?", "multiply {0} and {1}"),
        (),
        ("{p}", "product = {p}"),
        ("multiply", "times", "product"),
    ),
    Family(
        ("play_song", "play_music", "playSong", "music_play"),
        ("Play a song by its title.", "Starts playing music."),
        (Param(("title", "song", "track"), STR, "phrase", ("Song title",)),),
        ("Play {0}.", "play the song {0}", "Can you play {0}?", "put on the song {0}"),
        ("Play {0} and then {1}.",),
        ("Now playing {0}", "playing"),
        ("play", "song", "music"),
    ),
    Family(
        ("get_news", "news", "latest_news", "getNews", "headlines"),
        ("Get the latest news headlines on a topic.", "News search by topic."),
        (Param(("topic", "subject", "category"), STR, "word", ("News topic",)),),
        (
            "Show me the news about {0}.",
            "latest news on {0}",
            "What's new with {0}? Get news.",
            "news about {0}",
        ),
        ("Get news about {0} and about {1}.",),
        ("Headline: {w} {w2} and {0}", "2 stories on {0}"),
        ("news", "headlines"),
    ),
    Family(
        ("lookup_contact", "find_contact", "get_contact", "contacts", "findContact"),
        ("Find a contact's phone number by name.", "Look up a person in the address book."),
        (Param(("name", "person", "contact_name"), STR, "person", ("Full name",)),),
        (
            "What is {0}'s phone number?",
            "find contact {0}",
            "Look up {0} in my contacts.",
            "Get the contact details for {0}.",
        ),
        ("Find the contacts {0} and {1}.", "What are the phone numbers of {0} and {1}?"),
        ("{0}: +1 555 {n}", "phone {n}"),
        ("contact", "contacts", "phone"),
    ),
    Family(
        ("set_alarm", "alarm", "setAlarm", "create_alarm"),
        ("Set an alarm for a time.", "Creates a wake-up alarm."),
        (Param(("time", "at", "alarm_time"), STR, "clock", ("Alarm time",)),),
        (
            "Set an alarm for {0}.",
            "alarm at {0}",
            "Wake me up at {0} with an alarm.",
            "Please set an alarm at {0}.",
        ),
        ("Set alarms for {0} and {1}.", "alarm at {0} and another at {1}"),
        ("Alarm set for {0}", "ok"),
        ("alarm", "wake"),
    ),
    Family(
        ("set_lights", "turn_on_lights", "lights_on", "setLights", "light_control"),
        ("Turn on the lights in a room.", "Switches on the lights of a room."),
        (Param(("room", "area", "zone"), STR, "room", ("Room name",)),),
        ("Turn on the lights in the {0}.", "lights on in the {0}", "Switch on the {0} lights."),
        ("Turn on the lights in the {0} and the {1}.",),
        ("Lights on in {0}", "done"),
        ("lights", "light"),
    ),
    Family(
        ("set_temperature", "thermostat", "setThermostat", "set_thermostat"),
        ("Set the thermostat to a temperature.", "Changes the heating target."),
        (Param(("degrees", "temperature", "celsius"), INT, "temp", ("Target in Celsius",)),),
        (
            "Set the temperature to {0} degrees.",
            "thermostat {0}",
            "Make it {0} degrees on the thermostat.",
            "set heating to {0} degrees",
        ),
        (),
        ("Thermostat at {0} C", "ok"),
        ("thermostat", "temperature", "degrees", "heating"),
    ),
    Family(
        ("order_food", "order_pizza", "orderFood", "food_order"),
        ("Order food for delivery.", "Places a food delivery order."),
        (
            Param(("item", "dish", "food"), STR, "food", ("What to order",)),
            Param(("quantity", "count", "qty"), INT, "small", ("How many",)),
        ),
        (
            "Order {0}, {1} portions.",
            "order food: {0} x{1}",
            "Please order {1} {0} for delivery.",
            "I want to order {0}, quantity {1}.",
        ),
        (),
        ("Order {code} placed", "{1} x {0} ordered"),
        ("order", "delivery"),
    ),
    Family(
        ("track_package", "package_status", "trackPackage", "track_parcel"),
        ("Track a package by its tracking number.", "Shows where a parcel is."),
        (Param(("tracking_number", "tracking_id", "code"), STR, "code", ("Tracking number",)),),
        (
            "Where is my package {0}?",
            "track package {0}",
            "Track my parcel {0} please.",
            "status of package {0}",
        ),
        ("Track packages {0} and {1}.",),
        ("In transit, {city}", "Delivered {day}"),
        ("track", "package", "parcel"),
    ),
    Family(
        ("create_note", "add_note", "new_note", "createNote", "save_note"),
        ("Create a note with a title and a body.", "Saves a new note."),
        (
            Param(("title", "name", "heading"), STR, "word", ("Note title",)),
            Param(("body", "content", "text"), STR, "phrase", ("Note text",)),
        ),
        (
            'Create a note titled {0} saying "{1}".',
            "new note {0}: {1}",
            'Add a note called {0} with the text "{1}".',
            "save a note named {0} that says {1}",
        ),
        (),
        ("Note {0} saved", "note_id={n}"),
        ("note", "notes"),
    ),
    Family(
        ("get_forecast", "weather_forecast", "forecast", "getForecast"),
        ("Get the weather forecast for a city for some days.", "Multi-day forecast."),
        (CITY, Param(("days", "num_days", "horizon"), INT, "small", ("Number of days",))),
        (
            "Forecast for {0} for the next {1} days.",
            "What's the forecast in {0} for {1} days?",
            "get the {1} day forecast for {0}",
        ),
        (),
        ("{1} days: {sky}", "{0}: {sky}, then rain"),
        ("forecast",),
    ),
    Family(
        ("roll_dice", "dice", "rollDice", "roll_die"),
        ("Roll a die with a number of sides.", "Random dice roll."),
        (Param(("sides", "faces", "n"), INT, "small", ("Number of sides",)),),
        ("Roll a die with {0} sides.", "roll dice with {0} sides", "roll a {0}-sided die"),
        ("Roll a {0}-sided die and a {1}-sided die.",),
        ("{n}", "rolled {n}"),
        ("roll", "dice"),
    ),
    Family(
        ("lookup_user", "get_user", "user_info", "getUser", "find_user"),
        ("Look up a user account by id.", "Returns a user record."),
        (Param(("user_id", "id", "uid"), INT, "id", ("Numeric user id",)),),
        ("Look up user {0}.", "get user {0}", "Who is user {0}?", "user info for id {0}"),
        ("Look up users {0} and {1}.",),
        ('{{"id": {0}, "name": "{person}"}}', "{person}"),
        ("user", "account"),
    ),
    Family(
        ("schedule_meeting", "book_meeting", "scheduleMeeting", "create_meeting"),
        ("Schedule a meeting with a person on a day.", "Puts a meeting in the calendar."),
        (
            Param(("person", "attendee", "with"), STR, "person", ("Who to meet",)),
            Param(("day", "date", "when"), STR, "day", ("Meeting day",)),
        ),
        (
            "Schedule a meeting with {0} on {1}.",
            "book a meeting with {0} for {1}",
            "Set up a meeting with {0} on {1} please.",
        ),
        (),
        ("Meeting with {0} on {1} booked", "ok, {1}"),
        ("meeting", "schedule", "calendar"),
    ),
    Family(
        ("add_to_cart", "cart_add", "addToCart", "add_item"),
        ("Add an item to the shopping cart.", "Puts a product in the cart."),
        (
            Param(("item", "product", "sku"), STR, "item", ("Product",)),
            Param(("quantity", "count", "qty"), INT, "small", ("How many",)),
        ),
        ("Add {1} {0} to my cart.", "put {0} in the cart, quantity {1}", "add to cart: {0} x{1}"),
        (),
        ("Cart: {1} x {0}", "added"),
        ("cart", "shopping"),
    ),
    Family(
        ("get_movie_info", "movie_lookup", "movie", "getMovieInfo", "film_info"),
        ("Get information about a movie.", "Looks up a film by title."),
        (Param(("title", "movie", "name"), STR, "phrase", ("Movie title",)),),
        ("Tell me about the movie {0}.", "movie info for {0}", "Look up the film {0}."),
        ("Tell me about the movies {0} and {1}.",),
        ("{0} ({y}), rated {d}.{d2}", "{0}: a film about {w}"),
        ("movie", "film"),
    ),
    Family(
        ("count_words", "word_count", "countWords", "wordcount"),
        ("Count the words in a text.", "Returns the number of words."),
        (Param(("text", "input", "content"), STR, "phrase", ("The text",)),),
        ('Count the words in "{0}".', "how many words in {0}? count them", "word count of {0}"),
        (),
        ("{n}", "{n} words"),
        ("count", "words"),
    ),
    Family(
        ("check_availability", "availability", "checkAvailability", "room_availability"),
        ("Check room availability for a date.", "Are rooms free on a date."),
        (Param(("date", "day", "on"), STR, "date", ("The date",)),),
        ("Check availability for {0}.", "Is anything available on {0}?", "availability on {0}"),
        ("Check availability for {0} and {1}.",),
        ("{n} rooms free", "available"),
        ("availability", "available"),
    ),
    Family(
        ("get_exchange_rate", "exchange_rate", "fx_rate", "getExchangeRate"),
        ("Get the exchange rate between two currencies.", "FX rate lookup."),
        (
            Param(("base", "from", "base_currency"), STR, "currency", ("Base currency",)),
            Param(("quote", "to", "quote_currency"), STR, "currency", ("Quote currency",)),
        ),
        (
            "What's the exchange rate from {0} to {1}?",
            "exchange rate {0} {1}",
            "fx rate {0} to {1}",
        ),
        (),
        ("1 {0} = {p} {1}", "{p}"),
        ("exchange", "rate"),
    ),
    Family(
        ("translate_word", "word_translation", "translateWord"),
        ("Translate a single word into a language.",),
        (
            Param(("word", "term"), STR, "word", ("The word",)),
            Param(("language", "lang", "target"), STR, "language", ("Target language",)),
        ),
        (
            "How do you say {0} in {1}?",
            "translate the word {0} into {1}",
            "{0} in {1}? translate the word",
        ),
        (),
        ("{w}", "{1}: {w}"),
        ("translate", "word"),
    ),
]

READ_CONTENT_DESCS = (
    "Read a stored content item by its ref.",
    "Return the full body of stored content.",
    "Read the full text of a stored item.",
    "Fetch stored content by reference.",
    "Read content that was stored earlier, by ref.",
)
READ_CONTENT_PARAM = Param(
    ("ref",), STR, "ref", ("The ref of the stored item", "Content ref", "Reference id")
)

PROC_VERBS = [
    "get",
    "fetch",
    "find",
    "create",
    "update",
    "delete",
    "list",
    "check",
    "send",
    "cancel",
    "open",
    "close",
    "start",
    "stop",
    "book",
    "reserve",
    "export",
    "import",
    "archive",
    "restore",
    "approve",
    "reject",
    "submit",
    "sync",
    "validate",
    "rename",
    "compute",
    "estimate",
    "schedule",
    "assign",
    "publish",
    "lookup",
    "register",
    "renew",
    "refund",
    "scan",
]

PROC_NOUNS = [
    "invoice",
    "ticket",
    "playlist",
    "shipment",
    "appointment",
    "subscription",
    "coupon",
    "parcel",
    "sensor",
    "backup",
    "report",
    "badge",
    "poll",
    "budget",
    "quote",
    "lease",
    "visa",
    "vehicle",
    "course",
    "grade",
    "order",
    "account",
    "device",
    "ledger",
    "voucher",
    "rental",
    "warranty",
    "pension",
    "parking",
    "permit",
    "survey",
    "volunteer",
    "sample",
    "vaccine",
    "shelter",
    "greenhouse",
    "kiln",
    "turbine",
    "drone",
    "aquarium",
]

PROC_PARAMS: list[Param] = [
    Param(("id",), INT, "id", ("Numeric id",)),
    Param(("name",), STR, "person", ("A name",)),
    Param(("title",), STR, "word", ("Title",)),
    Param(("count",), INT, "small", ("How many",)),
    Param(("limit",), INT, "small", ("Max results",)),
    Param(("amount",), NUM, "money", ("Amount",)),
    Param(("price",), NUM, "money", ("Price",)),
    Param(("label",), STR, "word", ("Label",)),
    Param(("code",), STR, "code", ("Code",)),
    Param(("city",), STR, "city", ("City",)),
    Param(("date",), STR, "date", ("Date",)),
    Param(("email",), STR, "email", ("Email",)),
    Param(("level",), INT, "small", ("Level",)),
    Param(("score",), NUM, "num", ("Score",)),
    Param(("color",), STR, "color", ("Color",)),
    Param(("tag",), STR, "word", ("Tag",)),
    Param(("note",), STR, "phrase", ("Free text",)),
    Param(("query",), STR, "phrase", ("Query",)),
    Param(("user",), STR, "person", ("User",)),
    Param(("weight",), NUM, "num", ("Weight",)),
    Param(("size",), INT, "small", ("Size",)),
    Param(("priority",), INT, "small", ("Priority",)),
    Param(("channel",), STR, "word", ("Channel",)),
    Param(("region",), STR, "city", ("Region",)),
    Param(("owner",), STR, "person", ("Owner",)),
    Param(("quantity",), INT, "small", ("Quantity",)),
    Param(("ratio",), NUM, "num", ("Ratio",)),
    Param(("status",), STR, "word", ("Status",)),
    Param(("year",), INT, "year", ("Year",)),
    Param(("language",), STR, "language", ("Language",)),
    Param(("reason",), STR, "phrase", ("Reason",)),
    Param(("day",), STR, "day", ("Day",)),
    Param(("max_results",), INT, "small", ("Max results",)),
    Param(("order_id",), INT, "id", ("Order id",)),
    Param(("account_name",), STR, "word", ()),
    Param(("file_name",), STR, "word", ("File",)),
    Param(("target_city",), STR, "city", ()),
    Param(("percent",), NUM, "num", ("Percent",)),
    Param(("currency",), STR, "currency", ()),
]


def family_pool(held_out: bool) -> list[Family]:
    return split(FAMILIES, held_out)


def make_family_tool(rng: random.Random, fam: Family) -> ToolSpec:
    name = rng.choice(fam.names)
    params: list[tuple[str, Param]] = []
    used: set[str] = set()
    for p in fam.params:
        choices = [n for n in p.names if n not in used] or list(p.names)
        n = rng.choice(choices)
        used.add(n)
        params.append((n, p))
    return ToolSpec(name, rng.choice(fam.descs), params, fam)


def _style(rng: random.Random, words: list[str]) -> str:
    r = rng.random()
    if r < 0.6:
        return "_".join(words)
    if r < 0.85:
        return words[0] + "".join(w.capitalize() for w in words[1:])
    return "".join(words)


def make_proc_tool(rng: random.Random, held_out: bool) -> ToolSpec:
    verb = rng.choice(split(PROC_VERBS, held_out))
    noun = rng.choice(split(PROC_NOUNS, held_out)) if rng.random() < 0.8 else pseudo_word(rng)
    name = _style(rng, [verb, noun])
    k = rng.choice([1, 1, 2, 2, 2, 3])
    pool = split(PROC_PARAMS, held_out)
    chosen = rng.sample(pool, k)
    params: list[tuple[str, Param]] = []
    for p in chosen:
        pname = p.names[0]
        if rng.random() < 0.1:
            pname = pseudo_word(rng, 2, 2)
        params.append((pname, p))
    desc = rng.choice(
        [
            f"{verb.capitalize()} a {noun}.",
            f"{verb.capitalize()} the {noun} record.",
            f"{verb.capitalize()} {noun} entries by " + params[0][0].replace("_", " ") + ".",
            f"Use this to {verb} a {noun}.",
            f"{verb.capitalize()}s a {noun} and returns its status.",
        ]
    )
    return ToolSpec(name, desc, params, None, verb, noun)


def make_read_content(rng: random.Random) -> ToolSpec:
    return ToolSpec(
        "read_content",
        rng.choice(READ_CONTENT_DESCS),
        [("ref", READ_CONTENT_PARAM)],
        None,
        "read",
        "content",
    )
