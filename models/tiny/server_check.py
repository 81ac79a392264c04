"""Check agrun-tiny.gguf through a real llama-server, on held-out prompts.

    python models/tiny/server_check.py --server PATH/llama-server --model models/agrun-tiny.gguf

Starts llama-server on 127.0.0.1 (a free port, `--jinja --no-repack -t 1`), then checks:
its /apply-template output equals our jinja2 rendering, its /tokenize equals our tokenizer
(rebuilt from the GGUF), and /v1/chat/completions, streamed (SSE) and not, for every
behaviour: plain chat text, tool_calls parsed by the server (offered names, JSON arguments),
the answer after a `role: tool` message, recall, the read_content follow-up and the JSON
extraction under `response_format: json_schema`. Prints success rates as JSON.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tiny.cases import Case, cases_of, exact_ok, format_ok
from tiny.data import Generator
from tiny.tokenizer import from_gguf

EXTRACT_SCHEMA = {
    "type": "object",
    "properties": {
        k: {"type": "array", "items": {"type": "string"}}
        for k in ("facts", "preferences", "decisions")
    },
    "required": ["facts", "preferences", "decisions"],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post(url: str, body: dict[str, Any], timeout: float = 120) -> Any:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def post_sse(url: str, body: dict[str, Any], timeout: float = 120) -> list[dict[str, Any]]:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    events = []
    with urllib.request.urlopen(req, timeout=timeout) as r:
        for raw in r:
            line = raw.decode().strip()
            if line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line[6:]))
    return events


def wire_messages(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our messages in OpenAI wire form: arguments as JSON strings, tool_call_id set."""
    out: list[dict[str, Any]] = []
    last_ids: list[str] = []
    k = 0
    for m in msgs:
        if m["role"] == "assistant" and m.get("tool_calls"):
            calls = []
            last_ids = []
            for c in m["tool_calls"]:
                cid = f"call_{len(out)}_{len(calls)}"
                last_ids.append(cid)
                calls.append(
                    {
                        "id": cid,
                        "type": "function",
                        "function": {
                            "name": c["function"]["name"],
                            "arguments": json.dumps(c["function"]["arguments"]),
                        },
                    }
                )
            out.append({"role": "assistant", "content": "", "tool_calls": calls})
            k = 0
        elif m["role"] == "tool":
            out.append(
                {
                    "role": "tool",
                    "content": m["content"],
                    "tool_call_id": last_ids[k] if k < len(last_ids) else "call_x",
                }
            )
            k += 1
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def request_of(case: Case, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": wire_messages(case.messages),
        "temperature": 0,
        "max_tokens": 200,
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    if case.tools:
        body["tools"] = case.tools
    if case.kind == "extract":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "memory", "schema": EXTRACT_SCHEMA},
        }
    return body


