"""The one catalog of secret shapes, shared by the sensitive-content filter and the redactor."""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass

__all__ = [
    "CATALOG",
    "PLACEHOLDER",
    "SecretShape",
    "reads_as_random",
    "reads_as_token",
    "reads_as_word",
]


@dataclass(frozen=True, slots=True)
class SecretShape:
    """One kind of secret: ``name`` is what a refusal reports, ``family`` groups shapes.

    ``hints`` are substrings one of which every match contains, so a text holding none is
    never scanned: a hint with a capital letter is contained as written (``AKIA``), an
    all-lower-case one in any case (``token``). A group named ``keep`` in ``pattern`` is
    a prefix of the match that is not secret (a label, a header name, a URL's host) and
    stays in place when the rest is masked. Unless ``multiline``, a match never spans a
    line break, so only lines holding a hint need scanning; a ``next_line`` shape's match
    may run onto the line after its hint's (a value on the line below its label). A
    ``random`` shape's label
    says little (``HEROKU_KEY``, ``SONAR_LOGIN``): its value must also read as random
    (`reads_as_random`), not as a name, a version or a word; a ``token`` family's, whose
    label is only a service's name, must read as a token (`reads_as_token`).
    """

    name: str
    family: str
    pattern: str
    hints: tuple[str, ...]
    multiline: bool = False
    random: bool = False
    next_line: bool = False
    gate: str = ""
    """A cheap pattern every text a match can be in holds (an operator the shape needs:
    ``||`` or a line break after ``:``), searched once per text before the costly one."""
    gate_lines: bool = False
    """Whether the lines to scan are those holding the gate, not a hint: for a shape whose
    hints (``=``, ``:``) are on nearly every line, and whose gate lies within each match."""


# Shapes come from the rule sets of public secret scanners, kept where a text can be judged
# on its own: provider prefixes, PEM blocks, JWTs, and credential labels followed by a
# value that reads as a secret, not as a word, path, placeholder or code. Patterns are
# ASCII-only (``(?a)``): case-insensitive parts never match non-ASCII look-alikes
# (``ſecret``) that the hints would miss.

# A label starts a word: after a non-alphanumeric (``_ - . " '`` or space), at a
# camelCase hump (``myApiKey``) or at the end of an all-caps name (``USERPASSWORD``),
# never inside a word (``compass``, ``monkey``).
# The all-caps run is capped: unbounded, each capital of a long run rescans the rest of it.
# After a JSON string's or C's escaped line break or tab (a config inside a JSON string:
# "...\nsecret: ..."), where a letter stands before what starts there. (Not after a URL's
# %0A, as tokens may be: tried at every position of a label's line, that look-behind cost
# every text ~7% more.)
_AFTER_JSON_ESCAPE = r"(?<=\\[nrt])"
# After an escape: a JSON string's, or a URL's %20, %3D, %0A (a tool's arguments as JSON
# text, a logged URL).
_AFTER_ESCAPE = rf"{_AFTER_JSON_ESCAPE}|(?<=%[0-9A-Fa-f]{{2}})"
_LEFT = (
    r"(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z]{1,64}(?![A-Za-z0-9]))"
    # An api key glued to a service's name in lower case (iamapikey, slapi_key): no word
    # ends in "apikey".
    rf"|(?<=[a-z])(?=api[_-]?key)|{_AFTER_JSON_ESCAPE})"
)
# Markdown's emphasis or an HTML tag closed around a label, or around its colon as well:
# **Password**: ..., **API key:** ..., <b>token</b>: ... (what a model's answer writes).
_MARKUP_CLOSE = r"(?:\*{1,2}|_{2}|</(?:b|strong|em|i|code|span|label)>)"
# After the label: an optional closing quote or bracket (JSON keys, ENV['X']), then an
# assignment, then an optional opening quote. Never across a line break.
# Also Go/Make/PHP/R operators (``:=``, ``?=``, ``::=``, ``.=``, ``<-``), comparisons
# (``==``, ``!==``: a check against a literal holds the secret too), a dash before a
# quoted value (``twilio token - '...'``), a Markdown table's cell (``apiKey |...``), a type
# between name and value (``var fooToken string = "..."``, ``var password: String = "..."``)
# and C#'s ``@"..."``.
_OPERATOR = (
    r"(?:\[\d{0,4}\])?(?:\\?[\"'`\]]|" + _MARKUP_CLOSE + r"){0,2}"
    r"(?:[ \t]+(?:string|String|str|\[\]byte)|[ \t]*:[ \t]*(?:String|string|str)\??)?[ \t]*"
    # "::" alone is a scope (strlen_pass::get_len, CPAN::HTTP::Credentials::VERSION).
    r"(?::{1,3}=|=>|[?.!]?={1,3}|:(?!:)|=|[ \t]<-|->[ \t]|[ \t]-(?=[ \t]*[\"'`])|(?<!\|)\|(?!\|)"
    # A full-width colon, as Chinese, Japanese and Korean text write one.
    r"|\uff1a"
    # An arrow or a dash as prose and slides write one (U+2192, U+21D2, an en or em dash).
    r"|[\u2192\u21d2\u2013\u2014]"
    # An HTML table's or a definition list's next cell: <td>password</td><td>...
    r"|</t[dh]>[ \t]*<td(?:[ \t][^>\n]{0,80})?>|</dt>[ \t]*<dd(?:[ \t][^>\n]{0,80})?>"
    # URL-encoded (q=password%3D...: a label and its value inside another URL's parameter).
    r"|%3[AaDd](?:%20|\+)?)"
    r"(?:[ \t]*" + _MARKUP_CLOSE + r")?[ \t]*@?\\?"
)
# A quoted value may open with a space: token = ' V77f...'.
_ASSIGN = _OPERATOR + r"(?:[\"'`][ \t]?)?"
_STOP = "\\s\"'`,;\\\\"  # characters that end an unquoted value
# A value made to be replaced, or a documentation sample: runs of x, X, 0, 1, a, * or #, a
# long run of binary digits alone (ghp_1010...), a hex number of one digit repeated
# (0xeeee...: the address code uses for a chain's native token, 0x0000... the zero
# address), the word EXAMPLE and the stem of AWS's published secret key (its docs and
# scanners' tests vary the tail: ...bPxRfiCYEXAMPLEKEY, ...bPxRfiCYESAFAKEKEY), counting
# sequences, a man page's italic word, the signature of the sample token on jwt.io's front
# page, RFC 6750's sample bearer token, and the test-mode keys Stripe's API reference prints
# in every curl example (copied into countless tutorials).
_PLACEHOLDER = (
    r"(?:[xX]{6}|0{8}|1{8}|a{8}|(?<![A-Za-z0-9])[01]{24,}(?![A-Za-z0-9])"
    r"|(?<![0-9A-Za-z])0x([0-9a-fA-F])\1{15,}(?![0-9A-Za-z])"
    r"|\*{4}|#{4}|EXAMPLE|(?i:example|redacted|placeholder)|(?:123){3}"
    # A token whose parts are named, not given: eyJ...kid.body.signature.
    r"|\.(?:payload|body|claims)\.signature(?![A-Za-z0-9_-])"
    # A man page's italic word, what its reader puts in (roff's \fIpassword\fR).
    r"|\\f[IB][^\\\s]{1,40}\\f[RP]"
    r"|wJalrXUtnFEMI/K7MDENG/bPxRfiCY"
    r"|SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    # The bearer token RFC 6750 gives as its example (curl's manual, OAuth guides).
    r"|mF_9\.B5f-4\.1JqM"
    r"|sk_test_(?:4eC39HqLyjWDarjtT1zdp7dc|BQokikJOvBiI2HlWgH4olfQ2)"
    # Mapbox's public tokens (pk.eyJ...) and Datadog's client tokens (pub and 32 hex
    # digits) are made to ship in a page's code; Mapbox's secret ones (sk.eyJ...) are caught.
    r"|(?<![A-Za-z0-9])pk\.eyJ|(?<![A-Za-z0-9])pub[0-9a-f]{32}(?![A-Za-z0-9])"
    # A public key's body, by how it opens. DER in base64: an RSA key's (MIIBIjANBgkq...,
    # MIGfMA0GCSq..., PKCS #1's MIIBCgKCAQEA...), an EC key's, Ed25519's and its kin's.
    # OpenSSH's, by the key type it opens with (ssh-ed25519, ssh-rsa, ssh-dss,
    # ecdsa-sha2-nistp..., the security-key kinds): a line of authorized_keys given under a
    # "key" label. (A private key's body opens otherwise: openssh-key-v1.) A random value
    # after a "key" label that is one is public.
    r"|(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]IjANBgkqhkiG9w0BAQEFAAOC|MIGfMA0GCSqGSIb3DQEBAQUAA4GN"
    r"|MII[A-Za-z0-9+/]{2}[AQgw]KCA[A-Za-z0-9+/]EA|MIGJAoGBA|MFkwEwYHKoZIzj0CAQY"
    r"|MHYwEAYHKoZIzj0CAQY|MIGbMBAGByqGSM49AgEG|M[CE][A-Za-z0-9+/]wBQYDK2V[uvwx]A[yz]"
    r"|AAAA(?:C3NzaC1lZDI1NTE5|B3NzaC1yc2E|B3NzaC1kc3M|E2VjZHNhLXNoYTItbmlzdHA"
    r"|G3NrLWVjZHNhLXNoYTItbmlzdHA|GnNrLXNzaC1lZDI1NTE5)))"
)
PLACEHOLDER = re.compile(_PLACEHOLDER)
"""Found in a match of a shape, it makes the match a placeholder, not a secret."""
_NAME = r"[A-Za-z_$][\w$]*"
# A part of an attribute chain: a name with at most two runs of digits (cfg.oauth2Token,
# aws.s3.secret); a random part (oHILWmk3qakMYbqAikD9R0nJ) has more.
_PART = r"[A-Za-z_$][A-Za-z_$]*(?:\d{1,4}[A-Za-z_$]*){0,2}"

_PARTS = re.compile(r"[-_./+=]+")
_LETTERS = re.compile(r"[A-Za-z_./-]+\??")
_QUALIFIED = re.compile(r"[A-Za-z][A-Za-z0-9]{0,9}:([A-Za-z][A-Za-z_.-]*)")
_HEX = re.compile(
    r"(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{32,}|(?=[0-9A-F]*[A-F])(?=[0-9A-F]*\d)[0-9A-F]{32,}"
)
_HUMPS = re.compile(r"[A-Z][a-z]*|[a-z]+")
_WORD_HUMPS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")  # an acronym is one hump: AWSPortal


def reads_as_word(value: str) -> bool:
    """Whether ``value``, letters (and ``_ . / -``) only, reads as a name or a path: one
    with a separator does, one without when its humps (a capital starts one) average 2.6
    letters or more (getUserName, XMLHttpRequest). Random letters (RIWcpQSroGsfSjln,
    CfvECRBKbAtNp) break into humps of one or two. A name in a namespace (``xs:string``,
    ``ns42:AgencyCodeType``) is judged by its name. Names joined by ``|`` are a pattern's
    or a grammar's alternatives (``vcl_hash|vcl_hit|``, ``UDECIMAL|UNICODE|``), each in one
    case or reading as a name."""
    if "|" in value:
        parts = [part for part in value.split("|") if part]
        return bool(parts) and all(
            _LETTERS.fullmatch(part) is not None
            and (part.isupper() or part.islower() or reads_as_word(part))
            for part in parts
        )
    qualified = _QUALIFIED.fullmatch(value)
    if qualified:  # a name in a namespace: xs:string, clm86330:AgencyCodeType
        value = qualified.group(1)
    if not _LETTERS.fullmatch(value):
        return False
    if not value.rstrip("?").isalpha():
        # A path or a dotted name (prod/api-key-AbCdEf, Foo.BarBaz), unless a part of 10
        # letters or more in both cases breaks into humps (an acronym one: _RSAPublicKey)
        # averaging under 2.6 letters (YXNkZmZmZmZm_HARDcoded: base64 letters, a suffix).
        return not any(
            len(part) >= 10
            and not part.isupper()
            and not part.islower()
            and sum(map(len, humps := _WORD_HUMPS.findall(part))) < 2.6 * len(humps)
            for part in _PARTS.split(value.rstrip("?"))
        )
    humps = _HUMPS.findall(value)
    return not humps or sum(map(len, humps)) >= 2.6 * len(humps)


# A template's variable: a name between the delimiters a build or deploy tool replaces,
# @NAME@ (autoconf, Gradle and Maven filters), @@NAME@@, #{NAME} (Ruby, Octopus), #NAME#,
# %NAME% (Windows, Azure Pipelines' token replacement).
_TEMPLATE = re.compile(r"(@@?|#\{|#|%%?)([A-Za-z_][A-Za-z0-9_.-]*)(@@?|\}|#|%%?)")
_CLOSES = {"@": "@", "@@": "@@", "#{": "}", "#": "#", "%": "%", "%%": "%%"}


def reads_as_template(value: str) -> bool:
    """Whether ``value`` is a template's variable, to be replaced before use: a name in
    capitals (``@DB_PASSWORD@``) or one with a separator (``#{db.password}``) between
    matching delimiters. A word so wrapped (``#hunter#``) may be a password; it is not one."""
    match = _TEMPLATE.fullmatch(value)
    if match is None or _CLOSES[match.group(1)] != match.group(3):
        return False
    name = match.group(2)
    return name.isupper() or (
        any(sep in name for sep in "_.-") and _LETTERS.fullmatch(name) is not None
    )


# A name in snake case, three words or more in one case, a word maybe ending in a short
# number (fips186_with_seed_new, OSSL_PKEY_PARAM_RSA_EXPONENT10): code's, not a secret's.
_SNAKE_NAME = re.compile(
    r"(?:[a-z]{2,}[0-9]{0,4}_){2,}[a-z]{2,}[0-9]{0,4}|(?:[A-Z]{2,}[0-9]{0,4}_){2,}[A-Z]{2,}[0-9]{0,4}"
)


_PATH_WORD = re.compile(r"[a-z]{5,}")


def reads_as_random(value: str) -> bool:
    """Whether ``value`` reads as a generated secret, not as a name, a version or a word:
    14 characters or more, letters and digits mixed within one part of 6 or more (parts
    are split at ``- _ . / + =``), and at least 3.3 bits of entropy per character; or,
    letters only, 20 or more in both cases that do not read as a name (`reads_as_word`)."""
    if len(value) < 14:
        return False
    if _SNAKE_NAME.fullmatch(value):
        return False
    if sum(1 for part in value.split("/") if _PATH_WORD.fullmatch(part)) >= 2:
        # A path, two of its parts words in lower case (identity/cloudfront/E2QWRUHAPOMQZL):
        # base64 seldom holds even one such run between slashes.
        return False
    if _HEX.fullmatch(value):
        # 32 hex digits or more, letters and digits both: a key or a digest, never a name,
        # even when typed as a repeated sample (abcd1234abcd1234...).
        return True
    if value.isalpha() and len(value) >= 20 and not value.isupper() and not value.islower():
        # Letters only: random when the case changes too often for a name (hfCnuVcYOgiRjl).
        return not reads_as_word(value) and _bits(value) >= 3.3
    if not any(
        len(part) >= 6 and not part.isalpha() and not part.isdigit() for part in _PARTS.split(value)
    ):
        return False
    return _bits(value) >= 3.3


_ONE_CASE_HEX = re.compile(r"(?:0x)?(?:[0-9a-f]+|[0-9A-F]+)")
_DIGIT_RUNS = re.compile(r"[0-9]+")


