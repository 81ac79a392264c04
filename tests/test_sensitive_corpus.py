"""The filter on text it was not tuned on, and each shape and placeholder added for it.

tests/data/secrets_corpus/ holds the scanners' own fixtures (gitleaks, detect-secrets,
trufflehog; Nosey Parker and Kingfisher since the third round; secretlint's rule snapshots
in the fifth; ripsecrets' and whispers' tests in the sixth; talisman's detector tests in
the seventh; semgrep-rules' secret rule tests in the eighth; leaky-repo's leaked config
files in the ninth; CredSweeper's test samples in the tenth; trivy's secret scanner tests
in the eleventh; GitHub's custom secret patterns and checkov's secret tests in the twelfth;
2ms's rule tests in the thirteenth; sonar-text's rule examples in the fourteenth), benign
configs and docs from other repositories (the fourth round) and rows written for agrun,
split by a hash of the text before any tuning (bench/secret_fixtures.py). The catalog was
tuned on ``tune``; the thresholds below are measured on ``heldout`` and sit at the figures
reached (docs/continuity.md), which are short of the issue's goal (seed recall 1.0, all
0.97, false positives 0.005): a change that loses ground on unseen text fails here.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path
from typing import Any

import pytest

from agrun.sensitive import MASK, PatternRedactor, SensitiveContentFilter

CORPUS = Path(__file__).resolve().parent / "data" / "secrets_corpus"
FILTER = SensitiveContentFilter()
REDACTOR = PatternRedactor()
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def body(n: int, alphabet: str = ALNUM, seed: int = 3) -> str:
    """``n`` well-mixed characters of ``alphabet``, with no placeholder run in them."""
    return "".join(alphabet[(i * 37 + seed * 11 + i * i) % len(alphabet)] for i in range(n))


def drawn(n: int, alphabet: str, seed: int = 4) -> str:
    """``n`` characters of ``alphabet`` drawn by a seeded generator (entropy near a key's)."""
    pick = random.Random(seed).choice
    return "".join(pick(alphabet) for _ in range(n))


# About one in ten such draws has humps long enough to read as a name and is let through
# (`reads_as_word`); this one does not.
LETTERS_KEY = drawn(24, string.ascii_letters, seed=7)
LOWER_KEY = drawn(24, string.ascii_lowercase + string.digits)


# Which round each file came in: tests/data/secrets_corpus/rounds.json.
ROUNDS: dict[str, str] = json.loads((CORPUS / "rounds.json").read_text(encoding="utf-8"))["rounds"]


def round_of(stem: str) -> str:
    return ROUNDS[stem]


def rows(split: str, round_: str | None = None) -> list[dict[str, Any]]:
    return [
        row
        for path in sorted(CORPUS.glob("*.jsonl"))
        if round_ is None or round_of(path.stem) == round_
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and (row := json.loads(line))["split"] == split
    ]


def refused(text: str) -> bool:
    return not FILTER.check(text).allowed


def test_the_corpus_is_split_before_tuning_and_labelled() -> None:
    held, tune = rows("heldout"), rows("tune")
    assert 0.3 < len(held) / (len(held) + len(tune)) < 0.45
    for row in held + tune:
        assert row["label"] in ("secret", "benign") and row["source"]
        assert row["seed"] is None or row["label"] == "secret"
    sources = {row["source"].split(":")[0] for row in held}
    assert {
        "gitleaks/gitleaks",
        "Yelp/detect-secrets",
        "trufflesecurity/trufflehog",
        "praetorian-inc/noseyparker",
        "mongodb/kingfisher",
        "secretlint/secretlint",
        "sirwart/ripsecrets",
        "Skyscanner/whispers",
        "semgrep/semgrep-rules",
        "Plazmaz/leaky-repo",
        "Samsung/CredSweeper",
        "aquasecurity/trivy",
        "advanced-security/secret-scanning-custom-patterns",
        "bridgecrewio/checkov",
        "Checkmarx/2ms",
        "SonarSource/sonar-text",
    } <= sources
    # The fourth round: benign text only, from several repositories, each in both splits.
    fourth = rows("heldout", "fourth") + rows("tune", "fourth")
    assert {row["label"] for row in fourth} == {"benign"}
    assert len({row["source"].split(":")[0] for row in rows("tune", "fourth")}) >= 3
    assert len({row["source"].split(":")[0] for row in rows("heldout", "fourth")}) >= 3


def held_out_counts(round_: str | None) -> tuple[int, int, int, int, int, int]:
    """(seed hits, seed rows, secret hits, secret rows, benign refused, benign rows)."""
    held = rows("heldout", round_)
    secrets = [row for row in held if row["label"] == "secret"]
    seed = [row for row in secrets if row["seed"]]
    benign = [row for row in held if row["label"] == "benign"]
    return (
        sum(refused(row["text"]) for row in seed),
        len(seed),
        sum(refused(row["text"]) for row in secrets),
        len(secrets),
        sum(refused(row["text"]) for row in benign),
        len(benign),
    )


@pytest.mark.parametrize(
    ("round_", "floor"),
    # (docs/continuity.md): one row lost, or one more benign row refused, fails.
    [
        # The fifth pass refused one more of the first round's held-out benign rows (5 to 6).
        # The eighth pass (a service's name and its token, words after -p and in connection
        # strings, "@" in a URL's password) took one more seed row here, 3 in the second.
        # Recounted in the twentieth pass (earlier passes took one more and let one through).
        # The twenty-first (a lone word as a URL's password) one more.
        ("first", (80, 86, 367, 390, 5, 204)),
        # The ninth pass (word starts, Zapier, tgram://, PAT, AppRole, long key values) 3 more.
        # The twenty-first pass (a lone word as a URL's password) one more.
        ("second", (5, 6, 525, 569, 0, 161)),
        # The seventh pass (issued tokens by prefix and length) took 12 more (445 to 457);
        # the eighth 4 more, and let 2 benign rows through (links, templates, previews);
        # the ninth 6 more; the eleventh one more; recounted in the fifteenth (later passes
        # took 3 more seed rows).
        # The sixteenth pass 5 more, and let one through: RFC 6750's sample bearer token,
        # a placeholder now.
        ("third", (34, 40, 475, 583, 1, 30)),
        # The sixth pass: benign configs and docs by other people (no secrets in it).
        ("fourth", (0, 0, 0, 0, 1, 169)),
        # The seventh pass: secretlint's rule snapshots, held out before any was read.
        # The sixteenth pass's rules took one more (a key after the word pass or pw).
        ("fifth", (2, 3, 14, 18, 5, 17)),
        # The tenth pass: ripsecrets' and whispers' tests, held out before any was read;
        # its rules (XML key/value entries, random-letter parts) took one more (24 to 25);
        # the eleventh pass one more.
        # The twentieth pass (a Compose file's escaped $$VAR, $${VAR}: a reference, not a
        # value) one fewer (26 to 25): a row whose only value the catalog found is such a
        # reference (counted, not read).
        ("sixth", (11, 11, 25, 29, 0, 8)),
        # The eleventh pass: talisman's detector tests, held out before any was read; its
        # rules took none of them (most are a label and a word: UnsafeString); recounted in
        # the fifteenth (the twelfth's and fourteenth's rules took 10).
        ("seventh", (12, 27, 12, 27, 0, 7)),
        # The fifteenth pass: semgrep-rules' secret rule tests, held out before any was read
        # (17/23, 104/118, 2/32); its rules let one more benign row through. Recounted in
        # the eighteenth (later passes took 1 more seed row and 1 secret; its own rules,
        # SonarQube's tokens, one more).
        ("eighth", (18, 23, 106, 118, 1, 32)),
        # The fifteenth pass: leaky-repo's leaked config files, held out before any was
        # counted (12/20, 15/24, 1/18); its rules (WordPress keys and salts, FileZilla's
        # base64 password, Laravel's base64: key) took 2 more.
        ("ninth", (14, 20, 17, 24, 1, 18)),
        # The sixteenth pass: CredSweeper's test samples, held out before any was counted
        # (80/116, 114/170, 3/31); its rules (a document's PW:, misspelled labels, curl's and
        # PowerShell's arguments, IDENTIFIED BY, JWKs, issuers' prefixes) took 23 more.
        # The nineteenth pass's (what surrounds a secret: escapes before the providers' own
        # edges, markup around a label, URL-encoded labels) one more seed row.
        ("tenth", (99, 116, 138, 170, 3, 31)),
        # The sixteenth pass: trivy's secret scanner tests, held out before any was counted
        # (6/7, 9/15, 1/4, once two keys of other vendors were dropped from its benign
        # rows); its rules (Azure's key signature, a GitHub token glued to a word) one more.
        ("eleventh", (6, 7, 10, 15, 1, 4)),
        # The seventeenth pass: GitHub's custom secret patterns and checkov's secret tests,
        # held out before any was counted (30/47, 51/75, 1/169); most of what is missed is
        # a common password or a sample value their patterns report (password=qwerty,
        # Password=ddd, 0100...). Its rules (Okta's SSWS scheme, a check's name, a path)
        # refused one benign row fewer.
        ("twelfth", (30, 47, 51, 75, 0, 169)),
        # The seventeenth pass: 2ms's rule tests, held out before any was counted (9/11,
        # 187/190, 0/5: most began as gitleaks' rules); its rules (a base64 JWT, Sidekiq's
        # name with a suffix, Cloudflare's Origin CA key) took 2 more.
        # The twenty-first (a lone word as a URL's password) the last one.
        ("thirteenth", (11, 11, 190, 190, 0, 5)),
        # The eighteenth pass: sonar-text's rule examples, held out before any was counted
        # (16/26, 26/42, 7/50); its rules (SonarQube's, MWS's and Infura's keys) took one
        # more; its placeholders (a Key Vault reference, #{name}#, code joining literals, a
        # token's parts named) let none of the held-out benign rows through.
        # The twentieth pass (a Compose file's escaped $$VAR) let 3 more through (7 to 4).
        # The twenty-first (a lone word as a URL's password) took 2 more, both seed rows.
        ("fourteenth", (18, 26, 29, 42, 4, 50)),
        # All rounds together, as the twelfth pass counted them (`--rows all`, before and
        # after its rules only): its rules (an .env line's or a sentence's word) took 7
        # more held-out secrets, all seed rows (1398 to 1405); the rounds' own floors were
        # not recounted one by one. The fourteenth pass's (a word in a password's element,
        # pword, a key block missing its dashes, JWE) 6 more, all seed rows (1405 to 1411).
        # The fifteenth pass added the eighth and ninth rounds (173/216, 1530/1758, 16/646
        # before its rules): its rules took 2 more and let one benign row through.
        # The sixteenth added the tenth and eleventh rounds (261/339, 1655/1943, 19/681
        # before its rules): its rules took 18 more seed rows and 29 secrets in all, and
        # refused no more benign rows.
        # The seventeenth added the twelfth and thirteenth rounds (309/386, 1735/2018,
        # 20/850 with the twelfth, 318/397, 1922/2208, 19/855 with both, before their
        # rules): the rules took 3 more seed rows and 4 secrets in all, and refused 2
        # benign rows fewer.
        # The eighteenth added the fourteenth round (337/423, 1952/2250, 25/905 before its
        # rules): its rules took 2 more secrets in all, none of them seed rows.
        # The nineteenth pass (no new round) one more, a seed row of the tenth round.
        # The twentieth (a Compose file's escaped $$VAR) one fewer secret, of the sixth
        # round, and 3 benign rows fewer refused, of the fourteenth.
        # The twenty-first (a lone word as a URL's password) 5 more secrets, 2 of them seed
        # rows, and refused no more benign rows.
        # The twenty-third (X's bearer tokens, Salesforce's session tokens, JFrog's reference
        # tokens by their shape) 2 more secrets, and refused no more benign rows.
        (None, (340, 423, 1961, 2250, 22, 905)),
    ],
    ids=[
        "first round's rows",
        "second round's rows",
        "third round's rows",
        "fourth round's rows",
        "fifth round's rows",
        "sixth round's rows",
        "seventh round's rows",
        "eighth round's rows",
        "ninth round's rows",
        "tenth round's rows",
        "eleventh round's rows",
        "twelfth round's rows",
        "thirteenth round's rows",
        "fourteenth round's rows",
        "all rows together",
    ],
)
def test_held_out_recall_and_false_positives_hold_their_measured_floor(
    round_: str | None, floor: tuple[int, int, int, int, int, int]
) -> None:
    seed_hits, seed, hits, secrets, refused_benign, benign = held_out_counts(round_)
    assert (seed, secrets, benign) == (floor[1], floor[3], floor[5])  # the corpus as measured
    assert seed_hits >= floor[0]
    assert hits >= floor[2]
    assert refused_benign <= floor[4]


def test_the_redactor_and_the_filter_agree_on_the_corpus() -> None:
    # One catalog: a text the filter refuses is one the redactor changes, and back.
    for row in rows("tune")[::7]:
        text = row["text"]
        assert refused(text) == (REDACTOR.redact(text) != text), text[:80]


# --- shapes added for the corpus -----------------------------------------------------

# "PRIVATE KEY" falls at each of the three byte alignments of base64 across these kinds.
WRAPPED = [
    base64.b64encode(
        f"-----BEGIN {kind}-----\n{body(64, B64)}\n-----END {kind}-----\n".encode()
    ).decode()
    for kind in ("RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY")
]
PPK = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: key\nPublic-Lines: 2\n"
    f"{body(64, B64)}\n{body(4, B64)}\nPrivate-Lines: 1\n{body(44, B64, 5)}\n"
    f"Private-MAC: {body(64, HEX)}"
)
SECRET = body(32)
NEW_SHAPES = [
    ("tls.key in a Secret", f"data:\n  tls.key: {WRAPPED[0]}", WRAPPED[0]),
    ("wrapped EC key in JSON", f'{{"key": "{WRAPPED[1]}"}}', WRAPPED[1]),
    ("wrapped OpenSSH key", f"k={WRAPPED[2]}", WRAPPED[2]),
    ("PuTTY key", PPK, body(44, B64, 5)),
    (
        "Jenkins encrypted secret",
        f"<secret>{{AQAAABAAAAAQ{body(24, B64)}}}</secret>",
        body(24, B64),
    ),
    ("_pw label", f'cloudant_pw = "{SECRET}"', SECRET),
    ("prefixed api-key flag", f"--softlayer-api-key {SECRET}", SECRET),
    ("unsigned JWT", "eyJ0eXAiOiJKV1QiLA0KImFsZyI6Im5vbmUifQ.eyJ" + body(40), body(40)),
    ("env list", f'{{ name: "API_KEY", value: "{SECRET}" }}', SECRET),
    ("YAML env list", f'- name: DB_PASSWORD\n  value: "{SECRET}"', SECRET),
    ("Postman header", f'{{"key": "Authorization", "value": "Bearer {SECRET}"}}', SECRET),
    ("XML key/value", f'<add key="ApiSecret" value="{SECRET}" />', SECRET),
    ("header pair", f'[["X-Api-Key", "{SECRET}"], ["Accept", "json"]]', SECRET),
    ("setProperty", f'System.setProperty("DISCORD_TOKEN", "{SECRET}")', SECRET),
    ("docker login -p", f"docker login -u ci -p {SECRET} ghcr.io", SECRET),
    ("mysql -p", f"mysql -h db -u root -p{SECRET} app", SECRET),
    ("sshpass", f"sshpass -p '{SECRET}' ssh admin@host", SECRET),
    ("Kubernetes Secret data", f"kind: Secret\ndata:\n  password: {body(16, B64)}", body(16, B64)),
    ("data before kind", f"data:\n  extra: {body(20, B64)}\nkind: Secret", body(20, B64)),
    ("ya29.c.", "ya29.c." + body(150, ALNUM + "-_"), "ya29.c."),
    ("Mailgun", "MAILGUN=key-" + body(32, HEX), "key-"),
    ("New Relic user key", "NRAK-" + body(27, string.ascii_uppercase + string.digits), "NRAK-"),
    ("New Relic license key", body(36, HEX) + "NRAL", "NRAL"),
    ("label with a suffix", f'my_password_super_secure = "{SECRET}"', SECRET),
    ("Go var with a type", f'var fooToken string = "{SECRET}"', SECRET),
    ("Make ?=", f'FOO_TOKEN ?= "{SECRET}"', SECRET),
    ("PHP .=", f'$fooToken .= "{SECRET}"', SECRET),
    ("comparison", f'if (api_key === "{SECRET}") {{', SECRET),
    ("reversed comparison", f'if ("{SECRET}" == my_password) {{', SECRET),
    ("quoted after label", f'password "{SECRET}";', SECRET),
    ("XML element on its own lines", f"<fooToken>\n    {SECRET}\n</fooToken>", SECRET),
    ("Sidekiq", f"BUNDLE_GEMS__CONTRIBSYS__COM: {body(8, HEX)}:{body(8, HEX, 4)}", body(8, HEX)),
    ("telegram", f"bot 7302518846:A{body(34, ALNUM + '_-')}", ":A"),
    # Added in the second pass (issue 19.4), each a kind of shape, not a corpus row.
    ("quoted password with punctuation", f"db_pass: '{SECRET[:6]},.:;!'", SECRET[:6]),
    ("password with spaces", 'password = "correct horse battery staple"', "horse battery"),
    ("array password", f'char password[32] = "{SECRET}";', SECRET),
    ("typed password", f'var password: String = "{SECRET}"', SECRET),
    ("R assignment", f'db_password <- "{SECRET}"', SECRET),
    ("Spanish label", f"contraseña = {SECRET}", SECRET),
    ("camelCase suffix", f'mySecretString = "{SECRET}"', SECRET),
    ("define with a space", f'#define API_KEY "{SECRET}"', SECRET),
    (
        "random letters",
        f"password: {body(16, string.ascii_letters)}",
        body(16, string.ascii_letters),
    ),
    ("curl over lines", f"curl -X POST https://h/a \\\n  -d x \\\n  -u dev:{SECRET}", SECRET),
    ("curl key as user", f'curl -u "{SECRET}:" https://h', SECRET),
    ("curl quoted parts", f'curl --user "{{ab12-cd}}":"{{{SECRET}}}" https://h', SECRET),
    ("value on the next line", f'String ACCOUNT_KEY\n        = "{SECRET}";', SECRET),
    ("default after env lookup", f'process.env.ACCOUNT_KEY ||\n  "{SECRET}"', SECRET),
    ("YAML value below", f"secret:\n  {SECRET}\nother: 1", SECRET),
    ("random value after KEY", f'const HEROKU_KEY = "{SECRET}"', SECRET),
    ("random value after LOGIN", f'SONAR_LOGIN := "{SECRET}"', SECRET),
    ("access id", f'sumologic.accessId = "su{body(12)}"', "su" + body(12)),
    ("user_auth", f'"user_auth": "{body(40, B64)}="', body(40, B64)),
    ("OpenAI marker", f"sk-team-name-{body(20)}T3BlbkFJ{body(20)}", "T3BlbkFJ"),
    ("pretty JWT header", f"ewogICJhbGciOiAiSFMyNTYiCn0.eyJ{body(20)}.{body(30)}", "ewogIC"),
    ("GCP key file", '{"type": "service_account", "project_id": "p"}', "service_account"),
    ("AppSync key", "da2-" + body(26, string.ascii_lowercase + string.digits), "da2-"),
    ("Twilio key, any letters", "SK" + body(32), "SK" + body(32)),
    ("Mailgun key, any letters", "key-" + body(32, string.ascii_lowercase + string.digits), "key-"),
    ("telegram named", f"telegram token = '869511423:{body(35, ALNUM)}'", body(35, ALNUM)),
    (
        "PEM flattened",
        f"-----BEGIN RSA PRIVATE KEY----- Rg8T {body(40, B64)} -----END RSA PRIVATE KEY-----",
        body(40, B64),
    ),
    (
        "PEM in JSON in JSON",
        f'"private_key": "-----BEGIN PRIVATE KEY-----\\\\n{body(40, B64)}\\\\n'
        '-----END PRIVATE KEY-----"',
        body(40, B64),
    ),
    # Added in the third round (issue 19.4), each a kind of shape, not a corpus row.
    ("label, dash, quoted value", f"acme token - '{SECRET}'", SECRET),
    ("Markdown cell", f"| apiKey |{SECRET} |", SECRET),
    ("quoted value opening with a space", f"acme token = ' {SECRET} '", SECRET),
    ("numbered label", f"acme token2 = '{SECRET}'", SECRET),
    ("value below its '='", f'const acmeApiKey =\n  "{SECRET}";', SECRET),
    ("Jenkins secret with a name", f"<secret>{{acme AQAAABAAA {SECRET}}}</secret>", SECRET),
    ("Jenkins secret, long", f"<secret>{{AQAAABAAA {body(120, B64)}}}</secret>", body(120, B64)),
    ("bare Key=", f"[DEBUG] Using Key={SECRET}", SECRET),
    ("key in a query", f"https://api.acme.io/v1/users?key={SECRET}", SECRET),
    ("random parts are not attributes", f'acme_secret: "{SECRET}.{body(6)}.{body(27)}"', SECRET),
    ("a service's name, its key quoted", f"acme '{SECRET}'", SECRET),
    ("Discord bot token", f"MTAy{body(22)}.{body(6)}.{body(27)}", body(27)),
    ("Vault service token", "VAULT_TOKEN=hvs." + body(24), "hvs." + body(24)),
    ("Twilio account SID", "AC" + body(32, HEX), "AC" + body(32, HEX)),
    ("Atlassian Data Center", "BBDC-" + body(44, B64), body(44, B64)),
    ("Tableau token", f"{body(22, B64)}==:{body(32)}", body(32)),
    ("LaunchDarkly key", "sdk-" + "-".join(body(n, HEX, n) for n in (8, 4, 4, 4, 12)), "sdk-"),
    (
        "SAS signature",
        f"?sv=2022-11-02&sr=c&sp=r&se=2025-04-04&sig={body(40, ALNUM + '%')}",
        body(40, ALNUM + "%"),
    ),
    ("Zapier hook", f"https://hooks.zapier.com/hooks/catch/{body(24)}", body(24)),
    (
        "docker auth escaped thrice",
        '{\\"auth\\":\\"' + body(24, B64) + '\\"}',
        body(24, B64),
    ),
    # Added in the fourth pass (issue 19.4), each a kind of shape, not a corpus row.
    ("api key glued to a name", f'acme_iamapikey = "{SECRET}"', SECRET),
    ("api_key glued to a name", f"slapi_key: {SECRET}", SECRET),
    ("a letter before key", f"ACME_SKEY={SECRET}", SECRET),
    ("random letters after a key name", f'acme_key: "{LETTERS_KEY}"', LETTERS_KEY),
    ("value, then its login", f"acme: {SECRET} / dev@example.com", SECRET),
    ("labelled login", f"acme: {SECRET} / acme_email = dev@example.com", SECRET),
    ("login, then its value", f"dev@example.com / {SECRET}", SECRET),
    (
        "one-case value after a name",
        f"acme '{LOWER_KEY}'",
        LOWER_KEY,
    ),
    ("dashed value after a name", f"acme '{body(12)}_{body(10, seed=5)}-x'", body(12)),
    ("repeated hex sample after a key name", "acme_key = " + "0a1b2c3d" * 5, "0a1b2c3d"),
    ("npmrc _auth", f"//registry.npmjs.org/:_auth={body(28, B64)}=", body(28, B64)),
    ("short docker auth", '{"auth": "MTIzOjEyMw=="}', "MTIzOjEyMw"),
    # Added in the fifth pass (issue 19.4, Nosey Parker's and Kingfisher's rules), each a
    # kind of shape, not a corpus row.
    ("a credential's kind, a space, its value", f"acme SECRET {SECRET}", SECRET),
    ("kinds in a row", f"acme secret access token {SECRET}", SECRET),
    ("a kind glued to a name and its value", f"acmePRIVATE-key-{SECRET}", SECRET),
    ("a name ending in a kind, then =", f"acmeACCESS={SECRET}", SECRET),
    ("Bearer and a colon", f"Bearer: {SECRET}", SECRET),
    (
        "PEM lines as joined literals",
        f'"-----BEGIN RSA PRIVATE KEY-----" +\n"{body(64, B64)}" +\n"{body(64, B64, 5)}"',
        body(64, B64),
    ),
    ("netrc over lines", f"machine api.acme.io\n  login dev\n  password {SECRET}", SECRET),
    (
        "Teams webhook, old host",
        f"https://outlook.office.com/webhook/{body(8, HEX)}@{body(8, HEX, 5)}/IncomingWebhook/"
        + body(32, HEX, 6),
        body(32, HEX, 6),
    ),
    ("NetworkCredential", f'new NetworkCredential("dev", "{SECRET}")', SECRET),
    (
        "DirectoryEntry over lines",
        f'new DirectoryEntry("LDAP://acme.io",\n    "dev",\n    "{SECRET}");',
        SECRET,
    ),
    ("a quoted password holding a backtick", f"password = '`{SECRET}'", SECRET),
    ("Azure DevOps PAT", body(76) + "AZDO" + body(4, seed=5), body(76)),
    ("Grafana API key", "eyJrIjoi" + body(60, B64), body(60, B64)),
    ("Dropbox short-lived token", "sl." + body(140, ALNUM + "-_"), body(140, ALNUM + "-_")),
    # Added in the seventh pass (issue 19.4), each a kind of shape, not a corpus row.
    ("Dependency-Track key", "DT_KEY=odt_" + body(32), body(32)),
    ("Buildkite token", "bkua_" + drawn(40, string.ascii_lowercase + string.digits), "bkua_"),
    ("NuGet key", "nuget push x " + "oy2" + drawn(43, string.ascii_lowercase + HEX), "oy2"),
    ("Zoho token", f"1000.{drawn(32, HEX)}.{drawn(32, HEX, 5)}", drawn(32, HEX)),
    ("Twitch stream key", "live_126031192_" + body(30), body(30)),
    ("Airtable token", f"pat{body(14)}.{body(64, HEX)}", body(64, HEX)),
    ("Asana token", f"1/{'1248440223456784'}:{body(32, HEX)}", body(32, HEX)),
    ("Doppler token with its environment", "dp.st.dev." + body(43), body(43)),
    ("New Relic license key with its region", "eu01xx" + body(30, HEX) + "NRAL", "NRAL"),
    ("Shopify key, base62", "shpss_" + body(32), body(32)),
    ("Tailscale key", f"tskey-auth-{body(12)}-{body(24, seed=5)}", body(24, seed=5)),
    ("Bitbucket key", f"bitbucket_key={SECRET}", SECRET),
    ("a .env password, one word", "REACT_APP_AUTH_PASSWORD=whiteduke", "whiteduke"),
    ("INI password, commented out", "# DB_PASS=horsebattery  # old", "horsebattery"),
    ("PsExec password", f"psexec \\\\host -u admin -p {SECRET[:10]} cmd", SECRET[:10]),
    ("URL password before an example host", "https://user:s3cr3tPass9@api.example.com/", "s3cr3t"),
    ("a quoted word compared with a password", "if password == 'logmein':", "logmein"),
    ("a quoted word assigned to a password", '$pfxPassword = "goodspec";', "goodspec"),
    ("PASS in capitals", f"PASS = '{SECRET}'", SECRET),
    ("Terraform variable default", f'variable "okta_token" {{\n  default = "{SECRET}"\n}}', SECRET),
    ("Vault unseal key", f"Unseal Key 1: {body(44, B64)}", body(44, B64)),
    ("Azure Container Registry password", body(42) + "+ACR" + body(6, seed=5), body(42)),
    ("Azure Storage key", body(76) + "+ASt" + body(5, seed=5) + "A==", body(76)),
    # Added in the eighth pass (issue 19.4), each a kind of shape, not a corpus row.
    ("a service's name, = and its token", f"STRIPE={SECRET}", SECRET),
    ("a service's name, : and its token", f"github: {SECRET}", SECRET),
    ("a service's name, its token quoted", f"acme = '{LOWER_KEY}'", LOWER_KEY),
    ("a service's name in two words", f"acme_mail={SECRET}", SECRET),
    (
        "a service's token amid other lines",
        f"# app\nname: web\nimage: nginx:1.27\nSTRIPE={SECRET}\nport: 8080\ngithub: {LOWER_KEY}",
        LOWER_KEY,
    ),
    ("a quoted word given with =>", "'password' => 'logmein',", "logmein"),
    ("a quoted word compared with a secret", 'if creds.Secret != "open-sesame" {', "sesame"),
    (
        "ThingsBoard token",
        f"https://thingsboard.cloud/api/v1/{LOWER_KEY[:20]}/telemetry",
        LOWER_KEY[:20],
    ),
    ("an @ in a URL's password", "mongodb+srv://app:bria@pass135!@db.example.net/x", "pass135"),
    ("a word after PsExec's -p", "psexec \\\\host -u admin -p braksha cmd", "braksha"),
    ("a word after docker login -p", "docker login -u ci -p hunterquay ghcr.io", "hunterquay"),
    ("a word glued to mysql's -p", "mysqldump -u root -pstarfleet app", "starfleet"),
    (
        "a connection string's Password=word;",
        'Open("Server=db;User ID=app; " & "Password =bill_user;Initial Catalog=x;")',
        "bill_user",
    ),
    ("escaped quotes around a word", '$password = \\"goodspec\\";', "goodspec"),
    # Added in the ninth pass (issue 19.4), each a kind of shape, not a corpus row.
    (
        "a token after a word ending in page",
        "statuspage_token = 0f9e8d7c-2b1a-4c3d-8e9f-a0b1c2d3e4f5",
        "0f9e8d7c",
    ),
    ("a personal access token's PAT", f'Azure_DevOps_PAT = "{SECRET}"', SECRET),
    (
        "Zapier hook, an account and a hook id",
        "https://hooks.zapier.com/hooks/catch/2536582/o3mbtpo/",
        "o3mbtpo",
    ),
    ("Telegram bot token in Apprise's URL", f"tgram://123456789:{body(35)}/-1001", body(35)),
    (
        "Vault AppRole secret id after its role id",
        'role_id = "6a1d2c3b-1f0e-4a2b-9c8d-7e6f5a4b3c2d"\n'
        'secret_id = "0f9e8d7c-2b1a-4c3d-8e9f-a0b1c2d3e4f5"',
        "0f9e8d7c",
    ),
    ("a service's name ending in a row's word", f"heatmapSECRET {SECRET}", SECRET),
    ("FullStory API key", f"- na1.{body(100, B64)}", body(100, B64)[:40]),
    (
        "a long token after a key's name",
        f"acme_key = eyJhbGciOiJIUzI1NiJ9.{body(300)}",
        body(300)[:40],
    ),
    ("BestTime private key", f"https://besttime.app/api/v1/keys/pri_{body(32)}", body(32)),
    (
        "SoftLayer key in its SOAP endpoint",
        f"http://api.softlayer.com/soap/v3.1/{body(64, HEX)}",
        body(64, HEX),
    ),
    # Added in the tenth pass (issue 19.4, ripsecrets' and whispers' tests), each a kind of
    # shape, not a corpus row.
    (
        "snake name with a random-letter part",
        f'<user name="admin" password="{LETTERS_KEY[:12]}_HARDcoded" />',
        LETTERS_KEY[:12],
    ),
    (
        "property list key and value",
        f"<key>Password</key>\n\t<string>{body(10)}</string>",
        body(10),
    ),
    (
        "config entry key and value",
        f"<entry>\n  <key>db.password</key>\n  <value>{body(10)}</value>\n</entry>",
        body(10),
    ),
    ("Maven master password", f"<master>{{{body(44, B64)}=}}</master>", body(44, B64)),
    ("env password glued to a name", "SSHpassword=qwerty7a", "qwerty7a"),
    # Added in the eleventh pass (issue 19.4, talisman's tests and the tune split's misses).
    (
        "a quoted password holding a backslash",
        f'"password": "`{body(8)}\\{body(8, seed=5)}",',
        body(8, seed=5),  # past the backslash: it stayed in the text
    ),
    ("a key's element with a random value", f"<ConsumerKey>{body(30)}</ConsumerKey>", body(30)),
    ("a pw label", f'{{"pw": "{body(10)}"}}', body(10)),
    (
        "an INI password under a section",
        "[smtp]\nhost = mail\nSmtpPassword = bluewhale\n",
        "bluewhale",
    ),
    (
        "a password below the sentence announcing it",
        f"Please use the following password to proceed:\n\n{body(32, HEX)}\n\nThen log in.",
        body(32, HEX),
    ),
    (
        "a quoted secret holding punctuation",
        f'jwtsecret: "7`D\'}}/{body(12)};W\\{body(12, seed=5)}"',
        body(12, seed=5),
    ),
    (
        "a word password in a URL's query",
        "jdbc:mysql://db/app?user=admin&userpass=bluewhale",
        "bluewhale",
    ),
    # Added in the twelfth pass (issue 19.4: a label given a literal word where the
    # context says it is one: an .env line, a sentence).
    ("an env line's capitalised word", "DB_PASSWORD=CorrectHorse\nDEBUG=1", "CorrectHorse"),
    ("an env line's password name in lower case", "adminpwd=Juniperberry", "Juniperberry"),
    ("a compose file's environment item", "    - POSTGRES_PASSWORD=bluewhale", "bluewhale"),
    ("an env line's secret word", "export APP_SECRET=blueberrymuffin", "blueberrymuffin"),
    ("a password word in a sentence", "ok, my password is correcthorse. thanks", "correcthorse"),
    ("a password word after a colon", "The wifi password: Fluffybunny", "Fluffybunny"),
    (
        "a quoted password word in a sentence",
        "Ensure the password for user 'postgres' is 'admin' or change the .env file.",
        "admin",
    ),
    ("an env line's quoted word", "DB_PASSWORD='CorrectHorse' # rotate", "CorrectHorse"),
    ("a Dockerfile's ENV line", "FROM postgres\nENV POSTGRES_PASSWORD=Juniper", "Juniper"),
    (
        "a compose file's environment mapping",
        "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: correcthorse\n",
        "correcthorse",
    ),
    ("a secret in an environment mapping", '  APP_SECRET: "blueberrymuffin"', "blueberrymuffin"),
    ("a secret in a sentence", f"my api key is {body(24, HEX)}", body(24, HEX)),
    ("a service's name on its key", f"apikey=weather:{body(32, HEX)}", body(32, HEX)),
    # Thirteenth pass (issue 19.4: a test log's status lines let through): PASS in
    # capitals is still a password's label where no test log is around it.
    ("PASS alone on its line", "USER: bob\nPASS: Hunter2\nHOST: db1", "Hunter2"),
    ("PASS before a comment", "PASS: Hunter2x  # the wifi", "Hunter2x"),
    ("PASS not starting a line", "db PASS: Hunter2x and more", "Hunter2x"),
    ("PASS quoted", 'PASS = "Hunter2x" # rotate', "Hunter2x"),
    ("a compared value closing a call", "if (secret === hunter2Xy9) {", "hunter2Xy9"),
    ("a value closing a call", "login(password=Tr0ub4dor3x)", "Tr0ub4dor3x"),
    ("one colon, no space", "db_pass:Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("Make's or Go's assignment", "DB_PASS ::= Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("random parts joined by _", "key: xkt93ab_plm42bq_w0rr1xz", "xkt93ab_plm42bq_w0rr1xz"),
    (
        "random capitals joined by _",
        "ACCESS_KEY=AKX7_Q93JF_LK2P9_ZZ81QW",
        "AKX7_Q93JF_LK2P9_ZZ81QW",
    ),
    # Fourteenth pass (issue 19.4): a word in an element a closing tag names as a
    # password or a secret (XML has no variables); a key block whose first dashes were
    # lost; an encrypted token (JWE) in its compact form.
    ("a word in a password element", "<Password>correcthorse</Password>", "correcthorse"),
    (
        "a word in a secret element with attributes",
        '<secret id="1"> blueberrymuffin </secret>',
        "blueberrymuffin",
    ),
    ("a password element named by its closing tag", "<db pass> Juniper9 </dbpass>", "Juniper9"),
    ("a short password element", "<ftp_pass>opensesame</ftp_pass>", "opensesame"),
    # PWORD, a password's short name (talisman's list), starting a word.
    ("pword on an env line", "pword=CorrectHorse", "CorrectHorse"),
    ("pword after a separator", 'db_pword: "Xk29dkq02la9"', "Xk29dkq02la9"),
    (
        "a key block missing its first dashes",
        f"BEGIN RSA PRIVATE KEY-----\n{body(64)}\n-----END RSA PRIVATE KEY",
        body(64),
    ),
    (
        "a compact JWE",
        f"the reply held eyJhbGciOiJSU0EtT0FFUCJ9.{body(43)}.{body(16, seed=2)}.{body(30, seed=3)}"
        f".{body(22, seed=4)}",
        body(30, seed=3),
    ),
    # Fifteenth pass (issue 19.4, semgrep-rules' tests as the eighth round): tokens by the
    # format their issuer documents; .npmrc's _password, whose value is the password even
    # when it reads as a word (the file has no variables).
    ("Kolide key", f"k2sk_v1_{body(24)}", body(24)),
    (
        "Onfido live token",
        f"api_live.{body(11, ALNUM + '_-')}.{body(32, seed=2)}",
        body(32, seed=2),
    ),
    (
        "Braintree production token",
        f"access_token$production${body(16, string.ascii_lowercase + string.digits)}"
        f"${body(32, HEX, seed=3)}",
        body(32, HEX, seed=3),
    ),
    (
        ".npmrc password, a word",
        "//npm.acme.dev/releases/:_password=CorrectHorseBatteryStaple",
        "CorrectHorseBatteryStaple",
    ),
    (".npmrc password, base64", f"_password={body(20, B64)}=", body(20, B64)),
    # Near misses of the fifteenth pass's placeholders: an account's real key beside a
    # repeated run, a key named like a public one's owner but not one.
    (
        "a hex key that is not one digit repeated",
        f'PRIVATE_KEY = "0x{body(64, HEX)}"',
        body(64, HEX),
    ),
    ("a service's key that is not a public key", f'"pubsub": "{body(40)}"', body(40)),
    # Fifteenth pass, for people writing to a page: the word password in their languages
    # (a full-width colon after it in Chinese, Japanese and Korean), and a password given
    # after the word and a space, shaped as people make one.
    ("German label", "Passwort: Sonnenschein2024", "Sonnenschein2024"),
    ("French label", "mot de passe = Soleil2024!", "Soleil2024!"),
    ("Portuguese label", "senha: Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("Polish label", "Hasło: Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("Russian label, capitalised", "Пароль: qwerty123x", "qwerty123x"),
    ("Chinese label, full-width colon", "密码：abc12345xyz", "abc12345xyz"),
    ("Japanese label", "パスワード：hunter2hunter", "hunter2hunter"),
    ("Korean label", "비밀번호: hunter2hunter", "hunter2hunter"),
    ("password after a space", "username alice password Winter2024!", "Winter2024!"),
    ("password after a space, mid-sentence", "ssh in with password toor1234 please", "toor1234"),
    ("password after a space, both cases", "the wifi passwd Tr0ub4dor here", "Tr0ub4dor"),
    ("German word after a space", "Kennwort Sonnenschein2024", "Sonnenschein2024"),
    ("a German sentence", "mein Passwort ist Sonnenschein2024", "Sonnenschein2024"),
    ("a Portuguese sentence", "minha senha é Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("a Chinese sentence, no space", "我的密码是abc12345xyz", "abc12345xyz"),
    ("a Japanese sentence", "パスワードはhunter2hunterです", "hunter2hunter"),
    ("an accented password with digits", "contraseña: Ñandú2024x", "Ñandú2024x"),
    # A sentence's word then a mark and digits is a password, not a word ending the sentence.
    ("a word, a dot and digits", "the wifi password is summer.0929", "summer.0929"),
    # Fifteenth pass, from leaky-repo's leaked config files (the ninth round): WordPress's
    # keys and salts, a password FileZilla stores base64-encoded, Laravel's APP_KEY.
    (
        "WordPress salt",
        f"define( 'SECURE_AUTH_SALT', '{body(30)}(>M%0Vl 2(#o0|{body(20, seed=5)}' );",
        body(30),
    ),
    (
        "FileZilla's base64 password",
        f'<Pass encoding="base64">{body(40, B64)}==</Pass>',
        body(40, B64),
    ),
    ("Laravel's APP_KEY", f"APP_KEY=base64:{body(43, B64)}=", body(43, B64)),
    # Sixteenth pass, from CredSweeper's test samples (the tenth round): a short password
    # label in a document, its misspellings, libcurl's and PowerShell's password arguments,
    # curl's bearer flag, SQL's IDENTIFIED BY, a JSON Web Key's private part, a key block
    # under a log's prefixes, and issuers' prefixes.
    ("a document's ID/PW pair", "ID:master PW:dipPr10Gg!", "dipPr10Gg!"),
    ("pass in a message", "ssh alice@10.0.0.7 (pass:Prl23Db#@)", "Prl23Db#@"),
    ("a quoted pw", '{pw:"Winter2024"}', "Winter2024"),
    ("a misspelled label", "PSWRD:=FlUgeGeHeImEn05", "FlUgeGeHeImEn05"),
    ("another misspelling", 'pasword = "Tr0ub4dor&3"', "Tr0ub4dor&3"),
    (
        "libcurl's password option",
        f'curl_easy_setopt(curl, CURLOPT_USERPWD, "user:{body(14)}");',
        body(14),
    ),
    (
        "PowerShell's secure string of a literal",
        "$pw = ConvertTo-SecureString 'P@ssw0rd2024!' -AsPlainText -Force",
        "P@ssw0rd2024!",
    ),
    ("curl's bearer flag", f"curl --oauth2-bearer {body(32)} https://api.acme.dev", body(32)),
    (
        "MySQL's IDENTIFIED WITH ... BY",
        "ALTER USER 'app'@'%' IDENTIFIED WITH caching_sha2_password BY 'Qx7vLm29pz';",
        "Qx7vLm29pz",
    ),
    ("Oracle's bare IDENTIFIED BY", "CREATE USER scott IDENTIFIED BY Tiger2024;", "Tiger2024"),
    (
        "a JSON Web Key's private part",
        f'{{"kty": "EC", "crv": "P-256", "d": "{body(43, ALNUM + "_-")}"}}',
        body(43, ALNUM + "_-"),
    ),
    (
        "a key block in a build log",
        f"#6 0.245 -----BEGIN PRIVATE KEY-----\n#6 0.245 {body(64, B64)}\n"
        "#6 0.245 -----END PRIVATE KEY-----",
        body(64, B64),
    ),
    ("Docker's access token", f"dckr_pat_{body(27, ALNUM + '_-')}", body(27, ALNUM + "_-")),
    ("Together AI's key", f"TOGETHER_API_KEY=tgp_v1_{body(43)}", body(43)),
    ("Brevo's key", f"xkeysib-{body(64, HEX)}-{body(16)}", body(64, HEX)),
    ("PostHog's personal key", f"phx_{body(47)}", body(47)),
    ("Google's refresh token", f"refresh: 1//0{body(60, ALNUM + '_-')}", body(60, ALNUM + "_-")),
    ("GitLab's session cookie", f"_gitlab_session={body(32, HEX)}", body(32, HEX)),
    ("Heroku's new key", f"HRKU-{body(60, ALNUM + '_-')}", body(60, ALNUM + "_-")),
    (
        "a password's default after an environment lookup",
        'PASSWORD = os.environ.get("PASSWORD") or "at5G6zi!m"',
        "at5G6zi!m",
    ),
    ("a key in a log's colours", f"\x1b[93msk-proj-{body(48)}T3BlbkFJ{body(20)}\x1b[0m", body(48)),
    # Sixteenth pass, from trivy's secret scanner tests (the eleventh round): Azure's keys
    # by their signature, a fine-grained GitHub token glued to a word.
    (
        "Azure's key by its signature",
        f"AZURE_AI_KEY={body(52)}JQQJ99CEACYeBjFXJ3w3AAABACOG{body(4, seed=5)}",
        body(52),
    ),
    (
        "a fine-grained GitHub token glued to a word",
        f"ourgithub_pat_11{body(20)}_{body(59, seed=6)}",
        body(59, seed=6),
    ),
    # Seventeenth pass, from GitHub's custom secret patterns (the twelfth round): an Okta
    # API token after Okta's own authorization scheme, with no label.
    ("an Okta token after its scheme", f"SSWS 00{body(40, ALNUM + '_-')}", body(40, ALNUM + "_-")),
    # From CredSweeper's and secretlint's samples: an app's installation token in GitHub's
    # newer form, and a private key's DER bytes in base64 with no PEM markers (PKCS #1 and
    # PKCS #8 RSA, SEC 1 EC, Ed25519), bare or wrapped under a label.
    (
        "a GitHub app installation token holding a JWT",
        f"ghs_20260523_eyJ{body(30, seed=5)}.eyJ{body(60)}.{body(43, seed=6)}",
        body(60),
    ),
    (
        "a PKCS #8 RSA key's DER in base64",
        f'String key = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{body(300, B64)}";',
        body(300, B64),
    ),
    (
        "a PKCS #1 RSA key's DER, wrapped",
        "data : MIIBOgIBAAJBA"
        + "".join(f"{body(51 if i == 0 else 64, B64, seed=i)}\n        " for i in range(5)),
        body(64, B64, seed=3),
    ),
    ("an EC key's DER (SEC 1)", f"MHcCAQEEI{body(150, B64)}", body(150, B64)),
    ("an Ed25519 key's DER (PKCS #8)", f"k: MC4CAQAwBQYDK2VwBCIEI{body(43, B64)}", body(43, B64)),
    (
        "an OpenSSH private key's body without its markers",
        f"key = b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ{body(400, B64)}",
        body(400, B64),
    ),
    # From 2ms's rule tests (the thirteenth round): a JWT base64-encoded again, at each of
    # the three alignments of its ".eyJ"; Cloudflare's Origin CA key; Sidekiq's credentials
    # under a name with a suffix.
    *(
        (
            f"a base64 JWT, its header {len(header)} characters",
            "data: " + base64.b64encode(f"{header}.eyJ{body(30)}.{body(43)}".encode()).decode(),
            base64.b64encode(f"{header}.eyJ{body(30)}.{body(43)}".encode()).decode()[-40:],
        )
        for header in ("eyJhbGciOiJSUzI1NiJ9", "eyJhbGciOiJSUzI1NiJ9x", "eyJhbGciOiJSUzI1NiJ9xy")
    ),
    (
        "Cloudflare's Origin CA key",
        f"CLOUDFLARE_ORIGIN_CA: v1.0-{body(24, HEX)}-{body(146, HEX, seed=5)}",
        body(146, HEX, seed=5),
    ),
    (
        "Sidekiq's credentials under a name with a suffix",
        "BUNDLE_GEMS__CONTRIBSYS__COMToken=6f5557b2:9d8870b0",
        "6f5557b2:9d8870b0",
    ),
    # From sonar-text's rule examples (the fourteenth round): SonarQube's project, user
    # and global analysis tokens with no label; an Amazon MWS auth token; an Infura
    # project's key at the end of its endpoint.
    *(
        (f"a SonarQube {kind} token", f'setx "X" "{prefix}_{body(40, HEX)}"', body(40, HEX))
        for kind, prefix in (("project", "sqp"), ("user", "squ"), ("global", "sqa"))
    ),
    (
        "an Amazon MWS auth token",
        'props.set("m", "amzn.mws.3b8be74a-5f63-5770-5bad-19bd40c0ac65")',
        "3b8be74a-5f63-5770-5bad-19bd40c0ac65",
    ),
    (
        "an Infura key in its endpoint",
        f"'2': 'wss://mainnet.infura.io/ws/v3/{body(32, HEX)}',",
        body(32, HEX),
    ),
    # A lone lower-case word as a URL's password (the twenty-first pass): a connection
    # string holds the password itself.
    (
        "a word as a database URL's password",
        "engine = create_engine('mysql+mysqlconnector://scott:tiger@localhost/foo')",
        "tiger",
    ),
    (
        "a word as a redis URL's password",
        "redis://bob:saleneinasldeins@10.0.0.7:6379",
        "saleneinasldeins",
    ),
    (
        "a capitalised name as a URL's password",
        "DATABASE_URL=mysql://app:BlueHarborSeven@db.internal/app",
        "BlueHarborSeven",
    ),
    (
        "a word as a git remote's password",
        "git clone https://deploy:marmalade@git.internal.corp/app.git",
        "marmalade",
    ),
    # Tokens by their shape (the twenty-third pass): X's app-only bearer token, a Salesforce
    # session token, a JFrog reference token (base64 of "reftkn:01:...").
    (
        "an X bearer token",
        f"the stream answers to {'A' * 21}Kq7x{'A' * 7}9%2B{body(70)}%3D{body(4)} now",
        f"{'A' * 21}Kq7x{'A' * 7}9%2B{body(70)}%3D{body(4)}",
    ),
    (
        "a Salesforce session token",
        f"sf_session = 00D5g000004Xq2P!AQ4A{body(60)}.{body(30)}",
        f"00D5g000004Xq2P!AQ4A{body(60)}.{body(30)}",
    ),
    (
        "a JFrog reference token",
        f"pulled with {base64.b64encode(f'reftkn:01:1754321098:{body(31)}'.encode()).decode()}",
        base64.b64encode(f"reftkn:01:1754321098:{body(31)}".encode()).decode(),
    ),
]


@pytest.mark.parametrize(
    ("text", "secret"), [c[1:] for c in NEW_SHAPES], ids=[c[0] for c in NEW_SHAPES]
)
def test_each_new_shape_is_refused_and_masked(text: str, secret: str) -> None:
    assert refused(text)
    redacted = REDACTOR.redact(text)
    assert MASK in redacted and secret not in redacted.replace(MASK, "")


# --- placeholders and references are let through --------------------------------------

JWT_IO = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0"
    "IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PLACEHOLDERS = [
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    f'{{"id_token": "{JWT_IO}"}}',
    "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "xoxb-xxxxxxxxx-xxxxxxxxxx-xxxxxxxxxxxx",
    '"token": "xoxp-572370529330-573807301142-572331691188-####################"',
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\n<your private key here>\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----",
    "fn::secret: ops_eyJzaWduSW5B..[Redacted]",
    "env:\n  API_KEY: ${{ secrets.API_KEY }}",
    "password: {{ .Values.postgresql.password }}",
    "API_KEY=$API_KEY",
    '[{"name": "API_KEY", "value": "${API_KEY}"}]',
    "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db",
    'headers = [("Authorization", f"Bearer {token}")]',
    'echo "$PASS" | docker login -u ci --password-stdin',
    "mysql -u root -p",
    'publicToken = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
    '<input name="authenticity_token" value="' + body(40) + '">',
    'LLM_SECRET_NAME = "NEXUS-GPT4-API-KEY"',
    "kind: ExternalSecret\nspec:\n  data:\n    - secretKey: password\n      remoteRef:\n"
    "        key: prod/db",
    "kind: Secret\ndata:\n  extra: YmFyCg==",
    f"Authorization: Bearer {JWT_IO}",
    "apiKey: process.env.STRIPE_SECRET_KEY!,",
    "apiKey: this.#apiKey, cache: this.#cache",
    "api_key: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/api-key-AbCdEf",
    "secret: MySecretValue",
    '"hashed_secret": "' + body(40, HEX) + '",',
    "password_digest: " + body(40, HEX),
    'password_hint = "XMLHttpRequest"',
    "secret:\n  name: app-secrets\n  key: password",
    'public_key = "' + body(40) + '"',
    'idempotency_key = "a1b2c3d4-e5f6-4890-abcd-ef1234567890"',
    "report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d",
    'cache_key = "user-1234-profile"',
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n" + "A" * 10 + "/SK" + body(32) + "/x\n",
    # Third round: a bare key that is a digest, a public half, a name; a dash in prose.
    "[DEBUG] Using Key=" + body(64, HEX),
    "publishable key: pk_live_" + body(24),
    "site key: " + body(40),
    'key: "user-profile-settings-cache"',
    "the token - 'see the docs'",
    "echo $TOKEN | base64",
    'config.secrets.apiToken2 = "settings.oauth2Client.token"',
    f"checksum '{body(40, HEX)}'",
    # Fourth pass: a namespaced name, a login beside a name or a link, one-case hex, words.
    'token_type = "ns42:AgencyIdentificationCodeType"',
    "maintainer: jdoe / jdoe@example.com",
    "dev@example.com / https://example.com/" + drawn(20, ALNUM),
    f"checksum '{drawn(24, HEX)}'",
    'acme_key: "TheQuickBrownFoxJumpsOverIt"',
    "cache_skey=" + drawn(24, ALNUM),
    'Password *string `json:"password"`',
    "Token *oauth2.Token",
    "the password field must be set",
    # Fifth pass: escaped placeholders, selectors, routes, encodings, labels, previews.
    '"password": "&lt;YOUR_PASSWORD&gt;"',
    'this.addPassword = "#add-password";',
    'let accountKey = Buffer.from("accountKey", "base64");',
    """put '/forgot-password' => "cms/sites/passwords#update", as: 'update_password'""",
    'usernameLabel:"Username or email:",passwordLabel:"Password:",rememberMeLabel:"Me:"',
    "FORGOT_PASSWORD=$BASE_URL/classroom/#/forgot_password",
    "https://example.com/search?q=x&page_token=" + drawn(24, ALNUM + "-_"),
    "export OP_SERVICE_ACCOUNT_TOKEN=ops_eyJzaWduSW5BZGRyZXNzIjoiaHR0cHM6...",
    "public key " + drawn(40, ALNUM),
    "gpg key " + drawn(16, HEX.upper()),
    "cache key " + drawn(32, HEX),
    "the access token expired yesterday",
    'private static final String TOKEN_HEADER = "X-Auth-Token";',
    # Seventh pass: one character repeated, a word in code or YAML, a bucket's key, a
    # sample after a prefix, a .env reference.
    "https://user:1111@service.com/api",
    "password = open_sesame",
    "password: db_password",
    "DB_PASSWORD=changeme",
    "DB_PASSWORD=${DB_PASSWORD}",
    "s3_bucket_key=" + drawn(24, ALNUM),
    "odt_" + "a" * 32,
    "1000.00 and 2/3 of 1/2",
    "if password == 'password':",
    'password = "required"',
    "password_field = 'password-input'",
    '"password": "kennwort"',
    'user.password = "hashed_pw"',
    "BYPASS = 'x1y2z3w4v5u6'",
    'variable "db_password" {\n  type = string\n  default = null\n}',
    # Eighth pass: a link of any scheme, a shell's "fail when unset", Key Vault and Octopus
    # references, bullet-masked previews, Mapbox's public tokens.
    "secret: s3://bucket/path/to/secret",
    "DB_PASSWORD=${DB_PASSWORD:?DB_PASSWORD must be set}",
    'ApiKey: "@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/api/)"',
    'password: "#{DbPassword}"',
    "api key: \u2022\u2022\u2022\u2022\u2022\u2022\u2022\u2022abcd",
    "apiKey: \u25cf\u25cf\u25cf\u25cf\u25cf\u25cf3f9a",
    "mapbox_token: pk.eyJ" + body(60) + "." + body(22, seed=5),
    # A name and a value that read as a name in code, a digest, a resource's id, base64
    # of JSON, a URL's parameter: not a service's token.
    "sol = _linear_2eq_order1_type6(x, y, t)",
    '"Sid": "AWSThinkboxAWSPortal2"',
    "draft7=draft7_format_checker,",
    "ami: ami-0abcdef1234567890",
    "commit: " + drawn(40, HEX),
    "sha: " + drawn(40, ALNUM),
    "m = Model(base64_str='VGhlc2UgYXJlbid0IHRoZSBkcm9pZHMgeW91J3JlIGxvb2tpbmcgZm9y')",
    "video_id: " + drawn(24, ALNUM),
    '"protected": "eyJhbGciOiJIUzI1NiJ9"',
    "https://console.example.com/home#logs:group=/x;stream=" + drawn(24, ALNUM),
    "Preset: System-Generic_Hd_Mp4_Avc_Aac_16x9_Sdr_1280x720p_30Hz_5Mbps",
    # A URL with several hosts: the "@" of the first host ends its password (a word here).
    "postgresql://app:secret@h1:5432,app:secret@h2:5432/db",
    "https://ci:$CI_PASSWORD@registry.example.com/@scope/pkg@1.2.3",
    # A word that names a password or a placeholder, after -p or in a connection string.
    "psexec \\\\host -u admin -p password cmd",
    "docker login -u ci -p token ghcr.io",
    "Server=db;User Id=app;Password=myPassword;",
    "Data Source=db;Password=secret;Database=app;",
    'if client_secret == "disabled":',
    'secret = "hunter-two"',  # assigned, a word may be a state or a name
    # Ninth pass: a page's token, a PAT name given a reference or a pattern, a secret's id
    # with no role id beside it (Azure lists its client secrets' ids), a Zapier link.
    "next_page_token = " + drawn(24, ALNUM),
    "GITHUB_PAT: ${{ secrets.GITHUB_PAT }}",
    'NAME_PAT = "^[A-Za-z][A-Za-z0-9_]*$"',
    "Secret ID: 0f9e8d7c-2b1a-4c3d-8e9f-a0b1c2d3e4f5",
    f'myRowKey = "{drawn(32, ALNUM)}"',  # a row's key, the word starting a hump
    f"map-token {drawn(32, ALNUM)}",
    # A pattern's or a grammar's alternatives after a label's word (Pygments' lexers).
    "    r'Parent|Partition|PasswordChar|PictureMargin|'",
    "(r'(vcl_pass|vcl_hash|vcl_hit|vcl_init|vcl_backend_fetch|vcl_pipe|'",
    "(r'(token|name|variable|expression|body|case-body|\\*)',",
    "r'QSTRING|REAL|RECORD|RULE|SET OF|STRING|TOKEN|UDECIMAL|UNICODE|'",
    # An attribute chain after a key's name: code's value or type, not a random value.
    "def sign(self, private_key: ed25519.Ed25519PrivateKey, data: bytes):",
    "        if key == self.default_section:\n            self._defaults.clear()",
    'MovedAttribute("HTTPPasswordMgr", "urllib2", "urllib.request"),',  # a manager's name
    "see https://hooks.zapier.com/hooks/catch/ for the hook's address",
    # Tenth pass: Symfony's environment lookup, a name before a closing tag, a snake name
    # whose long parts read as names, an empty or referenced entry.
    "database_password: '%env(DB_PASSWORD)%'",
    "<environment>DB_PASSWORD=DB_PASSWORD</environment>",
    'password = "kCFBundleIdentifier_fallbackValue"',
    "<key>password</key>\n<value></value>",
    "<key>password</key>\n<value>${DB_PASSWORD}</value>",
    "    SmtpPassword=smtp_password,",  # a keyword argument, not an .env line
    '    key: typing.Union["_RSAPrivateKey", "_RSAPublicKey"],',  # an acronym is one hump
    # Eleventh pass: a public half's element, a word ending in "key" or "pw", a password's
    # struct, a name given to a password outside an INI section or naming a default.
    f"<PublicKey>{drawn(32, ALNUM)}</PublicKey>",
    f"<monkey>{drawn(32, ALNUM)}</monkey>",
    "pw = pwd.getpwnam(user)",
    'y.secret=!0;pw.key="yprjdz";var pw={',  # a minifier's name (the seeded look-alikes)
    "upw = 'xk39dkal2'",
    "password = hardcoded_value",
    "[db]\npassword = default_password",
    'token_types: "access,refresh,id_token"',  # names joined by commas: no digit
    '"Symfony_DB_Key": "\'%env(DB_SECRET_VALUE)%\'"',  # a reference quoted twice
    "Enter the new password:\n\n    getUserNameFromDatabase\n",  # a name, not random
    "Password hash:\n\n    pbkdf2_sha256$260000$" + drawn(22, ALNUM),  # a hash, not it
    "The password:\n\n$2b$12$" + drawn(53, B64),  # a crypt string: a hash too
    "https://x/login?user=bob&compass=northwest&bypass=enabled",  # words ending in pass
    "https://x/login?user=bob&password={password}",
    # Twelfth pass: a keyword argument (indented), a variable's name in capitals, a type,
    # a word ending in "pass", a public half; a sentence giving a state, not a password;
    # a keyboard's key.
    "    password=Fluffyhorse",
    "PASSWORD=DB_PASSWORD",
    "password=SecureString",
    "bypass=enabled",
    "STRIPE_PUBLISHABLE_KEY=Moonlighting",
    "The password is required.",
    "If the password is None, skip the login.",
    "the password is incorrect.",
    "The password is optional",
    "The password is then hashed with bcrypt.",
    "The password is String.",  # a type's word
    "the password is 'APP_DB_CREDENTIAL'",  # a variable's name
    # A name in a namespace, a digest's algorithm, a setting's name: not a service's key.
    "api_key=config:ApiKeyFromSettings",
    # An environment's mapping holding a type, a reference or a name in capitals; a
    # translation's label under a name in lower case.
    "class Settings:\n    DB_PASSWORD: SecretStr\n    API_KEY: ClassVar",
    "env:\n  DB_PASSWORD: ${{ secrets.DB_PASSWORD }}\n  APP_SECRET: APP_SECRET_VALUE",
    "de:\n  password: Passwort",
    "token = sha256:" + drawn(32, HEX),
    "Press the key: ctrl+alt+del; the secret is out.",
    "The token is 3600 seconds old; the api key is self.api_key",
    # Thirteenth pass: a test log's status lines (DejaGnu, Automake): a test's name and
    # what it checked, or a run of names alone.
    "PASS: gdb.arch/amd64-byte.exp: check contents of %r14l",
    "PASS: x86-64 F16C (Intel mode)",
    "Running ld-elf/elf.exp ...\nPASS: ld-elf/now-1\nPASS: ld-elf/orphan2\nFAIL: ld-elf/pr14926",
    "FAIL: addr2line -f option\nPASS: addr2line",
    "Running /src/ld/testsuite/ld-misc/defsym.exp ...\nPASS: ld-misc/defsym1",  # DejaGnu
    # A camelCase name closing a call or a comparison: a name, as without the ")".
    "console.log(aliceSecret === bobSecret);",
    "def __init__(self, secret_value: SecretType) -> None:",
    # A scope, "::", after a label's word: C++ or Perl names in a changelog or code.
    "\t(strlen_pass::get_len_or_size): Adjust to parameter change.",
    '$CPAN::HTTP::Credentials::VERSION = "1.9601";',
    # A snake name of three words or more in one case, a word maybe numbered: code's.
    "\t(get_dsa_key_fips186_with_seed_new): Ditto.",
    '.IX Item "rsa-exponent1 (OSSL_PKEY_PARAM_RSA_EXPONENT1) <unsigned integer>"',
    # Fourteenth pass: a word in an element no closing tag names as a password (a
    # property list's key, a word ending in "pass" or "pword"), or one naming a
    # placeholder, a type or a variable; a key block's name in prose; four dotted parts.
    "<key>CFBundleDisplayName</key>",
    "<compass>northwest</compass><stopword>therefore</stopword>",
    "<label>Password</label><password>changeme</password>",
    "<password>String</password><Password>DB_PASSWORD</Password>",
    "<password>${DB_PASSWORD}</password>",
    "<AllowUsersToChangePassword>enabled</AllowUsersToChangePassword>",  # a setting
    'f"<password>{password}</password>"',  # a format string's variable (gcloud's mvn.py)
    "The file opens with BEGIN RSA PRIVATE KEY----- and a body.",
    'stopword=therefore\nstopwords = "a1b2c3d4e5f6g7h8"',  # pword ending a word
    f"eyJhbGciOiJIUzI1NiJ9.{drawn(20, ALNUM)}.{drawn(20, ALNUM)}.{drawn(20, ALNUM)}",
    # Fifteenth pass: a hex number of one digit repeated (a chain's native-token address,
    # the zero address); AWS's published secret key with its tail changed by a test
    # (FAKE, SAMPLE); a public key's name before its value; Datadog's client token (pub
    # and 32 hex digits), made to ship in a page; code's _password attribute and an
    # .npmrc reference.
    'export const NATIVE_TOKEN_ADDRESS = "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";',
    "token_address: 0x0000000000000000000000000000000000000000",
    "aws_secret_access_key:wJalrXUtnFEMI/K7MDENG/bPxRfiCYESAFAKEKEY",
    f'"pubkey": "{drawn(44, ALNUM)}",',
    f'public_key = "{drawn(44, ALNUM)}"',
    f'clientToken: "pub{drawn(32, HEX)}",',
    "self._password = password\nself._password=password",
    "//registry.npmjs.org/:_password=${NPM_PASSWORD}",
    # The languages' words before no password: a question, a prompt, a label's own word,
    # a placeholder; after a space, a word, a type, a version, a flag, digits alone.
    "Passwort vergessen? Passwort ändern",
    "das Passwort ist ungültig. le mot de passe est incorrect; a senha é obrigatória",
    "密码是什么？パスワードは英数字8文字以上です",
    # Translated messages (gettext catalogs): a word in another script after the label, a
    # placeholder's name in accented capitals, an accented word, an escaped line break.
    "passwd：密碼成功變更\npasswd: пароль успешно обновлён\npasswd: parolă actualizată cu succes",
    "  -p, --password CONTRASEÑA     cambia la contraseña\n  --password=MẬT-KHẨU  đặt mật khẩu",
    "Please enter the passphrase to%0Aprotect your new key",
    "Le mot de passe est peut-être incorrect.",
    # A man page's italic words, what its reader fills in (roff).
    r"\fIscheme\fR://[[\fIuser\fR][:\fIpass\fR]@]\fIhost\fR",
    'Passwort: ********\nKennwort: <Ihr Kennwort>\n"Passwort": "Passwort"',
    "密码：请输入密码",
    "password protected zip; password varchar2(64) not null",
    "password v1.2.3 and password --stdin and password sha256sum",
    "password 12345678, password changeme123, password ${DB_PASS}",
    # WordPress's sample config, an encoding's name before a colon, an empty element.
    "define( 'AUTH_KEY', 'put your unique phrase here' );",
    'Buffer.from(key, "base64"); encoding = base64:\n<Pass encoding="base64"></Pass>',
    # Near misses of the sixteenth pass: a minifier's short names and flags, a test log's
    # PASS, a label's word in a page's escaped HTML, a public JWK, binary digits, a
    # variable's secure string, a placeholder after IDENTIFIED BY, PostHog's project key.
    "x={pw:a,pass:true};pw:e,pass:1;the pass: 12 of 30",
    "PASS: gdb.base/break.exp: run to main",
    "&lt;div&gt;- password: String&lt;/div&gt;",
    f'{{"kty": "RSA", "e": "AQAB", "n": "{drawn(86, ALNUM + "_-")}"}}',
    "ghp_1010110010001010101001010101010101011001",
    "$pw = ConvertTo-SecureString $env:PASS -AsPlainText -Force",
    "CREATE USER scott IDENTIFIED BY password; IDENTIFIED BY '%s'",
    f"posthog.init('phc_{drawn(43, ALNUM)}')",
    # RFC 6750's sample bearer token (curl's manual); an Azure key's signature after a
    # sample's repeated character.
    'curl --oauth2-bearer "mF_9.B5f-4.1JqM" https://example.com',
    f"f {'o' * 52}JQQJ99AEAAAAAAAAAAAAAAAAAZFURg67",
    # Near misses of the seventeenth pass (checkov's own tests): a check's name under a
    # credential's label, a CloudFront origin access identity's path after "access";
    # SSWS before a value that is not an Okta token's length.
    "a = {'JSON Web Token': 'CKV_SECRET_9', 'Slack Token': 'CKV_SECRET_14'}",
    "{'origin_access_identity': ['origin-access-identity/cloudfront/E2QWRUHAPOMQZL']}",
    "Authorization: SSWS 00short",
    # Public keys' DER in base64 under a key's label (RSA's SPKI and PKCS #1, EC's,
    # Ed25519's) and a certificate's opening: none is a private key's.
    f'key = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{body(300, B64)}"',
    f'key = "MIIBCgKCAQEA{body(300, B64)}"',
    f'key: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE{body(86, B64)}"',
    f"key = MCowBQYDK2VwAyEA{body(43, B64)}",
    f"cert: MIIDdzCCAl+gAwIBAgIE{body(200, B64)}",
    # OpenSSH public keys' bodies under a key's label (an authorized_keys line's middle).
    f"key = AAAAC3NzaC1lZDI1NTE5AAAAI{body(43, B64)}",
    f"deploy_key = AAAAB3NzaC1yc2EAAAADAQABAAABAQ{body(340, B64)}",
    # Near misses of 2ms's tests: jwt.io's sample base64-encoded again; a Slack bot or user
    # token too short to be one.
    base64.b64encode(JWT_IO.encode()).decode(),
    "xoxb-12345-abcd234 xoxp-98765-xyz1",
    # The eighteenth pass (sonar-text's negatives): the replace-tokens task's #{name}#, a
    # placeholder wrapping its label (<:name:>), code joining a literal to a variable, the
    # word PLACEHOLDER, a token whose parts are named, a Key Vault reference, one
    # character repeated in each part of a token.
    'CONNECTION_STRING=mongodb://user:#{azure-replacement-token}#@mongo.local:27017/db"',
    'conn = "mongodb://<:username:>:<:sonarpassword:>@<:sonarhost:>"',
    'p += " --spring.datasource.password=" + password + " --spring.datasource.url=" + url;',
    "';PWD='      . $this->_config['password'] .';';",
    'connectionString="server=db;user id=tester;password=PLACEHOLDER;"',
    f"<adminToken>eyJ2ZXIiOiIyIiwidHlwIjoiSldUIn0{body(40)}.body.signature</adminToken>",
    '"Key": "@Microsoft.KeyVault(SecretUri=https://x.vault.azure.net/secrets/'
    f'Some-Subscription-Key-Dev/{body(32, HEX)})"',
    "api_key: '5555555555:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'",
    # Near misses of its shapes: a SonarQube token's prefix before too few digits, an
    # MWS token that is no UUID, an Infura endpoint given a name.
    "sonar.login=sqp_sonarqube_token sqa_b4556a16",
    "amzn.mws.your-token-here",
    "https://mainnet.infura.io/v3/your-api-key",
    # Near misses of the escape and joining fixes: variables after the flags, a state
    # after the kind, a format string and a placeholder after an escaped line break.
    '--api_key $API_KEY --client_secret "${SECRET}"',
    "my client_secret is required; the x-api-key is optional here",
    'printf "a\\nsecret: %s\\n" "$S"; echo "line\\nsecret: changeme"',
    "the password for this account is required. Password for the account: required",
    "The password for root: ********",
    # A Compose file's "$" escaped for its command's shell: a reference, not a value.
    'test: ["CMD", "mysqladmin", "ping", "--password=$$MYSQL_ROOT_PASSWORD"]',
    "command: redis-server --requirepass $${REDIS_PASSWORD}",
    'healthcheck: mysqladmin ping "--password=$$(cat /run/secrets/db)"',
    # A URL's password that stands for one: a word for a password, a metasyntactic word,
    # the user's name again (a default account), a host named for documentation.
    "postgresql://user:password@localhost/app",
    "mongo://user:pass@db/app and mysql://u:secret@db/app",
    "http_proxy=http://proxyuser:proxypass@proxyhost:3128",
    "<http://fred:fredpassword@example.com:8080/>",
    "http://gebruiker:wachtwoord@server:poort/",
    "new URL('https://abc:xyz@example.com')",
    "#     http://jschmoe:xyzzy@www.bogus.net:8000/",
    "postgres://postgres:postgres@db:5432/app",
    "deb https://apt:debian@example.org/debian",
    "https://deploy:marmalade@build.test/app.git",
    "https://USERNAME:PASSWORD@host/x and https://YOUR_USERNAME:YourPassword@host/y",
    # A quoted name after a word, in a changelog or a compiler's message: no service's key.
    "\tMerge branch 'Jamaika1-master-patch-68264' into 'master'",
    "lcUTF8.c: In function '_XlcAddGB18030LocaleConverters':",
    "Merge branch 'Rational2DoublePrecision_correction' into 'master'",
    "License: same-as-rest-of-p11kit",
    # Near misses of the token shapes: a longer run of A's (zeros in base64), a Salesforce
    # org's id alone, "reftkn" itself.
    f"AAAA{'A' * 40}{body(80)}",
    "Org ID: 00D5g000004Xq2PEAS (the org, not a session)",
    "cmVmdGtu is base64 for reftkn",
    # Google Secret Manager's name for a secret: where it is kept.
    "kafka-sources create k --sasl-password=projects/12345/secrets/my-sasl-secret/versions/1",
    "password: 'projects/my-proj/secrets/db-password/versions/latest'",
]


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_placeholders_and_references_are_not_secrets(text: str) -> None:
    assert FILTER.check(text).allowed, FILTER.check(text).reasons
    assert REDACTOR.redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        'password: "#hunter2#"',  # a word in delimiters may be a password: not a template
        "password=@Summer2024@",
        'stripe.api_key = "sk_test_' + body(24) + '"',  # not the published test key
        "password: @" + body(16) + "@",
        'password = "#{salt}' + SECRET + '"',  # a template inside a literal, not the whole value
        # One word in capitals and a number is not a check's name; one word between slashes
        # does not make a key a path.
        "token = 'ADMIN_2024'",
        "aws_secret_access_key = " + body(12, B64) + "/routes/" + body(20, B64, seed=5),
        "mapbox_secret: sk.eyJ" + body(60) + "." + body(22, seed=5),
        f"secret|{SECRET}|",  # not names joined by "|"
        "password | Hunter2|Pass9x",
        # After a Secret Manager name, what is no version is the value's own.
        "password=projects/12345/secrets/db/versions/1xK9#pQ",
        # A service's key whose tail is one-letter fragments is still a token.
        "luno '" + body(35) + "_M-xFP-F'",
        # "$$" before a value that is no variable's name in capitals: the value's own.
        "password=$$Xk9vLq2#mZ",
        "password: $$hunter2hunter2",
        # A real value after a Key Vault reference has closed; code joining a literal is
        # not a value, but a value with a space in it still is one.
        '"@Microsoft.KeyVault(VaultName=v;SecretName=s)" token=' + SECRET,
        "@Microsoft.KeyVault(SecretUri=https://v/ token=" + SECRET,  # never closed
        'password = "' + SECRET + ' x"',
        f"telegram 5555555555:{drawn(35, ALNUM)}",
        # A placeholder's word past the token, in the next field or part of a URL, does not
        # make the token one (a token's tail ends at a separator).
        f"curl https://api.x.com/?access_token=ghp_{body(36)}&redirect=example.com/cb",
        f"git clone https://ghp_{body(36)}@github.com/example/repo.git",
        f"GITHUB_TOKEN=ghp_{body(36)},PLACEHOLDER_NAME=1",
        f"ghp_{body(36)}:EXAMPLE",
        f"https://h/p?token=ghp_{body(36)}#example",
        f"q=ghp_{body(36)}%20example.com",
        # After an escape (a config inside a JSON string, a logged URL): a token, an AWS key
        # id and a label still start there.
        f'"a: 1\\nghp_{body(36)}\\nb: 2"',
        f"next=%0AAKIA{drawn(16, string.ascii_uppercase)}",
        f'"a: 1\\nsecret: {SECRET}\\nb: 2"',
        # A flag's words joined by "_"; a credential's kind joined to the word before it.
        "tool --api_key Xk9C3J27XDCG!q",
        f"tool --DB_PASSWORD {body(40, HEX)}",
        f"my client_secret is {SECRET}",
        f'the x-api-key is "{SECRET}"',
        # Whose password, or what for, between the word and its value in a sentence.
        "my password for the VPN is Tq7NqVwYS81VP#z, please don't share",
        "password for bob: Tq7NqVwYS81VP#z",
    ],
)
def test_values_that_only_look_like_templates_or_published_keys_are_caught(text: str) -> None:
    assert refused(text)


