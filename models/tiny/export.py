"""Write the trained model as a llama-architecture GGUF (f32) with its tokenizer and template."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
from tokenizers import Tokenizer

from .model import Llama
from .template import CHAT_TEMPLATE
from .tokenizer import CONTROL, TAGS, merges_of, tokens_of


def export(model: Llama, tok: Tokenizer, path: Path, name: str = "agrun-tiny") -> None:
    cfg = model.cfg
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(name)
    w.add_context_length(cfg.ctx)
    w.add_embedding_length(cfg.dim)
    w.add_block_count(cfg.layers)
    w.add_feed_forward_length(cfg.ffn)
    w.add_head_count(cfg.heads)
    w.add_head_count_kv(cfg.kv_heads)
    w.add_rope_dimension_count(cfg.head_dim)
    w.add_rope_freq_base(cfg.rope_base)
    w.add_layer_norm_rms_eps(cfg.eps)
    w.add_vocab_size(cfg.vocab)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    tokens = tokens_of(tok)
    types = []
    for t in tokens:
        if t in CONTROL:
            types.append(gguf.TokenType.CONTROL)
        elif t in TAGS:
            types.append(gguf.TokenType.USER_DEFINED)
        else:
            types.append(gguf.TokenType.NORMAL)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges_of(tok))
    w.add_bos_token_id(tok.token_to_id("<|endoftext|>"))
    w.add_eos_token_id(tok.token_to_id("<|im_end|>"))
    w.add_pad_token_id(tok.token_to_id("<|endoftext|>"))
    w.add_add_bos_token(False)
    w.add_add_eos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    def put(name: str, t: object) -> None:
        w.add_tensor(name, np.ascontiguousarray(t.detach().float().numpy()))  # type: ignore[attr-defined]

    put("token_embd.weight", model.embed.weight)
    for i, b in enumerate(model.blocks):
        put(f"blk.{i}.attn_norm.weight", b.attn_norm.weight)
        put(f"blk.{i}.attn_q.weight", b.wq.weight)
        put(f"blk.{i}.attn_k.weight", b.wk.weight)
        put(f"blk.{i}.attn_v.weight", b.wv.weight)
        put(f"blk.{i}.attn_output.weight", b.wo.weight)
        put(f"blk.{i}.ffn_norm.weight", b.ffn_norm.weight)
        put(f"blk.{i}.ffn_gate.weight", b.w_gate.weight)
        put(f"blk.{i}.ffn_up.weight", b.w_up.weight)
        put(f"blk.{i}.ffn_down.weight", b.w_down.weight)
    put("output_norm.weight", model.norm.weight)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
