"""Builds tests/data/secrets_corpus/*.jsonl from the test fixtures public secret scanners publish.

Run: .venv/bin/python bench/secret_fixtures.py [GITLEAKS_GIT DETECT_SECRETS_GIT TRUFFLEHOG_GIT]
     .venv/bin/python bench/secret_fixtures.py --third NOSEYPARKER_GIT KINGFISHER_GIT
     .venv/bin/python bench/secret_fixtures.py --fourth OWNER/NAME=GIT ... (see ``_FOURTH``)
     .venv/bin/python bench/secret_fixtures.py --fifth SECRETLINT_GIT
     .venv/bin/python bench/secret_fixtures.py --sixth RIPSECRETS_GIT WHISPERS_GIT
     .venv/bin/python bench/secret_fixtures.py --seventh TALISMAN_GIT
     .venv/bin/python bench/secret_fixtures.py --eighth SEMGREP_RULES_GIT
     .venv/bin/python bench/secret_fixtures.py --ninth LEAKY_REPO_GIT
     .venv/bin/python bench/secret_fixtures.py --tenth CREDSWEEPER_GIT
     .venv/bin/python bench/secret_fixtures.py --eleventh TRIVY_GIT
     .venv/bin/python bench/secret_fixtures.py --twelfth GITHUB_PATTERNS_GIT CHECKOV_GIT
     .venv/bin/python bench/secret_fixtures.py --thirteenth TWOMS_GIT
     .venv/bin/python bench/secret_fixtures.py --fourteenth SONAR_TEXT_GIT

(without the three, only written.jsonl is rebuilt, from bench/secret_written.py; with
``--third``, only the third round's two files)

Each argument is a git directory (bare or not) of the scanner's repository; files are read
at HEAD with ``git show`` (the fourteenth round's at a fixed commit). What is taken:

- gitleaks (cmd/generate/config/rules/*.go): each rule's ``tps`` (secrets) and ``fps``
  (benign). Literal strings are kept as written; where a rule builds its examples with
  ``utils.GenerateSampleSecrets(id, secrets.NewSecret(regex))`` the value is drawn here
  from the same regex (seeded) and set in two of gitleaks' own sample contexts, picked by
  a hash, so that no rule contributes 25 copies of one value.
- detect-secrets (tests/plugins/*_test.py): every ``pytest.mark.parametrize`` table whose
  rows are (text, expected) with a bool or a secret/None expectation is evaluated, and a
  row is a secret when the plugin test expects a finding. detect-secrets' negatives that
  hold a secret by any other reading (the keyword plugin's "double quotes required in C"
  rows) are listed in ``_DS_NOT_BENIGN`` and dropped, not relabelled.
- trufflehog (pkg/detectors/<name>/<name>_test.go, for the detectors in ``_TH_DETECTORS``):
  each pattern test case whose ``want`` is not empty becomes a secret, its ``input``
  evaluated from the file's string constants and ``fmt.Sprintf``.

Second round (issue 19), in files of their own so the first round's rows stay comparable:
``trufflehog_more`` (every other detector's pattern tests), ``detect_secrets_more`` (the
plugin tests' ``parametrize`` tables, which the first round's stubs did not read; their
negatives are left out: mostly near-miss tokens) and ``configs`` (benign: chunks of the
three repositories' own go.sum, CI workflows, Dockerfiles, pre-commit and release configs
and detect-secrets' ``.secrets.baseline``, at most 40 chunks a file).

Third round (issue 19.4), again in files of their own: ``noseyparker`` and ``kingfisher``,
each rule's ``examples`` (secrets) and ``negative_examples`` (benign) from the rules' YAML,
less every text an earlier file holds. Rules that name no credential (ids, hosts, buckets,
public keys, password hashes: ``_NOT_CREDENTIAL``) give no row; negatives that still hold a
credential (``_RULE_NOT_BENIGN``) are dropped, not relabelled.

Fourth round (issue 19, item 4), ``fourth``: benign text written by other people, six-line
chunks of the files ``_FOURTH`` names in five public repositories (CI workflows, compose and
``.env`` files, lockfiles, Kubernetes manifests, Terraform, cloud-init's docs), at most
``_FOURTH_PER_FILE`` a file and ``_FOURTH_PER_REPO`` a repository; chunks holding a literal
password or a private key (``_FOURTH_NOT_BENIGN``) are dropped, not relabelled.

Fifth round (issue 19.4), ``secretlint``: secretlint's rule snapshots (MIT), a case named
``ng.*`` a secret and ``ok.*`` benign by secretlint's own label (see ``fifth_round``).

Sixth round (issue 19.4), ``ripsecrets`` and ``whispers``: ripsecrets' test files (MIT; a
line of test/one_per_line a secret, a file of test/one_per_file a secret, a line of test/none
benign) and whispers' fixture files (Apache-2.0; a file whispers' test expects findings in
a secret, one it expects none in benign), by each tool's own tests (see ``ripsecrets``,
``whispers``).

Seventh round (issue 19.4), ``talisman``: talisman's detector tests (MIT; a text its test
expects a finding in a secret, one it expects none in benign; see ``talisman``).

Eighth round (issue 19.4), ``semgrep``: semgrep-rules' secret rule tests (the lines its
tests mark ``ruleid:`` secrets, ``ok:`` benign; see ``semgrep_rules``).

Ninth round (issue 19.4), ``leaky``: leaky-repo, a benchmark of leaked config files (its
author's Risk lines secrets, Informative lines benign; see ``leaky_repo``).

Tenth round (issue 19.4), ``credsweeper``: CredSweeper's test samples (what its tests expect
a default run to report secrets, the candidates its filters and model reject benign; see
``credsweeper``).

Eleventh round (issue 19.4), ``trivy``: trivy's secret scanner tests (a line its built-in
rules must report a secret, a line of a file they must report nothing in benign; see
``trivy``).

Twelfth round (issue 19.4), ``github_patterns`` and ``checkov``: GitHub's custom secret
patterns (a pattern's test text and the lines its expected spans lie on secrets, the other
lines of its test files benign; see ``github_patterns``) and checkov's secret tests (a line
its tests expect a finding on a secret, one they expect none on benign; see ``checkov``).

Thirteenth round (issue 19.4), ``twoms``: 2ms's rule tests (a rule's literal true positives
secrets, one text a value and three at most a rule, its false positives benign; see
``twoms``).

Fourteenth round (issue 19.4), ``sonar_text``: sonar-text's secret rule examples (LGPL-3.0,
read at its last commit under that licence: an example its rule must report a secret, one
it must not benign; see ``sonar_text``).

The split is chosen here, before any tuning: ``heldout`` when the first byte of the text's
SHA-256 is below 97 (38%), else ``tune`` (the fourteenth round's secrets by their value's
hash instead: see ``sonar_text``). A row's ``seed`` names the family of spec 000's
list it belongs to (generic labels, the named provider formats, PEM keys, JWTs), or null.
Every value is a scanner's fake test value.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import hashlib
import io
import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "secrets_corpus"
HELDOUT_BELOW = 97  # of 256: 37.9%


def split_of(text: str) -> str:
    return "heldout" if hashlib.sha256(text.encode()).digest()[0] < HELDOUT_BELOW else "tune"


def git_show(repo: str, path: str, rev: str = "HEAD") -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, "show", f"{rev}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def git_ls(repo: str, under: str, *, spaced: bool = False, rev: str = "HEAD") -> list[str]:
    """The paths under ``under`` at ``rev``. The rounds before the twelfth split the listing
    at any space (their corpus files were built so, and are kept as built); ``spaced`` splits
    at line ends, for repositories whose paths hold spaces (rsa/GeekMasher GPG.asc)."""
    out = subprocess.run(
        ["git", "--git-dir", repo, "ls-tree", "-r", "--name-only", rev, under],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.splitlines() if spaced else out.split()


# --- a tiny Go expression evaluator: strings, +, a few gitleaks helpers, fmt.Sprintf --------


class Unknown(Exception):
    """An expression this evaluator does not model; the element is skipped."""


_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*[\s\S]*?\*/|(?P<raw>`[^`]*`)|(?P<str>"(?:[^"\\\n]|\\.)*")"""
    r"""|(?P<chr>'(?:[^'\\\n]|\\.)+')|(?P<id>[A-Za-z_][\w.]*)|(?P<num>\d+)"""
    r"""|(?P<op>\.\.\.|:=|[-+*/%(){}\[\],:;=<>!&|^.])"""
)


def go_tokens(src: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if m is None:
            out.append(("op", src[pos]))
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup
        if kind is not None:
            out.append((kind, m.group()))
    return out


def go_string(tok: tuple[str, str]) -> str:
    kind, text = tok
    if kind == "raw":
        return text[1:-1]
    return str(ast.literal_eval(text))


class GoEval:
    def __init__(self, tokens: list[tuple[str, str]], env: dict[str, Any], rng: random.Random):
        self.t, self.env, self.rng = tokens, env, rng
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str]:
        j = self.i + k
        return self.t[j] if j < len(self.t) else ("eof", "")

    def next(self) -> tuple[str, str]:
        tok = self.peek()
        if tok[0] == "eof":
            raise Unknown("eof")
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        if self.next()[1] != text:
            raise Unknown(text)

    def skip_to_close(self) -> None:
        """Skip the rest of a bracketed expression (after its opener)."""
        depth = 1
        while depth:
            kind, text = self.next()
            if kind == "eof":
                return
            depth += text in "([{" and kind == "op"
            depth -= text in ")]}" and kind == "op"

    def expr(self) -> Any:
        value = self.primary()
        while self.peek()[1] == "+":
            self.next()
            right = self.primary()
            if not (isinstance(value, str) and isinstance(right, str)):
                raise Unknown("+")
            value += right
        return value

    def elements(self, close: str) -> list[Any]:
        """Comma-separated expressions up to ``close``; unknown ones become Unknown markers."""
        items: list[Any] = []
        while self.peek()[1] != close:
            if self.peek()[0] == "eof":
                raise Unknown("eof")
            start = self.i
            try:
                value = self.expr()
                if self.peek()[1] == ":":  # map entry: keep the value
                    self.next()
                    value = self.expr()
                if self.peek()[1] == "...":
                    self.next()
                    value = ("spread", value)
                items.append(value)
            except Unknown:
                items.append(Unknown)
                self.i = start
                depth = 0
                while True:  # skip to the next comma at this level
                    kind, text = self.peek()
                    if kind == "eof":
                        raise
                    if kind == "op" and text in "([{":
                        depth += 1
                    elif kind == "op" and text in ")]}":
                        if depth == 0:
                            break
                        depth -= 1
                    elif text == "," and depth == 0:
                        break
                    self.next()
            if self.peek()[1] == ",":
                self.next()
        self.next()
        return items

    def primary(self) -> Any:
        kind, text = self.next()
        if kind in ("raw", "str"):
            return go_string((kind, text))
        if text == "[" and self.peek()[1] == "]":  # []string{...}
            self.next()
            self.next()
            self.expect("{")
            return self.elements("}")
        if text == "map":  # map[string]string{...}
            while self.next()[1] != "{":
                pass
            return self.elements("}")
        if kind == "id":
            if self.peek()[1] == "(":
                self.next()
                args = self.elements(")")
                return self.call(text, args)
            if text in self.env:
                return self.env[text]
        raise Unknown(text)

    def call(self, name: str, args: list[Any]) -> Any:
        if any(a is Unknown for a in args):
            raise Unknown(name)
        classes = {
            "utils.Numeric": "[0-9]",
            "utils.Hex": "[a-f0-9]",
            "utils.AlphaNumeric": "[a-z0-9]",
            "utils.AlphaNumericExtendedShort": "[a-z0-9_-]",
            "utils.AlphaNumericExtended": "[a-z0-9=_\\-]",
            "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]",
        }
        if name in classes:
            return f"{classes[name]}{{{args[0]}}}"
        if name == "utils.Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name in ("secrets.NewSecret", "newPlausibleSecret"):
            return generate(args[0], self.rng)
        if name == "utils.GenerateSampleSecret":
            return f'{args[0]}_api_token = "{args[1]}"'
        if name == "utils.GenerateSampleSecrets":
            return sample_contexts(args[0], args[1])
        if name == "append":
            out: list[Any] = list(args[0])
            for a in args[1:]:
                if isinstance(a, tuple) and a[0] == "spread":
                    out += a[1]
                else:
                    out.append(a)
            return out
        if name == "fmt.Sprintf":
            return sprintf(args[0], args[1:])
        if name in ("strings.Repeat",):
            return args[0] * int(args[1])
        raise Unknown(name)