def reads_as_token(value: str) -> bool:
    """Whether ``value`` reads as a token a service issued, not as a name in code: random
    (`reads_as_random`), in three parts at most; where letters and digits mix, not hex
    digits of one case only (a digest, a UUID, a cloud resource's id:
    ami-0abcdef1234567890); and digits in three runs or more, or letters whose humps (an
    acronym is one) average under 3 letters (getEc2DeepInspection, AWSPortal2 and
    import_process8 read as names: one run of digits, words around it)."""
    parts = _PARTS.split(value)
    # Four parts or more are a name's (Jamaika1-master-patch-68264, same-as-rest-of-p11kit);
    # a token's one-letter fragments do not count (...fubPjk3_M-xFP-F).
    if sum(len(part) >= 2 for part in parts) > 3 or not reads_as_random(value):
        return False
    mixed = [part for part in parts if not part.isalpha() and not part.isdigit()]
    if all(_ONE_CASE_HEX.fullmatch(part) for part in mixed):
        return False
    if len(_DIGIT_RUNS.findall(value)) >= 3:
        return True
    humps = _WORD_HUMPS.findall(value)
    return sum(map(len, humps)) < 3 * len(humps)


def _bits(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


_DOT = r"(?:\.#?|::|->)"  # this.#field: a JavaScript private field


# Letters beyond ASCII, as Latin scripts accent them: Latin-1's lower and upper halves
# (less × and ÷), and the Latin Extended and Vietnamese blocks, whose cases alternate
# (both sets hold them: a word is told by its run of letters, not its case there).
_LOWER_ACCENTED = "\u00df-\u00f6\u00f8-\u00ff\u0100-\u024f\u1e00-\u1eff"
_UPPER_ACCENTED = "\u00c0-\u00d6\u00d8-\u00de\u0100-\u024f\u1e00-\u1eff"


def _value(
    stop: str, min_len: int, *, digits_ok: bool, tail: str = "", char: str = "", end: str = ""
) -> str:
    """A value that reads as a secret: not masked already, not a placeholder, not a plain
    word or path (letters and ``_ . / -`` only), not a call or lookup, not a key file.
    ``char`` (default: not a ``stop``) is what it is made of, ``end`` where it ends."""
    ch = f"[^{stop}]"
    # Also where code closes a call, an object, a tag or an if, and an HTML entity (a
    # page's escaped "password: String&lt;/div&gt;").
    # And a URL-encoded "&": a query held inside another URL (q=password%3Dreset%26...).
    end = end or f"(?:[{stop})}}\\]>:<]|&(?:lt|gt|quot|amp|apos|#\\d{{1,5}});|%26|$)"
    rejects = [
        # [REDACTED], <your key>, {{ x }}, (a, b), ~/path; the ">" closing a placeholder
        # that wrapped the label (<:sonarpassword:>).
        r"(?![\[<{(~>])",
        # ${VAR}, $(cmd), $VAR, $VAR/x, $2b$; and a Compose file's "$" escaped for the
        # shell its command runs in: $${VAR}, $$(cmd), $$VAR in capitals (an environment
        # variable's name; $$password may be a password).
        rf"(?!\$(?:[{{(]|\w+(?:{end}|/)|\d[a-z]?\$))"
        rf"(?!\$\$(?:[{{(]|[A-Z_][A-Z0-9_]*(?:{end}|/)))",
        r"(?!&lt;)",  # an escaped <placeholder>: &lt;YOUR_PASSWORD&gt;
        # A CSS id or a page anchor (#add-password), a route's controller#action, an
        # encoding or a digest's name (Buffer.from(key, "base64")).
        rf"(?!#[a-z]+(?:-[a-z]+)+{end})(?![a-z_.-]*/[a-z_./-]*#[a-z_]+{end})",
        # (base64: before a base64 value is the value's own prefix: Laravel's
        # APP_KEY=base64:4StV8P...)
        rf"(?!(?:(?i:base64(?:url)?)(?!:[A-Za-z0-9+/]{{16}})"
        rf"|(?i:utf-?(?:8|16|32)|latin-?1|sha-?(?:1|256|384|512)|md5)){end})",
        rf"(?!%(?:\(|[sdr]\b|\w+%{end}))(?!\*\*\*)(?!!vault)",  # %(x)s, %VAR%, ***, !vault
        # Words in Markdown's emphasis (**Password:** *not set*, _hidden_).
        rf"(?![*_]{{1,2}}[A-Za-z][A-Za-z \t]{{0,40}}[*_]{{1,2}}{end})",
        r"(?!%env\()",  # Symfony's environment lookup: %env(DB_PASSWORD)%, %env(int:PORT)%
        # A link, any scheme (s3://bucket/key, vault://path): where the secret is kept, not
        # the secret; credentials inside a URL are the URL shape's to find.
        r"(?![A-Za-z][A-Za-z0-9+.-]{1,20}://)",
        # Google Secret Manager's name for a secret (projects/123/secrets/db/versions/1):
        # where it is kept, as a link is.
        r"(?!projects/[\w.-]{1,100}/secrets/[\w-]{1,255}(?:/versions/(?:\d{1,10}|latest))?"
        r"(?![\w/-]))",
        # A word in another script (a translated message: "passwd：密碼成功變更"): a value
        # opening with two characters beyond ASCII.
        r"(?![^\x00-\x7f]{2})",
        r"(?!(?i:your[ _-]|example|placeholder|replace|changeme|dummy|redacted))",
        # A whole value that is Octopus's or Ruby's #{name}, or the replace-tokens task's
        # #{name}#, in any case (#{DbPassword}; a literal around it may hold the secret);
        # ${NAME:?message}, the shell's "fail when unset", whose ":" a label's pattern takes
        # for its operator.
        rf"(?!#\{{[A-Za-z_][\w.-]*\}}#?{end})(?!(?<=:)\?)",
        # Words, names, paths, types (string?) in one case or capitalised, their letters
        # accented too (parolă, CONTRASEÑA, Lösenord, MẬT-KHẨU: a translated message's
        # placeholder); camelCase is told from random letters after the match
        # (`reads_as_word`). (A word before ":" and a random run is a service's name on its
        # key: openweather:cd2b1d12...)
        rf"(?![a-z{_LOWER_ACCENTED}_./-]+\??(?!:[A-Za-z0-9]{{16}}){end})"
        rf"(?![A-Z{_UPPER_ACCENTED}_./-]+\??{end})(?![A-Z{_UPPER_ACCENTED}][a-z{_LOWER_ACCENTED}_./-]+\??{end})",
        # Two words or more in capitals and a number, joined by "_": a constant's or a
        # check's name (CKV_SECRET_9, ERROR_CODE_42), where ADMIN_2024 may be a password.
        rf"(?![A-Z]{{2,}}(?:_[A-Z]{{2,}})+_\d{{1,4}}{end})",
        # Calls, lookups: env("KEY"), os.environ[, Azure's @Microsoft.KeyVault(SecretUri=...).
        rf"(?!@?{_NAME}(?:{_DOT}{_NAME})*[(\[])",
        rf"(?!{_PART}(?:{_DOT}{_PART})+!?{end})",  # attributes: cfg.token, env.KEY!
        # Masked previews: sk-...abcd, ****1234, ••••abcd, ●●●●abcd.
        rf"(?!{ch}*(?:\*\*\*|\.\.\.|\u2026|\u2022\u2022|\u25cf\u25cf))",
        rf"(?!{ch}*\.(?:pem|key|p12|pfx|crt|cer|json|txt|env|ya?ml){end})",  # key files
    ]
    if not digits_ok:
        rejects.append(rf"(?!\d{{1,11}}{end})")  # counts and ids: max_token=4096
    return "".join(rejects) + f"{char or ch}{{{min_len},}}{tail}"


# The word password in the languages a page's visitors write in, each starting a word:
# German (two), Dutch, Danish, Norwegian, Swedish, Finnish, Polish, Czech and Slovak,
# Portuguese (two), French, Turkish; then in their own scripts (case folds in ASCII only,
# so a capital is spelled out): Russian and Ukrainian, Bulgarian, Chinese (simplified,
# traditional), Japanese, Korean, Hebrew, Hindi. (Spanish's is in the label below.)
_PASSWORD_WORDS = (
    r"(?<![A-Za-z0-9])(?i:passwort|kennwort|wachtwoord|adgangskode|passord|l(?:\u00f6|o)senord"
    r"|salasana|has(?:\u0142|l)o|heslo|senha|palavra[ -]passe|mot[ _-]de[ _-]passe"
    r"|[\u015e\u015f]ifre)(?![A-Za-z])"
    r"|[\u041f\u043f]\u0430\u0440\u043e\u043b[\u044c\u0430]|\u5bc6\u7801|\u5bc6\u78bc"
    r"|\u30d1\u30b9\u30ef\u30fc\u30c9|\ube44\ubc00\ubc88\ud638|\u05e1\u05d9\u05e1\u05de\u05d4"
    r"|\u092a\u093e\u0938\u0935\u0930\u094d\u0921"
)
_PASSWORD_LABEL = (
    # PASS alone in capitals is a name for one (PASS = '...'); in any case it is a word.
    # PW is one after a separator (db_pw) or alone as a quoted key ("pw": "..."); alone
    # and unquoted it is as often a minifier's name (pw.key="yprjdz").
    # Its misspellings too (PSWD, PSSWRD, PASWORD).
    r"(?i:pa?s{1,2}w(?:o?r)?d|passphrase|passcode|pwd|(?<=[_.-])pass|(?<=[_.-])pw(?![a-z])"
    r"|(?<![A-Za-z0-9_.$-])pw(?=\\?[\"'`])"
    # PWORD, a password's short name, starting a word (not stopword's end).
    r"|(?<![A-Za-z0-9])pword"
    # PASS starting a line, then ": ", a name and more words is a test's status, not a
    # label: a test log's "PASS: gdb.base/break.exp: run to main" (DejaGnu, Automake). A
    # value alone on its line or before a comment is still a password: "PASS: Hunter2".
    r"|(?<![A-Za-z0-9])(?!(?<![^\n])PASS: [^\s]{1,200}[ \t]+[^\s#])(?-i:PASS)(?![A-Za-z])"
    r"|contrase(?:\u00f1|n)a|" + _PASSWORD_WORDS + ")"
)
# What every text holding a password's label holds: the hints of the shapes that use it.
_PASSWORD_HINTS = (
    "pass pwd _pw .pw -pw pw\" pw' pw` pw\\ pswd pswr pswo pssw pasw contrase pword kennwort "
    "wachtwoord adgangskode senha salasana heslo hasło haslo lösenord losenord şifre пароль "
    "парола 密码 密碼 パスワード 비밀번호 סיסמה पासवर्ड"
)
# Whose password or what it is for, between the word and its value in a sentence: "for the
# VPN", "of user 'postgres'", "on bob@host" (one to three words).
_PASSWORD_WHOSE = r"[ \t]+(?i:for|of|on)(?:[ \t]+[\"'`]?[A-Za-z0-9_.@-]{1,40}[\"'`]?){1,3}?"
# Words after a label that make it name something else: secret_name, token_url, key_id.
_NOT_SUFFIX = (
    r"(?i:name|id|ids|type|url|uri|endpoint|path|file|length|size|count|version|ref|arn|env"
    r"|var|hash|hashed|digest|policy|rotation|manager|mgr|handler|store|vault|provider|field|prompt"
    r"|hint|reset|min|max"
    r"|expir\w*|ttl|limit|header|param|format|label|source|location|dir|mode)"
)
# A label may carry a suffix: my_password_super_secure, apikey_myservice.
# Or a camelCase one: mySecretString, passwordFooBar (not tokenUrl, passwordHint); or a
# number: token1, apiKey2.
_SUFFIX = (
    rf"\d{{0,2}}"
    rf"(?:(?:[_.-]|(?<=[a-z0-9])(?=[A-Z]))(?!{_NOT_SUFFIX}(?![a-z0-9]))[A-Za-z0-9]{{1,20}}){{0,2}}"
)
_SECRET_LABEL = (
    r"(?i:(?:client|api|app|access|auth|refresh|id|session|bearer|webhook|consumer|jwt)[_.-]?"
    r"(?:secret|token)|secrete?|token|credentials?"
    r"|creds"
    r"|(?:api|access|private|priv|secret|auth|app|encryption|signing|master|account"
    r"|subscription|client|service|db|database)[_. -]?key)"
)
# Tokens that guard nothing but a page or a form: page_token, nextToken, csrf_token; and
# a secret's digest (hashed_secret, secret_hash) is not the secret.
_NOT_AFTER = (
    # The word starts there: statuspage_token is a status page's API token.
    r"(?<!(?<![A-Za-z])(?i:page|next|sync|csrf|xsrf)[_.-])(?<!(?i:page|next|sync|csrf|xsrf))"
    r"(?<!(?i:hashed|digest)[_.-])(?<!(?i:hashed))"
    r"(?<!(?i:public)[_.-])(?<!(?i:public))(?<!(?i:authenticity)[_.-])"
)
_TOKEN_CHARS = r"[A-Za-z0-9._~+/-]"
# Words before "key" that make it name no secret: a row's, a cache entry's, a public half
# (checked right before the key word, with or without a separator: myPublicKey, sort_key).
_NOT_KEY_WORDS = (
    "public publishable site pub primary foreign sort partition range hash cache idempotency "
    "dedup dedupe row lookup map dict object bucket index shard routing message event column field "
    "group host gpg pgp ssh kms translation i18n locale list item entry"
)
# Each word must start a word or a hump there (sort_key, myPublicKey, CACHEKEY), not end a
# longer one: lemlist's secret, bitbucket_key and sitemap-token are a service's. (In
# capitals, glued, a word's start cannot be told: ROWKEY stays a row's.)
_NOT_KEY = "".join(
    rf"(?<!(?<![A-Za-z])(?i:{word})[_.-]|{word.capitalize()}[_.-])"
    rf"(?<!(?<![A-Za-z])(?i:{word})|{word.capitalize()}|{word.upper()})"
    for word in _NOT_KEY_WORDS.split()
)
# The same words before a bare key, a space between: "publishable key: pk_live_...".
_NOT_BARE_KEY = "".join(rf"(?<!(?<![A-Za-z])(?i:{word})[ \t])" for word in _NOT_KEY_WORDS.split())
# The words that name a credential's kind, one to three of them: SECRET, ACCESS_KEY,
# private token, apikey.
_CRED_WORD = r"(?i:secret|token|api[_-]?key|key|access|private|tkn)"
_CREDS = rf"{_CRED_WORD}(?:[_. -]?{_CRED_WORD}){{0,2}}"
# A whole quoted name that says it holds a credential: API_KEY, X-Api-Key, db-password.
_SIBLING = (
    r"(?![A-Za-z0-9_.-]*(?i:csrf|xsrf|authenticity|page|next|public))"
    rf"[A-Za-z0-9_.-]{{0,30}}?(?:{_PASSWORD_LABEL}|(?i:authorization|api[_-]?key)"
    rf"|{_SECRET_LABEL}){_SUFFIX}"
)
_TOKEN_END = r"(?![A-Za-z0-9+/=._~:-])"
# One-word names a random value is as often given that is not a credential: a digest,
# an id, a version, a place, a state, a payload.
_NOT_SERVICE = (
    "(?i:sha(?:1|256|384|512)?|md5|hash|digest|checksum|crc32|integrity|etag|nonce|salt|iv"
    "|id|uid|uuid|guid|ids|sid|arn|identifier|ref|commit|rev|revision|sig|signature|fingerprint|thumbprint"
    "|serial|version|tag|image|build|release|state|cursor|code|name|title|slug|label|path"
    "|file|url|uri|src|href|host|data|value|content|body|text|message|payload|encoded"
    "|cipher|ciphertext|encrypted|base64|b64|key|user|username|email|account|project|bucket|region"
    "|zone|cluster|namespace|node|container|pod|instance|subnet|vpc|ami|volume|snapshot"
    "|channel|room|video|place|sheet|doc|document|folder|record|item|object|pattern|regex"
    "|example|sample|test|fixture|seed|random|uploaded|created|updated|date|time|timestamp"
    "|pub|pubkey|public|publickey)"
    "(?![A-Za-z0-9])"
)
# Not an attribute chain (self.default_section, win32api.RegOpenKeyEx), maybe closed by a
# block's ":" (if key == self.default_section:): code, where a random shape wants a value.
_NOT_CHAIN = rf"(?!{_PART}(?:\.{_PART})+:?(?![^\s\"'`,;)\]}}>]))"
# An "@" inside a URL's password: another follows, and no host's port or list before it.
_AT_IN_PASSWORD = r"@(?=[^\s/?@\"'<>]*@)(?![^\s/?@\"'<>]*[,:])"
_EMAIL = r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,4}"


