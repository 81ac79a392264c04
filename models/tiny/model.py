"""A llama-architecture decoder in torch, laid out exactly as llama.cpp's LLM_ARCH_LLAMA
computes it: RMSNorm, rotary embeddings on adjacent pairs (llama.cpp's "normal" RoPE, so the
Q/K weights need no permutation at export), SwiGLU feed-forward, no biases, tied embeddings.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class Config:
    vocab: int = 1024
    dim: int = 128
    layers: int = 4
    heads: int = 4
    kv_heads: int = 4
    ffn: int = 384
    ctx: int = 2048
    rope_base: float = 10000.0
    eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg: Config, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    inv = cfg.rope_base ** (-torch.arange(0, cfg.head_dim, 2, dtype=torch.float64) / cfg.head_dim)
    ang = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]
    return ang.cos().float(), ang.sin().float()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x: (B, H, T, D); pairs (2i, 2i+1) rotate by angle pos * base^(-2i/D)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.attn_norm = RMSNorm(cfg.dim, cfg.eps)
        self.wq = nn.Linear(cfg.dim, cfg.heads * hd, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.kv_heads * hd, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.kv_heads * hd, bias=False)
        self.wo = nn.Linear(cfg.heads * hd, cfg.dim, bias=False)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.eps)
        self.w_gate = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w_up = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w_down = nn.Linear(cfg.ffn, cfg.dim, bias=False)

    def forward(
        self,
        x: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        cache: list[torch.Tensor] | None = None,
    ) -> torch.Tensor:
        b, t, _ = x.shape
        c = self.cfg
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, c.heads, c.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, t, c.kv_heads, c.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, t, c.kv_heads, c.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        causal = True
        if cache is not None:
            # incremental decoding: append to this layer's keys/values
            if cache:
                k = torch.cat((cache[0], k), dim=2)
                v = torch.cat((cache[1], v), dim=2)
                causal = t > 1
            cache[:] = [k, v]
        if c.kv_heads != c.heads:
            k = k.repeat_interleave(c.heads // c.kv_heads, dim=1)
            v = v.repeat_interleave(c.heads // c.kv_heads, dim=1)
        if causal and k.shape[2] != t:
            raise ValueError("multi-token step with a cache is not supported")
        a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        x = x + self.wo(a.transpose(1, 2).reshape(b, t, -1))
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Llama(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.dim, cfg.eps)
        cos, sin = rope_tables(cfg, cfg.ctx)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        nn.init.normal_(self.embed.weight, std=0.02)
        for blk in self.blocks:
            for lin in (blk.wq, blk.wk, blk.wv, blk.w_gate, blk.w_up):
                nn.init.normal_(lin.weight, std=0.02)
            for lin in (blk.wo, blk.w_down):
                nn.init.normal_(lin.weight, std=0.02 / (2 * cfg.layers) ** 0.5)

    def hidden(
        self, ids: torch.Tensor, start: int = 0, caches: list[list[torch.Tensor]] | None = None
    ) -> torch.Tensor:
        """Final-norm hidden states; with caches, ids continue at position `start`."""
        t = ids.shape[1]
        x = self.embed(ids)
        cos, sin = self.cos[start : start + t], self.sin[start : start + t]
        for i, blk in enumerate(self.blocks):
            x = blk(x, cos, sin, None if caches is None else caches[i])
        return self.norm(x)

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.embed.weight.T

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.logits(self.hidden(ids))

    @torch.no_grad()
    def generate(self, ids: list[int], stop: set[int], max_new: int = 160) -> list[int]:
        """Greedy decoding with a KV cache; returns the new ids (the stop id included)."""
        caches: list[list[torch.Tensor]] = [[] for _ in self.blocks]
        h = self.hidden(torch.tensor([ids]), 0, caches)
        out: list[int] = []
        pos = len(ids)
        for _ in range(max_new):
            nxt = int(self.logits(h[0, -1]).argmax())
            out.append(nxt)
            if nxt in stop or pos >= self.cfg.ctx:
                break
            h = self.hidden(torch.tensor([[nxt]]), pos, caches)
            pos += 1
        return out

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
