"""A ~1,024-token byte-level BPE tokenizer that llama.cpp reproduces exactly.

At run time it is plain GPT-2 byte-level BPE (llama.cpp pre-tokenizer "gpt-2"). The merges
are learned on pieces where a space before a letter or digit is its own piece and every digit
is its own piece, so no token joins a space to a word and no token holds two digits: a word
has the same tokens after a space, a quote or a newline, which makes copying values from the
user's text into JSON arguments easy for a tiny model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
CONTROL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TAGS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>"]
VOCAB_SIZE = 1024


def train(texts: Iterable[str], vocab_size: int = VOCAB_SIZE) -> Tokenizer:
    """Learn the merges from texts and return the run-time tokenizer (specials last)."""
    learner = Tokenizer(models.BPE())
    learner.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated"),
            pre_tokenizers.Split(Regex(r" (?=[\p{L}\p{N}])|\p{N}"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(CONTROL) - len(TAGS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
        min_frequency=2,
        show_progress=False,
    )

    def cleaned() -> Iterable[str]:
        for t in texts:
            for s in CONTROL + TAGS:
                t = t.replace(s, "\n")
            yield t

    learner.train_from_iterator(cleaned(), trainer)
    model = json.loads(learner.to_str())["model"]
    vocab: dict[str, int] = model["vocab"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in CONTROL])
    tok.add_tokens([AddedToken(s, special=False, normalized=False) for s in TAGS])
    assert tok.get_vocab_size() == vocab_size, tok.get_vocab_size()
    return tok


def merges_of(tok: Tokenizer) -> list[str]:
    """The merges as GGUF wants them: "left right" strings, in rank order."""
    model = json.loads(tok.to_str())["model"]
    return [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]


def tokens_of(tok: Tokenizer) -> list[str]:
    vocab = tok.get_vocab(with_added_tokens=True)
    out = [""] * len(vocab)
    for s, i in vocab.items():
        out[i] = s
    return out


def from_gguf(path: str) -> Tokenizer:
    """Rebuild the run-time tokenizer from a GGUF's tokenizer fields (to check the export)."""
    import gguf

    r = gguf.GGUFReader(path)

    def strings(key: str) -> list[str]:
        f = r.fields[key]
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    tokens = strings("tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ")) for m in strings("tokenizer.ggml.merges")]
    vocab = {t: i for i, t in enumerate(tokens) if t not in CONTROL + TAGS}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    for i, t in enumerate(tokens):
        if t in CONTROL + TAGS:
            assert i == len(vocab) + (CONTROL + TAGS).index(t), t
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in CONTROL])
    tok.add_tokens([AddedToken(s, special=False, normalized=False) for s in TAGS])
    return tok