def sprintf(fmt: str, args: list[Any]) -> str:
    parts = iter(args)

    def sub(m: re.Match[str]) -> str:
        if m.group() == "%%":
            return "%"
        value = next(parts)
        if not isinstance(value, str):
            raise Unknown("sprintf arg")
        return value

    return re.sub(r"%%|%[-+# 0-9.]*[sqvd]", sub, fmt)


# gitleaks' GenerateSampleSecrets templates (cmd/generate/config/utils/generate.go).
_SAMPLES = (
    '{i}Token="{s}"',
    '{i}Token = "{s}"',
    "{i}Token={s}",
    "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}',
    '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    '{i}_token: "{s}"',
    'string {i}Token = "{s}";',
    'var {i}Token string = "{s}"',
    '{i}Token := "{s}"',
    "{i}Token := `{s}`",
    'String {i}Token = "{s}";',
    'var {i}Token = "{s}"',
    '${i}Token .= "{s}"',
    "{i}Token = '{s}'",
    'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"',
    '{i}_TOKEN = "{s}"',
    '{i}_TOKEN := "{s}"',
    '{i}_TOKEN ?= "{s}"',
)


def sample_contexts(identifier: str, secret: str) -> list[str]:
    """Two of gitleaks' sample contexts, picked by the secret's hash."""
    h = hashlib.sha256(secret.encode()).digest()
    picks = sorted({h[1] % len(_SAMPLES), h[2] % len(_SAMPLES)})
    return [
        _SAMPLES[k]
        .replace("{i}", identifier)
        .replace("{I}", identifier.upper())
        .replace("{s}", secret)
        for k in picks
    ]


# --- drawing a string from a simple regex (classes, literals, quantifiers) ---------------


def _class(body: str) -> str:
    chars: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            chars += list({"d": "0123456789", "w": _W}.get(nxt, nxt))
            i += 2
            continue
        if i + 2 < len(body) and body[i + 1] == "-":
            chars += [chr(x) for x in range(ord(c), ord(body[i + 2]) + 1)]
            i += 3
            continue
        chars.append(c)
        i += 1
    return "".join(dict.fromkeys(chars))


_W = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"


def generate(regex: str, rng: random.Random) -> str:
    regex = regex.replace("(?i)", "")
    out: list[str] = []
    i = 0
    while i < len(regex):
        c = regex[i]
        if c in "()|^$":
            raise Unknown("regex group")
        if c == "[":
            j = regex.index("]", i + 1)
            while regex[j - 1] == "\\":
                j = regex.index("]", j + 1)
            alphabet, i = _class(regex[i + 1 : j]), j + 1
        elif c == "\\":
            nxt = regex[i + 1]
            alphabet, i = {"d": "0123456789", "w": _W}.get(nxt, nxt), i + 2
        else:
            alphabet, i = c, i + 1
        low = high = 1
        if i < len(regex) and regex[i] == "{":
            j = regex.index("}", i)
            bounds = regex[i + 1 : j].split(",")
            low = int(bounds[0])
            high = int(bounds[1]) if len(bounds) > 1 and bounds[1] else low
            i = j + 1
        elif i < len(regex) and regex[i] in "+*?":
            low, high = {"+": (1, 24), "*": (0, 24), "?": (0, 1)}[regex[i]]
            i += 1
        out += [rng.choice(alphabet) for _ in range(rng.randint(low, high))]
    return "".join(out)


# --- gitleaks -------------------------------------------------------------------------------


def assignments(src: str, rng: random.Random) -> dict[str, Any]:
    """Every ``name := expr`` / ``name = expr`` in ``src`` this evaluator can compute."""
    tokens = go_tokens(src)
    env: dict[str, Any] = {}
    for i in range(1, len(tokens) - 1):
        kind, name = tokens[i - 1]
        if kind == "id" and "." not in name and tokens[i][1] in (":=", "="):
            ev = GoEval(tokens, env, rng)
            ev.i = i + 1
            try:
                env[name] = ev.expr()
            except (Unknown, ValueError, IndexError, SyntaxError):
                continue
    return env


def gitleaks(repo: str) -> Iterator[dict[str, Any]]:
    for path in git_ls(repo, "cmd/generate/config/rules/"):
        if not path.endswith(".go"):
            continue
        src = git_show(repo, path)
        for body in re.split(r"\nfunc ", src)[1:]:
            rule = re.search(r'RuleID:\s*"([^"]+)"', body)
            if rule is None:
                continue
            env = assignments(body, random.Random(rule.group(1)))
            for label, name in (("secret", "tps"), ("benign", "fps")):
                values = env.get(name, [])
                for value in values if isinstance(values, list) else []:
                    if not (isinstance(value, str) and value.strip()):
                        continue
                    if label == "benign" and any(bit in value for bit in _GL_NOT_BENIGN):
                        continue
                    yield row(value, label, rule.group(1), f"gitleaks/gitleaks:{path}")


# gitleaks' negatives that a reader would still call a credential: a rule rejects them for
# a length, alphabet or entropy detail, or because another rule owns them, not because they
# guard nothing. They are dropped (neither secret nor benign). Decided from the texts alone.
_GL_NOT_BENIGN = (
    "AIzaSy",  # real-format Google keys (Firebase SDK test keys, wrong lengths)
    "AIzaTesb6",
    "sk-ant-api03-abc123xyz",  # Anthropic keys off by a few characters
    "sk-ant-admin01-abc123xyz",
    "wrongStart :=",  # random tokens off by one letter of a prefix
    "wrongLength :=",
    "key = adf4b1dbRdW3",  # a random value under a key label
    "meraki-api-key: acdeFf05",
    "meraki_token = 5cb4a5",
    "3012a5754bbd716926f99c028f7ea428-us18",  # a Mailchimp-shaped key
    'value="33f!!lloppa"',  # passwords in a NuGet config
    'value="hal+9ooo_da!sY"',
    'value="abc"',
    "sntryu_e66c",  # Sentry tokens of the wrong length
    "sntryu_db70",
    "sntrys_emnO",
    "sgp_5555555d",  # Sourcegraph tokens with a flaw
    "sgp_local_d45b",
    "sgp_652d9a2e",
    "sgp_78Ad84a5",
    'telegram_api_token = "3192:',  # bot tokens with a flaw, under a token label
    'telegram_api_token = "58544548',
    'telegram_api_token = "telegram_api_token = "',
    '"token1": "xoxp-',  # Slack tokens with a flaw, under a token label
    '"token3": "xoxp-',
    "xoxb-12345-abcd234",
    ',apiKey:"6fe4476ee5a1832882e326b506d14126"',  # an API key, allowed by a stop word
    "SUMO_ACCESS_KEY: AbCeFG123",
    "Authorization: Basic eyJhbGci",  # a JWT in a header
    'nonMatchingToken := "',  # random values under a token label
)


# --- detect-secrets -------------------------------------------------------------------------

# Negatives of the keyword plugin that are secrets for agrun: the plugin skips them only
# because of the file type (no quotes in C) or quote style, not because no secret is there;
# and its symbols-only passwords (",.:-¨@*¿?!"), which are passwords all the same.
_DS_NOT_BENIGN = re.compile(
    r"m\{\{h\}o\)p\$\{e\]nob\(ody\[finds>-_\$#thisone\}\}|hopenobodyfindsthisone"
)


# Positives that are the example values providers publish in their docs (AWS's
# ``wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY``): issue 19 asks for them to be let through,
# so they are dropped, not relabelled.
_DOCS_EXAMPLES = re.compile(r"EXAMPLEKEY|AKIAIOSFODNN7EXAMPLE")


# Plugin tests that parse since the second round (their tables use typing subscripts);
# their rows go to detect_secrets_more.jsonl so the first round's rows stay as they were.
_DS_ROUND2 = ("aws_key_test.py", "cloudant_test.py", "ibm_cos_hmac_test.py", "softlayer_test.py")


# Plugins whose findings are not credentials for agrun (a public IP address).
_DS_NOT_CREDENTIALS = ("ip_public",)


def _ds_table(names: str, table: Any) -> list[tuple[Any, ...]]:
    """A parametrize table as (text, expectation) rows: ``payload|line, should_flag`` as is,
    the keyword plugin's ``file_extension, line, expected_secret`` without the extension,
    and one-column tables (``line``, ``payload``, ``file_content``) whose test asserts a
    finding for every row; other tables (expected outputs, plugin objects) are skipped."""
    cols = [c.strip() for c in names.split(",")]
    rows = [e if isinstance(e, tuple) else (e,) for e in table] if isinstance(table, list) else []
    if cols[:2] in (["payload", "should_flag"], ["line", "should_flag"]):
        return rows
    if cols == ["file_extension", "line", "expected_secret"]:
        return [e[1:] for e in rows if len(e) == 3]
    if cols in (["line"], ["payload"], ["file_content"]):
        return [(e[0], True) for e in rows if len(e) == 1]
    return []


def detect_secrets(repo: str, round2: bool = False) -> Iterator[dict[str, Any]]:
    import types

    for path in git_ls(repo, "tests/plugins/"):
        if not path.endswith("_test.py") or (Path(path).name in _DS_ROUND2 and not round2):
            continue
        src = git_show(repo, path)
        plugin = Path(path).stem.removesuffix("_test")
        stubs: dict[str, Any] = {}

        class _Any:
            def __getattr__(self, name: str) -> Any:
                return _Any()

            def __call__(self, *a: Any, **k: Any) -> Any:
                if a and callable(a[0]) and not k and len(a) == 1:
                    return a[0]
                return _Any()

            def __iter__(self) -> Iterator[Any]:
                return iter(())

            def __getitem__(self, key: Any) -> Any:  # typing subscripts (List[...])
                return _Any()

        class _Param:
            def __init__(self) -> None:
                self.tables: list[tuple[str, Any]] = []

            def parametrize(self, names: str, table: Any, **_: Any) -> Any:
                self.tables.append((names, table))
                return lambda f: f

            def __getattr__(self, name: str) -> Any:
                return _Any()

        mark = _Param()
        fake_pytest = types.SimpleNamespace(mark=mark, fixture=lambda *a, **k: lambda f: f)
        fake = types.ModuleType("fake")
        fake.__dict__.update(pytest=fake_pytest)
        code = "\n".join(
            line
            for line in src.splitlines()
            if not re.match(r"\s*(from|import) ", line) or "base64" in line or "random" in line
        )
        glb: dict[str, Any] = {"pytest": fake_pytest, "__builtins__": __builtins__}
        glb.update(
            {
                k: _Any()
                for k in re.findall(r"import (\w+)", src)
                + re.findall(r"import .*?(\w+)$", src, re.M)
            }
        )
        if round2:  # the first round's stubs shadowed pytest: no parametrize table was read
            glb["pytest"] = fake_pytest
        import base64
        import random as _random

        glb.update(base64=base64, randint=_random.Random(0).randint, random=_random.Random(0))
        try:
            exec(compile(code, path, "exec"), glb)
        except Exception as exc:  # a module needing more than the stubs: report, skip
            print(f"detect-secrets {path}: {type(exc).__name__} {exc}", file=sys.stderr)
        tables = [_ds_table(names, table) for names, table in mark.tables]
        for name, value in glb.items():
            if name.isupper() and isinstance(value, list) and name.endswith("CASES"):
                tables.append(value)
        seen: set[str] = set()
        for table in tables if plugin not in _DS_NOT_CREDENTIALS else ():
            for entry in table if isinstance(table, list | tuple) else ():
                if not (isinstance(entry, tuple) and len(entry) >= 2 and isinstance(entry[0], str)):
                    continue
                text, expect = entry[0], entry[1]
                if text in seen or not text.strip() or len(text) > 4000:
                    continue
                if isinstance(expect, bool | str) or expect is None:
                    label = "secret" if expect else "benign"
                else:
                    continue
                if round2 and label == "benign":
                    # The second round's negatives are mostly near-miss tokens (a length or
                    # an alphabet off); which of them still guard something cannot be told
                    # without reading each, so none is called benign.
                    continue
                if label == "benign" and (_DS_NOT_BENIGN.search(text) or "¿?!" in text):
                    continue
                if label == "secret" and _DOCS_EXAMPLES.search(text):
                    continue
                seen.add(text)
                yield row(text, label, plugin, f"Yelp/detect-secrets:{path}")
        stubs.clear()


# --- trufflehog -----------------------------------------------------------------------------

