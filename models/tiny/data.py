"""Seeded synthetic conversations in agrun's format (see prompt_format.md), as OpenAI-style
messages + tools, each labelled with the behaviour of its last assistant turn.

`Generator(seed, held_out).example()` returns one `Example`; the same seed gives the same
stream. Held-out generators draw tool families, tool words, values and phrasings from the
held-out parts of the pools, so their prompts were never seen in training.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import pools as P
from .pools import pseudo_word, split
from .tools import (
    ToolSpec,
    family_pool,
    make_family_tool,
    make_proc_tool,
    make_read_content,
)

EXTRACT_SYSTEM = (
    "Extract durable memory from the conversation turn. Reply with JSON only: "
    '{"facts": [...], "preferences": [...], "decisions": [...]}.'
)
DONT_KNOW = "I don't know yet."
RECALL_PREFIX = "From what you told me: "
SAID_PREFIX = "You said: "
RESULT_PREFIX = "The result is: "
RESULTS_PREFIX = "The results are: "
HERE_PREFIX = "Here it is: "

FOLLOW_UPS = [
    "format that as a table",
    "Format that as a table.",
    "summarize your last answer",
    "Summarize your last answer.",
    "compare with your previous answer",
    "Compare this with your previous answer.",
    "Can you make that shorter?",
    "turn that into a bulleted list",
    "Rewrite your last answer in simpler words.",
    "give me the key points of your last answer",
    "Shorten your previous answer.",
    "Expand on your last reply.",
    "Put your last answer in a table.",
    "summarize that",
    "Make a list out of your previous answer.",
    "Can you reformat your last answer?",
    "Turn your previous answer into bullet points.",
    "Give me a summary of that.",
    "format your last answer as markdown",
    "Compare that to what you said before.",
    "Rewrite that as a table please.",
    "Can you summarize the previous answer?",
    "reformat that as a list",
    "Make your last answer more concise.",
    "Convert that into a table.",
    "tl;dr of your last answer?",
    "Summarize the answer you just gave.",
    "Could you put that in a table?",
]

ROOMS = [
    "kitchen",
    "bedroom",
    "living room",
    "garage",
    "office",
    "bathroom",
    "hallway",
    "basement",
    "attic",
    "patio",
    "study",
    "nursery",
]
SKIES = ["sunny", "cloudy", "light rain", "windy", "clear", "foggy", "snow", "overcast"]
DOMAINS = ["example.com", "mail.org", "work.net", "acme.io", "post.dev", "home.me"]
TASK_VERBS = ["buy", "call", "water", "email", "pay", "pick up", "clean", "book", "check"]
KINDS = ["text", "markdown", "table", "json", "answer", "csv", "note", "list"]


@dataclass
class Example:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    kind: str  # behaviour of the final assistant turn
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class MemLine:
    section: str  # facts | preferences | decisions | remembered
    text: str
    key: str
    questions: list[str]


@dataclass
class Memory:
    host: str
    direction: list[str] = field(default_factory=list)
    lines: list[MemLine] = field(default_factory=list)
    summary: str = ""
    recalled: list[str] = field(default_factory=list)
    stored: list[tuple[str, str, int, str]] = field(default_factory=list)  # ref, kind, bytes, 1st
    bodies: dict[str, str] = field(default_factory=dict)

    def section(self, name: str) -> list[MemLine]:
        return [m for m in self.lines if m.section == name]

    def system(self) -> str:
        out: list[str] = []
        if self.direction:
            out.append("## Direction")
            out += self.direction
        for sec, title in (
            ("facts", "Facts"),
            ("preferences", "Preferences"),
            ("decisions", "Decisions"),
        ):
            if self.section(sec):
                out.append(f"## {title}")
                out += [f"- {m.text}" for m in self.section(sec)]
        if self.summary:
            out += ["## Summary", self.summary]
        if self.section("remembered"):
            out.append("## Remembered")
            out += [f"- {m.text}" for m in self.section("remembered")]
        if self.recalled:
            out.append("## Recalled turns")
            out += self.recalled
        if self.stored:
            out.append("## Stored content")
            out += [f"- {r} ({k}, {b} bytes): {first[:60]}" for r, k, b, first in self.stored]
        if not out:
            return self.host
        return self.host + "\n\n" + "\n".join(out)


def lcfirst(s: str) -> str:
    return s[:1].lower() + s[1:] if s[:2] != s[:2].upper() else s


def strip_end(s: str) -> str:
    return s.rstrip(".?!")


class Generator:
    def __init__(self, seed: int, held_out: bool = False) -> None:
        self.rng = random.Random(seed)
        self.held_out = held_out
        self.families = family_pool(held_out)
        self.follow_ups = split(FOLLOW_UPS, held_out)

    # ---------------------------------------------------------------- values
    def pick(self, pool: list[Any]) -> Any:
        return self.rng.choice(split(pool, self.held_out))

    def word(self) -> str:
        return self.pick(P.WORDS) if self.rng.random() < 0.7 else pseudo_word(self.rng)

    def person(self) -> str:
        n = self.pick(P.NAMES) if self.rng.random() < 0.85 else pseudo_word(self.rng).title()
        if self.rng.random() < 0.25:
            n += " " + self.pick(P.SURNAMES)
        return str(n)

    def city(self) -> str:
        r = self.rng.random()
        if r < 0.7:
            return str(self.pick(P.CITIES))
        if r < 0.85:
            return str(self.pick(P.MULTI_CITIES))
        return pseudo_word(self.rng).title()

    def phrase(self) -> str:
        r = self.rng.random()
        if r < 0.35:
            return str(self.pick(P.NOUN_PHRASES)).removeprefix("the ")
        if r < 0.7:
            return " ".join(self.word() for _ in range(self.rng.randint(2, 4)))
        if r < 0.85:
            return f"{self.word()} {self.pick(P.HOBBIES)}"
        return self.word()

    def floaty(self, lo: int, hi: int, decimals: int) -> float | int:
        if self.rng.random() < 0.45:
            return self.rng.randint(lo, hi)
        while True:
            whole = self.rng.randint(lo, hi)
            frac = "".join(str(self.rng.randint(0, 9)) for _ in range(decimals))
            s = f"{whole}.{frac}"
            if not s.endswith("0") and repr(float(s)) == s:
                return float(s)

    def date(self) -> str:
        r = self.rng.random()
        if r < 0.4:
            return f"{self.pick(P.MONTHS)} {self.rng.randint(1, 28)}"
        if r < 0.7:
            return (
                f"20{self.rng.randint(24, 29)}-{self.rng.randint(1, 12):02d}-"
                f"{self.rng.randint(1, 28):02d}"
            )
        return str(
            self.rng.choice(
                ["tomorrow", "next Friday", "today", "next week", f"next {self.pick(P.DAYS)}"]
            )
        )

    def clock(self) -> str:
        h = self.rng.randint(1, 12)
        return str(
            self.rng.choice(
                [
                    f"{h}pm",
                    f"{h}am",
                    f"{h}:{self.rng.choice(['15', '30', '45'])}",
                    "noon",
                    f"{self.rng.randint(13, 23)}:{self.rng.randint(10, 59)}",
                ]
            )
        )

    def code(self) -> str:
        chars = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        return "".join(self.rng.choice(chars) for _ in range(self.rng.randint(6, 10)))

    def value(self, kind: str) -> Any:
        rng = self.rng
        match kind:
            case "city":
                return self.city()
            case "ticker":
                return self.pick(P.TICKERS)
            case "currency":
                return self.pick(P.CURRENCIES)
            case "language":
                return self.pick(P.LANGUAGES)
            case "color":
                return self.pick(P.COLORS)
            case "day":
                return self.pick(P.DAYS)
            case "person":
                return self.person()
            case "email":
                return f"{self.person().split()[0].lower()}@{rng.choice(DOMAINS)}"
            case "phrase":
                return self.phrase()
            case "task":
                return f"{rng.choice(TASK_VERBS)} {rng.choice([self.pick(P.ITEMS), self.person()])}"
            case "word":
                return self.word()
            case "food":
                return self.pick(P.FOODS)
            case "item":
                return self.pick(P.ITEMS)
            case "room":
                return rng.choice(ROOMS)
            case "money":
                return self.floaty(1, 5000, 2)
            case "num":
                return self.floaty(0, 999, rng.choice([1, 2]))
            case "minutes":
                return rng.randint(1, 120)
            case "small":
                return rng.randint(1, 30)
            case "temp":
                return rng.randint(15, 30)
            case "id":
                return rng.randint(100, 99999)
            case "year":
                return rng.randint(1990, 2030)
            case "date":
                return self.date()
            case "clock":
                return self.clock()
            case "code":
                return self.code()
        raise ValueError(kind)

    def extras(self) -> dict[str, Any]:
        rng = self.rng
        return {
            "t": rng.randint(-5, 35),
            "sky": rng.choice(SKIES),
            "h": rng.randint(0, 23),
            "m": f"{rng.randint(0, 59):02d}",
            "p": self.floaty(1, 900, 2),
            "n": rng.randint(2, 999),
            "w": self.word(),
            "w2": self.word(),
            "code": self.code(),
            "city": self.city(),
            "day": self.pick(P.DAYS),
            "person": self.person(),
            "y": rng.randint(1950, 2024),
            "d": rng.randint(1, 9),
            "d2": rng.randint(0, 9),
        }

    # ---------------------------------------------------------------- chat text
    def chat_sentence(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.2:
            verb, what = self.pick(P.CHAT_VERBS), self.pick(P.NOUN_PHRASES)
            s = f"I {verb} {what} {self.pick(P.CHAT_TIMES)}."
        elif r < 0.3:
            s = f"Tell me a joke about {self.word()}s."
        elif r < 0.4:
            s = f"Can you help me with {self.pick(P.NOUN_PHRASES)}?"
        elif r < 0.48:
            s = f"{self.person()} and I {self.pick(P.CHAT_VERBS)} {self.pick(P.NOUN_PHRASES)}."
        elif r < 0.56:
            s = " ".join(pseudo_word(rng) for _ in range(rng.randint(1, 6))) + rng.choice(
                [".", "?", ""]
            )
        elif r < 0.62:
            s = rng.choice(
                [
                    "ok",
                    "thanks!",
                    "cool",
                    "I see.",
                    "Thanks, that was useful.",
                    "nice",
                    "Why is the sky blue?",
                    "What is the meaning of life?",
                    "sure",
                    "no",
                    "yes please",
                    "That's all for now.",
                    "Interesting.",
                    "hmm",
                ]
            )
        elif r < 0.7:
            s = f"Please write a poem about {self.word()}."
        elif r < 0.77:
            s = f"I ran {rng.randint(2, 42)} km {self.pick(P.CHAT_TIMES)} with {self.person()}."
        elif r < 0.84:
            s = f"What do you think about {self.pick(P.HOBBIES)}?"
        elif r < 0.9:
            s = " ".join(self.word() for _ in range(rng.randint(3, 12)))
        else:
            s = f"My {self.word()} is {self.rng.choice(['broken', 'new', 'old', 'green', 'lost'])}."
        if rng.random() < 0.15:
            s += " " + self.chat_sentence()
        if rng.random() < 0.04:
            s += "\n" + self.chat_sentence()
        return s

    # ---------------------------------------------------------------- memory
    def mem_candidate(self, section: str) -> MemLine:
        rng = self.rng
        if section == "facts":
            r = rng.random()
            if r < 0.2:
                n = self.person()
                return MemLine(
                    section,
                    f"My name is {n}.",
                    "name",
                    [
                        "What is my name?",
                        "What's my name?",
                        "Do you know my name?",
                        "what is my name",
                        "Who am I?",
                    ],
                )
            if r < 0.35:
                return MemLine(
                    section,
                    f"I live in {self.city()}.",
                    "live",
                    ["Where do I live?", "What city do I live in?", "where do i live"],
                )
            if r < 0.48:
                return MemLine(
                    section,
                    f"I work as a {self.pick(P.JOBS)}.",
                    "work",
                    ["What do I do for work?", "What is my job?", "What do I work as?"],
                )
            if r < 0.58:
                t = self.pick(P.THINGS)
                return MemLine(
                    section,
                    f"I have {rng.randint(1, 9)} {t}.",
                    t,
                    [f"How many {t} do I have?", f"Do I have {t}?"],
                )
            a = self.pick(P.ATTRS) if rng.random() < 0.85 else pseudo_word(rng) + " number"
            v = rng.choice(
                [
                    self.word(),
                    self.person(),
                    str(rng.randint(3, 9999)),
                    self.code(),
                    self.pick(P.COLORS),
                    self.city(),
                ]
            )
            return MemLine(
                section,
                f"My {a} is {v}.",
                a,
                [
                    f"What is my {a}?",
                    f"What's my {a}?",
                    f"Do you know my {a}?",
                    f"Remind me, what is my {a}?",
                ],
            )
        if section == "preferences":
            r = rng.random()
            if r < 0.2:
                return MemLine(
                    section,
                    f"I prefer to drink {self.pick(P.DRINKS)}.",
                    "drink",
                    [
                        "What do I prefer to drink?",
                        "What do I like to drink?",
                        "what should I drink?",
                    ],
                )
            if r < 0.38:
                meal = self.pick(P.MEALS)
                return MemLine(
                    section,
                    f"I prefer {self.pick(P.FOODS)} for {meal}.",
                    meal,
                    [f"What do I prefer for {meal}?", f"What do I like for {meal}?"],
                )
            if r < 0.52:
                return MemLine(
                    section,
                    f"I like {self.pick(P.HOBBIES)}.",
                    "like",
                    ["What do I like?", "What do I enjoy?", "what things do I like?"],
                )
            if r < 0.64:
                return MemLine(
                    section,
                    f"I love {self.pick(P.HOBBIES)}.",
                    "love",
                    ["What do I love?", "What is something I love?"],
                )
            if r < 0.78:
                return MemLine(
                    section,
                    f"I hate {self.pick(P.DISLIKES)}.",
                    "hate",
                    ["What do I hate?", "What do I dislike?", "what do i hate"],
                )
            x, y = rng.sample(split(P.FOODS, self.held_out) + split(P.DRINKS, self.held_out), 2)
            return MemLine(
                section,
                f"I prefer {x} over {y}.",
                x,
                [f"Do I prefer {x} or {y}?", f"Which do I prefer, {x} or {y}?"],
            )
        if section == "decisions":
            topic = self.pick(P.TOPICS) if rng.random() < 0.85 else pseudo_word(rng)
            r = rng.random()
            qs = [
                f"What did we decide about the {topic}?",
                f"What was decided about the {topic}?",
                f"What's the decision on the {topic}?",
                f"what did we decide on the {topic}",
            ]
            if r < 0.45:
                text = f"We decided to {self.pick(P.DECISION_ACTIONS)} the {topic}."
            elif r < 0.75:
                text = f"Let's go with {self.pick(P.OPTIONS)} for the {topic}."
                qs += [f"What did we pick for the {topic}?", f"What did we choose for the {topic}?"]
            else:
                text = (
                    f"We agreed to {self.pick(P.DECISION_ACTIONS)} the {topic} on "
                    f"{self.pick(P.DAYS)}."
                )
                qs += [f"What did we agree about the {topic}?"]
            return MemLine(section, text, topic, qs)
        # remembered
        r = rng.random()
        if r < 0.2:
            return MemLine(
                section,
                f"The wifi password is {self.word()}{rng.randint(1, 99)}.",
                "wifi",
                ["What is the wifi password?", "What do you remember about the wifi password?"],
            )
        if r < 0.38:
            n = self.person()
            return MemLine(
                section,
                f"Call {n} on {self.pick(P.DAYS)}.",
                n,
                [f"What do you remember about {n}?", f"When should I call {n}?"],
            )
        if r < 0.52:
            return MemLine(
                section,
                f"The meeting is in room {rng.randint(1, 999)}.",
                "meeting",
                ["What do you remember about the meeting?", "Where is the meeting?"],
            )
        if r < 0.66:
            return MemLine(
                section,
                f"Buy {self.pick(P.ITEMS)} on the way home.",
                "buy",
                ["What should I buy?", "What did I need to buy?"],
            )
        if r < 0.8:
            w = self.word()
            return MemLine(
                section,
                f"The {w} code is {self.code()}.",
                w,
                [f"What is the {w} code?", f"What do you remember about the {w} code?"],
            )
        n = self.person().split()[0]
        return MemLine(
            section,
            f"{n}'s birthday is on {self.pick(P.MONTHS)} {rng.randint(1, 28)}.",
            n + "bday",
            [f"When is {n}'s birthday?", f"What do you remember about {n}'s birthday?"],
        )

    def memory(self, want_lines: bool, want_stored: bool) -> Memory:
        rng = self.rng
        host = str(rng.choice(P.HOST_PROMPTS)) if rng.random() < 0.45 else P.HOST_PROMPTS[0]
        mem = Memory(host)
        big = rng.random() < 0.25
        if rng.random() < (0.5 if big else 0.2):
            keys = ["activeGoal", "activeTopic", "activeQuery", "pendingClarification"]
            for k in rng.sample(keys, rng.randint(1, 4)):
                v = rng.choice(
                    [
                        f"plan a trip to {self.city()}",
                        str(self.pick(P.TOPICS)),
                        self.chat_sentence(),
                        f"which {self.word()} do you mean?",
                    ]
                )
                mem.direction.append(f"- {k}: {v}")
        keys_used: set[str] = set()
        if want_lines or rng.random() < 0.4:
            for sec in ("facts", "preferences", "decisions", "remembered"):
                if rng.random() < (0.75 if big else 0.5):
                    for _ in range(rng.randint(1, 4 if big else 2)):
                        m = self.mem_candidate(sec)
                        if m.key in keys_used:
                            continue
                        keys_used.add(m.key)
                        mem.lines.append(m)
        if rng.random() < (0.5 if big else 0.15):
            mem.summary = (
                f"The user asked about {self.pick(P.NOUN_PHRASES)} and {self.pick(P.NOUN_PHRASES)}."
            )
        if rng.random() < (0.5 if big else 0.15):
            for _ in range(rng.randint(1, 3)):
                s = self.chat_sentence().replace("\n", " ")
                mem.recalled += [f"[user] {s}", f"[assistant] {SAID_PREFIX}{s}"]
        if want_stored or rng.random() < 0.2:
            self.add_stored(mem, rng.randint(1, 4 if big else 3))
        return mem

    def body(self) -> str:
        rng = self.rng
        first = rng.choice(
            [
                f"# {self.phrase().title()}",
                f"Summary of {self.pick(P.NOUN_PHRASES)}",
                f"| {self.word()} | {self.word()} |",
                "Here are three options:",
                f"{self.person()} asked about {self.pick(P.NOUN_PHRASES)}.",
                f"Trip plan for {self.city()}",
                f"Weather in {self.city()}: {rng.choice(SKIES)}",
                " ".join(self.word() for _ in range(rng.randint(3, 9))).capitalize(),
                f'{{"{self.word()}": {rng.randint(1, 99)}}}',
            ]
        )
        rest = [self.chat_sentence().replace("\n", " ") for _ in range(rng.randint(1, 4))]
        return "\n".join([first, *rest])

    def add_stored(self, mem: Memory, n: int) -> None:
        rng = self.rng
        style = rng.randrange(7)
        start = rng.randint(1, 40)
        hexes = [f"{rng.getrandbits(32):08x}" for _ in range(n)]
        for i in range(n):
            k = start + i
            ref = [
                f"c{k}",
                f"ref-{k}",
                f"content:{hexes[i][:6]}",
                f"art_{k}",
                f"msg-{k:04d}",
                f"doc/{k}",
                hexes[i],
            ][style]
            body = self.body()
            mem.stored.append(
                (
                    ref,
                    rng.choice(KINDS),
                    len(body.encode()) + rng.randint(0, 400),
                    body.split("\n")[0],
                )
            )
            mem.bodies[ref] = body

    # ---------------------------------------------------------------- tools
    def tool_specs(self, n: int, read_content: bool) -> list[ToolSpec]:
        specs: list[ToolSpec] = []
        names: set[str] = set()
        fams = list(self.families)
        self.rng.shuffle(fams)
        while len(specs) < n:
            if self.rng.random() < 0.6 and fams:
                t = make_family_tool(self.rng, fams.pop())
            else:
                t = make_proc_tool(self.rng, self.held_out)
            if t.name in names or t.name == "read_content":
                continue
            names.add(t.name)
            specs.append(t)
        if read_content:
            specs.insert(self.rng.randrange(len(specs) + 1), make_read_content(self.rng))
        return specs

    def ask(self, t: ToolSpec) -> tuple[str, dict[str, Any]]:
        """One request for tool t and the arguments the call must carry."""
        rng = self.rng
        vals = {pname: self.value(p.kind) for pname, p in t.params}
        if t.family is not None:
            tmpl = rng.choice(t.family.asks)
            text = tmpl.format(*[str(vals[pn]) for pn, _ in t.params])
            return text, vals
        mention = [pn for pn, _ in t.params]
        if len(mention) > 1 and rng.random() < 0.2:
            mention = mention[: rng.randint(1, len(mention) - 1)]
        order = list(mention)
        if rng.random() < 0.3:
            rng.shuffle(order)

        def show(pn: str, quote_p: float) -> str:
            v = str(vals[pn])
            if " " in v and rng.random() < quote_p:
                v = f'"{v}"'
            return v

        words = {pn: pn.replace("_", " ") for pn in order}
        form = rng.randrange(7)
        if form in (0, 2, 4, 5):
            parts = [f"{words[pn]} {show(pn, 0.5)}" for pn in order]
            pairs = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        elif form == 1:
            pairs = ", ".join(f"{words[pn]}: {show(pn, 0.5)}" for pn in order)
        elif form == 3:
            pairs = " ".join(f"{pn}={show(pn, 1.0)}" for pn in order)
        else:
            pairs = ", ".join(f"{words[pn]} {show(pn, 0.5)}" for pn in order)
        verb, noun = t.verb, t.noun
        text = [
            f"Please {verb} the {noun} with {pairs}.",
            f"{verb.capitalize()} {noun}: {pairs}",
            f"Can you {verb} a {noun} for {pairs}?",
            f"{verb} {noun} {pairs}",
            f"Use {t.name} with {pairs}.",
            f"I need to {verb} a {noun}, {pairs}.",
            f"{verb.capitalize()} the {noun}, {pairs}.",
        ][form]
        return text, {pn: vals[pn] for pn, _ in t.params if pn in mention}

    def ask_same_twice(self, t: ToolSpec) -> tuple[str, list[dict[str, Any]]] | None:
        fam = t.family
        if fam is None or not fam.asks2 or len(t.params) != 1:
            return None
        pn, p = t.params[0]
        a, b = self.value(p.kind), self.value(p.kind)
        if a == b:
            return None
        return self.rng.choice(fam.asks2).format(str(a), str(b)), [{pn: a}, {pn: b}]

    def result(self, t: ToolSpec, args: dict[str, Any]) -> str:
        rng = self.rng
        ex = self.extras()
        if t.family is not None:
            vals = [str(args.get(pn, "")) for pn, _ in t.params]
            res = rng.choice(t.family.results).format(*vals, **ex)
        else:
            v0 = str(next(iter(args.values()), ""))
            res = rng.choice(
                [
                    "OK",
                    "done",
                    f"{t.noun} {ex['n']} updated",
                    f'{{"status": "ok", "id": {ex["n"]}}}',
                    f"Found {ex['n']} results",
                    f"{v0} -> {ex['w']}",
                    "error: not found",
                    f"{t.noun} {v0} is {ex['w']}",
                    f"status: {ex['w']}",
                    f"{ex['p']}",
                ]
            )
        if rng.random() < 0.08:
            res += "\n" + self.chat_sentence().replace("\n", " ")
        return str(res)

    # ---------------------------------------------------------------- episodes
    def ep_tool(self, specs: list[ToolSpec], parallel: bool) -> tuple[list[dict[str, Any]], str]:
        rng = self.rng
        cands = [t for t in specs if t.name != "read_content"]
        calls: list[tuple[ToolSpec, dict[str, Any]]] = []
        if parallel:
            t = rng.choice(cands)
            same = self.ask_same_twice(t) if rng.random() < 0.5 else None
            if same is not None:
                text, argss = same
                calls = [(t, argss[0]), (t, argss[1])]
            else:
                t2 = rng.choice(cands)
                (x, ax), (y, ay) = self.ask(t), self.ask(t2)
                if t2 is t and ax == ay:
                    return self.ep_tool(specs, False)
                joiner = rng.choice([" Also, ", " And ", " Then ", " ", " Also "])
                if joiner.strip() and rng.random() < 0.5:
                    text = strip_end(x) + rng.choice([" and ", ", and "]) + lcfirst(y)
                else:
                    text = x + joiner + (lcfirst(y) if joiner.strip() else y)
                calls = [(t, ax), (t2, ay)]
        else:
            t = rng.choice(cands)
            text, args = self.ask(t)
            calls = [(t, args)]
        if rng.random() < 0.05:
            text = text.lower()
            calls = [
                (t, {k: (v.lower() if isinstance(v, str) else v) for k, v in a.items()})
                for t, a in calls
            ]
        msgs: list[dict[str, Any]] = [{"role": "user", "content": text}]
        msgs.append(self.call_msg(calls))
        results = [self.result(t, a) for t, a in calls]
        for (t, _), r in zip(calls, results, strict=True):
            msgs.append({"role": "tool", "content": r, "name": t.name})
        firsts = [r.split("\n")[0] for r in results]
        ans = RESULT_PREFIX + firsts[0] if len(firsts) == 1 else RESULTS_PREFIX + "; ".join(firsts)
        msgs.append({"role": "assistant", "content": ans})
        return msgs, "tool_parallel" if len(calls) > 1 else "tool"

    def call_msg(self, calls: list[tuple[ToolSpec, dict[str, Any]]]) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": t.name, "arguments": a},
                }
                for i, (t, a) in enumerate(calls)
            ],
        }

    def ep_content(self, mem: Memory, specs: list[ToolSpec]) -> tuple[list[dict[str, Any]], str]:
        text = self.rng.choice(self.follow_ups)
        ref = mem.stored[-1][0]
        rc = next(t for t in specs if t.name == "read_content")
        msgs: list[dict[str, Any]] = [
            {"role": "user", "content": text},
            self.call_msg([(rc, {"ref": ref})]),
        ]
        body = mem.bodies[ref]
        msgs.append({"role": "tool", "content": body, "name": "read_content"})
        msgs.append({"role": "assistant", "content": HERE_PREFIX + body.split("\n")[0]})
        return msgs, "content"

    def ep_recall(self, mem: Memory) -> tuple[list[dict[str, Any]], str]:
        rng = self.rng
        rem = mem.section("remembered")
        r = rng.random()
        if mem.lines and r < 0.72:
            m = rng.choice(mem.lines)
            q, a = rng.choice(m.questions), RECALL_PREFIX + m.text
        elif rem and r < 0.82:
            q = rng.choice(
                [
                    "What do you remember?",
                    "What did I ask you to remember?",
                    "Do you remember anything?",
                    "what do you remember",
                ]
            )
            a = RECALL_PREFIX + rem[0].text
        else:
            keys = {m.key for m in mem.lines}
            while True:
                c = self.mem_candidate(
                    rng.choice(["facts", "preferences", "decisions", "remembered"])
                )
                if c.key not in keys:
                    break
            q, a = rng.choice(c.questions), DONT_KNOW
            if not rem and rng.random() < 0.1:
                q = "What do you remember?"
        return [{"role": "user", "content": q}, {"role": "assistant", "content": a}], "recall"

    def ep_plain(self, specs: list[ToolSpec], mem: Memory) -> tuple[list[dict[str, Any]], str]:
        rng = self.rng
        r = rng.random()
        if r < 0.25:
            g = rng.choice(P.GREETINGS)
            return [
                {"role": "user", "content": g},
                {"role": "assistant", "content": P.GREETING_REPLY},
            ], "greeting"
        kws = set().union(*(t.keywords() for t in specs)) if specs else set()
        for _ in range(20):
            if not specs and r < 0.4 and self.families:
                # a tool-like request with no tool offered is plain chat
                t = make_family_tool(rng, rng.choice(self.families))
                text = self.ask(t)[0]
            elif (not mem.stored or not any(t.name == "read_content" for t in specs)) and r < 0.47:
                text = rng.choice(self.follow_ups)
            else:
                text = self.chat_sentence()
            words = {w.strip(".,?!\"'").lower() for w in text.split()}
            if not words & kws:
                break
        return [
            {"role": "user", "content": text},
            {"role": "assistant", "content": SAID_PREFIX + text},
        ], "said"

    def ep_extract(self) -> tuple[list[dict[str, Any]], str]:
        rng = self.rng
        facts: list[str] = []
        prefs: list[str] = []
        decs: list[str] = []
        sents: list[str] = []
        for _ in range(rng.randint(1, 5)):
            r = rng.random()
            if r < 0.22:
                s = rng.choice(
                    [
                        f"My name is {self.person()}.",
                        f"I live in {self.city()}.",
                        f"I work as a {self.pick(P.JOBS)}.",
                        f"My {self.pick(P.ATTRS)} is {self.word()}.",
                    ]
                )
                facts.append(s)
            elif r < 0.44:
                s = rng.choice(
                    [
                        f"I prefer {self.pick(P.DRINKS)}.",
                        f"I like {self.pick(P.HOBBIES)}.",
                        f"I love {self.pick(P.FOODS)}.",
                        f"I hate {self.pick(P.DISLIKES)}.",
                        f"I prefer {self.pick(P.FOODS)} for {self.pick(P.MEALS)}.",
                    ]
                )
                prefs.append(s)
            elif r < 0.62:
                s = rng.choice(
                    [
                        f"We decided to {self.pick(P.DECISION_ACTIONS)} the {self.pick(P.TOPICS)}.",
                        f"Let's go with {self.pick(P.OPTIONS)}.",
                        f"We agreed to meet on {self.pick(P.DAYS)}.",
                    ]
                )
                decs.append(s)
            else:
                s = rng.choice(
                    [
                        self.chat_sentence().replace("\n", " ").split("?")[0] + "?",
                        f"I went to {self.city()} {self.pick(P.CHAT_TIMES)}.",
                        "Can you help me plan a trip?",
                        "The weather is nice today.",
                        "Thanks for the help.",
                        f"What time is it in {self.city()}?",
                    ]
                )
            if rng.random() < 0.05:
                s = s[0].lower() + s[1:]
            sents.append(s)
        user = " ".join(sents)
        asst = rng.choice(
            [
                f"{SAID_PREFIX}{user}",
                "OK.",
                "Noted.",
                "Sure, I can help with that.",
                "I like that idea.",
                "Got it, thanks!",
                P.GREETING_REPLY,
                f"Nice to meet you, {self.person()}.",
            ]
        )
        content = f"user: {user}\nassistant: {asst}"
        ans = json.dumps(
            {"facts": facts, "preferences": prefs, "decisions": decs}, ensure_ascii=False
        )
        return [
            {"role": "system", "content": EXTRACT_SYSTEM},
            {"role": "user", "content": content},
            {"role": "assistant", "content": ans},
        ], "extract"

    # ---------------------------------------------------------------- examples
    KINDS: ClassVar[list[str]] = [
        "greeting_or_said",
        "tool",
        "tool_parallel",
        "recall",
        "content",
        "extract",
    ]
    WEIGHTS: ClassVar[list[float]] = [0.18, 0.26, 0.1, 0.2, 0.13, 0.13]

    def example(self, kind: str | None = None) -> Example:
        rng = self.rng
        kind = kind or rng.choices(self.KINDS, self.WEIGHTS)[0]
        if kind == "extract":
            msgs, k = self.ep_extract()
            return Example(msgs, None, k)
        mem = self.memory(want_lines=kind == "recall", want_stored=kind == "content")
        with_tools = kind in ("tool", "tool_parallel") or rng.random() < 0.6
        n_tools = rng.choice([1, 1, 2, 2, 2, 3, 3, 4, 5, 7]) if with_tools else 0
        rc = kind == "content" or (with_tools and rng.random() < 0.3)
        if kind == "content" and not mem.stored:
            self.add_stored(mem, rng.randint(1, 3))
        specs = self.tool_specs(n_tools, rc) if (n_tools or rc) else []
        if kind in ("tool", "tool_parallel") and not any(t.name != "read_content" for t in specs):
            specs = self.tool_specs(max(1, n_tools), rc)
        history: list[dict[str, Any]] = []
        for _ in range(rng.choice([0, 0, 1, 1, 2, 2, 3])):
            history += self.episode(rng.choice(["plain", "tool", "recall", "content"]), specs, mem)
        final = self.episode(kind, specs, mem)
        system = {"role": "system", "content": mem.system()}
        msgs = ([system] if rng.random() < 0.98 else []) + history + final
        tools_json = [t.json(rng) for t in specs] or None
        last_user = next(m for m in final if m["role"] == "user")["content"]
        return Example(msgs, tools_json, self.last_kind, {"request": last_user})

    def episode(self, kind: str, specs: list[ToolSpec], mem: Memory) -> list[dict[str, Any]]:
        has_tools = any(t.name != "read_content" for t in specs)
        has_rc = any(t.name == "read_content" for t in specs)
        if kind in ("tool", "tool_parallel") and has_tools:
            msgs, self.last_kind = self.ep_tool(specs, kind == "tool_parallel")
        elif kind == "content" and has_rc and mem.stored:
            msgs, self.last_kind = self.ep_content(mem, specs)
        elif kind == "recall":
            msgs, self.last_kind = self.ep_recall(mem)
        else:
            msgs, self.last_kind = self.ep_plain(specs, mem)
        return msgs