def reply_text(content: str | None, calls: list[dict[str, Any]]) -> str:
    """The reply as the model's raw text, so the torch-side checks apply unchanged."""
    if calls:
        return "\n".join(
            "<tool_call>\n"
            + json.dumps(
                {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
            )
            + "\n</tool_call>"
            for c in calls
        )
    return content or ""


def from_stream(events: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]], Any, int]:
    content = ""
    calls: dict[int, dict[str, Any]] = {}
    usage = None
    deltas = 0
    for e in events:
        if e.get("usage"):
            usage = e["usage"]
        for ch in e.get("choices", []):
            d = ch.get("delta", {})
            if d.get("content"):
                content += d["content"]
                deltas += 1
            for tc in d.get("tool_calls", []) or []:
                c = calls.setdefault(tc["index"], {"function": {"name": "", "arguments": ""}})
                f = tc.get("function", {})
                c["function"]["name"] += f.get("name") or ""
                c["function"]["arguments"] += f.get("arguments") or ""
                deltas += 1
    return content, [calls[i] for i in sorted(calls)], usage, deltas


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--model", default=str(Path(__file__).resolve().parents[1] / "agrun-tiny.gguf"))
    ap.add_argument("--seed", type=int, default=777)
    ap.add_argument("--n", type=int, default=30, help="held-out examples per behaviour")
    ap.add_argument("--errors", type=Path, default=None)
    args = ap.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            args.server,
            "--jinja",
            "-m",
            args.model,
            "--no-repack",
            "-t",
            "1",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "-c",
            "2048",
            "-np",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(base + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except Exception:
                time.sleep(0.2)
        run(base, args)
    finally:
        proc.terminate()
        proc.wait(10)


def run(base: str, args: argparse.Namespace) -> None:
    tok = from_gguf(args.model)
    gen = Generator(args.seed, held_out=True)
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    errors = args.errors.open("w") if args.errors else None
    for kind in Generator.KINDS:
        for _ in range(args.n):
            ex = gen.example(kind)
            for case in cases_of(ex):
                s = stats[case.kind]
                s["n"] += 1
                # 1. the server renders the same prompt and tokenizes it the same way
                wire = wire_messages(case.messages)
                applied = post(
                    base + "/apply-template",
                    {"messages": wire, "tools": case.tools} if case.tools else {"messages": wire},
                )["prompt"]
                s["template_same"] += applied == case.prompt
                if applied != case.prompt and errors:
                    errors.write(
                        json.dumps({"template_diff": True, "ours": case.prompt, "server": applied})
                        + "\n"
                    )
                ids = post(base + "/tokenize", {"content": case.prompt, "parse_special": True})[
                    "tokens"
                ]
                s["tokens_same"] += ids == tok.encode(case.prompt).ids
                if len(ids) > 2048 - 220:
                    s["skipped_long"] += 1
                    continue
                # 2. non-streamed
                r = post(base + "/v1/chat/completions", request_of(case, False))
                msg = r["choices"][0]["message"]
                calls = msg.get("tool_calls") or []
                try:
                    text = reply_text(msg.get("content"), calls)
                    parsed = True
                except (json.JSONDecodeError, KeyError):
                    text, parsed = json.dumps(msg), False
                ok_fmt = parsed and format_ok(case, text)
                if case.kind in ("tool", "tool_parallel", "content_call"):
                    ok_fmt = ok_fmt and r["choices"][0]["finish_reason"] == "tool_calls"
                s["format"] += ok_fmt
                # the protocol alone: text where text is due, parseable calls where calls are
                if case.kind in ("tool", "tool_parallel", "content_call"):
                    s["protocol"] += (
                        bool(calls)
                        and parsed
                        and all(
                            c["function"]["name"]
                            in {t["function"]["name"] for t in case.tools or []}
                            for c in calls
                        )
                    )
                else:
                    s["protocol"] += bool(msg.get("content")) and not calls
                s["exact"] += parsed and exact_ok(case, text)
                u = r.get("usage") or {}
                s["usage"] += (
                    u.get("prompt_tokens", 0) == len(ids) and u.get("completion_tokens", 0) > 0
                )
                # 3. streamed: same reply, in deltas, with usage
                content, scalls, usage, deltas = from_stream(
                    post_sse(base + "/v1/chat/completions", request_of(case, True))
                )
                try:
                    stext = reply_text(content, scalls)
                except (json.JSONDecodeError, KeyError):
                    stext = json.dumps({"content": content, "calls": scalls})
                s["stream_format"] += format_ok(case, stext) and deltas > 0
                s["stream_same"] += stext == text
                s["stream_usage"] += bool(usage and usage.get("completion_tokens", 0) > 0)
                if errors and not exact_ok(case, text):
                    errors.write(
                        json.dumps(
                            {"kind": case.kind, "want": case.expected, "got": text, "stream": stext}
                        )
                        + "\n"
                    )
    out = {
        k: {
            m: (v[m] if m in ("n", "skipped_long") else round(v[m] / v["n"], 3))
            for m in (
                "n",
                "exact",
                "format",
                "protocol",
                "stream_format",
                "stream_same",
                "usage",
                "stream_usage",
                "template_same",
                "tokens_same",
                "skipped_long",
            )
        }
        for k, v in sorted(stats.items())
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