def test_a_real_value_next_to_a_placeholder_is_still_caught() -> None:
    text = f"example: AKIAIOSFODNN7EXAMPLE\nreal: ghp_{body(36)}"
    assert refused(text)
    assert "AKIAIOSFODNN7EXAMPLE" in REDACTOR.redact(text)


# A real token next to a sample's word or host, across a separator (the eighteenth pass found
# such tokens let through: the placeholder check read past the token to the next field).
NEXT_TO_A_SAMPLE_TOKENS = [
    f"ghp_{body(36)}",
    f"sk-ant-api03-{body(93, ALNUM + '-_')}AA",
    f"xoxb-{body(11, '0123456789')}-{body(13, '0123456789')}-{body(24)}",
    f"AKIA{drawn(16, string.ascii_uppercase)}",
    f"glpat-{body(20)}",
    f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx{body(20)}In0.{body(43, ALNUM + '-_')}",
]
NEXT_TO_A_SAMPLE_JOINS = ["&q=", ",", ";", "/", "@", ":", "#", "%20", "\\n", "+", "?", "|", " "]


@pytest.mark.parametrize("join", NEXT_TO_A_SAMPLE_JOINS)
@pytest.mark.parametrize("sample", ["example.com", "EXAMPLE", "placeholder", "xxxxxxxx"])
def test_a_token_next_to_a_sample_is_still_masked(sample: str, join: str) -> None:
    for token in NEXT_TO_A_SAMPLE_TOKENS:
        layouts = (f"{token}{join}{sample}", f"{sample}{join}{token}", f"k={token}{join}{sample}")
        for text in layouts:
            assert token[6:30] not in REDACTOR.redact(text), text