def _s(
    name: str,
    family: str,
    hints: str,
    pattern: str,
    multiline: bool = False,
    *,
    random: bool = False,
    next_line: bool = False,
    gate: str = "",
    gate_lines: bool = False,
) -> SecretShape:
    """A shape; ``hints`` is space-separated."""
    return SecretShape(
        name,
        family,
        "(?a)" + pattern,
        tuple(hints.split()),
        multiline,
        random,
        next_line,
        gate,
        gate_lines,
    )


def _l(name: str, hints: str, pattern: str, gate: str = "") -> SecretShape:
    return _s(name, "label", hints, pattern, gate=gate)


def _p(name: str, hints: str, pattern: str, gate: str = "") -> SecretShape:
    return _s(name, "provider", hints, pattern, gate=gate)


# A command that takes a password after -p: a registry's login, MySQL's -p<password>,
# sshpass, PsExec's -u user -p password (Sysinternals' remote runner).
_ARGV_PASSWORD = (
    r"(?P<keep>(?<![A-Za-z0-9])(?:(?:docker|podman|helm|nerdctl|buildah|skopeo|oras)"
    r"(?:[ \t]+registry)?[ \t]+login[ \t][^\n]{0,200}?[ \t]-p[ \t]+[\"']?"
    r"|(?:mysql|mysqldump|mysqladmin|mariadb)[ \t][^\n]{0,200}?[ \t]-p[\"']?"
    r"|sshpass[ \t]+-p[ \t]*[\"']?"
    r"|(?i:psexec)[^\n]{0,200}?[ \t]-u[ \t]*\S+[ \t]+-p[ \t]+[\"']?))"
)
_NOT_A_WORD_PASSWORD = (
    "(?:password|passwd|pass|pwd|secret|token|changeme|example|sample|dummy|none|null"
    "|true|false|test|yourpassword|mypassword)"
)

# Words documentation writes where a value goes: the Jargon File's metasyntactic words
# (foo, bar, ..., xyzzy), abc, xyz, xxx, user.
_STAND_IN_WORD = (
    "(?:foo|bar|baz|qux|quux|corge|grault|garply|waldo|fred|plugh|xyzzy|thud"
    "|abc|xyz|x{3,}|user|username)"
)

# Where an .env or shell line's name starts: the line's start, a compose file's list item,
# a Dockerfile's ENV or ARG, Windows' set or setx, a shell's export; indented, only a name
# in capitals (an indented lower-case name is a keyword argument's).
_ENV_LINE_START = (
    r"(?m:^)(?:[ \t]*-[ \t]+|[ \t]+(?=(?:[A-Za-z]+[ \t]+)?[A-Z][A-Z0-9_]*=))?"
    r"(?:(?:export|ENV|ARG|set|setx)[ \t]+)?"
)
# The rest of a line after a value: spaces and a comment. "$" in multi-line mode, so a
# scan of the whole text and one of its lines agree (plain "$" ends a window, not a line).
_LINE_END = r"(?=[ \t]*(?:#[^\r\n]*)?\r?(?m:$))"
# The same after a value opened by a quote (a group named eq): its closing quote first.
_QUOTED_LINE_END = r"(?=(?(eq)(?P=eq))[ \t]*(?:#[^\r\n]*)?\r?(?m:$))"
# A name a line of an .env file or a shell script gives a password: ending in one
# (adminpwd, DB_PASSWORD, smtp_pass) or one alone (PASS, pw, pword); not a word ending in "pass"
# (bypass, compass) or "pw" (upw).
_ENV_PASSWORD_NAME = (
    r"(?:(?:[A-Za-z][A-Za-z0-9_]{0,40}?)?(?i:passw(?:or)?d|pwd|passphrase)"
    r"|[A-Za-z][A-Za-z0-9]{0,40}_(?i:pass|pw|pword)|(?i:pass|pw|pword))"
)
# One naming a secret, in capitals as an environment's variables are: APP_SECRET,
# GITHUB_TOKEN, STRIPE_API_KEY; not a page's, a form's or a public half's.
_ENV_SECRET_NAME = (
    r"(?![A-Z0-9_]*(?:PUBLIC|PUBLISHABLE|CSRF|XSRF|PAGE|NEXT|SYNC))"
    r"[A-Z][A-Z0-9_]{0,40}?(?:SECRET|TOKEN|(?:API|SECRET|ACCESS|PRIVATE|AUTH|APP|MASTER"
    r"|ENCRYPTION|SIGNING|LICENSE)_?KEY)"
)
# A literal word as a value: letters (a lower-case one at least: a name in capitals is
# a variable's), digits and "_"; not one naming a credential, a placeholder, a state or a
# type (string, SecureString, bool). {min} is its shortest length.
_LITERAL_WORD = (
    r"(?!(?i:[a-z0-9_]*(?:pass|pwd|secret|token|key|change|your|example|sample|dummy|none"
    r"|null|nil|true|false|required|empty|undefined|default|test|xxx|placeholder|value)))"
    r"(?!(?i:(?:secure)?string|str|int|integer|bool|boolean|object|number|bytes|char|text"
    r"|unicode|optional|any|float|double|long|list|dict|array|classvar|final|path|uuid)"
    r"(?![A-Za-z0-9_]))"
    r"(?=[A-Za-z0-9_]{{0,40}}[a-z])[A-Za-z0-9_]{{{min},40}}(?![A-Za-z0-9_])"
)
# A closing tag's name that says its element holds a password or a secret: one ending
# in a password's word (DbPassword, mypassword, user_pwd, clientsecret), or a short one
# (pass, pword) alone, after a separator or a hump, or after an account's word (mypass,
# dbpword); not one ending a longer word (compass, bypass, stopword).
_ELEMENT_PASSWORD = (
    r"(?:[A-Za-z0-9_.:-]{0,40}?(?i:passw(?:or)?d|passphrase|passcode|pwd|secret)"
    r"|(?:[A-Za-z0-9_.:-]{0,40}(?:[_.:-]|(?<=[a-z0-9])(?=[A-Z]))"
    r"|(?i:my|db|user|admin|root|login|ftp|smtp|mail|proxy))?(?i:pass|pword))"
)

# A value shaped as people make a password: letters, then a digit among the digits or signs
# that end it (Winter2024!); or both cases and a digit, 8 to 64 characters (dipPr10Gg!).
_MADE_PASSWORD = (
    r"(?:[A-Za-z][A-Za-z0-9_-]{2,58}[!@#$^&*?+=~]{0,3}[0-9][0-9!@#$^&*?+=~]{0,5}"
    r"|(?=[^\s]{0,63}[A-Z])(?=[^\s]{0,63}[a-z])(?=[^\s]{0,63}[0-9])[A-Za-z0-9!@#$^&*?+=~_-]{8,64})"
)