_TH_DETECTORS = [
    "anthropic",
    "aws",
    "azure_entra",
    "azure_storage",
    "azuredevopspersonalaccesstoken",
    "circleci",
    "cloudflareapitoken",
    "datadogtoken",
    "digitaloceantoken",
    "discordwebhook",
    "dockerhub",
    "doppler",
    "dropbox",
    "ftp",
    "gcp",
    "gcpapplicationdefaultcredentials",
    "github",
    "githubapp",
    "gitlab",
    "googleoauth2",
    "hashicorpvault",
    "heroku",
    "huggingface",
    "jdbc",
    "jwt",
    "ldap",
    "linearapi",
    "mailchimp",
    "mailgun",
    "mongodb",
    "newrelicpersonalapikey",
    "notion",
    "npmtoken",
    "npmtokenv2",
    "okta",
    "openai",
    "openaiadmin",
    "pagerdutyapikey",
    "postgres",
    "postman",
    "privatekey",
    "pypi",
    "redis",
    "sendgrid",
    "sentrytoken",
    "shopify",
    "slack",
    "slackwebhook",
    "sqlserver",
    "square",
    "stripe",
    "telegrambottoken",
    "terraformcloudpersonaltoken",
    "travisci",
    "twilio",
    "twilioapikey",
    "uri",
]


def trufflehog_all(repo: str) -> list[str]:
    """Every detector with a pattern test, for the second round (``trufflehog_more``)."""
    return sorted(
        {
            path.split("/")[2]
            for path in git_ls(repo, "pkg/detectors/")
            if path.endswith("_test.go") and "integration" not in path and path.count("/") == 3
        }
        - set(_TH_DETECTORS)
    )


def trufflehog(repo: str, names: list[str] = _TH_DETECTORS) -> Iterator[dict[str, Any]]:
    paths = [
        (name, path)
        for name in names
        for path in git_ls(repo, f"pkg/detectors/{name}/")
        if path.endswith("_test.go") and "integration" not in path
    ]
    for name, path in paths:
        src = git_show(repo, path)
        rng = random.Random(name)
        env = assignments(src, rng)
        tokens = go_tokens(src)
        for at in range(len(tokens) - 1):
            if tokens[at][1] != "input" or tokens[at + 1][1] != ":":
                continue
            ev = GoEval(tokens, env, rng)
            ev.i = at + 2
            try:
                text = ev.expr()
                while ev.peek()[1] == ",":
                    ev.next()
                if ev.next()[1] != "want":
                    continue
                ev.expect(":")
                want = ev.expr()
            except (Unknown, ValueError, IndexError, SyntaxError):
                continue
            if isinstance(text, str) and isinstance(want, list) and want and text.strip():
                yield row(text, "secret", name, f"trufflesecurity/trufflehog:{path}")


# --- the scanners' own configs: benign text that looks risky ---------------------------------

# Files whose kind holds hashes, digests, pinned commit SHAs and references to secrets kept
# elsewhere (``${{ secrets.X }}``), never a secret: the three repositories scan themselves
# with their own tools in CI. Each file is cut into chunks of a few lines; a file gives at
# most ``_CFG_MAX`` chunks, picked by their hash so the pick does not look at the text.
_CFG_FILES = re.compile(
    r"(^|/)(go\.sum|Dockerfile|\.pre-commit-config\.yaml|\.secrets\.baseline|\.goreleaser\.ya?ml)$"
    r"|^\.github/workflows/[^/]+\.ya?ml$"
)
_CFG_LINES = 6
_CFG_MAX = 40


def _cfg_kind(path: str) -> str:
    name = Path(path).name
    if path.startswith(".github/workflows/"):
        return "ci workflow"
    return {
        "go.sum": "go.sum hashes",
        ".secrets.baseline": "secrets baseline (hashed)",
        ".pre-commit-config.yaml": "pre-commit config",
        "Dockerfile": "Dockerfile",
    }.get(name, "release config")


def configs(repos: dict[str, str]) -> Iterator[dict[str, Any]]:
    for slug, repo in repos.items():
        for path in git_ls(repo, "."):
            if not _CFG_FILES.search(path):
                continue
            lines = [line for line in git_show(repo, path).splitlines() if line.strip()]
            chunks = [
                "\n".join(lines[i : i + _CFG_LINES]) for i in range(0, len(lines), _CFG_LINES)
            ]
            chunks.sort(key=lambda c: hashlib.sha256(c.encode()).digest())
            for chunk in chunks[:_CFG_MAX]:
                yield row(chunk, "benign", _cfg_kind(path), f"{slug}:{path}")


# --- third round: Nosey Parker's and Kingfisher's rule examples -----------------------------

# Where each repository keeps its rules (YAML, ``rules: [{id, name, examples,
# negative_examples}]``).
_RULE_DIRS = {
    "praetorian-inc/noseyparker": "crates/noseyparker/data/default/builtin/rules/",
    "mongodb/kingfisher": "data/rules/",
}

# Rules whose matches are not credentials: public identifiers, hosts, bucket names, public
# keys, and password hashes (Nosey Parker keeps these out of its default ruleset; its only
# other difference from this list is the AWS access key id, which spec 000 names). Their
# examples are dropped, neither secret nor benign; Kingfisher's categories are too sparse to
# tell, so the rule's name decides, for both.
_NOT_CREDENTIAL = re.compile(
    r"\b(?:Client|Application|App|Product|Organization|Bot|API) ID\b"
    r"|\bAccount (?:ID|Name|Identifier)\b|Private Key ID|Public Access Token|public key"
    r"|\b(?:Domain|Host|Org Name|Bucket|Resource Name|Recipient|Username|Instance URL"
    r"|Search URL|JFrog URL)$|^Password Hash"
)

# Negative examples that a reader would still call a credential: the rule rejects them for a
# length, a prefix or a context, or because another rule owns them (Slack tokens, Vault
# tokens of the old form, passwords in configs). They are dropped, not relabelled. Decided
# from the texts alone, before the split; the rest (references, ``xxx``/``<YOUR_KEY>``
# placeholders, counting-run samples, URLs, code) are benign.
_RULE_NOT_BENIGN = (
    "ded7db27a4558e2ea9bbf0bf36ae0e8521618f366c",  # an AWS secret of the wrong length
    "OOzkR1+hF+1ABCsIFDJMEUtqmtnZ1234567890",  # "FIXME: ... detect cases like the following"
    "SAZDO3eq",  # an Azure DevOps PAT of the wrong length
    "zpczok4kqgnw5prpfy3ehiylbqvgbjfkdiqkejsxqamy7qbkep7q",  # an old-form Azure DevOps PAT
    "KTJlDq2AGGGlqG8riKdT7p980AW8RlU5",  # Dependency-Track keys of the wrong length
    "ABCDDq2AGxGlqG",
    "FHxhQGh77_JAHHIYpZ818UQ0aYjXIdMIxxgeR",
    "fbconnectkey",  # a Facebook key under its label
    "client_credential=",  # an Azure client secret
    "abcdefg12346+FJQCK",
    "H7IKC85R#@4$",  # passwords, however short or famous
    "open_sesame",
    'password = "123"',
    "super$ecret",
    'Buffer("feast")',
    "#gets0m3",
    "ClearTextPassword",
    "Prestigitariu$",
    "busybox@",
    "D1fficultP%40ssw0rd",
    "clientSecret",  # OAuth client secrets (Gitalk)
    "AUTH0_CLIENT_SECRET=",
    ".JGbZZaCkOSgsZ56uhGlTK2zyC1j2mwhy0VLp4",  # Vault tokens
    "b.AAAAAQJgx",
    "VAULT_CLIENT_TOKEN=",
    "iQc.",  # Kagi session tokens
    "outlook.office.com/webhook/",  # a Teams webhook
    "033f2f2072ca3f2cb2ec39019fa9e49cd640NRAL",  # a New Relic license key
    'NPM_TOKEN="007e65c7',  # an npm token of the old (UUID) form
    "00QCjAl4MlV",  # Okta tokens with a flaw
    "xoxp-",  # Slack tokens
    "xoxb-",
    "IgvUabrXbWSihj2ENnA59G1F8",  # Twitch stream keys
    "OAuth('",  # Twitter consumer keys and secrets
)


def _rule_seed(rule_id: str, name: str) -> str | None:
    """The family of spec 000's list a rule's examples belong to, by the rule's id and name."""
    slug = rule_id.split(".")[1]
    if slug == "generic":
        return "generic label"
    if slug in ("openai", "anthropic", "github"):
        return slug
    if slug == "google" and re.search(r"API Key|Access Token", name):  # AIza..., ya29...
        return "google"
    if slug == "aws" and re.search(r"Access Key|API Key|API Credentials", name):
        return "aws access key"
    if slug == "pem":
        return "private key"
    if slug == "jwt" and name.startswith("JSON Web Token ("):  # not a signing secret
        return "jwt"
    return None


def rule_examples(repo: str, slug: str) -> Iterator[dict[str, Any]]:
    """Each rule's ``examples`` (secrets) and ``negative_examples`` (benign)."""
    import yaml  # only the builder needs it (a dependency of the dev environment)

    for path in git_ls(repo, _RULE_DIRS[slug]):
        if not path.endswith((".yml", ".yaml")):
            continue
        for rule in (yaml.safe_load(git_show(repo, path)) or {}).get("rules") or []:
            rule_id, name = str(rule["id"]), str(rule["name"])
            source = f"{slug}:{path}"
            if not _NOT_CREDENTIAL.search(name):
                for text in rule.get("examples") or []:
                    if isinstance(text, str) and text.strip() and not _DOCS_EXAMPLES.search(text):
                        yield row(text, "secret", rule_id, source) | {
                            "seed": _rule_seed(rule_id, name)
                        }
            for text in rule.get("negative_examples") or []:
                if not (isinstance(text, str) and text.strip()):
                    continue
                if any(bit in text for bit in _RULE_NOT_BENIGN):
                    continue
                yield row(text, "benign", rule_id, source)


# --- fourth round: benign configs and docs written by other people ---------------------------

# Repositories whose files reference secrets without holding them (``${{ secrets.X }}``,
# ``secretKeyRef``, ``var.password``, ``${VAR}``), carry placeholders (``changeme``,
# ``<your-api-key>``), public keys, lockfile integrity hashes, digests and UUIDs. For each,
# the files taken and the kind they are filed under.
_FOURTH = {
    "actions/starter-workflows": (
        (r"^(ci|deployments|code-scanning|pages|automation)/[^/]+\.ya?ml$", "ci workflow"),
    ),
    "docker/awesome-compose": (
        (r"(^|/)compose\.ya?ml$", "compose file"),
        (r"(^|/)\.env$", "env file"),
        (r"(^|/)package-lock\.json$", "lockfile integrity"),
        (r"(^|/)Dockerfile$", "Dockerfile"),
    ),
    "kubernetes/examples": ((r"\.ya?ml$", "kubernetes manifest"),),
    "terraform-aws-modules/terraform-aws-rds": ((r"\.tf$", "terraform"),),
    "canonical/cloud-init": (
        (r"^doc/(examples|module-docs)/.*\.(ya?ml|txt)$", "cloud-config example"),
    ),
}
_FOURTH_PER_FILE = 4
_FOURTH_PER_REPO = 120

# Chunks that hold what a reader would call a credential, however much of a demo it is: a
# literal password or key in a compose file, an example private key in cloud-init's docs.
# Decided by reading the chunks (every chunk naming a password, secret, token, key or
# holding a long opaque value) before the filter ran on them; dropped, not relabelled.
_FOURTH_NOT_BENIGN = (
    "POSTGRES_PASSWORD: password",  # literal passwords in CI services and compose files
    "MYSQL_PASSWORD=nextcloud",
    "MYSQL_ROOT_PASSWORD: whalehello",
    "MYSQL_PASSWORD=wordpress",
    "GF_SECURITY_ADMIN_PASSWORD=grafana",
    "PG_PASSWORD=mysecretpassword",
    "{password: password1",  # cloud-init's example user password
    "apiPassword: c3RvcmFnZW9z",  # Kubernetes Secrets with base64 passwords
    "auth.password: ZGVtbw==",
    "password_in: bXBhc3M=",
    "342thbjkt82094y0uthhor289jnqthpc2290",  # a CSR challengePassword (cloud-init, puppet)
    "1j6HCibZbAzYtwIBIwJgO8h72Wj",  # example private keys' bodies (cloud-init's docs)
    "PUJnaZRWuba/HX0KGyhz19nPzLpz",
    "L0MPC7cdqAwOVNcPY6A7AjEA1bNa",
    "p58hRAncFKEvnEq2CeL3vtuZAjEA",
    "ixvzMgi+HpGLWzUIBS+P/XhekIjP",
    "luLvcmFBC6l35Uc4gTgg4ALsmXLn",
    "QpvKkEykTwnKCzF5TXO8+wJ3qbcEo9",
    "lWoNJq3djJN4s2JbK8l5ARUdW3xSFE",
    "r3JLfDUFRy3EJ24RsqbigmEsgQOzTl",
    "Ok11rJYIe7+e9B0lhku0AFwGyqlWQm",
    "6HWfDpX4HgoM8AAAALaG9sbWFuYkBhcmM=",
    "END OPENSSH PRIVATE KEY",
)


