"""A reply streams as it will be kept: masked (issue 19.3).

With redaction on, what a turn streams to ``on_token`` (a page's ``onToken``, the widget's
bubble, a worker's messages to its page) holds no secret the finished reply masks, however
the provider cuts its pieces; ordinary text still streams word by word.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest

import agrun
from agrun.chat import Finish, ModelRequest, StreamEvent, TextDelta
from agrun.kernel._stream_mask import BACK, HOLD, StreamMask
from agrun.sensitive import PatternRedactor
from conftest import make_runtime
from planted_secrets import PLANTED, hits

REDACTOR = PatternRedactor()
PROSE = (
    "The river runs past the old mill, then under the stone bridge where the children "
    "fish in summer. Further down it widens into a slow brown lake with reeds on both banks."
)


def pieces(text: str, seed: int) -> list[str]:
    """``text`` cut where a provider might cut it: 1 to 7 characters at a time."""
    draw, out, at = random.Random(seed), [], 0
    while at < len(text):
        step = draw.randint(1, 7)
        out.append(text[at : at + step])
        at += step
    return out


def streamed(text: str, seed: int = 1) -> list[str]:
    """What a `StreamMask` on agrun's redactor passes on of ``text`` cut by ``seed``."""
    shown: list[str] = []
    mask = StreamMask(REDACTOR.redact, shown.append, watch=REDACTOR.mentions)
    for piece in pieces(text, seed):
        mask.add(piece)
    mask.finish()
    return shown


def test_ordinary_text_streams_word_by_word_and_whole() -> None:
    shown = streamed(PROSE)
    assert "".join(shown) == PROSE
    assert len(shown) > 20  # a word or two at a time, not the reply at its end
    assert all(len(piece) < 40 for piece in shown)


@pytest.mark.parametrize("kind", sorted(PLANTED))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_secret_never_streams_whatever_the_pieces(kind: str, seed: int) -> None:
    planted, value = PLANTED[kind]
    reply = f"{PROSE}\nHere it is: {planted}\nand the rest of the answer, {PROSE}"
    shown = streamed(reply, seed)
    joined = "".join(shown)
    assert value not in joined
    assert not any(value[i : i + 12] in joined for i in range(0, len(value) - 12, 4))
    masked = REDACTOR.redact(reply)
    assert value not in masked
    assert masked.startswith(joined)  # only ever what the kept reply says, in order
    assert joined == masked  # and here, all of it


@pytest.mark.parametrize(
    "reply",
    [
        'password = "correct horse battery staple"',
        'pwd = "my Secret Phrase 99" was set on Monday',
        "**Password:** Xk9C3J27XDCG!q and that is all",
        "export OPENAI_API_KEY=sk-proj-" + "aZ3kQ9vL2xR7mN4pT8wY1cF6hJ0sD5gB" * 2 + " then run it",
    ],
)
def test_a_secret_of_several_words_or_after_a_label_never_streams_in_part(reply: str) -> None:
    masked = REDACTOR.redact(reply)
    assert masked != reply
    shown = streamed(reply)
    joined = "".join(shown)
    assert masked.startswith(joined)
    secret_words = [w for w in reply.split() if w not in masked and len(w) > 3]
    assert secret_words and not any(word in joined for word in secret_words)


def test_a_block_whose_first_lines_went_before_its_body_stops_the_stream() -> None:
    # The header lines are longer than what is held back: the block's first line is passed
    # before its body arrives; then the body makes the whole block a mask, which would
    # change what was shown. The stream stops there, and nothing of the body was passed.
    body = PLANTED["private key"][1]
    reply = (
        "Here is the key:\n-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
        f"DEK-Info: AES-256-CBC,{'A1' * 60}\n\n{body}\n{body[::-1]}\n"
        "-----END RSA PRIVATE KEY-----\nKeep it safe."
    )
    shown = streamed(reply)
    joined = "".join(shown)
    assert body not in joined and body[::-1] not in joined
    assert "-----BEGIN RSA PRIVATE KEY-----" in joined  # went first, not itself a secret
    assert "Keep it safe" not in joined  # nothing after the stop
    assert body not in REDACTOR.redact(reply)


