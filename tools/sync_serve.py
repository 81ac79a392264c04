"""The sync server (agrun.adapters.sync_server) on uvicorn in a child process, for tests:
``with serving_sync(conninfo, origins) as url: ...`` waits until it accepts connections."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving_sync(
    conninfo: str, origins: Sequence[str] = (), *, timeout_s: float = 60
) -> Iterator[str]:
    """Run the sync server on ``conninfo`` (allowing ``origins``); yield its URL."""
    port = free_port()
    command = [sys.executable, "-m", "agrun.adapters.sync_server", conninfo, "--port", str(port)]
    for origin in origins:
        command += ["--allow-origin", origin]
    server = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(ROOT / "py")})
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the sync server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)