# A secret in what surrounds it on its way to a model or a memory (the nineteenth pass: a
# probe wrapped every value the catalog finds alone in 66 surroundings, and every label in
# 42 forms, and found these let through).
PEM_BODY = body(64, B64)
PEM_ESCAPED = f"-----BEGIN RSA PRIVATE KEY-----\\n{PEM_BODY}\\n-----END RSA PRIVATE KEY-----"
TOKEN_SURROUNDINGS = [
    "\x1b[1;31m{t}\x1b[0m",  # a log's colour and weight together
    "\x1b[38;5;208m{t}\x1b[0m",  # a 256-colour code
    "\x1b[31m{t}\x1b[0m",
    "_{t}_",  # Markdown's emphasis
    "__{t}__",
    "-{t}-",
    "the key: _{t}_.",
    "a\\n{t}\\nb",  # after a JSON string's escaped line break
    "%22{t}%22",  # after a URL's escaped quote
]
SURROUNDED_TOKENS = [
    *NEXT_TO_A_SAMPLE_TOKENS,
    f"AC{body(32, HEX)}",  # Twilio's account id: its own left edge
    f"{body(32, HEX)}-us12",  # Mailchimp's key
    f"{body(10, '0123456789')}:A{body(34)}",  # a Telegram bot's token
    f"MIIEowIBAAKCAQEA{body(48, B64)}",  # a private key's body without its markers
]


