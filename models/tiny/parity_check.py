"""Check that llama-server and the torch model produce the same greedy text for the same
prompts (the GGUF export is faithful: weights, RoPE layout, norms, tokenizer).

    python models/tiny/parity_check.py --server PATH/llama-server --model models/agrun-tiny.gguf \
        --weights run.pt

`run.pt` is the state dict that `make_tiny_model.py --save run.pt` writes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tiny.cases import cases_of
from tiny.data import Generator
from tiny.model import Config, Llama
from tiny.server_check import free_port, post
from tiny.tokenizer import from_gguf


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=384)
    ap.add_argument("--heads", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = Config(
        dim=args.dim, layers=args.layers, ffn=args.ffn, heads=args.heads, kv_heads=args.heads
    )
    model = Llama(cfg)
    model.load_state_dict(torch.load(args.weights))
    model.eval()
    tok = from_gguf(args.model)
    stop = {tok.token_to_id("<|im_end|>"), tok.token_to_id("<|endoftext|>")}
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            args.server,
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
                with urllib.request.urlopen(base + "/health", timeout=2):
                    break
            except Exception:
                time.sleep(0.2)
        gen = Generator(4321, held_out=True)
        same = total = 0
        for j in range(args.n):
            for case in cases_of(gen.example(Generator.KINDS[j % len(Generator.KINDS)])):
                ids = tok.encode(case.prompt).ids
                ours = model.generate(ids, stop, max_new=120)
                text = tok.decode([i for i in ours if i not in stop], skip_special_tokens=False)
                r = post(
                    base + "/completion",
                    {"prompt": ids, "n_predict": 120, "temperature": 0, "cache_prompt": False},
                )
                total += 1
                same += r["content"] == text
                if r["content"] != text:
                    print("DIFF", case.kind, repr(text[:120]), repr(r["content"][:120]))
        print(f"greedy parity: {same}/{total} prompts give the same text")
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
