"""The secret catalog and its redactor: every shape is masked, look-alikes are left alone.

Fake secrets are assembled at run time from a prefix and a generated body, so that no
token-shaped literal sits in this file for a secret scanner to flag.
"""

from __future__ import annotations

import base64
import json
import re
import string

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agrun.sensitive import (
    CATALOG,
    DEFAULT_SECRET_HINTS,
    DEFAULT_SECRET_PATTERNS,
    MASK,
    PatternRedactor,
    SecretHit,
)
from agrun.sensitive._redactor import _is_secret as is_secret
from conftest import make_runtime

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"

REDACTOR = PatternRedactor()
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def body(n: int, alphabet: str = ALNUM, seed: int = 7) -> str:
    """``n`` well-mixed characters of ``alphabet`` (digits, capitals and small letters)."""
    return "".join(alphabet[(i * 37 + seed * 11 + i * i) % len(alphabet)] for i in range(n))


def pem(kind: str) -> str:
    lines = [body(64, B64, seed) for seed in range(8)]
    return "\n".join([f"-----BEGIN {kind}-----", *lines, f"-----END {kind}-----"])


def jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = base64.urlsafe_b64encode(b'{"sub":"1234567890","iat":1716239022}').decode()
    return f"{head}.{claims.rstrip('=')}.{body(43, URLSAFE)}"


