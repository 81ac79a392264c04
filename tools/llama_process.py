"""llama-server running the test model on 127.0.0.1, for tests and benchmarks.

    with llama_server_running(window=2048) as url:   # "http://127.0.0.1:PORT"
        ...
    with embedding_server_running() as url:            # models/minilm-l6-q8.gguf
        ...

The binary is the one `tools/llama_server.sh` builds from the pinned llama.cpp source (a
no-op once built); the model is the committed models/agrun-tiny.gguf. The server is started
with `--jinja` (the GGUF's chat template, tool calls parsed from it) and stopped when the
block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "agrun-tiny.gguf"
EMBEDDING_MODEL = ROOT / "models" / "minilm-l6-q8.gguf"


def server_binary() -> str:
    """The path of the built llama-server (building it first if needed)."""
    built = subprocess.run(
        [str(ROOT / "tools" / "llama_server.sh")], check=True, capture_output=True, text=True
    )
    return built.stdout.strip()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def llama_server_running(
    window: int = 2048, model: Path = MODEL, extra: tuple[str, ...] = ()
) -> Iterator[str]:
    """The base URL of a llama-server serving ``model`` with a ``window``-token context."""
    port = _free_port()
    command = [server_binary(), "--jinja", "--no-repack", "-t", "1", "-c", str(window)]
    command += ["-m", str(model), "--host", "127.0.0.1", "--port", str(port), *extra]
    # Its log goes to a file: a pipe nobody drains fills after some hundred requests, and
    # llama-server then blocks on its next log line with a request open.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, process, log)
            yield url
        finally:
            process.kill()
            process.wait()


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            error = log.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"llama-server exited with {process.returncode}: {error}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"llama-server at {url} was not healthy within 60 s")


@contextlib.contextmanager
def embedding_server_running() -> Iterator[str]:
    """The base URL of a llama-server serving the committed MiniLM embedding model
    (``POST /v1/embeddings``, mean-pooled sentence vectors)."""
    # A batch as large as the context: a whole turn is embedded in one pass.
    extra = ("--embedding", "--pooling", "mean", "-b", "512", "-ub", "512")
    with llama_server_running(window=512, model=EMBEDDING_MODEL, extra=extra) as url:
        yield url
