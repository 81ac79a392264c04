"""<agrun-chat>'s words in one table per language (web/widget/words.js, issue 23.8): every
language has exactly English's words, a widget with lang="es" shows Spanish everywhere (shell,
empty state, a turn's notes and actions, an error, the three panels, aria labels) with no
English left, and a dir="rtl" on the element lays it out right to left.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from widget_fixtures import chat

# Every key of each table against English's, through nested tables; a word that takes values
# (a function) must take as many in every language.
KEYS = """async () => {
    const { LANGUAGES, wordsFor, directionFor } = await import('/widget/words.js');
    const shape = (table, prefix = '') => Object.entries(table).flatMap(([key, value]) =>
        value && typeof value === 'object' ? shape(value, `${prefix}${key}.`)
        : [`${prefix}${key}:${typeof value}${typeof value === 'function' ? value.length : ''}`]);
    const blank = (table) => Object.entries(table).flatMap(([key, value]) =>
        value && typeof value === 'object' ? blank(value) : (value === '' ? [key] : []));
    return {
        languages: Object.fromEntries(Object.entries(LANGUAGES).map(([lang, t]) => [lang, shape(t)])),
        blank: Object.values(LANGUAGES).flatMap(blank),
        picked: ['es-MX', 'ES', 'fr', '', 'en-GB'].map((tag) =>
            Object.entries(LANGUAGES).find(([, t]) => t === wordsFor(tag))[0]),
        directions: ['ar', 'he-IL', 'es', 'en'].map(directionFor),
    };
}"""

# Everything a person can read or hear in the widget: the shadow root's rendered text and
# the attributes a screen reader says.
SHOWN = """() => {
    const root = document.querySelector('agrun-chat').shadowRoot;
    const attributes = [...root.querySelectorAll('*')].flatMap((el) =>
        ['aria-label', 'placeholder', 'title', 'aria-valuetext'].map((name) => el.getAttribute(name)))
        .filter(Boolean);
    return [root.querySelector('.frame').innerText, ...attributes].join('\\n');
}"""

# The page's provider: Spanish answers, and a failure for a message that says "caído".
PROVIDER = """async (request, { onToken }) => {
    const said = request.messages.findLast((m) => m.role === 'user').content.split('\\n').at(-1);
    if (said.includes('caído')) throw new Error('el modelo no responde');
    onToken('Dijiste: ' + said);
    return { text: 'Dijiste: ' + said };
}"""

# English words that no Spanish widget shows (the names agrun, API, URL, GGUF, HTTP and
# OpenAI aside), besides every English sentence of the table itself.
ENGLISH = [
    "the",
    "and",
    "Send",
    "Stop",
    "Ready",
    "Memory",
    "Settings",
    "Close",
    "Forget",
    "Retry",
    "Edit",
    "Copy",
    "model",
    "answer",
    "Loading",
    "Global",
    "Apply",
    "Why",
    "Say",
]


def english_strings(page: Page) -> list[str]:
    """English's words that Spanish says differently (its functions aside)."""
    found: dict[str, list[str]] = page.evaluate(
        """async () => {
            const { LANGUAGES: { en, es } } = await import('/widget/words.js');
            const pairs = (a, b) => Object.entries(a).flatMap(([key, value]) =>
                value && typeof value === 'object' ? pairs(value, b[key]) : [[value, b[key]]]);
            const strings = pairs(en, es).filter(([e]) => typeof e === 'string');
            return { differ: strings.filter(([e, s]) => e !== s).map(([e]) => e),
                     same: strings.filter(([e, s]) => e === s).map(([e]) => e) };
        }"""
    )
    # A word Spanish shares with English is one, not a translation forgotten.
    assert found["same"] == ["Error"]
    differ: list[str] = found["differ"]
    return differ


def open_spanish(page: Page, attributes: str = 'lang="es"') -> None:
    """dist/index.html with its <agrun-chat> given `attributes`, ready, with PROVIDER."""

    def rewrite(route: Any) -> None:
        body = route.fetch().text().replace("<agrun-chat ", f"<agrun-chat {attributes} ", 1)
        route.fulfill(body=body, content_type="text/html")

    page.route("**/index.html", rewrite)
    page.goto("/index.html")
    expect(chat(page).locator("#status")).to_have_text("Listo")


def say_es(page: Page, text: str, answers: int) -> None:
    widget = chat(page)
    widget.locator("#input").fill(text)
    widget.locator("#input").press("Enter")
    expect(
        widget.locator("#transcript li.agent .parts, #transcript li.user .turn-note")
    ).to_have_count(answers)
    expect(widget.locator("#status")).to_have_text("Listo")