def test_a_host_redactor_is_held_back_on_every_line() -> None:
    # A host's redactor has no hints to watch: every line is held back as a secret's may be.
    def redact(text: str) -> str:
        return text.replace("Ada Lovelace", "[NAME]")

    reply = f"{PROSE} The patient is Ada Lovelace, born 1815. {PROSE}"
    for seed in (1, 2, 3):
        shown: list[str] = []
        mask = StreamMask(redact, shown.append)
        for piece in pieces(reply, seed):
            mask.add(piece)
        mask.finish()
        joined = "".join(shown)
        assert "Ada" not in joined and joined == redact(reply)


def test_a_long_reply_is_masked_in_windows_of_bounded_size() -> None:
    # Masking reads a window from a line's start BACK characters back, not the whole reply.
    seen: list[int] = []

    def redact(text: str) -> str:
        seen.append(len(text))
        return REDACTOR.redact(text)

    line = "the token count for this line is about twenty and the key point stands\n"
    reply = line * 600  # 43 KB, every line holding hints
    shown: list[str] = []
    mask = StreamMask(redact, shown.append, watch=REDACTOR.mentions)
    for piece in pieces(reply, 5):
        mask.add(piece)
    mask.finish()
    assert "".join(shown) == reply
    assert max(seen) <= BACK + HOLD + 3 * len(line)
    assert sum(seen) < 150 * len(reply)  # linear, not quadratic: 600 lines, ~3 passes a line


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_secret_far_into_a_long_reply_never_streams(kind: str) -> None:
    # Past the text the mask has let go of (it keeps what a later window reads), a key
    # block still open is read from its first line, and each kind is masked as before.
    planted, value = PLANTED[kind]
    reply = f"{PROSE}\n" * 80 + f"Here it is: {planted}\n" + f"{PROSE} " * 40
    joined = "".join(streamed(reply, 4))
    assert value not in joined
    assert joined == REDACTOR.redact(reply)


class Streaming:
    """A provider that streams its reply in small pieces, as a real model does."""

    def __init__(self, reply: str) -> None:
        self.reply = reply

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        for piece in pieces(self.reply, 9):
            yield TextDelta(text=piece)
        yield Finish(reason="stop")


ALL = " and ".join(text for text, _ in PLANTED.values())


@pytest.mark.parametrize("redact_secrets", [True, False])
async def test_a_turn_streams_its_reply_masked_only_with_redaction_on(
    redact_secrets: bool,
) -> None:
    reply = f"{PROSE}\nNoted: {ALL}\n{PROSE}"
    runtime = make_runtime(
        provider=Streaming(reply), redact_secrets=redact_secrets, memory_extraction="rules"
    )
    tokens: list[str] = []
    result = await runtime.run("hello", on_token=tokens.append)
    joined = "".join(tokens)
    assert result.ok
    if redact_secrets:
        assert hits(joined) == [] and hits(str(result.messages)) == []
        assert joined == result.output and len(tokens) > 10
    else:
        assert joined == reply  # as the provider sent it


class Stalling:
    """Streams ``pieces``, then waits until the turn is cancelled."""

    def __init__(self, *pieces: str) -> None:
        self.pieces = pieces
        self.waiting = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        for piece in self.pieces:
            yield TextDelta(text=piece)
        self.waiting.set()
        await asyncio.Event().wait()
        yield Finish(reason="stop")  # never reached


@pytest.mark.parametrize(
    ("pieces", "before", "shown"),
    [
        # The word still arriving was held back; stopped, it goes on.
        (("Half an ", "ans"), "Half an ", "Half an ans"),
        # A token's start was held back with its line; stopped, it goes on masked.
        (("Use this one: ghp_", PLANTED["github token"][1][4:20]), "", "Use this one: [REDACTED]"),
    ],
)
async def test_a_stopped_turn_passes_on_what_it_held_masked_as_it_keeps_it(
    pieces: tuple[str, ...], before: str, shown: str
) -> None:
    provider = Stalling(*pieces)
    runtime = make_runtime(provider=provider, memory_extraction="rules")
    token = agrun.CancelToken()
    tokens: list[str] = []
    running = asyncio.ensure_future(runtime.run("go on", signal=token, on_token=tokens.append))
    await provider.waiting.wait()
    assert "".join(tokens) == before
    token.cancel("the person pressed stop")
    result = await running
    assert result.state.status == "cancelled"
    assert "".join(tokens) == shown
    assert runtime.history[-1].content == shown  # what streamed is what the turn keeps
