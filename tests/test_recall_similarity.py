"""Recall's opt-in embedder (issue 11.4), on a real embedding model: the committed MiniLM
GGUF behind llama-server on 127.0.0.1 (``/v1/embeddings``), reached by the OpenAI adapter.

What is checked: a turn that answers in other words than the question is recalled with the
embedder and not without it; each turn is embedded once, however many turns follow; with
redaction on, no secret reaches the embedder; an embedder that cannot be reached costs the
turn nothing. The model's vectors are asserted only through what recall does with them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from agrun.chat import ModelRequest
from agrun.testing import ScriptedProvider
from conftest import make_runtime

pytestmark = pytest.mark.cpython_only

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from llama_process import embedding_server_running  # noqa: E402
from paraphrase_chat import EVIDENCE, FILLER, QUESTION  # noqa: E402

SECRET = "sk-proj-Zq8Wm3Kp7Rt2Yx9Lb4Nc6Vd1Hj5Fg0"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with embedding_server_running() as url:
        yield url


class Recording:
    """The real embedder, noting every text it is given."""

    def __init__(self, url: str) -> None:
        from agrun.adapters.openai import llama_server

        self._inner = llama_server(url, max_retries=0)
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return await self._inner.embed(texts)


def reply(request: ModelRequest) -> str:
    return "I see."


async def chat(embedder: Any, turns: int = 24) -> tuple[Any, ScriptedProvider]:
    """A runtime whose window is too small for the evidence turn by the time it is asked."""
    provider = ScriptedProvider(reply)
    runtime = make_runtime(
        provider=provider, embedder=embedder, context_window=700, max_reply_tokens=100,
        memory_extraction="off",
    )  # fmt: skip
    await runtime.run(EVIDENCE)
    for n in range(turns):
        await runtime.run(FILLER[n % len(FILLER)])
    return runtime, provider


def recalled(runtime: Any) -> list[str]:
    pack = runtime.last_pack
    return [e.sources[0] for e in pack.entries() if e.kind == "recalled_turn"]


async def test_a_paraphrase_is_recalled_with_the_embedder_and_not_without(server: str) -> None:
    from agrun.adapters.openai import llama_server

    runtime, provider = await chat(llama_server(server))
    result = await runtime.run(QUESTION)
    evidence = runtime.history[0].id
    assert evidence in recalled(runtime)
    system = provider.requests[-1].messages[0].content or ""
    assert "Scout weighs 10 kilos" in system.split("## Recalled turns", 1)[1]
    assert any("close in meaning" in step.detail for step in result.steps)

    bare, _ = await chat(None)
    await bare.run(QUESTION)
    assert bare.history[0].id not in recalled(bare)


async def test_each_turn_is_embedded_once(server: str) -> None:
    embedder = Recording(server)
    runtime, _ = await chat(embedder, turns=3)
    # Each model turn embeds the turns it has not seen and its own request.
    seen = len(embedder.texts)
    await runtime.run(QUESTION)
    # The previous turn's two messages were embedded after its answer (attribution: they
    # were in its pack), everything older before: recall sends only the request.
    assert embedder.texts[seen] == QUESTION
    assert embedder.texts.count(EVIDENCE) == 1
    assert len(embedder.texts) == len(set(embedder.texts))


async def test_no_secret_reaches_the_embedder(server: str) -> None:
    embedder = Recording(server)
    runtime, _ = await chat(embedder, turns=1)
    await runtime.run(f"my key is {SECRET}, keep it safe")
    await runtime.run(QUESTION)
    assert embedder.texts and not any(SECRET in text for text in embedder.texts)


async def test_an_embedder_that_fails_costs_the_turn_nothing() -> None:
    from agrun.adapters.openai import llama_server

    with embedding_server_running() as url:
        pass  # the server is gone: its port now refuses
    runtime, _ = await chat(llama_server(url, max_retries=0), turns=1)
    result = await runtime.run(QUESTION)
    assert result.ok and result.output == "I see."
    assert any("the embedder failed" in step.detail for step in result.steps)
    assert len(runtime.history) == 6


async def test_attribution_marks_what_the_answer_says_in_other_words(server: str) -> None:
    """Issue 22.2: with the embedder, an entry the answer restates in other words is marked
    used by ``similarity``, one about something else is not (MiniLM's own vectors)."""
    from agrun.adapters.openai import llama_server
    from agrun.trace import SIMILARITY

    plane, hotel = "The plane departs at 09:00 from gate 4.", "I booked a hotel near the station."

    def answer(request: ModelRequest) -> str:
        asked = request.messages[-1].content or ""
        return "Your flight leaves at nine in the morning." if "When" in asked else "Noted."

    runtime = make_runtime(
        provider=ScriptedProvider(answer), embedder=llama_server(server, max_retries=0),
        memory_extraction="off",
    )  # fmt: skip
    for said in (plane, hotel, "When is it?"):
        result = await runtime.run(said)
    attribution = runtime.why(result.state.run_id).attribution
    assert attribution is not None and attribution.similarity_threshold == SIMILARITY
    marks = {e.id: e for e in attribution.entries}
    by_text = {m.content: marks[f"message:{m.id}"] for m in runtime.history if m.role == "user"}
    assert by_text[plane].used and "similarity" in by_text[plane].via
    assert not by_text[hotel].used
    assert (by_text[hotel].similarity or 0) < SIMILARITY <= (by_text[plane].similarity or 0)
