"""The model base every agrun model derives from: immutable, camelCase on the wire.

Python spells fields in snake_case; every model carries camelCase aliases so the same model
crosses into JavaScript unchanged (`Model.to_wire`). Models are immutable: setting an
attribute raises `ReadOnlyError`, and agrun moves on by making new ones.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel

from ._errors import ReadOnlyError
from ._plain import find_uncrossable, freeze, thaw

__all__ = ["FrozenData", "Model", "trusted"]

M = TypeVar("M", bound=BaseModel)


class Model(BaseModel):
    """Base for agrun's models: immutable, camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="forbid",
        # Not use_attribute_docstrings: reading field docstrings parses each model's source at
        # import (~15% of a page's cold `import agrun`), and nothing at run time reads field
        # descriptions; tools/gen_docs_tables.py reads the docstrings it documents with `ast`.
    )

    def __setattr__(self, name: str, value: Any) -> None:
        raise ReadOnlyError(
            f"{type(self).__name__}.{name} is read-only: the runtime owns this data "
            "(a skill returns output and asks through helpers instead)"
        )

    def __delattr__(self, name: str) -> None:
        raise ReadOnlyError(f"{type(self).__name__}.{name} is read-only and cannot be deleted")

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready, camelCase form that crosses into JavaScript."""
        return self.model_dump(mode="json", by_alias=True)


_set = object.__setattr__


def trusted(model: type[M], values: dict[str, Any]) -> M:
    """A ``model`` from a complete dict of valid values, without validation: for the small
    records made by the hundred on a turn's path (a build's recall hits and passage
    records, a trace's entries), whose values are valid by construction. Every field must
    be given (defaults are not filled in)."""
    made = model.__new__(model)
    _set(made, "__dict__", values)
    _set(made, "__pydantic_fields_set__", set(values))
    _set(made, "__pydantic_extra__", None)
    _set(made, "__pydantic_private__", None)
    return made


def _plain(value: Any) -> Any:
    problem = find_uncrossable(value)
    if problem:
        raise ValueError(problem)
    return thaw(value)


# A str-keyed JSON object, checked to cross into JavaScript, stored deeply frozen and
# written back out as plain dicts and lists.
FrozenData = Annotated[
    dict[str, Any],
    BeforeValidator(_plain),
    AfterValidator(freeze),
    PlainSerializer(thaw),
]
