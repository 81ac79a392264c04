"""Context packs built through createRuntime in Chromium (issue 4)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from conftest import boot_runtime

REQUEST = """(() => {
    const messages = [];
    for (let i = 0; i < 40; i++) {
        messages.push({ id: 'm' + i, role: i % 2 ? 'assistant' : 'user',
                        content: 'message number ' + i + ' about the weather in Paris' });
    }
    messages.push({ id: 'frame', role: 'user', author: 'drop_notice', content: 'older turns dropped' });
    messages.splice(5, 0, { id: 'req', role: 'user', content: 'What is the forecast for Paris?' });
    return { messages, input: 'What is the forecast for Paris?', budget: { limit: 120 },
             direction: { activeGoal: 'plan a trip to Paris' } };
})()"""


def build(page: Page, request: str = REQUEST) -> Any:
    return page.evaluate(
        f"""() => {{ try {{ return window.rt.buildContext({request}); }}
                   catch (e) {{ return {{ error: e.name + ' ' + e.code + ': ' + e.message }}; }} }}"""
    )


def entry_ids(pack: Any) -> list[str]:
    return [entry["id"] for layer in pack["layers"].values() for entry in layer]


def test_pack_holds_the_budget_and_keeps_the_request_and_direction(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, "{ onEvent: (e) => window.events.push(e) }")
    pack = build(page)
    assert pack["budgetUsed"] <= pack["budgetLimit"] == 120
    assert set(pack["layers"]) >= {"L0", "L1", "L2", "L3", "L4"}
    # The request sits early in the history, so oldest-first trimming would drop it.
    assert pack["compressionMetadata"]["anchor"] == "req"
    assert "message:req" in entry_ids(pack)
    assert "direction:activeGoal" in entry_ids(pack)
    assert pack["compressionMetadata"]["dropped"], "a 120-token budget must drop something"
    kinds = [event["kind"] for event in page.evaluate("window.events")]
    assert kinds[0] == "ContextBuildingStarted" and kinds[-1] == "ContextPackBuilt"


def test_same_request_gives_the_same_pack(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page)
    first, second = build(page), build(page)
    first["metrics"].pop("durationMs", None)
    second["metrics"].pop("durationMs", None)
    assert first == second


def test_the_page_can_count_tokens_itself(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page, "{ countTokens: (text) => text.length }")
    pack = build(page)
    assert pack["compressionMetadata"]["tokenizer"] == "host countTokens"
    assert pack["budgetUsed"] <= 120
    used = sum(e["tokens"] for layer in pack["layers"].values() for e in layer)
    assert used <= 120


def test_bad_requests_are_typed_errors(warm_page: Page) -> None:
    page = warm_page
    boot_runtime(page)
    malformed = build(page, "{ messages: 'not a list', budget: { limit: 100 } }")
    assert malformed["error"].startswith("AgrunConfigError invalid_context_request")
    assert "messages" in malformed["error"]
    too_small = build(
        page,
        "{ messages: [{ id: 'r', role: 'user', content: 'a long request '.repeat(50) }],"
        " input: 'x', budget: { limit: 20 } }",
    )
    assert too_small["error"].startswith("AgrunError context_building_failed")
    not_plain = build(page, "{ messages: [], budget: { limit: 10 }, when: new Date() }")
    assert not_plain["error"].startswith("AgrunConfigError config_error: buildContext")
