"""Secrets of each kind the filter covers, planted by the taint tests (tests/ and e2e/) in
every place a secret can enter a turn, then looked for in every place a turn leaves data.

They are made up (the right shape, random-looking, never issued) and built from pieces, so
this file is not itself a secret a scanner should flag.
"""

from __future__ import annotations

import base64
import json

_B62 = "aZ3kQ9vL2xR7mN4pT8wY1cF6hJ0sD5gB"


def _run(n: int, seed: int) -> str:
    """``n`` random-looking characters, the same for the same ``seed`` (a small LCG)."""
    state, out = seed * 7919 + 17, []
    for _ in range(n):
        state = (state * 1103515245 + 12345) % 2**31
        out.append(_B62[(state >> 16) % len(_B62)])
    return "".join(out)


def _jwt() -> str:
    def part(value: object) -> str:
        raw = json.dumps(value).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': 'u-81'})}.{_run(43, 5)}"


# What a secret looks like where it is planted, and the part of it that must never show up
# again (the value, without its label).
PLANTED: dict[str, tuple[str, str]] = {
    "anthropic key": ("sk-ant-api03-" + _run(93, 1) + "AA",) * 2,
    "openai key": ("sk-proj-" + _run(100, 2),) * 2,
    "aws access key id": ("AKIA" + "QX3ZR7TW2KPL5MVN",) * 2,
    "aws secret": (
        "aws_secret_access_key=" + "wJa1rXUtn7FEMI9K7MDENGbPxRfiCY" + "Zq4Lk2Vb3",
        "wJa1rXUtn7FEMI9K7MDENGbPxRfiCY" + "Zq4Lk2Vb3",
    ),
    "github token": ("ghp_" + _run(36, 3),) * 2,
    "password": ("password=" + "hunter2" + "hunter2x", "hunter2" + "hunter2x"),
    # A person writing in their own language (the fifteenth pass of issue 19.4).
    "password, in German": ("Passwort: " + "Zugspitze" + "2962x", "Zugspitze" + "2962x"),
    "jwt": (_jwt(), _jwt()),
    "private key": (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + "\n".join(_run(64, 7 + line) for line in range(4))
        + "\n-----END RSA PRIVATE KEY-----",
        _run(64, 8),
    ),
}


def values() -> list[str]:
    """The parts that must never be found again."""
    return [value for _, value in PLANTED.values()]


def hits(text: str) -> list[str]:
    """Which planted secrets ``text`` still holds (by kind); empty when it holds none."""
    return [kind for kind, (_, value) in PLANTED.items() if value in text]
