"""The base every layer stands on: the model base, plain data, and agrun's error tree."""

from ._errors import (
    AgrunError,
    ConfigError,
    DuplicateSkillError,
    HelpersClosedError,
    InputError,
    MemoryEntryError,
    OutputNotSerializableError,
    ReadOnlyError,
    ReentrantCallError,
    StorageError,
    TransitionError,
    UnknownSkillError,
)
from ._event import Event
from ._frozen import FrozenDict, FrozenList, freeze_json, thaw_json
from ._model import FrozenData, Model
from ._plain import (
    MAX_PLAIN_DEPTH,
    MAX_SAFE_INTEGER,
    find_uncrossable,
    find_unstorable,
    freeze,
    is_positive_number,
    json_depth,
    plain_copy,
    scrubbed,
    thaw,
)

__all__ = [
    "MAX_PLAIN_DEPTH",
    "MAX_SAFE_INTEGER",
    "AgrunError",
    "ConfigError",
    "DuplicateSkillError",
    "Event",
    "FrozenData",
    "FrozenDict",
    "FrozenList",
    "HelpersClosedError",
    "InputError",
    "MemoryEntryError",
    "Model",
    "OutputNotSerializableError",
    "ReadOnlyError",
    "ReentrantCallError",
    "StorageError",
    "TransitionError",
    "UnknownSkillError",
    "find_uncrossable",
    "find_unstorable",
    "freeze",
    "freeze_json",
    "is_positive_number",
    "json_depth",
    "plain_copy",
    "scrubbed",
    "thaw",
    "thaw_json",
]
