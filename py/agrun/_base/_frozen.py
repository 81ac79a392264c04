"""Read-only JSON containers: what a pack holds (spec 001 section 19: no mutable context)
and what a content entry's body is (spec 002: generated code cannot change stored content).

A pack is handed to the host, to extensions and to the kernel's renderer; none of them
may change what the budget was counted on. A stored body is handed to skills; none of them
may change what its digest was taken of. Their models are frozen already; these make the
dicts and lists inside them frozen too.

They subclass ``dict`` and ``list`` rather than wrapping them (``MappingProxyType``) on
purpose: pydantic serializes them exactly as it serializes plain ones (a pack's JSON is
byte for byte what it was), and ``json.dumps``, ``isinstance(x, dict)``, copying and
pickling keep working for the code that reads them. A subclass says whose data it is
(``refusal``), so the error names what was refused and what to do instead.
"""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn, TypeVar

from ._errors import ReadOnlyError

__all__ = [
    "CheckedDict",
    "CheckedList",
    "FrozenDict",
    "FrozenList",
    "checked_height",
    "freeze_json",
    "thaw_json",
]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")

_PACK = (
    "belongs to a context pack and is read-only: copy it (dict(...) / list(...)) to "
    "change it, or build a new pack"
)


def _refuse(container: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise ReadOnlyError(f"this {type(container).__name__} {container.refusal}")


class FrozenDict(dict[K, V]):
    """A ``dict`` whose contents cannot change after it is made (`ReadOnlyError`)."""

    __slots__ = ()
    refusal: ClassVar[str] = _PACK
    """The error's words after "this FrozenDict": whose it is and what to do instead."""

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __copy__(self) -> FrozenDict[K, V]:
        return self  # nothing can change it, so a copy may be the same object

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict[K, V]:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # The default reduction re-adds items with __setitem__, which is refused.
        return (type(self), (dict(self),))


class FrozenList(list[T]):
    """A ``list`` whose contents cannot change after it is made (`ReadOnlyError`)."""

    __slots__ = ()
    refusal: ClassVar[str] = _PACK

    __setitem__ = _refuse
    __delitem__ = _refuse
    __iadd__ = _refuse
    __imul__ = _refuse
    append = _refuse
    extend = _refuse
    insert = _refuse
    pop = _refuse
    remove = _refuse
    clear = _refuse
    sort = _refuse
    reverse = _refuse

    def __copy__(self) -> FrozenList[T]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList[T]:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (list(self),))


class CheckedDict(FrozenDict[K, V]):
    """A `FrozenDict` that `plain_copy` can make as it checks: the root of such a copy
    carries its ``height`` (levels of dicts and lists), and then everything in it is known
    to cross into JavaScript (`find_uncrossable` stops there instead of walking it again).
    A checked container without a height (a part of one, or one made another way) is
    walked like any other."""

    __slots__ = ("height",)
    height: int


class CheckedList(FrozenList[T]):
    """The list of a `CheckedDict`'s kind (a checked root carries its ``height``)."""

    __slots__ = ("height",)
    height: int


def checked_height(value: Any) -> int | None:
    """How many levels of dicts and lists ``value`` nests, if it is the root of a copy
    `plain_copy` made frozen and found to cross; None for anything else."""
    if isinstance(value, (CheckedDict, CheckedList)):
        height: int | None = getattr(value, "height", None)
        return height
    return None


def freeze_json(
    value: Any,
    dict_type: type[FrozenDict[Any, Any]] = FrozenDict,
    list_type: type[FrozenList[Any]] = FrozenList,
) -> Any:
    """A deeply read-only copy of JSON data: dicts become ``dict_type``, lists and tuples
    ``list_type`` (`FrozenDict`, `FrozenList` unless a subclass says whose they are).

    Anything else (strings, numbers, ``None``) is returned as it is.
    """
    if isinstance(value, dict):
        # Scalars (most of a body) are taken as they are, without a call each.
        return dict_type(
            {
                key: freeze_json(item, dict_type, list_type)
                if isinstance(item, _CONTAINERS)
                else item
                for key, item in value.items()
            }
        )
    if isinstance(value, _CONTAINERS):
        return list_type(
            [
                freeze_json(item, dict_type, list_type) if isinstance(item, _CONTAINERS) else item
                for item in value
            ]
        )
    return value


def thaw_json(value: Any) -> Any:
    """The plain, changeable form of JSON data `freeze_json` froze: dicts and lists again
    (scalars, most of it, taken without a call each; a dict or list subclass is read as
    the dict or list it is)."""
    if isinstance(value, dict):
        return {
            key: thaw_json(item) if isinstance(item, _CONTAINERS) else item
            for key, item in value.items()
        }
    if isinstance(value, _CONTAINERS):
        return [thaw_json(item) if isinstance(item, _CONTAINERS) else item for item in value]
    return value


_CONTAINERS = (dict, list, tuple)
