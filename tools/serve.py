"""A static file server for dist/ with the MIME types Pyodide needs.

Browsers refuse to stream-compile a .wasm served as anything but application/wasm, and
refuse an ES module served as anything but JavaScript; Python's defaults miss both on some
systems, so they are set here. Used by ``./build.sh serve`` and by the e2e fixtures.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import threading
from pathlib import Path
from typing import ClassVar

MIME_TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".html": "text/html; charset=utf-8",
}


class StaticHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        **MIME_TYPES,
    }

    def log_message(self, format: str, *args: object) -> None:
        if self.server.verbose:  # type: ignore[attr-defined]
            super().log_message(format, *args)


def make_server(
    directory: Path,
    host: str = "127.0.0.1",
    port: int = 0,
    verbose: bool = False,
    types: dict[str, str] | None = None,
) -> http.server.ThreadingHTTPServer:
    """A server for ``directory`` on ``host:port`` (port 0 picks a free one); not started.
    ``types`` overrides the MIME type of some extensions (a test serving as a careless host
    does)."""
    handler_class = StaticHandler
    if types:
        handler_class = type(
            "RetypedHandler",
            (StaticHandler,),
            {"extensions_map": {**StaticHandler.extensions_map, **types}},
        )
    handler = functools.partial(handler_class, directory=str(directory))
    server = http.server.ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    server.verbose = verbose  # type: ignore[attr-defined]
    return server


def serve_in_background(
    directory: Path, types: dict[str, str] | None = None
) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Start a quiet server on a free port in a thread; returns it and its base URL."""
    server = make_server(directory, types=types)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    server = make_server(args.directory, args.host, args.port, verbose=True)
    print(f"agrun: serving {args.directory} on http://{args.host}:{args.port}/", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