# (shape, text, secret): the secret must be gone from the redacted text.
PROVIDER_CASES = [
    ("anthropic", "my key is sk-ant-api03-" + body(93, URLSAFE) + "AA", "sk-ant-api03-"),
    ("openai project", "OPENAI_KEY=sk-proj-" + body(100, URLSAFE), "sk-proj-"),
    ("openai legacy", "use sk-" + body(48) + " please", "sk-"),
    ("openrouter", "sk-or-v1-" + body(64, HEX), "sk-or-v1-"),
    ("google api key", "https://maps.example.com/api?key=AIza" + body(35, URLSAFE), "AIza"),
    ("google oauth", "access: ya29." + body(120, URLSAFE), "ya29."),
    ("google client secret", "GOCSPX-" + body(28, URLSAFE), "GOCSPX-"),
    *[
        (f"github {p}", f"token {p}{body(36)} ok", p)
        for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
    ],
    ("github fine-grained", "github_pat_" + body(22) + "_" + body(59, seed=3), "github_pat_"),
    ("gitlab", "CI_JOB=glpat-" + body(20, URLSAFE), "glpat-"),
    (
        "aws key id",
        "aws_access_key_id = AKIA" + body(16, string.ascii_uppercase + "234567"),
        "AKIA",
    ),
    ("aws session key id", "ASIA" + body(16, string.ascii_uppercase + "234567"), "ASIA"),
    ("slack bot", "xoxb-" + body(12, string.digits) + "-" + body(24), "xoxb-"),
    ("stripe live", "stripe.api_key = 'sk_live_" + body(99) + "'", "sk_live_"),
    ("stripe restricted", "rk_live_" + body(24), "rk_live_"),
    ("npm", "//registry.npmjs.org/:_authToken=npm_" + body(36), "npm_"),
    ("pypi", "password = pypi-AgEIcHlwaS5vcmc" + body(70, URLSAFE), "pypi-AgEI"),
    ("twilio", "TWILIO=SK" + body(32, HEX), "SK"),
    ("sendgrid", "SG." + body(22, URLSAFE) + "." + body(43, URLSAFE, 2), "SG."),
    ("hugging face", "hf_" + body(34, string.ascii_letters), "hf_"),
    ("perplexity", "pplx-" + body(48), "pplx-"),
    ("groq", "gsk_" + body(52), "gsk_"),
    ("digitalocean", "dop_v1_" + body(64, HEX), "dop_v1_"),
    ("databricks", "dapi" + body(32, HEX), "dapi"),
    ("vault", "VAULT_TOKEN=hvs." + body(95, URLSAFE), "hvs."),
    ("shopify", "shpat_" + body(32, HEX), "shpat_"),
    ("linear", "lin_api_" + body(40), "lin_api_"),
    ("postman", "PMAK-" + body(24, HEX) + "-" + body(34, HEX, 5), "PMAK-"),
    ("mailchimp", body(32, HEX) + "-us14", "-us14"),
    ("telegram", "bot 7302518846:AA" + body(33, URLSAFE), ":AA"),
    ("azure client secret", "abc8Q~" + body(34, ALNUM + "_~.-"), "Q~"),
    ("age", "AGE-SECRET-KEY-1" + body(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"), "AGE-SECRET"),
    ("jwt", "id_token: " + jwt(), "eyJ"),
]


def _secret_of(text: str, marker: str) -> str:
    """The whitespace-delimited word of ``text`` holding ``marker``, without quotes."""
    word = next(w for w in re.split(r"[\s=]", text) if marker in w)
    return word.strip("'\"").split("?key=")[-1].split(":_authToken=")[-1]


@pytest.mark.parametrize(
    ("text", "marker"), [(t, m) for _, t, m in PROVIDER_CASES], ids=[c[0] for c in PROVIDER_CASES]
)
def test_provider_tokens_are_masked_whole(text: str, marker: str) -> None:
    secret = _secret_of(text, marker)
    redacted = REDACTOR.redact(text)
    assert secret not in redacted and marker not in redacted.replace(MASK, "")
    assert MASK in redacted


LABEL_CASES = [
    # The three the old redactor missed: a label after "_" or a Basic credential.
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]"),
    (f"aws_secret_access_key={body(40, B64)}", "aws_secret_access_key=[REDACTED]"),
    (f"client_secret={body(32, HEX)}", "client_secret=[REDACTED]"),
    ("password=hunter2hunter2", "password=[REDACTED]"),
    ("DB_PASSWORD='Summer2024!'", "DB_PASSWORD='[REDACTED]'"),
    ('{"password": "Tr0ub4dor&3"}', '{"password": "[REDACTED]"}'),
    ('{"apiKey": "' + body(32) + '"}', '{"apiKey": "[REDACTED]"}'),
    (f"X-API-Key: {body(40)}", "X-API-Key: [REDACTED]"),
    (f"OPENAI_API_KEY={body(32)}\nDEBUG=1", "OPENAI_API_KEY=[REDACTED]\nDEBUG=1"),
    (f"refresh_token: {body(40, URLSAFE)}", "refresh_token: [REDACTED]"),
    (f"accessToken={body(30)}&state=ok", "accessToken=[REDACTED]&state=ok"),
    (f"USERPASSWORD={body(16)}", "USERPASSWORD=[REDACTED]"),
    (f"settings.secret_key = '{body(50)}'", "settings.secret_key = '[REDACTED]'"),
    (f"AccountName=a;AccountKey={body(86, B64)}==;", "AccountName=a;AccountKey=[REDACTED];"),
    (f"Authorization: Bearer {body(40)}", "Authorization: Bearer [REDACTED]"),
    (f"authorization: token {body(40, HEX)}", "authorization: token [REDACTED]"),
    (f"curl -H 'bearer {body(32)}' x", "curl -H 'bearer [REDACTED]' x"),
    ("postgres://app:s3cr3t-Pw@db:5432/main", "postgres://app:[REDACTED]@db:5432/main"),
    ("curl -u deploy:Winter2023# https://ci", "curl -u deploy:[REDACTED] https://ci"),
    ("mysql --password=Orbit1999! -h db", "mysql --password=[REDACTED] -h db"),
    ("<db_password>Kiwi_4471</db_password>", "<db_password>[REDACTED]</db_password>"),
    ("CREATE USER r IDENTIFIED BY 'Velvet42';", "CREATE USER r IDENTIFIED BY '[REDACTED]';"),
    ("machine h login u password Tango77!", "machine h login u password [REDACTED]"),
    ("remember my password is Maple2019?", "remember my password is [REDACTED]"),
    ('{"auth": "dXNlcjpwYXNzd29yZDEyMw=="}', '{"auth": "[REDACTED]"}'),
    # "İ" lower-cases to two characters: offsets found in the lower-cased text would drift.
    ("İ" * 30 + "\npwd=hunter22\n" + "z" * 40, "İ" * 30 + "\npwd=[REDACTED]\n" + "z" * 40),
]


@pytest.mark.parametrize(("text", "expected"), LABEL_CASES)
def test_labelled_secrets_keep_their_label(text: str, expected: str) -> None:
    assert REDACTOR.redact(text) == expected


@pytest.mark.parametrize(
    "kind", ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]
)
def test_private_key_blocks_are_masked_whole(kind: str) -> None:
    block = pem(kind)
    text = f"deploy key:\n{block}\nthanks"
    assert REDACTOR.redact(text) == f"deploy key:\n{MASK}\nthanks"
    escaped = json.dumps({"type": "service_account", "private_key": block + "\n"})
    redacted = REDACTOR.redact(escaped)
    assert "BEGIN" not in redacted and body(64, B64, 3) not in redacted