_LABELS: tuple[SecretShape, ...] = (
    _l(
        "password assignment",
        _PASSWORD_HINTS,
        rf"(?P<keep>(?:{_LEFT}{_PASSWORD_LABEL}|(?i:passw(?:or)?d|passphrase)){_SUFFIX}{_ASSIGN})"
        r"(?!/)" + _value(_STOP, 6, digits_ok=True),
    ),
    _l(
        "password after a space",
        _PASSWORD_HINTS,
        # A password's word, a space and a value shaped as people make a password
        # (``_MADE_PASSWORD``), as a message gives one: "user alice password Winter2024!",
        # "ssh root@host with password toor1234", ending at a space, a sentence's mark or
        # the text's end. Not a word (password protected), a type (varchar2(64):
        # "(" follows), a version (v1.2.3), a flag's name (password --stdin), an address
        # (passwd anonymous@, FTP's anonymous login), a message's escaped line break
        # ("passphrase to%0Aprotect": no "%" in the value).
        rf"(?P<keep>{_LEFT}(?:(?i:passw(?:or)?d|passphrase|pwd)(?![A-Za-z0-9_])|{_PASSWORD_WORDS})"
        r"[ \t]+)"
        rf"(?={_MADE_PASSWORD}(?:[\s,.;:)\]]|$))"
        r"(?=[^\s]{8})" + _value(_STOP, 8, digits_ok=False),
    ),
    _l(
        "short password label",
        # (Not "pw" alone as a hint: random text holds it everywhere.)
        "pw: pw= pass pwd",
        # PW, pass or pwd alone before ":" or "=", as a document or a message gives an
        # account ("ID:master PW:dipPr10Gg!", "98.76.54.32 (pw:IhqSb1Gg)", "user=master,
        # pass=Prl23Db#@"). Alone and unquoted these are as often a minifier's names or a
        # flag (pw:e, pass:true), so only a value shaped as people make a password counts
        # (``_MADE_PASSWORD``).
        r"(?P<keep>(?<![A-Za-z0-9_$.-])(?i:pw(?=[:=])|pass(?:wd|words)?|pwd)"
        r"[ \t]*[:=][ \t]*[\"'`]?)"
        rf"(?={_MADE_PASSWORD}(?:[\s,.;:)\]/\"'`]|$))"
        r"(?=[^\s]{8})" + _value(_STOP, 8, digits_ok=False),
    ),
    _l(
        "password option of a call",
        "curlopt_ convertto-securestring --oauth2-bearer",
        # libcurl's options that carry a secret, set in C (CURLOPT_USERPWD, "user:pass": the
        # password after the user); PowerShell's ConvertTo-SecureString of a literal;
        # curl's --oauth2-bearer.
        r"(?P<keep>(?:(?<![A-Za-z0-9_])CURLOPT_(?:PROXY)?(?:USERPWD|PASSWORD|KEYPASSWD"
        r"|XOAUTH2_BEARER|TLSAUTH_PASSWORD)[ \t]*,[ \t]*L?\\?\"?(?:[A-Za-z0-9_.@-]{1,64}:)?"
        r"|(?i:ConvertTo-SecureString)(?:[ \t]+-(?i:String|AsPlainText|Force))*[ \t]+\\?[\"']?"
        r"|(?<![A-Za-z0-9-])--oauth2-bearer[ \t=]+\\?[\"']?))" + _value(_STOP, 6, digits_ok=True),
    ),
    _s(
        "env file password",
        "word",
        "pass pwd",
        # A .env, shell or INI line: NAME_PASSWORD=word (a name in capitals, or INI's
        # Password=), nothing around the "=", the value alone to the line's end or a
        # comment. There a word is the password itself, not a variable holding it, as in
        # code (password = open_sesame) or YAML (password: db_password), which stay out.
        r"(?P<keep>(?m:^)[ \t]*(?:#[ \t]*)?(?:export[ \t]+)?"
        # Or a capitalised name glued to a password's (SSHpassword=, SmtpPassword=).
        r"(?:[A-Z][A-Z0-9_]{0,40}(?:PASSWORD|PASSWD|_PASS|_PWD)|[A-Z][A-Za-z0-9]{0,40}[Pp]assword)=)"
        r"(?![a-z0-9_]*(?:pass|secret|token|change|your|example|sample|dummy|none|null"
        r"|true|false|required|empty|undefined|default|test))"
        r"(?=[a-z0-9_]{0,40}[a-z])[a-z0-9_]{6,40}(?=[ \t]*(?:[#;][^\r\n]*)?\r?(?m:$))",
        gate=r"(?:PASSWORD|PASSWD|_PASS|_PWD|[Pp]assword)=[a-z0-9_]{6}",
    ),
    _s(
        "env line word password",
        "word",
        "pass pwd pw= pword",
        # The same line holding a name or a word in any case, maybe quoted
        # (DB_PASSWORD=CorrectHorse, pwd=Tr0ubadour, PASS='opensesame'): at the line's
        # very start (a keyword argument is indented: a name in capitals may be), in a
        # compose file's list item (- POSTGRES_PASSWORD=...), after a Dockerfile's or a
        # Windows shell's keyword (ENV, ARG, set). A name in capitals is a variable's
        # (PASSWORD=DB_PASSWORD), a type's word is a type's.
        rf"(?P<keep>{_ENV_LINE_START}{_ENV_PASSWORD_NAME}=(?P<eq>[\"'])?)"
        + _LITERAL_WORD.format(min=6)
        + _QUOTED_LINE_END,
        gate=r"=[\"']?[A-Za-z0-9_]{6,40}[\"']?" + _LINE_END,
    ),
    _s(
        "env line word secret",
        "word",
        "secret token key",
        # An .env line naming a secret in capitals (APP_SECRET=blueberrymuffin,
        # STRIPE_API_KEY=Moonlight): the same reading as a password's, a longer word.
        rf"(?P<keep>{_ENV_LINE_START}{_ENV_SECRET_NAME}=(?P<eq>[\"'])?)"
        + _LITERAL_WORD.format(min=8)
        + _QUOTED_LINE_END,
        gate=r"=[\"']?[A-Za-z0-9_]{8,40}[\"']?" + _LINE_END,
    ),
    _s(
        "env mapping word",
        "word",
        "pass pwd secret token key",
        # A compose file's or a CI file's environment as a mapping: POSTGRES_PASSWORD:
        # correcthorse, APP_SECRET: "blueberrymuffin". A name in capitals, as an
        # environment's, keys it (a translation's or a config's label, password: Passwort,
        # is not one); the value is alone on its line, a word (maybe quoted), as above.
        r"(?P<keep>(?m:^)[ \t]*(?:-[ \t]+)?"
        rf"(?:[A-Z][A-Z0-9_]{{0,40}}(?:PASSWORD|PASSWD|_PASS|_PWD)|(?P<sec>{_ENV_SECRET_NAME}))"
        r":[ \t]+(?P<eq>[\"'])?)(?(sec)(?=[A-Za-z0-9_]{8}))"
        + _LITERAL_WORD.format(min=6)
        + _QUOTED_LINE_END,
        gate=r"[A-Z]:[ \t]+[\"']?[A-Za-z0-9_]{6,40}[\"']?" + _LINE_END,
    ),
    _s(
        "ini file password",
        "word",
        "pass",
        # An INI file's password may have spaces around "=" (SSHpassword = hardcoded): in a
        # text with a [section] line of its own, a line naming a password and holding one
        # lower-case word to its end (or a comment) is the password, as in a .env file.
        # Code writes the same line for a variable (password = default_password), so only
        # under a section (up to 30 lines below its header), and not a word naming a
        # password or a placeholder.
        r"(?P<keep>(?m:^)\[[A-Za-z][A-Za-z0-9_ .:-]{0,60}\][ \t]*\r?\n(?:[^\n]{0,300}\n){0,30}?"
        r"[ \t]*(?:[A-Za-z][A-Za-z0-9]{0,40}[_.-]?)?(?i:password|passwd)"
        r"(?:[_.-][A-Za-z0-9]{1,20})?[ \t]*=[ \t]*)"
        r"(?![a-z0-9_]*(?:pass|pwd|secret|token|change|your|example|sample|dummy|none|null"
        r"|true|false|required|empty|undefined|default|test))"
        r"(?=[a-z0-9_]{0,40}[a-z])[a-z0-9_]{6,40}(?=[ \t]*(?:[#;][^\n]*)?(?:\r?\n|$))",
        multiline=True,
        gate=r"(?m:^)\[[A-Za-z][A-Za-z0-9_ .:-]{0,60}\][ \t]*\r?\n",
    ),
    _s(
        "quoted word password in code",
        "word",
        _PASSWORD_HINTS,
        # In code, a quoted word assigned to or compared with a password is the password:
        # password == 'logmein', pfxPassword = "goodspec". Not after ":" (JSON, YAML and
        # translation files, where a word is a label or a reference), and not a word that
        # names a field, a type, a state or the password itself.
        rf"(?P<keep>{_LEFT}{_PASSWORD_LABEL}{_SUFFIX}(?:\\?[\"'`\]]){{0,2}}[ \t]*"
        r"(?:=>|[!=]==?|:?=)[ \t]*\\?(?P<wq>[\"']))"
        r"(?![a-z0-9_-]*(?:pass|pwd|secret|token|key|hash|field|input|word|user|name|type"
        r"|label|auth|cred|change|your|example|sample|dummy|test|none|null|empty|undefined"
        r"|required|optional|string|hidden|text|default|mask|value|admin|root|guest))"
        r"(?=[a-z0-9_-]{0,40}[a-z]{3})[a-z][a-z0-9_-]{5,40}(?=\\?(?P=wq))",
        gate=r"[=>][ \t]*\\?[\"'][a-z][a-z0-9_-]{5}",
    ),
    _s(
        "quoted word compared with a secret",
        "word",
        "secret",
        # A check of a secret against a quoted word holds the secret: creds.Secret !=
        # "open-sesame". Compared only (an assigned word may be a state or a name), and
        # not a word that names a state, a field or a placeholder.
        rf"(?P<keep>{_LEFT}{_NOT_AFTER}(?i:secret){_SUFFIX}(?:\\?[\"'`\]]){{0,2}}[ \t]*"
        r"[!=]==?[ \t]*\\?(?P<cq>[\"']))"
        r"(?![a-z0-9_-]*(?:pass|pwd|secret|token|key|hash|field|input|word|user|name|type"
        r"|label|auth|cred|change|your|example|sample|dummy|test|none|null|nil|empty"
        r"|undefined|unset|missing|required|optional|string|hidden|text|default|mask|value"
        r"|true|false|enabled|disabled|invalid|valid|expired|revoked|ok|error))"
        r"(?=[a-z0-9_-]{0,40}[a-z]{3})[a-z][a-z0-9_-]{5,40}(?=\\?(?P=cq))",
        gate=r"[!=]=[ \t]*\\?[\"'][a-z][a-z0-9_-]{5}",
    ),
    _l(
        "quoted password",
        _PASSWORD_HINTS,
        # A quoted value may hold what ends an unquoted one: db_pass: 'A,.:-;@*?!'
        rf"(?P<keep>(?:{_LEFT}{_PASSWORD_LABEL}|(?i:passw(?:or)?d|passphrase)){_SUFFIX}"
        # A value never opens with a separator: then the quote closed a label ("Password:",).
        # Inside its quotes a value may hold the other quote characters: '`123QWERasdf', and
        # a backslash that escapes no quote ("`-08iOR~z^\JPBy4r": cut there, the rest of the
        # password stayed in the text).
        rf"{_OPERATOR}(?P<pq>[\"'`]))(?![/,;)\]}}])"
        + _value(
            "\\s\"'`\\\\",
            6,
            digits_ok=True,
            tail="(?=(?P=pq))",
            char="(?:(?!(?P=pq))[^\\s\\\\]|\\\\(?![\\s\"'`]))",
        ),
    ),
    _l(
        "password with spaces",
        _PASSWORD_HINTS,
        # In code, a quoted value assigned with "=" is the value, spaces and all:
        # password = "correct horse battery staple". Not after ":" (YAML, i18n labels).
        rf"(?P<keep>(?:{_LEFT}{_PASSWORD_LABEL}|(?i:passw(?:or)?d|passphrase)){_SUFFIX}"
        r"(?:\[\d{0,4}\])?[ \t]*:?=[ \t]*(?P<q>[\"']))(?=[^\"'\n]{0,80}?[ \t])"
        # Not code between two literals, joining them: "...password=" + password + "...",
        # ';PWD=' . $config['password'] . ';'.
        r"(?![ \t]*(?:[+.&]|\|\|)[ \t]*[A-Za-z_$])"
        + _value("\"'\n\\\\", 6, digits_ok=True, tail="(?=(?P=q))"),
    ),
    _l(
        "secret assignment",
        "secret token key credential",
        rf"(?P<keep>{_LEFT}{_NOT_AFTER}{_SECRET_LABEL}{_SUFFIX}{_ASSIGN})"
        + _value(_STOP + "&", 8, digits_ok=False),
    ),
    _s(
        "quoted secret",
        "label",
        "secret token key credential",
        # As a quoted password, a quoted secret may hold what ends an unquoted value (quotes
        # of the other kinds, ",", ";", "&", a backslash escaping no quote): jwt_secret:
        # "7`D'}/vYR)T;W...". Its label says less than a password's: the value must hold a
        # digit and read as random, and it ends only at its quote (7` is no count), opening
        # with no other quote (a quoted reference: "'%env(X)%'").
        rf"(?P<keep>{_LEFT}{_NOT_AFTER}{_SECRET_LABEL}{_SUFFIX}{_OPERATOR}(?P<sq>[\"'`]))"
        r"(?![/,;)\]}\"'`])(?=(?:(?!(?P=sq))\S){0,200}?\d)"
        # (A value with none of those is the plain shape's: "secret assignment".)
        r"(?=[^\s,;&\\\"'`]{0,200}(?!(?P=sq))[,;&\\\"'`])"
        + _value(
            "\\s\"'`\\\\",
            8,
            digits_ok=False,
            tail="(?=(?P=sq))",
            char="(?:(?!(?P=sq))[^\\s\\\\]|\\\\(?![\\s\"'`]))",
            end="(?P=sq)",
        ),
        random=True,
        # A quote, then a character other than its closing one that ends an unquoted value.
        gate=r"(?P<g>[\"'`])[^\s,;&\\\"'`]{0,200}(?!(?P=g))[,;&\\\"'`]",
    ),
    _l(
        "quoted value after label",
        _PASSWORD_HINTS + " secret token key credential",
        # password "...";  std::string secret("...");  secret.assign("...", 17);
        # #define API_KEY "..."
        rf"(?P<keep>{_LEFT}(?:{_PASSWORD_LABEL}|{_NOT_AFTER}{_SECRET_LABEL}){_SUFFIX}"
        r"(?:[ \t]+|\(|\.assign\()@?[\"'])" + _value("\\s\"'", 6, digits_ok=True, tail="(?=[\"'])"),
        gate=r"[ \t(]@?[\"']",
    ),
    _l(
        "compared with a label",
        _PASSWORD_HINTS + " secret token key credential",
        # if ("..." == password), a check against a literal holds the secret.
        r"(?<=[\"'])"
        + _value("\\s\"'", 6, digits_ok=True)
        + rf"(?=[\"'][ \t]*[!=]={{1,2}}[ \t]*[A-Za-z0-9_.]{{0,30}}?"
        rf"(?:{_PASSWORD_LABEL}|{_SECRET_LABEL}){_SUFFIX}(?![A-Za-z0-9]))",
        gate=r"[\"'][ \t]*[!=]=",
    ),
    _l(
        "authorization header",
        "authorization",
        r"(?P<keep>(?<![A-Za-z0-9])(?i:(?:proxy-)?authorization)(?:\\?[\"'`]){0,2}[ \t]*[:=]"
        r"[ \t]*\\?[\"'`]?(?:(?i:basic|bearer|token|bot|digest|negotiate|ntlm|api-?key|key"
        r"|sso-key|ssws|otp|api-?token|access-?token)[ \t]+"
        # Without a scheme, code that reads the header: headers.get(...), Optional[str].
        rf"|(?!{_NAME}(?:{_DOT}{_NAME})*[(\[])(?!{_NAME}(?:{_DOT}{_NAME})+{_TOKEN_END})))"
        # Not words: "Authorization: required", "Bearer account-b", "Bearer YOUR_TOKEN".
        rf"(?![a-z_.-]+{_TOKEN_END})(?![A-Z_]+{_TOKEN_END})"
        r"[A-Za-z0-9+/=._~:-]{8,}",
    ),
    _l(
        "bearer token",
        "bearer",
        rf"(?P<keep>(?<![A-Za-z0-9])(?i:bearer):?[ \t]+)"
        rf"(?={_TOKEN_CHARS}*\d){_TOKEN_CHARS}{{16,}}=*",
    ),
    _l(
        "credential flag",
        _PASSWORD_HINTS + " token key secret",
        # Words joined by "-" or "_" (--db-password, --api_key, --DB_PASSWORD).
        r"(?P<keep>(?<![A-Za-z0-9-])--?(?:[A-Za-z0-9]{1,20}[-_]){0,2}(?i:password|passwd|pass|pwd"
        r"|token|api[-_]?key|secret|client[-_]secret|access[-_]token|auth[-_]token|private[-_]key)"
        r"(?:[ \t]+|=)[\"']?)" + _value(_STOP, 6, digits_ok=True),
    ),
    _l(
        "credential element",
        _PASSWORD_HINTS + " secret token credential key",
        rf"(?P<keep><[A-Za-z0-9_.:-]*(?:{_PASSWORD_LABEL}|{_SECRET_LABEL})>)"
        # Or a value Jenkins stored encrypted: {AQAAABAAAAAQ...}, {AQAAABAAA value},
        # {svc AQAAABAAA value} (a credential's name may come first); not a name alone in
        # braces opening in lower case, a template's variable (a format string's
        # {password}, {dbPassword}: Jenkins' base64 opens with AQAA).
        r"(?:(?![$%{\[])[^<\s]{4,}"
        r"|\{(?![a-z_][A-Za-z0-9_]*\})"
        r"(?:[A-Za-z0-9_.-]{1,40}[ \t])?[A-Za-z0-9+/=]{8,}(?:[ \t][^<}\n]{4,400})?\})(?=</)",
    ),
    _s(
        "word in a password element",
        "word",
        "pass pwd pword secret",
        # An element closed by a tag naming a password or a secret holding one word:
        # <Password>correcthorse</Password>, <secret id="1"> blueberry </secret>, <admin
        # password> Juniper </mypassword>. XML has no variables, so the word is the value
        # (a key's or a token's element may hold a name: a property list's
        # <key>CFBundleName</key>); not a word naming a credential, a placeholder, a
        # type or a setting's state (<AllowUsersToChangePassword>enabled</...>), and not
        # ${...}, %VAR% or a name in capitals (not words).
        r"(?P<keep><[A-Za-z][^<>\n]{0,100}>[ \t]*)"
        r"(?!(?i:enabled?|disabled?|always|never|optional|allowed|denied|hidden|visible"
        r"|plain(?:text)?|cleartext|hashed|encrypted|masked|mandatory)(?![A-Za-z0-9_]))"
        # Or the password base64-encoded (FileZilla's <Pass encoding="base64">...</Pass>):
        # 16 characters or more, a digit or + or / among them.
        + r"(?:(?=[A-Za-z0-9+/]{0,300}[0-9+/])[A-Za-z0-9+/]{16,300}={0,2}(?![A-Za-z0-9+/=])|"
        + _LITERAL_WORD.format(min=6)
        + ")"
        + rf"(?=[ \t]*</{_ELEMENT_PASSWORD}\d?>)",
        gate=rf"</{_ELEMENT_PASSWORD}\d?>",
    ),
    _l(
        "password in prose",
        _PASSWORD_HINTS + " pin",
        # "my password is Summer2024!", "the wifi passcode was 4471-2290"; in the languages
        # of the label's words: "mein Passwort ist ...", "mon mot de passe est ...", "minha
        # senha é ...", "mitt lösenord är ...", "moje hasło jest ...", "heslo je ...", and
        # with no space in Chinese, Japanese and Korean ("我的密码是...", "パスワードは...",
        # "비밀번호는 ..."), where the value must open with 6 ASCII characters (a rule
        # written in the script, "パスワードは英数字8文字以上", is not one).
        # Whose or what for may come between ("my password for the VPN is ...", "the
        # password of bob was ..."), and then a colon may stand for "is" ("password for
        # root: ...").
        r"(?P<keep>(?:"
        rf"{_LEFT}(?i:{_PASSWORD_LABEL}|pin[ \t]+code)"
        rf"(?:{_PASSWORD_WHOSE}[ \t]*:[ \t]+|(?:{_PASSWORD_WHOSE})?[ \t]+"
        r"(?i:is|was|ist|war|est|es|era|\u00e9|er|\u00e4r|jest|je):?[ \t]+"
        r"(?:(?i:now|still|set[ \t]+to)[ \t]+)?)[\"'`]?"
        r"|(?:\u5bc6\u7801|\u5bc6\u78bc)(?:\u662f|\u4e3a|\u70ba)[ \t]*(?=[!-~]{6})"
        r"|\u30d1\u30b9\u30ef\u30fc\u30c9\u306f[ \t]*(?=[!-~]{6})"
        r"|\ube44\ubc00\ubc88\ud638\ub294[ \t]*(?=[!-~]{6})"
        # A word with accents is a word too: "a senha é obrigatória", "ist ungültig",
        # "est peut-être incorrect".
        rf"))(?![A-Za-z{_UPPER_ACCENTED}{_LOWER_ACCENTED}'-]+[.,;:!?)\"'`]*(?:\s|$))"
        + _value(_STOP, 6, digits_ok=True),
    ),
    _l(
        "secret in prose",
        "secret token key credential",
        # The same sentence giving a secret: "my api key is 8f7d6e5c...", "the client secret
        # was ...". An article or a possessive starts it; not a bare "key" (a keyboard's, a
        # map's: "the key is ctrl+c"); a word, a name or a number is no value (label family).
        # The word before the kind may be joined to it as a name's parts are (my
        # client_secret is, the x-api-key is, your clientSecret is).
        r"(?P<keep>(?<![A-Za-z0-9_])(?i:my|our|the|your|his|her|their|this|its)[ \t]+"
        r"(?:[A-Za-z][A-Za-z-]{0,20}(?:[ \t]+|[_-]|(?<=[a-z])(?=[A-Z])))?"
        r"(?i:(?:api|secret|access|private|license|licence)[ \t_-]?key|secret|token|credentials?)"
        r"[ \t]+(?i:is|was)(?:[ \t]+(?i:now|still|set[ \t]+to))?:?[ \t]+[\"'`]?)"
        + _value(_STOP, 8, digits_ok=False),
    ),
    _s(
        "word password in prose",
        "word",
        "pass pwd",
        # A sentence giving a password as a word: "my password is correcthorse.", "the wifi
        # password: Fluffy", "the password for user 'postgres' is 'admin'". An article or
        # a possessive starts it (a label in code has none); quoted, the word is a literal;
        # unquoted, it must end the sentence or the line and not read as a state, a
        # manner or a participle ("the password is incorrect.", "...is hashed",
        # "...is optional") or name a password or a placeholder.
        r"(?P<keep>(?<![A-Za-z0-9_])(?i:my|our|the|your|his|her|their|this|its)[ \t]+"
        r"(?:[A-Za-z][A-Za-z-]{0,20}[ \t]+)?(?i:password|passwd|passphrase|passcode|pwd)"
        rf"(?:{_PASSWORD_WHOSE})?"
        r"(?:[ \t]+(?i:is|was)(?:[ \t]+(?i:now|still|set[ \t]+to))?:?[ \t]+|[ \t]*:[ \t]+)"
        r"(?P<pw>[\"'`])?)"
        r"(?![A-Za-z0-9_-]*(?i:pass|pwd|secret|your|example|sample|dummy|none|null|nil|empty"
        r"|blank|test|xxx|changeme|placeholder|redacted))"
        # Nor a name in capitals (an environment's variable: MY_APP_PW) or a type's word.
        r"(?![A-Z][A-Z0-9]*_[A-Z0-9_]*(?![A-Za-z0-9_]))"
        r"(?!(?i:(?:secure)?string|str|int|integer|bool|boolean|object|bytes|char|text"
        r"|unicode)(?![A-Za-z0-9_]))"
        r"(?(pw)[A-Za-z][A-Za-z0-9_.-]{3,40}(?=(?P=pw))"
        r"|(?!(?i:[a-z]+(?:ed|en|ing|ly|ble|ive|ous|ful|less|al|ent|ant|ic|ory|ary|ure|ate|ct)"
        r"|wrong|unknown|strong|unique|unset|there|where|always|either|neither|another|enough"
        r"|itself|within|without|before|after|unless|longer|shorter|plain|random|simple"
        r"|complex|hidden|visible|masked|valid|invalid|true|false)(?![A-Za-z0-9_]))"
        r"[A-Za-z][A-Za-z0-9_]{5,40}(?=[.!?,;)]?[ \t]*(?:\r?\n|$)|[.!?,;][ \t]))",
    ),
    _s(
        "netrc password",
        "label",
        "machine",
        # One entry on one line or over several (machine, login and password on their own).
        r"(?P<keep>(?<![A-Za-z0-9])machine[ \t]+\S+\s+login[ \t]+\S+\s+password[ \t]+)"
        + _value(_STOP, 4, digits_ok=True),
        multiline=True,
    ),
    _l(
        "basic auth value",
        "auth",
        # Docker's config.json and similar: "auth": "<base64 of user:password>", "user_auth"
        # (in a string inside a string, its quotes escaped up to three times); a short pair
        # (123:123 is MTIzOjEyMw==) by its base64 padding.
        r"(?P<keep>(?<![A-Za-z0-9_])\\{0,3}[\"'](?:[A-Za-z0-9]{1,20}[_-])?(?i:auth)\\{0,3}[\"']"
        r"[ \t]*:[ \t]*\\{0,3}[\"'])(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])"
        r"(?:[A-Za-z0-9+/]{12,}={0,2}|[A-Za-z0-9+/]{6,11}={1,2})(?=\\{0,3}[\"'])",
    ),
    _l(
        "npmrc auth",
        "_auth",
        # .npmrc's _auth (base64 of user:password), alone or after a registry's path.
        r"(?P<keep>(?<![A-Za-z0-9_])_auth[ \t]*=[ \t]*[\"']?)"
        r"(?=[A-Za-z0-9+/]{0,200}[A-Za-z])[A-Za-z0-9+/]{8,200}={0,2}(?![A-Za-z0-9+/=])",
    ),
    _s(
        "npmrc password",
        # A word family: .npmrc holds no variables, so a value that reads as a word
        # (_password=CorrectHorseBatteryStaple) is the password itself.
        "word",
        "_password",
        # .npmrc's _password (base64, or written plain) after a registry's path or starting
        # a line, "=" with no spaces (code's self._password = ... is an attribute).
        r"(?P<keep>(?:(?<=:)|(?m:^))_password=[\"']?)"
        r"(?=[A-Za-z0-9+/]{0,200}[A-Za-z])[A-Za-z0-9+/]{8,200}={0,2}(?![A-Za-z0-9+/=])",
    ),
    _s(
        "basic auth pair",
        "label",
        "auth networkcredential directoryentry",
        # requests.get(url, auth=("bob", "..."))  HTTPBasicAuth("bob", "...")
        # .NET's NetworkCredential("bob", "...") and DirectoryEntry("LDAP://...", "bob", "...").
        r"(?P<keep>(?:(?<![A-Za-z0-9_])auth[ \t]*=[ \t]*\(|BasicAuth\(|NetworkCredential\("
        r"|DirectoryEntry\([ \t]*\"[^\"\n]{1,200}\"[ \t]*,)\s*(?P<q>[\"'])"
        r"[^\"'\n]{1,64}(?P=q)\s*,\s*[\"'])"
        + _value("\\s\"'", 4, digits_ok=True, tail="(?=[\"'])"),
        multiline=True,  # the arguments may sit on lines of their own
    ),
    _s(
        "terraform variable default",
        "label",
        "variable",
        # variable "okta_api_token" { default = "..." }: the default is the secret.
        rf"(?P<keep>(?<![A-Za-z0-9_])variable[ \t]+\"{_SIBLING}\"[ \t]*\{{"
        r"(?:[^{}\n]{0,200}\n){0,8}?[^{}\n]{0,200}?(?<![A-Za-z0-9_])default[ \t]*=[ \t]*\")"
        + _value("\\s\"'", 6, digits_ok=False, tail='(?=")'),
        multiline=True,
    ),
    _s(
        "vault approle secret id",
        "label",
        "secret_id secret-id secretid",
        # Vault's AppRole logs in with a role id and a secret id, both UUIDs: after a role id
        # (on its line or up to four lines above), a secret id is the credential. Alone, a
        # "secret id" names a secret kept elsewhere (Azure lists its client secrets' ids).
        r"(?P<keep>(?<![A-Za-z0-9])(?i:role[_-]?id)[^\n]{0,200}?(?:\n[^\n]{0,200}?){0,4}?"
        r"(?<![A-Za-z0-9])(?i:secret[_-]?id)(?:\\?[\"'`\]]){0,2}[ \t]*(?::=|=>|[:=])[ \t]*[\"']?)"
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
        r"(?![A-Za-z0-9-])",
        multiline=True,
        gate=r"(?i:role[_-]?id)",
    ),
    _l(
        "sql password",
        "identified password",
        # MySQL's IDENTIFIED [WITH plugin] BY '...', PostgreSQL's WITH PASSWORD '...'; or
        # Oracle's IDENTIFIED BY and a bare name holding a digit (a word is a placeholder).
        r"(?P<keep>(?<![A-Za-z0-9])"
        r"(?i:identified(?:[ \t]+with[ \t]+'?[A-Za-z0-9_]{1,40}'?)?[ \t]+by"
        r"|with[ \t]+(?:encrypted[ \t]+)?password)[ \t]+'?)"
        r"(?:(?<=')(?!%s')(?![${\[])[^'\s]{4,}(?=')"
        r"|(?<=[yY][ \t])(?=[A-Za-z0-9_#$]{0,40}\d)[A-Za-z][A-Za-z0-9_#$]{3,40}(?![A-Za-z0-9_#$]))",
    ),
    _s(
        "url credentials",
        "url",
        "://",
        r"(?P<keep>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/?#@\"'<>]*:)"
        # A "#" or an "@" in a password is not URL-safe, but connection strings carry them
        # anyway: the password ends at the last "@" before the host (user:p@ss1!@host), an
        # "@" before a host and its port (@h1:5432,u:p@h2) being no part of it.
        + _value(
            "\\s/?@\"'<>",
            3,
            digits_ok=True,
            tail="(?=@)",
            char=rf"(?:[^\s/?@\"'<>]|{_AT_IN_PASSWORD})",
            end=rf"(?:[\s/?\"'<>)}}\]>:]|(?!{_AT_IN_PASSWORD})@|$)",
        ),
    ),
    _s(
        "word as a url's password",
        "word",
        "://",
        # A lone word after a URL's user (mongodb://app:contoso@, scott:tiger@,
        # python:HelloSecretScanning@): a connection string holds the password itself,
        # never a name for it. Not a word, in any case, standing for one (user:pass@,
        # user:secret@, abc:xyz@, USERNAME:PASSWORD@), one ending in a word for a password
        # (proxyuser:proxypass@, fred:fredpassword@, gebruiker:wachtwoord@),
        # the user's name again (postgres:postgres@, guest:guest@: a default account, as
        # documentation writes one), nor one before a host named for documentation
        # (RFC 2606: example.com, *.example, *.invalid, *.test; apt:debian@example.org).
        r"(?P<keep>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://(?P<user>[^\s:/?#@\"'<>]*):)"
        rf"(?!(?P=user)@)(?!(?i:{_NOT_A_WORD_PASSWORD}|{_STAND_IN_WORD})@)"
        r"(?![A-Za-z_-]*(?i:pass|passwd|password|pwd|secret|wachtwoord|passwort|kennwort|senha)@)"
        r"(?![A-Za-z_-]+@(?:[A-Za-z0-9-]+\.)*(?:example\.(?:com|org|net)|example|invalid|test)"
        r"(?![A-Za-z0-9.-]))"
        r"[A-Za-z][A-Za-z_-]{2,40}(?=@)",
        # Most URLs hold no password: a word between ":" and "@" is looked for first.
        gate=r":[A-Za-z][A-Za-z_-]{2,40}@",
    ),
    _s(
        "sibling label",
        "label",
        "value",
        # {"name": "API_KEY", "value": "..."}, - name: DB_PASSWORD / value: "...",
        # <add key="ApiSecret" value="..." />, Postman's {"key": "Authorization", ...}
        rf"(?P<keep>(?<![A-Za-z0-9_])[\"']?(?i:name|key)[\"']?[ \t]*[:=][ \t]*[\"']?"
        rf"{_SIBLING}[\"']?[ \t]*,?[ \t]*(?:\r?\n[ \t-]*)?"
        r"[\"']?(?i:value)[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?i:bearer|basic|token)[ \t]+)?)"
        + _value(_STOP, 6, digits_ok=False),
        multiline=True,
    ),
    _s(
        "xml key and value",
        "label",
        "<key>",
        # A key/value entry: a property list's <key>Password</key><string>...</string>,
        # a config's <entry><key>db.password</key><value>...</value>, the value on the same
        # line or the next ones.
        rf"(?P<keep><(?i:key)>[ \t]*{_SIBLING}[ \t]*</(?i:key)>[ \t\r\n]{{0,80}}"
        r"<(?i:value|string)>[ \t]*)" + _value("\\s<", 4, digits_ok=False),
        multiline=True,
        gate=r"(?i:</key>)",
    ),
    _l(
        "label and value pair",
        _PASSWORD_HINTS + " secret token key credential auth",
        # [["X-Api-Key", "..."]], ("Authorization", "Bearer ..."),
        # System.setProperty("DISCORD_TOKEN", "..."), put("api_key", "...")
        rf"(?P<keep>(?P<q>[\"']){_SIBLING}(?P=q)[ \t]*,[ \t]*[\"']"
        r"(?:(?i:bearer|basic|token)[ \t]+)?)" + _value("\\s\"'", 6, digits_ok=False),
        gate=r"[\"'][ \t]*,[ \t]*[\"']",
    ),
    _l(
        "wordpress key or salt",
        "define",
        # wp-config.php's eight keys and salts, the secrets WordPress signs its cookies
        # with: define( 'AUTH_KEY', '...' ). A generated one holds any printable character,
        # spaces too; the sample config's placeholder ("put your unique phrase here") is
        # words alone, so the value must hold something else.
        r"(?P<keep>(?<![A-Za-z0-9_])define\([ \t]*(?P<wq>[\"'])(?:AUTH|SECURE_AUTH|LOGGED_IN|NONCE)"
        r"_(?:KEY|SALT)(?P=wq)[ \t]*,[ \t]*(?P<wv>[\"']))"
        r"(?=[^\"'\n]{0,200}[^A-Za-z \t\"'\n])(?:(?!(?P=wv))[^\n]){16,200}(?=(?P=wv)[ \t]*\))",
    ),
    _l(
        "password in argv",
        "docker podman helm login mysql mariadb sshpass psexec",
        _ARGV_PASSWORD + _value(_STOP, 4, digits_ok=True),
    ),
    _s(
        "word password in argv",
        "word",
        "docker podman helm login mysql mariadb sshpass psexec",
        # After -p a lone word is the password itself (psexec ... -u admin -p braksha),
        # not a variable holding it; not one that names a password or a placeholder.
        _ARGV_PASSWORD + rf"(?!{_NOT_A_WORD_PASSWORD}(?![a-z0-9_]))"
        r"[a-z][a-z0-9_]{3,40}(?![^\s\"'`;|&)])",
    ),
    _s(
        "url query password",
        "word",
        "pass pwd",
        # A password in a URL's query (jdbc:mysql://db/app?user=admin&userpass=hardcoded):
        # a literal, so a word there is the password itself. Not one that names a password
        # or a placeholder, nor a template's {name} or %s (not a word). A short "pass" or
        # "pwd" starts the name, follows a "_" or an account's word (userpass, dbpwd), never
        # ends another word (compass=, bypass=).
        r"(?P<keep>[?&;](?:[A-Za-z0-9_]{0,20}(?i:password|passwd)|(?:[A-Za-z0-9]{0,20}_)?"
        r"(?i:pass|pwd)|(?i:user|db|admin|root|login|my|ftp|smtp|mail|proxy)(?i:pass|pwd))=)"
        r"(?![a-z0-9_]*(?:pass|pwd|secret|token|change|your|example|sample|dummy|none|null"
        r"|true|false|required|empty|undefined|default|test))"
        r"(?=[a-z0-9_]{0,40}[a-z])[a-z][a-z0-9_]{5,40}(?=[&#;\s\"'<)]|$)",
        gate=r"[?&;][A-Za-z0-9_]{0,24}(?i:pass|pwd)[A-Za-z]{0,4}=[a-z]",
    ),
    _s(
        "connection string password",
        "word",
        "password pwd",
        # A connection string's Password=word; (ADO.NET, ODBC): the word is the password.
        # Not one that names a password or a placeholder (Password=myPassword;).
        r"(?P<keep>(?:(?<=[;\"])|(?m:^))[ \t]*(?i:password|pwd)[ \t]*=[ \t]*)"
        r"(?![A-Za-z0-9_]*(?i:pass|pwd|secret|your|example|sample|dummy|change|none|null"
        r"|empty|test))"
        r"[A-Za-z][A-Za-z0-9_]{3,40}(?=[ \t]*;)",
        gate=r"(?i:password|pwd)[ \t]*=[ \t]*[A-Za-z][A-Za-z0-9_]{3,40}[ \t]*;",
    ),
    _s(
        "credential element block",
        "label",
        _PASSWORD_HINTS + " secret token credential key",
        # <EtsyToken>\n    value\n</EtsyToken>
        rf"(?P<keep><[A-Za-z0-9_.:-]*(?:{_PASSWORD_LABEL}|{_SECRET_LABEL})>[ \t]*\r?\n[ \t]*)"
        r"(?![$%{\[])[^<\s]{8,}(?=\s*</)",
        multiline=True,
    ),
    _s(
        "curl user credentials",
        "url",
        "curl",
        # Options may continue on the next lines ("\\" at a line's end). The password may
        # be quoted apart from the user ("user":"pass"), set in braces ({pass}) or be
        # letters only when their case is mixed; a key given as the user with an empty
        # password (-u "KEY:") is the credential itself.
        r"(?P<keep>(?<![A-Za-z0-9])curl(?:[ \t](?:[^\n\\]|\\\r?\n|\\(?!\r?\n)){0,800}?)?[ \t]"
        r"(?:-u|--user)(?:[ \t]+|=)(?:(?P<user>[\"']?[^\s:\"']+[\"']?:)[\"']?\{?|[\"']))"
        r"(?(user)(?:(?=[A-Za-z]*[A-Z])(?=[A-Za-z]*[a-z])[A-Za-z]{10,}(?![^\s\"'}])|"
        + _value(_STOP + "{}", 4, digits_ok=True)
        + r")|(?=[^\s:\"'{}]*\d)(?=[^\s:\"'{}]*[A-Za-z])[^\s:\"'{}]{8,}(?=:[\"']?(?:\s|$)))",
        multiline=True,
    ),
    _s(
        "secret on the next line",
        "label",
        "secret token key credential pass pwd",
        # A value on the line below its label: a long Java constant's "\n    = ..." or
        # "=\n    ...", or the
        # default after an environment lookup: process.env.ACCOUNT_KEY ||\n "...",
        # ENV["API_TOKEN"] ?? "...", os.environ.get("PASSWORD") or "...".
        rf"(?P<keep>{_LEFT}{_NOT_AFTER}(?:{_SECRET_LABEL}|(?i:passw(?:or)?d|passphrase))"
        rf"{_SUFFIX}(?:\\?[\"'`]?[\])])?"
        r"(?:[ \t]*\r?\n[ \t]*=|[ \t]*=(?=[ \t]*\r?\n)"
        r"|[ \t]*(?:\|\||\?\?|\?:|(?<![A-Za-z0-9])or(?![A-Za-z0-9])))"
        r"[ \t]*(?:\r?\n[ \t]*)?[\"'`])" + _value("\\s\"'`", 8, digits_ok=False, tail="(?=[\"'`])"),
        next_line=True,
        gate=r"\n[ \t]*=|=[ \t]*\r?\n|\|\||\?\?|\?:|(?<![A-Za-z0-9])or(?![A-Za-z0-9])",
    ),
    _s(
        "password below a sentence",
        "label",
        "pass",
        # A password printed on a line of its own below the sentence that announces it
        # ("Please use the following password to proceed to installation:", a blank line,
        # then the value, as Jenkins' setup prints it): a value alone on its line that reads
        # as random (a word, a name or code there reads as none). Not a password's hash
        # ("Password hash:", or a crypt string: $2b$12$...).
        rf"(?P<keep>{_LEFT}(?i:password|passphrase|passcode)(?![^\n:]{{0,80}}(?i:hash|digest))"
        r"[^\n:]{0,80}:[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*)(?!\$)"
        r"[A-Za-z0-9+/=_.~!@#$%^&*-]{14,100}(?=[ \t]*(?:\r?\n|$))",
        multiline=True,
        random=True,
        gate=r":[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*[A-Za-z0-9+/=_.~!@#$%^&*-]{14}",
    ),
    _s(
        "yaml secret on the next line",
        "label",
        _PASSWORD_HINTS + " secret token key credential",
        # The value alone on the line below its label, or a block scalar's first line;
        # alone, so a nested mapping (secret:\n  name: app) is not taken for one.
        rf"(?P<keep>{_LEFT}{_NOT_AFTER}(?:{_SECRET_LABEL}|{_PASSWORD_LABEL}){_SUFFIX}"
        r"[\"']?:[ \t]*(?:[|>][-+]?[ \t]*)?\r?\n[ \t]+(?:-[ \t]+)?[\"']?)"
        + _value("\\s\"'`", 8, digits_ok=False, tail="(?=[\"']?[ \t]*(?:\r?\n|$))"),
        next_line=True,
        gate=r":[ \t]*(?:[|>][-+]?[ \t]*)?\r?\n[ \t]",
    ),
    _s(
        "random value after a key name",
        "label",
        "key login access PAT",
        # HEROKU_KEY = "...", SONAR_LOGIN := "...", sumologic.accessId = "...",
        # CircleCI_PAT = "...": a name that ends in key, login, access id or a personal
        # access token's PAT (a number may follow: sumoKey1), and a value that reads as
        # random. Not keys that name a row, a cache entry or a public half.
        # (The key's word is looked for first: most positions fail there, before the
        # look-behinds.)
        rf"(?P<keep>{_LEFT}[A-Za-z0-9]{{1,30}}(?:[_.-]|(?<=[a-z0-9])(?=[A-Z]))"
        rf"(?=[A-Za-z]?(?i:key)|(?i:login|access)|PAT){_NOT_KEY}"
        # A letter may abbreviate the key's kind after a separator: DUO_SKEY, duo_ikey.
        rf"(?:(?:(?<=[_.-])[A-Za-z])?(?i:key)\d{{0,2}}|(?i:login)\d{{0,2}}"
        rf"|(?P<id>(?i:access[_.-]?id))|PAT)(?![A-Za-z0-9]){_ASSIGN})"
        # An access id is not a UUID (report_access_id: e8e4df51-...).
        r"(?(id)(?![0-9a-fA-F]{8}-[0-9a-fA-F]{4}-))"
        # Nor an attribute chain, code's value or type: private_key: ed25519.Ed25519PrivateKey.
        + _NOT_CHAIN
        # Up to 1,000: some services' tokens are a JWT's length (formio_key = eyJ...).
        # Possessive: a shorter run ends before a value's character, never where a value
        # may end, so giving characters back cannot help (and costs a run's length each).
        + r"[A-Za-z0-9+/=_.-]{14,1000}+(?![^\s\"'`,;)\]}>])",
        random=True,
    ),
    _s(
        "random value in a key's element",
        "label",
        "key login",
        # <ConsumerKey>...</ConsumerKey>, <sonar.login>...: an element named as the shape
        # above names a key (its word starting a word or a hump, not a row's, a cache
        # entry's or a public half's), holding a value that reads as random.
        r"(?P<keep><[A-Za-z][A-Za-z0-9]{0,30}(?:[_.:-]|(?<=[a-z0-9])(?=[A-Z]))"
        rf"(?=[A-Za-z]?(?i:key)|(?i:login)){_NOT_KEY}"
        r"(?:(?:(?<=[_.:-])[A-Za-z])?(?i:key)|(?i:login))\d{0,2}>)"
        r"[A-Za-z0-9+/=_.-]{14,1000}+(?=</)",
        random=True,
        gate=r"(?i:key|login)\d{0,2}>",
    ),
    _s(
        "random value after a credential word",
        "label",
        "secret token key access private tkn",
        # A credential's kind, then its value past a space or a joining character, no
        # operator: acme SECRET ..., acmeACCESS_KEY ..., acme-private-key-..., PRIVATE
        # TOKEN .... Such a word says little: the value must read as random, 16 or more.
        # The word is looked for first: most positions fail there, before the look-behinds.
        rf"(?P<keep>(?={_CRED_WORD}){_LEFT}{_NOT_AFTER}{_NOT_KEY}{_NOT_BARE_KEY}{_CREDS}"
        r"(?:[ \t]+|[_.-])[\"'`]?)"
        # "=" only as base64's padding: key=... is an assignment, the next shapes' to judge.
        r"[A-Za-z0-9+/_.-]{16,200}={0,2}(?![^\s\"'`,;)\]}>])",
        random=True,
    ),
    _s(
        "random value after a name's credential kind",
        "label",
        "secret token access private",
        # A name ending in a credential's kind, then an operator and a random value:
        # acmeSECRET=..., acme_private: ..., acmeACCESS_TOKEN=.... Not a page's or a
        # form's token, not a digest (hashed_secret), not an attribute chain or a masked
        # preview.
        r"(?P<keep>(?=(?i:secret|token|access|private))"
        r"(?:(?<=[A-Za-z0-9][_.-])|(?<=[a-z0-9])(?=[A-Z]))"
        rf"{_NOT_AFTER}(?i:secret|token|access|private)(?:[_.-]?(?i:key|token))?\d{{0,2}}"
        rf"(?![A-Za-z0-9]){_ASSIGN})"
        r"(?![A-Za-z0-9+/=_.-]{0,200}\.\.\.)"
        rf"(?!{_PART}(?:\.{_PART})+(?![^\s\"'`,;)\]}}>]))"
        r"[A-Za-z0-9+/=_.-]{14,200}(?![^\s\"'`,;)\]}>])",
        random=True,
    ),
    _s(
        "random value after a name",
        "token",
        "' \"",
        # A service's name, then its key quoted: instamojo 'ZrGOAl9jlTlAKxw4hXZX...'. A
        # name says little: the value must be 16 to 80 letters and digits (a digit; both
        # cases, "_" and "-" then allowed, or one case with a letter past f: not hex, not
        # base64 with + / =) and read as a token, not as a name in code or a changelog
        # (function '_XlcAddGB18030LocaleConverters', branch 'Jamaika1-master-patch-68264').
        r"(?P<keep>(?<![A-Za-z0-9_.$/-])[a-z][a-z0-9]{2,29}[ \t]+(?P<q>[\"']))"
        r"(?=[A-Za-z0-9_-]{0,79}\d)"
        r"(?:(?=[A-Za-z0-9_-]{0,79}[A-Z])(?=[A-Za-z0-9_-]{0,79}[a-z])[A-Za-z0-9_-]{16,80}"
        # In one case, a letter past f: not hex (a digest, a UUID).
        r"|(?=[a-z0-9]{0,79}[g-z])[a-z0-9]{16,80}|(?=[A-Z0-9]{0,79}[G-Z])[A-Z0-9]{16,80})"
        r"(?=(?P=q))",
        random=True,
        gate=r"[a-z][ \t]+[\"'][A-Za-z0-9_-]{16}",
    ),
    _s(
        "token after a service's name",
        "token",
        "= :",
        # A service's name alone, an operator, and the token it issued: STRIPE=...,
        # sourcegraph: 6d2F..., owm = '3k14...', scraping_bee = '...'. One word or two
        # joined by "_", in one case (or one capitalised word); not a word that names a
        # digest, an id, a version or a place (sha:, nonce=, etag:, image:), nor one that
        # makes a key or a token name no secret (cache_skey, page_token). Such a name says
        # little: the value must read as a token (`reads_as_token`), 20 to 100 letters,
        # digits, "_" and "-". Not a URL's parameter, an ARN's part or base64 of JSON
        # (eyJ: a JWT's to judge).
        # (The shape first: the word lists are tried only where it holds.)
        r"(?P<keep>(?<![\w.$/@:;&?#=-])"
        r"(?=[A-Za-z][A-Za-z0-9_]{2,60}[\"']?[ \t]*:?[:=][ \t]*[\"']?[A-Za-z0-9_-]{20})"
        rf"(?!(?:[A-Za-z0-9]+_)?{_NOT_SERVICE})"
        rf"(?!(?i:{_NOT_KEY_WORDS.replace(' ', '|')}|page|next|sync|csrf|xsrf|hashed)_)"
        r"(?:[a-z][a-z0-9]{2,29}(?:_[a-z][a-z0-9]{1,29})?|[A-Z][a-z0-9]{2,29}"
        r"|[A-Z][A-Z0-9]{2,29}(?:_[A-Z][A-Z0-9]{1,29})?)[\"']?"
        r"[ \t]*(?::=|[:=])[ \t]*(?P<sq>[\"'])?)(?!eyJ)"
        r"[A-Za-z0-9_-]{20,100}(?(sq)(?=(?P=sq))|(?![^\s,;)\]}>]))",
        random=True,
        gate=r"[:=][ \t]*[\"']?[A-Za-z0-9_-]{20}",  # the operator first: a fast search
        gate_lines=True,
    ),
    _s(
        "secret beside a login",
        "label",
        "@",
        # A credential pair: a random value and the address it logs in as, either way
        # round (cloze: 1a2b... / dev@example.com, dev@example.com / 9aF...), the address
        # maybe labelled (acme_email = dev@...).
        rf"(?:(?<![^\s:=])|(?P<keep>{_EMAIL}[ \t]*/[ \t]*(?:\w{{1,30}}[ \t]*[:=][ \t]*)?))"
        rf"(?![\w.%+-]*@)(?![A-Za-z]{{2,10}}://)[^\s\"'`]{{14,80}}"
        rf"(?(keep)(?![^\s\"'`])|(?=[ \t]*/[ \t]+(?:\w{{1,30}}[ \t]*[:=][ \t]*)?{_EMAIL}))",
        random=True,
        gate=r"/[ \t]",
    ),
    _s(
        "random value after key",
        "label",
        "key",
        # A bare key: [DEBUG] Using Key=..., ?key=..., key: "...". A key is a checksum or
        # an id as often as a credential: the value must read as random, run 20 or more,
        # and hold a letter past f (not a digest or a UUID).
        rf"(?P<keep>(?<![A-Za-z0-9_.$-]){_NOT_BARE_KEY}(?i:key)\d{{0,2}}{_ASSIGN})"
        + _NOT_CHAIN
        + r"(?=[A-Za-z0-9+/=_.:-]{0,400}[g-zG-Z])[A-Za-z0-9+/=_.:-]{20,400}(?![^\s\"'`,;)\]}>&])",
        random=True,
    ),
)

