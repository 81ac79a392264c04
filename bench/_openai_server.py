"""An instant OpenAI-compatible server for the model-overhead benchmark, and dist/ beside it.

    .venv/bin/python bench/_openai_server.py [--root dist]      prints its URL, then serves

``POST .../v1/chat/completions`` answers at once, with no model time: a streamed reply
("Hello, world!" in four pieces, a finish chunk, a usage chunk, ``[DONE]``) written in one
send, or, for a request with a ``response_format`` (agrun's memory extraction), an empty
extraction. Every other GET is a file of ``--root``, so a page can call the API on its own
origin (no CORS preflight). Unlike tools/openai_double.py it keeps connections alive and
runs in its own process, so neither a new TCP connection per request nor the server's
Python work on the client's interpreter lock is part of what the benchmark times.
"""

from __future__ import annotations

import argparse
import http.server
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from serve import StaticHandler  # noqa: E402

MODEL = "bench-1"
PIECES = ["Hello", ", ", "world", "!"]
EXTRACTION = '{"facts": [], "preferences": [], "decisions": []}'
USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    payload = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": choices,
        "usage": usage,
    }
    data = f"data: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _stream(pieces: list[str]) -> bytes:
    """The whole chunked SSE body: each event in its own HTTP chunk, all sent at once."""
    done = b"data: [DONE]\n\n"
    return b"".join(
        [
            _chunk({"role": "assistant", "content": ""}),
            *(_chunk({"content": piece}) for piece in pieces),
            _chunk({}, finish="stop"),
            _chunk(None, usage=USAGE),
            f"{len(done):x}\r\n".encode() + done + b"\r\n",
            b"0\r\n\r\n",
        ]
    )


def pieces_of(count: int) -> list[str]:
    """The reply's pieces: the four above, or ``count`` words (``--pieces``), as a long reply
    streams a piece per token or two."""
    return PIECES if count == len(PIECES) else [f"w{n} " for n in range(count)]


TEXT_BODY = _stream(PIECES)
EXTRACTION_BODY = _stream([EXTRACTION])


class Handler(StaticHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the clients reuse their connections
    disable_nagle_algorithm = True

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def do_OPTIONS(self) -> None:
        self.send_response(204)
        self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
        asked = self.headers.get("Access-Control-Request-Headers", "content-type")
        self.send_header("Access-Control-Allow-Headers", asked)
        self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.split("?")[0].endswith("/chat/completions"):
            self.send_error(404)
            return
        body = json.loads(raw)
        stream = EXTRACTION_BODY if body.get("response_format") else TEXT_BODY
        head = (
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/event-stream\r\n"
            "Cache-Control: no-cache\r\n"
            "Access-Control-Allow-Origin: *\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        )
        # Head and body in one write: the reply is there the moment the request is read.
        self.wfile.write(head.encode() + stream)
        self.wfile.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, default=ROOT / "dist")
    parser.add_argument("--pieces", type=int, default=len(PIECES), help="the reply's pieces")
    args = parser.parse_args()
    global TEXT_BODY
    TEXT_BODY = _stream(pieces_of(args.pieces))
    handler = lambda *a: Handler(*a, directory=str(args.root))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.verbose = False  # type: ignore[attr-defined]  # StaticHandler's quiet switch
    host, port = server.server_address[:2]
    print(f"http://{host!s}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