def test_a_private_key_cut_short_is_masked_to_its_end() -> None:
    block = pem("RSA PRIVATE KEY").rsplit("\n", 2)[0]  # no END line
    assert REDACTOR.redact(block) == MASK


BENIGN = [
    "Please reset your password from the account page.",
    "The password is required and must have 12 characters.",
    "Bearer tokens expire after one hour.",
    "Authorization: required for write endpoints",
    "Authorization: Bearer <access_token>",
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    "max_tokens=4096, temperature=0.2",
    "token: 4096",
    'api_key = os.environ["OPENAI_API_KEY"]',
    "const apiKey = process.env.API_KEY;",
    "password = get_password()",
    'let api_key = std::env::var("API_KEY")?;',
    "token: Optional[str] = None",
    "password: string;",
    "password: ${DB_PASSWORD}",
    "api_key: '{{ vault_api_key }}'",
    "API_KEY=your-api-key-here",
    "client_secret: REPLACE_ME",
    "api_key=sk-****************1a2b",
    "secret: changeme",
    '"password": ""',
    "PWD=/home/alice/projects/app2024",
    'private_key_path = "~/.ssh/id_ed25519"',
    "csrf_token=abc123def456ghi789",
    '{"nextPageToken": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0"}',
    "sk-learn-compatible-estimator and task-runner-2024-pipeline",
    "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    "request_id=7c1e0b9a-4f2d-41aa-9b3e-5d2c8a7f6e10",
    "https://example.com:8080/search?q=password+reset&page=2",
    "ssh-rsa AAAAB3NzaC1yc2E" + body(200, B64) + " deploy@host",
    "-----BEGIN PUBLIC KEY-----\n" + body(64, B64) + "\n-----END PUBLIC KEY-----",
    "![chart](data:image/png;base64," + base64.b64encode(bytes(range(256)) * 4).decode() + ")",
    '"integrity": "sha512-' + body(86, B64) + '=="',
    "I prefer tea over coffee in the morning.",
    "The trip to ASIA was in 2019; the task list is long.",
    "password=[REDACTED]",
]


@pytest.mark.parametrize("text", BENIGN)
def test_look_alikes_pass_through(text: str) -> None:
    assert REDACTOR.find(text) == ()
    assert REDACTOR.redact(text) == text


def test_hits_name_their_rule_and_skip_the_label() -> None:
    text = "as password=hunter2hunter2"  # not a line's start: an .env line's shape too
    assert REDACTOR.find(text) == (SecretHit("password assignment", 12, len(text)),)


def test_the_catalog_is_the_default_and_hints_are_lower_case() -> None:
    assert tuple(shape.pattern for shape in CATALOG) == DEFAULT_SECRET_PATTERNS
    assert all(hint == hint.lower() for hint in DEFAULT_SECRET_HINTS)
    assert len({shape.name for shape in CATALOG}) == len(CATALOG)
    assert all(shape.hints for shape in CATALOG)


def test_custom_patterns_scan_every_text_unless_given_hints() -> None:
    custom = PatternRedactor([r"(?P<keep>pin=)\d{4}", r"\bINV-\d+"])
    assert custom.redact("pin=1234 and INV-99") == f"pin={MASK} and {MASK}"
    assert [hit.rule for hit in custom.find("INV-7")] == ["pattern 1"]
    hinted = PatternRedactor([r"\bINV-\d+"], hints=["inv-"])
    assert hinted.redact("see INV-42") == f"see {MASK}"
    gated = PatternRedactor([r"\d{4}"], hints=["pin"])
    assert gated.redact("code 1234") == "code 1234"  # no hint: passed through untouched


