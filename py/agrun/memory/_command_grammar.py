"""How the built-in memory commands are phrased: "remember: ...", "what do you remember",
"forget ...".

Apart from the skill that carries them out (`_memory_commands`) because the inquiry reads the
phrasing too: a turn phrased as a memory command is a note to keep, list or forget, never the
answer to the session's open clarification, whether or not the commands are on.
"""

from __future__ import annotations

import re

__all__ = ["FORGET", "LIST", "REMEMBER", "is_memory_command"]

REMEMBER = re.compile(r"^\s*remember\s*:\s*(?P<text>\S.*)$", re.IGNORECASE | re.DOTALL)
LIST = re.compile(r"^\s*what\s+do\s+you\s+remember\b", re.IGNORECASE)
FORGET = re.compile(r"^\s*forget\s*:?\s+(?P<text>\S.*)$", re.IGNORECASE | re.DOTALL)


def is_memory_command(text: str) -> bool:
    """Whether ``text`` is phrased as one of the memory commands."""
    return bool(REMEMBER.match(text) or LIST.match(text) or FORGET.match(text))
