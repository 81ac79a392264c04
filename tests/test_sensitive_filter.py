"""The sensitive-content filter: what it refuses, how it names why, and that it fails closed.

Fake secrets are assembled at run time so that no token-shaped literal sits in this file.
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrun.sensitive import SensitiveContentFilter, Verdict, is_secret_key_name

ALNUM = string.ascii_letters + string.digits
GITHUB = "ghp_" + "".join(ALNUM[(i * 29 + 5) % 62] for i in range(36))
ANTHROPIC = "sk-ant-api03-" + "".join(ALNUM[(i * 31 + 3) % 62] for i in range(40))

FILTER = SensitiveContentFilter()


CREDENTIAL_KEYS = [
    "apiKey", "api_key", "api-key", "APIKEY", "ApiKey", "X-API-Key", "x_api_key",
    "client_secret", "clientSecret", "CLIENT_SECRET", "client-secret", "bearer", "Bearer",
    "password", "PASSWORD", "db_password", "userPassword", "passwd", "pwd", "passphrase", "pword",
    "token", "accessToken", "access_token", "refresh-token", "authToken", "idToken",
    "authorization", "Authorization", "secret", "secrets", "webhookSecret", "privateKey",
    "private_key", "aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "secretKey",
    "credentials", "OAuth2Token",
]  # fmt: skip


@pytest.mark.parametrize("key", CREDENTIAL_KEYS)
@pytest.mark.parametrize("value", ["", None, 0, "plain words", {"nested": "ok"}])
def test_a_key_named_like_a_credential_blocks_whatever_its_value(key: str, value: Any) -> None:
    assert is_secret_key_name(key)
    verdict = FILTER.check({"text": "note", "data": {key: value}})
    assert not verdict.allowed
    assert f"$.data{_segment(key)}: secret key name" in verdict.reasons


def _segment(key: str) -> str:
    return f".{key}" if key.replace("_", "").isalnum() else f'["{key}"]'


HARMLESS_KEYS = [
    "tokens", "maxTokens", "max_tokens", "tokenCount", "token_type", "tokenizer", "isSecret",
    "hasPassword", "secretName", "secret_name", "passwordHash", "password_policy", "author",
    "keyboard", "publicKey", "apiVersion", "api_key_id", "nextPageToken", "page_token",
    "csrfToken", "secretary", "passport", "keys", "monkey", "text", "metadata", "stopword",
]  # fmt: skip


@pytest.mark.parametrize("key", HARMLESS_KEYS)
def test_keys_about_secrets_but_not_holding_one_pass(key: str) -> None:
    assert not is_secret_key_name(key)
    assert FILTER.check({"metadata": {key: "value"}}) == Verdict(allowed=True)


def test_the_spec_example_names_the_path_and_the_rule() -> None:
    verdict = FILTER.check({"text": "I prefer tea", "data": {"apiKey": "x"}})
    assert verdict == Verdict(allowed=False, reasons=("$.data.apiKey: secret key name",))


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (f"my key is {ANTHROPIC}", "$: anthropic key"),
        ({"text": f"use {GITHUB}"}, "$.text: github token"),
        ({"metadata": {"env": ["ok", f"CI={GITHUB}"]}}, "$.metadata.env[1]: github token"),
        (
            {"metadata": ("a", ("b", "password=hunter2hunter2"))},
            "$.metadata[1][1]: password assignment",
        ),
        ({"notes": {"Authorization: Basic dXNlcjpwYXNzd29yZA==": 1}}, None),
        ({"weird key": {"x": "aws_secret_access_key=" + "A1b2" * 10}}, None),
        ({"blob": f"token {GITHUB}".encode()}, "$.blob: github token"),
        ({"tags": {"safe", f"{GITHUB}"}}, None),
    ],
)
def test_secrets_in_text_metadata_and_nested_values_are_found(
    entry: Any, reason: str | None
) -> None:
    verdict = FILTER.check(entry)
    assert not verdict.allowed
    if reason is not None:
        assert reason in verdict.reasons


def test_a_secret_used_as_a_key_is_reported_without_repeating_it() -> None:
    verdict = FILTER.check({"text": "x", "metadata": {GITHUB: 1}})
    assert verdict.reasons == ('$.metadata["[REDACTED]"]: github token in key',)
    assert not any(GITHUB in reason for reason in verdict.reasons)


def test_reasons_never_repeat_a_secret_value() -> None:
    entry = {"a": f"k {ANTHROPIC}", "b": {"password": "hunter2hunter2"}, "c": [GITHUB]}
    verdict = FILTER.check(entry)
    assert len(verdict.reasons) == 3
    assert not any(s in r for r in verdict.reasons for s in (ANTHROPIC, GITHUB, "hunter2"))


BENIGN_ENTRIES = [
    "I prefer tea",
    {"text": "User lives in Berlin", "metadata": {"source": "chat", "tokens": 12}},
    {"text": "Reset your password from the account page", "kind": "fact", "confidence": 0.9},
    {"text": "The API key rotation happens every 90 days", "tags": ["security", "policy"]},
    {"text": "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "ids": (1, 2, 3)},
    {"metadata": {"maxTokens": 4096, "isSecret": False, "nextPageToken": "CiAKGjBpNDd2Nm"}},
    {"text": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ deploy@host"},
    {1: "int keys", 2.5: ["float keys"], None: "none key"},
    [],
    {},
    42,
    None,
]


@pytest.mark.parametrize("entry", BENIGN_ENTRIES)
def test_benign_entries_pass(entry: Any) -> None:
    assert FILTER.check(entry) == Verdict(allowed=True, reasons=())


def test_cycles_are_walked_once_and_still_scanned() -> None:
    entry: dict[str, Any] = {"text": "loop"}
    entry["self"] = entry
    inner: list[Any] = [entry]
    entry["list"] = inner
    inner.append(inner)
    assert FILTER.check(entry) == Verdict(allowed=True)
    entry["deep"] = {"back": entry, "note": f"key {GITHUB}"}
    reasons = FILTER.check(entry).reasons  # a shape for the label may name the value too
    assert "$.deep.note: github token" in reasons
    assert all(reason.startswith("$.deep.note: ") for reason in reasons)


def test_deep_nesting_is_refused_not_a_crash() -> None:
    entry: Any = "leaf"
    for _ in range(5000):
        entry = [entry]
    verdict = SensitiveContentFilter(max_depth=32).check(entry)
    assert not verdict.allowed
    assert verdict.reasons[0].endswith(": nested deeper than 32")
    assert SensitiveContentFilter(max_depth=32).check([[["fine"]]]).allowed


@dataclasses.dataclass
class Note:
    text: str
    api_key: str = ""


class Model:
    """Quacks like a pydantic model."""

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def model_dump(self) -> dict[str, Any]:
        return dict(self.fields)


def test_dataclasses_and_models_are_read_by_field() -> None:
    assert FILTER.check(Note("tea")).reasons == ("$.api_key: secret key name",)
    assert FILTER.check(Model(text="tea", meta={"x": GITHUB})).reasons == (
        "$.meta.x: github token",
    )
    assert FILTER.check([Model(text="tea")]).allowed


class Broken(Mapping[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("cannot iterate")

    def __len__(self) -> int:
        return 1


def test_an_entry_that_cannot_be_read_is_refused() -> None:
    verdict = FILTER.check({"meta": Broken()})
    assert verdict == Verdict(allowed=False, reasons=("$: unreadable entry (RuntimeError)",))


# --- the host's own check ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "reasons"),
    [
        (None, ()),
        (False, ()),
        ("", ()),
        (True, ("$: host filter",)),
        ("customer number", ("$: customer number",)),
        (f"leaked {GITHUB}", ("$: leaked [REDACTED]",)),
        (0.5, ("$: host filter answered float",)),
    ],
)
def test_the_host_check_refuses_with_true_or_a_reason(
    answer: Any, reasons: tuple[str, ...]
) -> None:
    seen: list[Any] = []

    def host(entry: Any) -> Any:
        seen.append(entry)
        return answer

    entry = {"text": "Invoice 4471 for ACME"}
    verdict = SensitiveContentFilter(extra=host).check(entry)
    assert seen == [entry] and seen[0] is entry
    assert verdict == Verdict(allowed=not reasons, reasons=reasons)


def test_a_failing_host_check_fails_closed_without_echoing_its_message() -> None:
    def host(entry: Any) -> bool:
        raise ValueError(f"cannot judge {GITHUB}")

    verdict = SensitiveContentFilter(extra=host).check("I prefer tea")
    assert verdict == Verdict(allowed=False, reasons=("$: host filter failed (ValueError)",))


def test_the_host_check_runs_after_the_builtin_checks() -> None:
    calls: list[str] = []

    def host(entry: Any) -> str:
        calls.append("host")
        return "domain rule"

    verdict = SensitiveContentFilter(extra=host).check({"password": ""})
    assert calls == ["host"]
    assert verdict.reasons == ("$.password: secret key name", "$: domain rule")


def test_a_verdict_is_frozen() -> None:
    verdict = FILTER.check("tea")
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.allowed = False  # type: ignore[misc]


# --- properties ---------------------------------------------------------------------

SAFE_KEYS = st.sampled_from(["text", "kind", "tags", "meta", "source", "id", "tokens", "lang"])
SAFE_TEXT = st.sampled_from(["tea", "Berlin", "reset your password", "4096 tokens", "", "東京"])
SECRETS = [GITHUB, ANTHROPIC, "password=hunter2hunter2"]
entries = st.recursive(
    SAFE_TEXT | st.integers() | st.none() | st.booleans(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(SAFE_KEYS, children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries)
def test_structures_of_safe_keys_and_words_pass(entry: Any) -> None:
    assert FILTER.check(entry).allowed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries, st.sampled_from(SECRETS), st.data())
def test_a_secret_anywhere_is_refused_at_its_path(entry: Any, secret: str, data: Any) -> None:
    root: dict[str, Any] = {"entry": entry}
    node: Any = root
    path = "$"
    key: Any = "entry"
    while isinstance(node[key], dict | list) and node[key] and data.draw(st.booleans()):
        path += f".{key}" if isinstance(key, str) else f"[{key}]"
        node = node[key]
        key = data.draw(
            st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node)))
        )
    node[key] = secret
    path += f".{key}" if isinstance(key, str) else f"[{key}]"
    verdict = FILTER.check(root)
    assert not verdict.allowed
    assert any(reason.startswith(f"{path}: ") for reason in verdict.reasons)
