"""The walking skeleton in a real browser: the chat page answers, offline, from its own origin."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Route, expect

from conftest import DIST, PageProblems, boot_runtime


def create_runtime_error(page: Page, options: str = "") -> str:
    """Call createRuntime on a blank page; the error it throws as 'Name: message'."""
    page.goto("/blank.html")
    return page.evaluate(
        f"""async () => {{
            const {{ createRuntime }} = await import('/agrun.js');
            try {{ await createRuntime({options}); return 'no error'; }}
            catch (e) {{ return e.name + ': ' + e.message; }}
        }}"""
    )


def test_chat_page_answers(page: Page) -> None:
    page.goto("/index.html")
    expect(page.locator("#status")).to_have_text("Ready")
    page.fill("#input", "hello from the browser")
    page.click("#send")
    agent = page.locator("#transcript li.agent .parts")
    expect(agent).to_have_count(1)
    expect(agent).to_contain_text("hello from the browser")
    expect(page.locator("#transcript li.user .said")).to_have_text("hello from the browser")


def test_create_runtime_returns_plain_camel_case_objects(page: Page) -> None:
    stages: list[str] = []
    page.expose_function("recordStage", lambda stage: stages.append(stage))
    boot_runtime(page, "{ onProgress: (p) => window.recordStage(p.stage) }")
    result = page.evaluate(
        """async () => {
            const r = await window.rt.run('hello');
            return { output: r.output, runId: r.state.runId, status: r.state.status,
                     plain: Object.getPrototypeOf(r) === Object.prototype
                            && Object.getPrototypeOf(r.state) === Object.prototype };
        }"""
    )
    assert result["output"] == "echo: hello"
    assert result["status"] == "succeeded"
    assert result["runId"].startswith("run-")
    assert result["plain"] is True
    assert {"pyodide", "packages", "runtime"} <= set(stages)


def test_unknown_option_lists_the_accepted_ones(page: Page) -> None:
    message = create_runtime_error(page, "{ colour: 'red' }")
    assert message.startswith("AgrunConfigError: createRuntime: unknown option 'colour'")
    assert "indexURL" in message and "onProgress" in message


def test_non_string_input_is_a_clear_error(page: Page) -> None:
    boot_runtime(page)
    messages = page.evaluate(
        """async () => {
            const out = [];
            for (const bad of [42, null, undefined, {text: 'hi'}]) {
                try { await window.rt.run(bad); out.push('no error'); }
                catch (e) { out.push(e.name + ': ' + e.message); }
            }
            return out;
        }"""
    )
    assert len(messages) == 4
    for message in messages:
        assert message.startswith("AgrunConfigError: run() takes a string input")


@pytest.mark.parametrize(
    ("route", "suffix"),
    [
        ("**/pyodide/python_stdlib.zip", "/pyodide/python_stdlib.zip: HTTP 404"),
        ("**/pyodide/pydantic-*.whl", ".whl: HTTP 404"),
    ],
)
def test_a_missing_vendored_file_is_named_by_its_url(
    page: Page, problems: PageProblems, route: str, suffix: str
) -> None:
    page.route(route, lambda r: r.fulfill(status=404))
    # Pyodide logs the failed fetch and rethrows it unhandled beside rejecting its boot.
    problems.console_errors_expected = True
    problems.expected_page_errors.append(route.split("/")[-1].split("*")[0])
    message = create_runtime_error(page)
    assert message.startswith("AgrunBootError: agrun could not load http://"), message
    assert message.endswith(suffix), message


def test_a_tampered_wheel_fails_the_boot_loudly(page: Page, problems: PageProblems) -> None:
    # The lock's sha256 no longer matches: Pyodide only reports it; agrun must refuse to start.
    wheel = next((DIST / "pyodide").glob("annotated_types-*.whl")).read_bytes()

    def tampered(route: Route) -> None:
        route.fulfill(status=200, body=wheel[:-1] + bytes([wheel[-1] ^ 0xFF]))

    page.route("**/pyodide/annotated_types-*.whl", tampered)
    problems.console_errors_expected = True
    problems.expected_page_errors.append("annotated")
    message = create_runtime_error(page)
    assert message.startswith("AgrunBootError: agrun could not start the packages"), message
    assert "annotated-types" in message