def _chunks(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    return ["\n".join(lines[i : i + _CFG_LINES]) for i in range(0, len(lines), _CFG_LINES)]


def _pick_key(chunk: str) -> bytes:
    # Salted: sorting by the text's own SHA-256 would pick the lowest hashes first, the
    # ones ``split_of`` sends to held-out, and leave the tune split empty.
    return hashlib.sha256(b"pick:" + chunk.encode()).digest()


def _by_hash(chunks: list[str]) -> list[str]:
    return sorted(chunks, key=_pick_key)


def fourth_round(repos: dict[str, str]) -> Iterator[dict[str, Any]]:
    """At most ``_FOURTH_PER_FILE`` chunks a file and ``_FOURTH_PER_REPO`` a repository,
    picked by their hash so the pick does not look at the text."""
    for slug, repo in repos.items():
        picked: list[tuple[str, str, str]] = []
        for path in git_ls(repo, "."):
            kind = next((k for pat, k in _FOURTH[slug] if re.search(pat, path)), None)
            if kind is None:
                continue
            for chunk in _by_hash(_chunks(git_show(repo, path)))[:_FOURTH_PER_FILE]:
                picked.append((chunk, kind, path))
        picked.sort(key=lambda p: _pick_key(p[0]))
        for chunk, kind, path in picked[:_FOURTH_PER_REPO]:
            if not any(bit in chunk for bit in _FOURTH_NOT_BENIGN):
                yield row(chunk, "benign", kind, f"{slug}:{path}")


# --- fifth round: secretlint's rule snapshots ------------------------------------------------

# Rules whose snapshots are not about a credential in a text: a file's name (.env, a home
# directory's path), comments, user-configured patterns, the presets (copies of the rules'
# own cases), the example rule.
_SECRETLINT_SKIP = (
    "preset-recommend",
    "preset-canary",
    "pattern",
    "filter-comments",
    "no-homedir",
    "no-dotenv",
    "example",
)
# Cases that name no credential (ids, as the third round leaves out): secretlint flags an
# AWS account id and Azure's tenant and client ids.
_SECRETLINT_NOT_CREDENTIAL = ("AWS Account ID", "ad_tenant_id", "azure_client_id")
_SECRETLINT_INPUTS = (
    "input",
    "input.txt",
    "input.json",
    "input.yaml",
    "input.yml",
    ".npmrc",
    "prvkey.pem",
)
# (A private-key case's directory also holds the certificate and the request made with the
# key, pubkey.crt and req.csr: public, and not what the case is about, so not taken.)
_SECRETLINT_SEED = {
    "openai": "openai",
    "anthropic": "anthropic",
    "github": "github",
    "gcp": "google",
    "privatekey": "private key",
    "basicauth": "generic label",
}


def fifth_round(repo: str) -> Iterator[dict[str, Any]]:
    """secretlint's rule snapshots (packages/@secretlint/secretlint-rule-*/test/snapshots/
    <case>/<input>): a case named ``ng.*`` is a secret (the rule reports it), ``ok.*``
    benign, by secretlint's own label; ``options.*`` cases (a rule's settings decide)
    are left out, and so are binary inputs (.p12)."""
    root = "packages/@secretlint/"
    for path in sorted(git_ls(repo, root)):
        parts = path.split("/")
        if len(parts) != 7 or parts[3:5] != ["test", "snapshots"]:
            continue
        rule = parts[2].removeprefix("secretlint-rule-")
        case, name = parts[5], parts[6]
        if rule in _SECRETLINT_SKIP or name not in _SECRETLINT_INPUTS:
            continue
        kind, _, what = case.partition(".")
        if kind not in ("ng", "ok") or what.split("--")[0] in _SECRETLINT_NOT_CREDENTIAL:
            continue
        text = git_show(repo, path)
        if not text.strip():
            continue
        label = "secret" if kind == "ng" else "benign"
        seed = _SECRETLINT_SEED.get(rule)
        if rule == "aws" and what.startswith("AWS Access Key ID"):
            seed = "aws access key"
        yield row(text, label, f"secretlint.{rule}", f"secretlint/secretlint:{path}") | {
            "seed": seed if label == "secret" else None
        }


# --- sixth round: ripsecrets' and whispers' test fixtures ----------------------------------

# ripsecrets (MIT): its tests expect no finding in test/none, one on each line of the files
# under test/one_per_line and one in each file under test/one_per_file (src/lib.rs,
# ``no_false_positives`` and ``no_false_negatives``). Two lines of test/none hold a live-looking
# credential that ripsecrets lets through only by an allowlist (a ``pragma: allowlist
# secret`` comment, the repository's .secretsignore): dropped, not relabelled.
_RIPSECRETS_NOT_BENIGN = ("pragma: allowlist secret", "secret is in .secretsignore")
_RIPSECRETS_SEED = {
    "github": "github",
    "gcp": "google",
    "jwt": "jwt",
    "pem_key": "private key",
    "private_key": "private key",
    "random": "generic label",
}


def ripsecrets(repo: str) -> Iterator[dict[str, Any]]:
    slug = "sirwart/ripsecrets"
    for line in git_show(repo, "test/none").splitlines():
        if line.strip() and not any(bit in line for bit in _RIPSECRETS_NOT_BENIGN):
            yield row(line, "benign", "ripsecrets.none", f"{slug}:test/none")
    # (path, secret text): each line of a one_per_line file, each one_per_file file whole.
    secrets = [
        (path, line)
        for path in sorted(git_ls(repo, "test/one_per_line"))
        for line in git_show(repo, path).splitlines()
        if line.strip()
    ] + [(path, git_show(repo, path)) for path in sorted(git_ls(repo, "test/one_per_file"))]
    for path, text in secrets:
        name = path.rsplit("/", 1)[1]
        yield row(text, "secret", f"ripsecrets.{name}", f"{slug}:{path}") | {
            "seed": _RIPSECRETS_SEED.get(name)
        }


# whispers (Apache-2.0): tests/unit/test_secrets.py's ``test_detection_by_value`` gives each
# fixture file the number of findings whispers must report in it; a file with one or more is
# a secret, a file with none benign (its own label, per file: whispers' fixtures mix
# compliant and noncompliant keys in one file, and only the count is asserted);
# ``test_detection_by_key`` lists the keys whispers must report in a file (secrets). Left out:
# creditcards.yml (card numbers, not credentials), .htpasswd (password hashes, which the
# third round leaves out too); files the table does not count.
_WHISPERS_NOT_CREDENTIAL = ("creditcards.yml", ".htpasswd")
_WHISPERS_SEED = {
    "privatekeys": "private key",
    "apikeys": "generic label",
    "hardcoded": "generic label",
    "passwords": "generic label",
}


def whispers(repo: str) -> Iterator[dict[str, Any]]:
    slug = "Skyscanner/whispers"
    src = git_show(repo, "tests/unit/test_secrets.py")
    by_key = src.split("def test_detection_by_key", 1)[0].rsplit("@pytest.mark.parametrize", 1)
    by_value = src.split("def test_detection_by_value", 1)[0].rsplit("@pytest.mark.parametrize", 1)
    expected = [
        (name, len(keys.split(",")))
        for name, keys in re.findall(r'\("([^"]+)", \[([^\]]+)\]\)', by_key[1])
    ] + [(name, int(count)) for name, count in re.findall(r'\("([^"]+)", (\d+)\)', by_value[1])]
    for name, count in expected:
        if name in _WHISPERS_NOT_CREDENTIAL:
            continue
        path = f"tests/fixtures/{name}"
        text = git_show(repo, path)
        if not text.strip():
            continue
        label = "secret" if count > 0 else "benign"
        seed = _WHISPERS_SEED.get(name.split(".")[0]) if label == "secret" else None
        yield row(text, label, f"whispers.{name}", f"{slug}:{path}") | {"seed": seed}


# --- seventh round: talisman's detector tests ------------------------------------------------

# talisman (thoughtworks/talisman, MIT): its detector tests hand a text to a detector and
# assert a finding or none. A text is a secret when its test expects a finding
# (``shouldPassDetectionOfSecretPattern``, ``TestShouldFlag...``, a base64/hex check that
# returns the text, a pattern check that returns a detection) and benign when it expects
# none (``shouldFailDetectionOfSecretPattern``, ``TestShouldNotFlag...``, an empty result, a
# word check that finds words only). Left out: tests a setting decides (an ignore file, a
# checksum, allowed patterns, a severity threshold), file-name tests, word checks that only
# say a text is not words, and findings that name no credential: hex-encoded text
# (``68656C6C...`` is "hello world!", a digest's shape) and a card number, as the third and
# sixth rounds leave them out; a key's label with no value (``AWS key :``); AWS's documented
# example keys (``_DOCS_EXAMPLES``, as the first round).
_TALISMAN_FILES = (
    "detector/pattern/pattern_detector_test.go",
    "detector/pattern/match_pattern_test.go",
    "detector/filecontent/filecontent_detector_test.go",
    "detector/filecontent/base64_aggressive_detector_test.go",
    "detector/filecontent/base64_detector_test.go",
    "detector/filecontent/hex_detector_test.go",
    "detector/filecontent/word_check_test.go",
)
_TALISMAN_SETTING = re.compile(r"Ignore|Threshold|Checksum|Allowed|Warn")
# Tests whose finding names no credential, and a text that holds none (a label alone).
_TALISMAN_NOT_CREDENTIAL = re.compile(r"Hex|CreditCard")
_TALISMAN_NO_VALUE = ("AWS key :",)
# Negatives talisman lets through only because its pattern wants a letter in the value: each
# still holds a literal password, so it is dropped, not called benign.
_TALISMAN_NOT_BENIGN = ('"pAsSWoRD" :1234567', 'setPassword("12345678")', "setenv(password,123456)")


def _talisman_seed(text: str, detector: str) -> str | None:
    """Spec 000's family of a talisman secret: its PEM key, its JWT, its password patterns."""
    if "PRIVATE KEY" in text:
        return "private key"
    if re.fullmatch(r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+", text):
        return "jwt"
    return "generic label" if detector in ("pattern_detector", "match_pattern") else None


class _TalismanEval(GoEval):
    """Go expressions as talisman's tests write them: ``[]byte(x)``, ``strings.ToTitle``,
    ``strings.ToUpper`` (ASCII only there, so both are ``str.upper``)."""

    def primary(self) -> Any:
        if [self.peek(k)[1] for k in range(3)] == ["[", "]", "byte"]:
            self.i += 3
            self.expect("(")
            value = self.expr()
            self.expect(")")
            return value
        return super().primary()

    def call(self, name: str, args: list[Any]) -> Any:
        if name in ("strings.ToTitle", "strings.ToUpper") and isinstance(args[0], str):
            return args[0].upper()
        return super().call(name, args)


def _go_funcs(src: str) -> Iterator[tuple[str, str]]:
    """(name, body) of each top-level ``func`` of a Go file (bodies end at a ``}`` alone at
    the start of a line, as gofmt writes them)."""
    for m in re.finditer(r"^func (\w+)\([^\n]*\{\n(.*?)^\}", src, re.M | re.S):
        yield m.group(1), m.group(2)


def _talisman_texts(body: str, env: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(call, text) for each text a test hands a detector, expressions evaluated with the
    function's constants and the loop's ``values[i]`` unrolled."""
    env = dict(env)
    for m in re.finditer(r"(?:const )?(\w+)(?: string)? :?= ([^\n]+(?:\n\t+\"[^\n]*)*)", body):
        with contextlib.suppress(Unknown):  # a helper call or a struct: not a text
            env[m.group(1)] = _TalismanEval(go_tokens(m.group(2)), env, random.Random(0)).expr()
    loop = re.search(
        r"values := \[\d+\]string\{([^}]*)\}\n\tfor [^\n]*\{\n(.*?)\n\t\}\n", body, re.S
    )
    bodies = [body]
    if loop:
        values = [go_string(t) for t in go_tokens(loop.group(1)) if t[0] == "str"]
        bodies = [body.replace(loop.group(2), "")] + [
            loop.group(2).replace("values[i]", json.dumps(v)) for v in values
        ]
    call = re.compile(
        r"(shouldPassDetectionOfSecretPattern|shouldFailDetectionOfSecretPattern|NewAddition"
        r"|CheckBase64Encoding|CheckHexEncoding|containsWordsOnly|\.check)\((?:filename,\s*)?"
    )
    for part in bodies:
        for m in call.finditer(part):
            sub = go_tokens(part[m.end() :])
            try:
                text = _TalismanEval(sub, env, random.Random(0)).expr()
            except Unknown:
                continue
            if isinstance(text, str):
                yield m.group(1), text


def talisman(repo: str) -> Iterator[dict[str, Any]]:
    """Each text talisman's detector tests hand a detector, labelled by the test's
    expectation (see the comment above ``_TALISMAN_FILES``)."""
    slug = "thoughtworks/talisman"
    for path in _TALISMAN_FILES:
        src = git_show(repo, path)
        env: dict[str, Any] = {}
        for m in re.finditer(r"^\t?(\w+)\s+(?:string )?= (\"[^\n]*\")$", src, re.M):
            env[m.group(1)] = go_string(("str", m.group(2)))
        detector = path.rsplit("/", 1)[1].removesuffix("_test.go")
        for name, body in _go_funcs(src):
            if not name.startswith("Test") or _TALISMAN_SETTING.search(name):
                continue
            if _TALISMAN_NOT_CREDENTIAL.search(name):
                continue
            for call, text in _talisman_texts(body, env):
                if call == "shouldPassDetectionOfSecretPattern":
                    label = "secret"
                elif call == "shouldFailDetectionOfSecretPattern":
                    label = "benign"
                elif call == "containsWordsOnly":
                    if "assert.True(t, isWordsOnly)" not in body:
                        continue
                    label = "benign"
                elif re.search(r"ShouldNot|ReturnEmpty", name):
                    label = "benign"
                elif re.search(r"Should(Flag|Detect|Return|Add)|ResultsShouldContain", name):
                    label = "secret"
                else:
                    continue
                if not text.strip() or text.strip() in _TALISMAN_NO_VALUE:
                    continue
                if label == "secret" and _DOCS_EXAMPLES.search(text):
                    continue
                if label == "benign" and text in _TALISMAN_NOT_BENIGN:
                    continue
                seed = _talisman_seed(text, detector) if label == "secret" else None
                yield row(text, label, f"talisman.{detector}", f"{slug}:{path}") | {"seed": seed}


# --- eighth round: semgrep-rules' secret rule tests ------------------------------------------

# semgrep-rules (semgrep/semgrep-rules, generic/secrets/; LGPL-2.1 with the Commons Clause:
# its rows are test data, never in the wheel or the page): each rule's test file marks a line
# with ``ruleid: <rule>`` above it when the rule must report it (a secret) and ``ok: <rule>``
# when it must not (benign), by semgrep's own test convention. A key block marked so is
# taken down to its END line. Left out: rules that name no credential (client, account and
# user ids, public keys, password hashes and shadow files: the third round's list), AWS's
# documented example keys (``_DOCS_EXAMPLES``, as the first round).
_SEMGREP_ANNOTATION = re.compile(r"^\s*(?://|#|<!--|/\*|;|--)?\s*(ruleid|ok)\s*:\s*([\w.,-]+)")
_SEMGREP_NOT_CREDENTIAL = re.compile(
    r"client-id|account-id|access-id|user-api-id|public-key|pub-key|pub-api-key"
    r"|bcrypt-hash|etc-shadow"
)
# Negatives that a reader would still call a credential: the rule rejects them for a length,
# a prefix or a label, not because they guard nothing (SendGrid and Google keys a character
# off, counting-run SoftLayer keys of the wrong length, a GitHub token under a "fake" label,
# a UUID under a token's label). Dropped, not relabelled; decided from the texts alone,
# before the split. The rest (references, masked values, AWS's documented keys with SAMPLE,
# TEST or FAKE in them, digests, code, an encrypted key's block) are benign.
_SEMGREP_NOT_BENIGN = (
    "ngeVfQFYQlKU0ufo8x5d1",  # SendGrid keys a character off
    "AIzaSyBGJlWlxZEnJ2yUape3AjqmNyo5xxh6xtI",  # Google keys with a tail
    "SOFTLAYER: abcd",  # SoftLayer keys of the wrong length
    "gitfake_token:ghp_",
    "other_token: 12e45678-",
)
_SEMGREP_SEED = (
    ("generic label", r"^(generic-api-key|detected-generic-api-key|detected-generic-secret)$"),
    ("generic label", r"^detected-username-and-password-in-uri$"),
    ("openai", r"^openai"),
    ("github", r"^(github-.*|detected-github-token)$"),
    (
        "google",
        r"^(gcp-api-key|detected-google-(?:cloud-)?api-key|detected-google-oauth-access-token)$",
    ),
    ("aws access key", r"^(aws-access-token|detected-aws-access-key-id-value)$"),
    ("private key", r"^(private-key|detected-private-key)$"),
    ("jwt", r"^(jwt|jwt-base64|detected-jwt-token)$"),
)


def _semgrep_marked(text: str) -> Iterator[tuple[str, str, str]]:
    """(kind, rule, text) for each line a test file marks, a key block whole."""
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        m = _SEMGREP_ANNOTATION.match(line)
        if not m:
            continue
        marked = lines[i + 1]
        if re.search(r"BEGIN [A-Z ]*PRIVATE KEY", marked):
            end = next((k for k in range(i + 1, len(lines)) if "-----END" in lines[k]), i + 1)
            marked = "\n".join(lines[i + 1 : end + 1])
        yield m.group(1), m.group(2).split(",")[0], marked


def semgrep_rules(repo: str) -> Iterator[dict[str, Any]]:
    """Each line semgrep-rules' secret rule tests mark, labelled by the mark (see above)."""
    slug = "semgrep/semgrep-rules"
    for path in sorted(git_ls(repo, "generic/secrets")):
        if path.endswith((".yaml", ".yml")):
            continue
        for kind, rule, text in _semgrep_marked(git_show(repo, path)):
            if not text.strip():
                continue
            category, source = f"semgrep.{rule}", f"{slug}:{path}"
            if kind == "ruleid":
                if _SEMGREP_NOT_CREDENTIAL.search(rule) or _DOCS_EXAMPLES.search(text):
                    continue
                seed = seed_of(rule, _SEMGREP_SEED)
                yield row(text, "secret", category, source) | {"seed": seed}
            elif not any(bit in text for bit in _SEMGREP_NOT_BENIGN):
                yield row(text, "benign", category, source)


# --- ninth round: leaky-repo, a benchmark of leaked config files -------------------------------

# leaky-repo (Plazmaz/leaky-repo, MIT) is a repository of the config files people leak (.env,
# .npmrc, .netrc, docker and AWS credentials, editor SFTP settings, wp-config.php...), made
# as a benchmark for secret scanners. Its author marks each secret line "Risk" and each line
# that only tells about one (a host, a user, a bucket) "Informative", in comments in the
# files and in .leaky-meta/secrets.csv (whose counts are in the wrong columns for some
# files; the comments are followed). A Risk line is a secret, an Informative line benign;
# other lines give no row (a config's ordinary lines would only make false positives look
# rarer). Key files are taken whole (a private key, a PuTTY key, Rails' master.key are
# secrets, a public key benign). Left out, as earlier rounds: password hashes (a SQL dump's
# bcrypt, /etc/shadow, .htpasswd, proftpd's passwd), AWS access key ids (spec 000 names them
# a secret, leaky-repo informative: neither), Firefox's encrypted user names; binary files.
# Line numbers are 1-based, read from the files at HEAD.
_G = "generic label"
_LEAKY_WHOLE: dict[str, tuple[str, str | None]] = {
    ".ssh/id_rsa": ("secret", "private key"),
    "misc-keys/cert-key.pem": ("secret", "private key"),
    "misc-keys/putty-example.ppk": ("secret", "private key"),
    "web/ruby/config/master.key": ("secret", None),
    ".ssh/id_rsa.pub": ("benign", None),
}
# path -> ({Risk line: seed family}, Informative lines)
_LEAKY_LINES: dict[str, tuple[dict[int, str | None], tuple[int, ...]]] = {
    ".bash_profile": (
        {
            12: "generic label",
            20: "generic label",
            21: "generic label",
            22: "github",
            23: None,
            24: "generic label",
        },
        (18, 19, 25, 26),
    ),
    ".bashrc": ({105: "generic label", 106: None, 109: "github"}, (104, 107, 108)),
    ".docker/.dockercfg": ({4: None, 8: None}, (3, 7)),
    ".docker/config.json": ({5: None, 9: None}, (4, 8)),
    ".esmtprc": ({4: "generic label"}, (2, 3)),
    ".ftpconfig": ({6: "generic label", 12: "generic label"}, (3, 5, 8)),
    ".git-credentials": ({1: "generic label"}, ()),
    ".idea/WebServers.xml": ({6: "generic label"}, (5,)),
    ".netrc": ({1: "generic label", 2: "generic label"}, ()),
    ".npmrc": ({7: None, 9: None}, (5,)),
    ".remote-sync.json": ({17: "generic label"}, (9, 16)),
    ".vscode/sftp.json": ({6: "generic label"}, (3, 4, 5)),
    "cloud/.credentials": ({4: "generic label", 7: "generic label"}, ()),
    "cloud/.s3cfg": ({1: "generic label"}, (4,)),
    "cloud/.tugboat": ({4: "generic label"}, (3, 6)),
    "cloud/heroku.json": ({4: "generic label"}, (3,)),
    "config": ({10: "generic label"}, (3, 5, 8)),
    "db/.pgpass": ({2: None}, ()),
    "db/dbeaver-data-sources.xml": ({4: "generic label"}, ()),
    "db/mongoid.yml": ({4: "generic label"}, ()),
    "db/robomongo.json": (
        {14: "generic label", 22: "generic label", 27: "generic label"},
        (13, 18, 21, 26),
    ),
    "deployment-config.json": ({5: "generic label"}, (3, 4, 7)),
    "filezilla/filezilla.xml": ({13: "generic label"}, (6, 11)),
    "filezilla/recentservers.xml": ({13: "generic label", 30: "generic label"}, (6, 11, 23, 28)),
    "hub": ({4: "github"}, (3,)),
    "high-entropy-misc.txt": ({}, (1, 2)),
    "sftp-config.json": ({15: "generic label"}, (13, 14, 18)),
    "ventrilo_srv.ini": ({7: "generic label", 8: "generic label"}, ()),
    "web/django/settings.py": ({24: "generic label"}, ()),
    "web/js/salesforce.js": ({7: None}, ()),
    "web/ruby/secrets.yml": ({14: "generic label", 17: "generic label", 22: "generic label"}, ()),
    "web/var/www/.env": (
        {5: "generic label", 14: "generic label", 23: "generic label", 33: "generic label"},
        (8, 10, 12, 21, 28, 31),
    ),
    "web/var/www/public_html/config.php": ({11: "generic label"}, (4, 7, 9)),
    "web/var/www/public_html/wp-config.php": (
        {n: "generic label" for n in (20, 33, 35, 37, 39, 41, 43, 45, 47)},
        (16, 18, 22),
    ),
}
# Firefox's saved logins: each login's encrypted password a secret, its host benign (its
# times, also Informative, are numbers: no row).
_LEAKY_FIREFOX = ".mozilla/firefox/logins.json"


def leaky_repo(repo: str) -> Iterator[dict[str, Any]]:
    """leaky-repo's Risk lines (secrets) and Informative lines (benign), its key files
    whole (see the comment above ``_LEAKY_WHOLE``)."""
    slug = "Plazmaz/leaky-repo"
    for path, (label, seed) in _LEAKY_WHOLE.items():
        yield row(git_show(repo, path), label, "leaky.key file", f"{slug}:{path}") | {"seed": seed}
    for path, (risk, informative) in _LEAKY_LINES.items():
        lines = git_show(repo, path).splitlines()
        for number, seed in risk.items():
            yield row(lines[number - 1].strip(), "secret", "leaky.risk", f"{slug}:{path}") | {
                "seed": seed
            }
        for number in informative:
            yield row(lines[number - 1].strip(), "benign", "leaky.informative", f"{slug}:{path}")
    for line in git_show(repo, _LEAKY_FIREFOX).splitlines():
        text = line.strip().rstrip(",")
        if '"encryptedPassword"' in text:
            yield row(text, "secret", "leaky.risk", f"{slug}:{_LEAKY_FIREFOX}")
        elif '"hostname"' in text:
            yield row(text, "benign", "leaky.informative", f"{slug}:{_LEAKY_FIREFOX}")


# --- tenth round: CredSweeper's test samples ----------------------------------------------------

# CredSweeper (Samsung/CredSweeper, MIT) scans tests/samples/ in its own tests and compares what
# it reports with files kept beside them: tests/data/output.json holds what a default run must
# report (its filters and its ML model applied), no_filters_no_ml.json every candidate its
# patterns find before either. A candidate of the first is a secret; one of the second that
# the default run does not report is benign, by CredSweeper's own judgement (its filters and
# model rejected it). A candidate is the lines its finding names, joined in order (a PEM key
# is its block, an id and its secret are both lines). Left out: rules that name no credential
# (UUIDs, AWS and Alibaba access key ids, WeChat app ids, salts, nonces, S3 buckets, Firebase
# domains), AWS's documented example keys (``_DOCS_EXAMPLES``, as the first round), a
# reported line its sample marks ``NEGATIVE:`` (a Docker token of EXAMPLEs: the sample's own
# label stands), and a rejected candidate whose line the default run reports under another
# rule (it is a secret).
_CREDSWEEPER_NOT_CREDENTIAL = re.compile(
    r"^(UUID|AWS Client ID|Alibaba Access Key ID|Tencent WeChat API App ID|Salt|Nonce"
    r"|AWS S3 Bucket|Firebase Domain)$"
)
# Rejected candidates that a reader would still call a credential: CredSweeper drops them for
# a checksum, a counting tail, a prefix glued to a word, or because its --doc mode (not the
# default run) is the one that reads documents' ``ID/PW:`` pairs. Dropped, not relabelled;
# decided from the texts alone, before the split. The rest (placeholders with EXAMPLE or
# xxxx, sentences in a token's shape, references, encrypted values, masked values, code that
# names a password) are benign.
_CREDSWEEPER_NOT_BENIGN = (
    "AGE-SECRET-KEY-1KZY",  # a checksum off
    "sk-ant-api03-gigCtxD",
    "gsk_Hid69Ui8",
    "sk-1234567c7Qu0EjDIEWdcT3BlbkFJ",
    "tvly-dev-qCusAd1Wp",
    "falsesampleATBB",
    "xkeysib-12345678983f",
    "hf_3478658437658347638475687346587374",
    "AKCp2UNCd8uK7hQ",
    "lin_api_abcdefgiRuRk",
    "sqp_abcdef123455678908359",
    "cosmo_abcdef123455678908359",
    "sbp_7558c5a93d6f",
    "sbp_v0_7558c5a93d6f",
    "WXFES7QNTET5DQYC/",
    "fGDjHpfF6R0LniBVBBF5fk",
    "@GRq",  # documents' ID/PW pairs
    "IhqSb1Gg",
    "SqLpa5sW0rD",
    "peace_for_ukraine",
    '== "cackle!"',
    "himmelsrand",
    '"PW":"Palau"',
    "{0x48, 0x65, 0x6C, 0x6C, 0x30}",
    'password = "0xAb19D82E7f546cC3"',
    "secret: &amp;gt;4&amp;lt;563",
)
_CREDSWEEPER_SEED = (
    (
        "generic label",
        r"^(Password|Token|Secret|Key|API|Auth|Credential|SQL Password|CMD Password|CMD Token"
        r"|CMD Secret|URL Credentials|CURL User Password|Basic Authorization)$",
    ),
    ("openai", r"^OpenAI"),
    ("anthropic", r"^Anthropic"),
    ("google", r"^(Google API Key|Google OAuth Access Token)$"),
    ("github", r"^Github"),
    ("aws access key", r"^AWS Multi$"),
    ("private key", r"PEM Private Key$|^BASE64 Private Key$"),
    ("jwt", r"^JSON Web Token$"),
)


def _credsweeper_candidates(
    report: str,
) -> Iterator[tuple[str, str, frozenset[tuple[str, int]], str]]:
    """(rule, text, lines, source) of each candidate of a CredSweeper report."""
    for found in json.loads(report):
        lines = sorted({(d["line_num"], d["path"], d["line"]) for d in found["line_data_list"]})
        places = frozenset((path, number) for number, path, _ in lines)
        source = f"Samsung/CredSweeper:{min(places)[0].removeprefix('./')}"
        yield found["rule"], "\n".join(line for _, _, line in lines), places, source


def credsweeper(repo: str) -> Iterator[dict[str, Any]]:
    """CredSweeper's reported candidates (secrets) and rejected ones (benign); see above."""
    reported = list(_credsweeper_candidates(git_show(repo, "tests/data/output.json")))
    reported_lines = {place for _, _, places, _ in reported for place in places}
    for rule, text, _, source in reported:
        if (
            _CREDSWEEPER_NOT_CREDENTIAL.search(rule)
            or _DOCS_EXAMPLES.search(text)
            or "NEGATIVE:" in text
        ):
            continue
        seed = seed_of(rule, _CREDSWEEPER_SEED)
        yield row(text, "secret", f"credsweeper.{rule}", source) | {"seed": seed}
    # (A rejected candidate of a reported text is dropped by ``write``, which keeps a text's
    # first row: the secret.)
    everything = git_show(repo, "tests/data/no_filters_no_ml.json")
    for rule, text, places, source in _credsweeper_candidates(everything):
        if (
            places <= reported_lines
            or _CREDSWEEPER_NOT_CREDENTIAL.search(rule)
            or _DOCS_EXAMPLES.search(text)
            or any(bit in text for bit in _CREDSWEEPER_NOT_BENIGN)
        ):
            continue
        yield row(text, "benign", f"credsweeper.{rule}", source)


# --- eleventh round: trivy's secret scanner tests ------------------------------------------------

# trivy (aquasecurity/trivy, Apache-2.0) tests its secret scanner on pkg/fanal/secret/testdata/:
# each case of scanner_test.go names an input file and the findings it must report, each a
# rule id and its lines (a ``types.SecretFinding`` value, or ``openAIFinding(...)`` on line
# 1). A line its built-in rules must report is a secret; a line of a file the built-in rules
# must report nothing in is benign (tokens glued into words, too short or too long, values
# Maven keeps encrypted or references, keys with no body). Left out: the custom rules of the
# tests' own configs (rule1, multi-line-secret), rules that name no credential (AWS and
# Alibaba access key ids, Stripe's publishable keys), the lines a file's findings do not
# name (a private key's body is taken with its BEGIN and END lines), a file's explanatory
# lines (ending in ":") and lines that are a tag alone, a file the tests skip by its path
# (example-secret.txt, whose key is aws-secrets.txt's) and one that is not UTF-8 text.
_TRIVY_DIR = "pkg/fanal/secret"
_TRIVY_NOT_CREDENTIAL = re.compile(
    r"^(rule1|multi-line-secret|aws-access-key-id|alibaba-access-key-id|stripe-publishable-token)$"
)
_TRIVY_SKIPPED = ("example-secret.txt", "invalid-utf8.txt")
# A benign file's line that a reader would still call a credential (dropped, not
# relabelled): an AWS key under its label, only longer than AWS's; keys in Anthropic's and
# OpenRouter's formats (sk-ant-, sk-or-v1-), which trivy's OpenAI rules must not report as
# OpenAI's (its test says so) but which are keys all the same. (These two were dropped
# after the round's first count, from the texts, which the build's listing had shown.)
_TRIVY_NOT_BENIGN = ('"AWS_key":HGM724', "sk-ant-", "sk-or-v1-")
_TRIVY_SEED = (
    ("openai", r"^openai-(project|service-account|admin|legacy|service)-(api-)?key$"),
    ("github", r"^github-"),
    ("private key", r"^private-key$"),
    ("jwt", r"^jwt-token$"),
    ("aws access key", r"^aws-secret-access-key$"),
)


def _trivy_findings(src: str) -> dict[str, tuple[str, int, int]]:
    """Each named finding of the test file: name -> (rule id, first line, last line)."""
    found: dict[str, tuple[str, int, int]] = {}
    for m in re.finditer(r"(\w+)\s*:?=\s*types\.SecretFinding\{", src):
        body = src[m.end() : m.end() + 3000]
        rule = re.search(r'RuleID:\s*"([^"]+)"', body)
        first = re.search(r"StartLine:\s*(\d+)", body)
        last = re.search(r"EndLine:\s*(\d+)", body)
        if rule and first and last:
            found[m.group(1)] = (rule.group(1), int(first.group(1)), int(last.group(1)))
    for m in re.finditer(r'(\w+)\s*:=\s*openAIFinding\("([^"]+)"', src):
        found[m.group(1)] = (m.group(2), 1, 1)
    return found


def _trivy_cases(src: str) -> Iterator[tuple[str, list[str], bool]]:
    """(input file, names of the findings it must report, whether it must report nothing)
    of each test case (a finding written inline is neither named nor nothing; nothing is
    only told of a case read with the built-in rules alone)."""
    for block in re.split(r"\n\t\t\{\n(?:\t\t\t//[^\n]*\n)*\t\t\tname:", src)[1:]:
        block = block.split("\n\t\t},")[0]
        path = re.search(r'inputFilePath:\s*[^\n]*?"(?:testdata/)?([^"/]+\.[a-z]+)"\)?,', block)
        if path:
            wanted = re.findall(r"\b(want\w+)\b", block)
            builtin = '"skip-test.yaml"' in block  # the built-in rules, no custom ones
            yield path.group(1), wanted, builtin and not wanted and "RuleID" not in block


def trivy(repo: str) -> Iterator[dict[str, Any]]:
    """trivy's reported lines (secrets) and its no-finding files' lines (benign); see above."""
    slug = "aquasecurity/trivy"
    src = git_show(repo, f"{_TRIVY_DIR}/scanner_test.go")
    findings = _trivy_findings(src)
    for name, wanted, nothing in _trivy_cases(src):
        if name in _TRIVY_SKIPPED:
            continue
        path = f"{_TRIVY_DIR}/testdata/{name}"
        lines = git_show(repo, path).splitlines()
        named = [findings[w] for w in wanted if w in findings]
        if nothing:
            # A file no built-in rule may report anything in, read with the built-in rules.
            for line in lines:
                text = line.strip()
                if (
                    text
                    and not text.endswith(":")
                    and not re.fullmatch(r"</?[\w.-]+>", text)  # a tag alone: <settings>
                    and not any(bit in text for bit in _TRIVY_NOT_BENIGN)
                ):
                    yield row(text, "benign", "trivy.no finding", f"{slug}:{path}")
        for rule, first, last in named:
            if _TRIVY_NOT_CREDENTIAL.search(rule):
                continue
            if rule == "private-key":  # the key's body: the row is its whole block
                while first > 1 and "BEGIN" not in lines[first - 1]:
                    first -= 1
                while last < len(lines) and "END" not in lines[last - 1]:
                    last += 1
            # (A line two cases report is written once: ``write`` keeps a text's first row.)
            text = "\n".join(lines[first - 1 : last]).strip()
            seed = seed_of(rule, _TRIVY_SEED)
            yield row(text, "secret", f"trivy.{rule}", f"{slug}:{path}") | {"seed": seed}


# --- twelfth round: GitHub's custom secret patterns and checkov's secret tests -------------------

# GitHub's secret scanning custom patterns (advanced-security/secret-scanning-custom-patterns,
# MIT) keep each pattern in a directory's patterns.yml with a ``test`` (a text the pattern must
# match) and ``expected`` (the byte spans it must report in the directory's files, no more and
# no fewer: its testing/test.py fails on either). A pattern's test text is a secret, and so
# are the lines its expected spans lie on. A line of those files that no expected span and no
# snapshot (``__snapshots__/*.csv``: what a scan of the repository reported, by path and
# line) touches is benign, unless a reader would call it a credential (``_GH_NOT_BENIGN``).
# Left out: patterns that name no credential (personal data, ids, hosts, addresses, e-mail,
# action SHAs, the metadata file of an Arc password store; public SSH keys are benign rows,
# as the issue asks), and the personal-data directory's files.
_GH_DIRS = (
    "common",
    "configs",
    "database",
    "generic",
    "jwt",
    "password_store",
    "rsa",
    "uri",
    "vendors",
)
_GH_NOT_CREDENTIAL = re.compile(
    r"^(uuids|github_actions_sha_checker|azure_sql_connection_string|hardcoded_internal_emails"
    r"|hardcoded_internal_urls|any_ipv4_addresses|ghcr_typos|ssh_public_key|arc)$"
)
_GH_BENIGN_KINDS = ("ssh_public_key",)
# A line no span touches that a reader would still call a credential (dropped, not
# relabelled; decided from the texts alone, before the split): passwords the files' other
# patterns (or none) would report, Datadog keys under another label, an Okta key of the
# wrong length under its label.
_GH_NOT_BENIGN = (
    '"password": "MySecureSecretPassword!"',
    "SA_PASSWORD=Password12!",
    "password=webgoat",
    "password: 'hooooorst'",
    '"01000000000000000000000000000000"',
    "'0100000000000000000000000000000000000000'",
    '"0100000000000000000000000000000000000000"',
    "okta_key:00123456789987654321456987412358",
)
_GH_SEED = (
    (
        "generic label",
        r"^(common_passwords_shortlist|hardcoded_database_passwords|hardcoded_spring_sql_passwords"
        r"|django_secret_key|yaml_.*|env_passwords|generic_passwords.*|json_token|dotnet_.*"
        r"|hardcoded_uri_passwords|database_connection_string.*|.*_connection_string"
        r"|bearer_tokens|oauth_client_secret|tsql_create_login_or_user)$",
    ),
    ("private key", r"^(generic_rsa_keys|ssh_private_keys|gpg_private_key)$"),
    ("jwt", r"^jwt$"),
)


def _gh_lines(content: bytes, start: int, end: int) -> str:
    """The whole lines a byte span [start, end) lies on, stripped."""
    first = content.rfind(b"\n", 0, start) + 1
    last = content.find(b"\n", max(end - 1, start))
    last = len(content) if last < 0 else last
    return content[first:last].decode("utf-8", "replace").strip()


def github_patterns(repo: str) -> Iterator[dict[str, Any]]:
    """GitHub's custom patterns' test texts and expected lines (secrets), and the other lines
    of their test files (benign); see above."""
    import yaml  # pyyaml comes with the dev tools

    slug = "advanced-security/secret-scanning-custom-patterns"
    touched: set[tuple[str, int]] = set()  # (path, line number) an expected span or snapshot names
    contents: dict[str, bytes] = {}  # a test file's bytes, read once for all its spans
    for path in git_ls(repo, ".", spaced=True):
        if "/__snapshots__/" in path and path.endswith(".csv"):
            for record in csv.DictReader(io.StringIO(git_show(repo, path))):
                for number in range(int(record["start_line"]), int(record["end_line"]) + 1):
                    touched.add((record["path"], number))
    for directory in _GH_DIRS:
        patterns = yaml.safe_load(git_show(repo, f"{directory}/patterns.yml"))["patterns"]
        for pattern in patterns:
            kind = pattern["type"]
            label = "benign" if kind in _GH_BENIGN_KINDS else "secret"
            kept = label == "benign" or not _GH_NOT_CREDENTIAL.search(kind)
            source = f"{slug}:{directory}/patterns.yml"
            tests = pattern.get("test") or []
            tests = tests if isinstance(tests, list) else [tests]  # one test or a list
            for expected in pattern.get("expected") or []:
                path = f"{directory}/{expected['name']}"
                if path not in contents:
                    contents[path] = git_show(repo, path).encode("utf-8")
                content = contents[path]
                start, end = expected["start_offset"], expected["end_offset"]
                first = content.count(b"\n", 0, start) + 1
                for number in range(first, content.count(b"\n", 0, max(end - 1, start)) + 2):
                    touched.add((path, number))
                if kept:
                    yield _gh_row(_gh_lines(content, start, end), label, kind, f"{slug}:{path}")
            for test in tests if kept else []:
                data = test.get("data")
                if isinstance(data, str) and data.strip():
                    yield _gh_row(data.strip(), label, kind, source)
    for directory in _GH_DIRS:
        for path in git_ls(repo, directory, spaced=True):
            name = path.rsplit("/", 1)[-1]
            if "__snapshots__" in path or name in ("patterns.yml", "README.md", "meta.json"):
                continue
            try:
                body = git_show(repo, path)
            except UnicodeDecodeError:
                continue  # a binary keystore
            block: list[str] = []  # a public key block's lines: one text, not a row each
            for number, line in enumerate(body.splitlines(), 1):
                text = line.strip()
                if block or re.match(r"-----BEGIN [A-Z ]*PUBLIC KEY", text):
                    block.append(text)
                    if text.startswith("-----END"):
                        text, block = "\n".join(block), []
                    else:
                        continue
                if (
                    len(text) >= 8
                    and (path, number) not in touched
                    and not any(bit in text for bit in _GH_NOT_BENIGN)
                ):
                    yield row(text, "benign", "github.no finding", f"{slug}:{path}")


def _gh_row(text: str, label: str, kind: str, source: str) -> dict[str, Any]:
    seed = seed_of(kind, _GH_SEED) if label == "secret" else None
    return row(text, label, f"github.{kind}", source) | {"seed": seed}


# checkov (bridgecrewio/checkov, Apache-2.0) tests its secret scanning on files and lines of its
# own: tests/secrets/sanity/secrets/ must report a finding on each value line,
# sanity/non_secrets/, sanity/iac_fp/ and sanity/non_iac_fp/ none (checkov's runner reads them
# whole); its keyword-and-entropy plugin must report ``n`` findings on each literal line of
# test_plugin.py's ``analyze_line`` calls (one or more: a secret; none: benign) and none on
# any line of resources/cfn/secret-no-false-positive*.yml and resources/k8s/secret-name.yaml.
# Left out: a negative the plugin passes only for its file's type (it skips source code), and
# AWS's documented example keys (``_DOCS_EXAMPLES``).
_CHECKOV_DIR = "tests/secrets"
_CHECKOV_SECRET_FILES = ("sanity/secrets/true_positive.json",)
_CHECKOV_BENIGN_FILES = (
    "sanity/non_secrets/true_negative.json",
    "sanity/iac_fp/main.tf",
    "sanity/iac_fp/main.json",
    "sanity/non_iac_fp/a.py",
    "resources/cfn/secret-no-false-positive.yml",
    "resources/cfn/secret-no-false-positive2.yml",
    "resources/k8s/secret-name.yaml",
)
_CHECKOV_SOURCE_CODE = (".py", ".go", ".js", ".ts", ".java")
# A no-finding line a reader would still call a credential (dropped, not relabelled; decided
# from the texts alone, before the split): a login's password, and a value in the shape of
# an Azure AD client secret (``...8Q~...``).
_CHECKOV_NOT_BENIGN = ('"Pa$$w0rd"', "QtT8Q~9C-")


def _checkov_calls(src: str) -> Iterator[tuple[str, str, int]]:
    """(file name, line, findings expected) of each ``analyze_line`` call on a literal line
    that an ``assertEqual(n, len(result))`` checks."""
    for func in ast.walk(ast.parse(src)):
        if not isinstance(func, ast.FunctionDef):
            continue
        pending: tuple[str, str] | None = None
        # In source order (ast.walk goes level by level): a call, then its assertion.
        nodes = sorted(
            ast.walk(func), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))
        )
        for node in nodes:
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "analyze_line":
                args = node.args
                if (
                    len(args) >= 2
                    and isinstance(args[0], ast.Constant)
                    and isinstance(args[1], ast.Constant)
                    and isinstance(args[1].value, str)
                ):
                    pending = (str(args[0].value), args[1].value)
            elif (
                pending
                and isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "assertEqual"
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[1], ast.Call)
                and getattr(node.args[1].func, "id", "") == "len"
            ):
                yield pending[0], pending[1], int(node.args[0].value)
                pending = None