def test_overlapping_hits_become_one_mask() -> None:
    token = "ghp_" + body(36)
    assert REDACTOR.redact(f"GITHUB_TOKEN={token}") == f"GITHUB_TOKEN={MASK}"


# --- properties ---------------------------------------------------------------------

SECRETS = [
    "sk-ant-api03-" + body(40, URLSAFE),
    "ghp_" + body(36),
    "AKIA" + body(16, string.ascii_uppercase),
    "xoxb-" + body(12, string.digits) + "-" + body(20),
    jwt(),
    pem("PRIVATE KEY"),
    "AIza" + body(35, URLSAFE),
]
FRAGMENTS = [
    *SECRETS,
    *(s.upper() for s in SECRETS[:2]),
    "password", "PASSWORD", "pwd", "api_key", "apiKey", "token", "secret", "Authorization",
    "Bearer", "Basic", "client_secret", "=", ": ", ":", '"', "'", " ", "\n", "_", "-", ".",
    "/", "@", "://", "https", "hunter2hunter2", "Summer2024!", body(40, B64), body(32, HEX),
    "the", "tea", "İ", "ſ", "\u212a", "é", "東京", MASK, "[", "]", "{", "}", "(", ")", "--",
    "<", ">", "</", "is", "machine", "login", "curl -u", "IDENTIFIED BY", "$", "%", "*",
]  # fmt: skip
# A label, an assignment and a value, between noise: what the label shapes look for.
NOISE = ["", " ", "\n", "x", "my_", "USER", "İ\n", "İ", "ſ ", "{", '{"', "<", "&", "--"]
LABELS = [
    "password", "PASSWORD", "pwd", "db_pass", "passcode", "Passwort", "api_key", "apiKey",
    "API_KEY", "x-api-key", "token", "access_token", "accessToken", "nextPageToken", "secret",
    "client_secret", "clientsecret", "credentials", "private_key", "AccountKey", '"auth"',
    "Authorization", "authorization", "Bearer", "bearer", "machine h login u password",
    "IDENTIFIED BY", "with password", "curl -u user", "--password", "--token",
    "my password is", "<pwd>", "<api_key>", "postgres://u", "pin code was", "ſecret", "KEY",
    "the password for user 'pg' is", "my api key is", "APP_SECRET", "adminpwd", "- PW",
    "pword", ".pword", "<admin password>", '<secret id="1">',
]  # fmt: skip
SEPS = ["=", ": ", ":", " = ", '": "', "='", " ", "\n", "=>", ":=", '\\"', "> ", ": Basic "]
VALUES = [
    *SECRETS[:5], "hunter2hunter2", "Summer2024!", body(40, B64), body(32, HEX), "4096",
    "string?", "os.environ[", "get()", "${X}", MASK, "sunshine", "İİ1234567", "a.b.c",
    "dXNlcjpwYXNzd29yZA==", "'Velvet42'", "~/.ssh/id_rsa", "sk-***1234", "12345678",
    "CorrectHorse", "'admin'", "correcthorse.",
]  # fmt: skip
CLOSERS = [
    "", '"', "'", "</pwd>", "</api_key>", "@host", ";", "&x=1", "\n", " ok", ")", " </mypassword>",
    "</secret>", "</compass>",
]  # fmt: skip
assignments = st.tuples(*(st.sampled_from(part) for part in (NOISE, LABELS, SEPS, VALUES, CLOSERS)))
texts = st.lists(assignments.map("".join) | st.sampled_from(FRAGMENTS), max_size=14).map("".join)


def brute_force(text: str) -> set[tuple[str, int, int]]:
    """Every catalog match over the whole text, without hints or line windows."""
    found: set[tuple[str, int, int]] = set()
    for shape in CATALOG:
        for match in re.finditer(shape.pattern, text):
            start = match.start()
            if "keep" in match.re.groupindex and match.group("keep") is not None:
                start = match.end("keep")
            if match.end() > start and is_secret(shape, text, start, match.end()):
                found.add((shape.name, start, match.end()))
    return found


@SETTINGS
@given(texts)
def test_hints_and_line_windows_never_hide_a_match(text: str) -> None:
    assert {(h.rule, h.start, h.end) for h in REDACTOR.find(text)} == brute_force(text)


