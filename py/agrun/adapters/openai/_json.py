"""Parsing JSON that came over the network, bounded first.

A recursive parser given JSON nested tens of thousands deep overflows its stack: in CPython a
`RecursionError`, inside Pyodide the death of the interpreter (the page needs a new runtime).
So every parse of a provider's bytes (a stream's chunk, a whole completion, an error body,
an embeddings reply, a page provider's reply) measures the nesting first with the same
check imports use (`agrun._base.json_nests_deeper`: linear, no recursion), and refuses it
typed.
"""

from __future__ import annotations

import json
from typing import Any

from ..._base import json_nests_deeper
from ...chat import ProviderProtocolError

__all__ = ["MAX_DEPTH", "parse_json"]

# A chat-completion chunk nests 6 levels, tool arguments sent as objects some more: the
# same bound as an import.
MAX_DEPTH = 64


def parse_json(text: str, what: str = "a reply") -> Any:
    """``text`` parsed, after checking that it nests at most `MAX_DEPTH` levels.

    Raises:
        ProviderProtocolError: it nests deeper.
        ValueError: it is not JSON (as `json.loads`).
    """
    if json_nests_deeper(text, MAX_DEPTH):
        raise ProviderProtocolError(
            f"the provider sent {what} nested deeper than {MAX_DEPTH} levels: not parsed"
        )
    try:
        return json.loads(text)
    except RecursionError:  # defence in depth: the scan above should have caught it
        raise ProviderProtocolError(f"the provider sent {what} nested too deep") from None