@pytest.mark.parametrize("around", TOKEN_SURROUNDINGS)
def test_a_token_is_masked_in_what_surrounds_it(around: str) -> None:
    for token in SURROUNDED_TOKENS:
        text = around.format(t=token)
        assert token[6:30] not in REDACTOR.redact(text), text
        assert refused(text), text


@pytest.mark.parametrize(
    "text",
    [
        '{"content": "# the deploy key\\n' + PEM_ESCAPED + '\\n"}',  # a tool's file, as JSON
        "\x1b[31m" + PEM_ESCAPED.replace("\\n", "\n"),
        "x\\t" + PEM_ESCAPED,
        f"The new client secret is abc8Q~{body(34, ALNUM + '_-')}.",  # a sentence ends after it
    ],
)
def test_a_key_block_or_a_secret_ends_where_its_text_runs_on(text: str) -> None:
    assert refused(text)
    assert PEM_BODY[10:40] not in REDACTOR.redact(text)
    assert body(34, ALNUM + "_-")[5:30] not in REDACTOR.redact(text)


LABEL_FORMS = [
    "**{l}:** {v}",  # what a model's answer writes
    "**{l}**: {v}",
    "- **{l}**: `{v}`",
    "*{l}*: {v}",
    "__{l}__: {v}",
    "<b>{l}</b>: {v}",
    "<strong>{l}:</strong> {v}",
    "<td>{l}</td><td>{v}</td>",
    "<th>{l}</th> <td class='v'>{v}</td>",
    "<dt>{l}</dt><dd>{v}</dd>",
    "{l} \u2192 {v}",
    "{l} \u2013 {v}",
    "The {l} is: {v}",
    "q={l}%3D{v}%26x%3D1",  # inside another URL's parameter
    "\x1b[32m{l}\x1b[0m: {v}",
    "\x1b[2m12:00\x1b[0m {l}={v}",
]
LABELLED = [
    ("password", "Xk9" + drawn(9, ALNUM) + "!q"),
    ("API key", body(32)),
    ("client_secret", body(40, HEX)),
    ("token", body(32)),
]


