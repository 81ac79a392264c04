"""Recurgent's prompt-construction cases, in agrun's terms: what the model is sent is the
`ModelRequest` a provider receives (one system message, then the window, and the tools)."""

from __future__ import annotations

from _peers import agent

from agrun import FunctionSkill
from agrun.chat import ModelRequest

PEER_REPO = "kulesh/recurgent"
PEER_FILE = "runtimes/ruby/spec/agent/prompt_construction_spec.rb"


def system(request: ModelRequest) -> str:
    assert request.messages[0].role == "system"
    return request.messages[0].content or ""


async def test_the_identity_heads_the_system_prompt() -> None:
    """Case "includes identity in system prompt"."""
    runtime, provider, _ = agent(lambda request: "ok", system_prompt="You are file_inspector.")
    await runtime.run("read README.md")
    assert system(provider.requests[0]).startswith("You are file_inspector.")


async def test_the_stored_content_and_its_tool_are_offered() -> None:
    """Case "includes content continuity helper guidance in system prompt"."""
    runtime, provider, _ = agent(lambda request: "the first answer", content_store=True)
    await runtime.run("first")
    await runtime.run("format previous response")
    first, second = provider.requests
    assert "## Stored content" not in system(first)
    assert "## Stored content" in system(second) and "- content:" in system(second)
    assert "read_content" in {t.name for t in second.tools}


async def test_what_is_remembered_is_in_the_prompt() -> None:
    """Case "includes context state in user prompt" (agrun writes it in the system
    message's evidence sections)."""
    runtime, provider, _ = agent(lambda request: "ok")
    await runtime.run("remember: the value is 5")
    await runtime.run("increment")
    assert "the value is 5" in system(provider.requests[-1])


async def test_the_known_tools_are_offered_with_their_purpose() -> None:
    """Case "includes known tools in system prompt after delegation" (agrun offers them as
    the request's tools)."""
    fetcher = FunctionSkill(
        "web_fetcher", lambda i, c, h: "", description="fetch and extract content from urls"
    )
    runtime, provider, _ = agent(lambda request: "ok", fetcher)
    await runtime.run("plan")
    (tool,) = provider.requests[0].tools
    assert (tool.name, tool.description) == ("web_fetcher", "fetch and extract content from urls")


async def test_each_tool_is_sent_with_its_schema() -> None:
    """Case "sends tool schema via provider"."""
    runtime, provider, _ = agent(
        lambda request: "ok", FunctionSkill("calc", lambda i, c, h: "", description="Calculates.")
    )
    await runtime.run("something")
    (tool,) = provider.requests[0].tools
    assert tool.parameters["type"] == "object"
    assert tool.parameters["required"] == ["input"]
