"""Secrets in what surrounds them on their way to a model or a memory.

Run: .venv/bin/python bench/secret_surroundings.py [--split tune|heldout] [--misses]

The corpus measures the filter on texts as the scanners wrote them. A secret that reaches an
agent comes wrapped: a tool's log in a terminal's colours, a file's text inside a JSON string,
a model's answer in Markdown, an HTML table, a URL inside another URL's parameter. Two probes:

- **values**: every value the catalog finds on its own in the split's secret rows (a
  provider's token, a key block, a key with its own edges; not a labelled value, whose label
  is not in it), wrapped in each of ``SURROUNDINGS``. A value keeps its secret when a piece
  from its middle is still in the redacted text. Four surroundings glue the value to a word
  (``a-<token>``, ``<token>_x``): a token's edges exclude them on purpose (``task-sk-...`` is
  a name, not a key), so they are counted apart.
- **labels**: eight labels and three generated values (a password's shape, 32 letters and
  digits, 40 hex digits) in each of ``LABEL_FORMS``.

Values come from the corpus, so ``--split heldout`` is a count to report, never rows to read
(``--misses`` prints examples for ``tune`` only).
"""

from __future__ import annotations

import argparse
import random
import string
from collections import Counter

from agrun.sensitive import PatternRedactor
from secret_filter import load  # the corpus's rows, per split

SURROUNDINGS: dict[str, str] = {
    "glued after a word's dash": "a-{v}",
    "glued before a dash and a word": "{v}-a",
    "glued after a name's underscore": "x_{v}",
    "glued before an underscore and a word": "{v}_x",
    "Markdown emphasis": "_{v}_",
    "Markdown bold": "**{v}**",
    "code span": "`{v}`",
    "code block": "```\n{v}\n```",
    "double quotes": '"{v}"',
    "single quotes": "'{v}'",
    "parentheses": "({v})",
    "brackets": "[{v}]",
    "angle brackets": "<{v}>",
    "braces": "{{{v}}}",
    "end of a sentence": "It is {v}.",
    "before a comma": "{v}, ok",
    "before a semicolon": "{v};",
    "before a colon": "{v}: x",
    "before an exclamation": "{v}!",
    "end of a question": "is it {v}?",
    "query parameter": "x=1&t={v}&y=1",
    "before a fragment": "?t={v}#frag",
    "path segment": "/p/{v}/x",
    "bearer header": "Authorization: Bearer {v}",
    "before CRLF": "{v}\r\nnext",
    "between tabs": "\t{v}\t",
    "JSON string's escaped line breaks": "a\\n{v}\\nb",
    "JSON string's escaped quotes": '"k": "\\"{v}\\""',
    "URL-encoded quotes": "%22{v}%22",
    "before a URL-encoded line break": "{v}%0Anext",
    "curly quotes": "\u201c{v}\u201d",
    "guillemets": "\u00ab{v}\u00bb",
    "before an ellipsis": "{v}\u2026",
    "CJK text": "\u5bc6\u94a5{v}\u3002",
    "full-width colon": "token\uff1a{v}",
    "zero-width spaces": "\u200b{v}\u200b",
    "no-break spaces": "key\u00a0{v}\u00a0x",
    "HTML code": "<code>{v}</code>",
    "HTML table cell": "<td>{v}</td>",
    "HTML entity quotes": "&quot;{v}&quot;",
    "HTML entity apostrophes": "&#39;{v}&#39;",
    "Markdown link": "[here]({v})",
    "Markdown table": "| key | {v} |",
    "Markdown quote": "> {v}",
    "Markdown list": "- {v}",
    "after a hash": "#{v}",
    "after an at sign": "@{v}",
    "terminal colour": "\x1b[31m{v}\x1b[0m",
    "terminal colour and weight": "\x1b[1;31m{v}\x1b[0m",
    "before a slash": "{v}/",
    "backslashes": "\\{v}\\",
    "equals signs": "={v}=",
    "plus signs": "+{v}+",
    "asterisks": "*{v}*",
    "tildes": "~{v}~",
    "pipes": "|{v}|",
    "after a dollar": "${v}",
    "after a caret": "^{v}",
    "ampersands": "&{v}&",
    "YAML list item": "- '{v}'",
    "XML attribute": '<k v="{v}"/>',
    "CDATA": "<![CDATA[{v}]]>",
    "after data:": "data: {v}",
    "URL's password": "https://u:{v}@h/",
    "a line of its own": "first\n{v}\nlast",
    "after a long line": "x" * 70 + " {v}",
}
GLUED = frozenset(list(SURROUNDINGS)[:4])