@pytest.mark.parametrize(
    "text",
    [
        "DB_PASSWORD=sunshine\nDEBUG=1",  # a value's line end is "$" before a line break
        "x\npwd=CorrectHorse\r\nDEBUG=1",
        "APP_SECRET=blueberrymuffin # rotate\nDEBUG=1",
    ],
)
def test_an_env_line_is_found_whole_text_and_line_by_line_alike(text: str) -> None:
    # A plain "$" matches only at a window's end: found line by line, missed by a scan of
    # the whole text (a host's own patterns are scanned whole), until it meant a line's end.
    found = {(h.rule, h.start, h.end) for h in REDACTOR.find(text)}
    assert found and found == brute_force(text)


def test_every_label_separator_and_closer_agrees_with_the_brute_force() -> None:
    # Deterministic and wide where random draws are thin: each label with each separator
    # and closer, the value and the noise taken in turn.
    for i, (label, sep, closer) in enumerate(
        (label, sep, closer) for label in LABELS for sep in SEPS for closer in CLOSERS
    ):
        text = NOISE[i % len(NOISE)] + label + sep + VALUES[i % len(VALUES)] + closer
        found = {(h.rule, h.start, h.end) for h in REDACTOR.find(text)}
        assert found == brute_force(text), text


@SETTINGS
@given(texts)
def test_redaction_is_idempotent_and_leaves_nothing_detectable(text: str) -> None:
    once = REDACTOR.redact(text)
    assert REDACTOR.find(once) == ()
    assert REDACTOR.redact(once) == once


@SETTINGS
@given(
    st.lists(st.sampled_from(FRAGMENTS[len(SECRETS) + 2 :]), max_size=12), st.sampled_from(SECRETS)
)
def test_a_secret_set_apart_by_whitespace_never_survives(words: list[str], secret: str) -> None:
    half = len(words) // 2
    text = "".join(words[:half]) + f" {secret}\n" + "".join(words[half:])
    assert secret not in REDACTOR.redact(text)


@SETTINGS
@given(st.text(max_size=200))
def test_text_without_hints_is_returned_unchanged(text: str) -> None:
    lowered = text.lower()
    assume(not any(hint in lowered for hint in DEFAULT_SECRET_HINTS))
    assert REDACTOR.find(text) == ()
    assert REDACTOR.redact(text) is text


def test_a_long_text_found_clean_is_not_scanned_again_and_a_secret_never_slips(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A turn hands the same big text to the redactor several times (issue 20.8).
    scanned: list[int] = []
    scan = PatternRedactor._scan

    def counted(self: PatternRedactor, text: str) -> tuple[SecretHit, ...]:
        scanned.append(len(text))
        return scan(self, text)

    monkeypatch.setattr(PatternRedactor, "_scan", counted)
    redactor = PatternRedactor()
    clean = "plain words, nothing to hide. " * 1_000
    assert redactor.redact(clean) is clean and redactor.redact(clean) is clean
    assert redactor.find(clean) == () and scanned == [len(clean)]
    # Equal but another object: scanned (identity, not a hash of 30 KB, is remembered).
    twin = clean[:-1] + clean[-1:]
    assert twin is not clean and redactor.find(twin) == () and len(scanned) == 2
    # A text holding a secret is never taken for a clean one, however often it comes.
    secret = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    dirty = clean + secret
    for _ in range(3):
        assert secret not in redactor.redact(dirty)
    assert len(scanned) > 4


async def test_a_big_echo_scans_the_input_and_the_reply_for_secrets_once_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The door, the observation, the content filter and the turn's close each looked at
    # the same text again: 4 passes over a 10 MB input in the page (issue 20.8).
    scanned: list[int] = []
    scan = PatternRedactor._scan

    def counted(self: PatternRedactor, text: str) -> tuple[SecretHit, ...]:
        if len(text) >= 100_000:
            scanned.append(len(text))
        return scan(self, text)

    monkeypatch.setattr(PatternRedactor, "_scan", counted)
    said = "a long paste " * 20_000
    result = await make_runtime().run(said)
    assert result.ok and result.output == f"echo: {said}"
    assert sorted(scanned) == [len(said), len(said) + len("echo: ")]