def checkov(repo: str) -> Iterator[dict[str, Any]]:
    """checkov's secret test lines: a finding expected (secrets), none (benign); see above."""
    slug = "bridgecrewio/checkov"
    test = f"{_CHECKOV_DIR}/test_plugin.py"
    for name, line, findings in _checkov_calls(git_show(repo, test)):
        text = line.strip()
        if _DOCS_EXAMPLES.search(text):
            continue
        if findings:
            yield row(text, "secret", "checkov.entropy keyword", f"{slug}:{test}") | {
                "seed": "generic label"
            }
        elif not name.endswith(_CHECKOV_SOURCE_CODE) and not any(
            bit in text for bit in _CHECKOV_NOT_BENIGN
        ):
            yield row(text, "benign", "checkov.entropy keyword", f"{slug}:{test}")
    for files, label in ((_CHECKOV_SECRET_FILES, "secret"), (_CHECKOV_BENIGN_FILES, "benign")):
        for name in files:
            path = f"{_CHECKOV_DIR}/{name}"
            for line in git_show(repo, path).splitlines():
                text = line.strip().rstrip(",")
                if (
                    len(text) < 8
                    or _DOCS_EXAMPLES.search(text)
                    or (label == "benign" and any(bit in text for bit in _CHECKOV_NOT_BENIGN))
                    or (label == "secret" and ":" not in text)
                ):
                    continue
                seed = "generic label" if label == "secret" else None
                yield row(text, label, f"checkov.{name.split('/')[0]}", f"{slug}:{path}") | {
                    "seed": seed
                }


