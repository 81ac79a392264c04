"""A seeded corpus for the sensitive-content filter: fake secrets in context, and look-alikes.

Positives take the shapes published by public secret scanners (provider prefixes, body
alphabets and lengths; labelled assignments; headers; PEM blocks; JWTs) and fill them with
random characters, so no value is a real credential. Each is set in a realistic context:
env files, JSON and YAML configs, chat messages, code, logs, HTTP headers, URLs, shell
commands, and memory entries whose metadata holds the secret.

Benign texts look risky but hold no secret: hex ids, git SHAs, UUIDs, base64 image data
URIs, minified code, URLs with query strings, prose about passwords and tokens, code and
configs that read credentials from elsewhere, placeholders, masked previews, logs, public
keys, lockfile hashes, token counts, kebab-case words and memory-like notes.

``UNCOVERED`` holds shapes the catalog leaves out on purpose; they are measured apart.
The ``held-out`` categories were written after the catalog was tuned on the rest.

Run ``python bench/secrets_corpus.py`` to print one sample of each category.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from typing import Any, NamedTuple

SEED = 20240611

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"

Rng = random.Random


class Sample(NamedTuple):
    """One corpus entry: ``entry`` is a text or a memory-entry dict; ``secret`` is the value
    that must not survive redaction (None for benign entries and value-less key hits)."""

    category: str
    entry: Any
    secret: str | None


def rand(rng: Rng, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def mixed(rng: Rng, alphabet: str, n: int) -> str:
    """Random, holding a digit and a capital when its alphabet has them, as issued tokens
    of that length almost always do."""
    needs = [chars for chars in (DIGITS, UPPER) if set(chars) & set(alphabet)]
    while True:
        value = rand(rng, alphabet, n)
        if all(set(chars) & set(value) for chars in needs):
            return value


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def pick(rng: Rng, *options: str) -> str:
    return rng.choice(options)


# --- fake provider tokens: prefix + body of the published alphabet and length ---------


def _jwt(rng: Rng) -> str:
    header = {"alg": pick(rng, "HS256", "RS256", "ES256"), "typ": "JWT"}
    claims = {"sub": rand(rng, DIGITS, 8), "iat": rng.randrange(1_600_000_000, 1_800_000_000)}
    head, body = (b64url(json.dumps(part).encode()) for part in (header, claims))
    return f"{head}.{body}.{rand(rng, URLSAFE, 43)}"


def _slack(rng: Rng) -> str:
    return f"{pick(rng, 'xoxb', 'xoxp')}-{rand(rng, DIGITS, 12)}-{rand(rng, DIGITS, 13)}-" + rand(
        rng, ALNUM, 24
    )


PROVIDERS: dict[str, Callable[[Rng], str]] = {
    "anthropic key": lambda r: "sk-ant-api03-" + rand(r, URLSAFE, 93) + "AA",
    "openai project key": lambda r: f"sk-proj-{rand(r, URLSAFE, 58)}T3BlbkFJ{rand(r, URLSAFE, 58)}",
    "openai legacy key": lambda r: f"sk-{mixed(r, ALNUM, 20)}T3BlbkFJ{rand(r, ALNUM, 20)}",
    "openrouter key": lambda r: "sk-or-v1-" + rand(r, HEX, 64),
    "google api key": lambda r: "AIza" + rand(r, URLSAFE, 35),
    "google oauth token": lambda r: "ya29." + rand(r, URLSAFE, 120),
    "google client secret": lambda r: "GOCSPX-" + rand(r, URLSAFE, 28),
    "github classic token": lambda r: (
        pick(r, "ghp_", "gho_", "ghu_", "ghs_", "ghr_") + rand(r, ALNUM, 36)
    ),
    "github fine-grained token": lambda r: f"github_pat_{rand(r, ALNUM, 22)}_{rand(r, ALNUM, 59)}",
    "gitlab token": lambda r: pick(r, "glpat-", "gldt-", "glrt-") + rand(r, URLSAFE, 20),
    "aws access key id": lambda r: pick(r, "AKIA", "ASIA") + rand(r, UPPER + "234567", 16),
    "slack token": _slack,
    "stripe key": lambda r: pick(r, "sk_live_", "rk_live_", "sk_test_") + rand(r, ALNUM, 99),
    "npm token": lambda r: "npm_" + rand(r, ALNUM, 36),
    "pypi token": lambda r: "pypi-AgEIcHlwaS5vcmc" + rand(r, URLSAFE, 70),
    "twilio api key": lambda r: "SK" + rand(r, HEX, 32),
    "sendgrid key": lambda r: f"SG.{rand(r, URLSAFE, 22)}.{rand(r, URLSAFE, 43)}",
    "hugging face token": lambda r: "hf_" + mixed(r, UPPER + LOWER, 34),
    "ai provider key": lambda r: pick(
        r,
        "pplx-" + rand(r, ALNUM, 48),
        "gsk_" + rand(r, ALNUM, 52),
        "r8_" + rand(r, ALNUM, 37),
        "xai-" + rand(r, ALNUM, 80),
    ),
    "cloud platform token": lambda r: pick(
        r,
        "dop_v1_" + rand(r, HEX, 64),
        "dapi" + rand(r, HEX, 32),
        "sbp_" + rand(r, HEX, 40),
        "hvs." + rand(r, URLSAFE, 95),
        "pul-" + rand(r, HEX, 40),
        rand(r, ALNUM, 14) + ".atlasv1." + rand(r, ALNUM, 67),
        "dp.pt." + rand(r, ALNUM, 43),
    ),
    "saas api token": lambda r: pick(
        r,
        "shpat_" + rand(r, HEX, 32),
        "lin_api_" + rand(r, ALNUM, 40),
        "ntn_" + rand(r, DIGITS, 11) + rand(r, ALNUM, 35),
        f"PMAK-{rand(r, HEX, 24)}-{rand(r, HEX, 34)}",
        f"glsa_{rand(r, ALNUM, 32)}_{rand(r, HEX, 8)}",
        "sntryu_" + rand(r, HEX, 64),
        "ATATT3" + rand(r, URLSAFE, 186),
    ),
    "mailchimp key": lambda r: f"{rand(r, HEX, 32)}-us{r.randrange(1, 21)}",
    "telegram bot token": lambda r: f"{r.randrange(10**8, 10**10)}:AA{rand(r, URLSAFE, 33)}",
    "azure client secret": lambda r: (
        f"{rand(r, ALNUM, 3)}{r.randrange(10)}Q~" + rand(r, ALNUM + "_~.-", 34)
    ),
    "age secret key": lambda r: (
        "AGE-SECRET-KEY-1" + rand(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
    ),
    "json web token": _jwt,
}

_PREFIX = ["OPENAI", "SERVICE", "APP", "CI", "UPSTREAM", "VENDOR"]
_SUFFIX = ["API_KEY", "TOKEN", "SERVICE_TOKEN", "CLIENT_KEY", "CRED", "KEY"]

# Where a bare provider token turns up around an agent.
BARE_CONTEXTS: list[Callable[[Rng, str], Any]] = [
    lambda r, s: f"{r.choice(_PREFIX)}_{r.choice(_SUFFIX)}={s}\nLOG_LEVEL=info\nPORT=8080",
    lambda r, s: f'export {pick(r, "MY", "PROD", "DEV")}_{r.choice(_SUFFIX)}="{s}"',
    lambda r, s: json.dumps({"service": {"name": "billing", "credentials": {"value": s}}}),
    lambda r, s: f"hey, can you check why this fails? I'm using {s} and get a 401",
    lambda r, s: f"Here is the key you asked for: {s} (don't share it)",
    lambda r, s: f'client = Client(\n    base_url="https://api.example.com",\n    key="{s}",\n)',
    lambda r, s: f"const client = new Client({{ auth: '{s}', timeout: 3000 }});",
    lambda r, s: f"2024-05-0{r.randrange(1, 9)}T10:00:00Z ERROR rejected cred={s} status=401",
    lambda r, s: f'curl https://api.example.com/v1/items -H "Authorization: Bearer {s}"',
    lambda r, s: f"services:\n  worker:\n    environment:\n      - UPSTREAM={s}\n",
    lambda r, s: f"AuthError: invalid credential '{s}'\n  at handler (app.js:12:7)",
    lambda r, s: {"text": "Deployment notes for the worker.", "metadata": {"env": {"X": s}}},
    lambda r, s: json.dumps({"note": json.dumps({"upstream": s})}),  # JSON inside a string
]

_WORDS = ["Summer", "Winter", "Dragon", "Falcon", "Maple", "Orbit", "Tango", "Velvet", "Kiwi"]


def _password(rng: Rng) -> str:
    word = rng.choice(_WORDS)
    return pick(
        rng,
        f"{word}{rng.randrange(1970, 2030)}{rng.choice('!@#$%?*')}",
        mixed(rng, ALNUM + "!@#%^*_+=", rng.randrange(10, 24)),
        f"{word.lower()}{rng.choice('_.-')}{rand(rng, DIGITS, rng.randrange(2, 6))}",
        mixed(rng, ALNUM, rng.randrange(12, 20)),
        rand(rng, DIGITS, rng.randrange(6, 9)),  # a PIN-like password
    )


def _secret(rng: Rng) -> str:
    return pick(
        rng,
        mixed(rng, ALNUM, 32),
        rand(rng, HEX, 64),
        mixed(rng, URLSAFE, 40),
        rand(rng, HEX, 32),
        mixed(rng, B64, 40),
        "-".join(rand(rng, HEX, n) for n in (8, 4, 4, 4, 12)),  # UUID-shaped API keys
    )


PASSWORD_LABELS = [
    "password", "PASSWORD", "DB_PASSWORD", "db_pass", "passwd", "pwd", "userPassword",
    "smtp.password", "admin-password", "MYSQL_ROOT_PASSWORD", "passphrase", "POSTGRESPASSWORD",
]  # fmt: skip
SECRET_LABELS = [
    "api_key", "apiKey", "API_KEY", "apikey", "x-api-key", "client_secret", "clientSecret",
    "CLIENT_SECRET", "access_token", "accessToken", "refresh_token", "auth_token", "secret",
    "app_secret", "SECRET_KEY", "aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "token",
    "GITHUB_TOKEN", "SLACK_TOKEN", "stripe_secret_key", "encryption_key", "signing_key",
    "private_key", "session_token", "WEBHOOK_SECRET", "consumerSecret", "X-Auth-Token",
]  # fmt: skip


def _xml(key: str, value: str) -> str:
    tag = key.lower().replace(".", "_")
    return f"<configuration><{tag}>{value}</{tag}></configuration>"


LABEL_CONTEXTS: list[Callable[[Rng, str, str], str]] = [
    lambda r, k, v: f"{k}={v}",
    lambda r, k, v: f"# production\nHOST=db.internal\n{k.upper()}={v}\nDEBUG=false\n",
    lambda r, k, v: json.dumps({"env": "prod", "auth": {k: v}, "retries": 3}),
    lambda r, k, v: json.dumps({k: v}, indent=2),
    lambda r, k, v: f"database:\n  host: localhost\n  {k}: {v}\n  port: 5432\n",
    lambda r, k, v: f'database:\n  {k}: "{v}"\n',
    lambda r, k, v: f'{k} = "{v}"',
    lambda r, k, v: f"settings = {{'{k}': '{v}', 'timeout': 30}}",
    lambda r, k, v: f"2024-06-01 12:00:0{r.randrange(10)} DEBUG loaded {k}={v} retries=3",
    lambda r, k, v: f"remember this for later, {k}: {v}",
    lambda r, k, v: f"{k}: {v}",
    lambda r, k, v: _xml(k, v),
    lambda r, k, v: f"docker run -e {k.upper().replace('.', '_').replace('-', '_')}={v} app",
    lambda r, k, v: f"https://api.example.com/v2/export?format=csv&{k.lower()}={v}&page=2",
    lambda r, k, v: json.dumps({"message": json.dumps({k: v})}),  # escaped JSON in JSON
    lambda r, k, v: f'$env:{k.upper().replace(".", "_")} = "{v}"',
]


def _header(rng: Rng) -> tuple[str, str]:
    kind = rng.randrange(4)
    if kind == 0:
        user = pick(rng, "admin", "svc", "deploy", "alice")
        value = base64.b64encode(f"{user}:{_password(rng)}".encode()).decode()
        return f"Authorization: Basic {value}", value
    if kind == 1:
        value = mixed(rng, ALNUM + "-._~", rng.randrange(24, 64))
        return f"GET /v1/me HTTP/1.1\nHost: api.example.com\nAuthorization: Bearer {value}", value
    if kind == 2:
        value = rand(rng, HEX, 40)
        return f"-H 'Authorization: token {value}'", value
    value = mixed(rng, ALNUM, 32)
    return json.dumps({"headers": {"Authorization": f"Bearer {value}", "Accept": "*/*"}}), value


def _pem(rng: Rng) -> tuple[str, str]:
    kind = pick(rng, "RSA ", "", "EC ", "OPENSSH ", "ENCRYPTED ", "DSA ") + "PRIVATE KEY"
    lines = [rand(rng, B64, 64) for _ in range(rng.randrange(6, 20))]
    block = "\n".join([f"-----BEGIN {kind}-----", *lines, f"-----END {kind}-----"])
    if rng.random() < 0.3:  # a cloud service-account file: the newlines are escaped
        account = {"type": "service_account", "private_key_id": rand(rng, HEX, 40)}
        return json.dumps({**account, "private_key": block + "\n"}), lines[2]
    return f"Key for the deploy box:\n{block}\n", lines[2]


def _url_creds(rng: Rng) -> tuple[str, str]:
    password = mixed(rng, ALNUM, rng.randrange(10, 20))
    scheme = pick(rng, "postgres", "mysql", "mongodb+srv", "redis", "amqp", "https")
    return f"DATABASE_URL={scheme}://app_user:{password}@db.internal:5432/main", password


def _cli(rng: Rng) -> tuple[str, str]:
    value = _password(rng)
    return pick(
        rng,
        f"curl -u deploy:{value} https://ci.example.com/api/json",
        f"mysql --password={value} -h db.internal prod",
        f"app login --token {value} --region eu",
        f"CREATE USER report IDENTIFIED BY '{value}';",
        f"machine api.example.com login bob password {value}",
    ), value


def _chat(rng: Rng) -> tuple[str, str]:
    value = _password(rng)
    return pick(
        rng,
        f"Remember that my password is {value} for the staging box.",
        f"the wifi password is {value}",
        f"FYI the door passcode was {value} last week",
        f"Note to self: password: {value}",
    ), value


def _config_file(rng: Rng) -> tuple[str, str]:
    secret = mixed(rng, B64, 40)
    user = base64.b64encode(f"bot:{_password(rng)}".encode()).decode()
    return pick(
        rng,
        f"[default]\naws_access_key_id = AKIA{rand(rng, UPPER, 16)}\n"
        f"aws_secret_access_key = {secret}\nregion = eu-west-1",
        f"apiVersion: v1\nkind: Secret\ndata:\n  password: {secret}\n",
        json.dumps({"auths": {"registry.example.com": {"auth": user}}}),
    ), (secret if "auths" not in user else user)


def _connection_string(rng: Rng) -> tuple[str, str]:
    key = rand(rng, B64, 86) + "=="
    name = f"store{rand(rng, DIGITS, 3)}"
    return f"DefaultEndpointsProtocol=https;AccountName={name};AccountKey={key};", key


def _memory_entry(rng: Rng) -> tuple[Any, str | None]:
    """A memory entry whose metadata names a credential: the key alone blocks it."""
    key = pick(
        rng, "apiKey", "api_key", "client_secret", "bearer", "password", "token",
        "authorization", "privateKey", "accessToken", "X-Api-Key", "secret", "AWS_SECRET_KEY",
    )  # fmt: skip
    value = rng.choice(["", None, "redacted-by-user", 12345, {"v": "x"}])
    entry = {"text": rng.choice(NOTES), "metadata": {"source": "chat", "extra": {key: value}}}
    return entry, None


def _held_out(rng: Rng) -> tuple[str, str]:
    """Positives written after the catalog was tuned, measured as they came."""
    password, token = _password(rng), mixed(rng, URLSAFE, 40)
    hexed, session = rand(rng, HEX, 32), mixed(rng, B64, 120)
    return rng.choice(
        [
            (f"export AWS_SESSION_TOKEN={session}", session),
            (f'requests.get(url, auth=("bob", "{password}"))', password),
            (f"mongodb+srv://admin:{password}@cluster0.abcde.mongodb.net/app", password),
            (f"here is my token: {hexed}", hexed),
            (f"the api key = {hexed}", hexed),
            (f"X-Auth-Token: {token}", token),
            (f"Ocp-Apim-Subscription-Key: {hexed}", hexed),
            (f"client secret: {token}", token),
            (f"ssh key passphrase: {password}", password),
            (f"PGPASSWORD={password} psql -h db -U app", password),
            (f"--client-secret={token}", token),
            (f"spring.datasource.password={password}", password),
        ]
    )


def positives(seed: int = SEED, per_category: int = 60) -> list[Sample]:
    """Fake secrets in context, ``per_category`` of each category, the same for one seed."""
    rng = Rng(seed)
    out: list[Sample] = []
    for name, make in PROVIDERS.items():
        for i in range(per_category):
            secret = make(rng)
            out.append(Sample(name, BARE_CONTEXTS[i % len(BARE_CONTEXTS)](rng, secret), secret))
    for category, labels, make_value in (
        ("password label", PASSWORD_LABELS, _password),
        ("secret label", SECRET_LABELS, _secret),
    ):
        for i in range(per_category * 4):
            value = make_value(rng)
            context = LABEL_CONTEXTS[i % len(LABEL_CONTEXTS)]
            out.append(Sample(category, context(rng, rng.choice(labels), value), value))
    pairs: list[tuple[str, Callable[[Rng], tuple[Any, str | None]]]] = [
        ("authorization header", _header),
        ("private key block", _pem),
        ("url credentials", _url_creds),
        ("cli credentials", _cli),
        ("password in chat", _chat),
        ("credential files", _config_file),
        ("connection string", _connection_string),
        ("memory entry key", _memory_entry),
        ("held-out positives", _held_out),
    ]
    for category, make_pair in pairs:
        for _ in range(per_category):
            entry, secret = make_pair(rng)
            out.append(Sample(category, entry, secret))
    return out


# --- shapes left out on purpose --------------------------------------------------------


def _plain_password(rng: Rng) -> tuple[str, str]:
    value = pick(rng, "sunshine", "dragonfly", "Monkey", "letmein", "trustno")
    return f"password={value}", value


def _unlabelled_aws(rng: Rng) -> tuple[str, str]:
    value = mixed(rng, B64, 40)
    return f"use {value} for the bucket", value


def _sas(rng: Rng) -> tuple[str, str]:
    value = rand(rng, B64, 44)
    return f"https://acct.blob.core.windows.net/c?sv=2022-11-02&sig={value}", value


def _discord_bot(rng: Rng) -> tuple[str, str]:
    value = f"M{rand(rng, ALNUM, 25)}.{rand(rng, URLSAFE, 6)}.{rand(rng, URLSAFE, 38)}"
    return f"bot.run('{value}')", value


UNCOVERED: dict[str, Callable[[Rng], tuple[str, str]]] = {
    # A password that is one plain word reads like any other word or name.
    "letters-only password": _plain_password,
    # A 40-character base64 string without a label is as likely a hash or an id.
    "unlabelled aws secret": _unlabelled_aws,
    # Azure SAS signatures hide behind a two-letter query parameter.
    "azure sas signature": _sas,
    # Discord bot tokens have no prefix; dots alone are too common to key on.
    "discord bot token": _discord_bot,
}


def uncovered(seed: int = SEED, per_category: int = 30) -> list[Sample]:
    rng = Rng(seed + 2)
    return [
        Sample(name, *make(rng)) for name, make in UNCOVERED.items() for _ in range(per_category)
    ]


# --- benign look-alikes ----------------------------------------------------------------

NOTES = [
    "I prefer tea over coffee in the morning.",
    "The user lives in Berlin and works remotely on Fridays.",
    "Favourite editor: vim. Prefers dark themes.",
    "Remind me to call the dentist next Tuesday at 10:30.",
    "User's daughter is called Mia; birthday on 4 March.",
    "Allergic to peanuts; vegetarian since 2019.",
    "Prefers answers in bullet points, short and direct.",
    "Working on the quarterly report, due 2024-07-15.",
    "Usually travels by train between Lyon and Paris.",
    "Likes jazz, especially Coltrane and Bill Evans.",
    "Keeps the spare key with the neighbour at number 12.",
    "Uses a password manager and 2FA for everything.",
]
PROSE = [
    "Please reset your password from the account settings page; the link expires in 24 hours.",
    "Password reset emails can take a few minutes to arrive, check your spam folder.",
    "The API key rotation policy requires a new key every 90 days.",
    "Bearer tokens are sent in the Authorization header and expire after one hour.",
    "Never paste your secret key into a chat; use the vault instead.",
    "The model has a context window of 128k tokens and outputs up to 4096 tokens.",
    "Token: a unit of text the model reads, roughly four characters of English.",
    "Authorization: required for all write endpoints, optional for reads.",
    "Secret: nobody knows the recipe except grandma.",
    "Your password: must be at least 12 characters long and include a number.",
    "We store only password hashes (argon2id), never the passwords themselves.",
    "Use the --password-stdin flag so the password does not end up in shell history.",
    "If the access token expires, the client uses the refresh token to get a new one.",
    "Two-factor authentication adds a one-time code on top of your password.",
    "The secret santa draw is on December 1st; budget is 20 euros.",
    "Keys to the office are with the reception, ask for badge 1142.",
    "The password is required and must differ from the last 5 ones.",
    "My password was reset yesterday, so the old one no longer works.",
    "Le mot de passe doit contenir au moins douze caractères.",
    "Das Passwort wird nie im Klartext gespeichert.",
    "Пароль должен содержать не менее 12 символов.",
    "Bearer of this card is entitled to one free coffee.",
    "The token budget for this task is 8000; the summary used 1200 tokens.",
]
CODE = [
    'api_key = os.environ["OPENAI_API_KEY"]',
    "api_key = os.getenv('STRIPE_API_KEY')",
    "password = getpass.getpass()",
    "def login(username: str, password: str) -> Session:",
    "const apiKey = process.env.API_KEY;",
    "token = request.headers.get('Authorization')",
    "headers = {'Authorization': f'Bearer {token}'}",
    "secret_key = settings.SECRET_KEY",
    "if not check_password(password, user.password_hash):\n    raise AuthError()",
    "password: string;\ntoken?: string;\napiKey: string | undefined;",
    "class Config(BaseModel):\n    api_key: SecretStr\n    timeout: int = 30",
    "client = OpenAI(api_key=api_key)",
    "export function authHeader(token) { return { Authorization: `Bearer ${token}` } }",
    "SECRET_KEY = get_random_secret_key()",
    "token_count = len(tokenizer.encode(text))",
    "max_tokens=4096, temperature=0.2",
    'private_key_path = "~/.ssh/id_ed25519"',
    "password = self.password",
    "creds = load_credentials(path)",
    'let api_key = std::env::var("API_KEY")?;',
    'String password = System.getenv("DB_PASSWORD");',
    "token = secrets.token_urlsafe(32)",
    "const token = jwt.sign(payload, secret, { expiresIn: '1h' });",
    "if password == confirm_password:\n    save(user)",
    "token: Optional[str] = None",
    "$this->apiKey = $apiKey;",
    "password = var.db_password",
    'config["password"] = password',
]
CONFIG_REFS = [
    "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-secret\n"
    "        key: password",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    'ansible_become_pass: "{{ vault_become_pass }}"',
    "POSTGRES_PASSWORD_FILE: /run/secrets/db_password",
    'resource "aws_db_instance" "main" {\n  password = random_password.db.result\n}',
    "secretName: tls-cert-2024",
    "securitySchemes:\n  bearerAuth:\n    type: http\n    scheme: bearer\n    bearerFormat: JWT",
    '"password": {"type": "string", "minLength": 12, "format": "password"}',
    "password_hash VARCHAR(255) NOT NULL,\n  api_token_id BIGINT REFERENCES tokens(id)",
    '<input type="password" name="password" autocomplete="current-password" minlength="12">',
    ".password-field { border: 1px solid #c00; }",
    '{"password": "Mot de passe", "forgotPassword": "Mot de passe oublié ?"}',
    "PWD=/home/alice/projects/app2024\nOLDPWD=/home/alice\nHOME=/home/alice",
    "keyring==24.3.1\ncryptography==42.0.5\npyjwt==2.8.0",
]
PLACEHOLDERS = [
    "API_KEY=your-api-key-here",
    "password: ${DB_PASSWORD}",
    "token: <TOKEN>",
    '"password": ""',
    "secret: changeme",
    "OPENAI_API_KEY=sk-...",
    "api_key: '{{ vault_api_key }}'",
    "password = '********'",
    "client_secret: REPLACE_ME",
    "password=%(db_password)s",
    "token: null",
    "apiKey: YOUR_API_KEY",
    "password: [REDACTED]",
    "AWS_SECRET_ACCESS_KEY=",
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/me',
    "Authorization: Bearer <access_token>",
    'export OPENAI_API_KEY="sk-..."',
    "DB_PASSWORD=$(cat /run/secrets/db)",
    "api_key=sk-****************************1a2b",
    "token ending in ...4f2a was revoked",
]
LOGS = [
    "INFO auth ok user=alice latency_ms=12",
    "WARN token refreshed expires_in=3600",
    "DEBUG usage prompt_tokens=812 completion_tokens=96 total_tokens=908",
    "INFO GET /api/v1/items?page=2&per_page=50 200 13ms",
    "ERROR password check failed for user=bob attempts=3",
    "INFO key rotation scheduled for 2024-09-01",
    "INFO session=7f3a2c91 user=carol action=login ok",
    "DEBUG cache key=user:42:profile hit",
]
WORDS = [
    "sk-learn-compatible-estimator", "task-runner-deployment-pipeline", "risk-assessment-template",
    "antidisestablishmentarianism", "ghost_protocol_handler", "hf_hub_download", "desk-booking",
    "npm_config_registry", "pypi-simple-index", "xox-game-board", "akiak-village-records",
    "github_pat_rotation_guide", "eyJhbGciOiJIUzI1NiJ9", "ASIAN-FUSION-MENU-2024-SPRING",
]  # fmt: skip


def _hexid(rng: Rng) -> str:
    return pick(
        rng,
        f"commit {rand(rng, HEX, 40)}\nAuthor: Dev <dev@example.com>\n\n    fix flaky test",
        f"sha256:{rand(rng, HEX, 64)}",
        f'ETag: "{rand(rng, HEX, 32)}"',
        f"Merged {rand(rng, HEX, 7)} into main; build {rand(rng, HEX, 12)} passed",
        f"md5 {rand(rng, HEX, 32)}  release.tar.gz",
        f"object id {rand(rng, HEX, 24)} not found",
        f"Order #{rand(rng, UPPER + DIGITS, 10)} shipped",
    )


def _uuid(rng: Rng) -> str:
    u = "-".join(rand(rng, HEX, n) for n in (8, 4, 4, 4, 12))
    return pick(
        rng,
        f"request_id={u} status=200",
        f'{{"id": "{u}", "kind": "order"}}',
        f"trace {u} took 32ms",
        f"client_id: {u}",
        f"tenant={u}",
    )


def _image(rng: Rng) -> str:
    raw = bytes(rng.randrange(256) for _ in range(rng.randrange(300, 3000)))
    data, kind = base64.b64encode(raw).decode(), pick(rng, "png", "jpeg", "webp")
    return pick(
        rng,
        f"![chart](data:image/{kind};base64,{data})",
        f'<img src="data:image/{kind};base64,{data}">',
    )


def _blob(rng: Rng) -> str:
    fields = {
        "signature": rand(rng, B64, 88),
        "nonce": rand(rng, B64, 24),
        "data": rand(rng, B64, 200),
    }
    return json.dumps(fields)  # fmt: skip


def _minified(rng: Rng) -> str:
    a, b, c, d, e, f, g, h = (
        rand(rng, LOWER, 1) + rand(rng, ALNUM, rng.randrange(2)) for _ in range(8)
    )
    parts = [
        f"var {a}={{token:{b}.token,password:{c}.password,apiKey:{d}.apiKey}};",
        f'function {e}({f}){{return {f}.headers.Authorization="Bearer "+{g},{f}}}',
        f'{h}.secret=!0;{a}.key="{rand(rng, LOWER, 6)}";',
        f'if({b}.length>{rng.randrange(4, 64)})throw new Error("bad token");',
        f"const {c}=[{','.join(str(rng.randrange(999)) for _ in range(12))}];",
    ]  # fmt: skip
    rng.shuffle(parts)
    return "".join(parts)


def _url(rng: Rng) -> str:
    return pick(
        rng,
        f"https://shop.example.com/search?q=password+reset&page={rng.randrange(9)}&utm_source=m",
        f"https://example.com:{rng.randrange(1024, 9999)}/api/items?id={rand(rng, HEX, 16)}",
        f"https://accounts.example.com/o/oauth2/auth?client_id={rand(rng, DIGITS, 12)}"
        "&response_type=code&scope=email",
        f"https://cdn.example.com/assets/app.{rand(rng, HEX, 20)}.js?v={rand(rng, DIGITS, 10)}",
        f"https://docs.example.com/auth?section={rng.randrange(20)}#tokens-and-keys",
        f"https://maps.example.com/@{rng.uniform(-90, 90):.6f},{rng.uniform(-90, 90):.6f},15z",
        f"https://example.com/reset?email=a%40b.com&next_token={rand(rng, ALNUM, 20)}",
    )


def _public_key(rng: Rng) -> str:
    body = rand(rng, B64, 372)
    return pick(
        rng,
        f"ssh-rsa AAAAB3NzaC1yc2E{body} deploy@host",
        f"-----BEGIN PUBLIC KEY-----\n{body[:64]}\n{body[64:128]}\n-----END PUBLIC KEY-----",
        f"-----BEGIN CERTIFICATE-----\n{body[:64]}\n{body[64:128]}\n-----END CERTIFICATE-----",
    )


def _lockfile(rng: Rng) -> str:
    version = f"{rng.randrange(9)}.{rng.randrange(20)}.0"
    return (
        f'"integrity": "sha512-{rand(rng, B64, 86)}==",\n'
        f'"resolved": "https://registry.npmjs.org/pkg/-/pkg-{version}.tgz"'
    )


def _api_response(rng: Rng) -> str:
    p, c = rng.randrange(10, 9000), rng.randrange(1, 2000)
    return pick(
        rng,
        json.dumps({"usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}),
        json.dumps({"token_type": "Bearer", "expires_in": 3600, "scope": "read write"}),
        json.dumps({"items": [], "nextPageToken": rand(rng, URLSAFE, 40)}),
        json.dumps({"id": f"chatcmpl-{rand(rng, ALNUM, 29)}", "object": "chat.completion"}),
    )


def _email_headers(rng: Rng) -> str:
    return (
        "Authentication-Results: mx.example.com; spf=pass smtp.mailfrom=example.org; dkim=pass\n"
        f"DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=s1; bh={rand(rng, B64, 43)}=; "
        f"b={rand(rng, B64, 120)}"
    )


# Written after the catalog was tuned and measured as they came: not fitted to it.
HELD_OUT = [
    "docker login -u ci --password-stdin < token.txt",
    "kubectl create secret generic db --from-literal=password=$DB_PASS",
    "openssl rand -hex 32 > .secret && chmod 600 .secret",
    "gpg --batch --passphrase-fd 0 --decrypt backup.gpg",
    "| `API_KEY` | Your API key from the dashboard | required |",
    "Set `OPENAI_API_KEY` in your `.env` file before running `make dev`.",
    'assert token.startswith("ghp_"), "expected a classic token"',
    "with:\n  token: ${{ secrets.CODECOV_TOKEN }}\n  fail_ci_if_error: true",
    '"ApiKeyAuth": {"type": "apiKey", "in": "header", "name": "X-API-Key"}',
    "Error: Invalid API key provided: sk-abc1***********wxyz",
    "401 Unauthorized: token expired at 2024-01-01T00:00:00Z",
    "color: #1a2b3c; background: #ff00ff;",
    "sha1: da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "git remote add origin git@github.com:acme/widgets.git",
    "image: nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
    "listening on 192.168.1.20:8443, mac 00:1A:2B:3C:4D:5E",
    "https://youtu.be/dQw4w9WgXcQ?t=42",
    "https://drive.google.com/file/d/1AbCdEfGhIjKlMnOpQrStUvWxYz012345/view?usp=sharing",
    "https://app.slack.com/client/T01234567/C01234567/thread/C01234567-1712345678.123456",
    "https://abc123def456@o123456.ingest.sentry.io/1234567",
    "publishable key: pk_live_51H8xYzAbCdEfGhIjKlMnOpQr",
    "My password manager is 1Password, and I rotate keys yearly.",
    "The API key is in the vault at secret/data/prod/api",
    "password: 8-64 characters, at least one digit",
    "Session token TTL: 3600s; refresh token TTL: 30d",
    "I use the key fob for the garage, code changes monthly.",
    "ticket SEC-20931: rotate the signing key before 2024-10-01",
    "The OAuth2 flow returns an access_token and a refresh_token.",
    "export HISTCONTROL=ignorespace  # keeps ' export TOKEN=...' out of history",
    "Passwords must not reuse any of the last 24; see policy PWD-7.",
]


BENIGN: dict[str, Callable[[Rng], Any]] = {
    "held-out look-alikes": lambda r: r.choice(HELD_OUT),
    "hex ids and shas": _hexid,
    "uuids": _uuid,
    "base64 images": _image,
    "base64 blobs": _blob,
    "minified code": _minified,
    "urls with queries": _url,
    "prose about secrets": lambda r: r.choice(PROSE),
    "memory notes": lambda r: r.choice(NOTES),
    "code using credentials": lambda r: r.choice(CODE),
    "configs referencing secrets": lambda r: r.choice(CONFIG_REFS),
    "placeholders and masks": lambda r: r.choice(PLACEHOLDERS),
    "logs": lambda r: f"2024-06-0{r.randrange(1, 9)}T0{r.randrange(10)}:00:00Z {r.choice(LOGS)}",
    "public keys and certs": _public_key,
    "lockfile hashes": _lockfile,
    "api responses": _api_response,
    "email headers": _email_headers,
    "long and kebab words": lambda r: f"see {r.choice(WORDS)} and {r.choice(WORDS)}",
    "memory entries": lambda r: {
        "text": r.choice(NOTES),
        "metadata": {
            "source": "chat",
            "tokens": r.randrange(5, 90),
            "maxTokens": 4096,
            "isSecret": False,
            "nextPageToken": rand(r, URLSAFE, 24),
            "tags": ["preference"],
        },
    },
}


def benign(seed: int = SEED, per_category: int = 150) -> list[Sample]:
    """Risky-looking texts with no secret, ``per_category`` of each, the same for one seed."""
    rng = Rng(seed + 1)
    return [
        Sample(name, make(rng), None) for name, make in BENIGN.items() for _ in range(per_category)
    ]


if __name__ == "__main__":
    seen: set[str] = set()
    for sample in positives(per_category=2) + uncovered(per_category=1) + benign(per_category=1):
        if sample.category not in seen:
            seen.add(sample.category)
            print(f"--- {sample.category}\n{sample.entry}")
