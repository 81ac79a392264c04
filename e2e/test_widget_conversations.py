"""The widget's conversations (issue 23.6) in headless Chromium, by keyboard only: a new chat,
the list of conversations (open one, rename, delete after a confirmation), export then
import, and all of it surviving a reload; axe-core on the list, the rename form and the
confirmation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from widget_fixtures import (
    chat,
    check_screenshot,
    focused,
    open_chat,
    say,
    serious_violations,
)


def tab_to(page: Page, name: str) -> None:
    """Press Tab until `name` (an id, as `focused` names it) has the focus."""
    seen = []
    for _ in range(30):
        if focused(page) == name:
            return
        page.keyboard.press("Tab")
        seen.append(focused(page))
    pytest.fail(f"Tab never reached {name}: {seen}")


def open_list(page: Page) -> Locator:
    """Open the conversations panel from its toolbar button, by keyboard."""
    widget = chat(page)
    widget.locator("#chats-toggle").focus()
    page.keyboard.press("Enter")
    expect(widget.locator("#chats-panel")).to_be_visible()
    assert focused(page) == "chats-heading"
    return widget


def close_list(page: Page) -> None:
    page.keyboard.press("Escape")
    expect(chat(page).locator("#chats-panel")).to_be_hidden()


def titles(widget: Locator) -> Locator:
    return widget.locator("#chats-content .chat-open")


def announced(widget: Locator) -> Locator:
    return widget.locator("#announce")


@pytest.mark.parametrize("viewport", ["phone"])
def test_conversations_by_keyboard_survive_a_reload(
    chat_page: Page, viewport: str, tmp_path: Path
) -> None:
    page = chat_page
    # File choosers are intercepted from the start: `expect_file_chooser` alone subscribes
    # fire-and-forget (playwright's channel_owner), so a key pressed at once can open the
    # native chooser unseen (two fresh CI runs timed out waiting here).
    page.on("filechooser", lambda chooser: None)
    widget = open_chat(page)
    say(page, "Plan a trip to Lisbon", 1)
    open_list(page)
    # Named after its first message, and marked as the open one.
    expect(titles(widget)).to_have_text(["Plan a trip to Lisbon"])
    expect(widget.locator('.chat-open[aria-current="true"]')).to_have_text("Plan a trip to Lisbon")

    # A new chat: an empty transcript, not listed until something is said in it.
    tab_to(page, "new-chat")
    page.keyboard.press("Enter")
    expect(announced(widget)).to_have_text("A new chat has started.")
    expect(widget.locator('.chat-open[aria-current="true"]')).to_have_count(0)
    close_list(page)
    expect(widget.locator("#transcript li")).to_have_count(0)
    say(page, "Buy groceries", 1)
    open_list(page)
    expect(titles(widget)).to_have_text(["Buy groceries", "Plan a trip to Lisbon"])

    # Open the other one.
    tab_to(page, "open-1")
    page.keyboard.press("Enter")
    expect(announced(widget)).to_have_text("Now in “Plan a trip to Lisbon”.")
    expect(widget.locator('.chat-open[aria-current="true"]')).to_have_text("Plan a trip to Lisbon")
    expect(widget.locator("#transcript li.user").first).to_contain_text("Plan a trip to Lisbon")

    # Rename it: the form takes the focus; Enter saves.
    tab_to(page, "rename-1")
    page.keyboard.press("Enter")
    assert focused(page) == "rename-input"
    page.keyboard.press("Control+A")
    page.keyboard.type("Lisbon trip")
    page.keyboard.press("Enter")
    expect(announced(widget)).to_have_text("Renamed to “Lisbon trip”.")
    expect(titles(widget)).to_have_text(["Buy groceries", "Lisbon trip"])

    # Delete the other one: a confirmation first, with the focus on Cancel.
    tab_to(page, "delete-0")
    page.keyboard.press("Enter")
    assert focused(page) == "cancel-delete-0"
    expect(widget.locator("#chats-content .confirm")).to_contain_text("Buy groceries")
    page.keyboard.press("Shift+Tab")
    assert focused(page) == "confirm-delete-0"
    page.keyboard.press("Enter")
    expect(announced(widget)).to_have_text("Deleted “Buy groceries”.")
    # Announced once the panel is drawn again, with the focus already in place.
    assert focused(page) == "open-0"
    expect(titles(widget)).to_have_text(["Lisbon trip"])

    # A reload opens the same conversation, with its title.
    widget = open_chat(page)
    expect(widget.locator("#transcript li.user").first).to_contain_text("Plan a trip to Lisbon")
    open_list(page)
    expect(titles(widget)).to_have_text(["Lisbon trip"])
    expect(widget.locator('.chat-open[aria-current="true"]')).to_have_text("Lisbon trip")

    # Export it, delete it (a new chat opens), then import the file back.
    tab_to(page, "export-chat")
    with page.expect_download() as download:
        page.keyboard.press("Enter")
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    exported = json.loads(saved.read_text())
    assert exported["format"] == "agrun.session"
    assert "Plan a trip to Lisbon" in json.dumps(exported["session"]["turns"])
    tab_to(page, "delete-0")
    page.keyboard.press("Enter")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    expect(announced(widget)).to_have_text("Deleted “Lisbon trip”.")
    assert focused(page) == "new-chat"
    expect(titles(widget)).to_have_count(0)
    expect(widget.locator("#transcript li")).to_have_count(0)
    tab_to(page, "import-chat")
    with page.expect_file_chooser() as chooser:
        page.keyboard.press("Enter")
    chooser.value.set_files(str(saved))
    # An export carries no title: the imported chat is named after its first message again.
    expect(announced(widget)).to_have_text("Imported “Plan a trip to Lisbon”.")
    expect(titles(widget)).to_have_text(["Plan a trip to Lisbon"])
    expect(widget.locator('.chat-open[aria-current="true"]')).to_have_count(1)
    expect(widget.locator("#transcript li.user").first).to_contain_text("Plan a trip to Lisbon")

    # And that survives a reload too.
    widget = open_chat(page)
    expect(widget.locator("#transcript li.user").first).to_contain_text("Plan a trip to Lisbon")
    open_list(page)
    expect(titles(widget)).to_have_text(["Plan a trip to Lisbon"])


@pytest.mark.parametrize("mode", ["list", "rename", "confirm"])
def test_axe_finds_no_serious_violations_in_the_conversations_panel(
    chat_page: Page, viewport: str, mode: str
) -> None:
    page = chat_page
    widget = open_chat(page)
    say(page, "A first conversation with a long title " + "word" * 40, 1)
    open_list(page)
    # The list is drawn again once the turn is kept and the chat named after it.
    expect(titles(widget)).to_have_count(1)
    expect(titles(widget)).to_contain_text(["A first conversation with a long title"])
    if mode == "rename":
        widget.locator("#rename-0").press("Enter")
        expect(widget.locator("#rename-input")).to_be_focused()
    if mode == "confirm":
        widget.locator("#delete-0").press("Enter")
        expect(widget.locator("#confirm-delete-0")).to_be_visible()
    # The time of the last update changes from run to run: masked.
    check_screenshot(page, f"chats-{mode}-{viewport}", mask=[widget.locator(".chat-list .kind")])
    violations = serious_violations(page)
    assert violations == [], json.dumps(violations, indent=1)