# --- thirteenth round: 2ms's rule tests --------------------------------------------------------

# 2ms (Checkmarx/2ms, Apache-2.0) tests each of its rules (engine/rules/ruledefine/*_test.go)
# on a literal list of ``truePositives`` its detector must report and ``falsePositives`` it
# must not: a true positive is a secret, a false positive benign. Most rules began as
# gitleaks': their true positives are one value in some twenty of gitleaks' sample contexts,
# so each test gives one text a value and at most ``_2MS_PER_TEST`` in all, picked by a hash
# of their text (the first round takes two contexts a value). An element that is not a
# literal string (a call, a variable) is skipped, and so is a test that builds its lists by
# code. Left out:
# rules that name no credential (client, user and access ids, public keys), AWS's documented
# keys; a false positive a reader would still call a credential is dropped, not relabelled
# (``_2MS_NOT_BENIGN``).
_2MS_DIR = "engine/rules/ruledefine"
_2MS_PER_TEST = 3
_2MS_NOT_CREDENTIAL = re.compile(
    r"(client_id|access_id|user_id|user_api_id|pub_key|public_key|pub_api_token"
    r"|alibaba_access_key)_test\.go$"
)
# False positives a reader would still call a credential (dropped, not relabelled; decided
# from the texts alone, before the split): another rule's key or a key of the wrong length
# under its label (Anthropic's, Cloudflare's global and origin CA keys, Sentry's, Meraki's,
# Telegram's, a Slack user token), Google API keys gitleaks allows as widely published, a
# Mailchimp key passed to its SDK, a random value under a key's or a token's name, a JWT
# after an authorization header's Basic.
_2MS_NOT_BENIGN = (
    "sk-ant-",
    "cloudflare_global_api_key =",
    "CLOUDFLARE_GLOBAL_API_KEY:",
    'cloudflare: "0574b9f4',
    "CLOUDFLARE_ORIGIN_CA:",
    "cloudflare_api_key =",
    "CLOUDFLARE_API_KEY:",
    "key = adf4b1dbRdW3",
    "AIzaSy",
    "AIzaTesb6",
    "MailchimpSDK.initialize(token:",
    "meraki-api-key:",
    "meraki_token =",
    "sntrys_",
    '"token3": "xoxp-',
    "nonMatchingToken :=",
    "SUMO_ACCESS_KEY:",
    'telegram_api_token = "9922',
    'telegram_api_token = "telegram_api_token',
    "Authorization: Basic eyJ",
)
_2MS_SEED = (
    ("generic label", r"^generic_credential$"),
    ("openai", r"^openai$"),
    ("anthropic", r"^anthropic"),
    ("google", r"^gcp_api_key$"),
    ("github", r"^github_"),
    ("aws access key", r"^aws$"),
    ("private key", r"^privatekey$"),
    ("jwt", r"^jwt(_base64)?$"),
)