def test_every_language_has_exactly_englishs_words(page: Page) -> None:
    page.goto("/blank.html")
    got = page.evaluate(KEYS)
    english = got["languages"].pop("en")
    assert len(english) > 100  # the whole widget's words, not only the conversation's
    assert got["languages"], "English and at least one more language"
    for lang, keys in got["languages"].items():
        assert sorted(set(english) - set(keys)) == [], f"{lang} lacks these"
        assert sorted(set(keys) - set(english)) == [], f"{lang} has these English has not"
    assert got["blank"] == []
    assert got["picked"] == ["es", "es", "en", "en", "en"]
    assert got["directions"] == ["rtl", "rtl", "ltr", "ltr"]


@pytest.mark.parametrize("viewport", ["phone"], indirect=True)
def test_a_spanish_widget_shows_no_english(chat_page: Page, viewport: str) -> None:
    page = chat_page
    open_spanish(page)
    widget = chat(page)
    page.evaluate(
        f"async () => {{ const el = document.querySelector('agrun-chat'); el.provider = {PROVIDER}; await el.ready; }}"
    )
    expect(widget.locator("#status")).to_have_text("Listo")
    expect(widget.locator("#send")).to_have_text("Enviar")
    expect(widget.locator("#empty")).to_contain_text(
        "Las respuestas vienen del modelo propio de la página"
    )
    shown = [page.evaluate(SHOWN)]

    say_es(page, "hola", 1)
    expect(widget.locator("li.agent [data-action]")).to_have_text(
        ["Copiar", "Por qué", "Volver a generar"]
    )
    say_es(page, "el servidor está caído", 2)
    expect(widget.locator("li.user.failed .turn-note")).to_have_text(
        "Sin respuesta: El modelo falló."
    )
    expect(widget.locator("li.user.failed summary")).to_have_text("Detalles")
    shown.append(page.evaluate(SHOWN))

    for name, heading in [
        ("chats", "Conversaciones"),
        ("memory", "Memoria"),
        ("why", "Por qué esta respuesta"),
        ("settings", "Ajustes del modelo"),
    ]:
        widget.locator(f"#{name}-toggle").click()
        expect(widget.locator(f"#{name}-heading")).to_have_text(heading)
        if name == "memory":
            widget.locator("#global-switch").click()
            expect(widget.locator("#announce")).to_have_text(
                re.compile("La memoria global está (activada|desactivada).")
            )
        if name == "settings":
            widget.locator("#provider-local").check()
            widget.locator("#setting-localUrl").fill("")
            widget.locator("#settings-apply").click()
            expect(widget.locator("#settings-status")).to_have_text(
                "Indica la URL del servidor, empezando por http:// o https://."
            )
        shown.append(page.evaluate(SHOWN))
        widget.locator(f"[data-close={name}]").click()

    # The settings' placeholders are example URLs and paths (models/model.gguf): not words.
    text = re.sub(r"\S*/\S*", "", "\n".join(shown))
    leaks = [s for s in english_strings(page) if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text)]
    leaks += [w for w in ENGLISH if re.search(rf"\b{w}\b", text)]
    assert leaks == [], text


@pytest.mark.parametrize("viewport", ["desktop"], indirect=True)
def test_a_right_to_left_widget_by_its_own_dir(chat_page: Page, viewport: str) -> None:
    page = chat_page
    open_spanish(page, 'lang="es" dir="rtl"')
    widget = chat(page)
    page.evaluate(
        f"async () => {{ const el = document.querySelector('agrun-chat'); el.provider = {PROVIDER}; await el.ready; }}"
    )
    assert page.evaluate("getComputedStyle(document.documentElement).direction") == "ltr"
    assert widget.locator(".frame").evaluate("(el) => getComputedStyle(el).direction") == "rtl"
    say_es(page, "hola", 1)
    user, agent = widget.locator("#messages").evaluate(
        """(list) => new Promise((ok) => requestAnimationFrame(() =>
            ok([...list.children].map((item) => item.getBoundingClientRect().x))))"""
    )
    assert user < agent, (user, agent)  # the person's messages keep to the end side: the left
    # The toolbar starts at the right, the send button sits left of the box.
    send, box = (widget.locator(s).bounding_box() for s in ("#send", "#input"))
    assert send is not None and box is not None and send["x"] < box["x"]


def test_the_language_comes_from_the_element_its_ancestors_or_the_page(page: Page) -> None:
    page.goto("/blank.html")
    sends = page.evaluate(
        """async () => {
            await import('/widget/agrun-chat.js');
            document.documentElement.lang = 'es-MX';
            const made = (lang, parent = document.body) => {
                const el = document.createElement('agrun-chat');
                el.setAttribute('storage', 'memory');
                if (lang) el.setAttribute('lang', lang);
                parent.append(el);
                return el.shadowRoot.getElementById('send').textContent;
            };
            const english = Object.assign(document.createElement('div'), { lang: 'en' });
            document.body.append(english);
            return [made(null), made('fr'), made(null, english), made('en-US')];
        }"""
    )
    # The page's es-MX; French, which has no table, as English; an English ancestor; its own.
    assert sends == ["Enviar", "Send", "Send", "Send"]