@pytest.mark.parametrize("form", LABEL_FORMS)
def test_a_labelled_secret_is_masked_in_markup_prose_and_urls(form: str) -> None:
    for label, value in LABELLED:
        text = form.format(l=label, v=value)
        assert value[3:20] not in REDACTOR.redact(text), text
        assert refused(text), text


@pytest.mark.parametrize(
    "text",
    [
        "**Password:** required",
        "**Password**: the one you chose when you signed up",
        "- **API key**: `YOUR_API_KEY`",
        "<td>Password</td><td>Your account password</td>",
        "<dt>token</dt><dd>A string the server issues at sign-in</dd>",
        "password \u2192 see the vault",
        "Token \u2013 a string that identifies the session",
        "The password is: incorrect.",
        "**Password:** *not set*",
        "q=password%3Dreset%26next%3D%2Fhome",
        "\x1b[1;32mPASS\x1b[0m test_token_refresh",
        f"the task-sk-{body(32)} job",  # glued to a word: a name, not a key
    ],
)
def test_markup_and_prose_around_a_label_alone_are_let_through(text: str) -> None:
    assert not refused(text)
    assert REDACTOR.redact(text) == text


# --- bounded work on hostile input ------------------------------------------------------

HOSTILE = [
    "sk-" + "a-" * 100_000,
    "password" + "_a" * 100_000 + "=x",
    '"' * 200_000 + "password",
    ('"' + "k" * 50 + '" == password ') * 3_000,
    ("kind: Secret\ndata:\n" + "  # c\n" * 10) * 3_000,
    ("data:\n  k: " + "A" * 20 + "\n") * 5_000,
    ("PuTTY-User-Key-File-2: x\n" + "y" * 100 + "\n") * 1_500,
    "LS0tLS1CRUdJTi" + "A" * 200_000,
    '{"name": "API_KEY", ' * 10_000,
    '["password", ' * 15_000,
    "docker login " + "-u x " * 30_000,
    "curl " + "-H x \\\n" * 30_000,
    'password = "' + "a " * 100_000,
    ("secret:\n  " + "k" * 30 + "\n") * 5_000,
    "a_" * 50_000 + "key=" + "b" * 30,
    "process.env.API_TOKEN ||" * 10_000,
    "sk-" + "T3Blbk" * 40_000,
    "secret " + "A" * 200_000,  # a long all-caps run after a label: was quadratic
    "key=" * 50_000,
    "Key=" + "Ab1" * 70_000,
    "a_key=" * 35_000,  # a key's name after each run of up to 1,000 characters
    "<secret>{acme " + "b" * 200_000,
    "token - " * 30_000,
    "apiKey |" * 30_000,
    ("M" + "A" * 25 + ".") * 10_000,
    "sv=2020-01-01" + "&a=b" * 50_000,
    ("acme '" + "aB1" * 30) * 3_000,
    "a" * 200_000 + "@example.com / x",
    ("k: " + "aB1" * 20 + " /") * 5_000 + " a@b.co",
    "x@y.co / " * 20_000,
    "secret " * 30_000,
    "acmeSECRET" + "_token" * 30_000,
    "private " + "A1" * 100_000,
    '"-----BEGIN RSA PRIVATE KEY-----" +' + ' "' * 100_000,
    "machine h\n login u\n" * 20_000,
    'DirectoryEntry("' + "a" * 150 + '", ' * 2_000,
    "password = '" + "`" * 100_000,
    "acme=" + "aB1_" * 50_000,
    "s://u:" + ("@" + "a" * 1_000) * 200,
    ("acme: " + "aB1" * 10 + " ") * 20_000,
    "<a_key>" + "aB1" * 70_000,
    "[s]\n" + "password" + " " * 100_000 + "= x",
    '"pw": "' + "\\a" * 100_000,
    "password:\n\n" * 30_000,
    'jwt_secret: "' + "7`" * 100_000,
    "?userpass=" + "a" * 200_000,
    ("&" + "a" * 19 + "_pass=") * 8_000,
    "BEGIN " * 50_000 + "PRIVATE KEY",  # a run of key names between BEGIN and the key's
    ("<a " + "b" * 90 + ">" + "c" * 40 + " ") * 3_000 + "</pass>",
    "</" + "a_" * 100_000 + "pass>",
    ("eyJ" + "a" * 20 + ".") * 20_000,
    # The sixteenth pass's shapes: short labels, a call's options, key blocks under line
    # prefixes, JWKs, Azure's signature, SQL, an environment lookup's default.
    "pw:" * 60_000,
    "PW:" + "aB1" * 70_000,
    'CURLOPT_USERPWD, "' + "a" * 200_000,
    "ConvertTo-SecureString" + " -Force" * 30_000,
    "-----BEGIN PRIVATE KEY-----\n" + "ab " * 100_000,
    '"kty": "RSA", ' + '"d": "' * 30_000,
    "A" * 200_000 + "JQQJ99",
    "identified with 'x' " * 20_000 + "by",
    "password or " * 20_000,
    "\x1b[93m" * 30_000 + "sk-",
    # The seventeenth pass's: Okta's scheme, a path's words, a DER key's wrapped lines.
    "SSWS " * 40_000 + "00",
    "access " + "abcde/" * 40_000,
    "MIIEvQIBADAN" + "A" * 40 + ("\n " + "B" * 15) * 20_000,
    "ghs_1_eyJ" + "a" * 10 + ".eyJ" * 40_000,
    " ZXlK" + "a" * 200_000,
    " ZXlK" * 40_000,
    # The eighteenth pass's: a Key Vault reference never closed, code joining literals.
    "@Microsoft.KeyVault(SecretUri=https://v/" + (" token=" + SECRET) * 5_000,
    'password = "' + " + a" * 60_000,
    "infura.io/v3/" * 20_000,
    "\\nsecret: " * 30_000,
    "%20ghp_" * 30_000,
    "my client_" * 30_000 + "secret is x",
    "--a_b_" * 30_000 + "api_key x",
    "password" + " for a" * 40_000 + " is x",
    "password for" + " x" * 60_000 + ": y",
    # The nineteenth pass's: colour codes scanned as spaces, markup around a label, a URL's
    # escapes.
    "\x1b[" + "1;" * 100_000 + "m",
    ("\x1b[1;31m" + "_" * 40) * 5_000 + "ghp_",
    "**password**" * 30_000 + ":",
    "<td>password</td>" * 10_000 + "<td",
    "password%3D" * 30_000,
    "%0A" * 60_000 + "password",
    "password \u2192 " * 30_000,
    # The twenty-third pass's: bearer tokens' A's, a session token's org id and "!".
    ("A" * 21 + "a1" * 30 + "%") * 5_000,
    ("00D" + "a" * 12 + "!") * 20_000,
    "cmVmdGtuOjAx" + "a" * 200_000 + "!",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_long_hostile_inputs_complete_and_stay_idempotent(text: str) -> None:
    # Each pattern is bounded (no nested quantifiers, look-arounds capped in length), so
    # these finish in about linear time; a catastrophic pattern would hang here.
    once = REDACTOR.redact(text)
    assert REDACTOR.redact(once) == once
    FILTER.check(text)