def _go_string_list(tokens: list[tuple[str, str]], start: int) -> list[str]:
    """The literal strings of a ``[]string{...}`` whose ``{`` is ``tokens[start]``, each
    element one string or strings joined by ``+`` (others skipped)."""
    out: list[str] = []
    parts: list[str] = []
    literal = True
    i = start + 1
    while i < len(tokens):
        kind, text = tokens[i]
        if kind in ("str", "raw"):
            parts.append(go_string(tokens[i]))
        elif text in (",", "}"):
            if parts and literal:
                out.append("".join(parts))
            parts, literal = [], True
            if text == "}":
                return out
        elif text != "+":
            literal = False  # a call or a name: this element is not a literal string
            if text in "({[":  # skip to its close, whose commas are not the list's
                depth = 1
                while depth and i + 1 < len(tokens):
                    i += 1
                    depth += {"(": 1, "{": 1, "[": 1, ")": -1, "}": -1, "]": -1}.get(
                        tokens[i][1], 0
                    )
        i += 1
    return out


def _one_a_value(texts: list[str]) -> list[str]:
    """One text for each value (a text's longest token) in ``texts``, in the order of a hash
    of their own: the same value in two contexts must not sit in both splits. (Not the
    split's hash, which would put the held-out rows first.)"""
    by_value: dict[str, str] = {}
    for text in sorted(texts, key=lambda t: hashlib.sha256(b"2ms " + t.encode()).digest()):
        by_value.setdefault(max(re.findall(r"[A-Za-z0-9+/=_.~-]+", text) or [""], key=len), text)
    return list(by_value.values())