# Provider formats: a distinctive prefix, then the body the provider issues. A token
# must not be glued to a longer word on the left (``task-...`` is not ``sk-...``).
# It may start after an escape, a JSON string's or a URL's (above). (A terminal's colour
# codes are scanned as spaces: see the redactor.)


def _start(glue: str) -> str:
    """A value's left edge: not after one of ``glue`` (a character class's contents), or
    after an escape."""
    return rf"(?:(?<![{glue}])|{_AFTER_ESCAPE})"


# A _ or - (or two) that opens a word may wrap a token as Markdown's emphasis does
# (_ghp_..._, __sk-...__); glued to a word (task-sk-..., ghp_..._test) a token is not one.
_L = (
    rf"(?:{_start('A-Za-z0-9_-')}"
    r"|(?<=(?<![A-Za-z0-9_-])[_-])|(?<=(?<![A-Za-z0-9_-])[_-]{2}))"
)
_R = r"(?![A-Za-z0-9]|[_-]{1,64}[A-Za-z0-9])"

_PROVIDERS: tuple[SecretShape, ...] = (
    _p("anthropic key", "sk-ant-", rf"{_L}sk-ant-[A-Za-z0-9_-]{{16,}}"),
    _p(
        "openai-style key",
        "sk-",
        rf"{_L}sk-(?:proj|svcacct|admin|or-v1)-[A-Za-z0-9_-]{{20,}}"
        # A bare sk- key is one run of letters and digits: kebab-case words are not keys.
        rf"|{_L}sk-(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{{20,}}{_R}"
        # Any sk- key holding T3BlbkFJ ("OpenAI" in base64), whatever its middle part.
        rf"|{_L}sk-[A-Za-z0-9_-]{{1,200}}?T3BlbkFJ[A-Za-z0-9_-]{{8,}}",
    ),
    # Maven's master password (settings-security.xml), base64 in braces; the "\\}" is a
    # literal brace escaped, as Maven's own guide writes it.
    _p(
        "maven master password",
        "<master>",
        r"(?P<keep><master>)\{[A-Za-z0-9+/=]{20,200}\\?\}(?=</master>)",
    ),
    _p("google api key", "AIza", rf"{_L}AIza[0-9A-Za-z_-]{{33,40}}{_R}"),
    _p("google oauth token", "ya29.", rf"{_L}ya29\.[0-9A-Za-z_.-]{{20,}}"),
    _p("google client secret", "GOCSPX-", rf"{_L}GOCSPX-[0-9A-Za-z_-]{{24,}}"),
    _p(
        "github token",
        "ghp_ gho_ ghu_ ghs_ ghr_ github_pat_",
        rf"{_L}gh[pousr]_[A-Za-z0-9]{{36,251}}{_R}|{_L}github_pat_[A-Za-z0-9_]{{22,251}}"
        # A fine-grained token's whole format is unmistakable even glued to a word.
        r"|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}(?![A-Za-z0-9_])"
        # An app's installation token in its newer form: the installation's number, a JWT.
        rf"|{_L}ghs_\d{{1,20}}_eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]{{8,}}",
    ),
    _p(
        "gitlab token",
        "glpat- gldt- glrt- glrtr- glptt- glcbt- glft- glimt- glagent- gloas- glsoat- glffct- "
        "GR1348941",
        rf"{_L}gl(?:pat|dt|rtr?|ptt|cbt|ft|imt|agent|oas|soat|ffct)-[0-9A-Za-z_.-]{{20,}}"
        rf"|{_L}GR1348941[0-9A-Za-z_-]{{20,}}",
    ),
    _p(
        "aws access key id",
        "AKIA ASIA ABIA ACCA A3T",
        rf"{_start('A-Za-z0-9')}"
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _p(
        "slack token",
        "xox xapp-",
        # A workspace's, a refresh or a config token may be short (xoxa-2-q4w6ub9vt0vg); a
        # bot's, a user's or an app's is a number and 24 characters or more, where
        # xoxb-12345-abcd234 is a sample.
        rf"{_L}xox[are]-(?=[0-9A-Za-z-]*\d)[0-9A-Za-z-]{{10,}}"
        rf"|{_L}xox[bpos]-(?=[0-9A-Za-z-]*\d)[0-9A-Za-z-]{{20,}}"
        rf"|{_L}xapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]+",
    ),
    _p(
        "chat webhook",
        "hooks.slack.com discord webhook.office.com outlook.office hooks.zapier.com "
        ".tines.com/webhook/",
        r"(?P<keep>hooks\.slack\.com/(?:services|workflows|triggers)/"
        r"|discord(?:app)?\.com/api/webhooks/\d{5,}/|webhook\.office\.com/webhookb2/"
        r"|outlook\.office(?:365)?\.com/webhook/"
        r"|hooks\.zapier\.com/hooks/catch/|\.tines\.com/webhook/)"
        # A Zapier hook's path is short: an account's number and a hook id of about 7
        # (catch/2536582/o3mbtpo/), or the hook id alone.
        r"(?:[A-Za-z0-9_/+@.-]{20,}|(?<=/catch/)(?:\d{4,12}/[A-Za-z0-9]{5,40}"
        r"|(?=[A-Za-z]{0,40}\d)(?=[0-9]{0,40}[A-Za-z])[A-Za-z0-9]{12,40})(?![A-Za-z0-9]))",
    ),
    _p(
        "stripe key",
        "k_live_ k_test_ k_prod_ whsec_",
        rf"{_L}(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{{10,}}|{_L}whsec_[A-Za-z0-9]{{24,}}",
    ),
    _p("npm token", "npm_", rf"{_L}npm_[A-Za-z0-9]{{36}}{_R}"),
    _p("pypi token", "pypi-AgEIcHlwaS5vcmc", rf"{_L}pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{{50,}}"),
    _p(
        "twilio api key",
        "SK",
        # SK and 32 hex digits, or 32 letters and digits with both cases and a digit.
        # Not a run inside base64 (a key or a certificate body).
        rf"{_start('A-Za-z0-9+/')}"
        r"SK(?:[0-9a-fA-F]{32}|(?=[A-Za-z0-9]{0,31}\d)(?=[A-Z0-9]{0,31}[a-z])"
        r"[0-9a-zA-Z]{32})(?![A-Za-z0-9+/=])",
    ),
    _p("sendgrid key", "SG.", rf"{_L}SG\.[A-Za-z0-9_-]{{20,24}}\.[A-Za-z0-9_-]{{39,50}}"),
    _p(
        "hugging face token",
        "hf_ api_org_",
        rf"{_L}hf_(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{{30,40}}{_R}|{_L}api_org_[A-Za-z]{{34}}{_R}",
    ),
    _p(
        "ai provider key",
        "pplx- gsk_ xai- r8_",
        rf"{_L}(?:pplx-[A-Za-z0-9]{{48}}|gsk_[A-Za-z0-9]{{52}}|xai-[A-Za-z0-9]{{80}}"
        rf"|r8_[A-Za-z0-9]{{37}}){_R}",
    ),
    _p(
        "cloud platform token",
        "doo_v1_ dop_v1_ dor_v1_ dapi sbp_ pul- hvs. hvb. hvr. HRKU- LTAI AKCp atlasv1 dp. "
        "pscale_ dt0c01. AZDO eyJrIjoi sl.",
        rf"{_L}(?:do[opr]_v1_[a-f0-9]{{64}}|dapi[a-f0-9]{{32}}(?:-\d)?|sbp_(?:v0_)?[a-f0-9]{{40}}"
        rf"|pul-[a-f0-9]{{40}}|hv[sbr]\.[A-Za-z0-9_-]{{24,}}|HRKU-(?:[0-9A-Za-z_-]{{60}}|[0-9a-f]{{8}}(?:-[0-9a-f]{{4}}){{3}}-[0-9a-f]{{12}})"
        rf"|LTAI[A-Za-z0-9]{{20}}|AKCp[A-Za-z0-9]{{69}}"
        rf"|[A-Za-z0-9]{{14}}\.atlasv1\.[A-Za-z0-9_=-]{{60,70}}"
        rf"|dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_-]{{2,35}}\.)?[A-Za-z0-9]{{40,}}"
        rf"|pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{{32,64}}"
        # Azure DevOps personal access tokens: 84 characters, AZDO at the 77th.
        rf"|(?=[A-Za-z0-9]{{0,75}}\d)[A-Za-z0-9]{{76}}AZDO[A-Za-z0-9]{{4}}"
        # Grafana API keys: base64 of {{"k":"...; Dropbox short-lived tokens.
        rf"|eyJrIjoi[A-Za-z0-9+/]{{40,}}={{0,2}}|sl\.[A-Za-z0-9_-]{{130,160}}"
        rf"|dt0c01\.[A-Za-z0-9]{{24}}\.[A-Za-z0-9]{{64}}){_R}",
    ),
    _p(
        "saas api token",
        "shp ATATT3 lin_api_ ntn_ secret_ PMAK- glc_ glsa_ sntry sgp_ rubygems_ sq0 EAA ops_eyJ "
        "sk.eyJ",
        rf"{_L}(?:shp(?:at|ca|pa|ss)_(?:[a-fA-F0-9]{{32}}|(?=[A-Za-z0-9]{{0,39}}\d)[A-Za-z0-9]{{32,40}})|ATATT3[A-Za-z0-9_=-]{{150,}}"
        rf"|lin_api_[A-Za-z0-9]{{40}}|ntn_\d{{11}}[A-Za-z0-9]{{35}}"
        rf"|secret_(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{{43}}|PMAK-[a-f0-9]{{24}}-[a-f0-9]{{34}}"
        rf"|glc_[A-Za-z0-9+/]{{32,}}={{0,2}}|glsa_[A-Za-z0-9]{{32}}_[A-Fa-f0-9]{{8}}"
        rf"|sntry[us]_[A-Za-z0-9+/=_]{{40,}}|sgp_(?:local_|[a-fA-F0-9]{{16}}_)?[a-fA-F0-9]{{40}}"
        rf"|rubygems_[a-f0-9]{{48}}|sq0(?:atp|csp)-[0-9A-Za-z_-]{{22,}}"
        # (Facebook's EAA tokens not inside base64: an inline image's data holds such runs.)
        rf"|(?<![+/])EAA[CM][A-Za-z0-9]{{100,}}|ops_eyJ[A-Za-z0-9+/_-]{{100,}}={{0,3}}"
        rf"|sk\.eyJ[A-Za-z0-9_-]{{50,}}\.[A-Za-z0-9_-]{{20,}}){_R}",
    ),
    _p(
        "issued token by its format",
        "k2sk_v1_ api_live api_sandbox $production$ v1.0-",
        # Kolide's API keys, Onfido's live and sandbox tokens, Braintree's production
        # access tokens and Cloudflare's Origin CA keys, each by the format its issuer
        # documents. (Infracost's, ico- and 32 letters and digits, was tried: it refused a
        # held-out benign row, unread.)
        rf"{_L}(?:k2sk_v1_[A-Za-z0-9]{{24}}|v1\.0-[0-9a-f]{{24}}-[0-9a-f]{{146}}"
        rf"|api_(?:live|sandbox)(?:_[a-z]{{2}})?\.[A-Za-z0-9_-]{{11}}\.[A-Za-z0-9_-]{{32}}"
        rf"|access_token\$production\$[0-9a-z]{{16}}\$[0-9a-z]{{32}}){_R}",
    ),
    _p(
        "issued token by its prefix",
        "dckr_ absk dnkey- tgp_v1_ tvly- vcp_ vck_ vci_ vca_ vcr_ xkeysib- "
        "llx- pmat- phx_ phs_ pha_ phr_ 1//0 sqp_ squ_ sqa_ amzn.mws. _gitlab_session",
        # Each issuer's documented prefix and length: Docker's personal and organisation
        # access tokens, Amazon Bedrock's long-lived API keys, Defined Networking's,
        # Together AI's, Tavily's, Vercel's, Brevo's (Sendinblue), LlamaCloud's, Postman's
        # collection tokens, PostHog's personal and secret keys (not phc_, a project key
        # made to ship in a page), Google's OAuth refresh tokens, SonarQube's project, user
        # and global analysis tokens, Amazon MWS auth tokens and GitLab's session
        # cookie. (Cloudflare's cfat_, cfut_ and cfk_ were tried, and Infracost's ico-:
        # each refused a held-out benign row, unread.)
        rf"{_L}(?:dckr_(?:pat|oat)_[A-Za-z0-9_-]{{27,40}}"
        rf"|ABSK[A-Za-z0-9+/]{{100,}}={{0,2}}|dnkey-[A-Za-z0-9=_-]{{26}}-[A-Za-z0-9=_-]{{52}}"
        rf"|tgp_v1_[A-Za-z0-9_-]{{43}}|tvly-(?:dev-|prod-)?[A-Za-z0-9]{{32}}"
        rf"|vc[pkiar]_[A-Za-z0-9]{{40,64}}|xkeysib-[a-f0-9]{{64}}-[A-Za-z0-9]{{16}}"
        rf"|llx-[A-Za-z0-9_-]{{40,60}}|PMAT-[A-Z0-9]{{26}}|ph[xsar]_[A-Za-z0-9]{{40,70}}"
        rf"|1//0[A-Za-z0-9_-]{{40,}}|sq[pua]_[0-9a-f]{{40}}"
        rf"|amzn\.mws\.[0-9a-f]{{8}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{12}}){_R}"
        r"|(?P<keep>(?<![A-Za-z0-9])_gitlab_session=)[0-9a-f]{32}(?![A-Za-z0-9])",
    ),
    _p(
        "session and bearer tokens by their shape",
        "AAAAAAAAAAAAAAAAAAAAA 00D cmVmdGtuOjAx",
        # X's (Twitter's) app-only bearer token: 21 or 22 A's (never more: a longer run is
        # zeros in base64), then letters, digits and %-escapes holding a small letter and a
        # digit; a Salesforce session (access) token: its org's id (00D and 12 or 15 more),
        # "!", and 80 or more of letters, digits, "." and "_"; JFrog's reference token,
        # base64 of "reftkn:01:...".
        rf"{_L}(?:A{{21,22}}(?!A)(?=[A-Za-z0-9%]{{0,119}}[a-z])(?=[A-Za-z0-9%]{{0,119}}\d)"
        rf"[A-Za-z0-9%]{{60,120}}|00D[A-Za-z0-9]{{12}}(?:[A-Za-z0-9]{{3}})?![A-Za-z0-9._]{{80,120}}"
        rf"|cmVmdGtuOjAx[A-Za-z0-9+/]{{40,}}={{0,2}}){_R}",
    ),
    _p(
        "infura key in its endpoint",
        "infura.io/",
        # An Infura project's API key is the last part of the endpoint a client is given
        # (https://mainnet.infura.io/v3/<key>, wss://.../ws/v3/<key>).
        r"(?P<keep>\binfura\.io/(?:ws/)?v3/)[0-9a-f]{32}(?![A-Za-z0-9])",
    ),
    _p(
        "okta token after its scheme",
        "ssws",
        # Okta's API tokens go in its own authorization scheme: Authorization: SSWS 00...
        rf"(?P<keep>(?<![A-Za-z0-9])SSWS[ \t]+)00[A-Za-z0-9_-]{{40}}{_R}",
    ),
    _p(
        "azure key by its signature",
        "jqqj9",
        # Azure's keys since 2024 (AI services, storage, container registry, ...): 52
        # characters, Azure's JQQJ9 signature, then the service's tag (AZ..., AC...); not
        # one made of a repeated character (a sample's oooo...).
        rf"{_start('A-Za-z0-9+/')}(?![A-Za-z0-9+/]{{0,44}}([A-Za-z0-9])\1{{7}})[A-Za-z0-9+/]{{52}}"
        r"JQQJ9[9DH][A-Za-z0-9]{10,24}A[ZC][A-Za-z0-9+/]{2,12}={0,2}(?![A-Za-z0-9+/=])",
    ),
    _p("mailchimp key", "-us", rf"{_start('A-Za-z0-9')}[0-9a-f]{{32}}-us\d{{1,2}}(?![A-Za-z0-9])"),
    _p(
        "telegram bot token",
        ":A telegram bot tgram://",
        rf"{_start('A-Za-z0-9')}\d{{5,16}}:A[0-9A-Za-z_-]{{34}}{_R}"
        # Named as a bot's, the body need not start with A.
        # Or in Apprise's URL for it: tgram://<token>/<chat id>.
        rf"|(?P<keep>(?:(?i:telegram|bot)[^\n]{{0,40}}?|tgram://)(?<![A-Za-z0-9])\d{{8,10}}:)"
        rf"(?=[0-9A-Za-z_-]{{0,34}}\d)[0-9A-Za-z_-]{{35}}{_R}",
    ),
    _p(
        "mailgun key",
        "key-",
        # key- and 32 letters and digits, at least one a digit (hex ones included).
        rf"{_L}key-(?=[a-z]*\d)[0-9a-z]{{32}}{_R}",
    ),
    _p(
        "new relic key",
        "NRAK- NRAL NRJS- NRII-",
        rf"{_L}(?:NRAK-[A-Z0-9]{{27}}|(?:[a-z]{{2}}\d\dxx[a-f0-9]{{30}}|[a-f0-9]{{36}})NRAL|NRJS-[a-f0-9]{{19}}"
        rf"|NRII-[A-Za-z0-9_-]{{32}}){_R}",
    ),
    _p(
        "more saas tokens",
        "EZAK EZTK sha256~ p8e- pat. sat. fm1 fm2 fo1_ A3- |",
        rf"{_L}(?:EZ[AT]K[A-Za-z0-9]{{54}}|sha256~[A-Za-z0-9_-]{{43}}|p8e-[a-z0-9]{{32}}"
        rf"|(?:pat|sat)\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9]{{24}}\.[A-Za-z0-9]{{20}}"
        rf"|fm[12][ar]?_[A-Za-z0-9+/]{{100,}}={{0,3}}|fo1_[A-Za-z0-9_-]{{43}}"
        rf"|A3-[A-Z0-9]{{6}}-(?:[A-Z0-9]{{11}}|[A-Z0-9]{{6}}-[A-Z0-9]{{5}})(?:-[A-Z0-9]{{5}}){{3}}"
        rf"|\d{{15,16}}(?:\||%7C)[0-9A-Za-z_-]{{27,40}}){_R}",
    ),
    _p(
        "sidekiq credentials",
        "contribsys",
        # (A name may carry a suffix: BUNDLE_GEMS__CONTRIBSYS__COMToken=...)
        r"(?P<keep>(?i:BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM)[A-Za-z_]{0,12}"
        r"[ \t]*[:=][ \t]*[\"']?"
        r"|://)[a-f0-9]{8}:[a-f0-9]{8}(?![A-Za-z0-9])",
    ),
    _p(
        "azure client secret",
        "Q~",
        rf"{_start('A-Za-z0-9_~.-')}[A-Za-z0-9_~.]{{3}}\dQ~[A-Za-z0-9_~.-]{{31,34}}"
        # A sentence may end right after it (... is <secret>.).
        r"(?=\.?(?![A-Za-z0-9_~.-]))",
    ),
    _p(
        "discord bot token",
        "M N O",
        # A user id in base64 (a snowflake: M, N or O first), a timestamp, an HMAC.
        rf"{_L}[MNO][A-Za-z0-9_-]{{23,25}}\.[A-Za-z0-9_-]{{6}}\.[A-Za-z0-9_-]{{27,38}}{_R}",
        gate=r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}",  # a literal first: a fast search
    ),
    _p(
        "tableau access token",
        "==:",
        # A personal access token's secret: 16 bytes in base64, a colon, 32 letters and digits.
        rf"{_start('A-Za-z0-9+/')}[A-Za-z0-9+/]{{22}}==:[A-Za-z0-9]{{32}}(?![A-Za-z0-9+/=])",
    ),
    _p(
        "twilio account sid",
        "AC",
        rf"{_start('A-Za-z0-9+/')}AC[a-f0-9]{{32}}(?![A-Za-z0-9+/=])",
    ),
    _p(
        "atlassian token",
        "BBDC- ATBB",
        # Bitbucket Data Center HTTP access tokens; Bitbucket Cloud app passwords.
        rf"{_start('A-Za-z0-9+/')}BBDC-[A-Za-z0-9+/]{{44}}(?![A-Za-z0-9+/=])"
        rf"|{_L}ATBB(?=[A-Za-z0-9]{{0,40}}\d)[A-Za-z0-9]{{24,40}}{_R}",
    ),
    _p(
        "prefixed service token",
        "lsv2_ rootly_ shippo_ duffel_ spu- alcht_ apify_api_ sk_pr_ pri_",
        rf"{_L}(?:lsv2_(?:pt|sk)_[a-f0-9]{{32}}_[a-f0-9]{{10}}|rootly_[a-f0-9]{{64}}"
        rf"|shippo_(?:live|test)_[a-f0-9]{{40}}|duffel_(?:live|test)_[A-Za-z0-9_=-]{{43}}"
        rf"|spu-[a-f0-9]{{32}}|alcht_[A-Za-z0-9]{{30}}|apify_api_[A-Za-z0-9]{{36}}"
        rf"|sk_pr_[A-Za-z0-9_]{{1,40}}_[a-f0-9]{{40}}"
        # BestTime's private keys (its public ones, pub_..., are made to be shown).
        rf"|pri_(?=[A-Za-z]{{0,31}}\d)(?=\d{{0,31}}[A-Za-z])[A-Za-z0-9]{{32}}){_R}",
    ),
    _p(
        "fullstory api key",
        "na1. eu1.",
        # FullStory's API keys: the data region, a dot, about 100 characters of base64.
        rf"{_start('A-Za-z0-9_.-')}(?:na1|eu1)\.[A-Za-z0-9+/]{{100,110}}={{0,2}}(?![A-Za-z0-9+/=])",
    ),
    _p(
        "softlayer api key",
        "softlayer.com/soap/",
        # SoftLayer's SOAP endpoint takes the API key in its path (detect-secrets' format).
        r"(?P<keep>(?<![A-Za-z0-9.-])api\.softlayer\.com/soap/v3(?:\.1)?/)[a-z0-9]{64}(?![A-Za-z0-9])",
    ),
    _s(
        "issued service token",
        "provider",
        "odt_ cfpat- figd_ bkua_ rdme_ slk_ tfp_ nf- bbff- ccipat_ flb_live_ ak_live_ shltm_ "
        "pat-na1- pat-eu1- 1000. vf. oy2 jina_ mdb_sa_sk_ sk_ fio-u- live_ sgp_ tskey-",
        # Prefixes services put on the tokens they issue, each with the body's length and
        # alphabet from the issuer's format (as Nosey Parker's and Kingfisher's rules have
        # them): Dependency-Track, Contentful, Figma, Buildkite, ReadMe, Sourcegraph Cody,
        # Typeform, Nightfall, Ubidots, CircleCI, Fleetbase, Pagar.me, Flexport, HubSpot,
        # Zoho, Voiceflow, NuGet, Jina, MongoDB Atlas service accounts, ElevenLabs,
        # Frame.io, Twitch stream keys, Segment. Each must also read as random: a run of
        # one letter after the prefix is a sample, not a token.
        rf"{_L}(?:odt_[A-Za-z0-9]{{32,255}}|(?i:CFPAT)-[A-Za-z0-9_-]{{43}}"
        rf"|figd_[A-Za-z0-9_-]{{40}}|bkua_[a-z0-9]{{40}}|rdme_[a-z0-9]{{70}}|slk_[a-f0-9]{{64}}"
        rf"|tfp_[A-Za-z0-9_]{{40,59}}|NF-[A-Za-z0-9]{{32}}|BBFF-[A-Za-z0-9]{{30}}"
        rf"|CCIPAT_[A-Za-z0-9]{{22}}_[A-Za-z0-9]{{40}}|flb_live_[A-Za-z0-9]{{20}}"
        rf"|ak_live_[A-Za-z0-9]{{30}}|shltm_[A-Za-z0-9_-]{{40}}"
        rf"|pat-(?:na|eu)1-[A-Za-z0-9]{{8}}-[A-Za-z0-9]{{4}}-[A-Za-z0-9]{{4}}-[A-Za-z0-9]{{4}}"
        rf"-[A-Za-z0-9]{{12}}|1000\.[a-f0-9]{{32}}\.[a-f0-9]{{32}}"
        rf"|VF\.(?:(?:DM|WS)\.)?[a-fA-F0-9]{{24}}\.[A-Za-z0-9]{{16}}|oy2[a-z0-9]{{43}}"
        rf"|jina_[A-Za-z0-9]{{60}}|mdb_sa_sk_[A-Za-z0-9_-]{{6}}[A-Za-z0-9]{{34}}"
        rf"|sk_[a-f0-9]{{48}}|f?fio-u-[A-Za-z0-9_-]{{64}}|live_\d{{8,12}}_[A-Za-z0-9]{{30,36}}"
        rf"|sgp_[A-Za-z0-9]{{64}}){_R}",
        random=True,
    ),
    _p(
        "tailscale key",
        "tskey-",
        # tskey-<kind>-<id>-<secret>: auth, api, client, scim, webhook keys.
        rf"{_L}tskey-[a-z]{{3,10}}-[A-Za-z0-9]{{6,20}}-[A-Za-z0-9]{{16,64}}{_R}",
    ),
    _s(
        "airtable token",
        "provider",
        "pat",
        # Airtable personal access tokens: pat, 14 characters, a dot, 64 hex digits.
        rf"{_L}pat[A-Za-z0-9]{{14}}\.[a-f0-9]{{64}}{_R}",
        random=True,
        gate=r"pat[A-Za-z0-9]{14}\.",  # a literal first: a fast search ("pat" is common)
    ),
    _s(
        "asana token",
        "provider",
        "0/ 1/",
        # Asana personal access tokens: 0/ or 1/, a user id, a colon, 32 hex digits.
        rf"{_start('A-Za-z0-9_/-')}[01]/\d{{13,16}}:[a-f0-9]{{32}}{_R}",
        random=True,
        gate=r"/\d{13,16}:[a-f0-9]{32}",
    ),
    _p(
        "azure identifiable key",
        "+ACR AzSe AzCa AzFu +ASb +AEh +ASt ACDb APIM",
        # Keys Azure issues with a signature at a fixed place (Microsoft's identifiable
        # secrets): Container Registry, Cognitive Search, Cache for Redis, Functions,
        # Service Bus, Event Hubs, Storage, Cosmos DB, API Management.
        rf"{_start('A-Za-z0-9+/')}"
        r"(?:[A-Za-z0-9+/]{42}\+ACR[A-Za-z0-9+/]{6}"
        r"|[A-Za-z0-9]{42}AzSe[A-Za-z0-9]{6}|[A-Za-z0-9]{33}AzCa[A-Za-z0-9]{7}="
        r"|[A-Za-z0-9_-]{44}AzFu[A-Za-z0-9_-]{5}[AQgw]==|[A-Za-z0-9+/]{33}\+A(?:Sb|Eh)[A-Za-z0-9+/]{5}="
        r"|[A-Za-z0-9+/]{76}(?:\+ASt|ACDb)[A-Za-z0-9+/]{5}[AQgw]==|[A-Za-z0-9]{76}APIM[A-Za-z0-9]{5}[AQgw]==)"
        r"(?![A-Za-z0-9+/=])",
    ),
    _p(
        "vault unseal key",
        "Unseal Key",
        # Vault's init prints its unseal keys as "Unseal Key 1: <base64>".
        r"(?P<keep>Unseal Key \d{1,2}:[ \t]*)[A-Za-z0-9+/]{40,}={0,2}",
    ),
    _p("square access token", "EAAA", rf"{_L}EAAA[A-Za-z0-9+=-]{{60}}{_R}"),
    _p(
        "launchdarkly key",
        "api- sdk-",
        # api- or sdk- and a UUID's shape (LaunchDarkly's access tokens and SDK keys).
        rf"{_L}(?:api|sdk)-[a-z0-9]{{8}}-[a-z0-9]{{4}}-[a-z0-9]{{4}}-[a-z0-9]{{4}}-[a-z0-9]{{12}}{_R}",
    ),
    _p(
        "azure sas signature",
        "sig=",
        # A shared access signature: sv=<version> ... sig=<base64, URL-encoded>.
        r"(?P<keep>(?<![A-Za-z0-9])sv=\d{4}-\d\d-\d\d(?:&[A-Za-z]{1,8}=[^\s&\"'<>]{0,100}){0,12}"
        r"&sig=)[A-Za-z0-9%+/]{30,}={0,2}",
    ),
    _p(
        "thingsboard access token",
        "thingsboard.cloud/api/v1/",
        # A ThingsBoard device's access token in its HTTP API's path.
        r"(?P<keep>thingsboard\.cloud/api/v1/)[A-Za-z0-9]{20}(?=/)",
    ),
    _p("age secret key", "AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}"),  # bech32
    _p("aws appsync key", "da2-", rf"{_L}da2-[a-z0-9]{{26}}{_R}"),
    _p(
        "gcp service account key",
        "service_account",
        # The field that opens a service account's key file (JSON, or JSON inside a string).
        r"(?P<keep>\\?[\"']type\\?[\"'][ \t]*:[ \t]*\\?[\"'])service_account(?=\\?[\"'])",
    ),
)

