"""The corpus rows written by hand for agrun (tests/data/secrets_corpus/written.jsonl).

Benign: the kinds of text the filter must let through that the scanners' fixtures hold few
of: documentation placeholders (the example values providers publish), configs and code
that refer to a secret kept elsewhere, public keys and certificates, ids, digests and
lockfile hashes, and prose about passwords. Secrets: the shapes the scanners' fixtures
hold few of (a value whose label is a sibling field, a password in argv, base64-wrapped
PEM keys, PuTTY keys, provider formats). Values are drawn from a seeded generator, so
none is a real credential. Written by agrun's authors; ``source`` says ``agrun (written)``.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Iterator

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pem_body(rng: random.Random, lines: int) -> str:
    return "\n".join(_r(rng, B64, 64) for _ in range(lines))


# A public JWT every reader of jwt.io has seen: the docs sample, not a credential.
DOCS_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0"
    "IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


def benign(rng: random.Random) -> Iterator[tuple[str, str]]:
    """(text, category) pairs."""
    names = ["API_KEY", "OPENAI_API_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "STRIPE_SECRET_KEY",
             "AWS_SECRET_ACCESS_KEY", "SLACK_BOT_TOKEN", "NPM_TOKEN"]  # fmt: skip
    placeholders = [
        "AKIAIOSFODNN7EXAMPLE",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "The docs use AKIAI44QH8DHBEXAMPLE and je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY as examples.",
        f"Paste a token such as {DOCS_JWT} into the debugger to decode it.",
        f'{{"access_token": "{DOCS_JWT}", "token_type": "Bearer"}}',
        "Authorization: Bearer <YOUR_TOKEN>",
        "Authorization: Bearer YOUR_API_KEY_HERE",
        'OPENAI_API_KEY="sk-..."',
        "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        'api_key: "<your-api-key>"',
        "password: changeme",
        'password = "********"',
        "STRIPE_SECRET_KEY=sk_test_XXXXXXXXXXXXXXXXXXXXXXXX",
        'client_secret: "YOUR_CLIENT_SECRET"',
        "token: REPLACE_ME",
        "DATABASE_URL=postgres://user:password@localhost:5432/app",
        "redis://:<password>@redis:6379/0",
        "mongodb+srv://<username>:<password>@cluster0.example.mongodb.net/test",
        "Use `curl -H 'X-Api-Key: $API_KEY' https://api.example.com/v1/items`.",
        "Set SLACK_BOT_TOKEN to the xoxb-... token from the app's OAuth page.",
        "Keys look like `sk-ant-api03-...`; never commit one.",
        "secret_key_base: <%= ENV['SECRET_KEY_BASE'] %>",
        "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\n<your private key here>\n-----END RSA PRIVATE KEY-----",
    ]
    for text in placeholders:
        yield text, "documentation placeholder"
    refs = [
        "env:\n  API_KEY: ${{ secrets.API_KEY }}\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "      - run: npm publish\n        env:\n          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}",
        "password: ${{ secrets.DOCKERHUB_PASSWORD }}",
        'token: "${{ secrets.CODECOV_TOKEN }}"',
        "password: {{ .Values.postgresql.password }}",
        'apiKey: "{{ .Values.apiKey | b64enc }}"',
        '  password: {{ required "a password" .Values.auth.password }}',
        "password: ${DB_PASSWORD}",
        "API_KEY=$API_KEY",
        'api_key = os.environ["OPENAI_API_KEY"]',
        'token = os.getenv("GITHUB_TOKEN")',
        "const apiKey = process.env.STRIPE_SECRET_KEY;",
        'let secret = std::env::var("CLIENT_SECRET")?;',
        'password := os.Getenv("DB_PASSWORD")',
        "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db-credentials\n      key: password",
        "envFrom:\n  - secretRef:\n      name: app-secrets",
        "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
        "DB_PASSWORD: '{{resolve:secretsmanager:prod/db:SecretString:password}}'",
        "api_key: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/api-key-AbCdEf",
        "password = vault:secret/data/db#password",
        'echo "$DOCKER_PASSWORD" | docker login -u "$DOCKER_USER" --password-stdin',
        "docker login --username ci --password-stdin < ~/.docker-pass",
        "mysql -u root -p",
        'mysql -u app -p"$MYSQL_PASSWORD" appdb',
        '{"name": "API_KEY", "valueFrom": "arn:aws:ssm:eu-west-1:123456789012:parameter/api-key"}',
        '[{"name": "LOG_LEVEL", "value": "debug"}, {"name": "API_KEY", "value": "${API_KEY}"}]',
        '{ name: "DB_PASSWORD", value: process.env.DB_PASSWORD }',
        '[["X-Api-Key", apiKey], ["Accept", "application/json"]]',
        'headers = [("Authorization", f"Bearer {token}")]',
        "password = getpass.getpass()",
        "--password-file /run/secrets/db_password",
        "secrets:\n  db_password:\n    file: ./db_password.txt",
        "token = settings.API_TOKEN",
        "api_key: !ENV ${WEATHER_API_KEY}",
        "password: '%(DB_PASSWORD)s'",
        "set PASSWORD=%DB_PASSWORD%",
    ]
    for text in refs:
        yield text, "secret reference"
    for name in names:
        yield f"{name}: ${{{{ secrets.{name} }}}}", "secret reference"
        yield (
            f'export {name}="$(vault kv get -field=value secret/{name.lower()})"',
            "secret reference",
        )
    for _ in range(6):
        key = base64.b64encode(bytes(rng.randrange(256) for _ in range(279))).decode()
        yield f"ssh-rsa {key} deploy@build-{rng.randrange(99)}", "public key"
        ed = base64.b64encode(
            b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 "
            + bytes(rng.randrange(256) for _ in range(32))
        ).decode()
        yield f"ssh-ed25519 {ed} alice@laptop", "public key"
        yield (
            f"-----BEGIN PUBLIC KEY-----\n{_pem_body(rng, 6)}\n-----END PUBLIC KEY-----",
            "public key",
        )
        yield (
            f"-----BEGIN CERTIFICATE-----\n{_pem_body(rng, 12)}\n-----END CERTIFICATE-----",
            "public key",
        )
        yield f"github.com ecdsa-sha2-nistp256 {_r(rng, B64, 140)}=", "public key"
        yield (
            f'{{"kty": "RSA", "e": "AQAB", "use": "sig", "kid": "{_r(rng, HEX, 16)}", "n": "{_r(rng, URLSAFE, 342)}"}}',
            "public key",
        )
        yield f"age1{_r(rng, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}", "public key"
        yield (
            f"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n{_pem_body(rng, 8)}\n=Ab12\n-----END PGP PUBLIC KEY BLOCK-----",
            "public key",
        )
    for _ in range(6):
        u = f"{_r(rng, HEX, 8)}-{_r(rng, HEX, 4)}-4{_r(rng, HEX, 3)}-a{_r(rng, HEX, 3)}-{_r(rng, HEX, 12)}"
        yield f"request_id={u} user_id={rng.randrange(10**6)}", "ids and digests"
        yield f'"integrity": "sha512-{_r(rng, B64, 86)}=="', "ids and digests"
        yield f'checksum = "{_r(rng, HEX, 64)}"', "ids and digests"
        yield f"github.com/pkg/errors v0.9.1 h1:{_r(rng, B64, 43)}=", "ids and digests"
        yield f"commit {_r(rng, HEX, 40)}\nAuthor: Dana <dana@example.org>", "ids and digests"
        yield f"image: ghcr.io/acme/api@sha256:{_r(rng, HEX, 64)}", "ids and digests"
        yield (
            f'"{_r(rng, "abcdefghij", 6)}": {{"version": "1.2.{rng.randrange(9)}", "hash": "sha256:{_r(rng, HEX, 64)}"}}',
            "ids and digests",
        )
        yield f'ETag: "{_r(rng, HEX, 32)}"', "ids and digests"
        yield f'<img src="data:image/png;base64,{_r(rng, B64, 200)}=">', "ids and digests"
        yield (
            f"max_tokens: {rng.choice([256, 1024, 4096])}\ntoken_count: {rng.randrange(99999)}",
            "ids and digests",
        )
        yield (
            f"https://example.com/search?q=rust&page_token={_r(rng, URLSAFE, 24)}",
            "ids and digests",
        )
        yield f'<meta name="csrf-token" content="{_r(rng, B64, 40)}">', "ids and digests"
    prose = [
        "Remember to rotate the database password every 90 days.",
        "My password manager generates 20-character passwords for every site.",
        "The API key is stored in the team vault, ask Priya for access.",
        "Tokens expire after one hour; refresh them with the refresh token flow.",
        "Never paste your secret key into a chat or a ticket.",
        "The password field must be at least 12 characters and include a digit.",
        "I reset my password yesterday, so the old one no longer works.",
        "Bearer tokens are sent in the Authorization header.",
        "We moved all credentials to AWS Secrets Manager last quarter.",
        "passwordless login via magic links is enabled for the beta group",
        "The tokenizer splits 'unbelievable' into three tokens.",
        "Set password_min_length: 12 and password_require_digit: true in the policy.",
        "The key insight is that caching the secret lookup halves latency.",
        "Error: invalid api key (401). Check that the key has not been revoked.",
        "Our SSO uses SAML; there is no shared password for the admin panel.",
        "She said the wifi password is on the fridge.",
        "Token budget: 8k for context, 1k reserved for the answer.",
        "the access token is short-lived, the refresh token lasts 30 days",
    ]
    for text in prose:
        yield text, "prose about credentials"


def _ppk(rng: random.Random) -> str:
    return (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-2024\n"
        f"Public-Lines: 2\n{_r(rng, B64, 64)}\n{_r(rng, B64, 4)}\nPrivate-Lines: 1\n"
        f"{_r(rng, B64, 44)}\nPrivate-MAC: {_r(rng, HEX, 64)}"
    )


def secrets(rng: random.Random) -> Iterator[tuple[str, str, str | None]]:
    """(text, category, seed family or None) triples."""
    for _ in range(5):
        pem = f"-----BEGIN RSA PRIVATE KEY-----\n{_pem_body(rng, 12)}\n-----END RSA PRIVATE KEY-----\n"
        wrapped = base64.b64encode(pem.encode()).decode()
        yield (
            f"apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\nmetadata:\n  name: web-tls\n"
            f"data:\n  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t{_r(rng, B64, 60)}\n  tls.key: {wrapped}",
            "base64 private key",
            "private key",
        )
        yield f'{{"private_key_b64": "{wrapped}"}}', "base64 private key", "private key"
        yield _ppk(rng), "putty key", "private key"
        value = _r(rng, ALNUM, 32)
        yield (
            f'env: [\n  {{ name: "LOG_LEVEL", value: "info" }},\n  {{ name: "API_KEY", value: "{value}" }},\n]',
            "sibling label",
            "generic label",
        )
        yield (
            f'env:\n  - name: DB_PASSWORD\n    value: "{_r(rng, ALNUM + "!#%", 16)}"\n  - name: PORT\n    value: "8080"',
            "sibling label",
            "generic label",
        )
        yield (
            f'fetch(url, {{ headers: [["X-Api-Key", "{_r(rng, ALNUM, 40)}"], ["Accept", "application/json"]] }})',
            "sibling label",
            "generic label",
        )
        yield (
            f'{{"key": "Authorization", "value": "Bearer {_r(rng, URLSAFE, 48)}", "type": "text"}}',
            "sibling label",
            "generic label",
        )
        yield (
            f'<add key="ApiSecret" value="{_r(rng, ALNUM, 28)}" />',
            "sibling label",
            "generic label",
        )
        pw = _r(rng, ALNUM + "!@#", 14)
        yield (
            f"docker login -u deploy -p {pw} registry.example.com",
            "argv password",
            "generic label",
        )
        yield f"mysql -h db.internal -u root -p{pw} appdb", "argv password", "generic label"
        yield (
            f"sshpass -p '{pw}' ssh admin@10.0.0.{rng.randrange(255)}",
            "argv password",
            "generic label",
        )
        yield f'psql "host=db user=app password={pw} dbname=app"', "argv password", "generic label"
        yield f"ya29.c.{_r(rng, URLSAFE, 180)}", "google oauth token", "google"
        yield f"MAILGUN_KEY=key-{_r(rng, HEX, 32)}", "mailgun key", None
        yield f"requests.post(url, auth=('api', 'key-{_r(rng, HEX, 32)}'))", "mailgun key", None
        yield (
            f"newrelic: NRAK-{_r(rng, string.ascii_uppercase + string.digits, 27)}",
            "new relic key",
            None,
        )
        yield f"NEW_RELIC_LICENSE_KEY={_r(rng, HEX, 36)}NRAL", "new relic key", None
