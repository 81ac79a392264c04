"""Ready-made providers for common servers, each on the environment's HTTP stack."""

from __future__ import annotations

import sys

from ..._base import ConfigError
from ._provider import OpenAIProvider
from ._transport import Transport

__all__ = ["default_transport", "hosted", "llama_server", "ollama"]

# A local model on a CPU may think for minutes before its first token; a hosted API that
# says nothing for a minute is in trouble. The whole call gets more than the first wait.
LOCAL_TIMEOUT_S = 600.0
LOCAL_IDLE_TIMEOUT_S = 300.0
HOSTED_TIMEOUT_S = 300.0
HOSTED_IDLE_TIMEOUT_S = 60.0


def default_transport() -> Transport:
    """The environment's HTTP stack: the browser's ``fetch`` inside Pyodide, else httpx.

    Raises:
        ConfigError: in CPython without httpx (install ``agrun[http]``).
    """
    if sys.platform == "emscripten":
        from ..pyodide.fetch import FetchTransport

        return FetchTransport()
    try:
        from ._httpx import HttpxTransport
    except ImportError:
        raise ConfigError(
            "the OpenAI-compatible provider needs httpx in CPython: pip install 'agrun[http]'"
        ) from None
    return HttpxTransport()


def llama_server(
    url: str = "http://127.0.0.1:8080",
    model: str | None = None,
    *,
    transport: Transport | None = None,
    timeout_s: float = LOCAL_TIMEOUT_S,
    idle_timeout_s: float = LOCAL_IDLE_TIMEOUT_S,
    max_retries: int = 3,
    context_window: int | None = None,
) -> OpenAIProvider:
    """llama.cpp's ``llama-server`` at ``url`` (its ``/v1`` API; the model it loaded)."""
    return OpenAIProvider(
        f"{url.rstrip('/')}/v1",
        model,
        transport=transport or default_transport(),
        timeout_s=timeout_s,
        idle_timeout_s=idle_timeout_s,
        max_retries=max_retries,
        context_window=context_window,
    )


def ollama(
    url: str = "http://127.0.0.1:11434",
    *,
    model: str,
    transport: Transport | None = None,
    timeout_s: float = LOCAL_TIMEOUT_S,
    idle_timeout_s: float = LOCAL_IDLE_TIMEOUT_S,
    max_retries: int = 3,
    context_window: int | None = None,
) -> OpenAIProvider:
    """Ollama at ``url``, through its OpenAI-compatible ``/v1`` API; ``model`` is required
    (Ollama serves many)."""
    return OpenAIProvider(
        f"{url.rstrip('/')}/v1",
        model,
        transport=transport or default_transport(),
        timeout_s=timeout_s,
        idle_timeout_s=idle_timeout_s,
        max_retries=max_retries,
        context_window=context_window,
    )


def hosted(
    base_url: str,
    model: str,
    api_key: str,
    *,
    transport: Transport | None = None,
    timeout_s: float = HOSTED_TIMEOUT_S,
    idle_timeout_s: float = HOSTED_IDLE_TIMEOUT_S,
    max_retries: int = 3,
    context_window: int | None = None,
) -> OpenAIProvider:
    """A hosted OpenAI-style API (``https://api.openai.com/v1`` and the like) with a key.

    Raises:
        ConfigError: ``api_key`` is empty or blank. A hosted API answers every call without
            one with a 401, so the mistake is named here instead of at the first turn
            (a local server that needs no key is `llama_server` or `ollama`).
    """
    if not isinstance(api_key, str) or not api_key.strip():
        raise ConfigError(
            "hosted() needs an api_key: a hosted API refuses every call without one "
            "(for a local server without a key, use llama_server() or ollama())"
        )
    return OpenAIProvider(
        base_url,
        model,
        api_key,
        transport=transport or default_transport(),
        timeout_s=timeout_s,
        idle_timeout_s=idle_timeout_s,
        max_retries=max_retries,
        context_window=context_window,
    )
