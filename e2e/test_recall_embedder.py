"""Recall's opt-in embedder through createRuntime in headless Chromium (issue 11.4): the
committed MiniLM GGUF run in the page by wllama (createWllamaEmbedder), the same model
behind llama-server reached with the browser's fetch ({ kind: 'openai' }), and a page
embedder called across from a runtime in a worker. A turn that answers in other words than
the question comes back only with the embedder; an embedder that fails costs no turn."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Route

from conftest import boot_runtime

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from llama_process import embedding_server_running
from paraphrase_chat import EVIDENCE, FILLER, QUESTION

DIST = Path(__file__).resolve().parent.parent / "dist"
MODEL = "models/minilm-l6-q8.gguf"
WLLAMA = (
    "(await import('/providers/wllama.js')).createWllamaEmbedder({ modelUrl: '/" + MODEL + "' })"
)
# A small window, so that the evidence turn lies far below it by the time it is asked.
OPTIONS = (
    "provider: async () => ({ text: 'I see.' }), contextWindow: 700, maxReplyTokens: 100, "
    "memoryExtraction: 'off'"
)
CHAT = """async ([evidence, filler, question]) => {
    await rt.run(evidence);
    for (let n = 0; n < 24; n++) await rt.run(filler[n % filler.length]);
    const asked = await rt.run(question);
    const pack = rt.lastPack();
    const recalled = Object.values(pack.layers).flat()
        .filter((e) => e.kind === 'recalled_turn').map((e) => e.sources[0]);
    return { ok: asked.state.status === 'succeeded', evidence: rt.history()[0].id, recalled,
             steps: asked.steps.map((s) => s.detail) };
}"""


@pytest.fixture(scope="module", autouse=True)
def _built() -> None:
    if not (DIST / MODEL).is_file():
        pytest.fail(f"dist/{MODEL} is missing: run ./build.sh first")


def chat(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(CHAT, [EVIDENCE, FILLER, QUESTION])
    assert result["ok"]
    return result


def test_the_page_runs_the_embedding_model_and_recall_finds_the_paraphrase(page: Page) -> None:
    boot_runtime(page, f"{{ {OPTIONS} }}")
    without = chat(page)
    assert without["evidence"] not in without["recalled"]
    boot_runtime(page, f"{{ embedder: {WLLAMA}, {OPTIONS} }}")
    found = chat(page)
    assert found["evidence"] in found["recalled"]
    assert any("close in meaning" in step for step in found["steps"])


def test_a_failing_page_embedder_costs_the_turn_nothing(page: Page) -> None:
    failing = "async () => { throw new Error('no model here'); }"
    boot_runtime(page, f"{{ embedder: {failing}, {OPTIONS} }}")
    result = chat(page)
    assert any(
        "the embedder failed" in step and "no model here" in step for step in result["steps"]
    )
    # A wrong answer (one vector for many texts) is refused the same way.
    boot_runtime(page, f"{{ embedder: async () => [[1, 0]], {OPTIONS} }}")
    result = chat(page)
    assert any("the embedder failed" in step for step in result["steps"])


def test_a_page_embedder_is_called_across_from_a_worker(page: Page) -> None:
    boot_runtime(page, f"{{ worker: true, embedder: {WLLAMA}, {OPTIONS} }}")
    result = chat(page)
    assert result["evidence"] in result["recalled"]


@pytest.fixture(scope="module")
def embedding_url() -> Iterator[str]:
    with embedding_server_running() as url:
        yield url


def test_an_embeddings_server_reached_with_fetch(page: Page, embedding_url: str) -> None:
    def through(route: Route) -> None:
        route.continue_()

    # Registered after the conftest guard, so tried first; every other host is still refused.
    page.context.route(f"{embedding_url}/**", through)
    server = json.dumps({"kind": "openai", "baseUrl": f"{embedding_url}/v1"})
    boot_runtime(page, f"{{ embedder: {server}, {OPTIONS} }}")
    result = chat(page)
    assert result["evidence"] in result["recalled"]