LABELS = ("password", "api_key", "secret", "token", "client_secret", "apiKey", "DB_PASSWORD")
LABELS += ("x-api-key",)
LABEL_FORMS: dict[str, str] = {
    "terminal colour on the label": "\x1b[32m{l}\x1b[0m: {v}",
    "terminal colour on the value": "{l}: \x1b[1;33m{v}\x1b[0m",
    "after a coloured time": "\x1b[2m2024-01-01\x1b[0m {l}={v}",
    "JSON string's escaped tab": '"a\\t{l}: {v}"',
    "URL-encoded line": "log?m=a%0A{l}%3A%20{v}",
    "URL-encoded pair": "q={l}%3D{v}%26x%3D1",
    "Markdown bold label": "**{l}**: {v}",
    "Markdown bold label and colon": "**{l}:** {v}",
    "Markdown emphasis": "*{l}*: {v}",
    "Markdown code spans": "`{l}`: `{v}`",
    "HTML bold": "<b>{l}</b>: {v}",
    "HTML table row": "<td>{l}</td><td>{v}</td>",
    "HTML definition": "<dt>{l}</dt><dd>{v}</dd>",
    "arrow": "{l} \u2192 {v}",
    "en dash": "{l} \u2013 {v}",
    "full-width colon": "{l}\uff1a{v}",
    "curly quotes": "{l} = \u201c{v}\u201d",
    "tab-separated": "{l}\t{v}",
    "pipe": "{l} | {v}",
    "PHP array": '"{l}" => "{v}"',
    "Ruby hash": ":{l} => '{v}'",
    "Go": '{l} := "{v}"',
    "SQL": "SET {l} = '{v}'",
    "HCL": '{l} = "{v}"',
    "docker run -e": "docker run -e {l}={v} img",
    "before a command": "{l}={v} npm start",
    "export": "export {l}='{v}'",
    "PowerShell": '$env:{l} = "{v}"',
    "cmd.exe": "set {l}={v}",
    "Dockerfile ENV": "ENV {l} {v}",
    "Dockerfile ARG": "ARG {l}={v}",
    "helm --set": "helm install x --set auth.{l}={v}",
    "YAML folded block": "{l}: >-\n  {v}",
    "Kubernetes env list": "- name: {l}\n  value: {v}",
    "header pairs": '[["{l}", "{v}"]]',
    "name and value": '{{"name": "{l}", "value": "{v}"}}',
    "Java properties": "app.{l}={v}",
    "colon, no space": "{l}:{v}",
    "a sentence with a colon": "The {l} is: {v}",
    "chat": "here's the {l} {v} thanks",
    "no-break space": "{l}:\u00a0{v}",
    "zero-width space in the label": "{l}\u200b: {v}",
}


def corpus_values(split: str, redactor: PatternRedactor) -> list[str]:
    """Each distinct value the catalog finds on its own in ``split``'s secret rows."""
    values: dict[str, None] = {}
    for row in load(split):
        if row["label"] != "secret":
            continue
        for hit in redactor.find(row["text"]):
            value = row["text"][hit.start : hit.end]
            if len(value) < 12 or "\n" in value or value in values:
                continue
            alone = redactor.find(value)
            if any(h.start == 0 and h.end == len(value) for h in alone):
                values[value] = None
    return list(values)


def kept(redactor: PatternRedactor, text: str, piece: str) -> bool:
    """Whether ``piece`` of a secret is still in ``text`` once redacted."""
    return piece in redactor.redact(text)


def probe_values(split: str, misses: bool) -> None:
    redactor = PatternRedactor()
    values = corpus_values(split, redactor)
    counts: Counter[str] = Counter()
    for value in values:
        piece = value[len(value) // 3 : len(value) // 3 + 8]
        for name, around in SURROUNDINGS.items():
            text = around.format(v=value)
            if kept(redactor, text, piece):
                counts[name] += 1
                if misses and split == "tune" and counts[name] <= 3:
                    print(f"  kept [{name}] {text[:120]!r}")
    total = len(values) * len(SURROUNDINGS)
    apart = sum(n for name, n in counts.items() if name in GLUED)
    print(f"values ({split}): {len(values)} values in {len(SURROUNDINGS)} surroundings")
    print(f"- kept their secret: {sum(counts.values())} of {total} texts")
    print(
        f"- not glued to a word: {sum(counts.values()) - apart} of "
        f"{len(values) * (len(SURROUNDINGS) - len(GLUED))}"
    )
    for name, n in counts.most_common():
        print(f"  {n:5}  {name}")


def probe_labels(misses: bool) -> None:
    redactor = PatternRedactor()
    draw = random.Random(11).choice
    alnum = string.ascii_letters + string.digits
    values = (
        "Xk9" + "".join(draw(alnum) for _ in range(9)) + "!q",
        "".join(draw(alnum) for _ in range(32)),
        "".join(draw("0123456789abcdef") for _ in range(40)),
    )
    counts: Counter[str] = Counter()
    for form_name, form in LABEL_FORMS.items():
        for label in LABELS:
            for value in values:
                text = form.format(l=label, v=value)
                if kept(redactor, text, value[4:20]):
                    counts[form_name] += 1
                    if misses and counts[form_name] <= 2:
                        print(f"  kept [{form_name}] {text!r}")
    total = len(LABEL_FORMS) * len(LABELS) * len(values)
    print(f"labels: {len(LABELS)} labels, {len(values)} values, {len(LABEL_FORMS)} forms")
    print(f"- kept their secret: {sum(counts.values())} of {total} texts")
    for name, n in counts.most_common():
        print(f"  {n:5}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("tune", "heldout"), default="heldout")
    parser.add_argument("--misses", action="store_true", help="examples (tune split only)")
    args = parser.parse_args()
    probe_values(args.split, args.misses)
    probe_labels(args.misses)


if __name__ == "__main__":
    main()