def twoms(repo: str) -> Iterator[dict[str, Any]]:
    """2ms's rule tests: true positives (secrets) and false positives (benign); see above."""
    slug = "Checkmarx/2ms"
    for path in git_ls(repo, _2MS_DIR):
        if not path.endswith("_test.go"):
            continue
        rule = path.rsplit("/", 1)[-1].removesuffix("_test.go")
        tokens = go_tokens(git_show(repo, path))
        for i, (kind, text) in enumerate(tokens[:-4]):
            if kind != "id" or text not in ("truePositives", "falsePositives"):
                continue
            if [t for _, t in tokens[i + 1 : i + 5]] != [":", "[", "]", "string"]:
                continue
            if tokens[i + 5][1] != "{":
                continue
            texts = [
                t
                for t in _go_string_list(tokens, i + 5)
                if t.strip() and not _DOCS_EXAMPLES.search(t)
            ]
            source = f"{slug}:{path}"
            if text == "truePositives":
                if _2MS_NOT_CREDENTIAL.search(path):
                    continue
                for secret in _one_a_value(texts)[:_2MS_PER_TEST]:
                    yield row(secret, "secret", f"2ms.{rule}", source) | {
                        "seed": seed_of(rule, _2MS_SEED)
                    }
            else:
                for benign in texts:
                    if not any(bit in benign for bit in _2MS_NOT_BENIGN):
                        yield row(benign, "benign", f"2ms.{rule}", source)


# --- fourteenth round: sonar-text's secret rule examples ---------------------------------------

# sonar-text (SonarSource/sonar-text) describes each secret rule in a YAML file with
# ``examples``: a text and ``containsSecret``, which its rule tests check the rule against
# (``true`` a secret, ``false`` benign). Read at its last commit under LGPL-3.0
# (``_SONAR_REV``; later commits are under Sonar's source-available licence). Most texts are
# code found in public repositories, several lines each; the negatives are mostly the same
# settings with a variable, a template or a sample value in the secret's place.
# Left out: a negative with a ``fileName`` (its verdict is the file's path or type, and its
# text is most often a positive's); AWS's documented keys among the secrets. Dropped, not
# relabelled (decided from the texts alone, before the split): a negative that holds a value
# another example calls a secret, and negatives a reader would still call a credential
# (``_SONAR_NOT_BENIGN``): Docker Swarm join tokens, a random key under a misspelled or a
# key's label, a Stellar secret key, an AWS session token split over string literals, a
# Docker token, a fine-grained GitHub token whose tail is random, Google and Infura keys
# left out as widely published, an MWS token after two letters, part of an RSA key's body.
# The same value sits in several secrets' contexts (a SonarQube token in eight build files),
# so a secret's split is its value's (the longest letters-and-digits run of the example's
# ``match``), and one value never sits in both splits; a negative's is its text's.
_SONAR_REV = "0b8864e1"
_SONAR_DIR = "sonar-text-plugin/src/main/resources/org/sonar/plugins/secrets/configuration/"
_SONAR_NOT_BENIGN = (
    "SWMTKN-1-",
    "AWS_FECRET_KEY=",
    "stellar1.SecretKey(",
    "IQoJb3JpZ2luX2VjEKL",
    'AccountKey = "BtS7esLAQSrm6',
    '"pat": "dckr_pat_',
    "github_pat_1234567890abcdefg2758f",
    "AIzaSyJhX9lqDhBfZccIiGSw00IYgzRVzOziEqK",
    "AIzaSyAJN-eCsoSpVO9ckb1TRy4edZLgiTQPlLS",
    "KatitioAIza",
    "9aa3d95b3bc440fa88ea12eaa4456161",
    "blamzn.mws.",
    "someGiantBase64String",
)
_SONAR_SEED = (
    (
        "generic label",
        r"^(mysql-.*|postgres-.*|psql-.*|mongo.*|redis-url|java-datasource-.*"
        r"|jdbc-connection-string|odbc-connection-string|settings\.py-secret-key.*"
        r"|env-secret-key|default-secret-key)$",
    ),
    ("openai", r"^openai$"),
    ("google", r"^google-(api-keys|service-account-keys)$"),
    ("github", r"^github-"),
    ("aws access key", r"^aws-(access-key-ids|secret-access-keys-\d)$"),
    ("private key", r"^(rsa|ec|pkcs8|ssh|putty)-private-key(-encrypted)?$"),
)


def _value_key(match: str) -> str:
    """What a secret's split is chosen by: the longest run of letters and digits of its
    value (variants of one value, ``s&lvybzry1*...`` and ``d&lvybzry1*...``, share it)."""
    return max(re.findall(r"[A-Za-z0-9]+", match) or [match], key=len)


def sonar_text(repo: str) -> Iterator[dict[str, Any]]:
    """sonar-text's secret rule examples: secrets and benign texts; see above."""
    import yaml  # pyyaml comes with the dev tools

    slug = "SonarSource/sonar-text"
    examples: list[tuple[str, str, dict[str, Any]]] = []
    for path in git_ls(repo, _SONAR_DIR, rev=_SONAR_REV):
        if path.endswith(".yaml"):
            provider = yaml.safe_load(git_show(repo, path, _SONAR_REV))["provider"]
            for rule in provider.get("rules") or []:
                for example in rule.get("examples") or []:
                    examples.append((path, rule["id"], example))
    values = [str(e["match"]) for _, _, e in examples if e.get("containsSecret") and e.get("match")]
    for path, rule_id, example in examples:
        text = example["text"].rstrip("\n")
        source = f"{slug}:{path}@{_SONAR_REV}"
        if example.get("containsSecret"):
            if _DOCS_EXAMPLES.search(text):
                continue
            yield row(text, "secret", f"sonar.{rule_id}", source) | {
                "seed": seed_of(rule_id, _SONAR_SEED),
                "split": split_of(_value_key(str(example.get("match") or text))),
            }
        elif not (
            example.get("fileName")
            or any(bit in text for bit in _SONAR_NOT_BENIGN)
            or any(value in text for value in values)
        ):
            yield row(text, "benign", f"sonar.{rule_id}", source)


# --- rows -----------------------------------------------------------------------------------

_SEED = (
    ("generic label", r"^(generic-api-key|keyword|basic_auth)$"),
    ("openai", r"^(openai.*)$"),
    ("anthropic", r"^anthropic"),
    ("google", r"^(gcp-api-key|gcp|googleoauth2)$"),
    ("github", r"^(github.*)$"),
    ("aws access key", r"^(aws-access-token|aws_key|aws)$"),
    ("private key", r"^(private-key|private_key|privatekey)$"),
    ("jwt", r"^(jwt|jwt-base64)$"),
)


def seed_of(category: str, table: tuple[tuple[str, str], ...] = _SEED) -> str | None:
    """The family of spec 000's list a rule's name or category belongs to, by the first of
    ``table``'s (family, pattern) pairs whose pattern it matches; None if none does."""
    for family, pattern in table:
        if re.search(pattern, category):
            return family
    return None


def row(text: str, label: str, category: str, source: str) -> dict[str, Any]:
    return {
        "text": text,
        "label": label,
        "category": category,
        "seed": seed_of(category) if label == "secret" else None,
        "source": source,
        "split": split_of(text),
    }


def write(name: str, rows: Iterator[dict[str, Any]]) -> None:
    seen: set[str] = set()
    kept = [r for r in rows if not (r["text"] in seen or seen.add(r["text"]))]  # type: ignore[func-returns-value]
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / f"{name}.jsonl").open("w", encoding="utf-8") as f:
        for r in kept:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    counts: dict[str, int] = {}
    for r in kept:
        counts[f"{r['label']}/{r['split']}"] = counts.get(f"{r['label']}/{r['split']}", 0) + 1
    print(name, len(kept), dict(sorted(counts.items())))


def written() -> Iterator[dict[str, Any]]:
    import secret_written

    source = "agrun (written): bench/secret_written.py"
    for text, category in secret_written.benign(random.Random(1)):
        yield row(text, "benign", category, source)
    for text, category, seed in secret_written.secrets(random.Random(2)):
        yield row(text, "secret", category, source) | {"seed": seed}


def texts_of_other_files(*stems: str) -> set[str]:
    """Every text the corpus's other files hold: a new round adds none of them again."""
    return {
        json.loads(line)["text"]
        for path in sorted(OUT.glob("*.jsonl"))
        if path.stem not in stems
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }


# The rounds read from one repository each, into a file of their own: option -> (file, rows).
_ONE_REPOSITORY_ROUNDS: dict[str, tuple[str, Any]] = {
    "--fifth": ("secretlint", fifth_round),
    "--seventh": ("talisman", talisman),
    "--eighth": ("semgrep", semgrep_rules),
    "--ninth": ("leaky", leaky_repo),
    "--tenth": ("credsweeper", credsweeper),
    "--eleventh": ("trivy", trivy),
    "--thirteenth": ("twoms", twoms),
    "--fourteenth": ("sonar_text", sonar_text),
}
# The rounds read from two repositories, a file each: option -> ((file, rows), (file, rows)).
_TWO_REPOSITORY_ROUNDS: dict[str, tuple[tuple[str, Any], tuple[str, Any]]] = {
    "--sixth": (("ripsecrets", ripsecrets), ("whispers", whispers)),
    "--twelfth": (("github_patterns", github_patterns), ("checkov", checkov)),
}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] in _ONE_REPOSITORY_ROUNDS:
        name, rows_of = _ONE_REPOSITORY_ROUNDS[sys.argv[1]]
        seen = texts_of_other_files(name)
        write(name, (r for r in rows_of(sys.argv[2]) if r["text"] not in seen))
        return
    if len(sys.argv) == 4 and sys.argv[1] in _TWO_REPOSITORY_ROUNDS:
        rounds = _TWO_REPOSITORY_ROUNDS[sys.argv[1]]
        seen = texts_of_other_files(*(name for name, _ in rounds))
        for (name, rows_of), repo in zip(rounds, sys.argv[2:], strict=True):
            write(name, (r for r in rows_of(repo) if r["text"] not in seen))
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--fourth":
        repos = dict(arg.split("=", 1) for arg in sys.argv[2:])
        seen = texts_of_other_files("fourth")
        write("fourth", (r for r in fourth_round(repos) if r["text"] not in seen))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--third":
        third_round(sys.argv[2], sys.argv[3])
        return
    write("written", written())
    if len(sys.argv) < 4:
        return
    gl, ds, th = sys.argv[1:4]
    write("gitleaks", gitleaks(gl))
    write("detect_secrets", detect_secrets(ds))
    write("trufflehog", trufflehog(th))
    # Second round (issue 19): more of the same scanners' fixtures, in files of their own so
    # the first round's rows and figures stay comparable.
    first = {r["text"] for r in detect_secrets(ds)}
    write(
        "detect_secrets_more",
        (r for r in detect_secrets(ds, round2=True) if r["text"] not in first),
    )
    write("trufflehog_more", trufflehog(th, trufflehog_all(th)))
    repos = {
        "gitleaks/gitleaks": gl,
        "Yelp/detect-secrets": ds,
        "trufflesecurity/trufflehog": th,
    }
    write("configs", configs(repos))


def third_round(np_git: str, kf_git: str) -> None:
    """Nosey Parker's and Kingfisher's rule examples, less any text an earlier file holds
    (Kingfisher's rules began as Nosey Parker's: many examples are shared)."""
    seen = {
        json.loads(line)["text"]
        for path in sorted(OUT.glob("*.jsonl"))
        if path.stem not in ("noseyparker", "kingfisher")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    for name, slug, repo in (
        ("noseyparker", "praetorian-inc/noseyparker", np_git),
        ("kingfisher", "mongodb/kingfisher", kf_git),
    ):
        rows = [r for r in rule_examples(repo, slug) if r["text"] not in seen]
        write(name, iter(rows))
        seen |= {r["text"] for r in rows}


if __name__ == "__main__":
    main()