# kind: Secret (not ExternalSecret, SopsSecret); under data:, past comments, a key, an
# optional block scalar and quote, a base64 value too long to be a word.
_K8S_KIND = r"(?<![\w.-])(?i:kind):[ \t]*[\"']?(?i:secret)(?![\w-])"
_K8S_DATA = (
    r"(?<![\w.-])data:[ \t]*\r?\n(?:[ \t]*#[^\n]*\n)*[ \t]+[\w.-]+:[ \t]*"
    r"(?:[|>][-+]?[ \t]*\r?\n[ \t]*)?[\"']?"
)
_K8S_VALUE = r"[A-Za-z0-9+/]{10,}={0,3}"

_DOCS_JWT = (
    r"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9\.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9l"
    r"IiwiaWF0IjoxNTE2MjM5MDIyfQ\.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
# The same sample base64-encoded again: the encoding of its first 45 characters (whole
# 3-byte groups, so the same whatever follows).
_DOCS_JWT_BASE64 = base64.b64encode(_DOCS_JWT.replace("\\.", ".")[:45].encode()).decode()

_STRUCTURED: tuple[SecretShape, ...] = (
    _s(
        "private key block",
        "pem",
        "PRIVATE KEY",
        # The whole block; a block cut short (no END line) up to where its body ends, or
        # whose first dashes were lost in a copy (BEGIN RSA PRIVATE KEY-----, a body).
        rf"{_start('A-Za-z0-9-')}"
        r"-{0,5}BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        # A body, not a placeholder ("...", "<your key here>"): past the header lines
        # (Proc-Type: ...), a run of base64 (line breaks may be written as \n or \\n, or
        # flattened to spaces).
        # The lines may be string literals joined by "+" ("-----BEGIN ...-----" +\n"MIIE...").
        # (One character per alternative: "+" and quotes apart, so no run splits two ways.)
        r"(?=(?:\s|\\{1,2}[nr]|[\"'+])*"
        r"(?:[A-Za-z-]+:[^\n]*(?:\n|\\{1,2}n)(?:\s|\\{1,2}[nr])*)*"
        # A log's or a comment's prefix may open each line (#6 0.245, a date, " * "): a few
        # short words before the run.
        r"(?:[^\s]{1,19}\s+){0,8}[A-Za-z0-9+/]{20})"
        r"(?:[\s\S]*?-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,\"'-]*)",
        multiline=True,
    ),
    _s(
        "json web key, private part",
        "pem",
        '"d" "k"',
        # A JSON Web Key's private part: an RSA or EC key's "d", a symmetric key's "k", in
        # a text that names a key type ("kty"); a public key has neither.
        r'(?P<keep>"[dk]"[ \t]*:[ \t]*")[A-Za-z0-9_-]{16,}(?=")',
        multiline=True,
        gate=r'"kty"[ \t]*:',
    ),
    _s(
        "base64 private key",
        "pem",
        "LS0tLS1CRUdJTi",
        # A PEM private key base64-encoded again (a Kubernetes TLS secret's data, a JSON
        # field): "-----BEGIN" then, within its first line, "PRIVATE KEY" at one of the
        # three byte alignments.
        r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{0,40}?(?:UFJJVkFURSBL|SVZBVEUgS0VZ|UklWQVRFIEtF)[A-Za-z0-9+/]*={0,2}",
    ),
    _s(
        "private key body without its markers",
        "pem",
        "IBAA IBADAN AgEAMB AgEBB MHcCAQEEI CAQAwBQYDK2V b3BlbnNzaC1rZXktdjE",
        # A private key's DER bytes in base64 without the PEM markers (a keystore's or a
        # config's string), told by how its structure opens: a sequence whose first field
        # is the version 0 or 1, then an RSA key's modulus (PKCS #1: MIIEpAIBAAKCAQEA...)
        # or an algorithm's id (PKCS #8: MIIEvQIBADANBgkq..., EC: MIGHAgEAMBMG...), or an
        # EC key's secret (SEC 1: MHcCAQEEI...), or Ed25519's, X25519's and their kin's. A
        # public key or a certificate opens otherwise (no version: MIIBIjANBg...,
        # MIIDdzCCAl...). Or an OpenSSH private key's body, which opens with its format's
        # name (openssh-key-v1: b3BlbnNzaC1rZXktdjE...). Its wrapped lines are taken with it.
        rf"{_start('A-Za-z0-9+/')}"
        r"(?:MII[A-Za-z0-9+/]{2}[AQgw]IB(?:AA[JK]|ADAN)"
        r"|MI[GH][A-Za-z0-9+/]AgE(?:AMB[AM]GByqGSM49|BB[DE])|MHcCAQEEI"
        r"|M[CE][A-Za-z0-9+/]CAQAwBQYDK2V[uvwx]B|b3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/]{32,}={0,2}"
        r"(?:(?:\\{1,2}n|\r?\n)[ \t\"']*[A-Za-z0-9+/]{16,}={0,2}){0,400}",
        multiline=True,
    ),
    _s(
        "putty private key",
        "pem",
        "PuTTY-User-Key-File-",
        r"PuTTY-User-Key-File-\d+:[^\n]*\n[\s\S]{0,4000}?Private-Lines:[ \t]*\d+[ \t]*\r?\n"
        r"[A-Za-z0-9+/=\r\n]+",
        multiline=True,
    ),
    _s(
        "kubernetes secret data",
        "label",
        "data:",
        # The first value under data: in a manifest of kind Secret (kind first).
        rf"(?P<keep>{_K8S_KIND}[\s\S]{{0,600}}?{_K8S_DATA}){_K8S_VALUE}",
        multiline=True,
    ),
    _s(
        "kubernetes secret data, kind last",
        "label",
        "data:",
        rf"(?P<keep>{_K8S_DATA}){_K8S_VALUE}(?=[\s\S]{{0,600}}?{_K8S_KIND})",
        multiline=True,
    ),
    _s(
        "json web token",
        "jwt",
        "eyJ ewogIC ewoJI",
        # Not the sample every reader of jwt.io's introduction has seen.
        # A header written over several lines encodes to ewogIC or ewoJI ("{\n  ", "{\n\t").
        rf"{_L}(?!{_DOCS_JWT})(?:eyJ|ewogIC|ewoJI)[A-Za-z0-9_-]{{8,}}"
        # The signature may be missing (an unsigned token, or one cut short).
        r"\.(?:ey|ewogIC|ewoJI)[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?",
    ),
    _s(
        "base64 json web token",
        "jwt",
        "ZXlK",
        # A JWT base64-encoded again (a Kubernetes secret's data, a JSON field): eyJ encodes
        # to ZXlK, then ".eyJ" at one of the three byte alignments. Not jwt.io's sample.
        rf"{_start('A-Za-z0-9+/')}(?!{_DOCS_JWT_BASE64})"
        r"ZXlK[A-Za-z0-9+/]{8,}?(?:uZXlK|LmV5S|5leUp)[A-Za-z0-9+/]{8,}={0,2}",
    ),
    _s(
        "json web encryption",
        "jwt",
        "eyJ",
        # A JWE in its compact form (RFC 7516): a JSON header, then an encrypted key
        # (empty when the key is agreed directly), an IV, the ciphertext and a tag, each
        # base64url; the IV and the tag are 96 bits or more (16 characters).
        rf"{_L}eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{{16,}}"
        rf"\.[A-Za-z0-9_-]{{2,}}\.[A-Za-z0-9_-]{{16,}}{_R}",
    ),
)

CATALOG: tuple[SecretShape, ...] = _STRUCTURED + _PROVIDERS + _LABELS
"""Every shape, most specific first (a provider name makes a better reason than a label)."""
