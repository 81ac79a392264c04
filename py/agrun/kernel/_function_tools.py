"""Tools from typed functions: ``@agrun.tool`` and ``runtime.tool``.

A function tool is a skill like any other (``kernel/_skills.py``): the registry holds it, a
model is offered it and calls it through the same tool loop, and its arguments are checked
by the same code (``kernel/_tools.py``), so a validation failure goes back to the model as
the tool's error and a correction frame, as for every skill. What it adds is how it is
written: the function's signature and docstring give its ``input_model`` (a pydantic model
made from the parameters: their types, defaults and descriptions), and its ``run`` calls
the function with the checked arguments as typed values. A parameter annotated
`ToolContext`, `SkillContext` or `SkillHelpers` is not an argument: the runtime passes it.

Write a function tool when the arguments are data a model fills in; write a skill (an
object with ``run(input, context, helpers)``) when the work reads the person's raw input,
has a matcher (``applies``), or asks for further cycles.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, TypedDict, TypeVar, Unpack, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .._base import ConfigError, InputError, OutputNotSerializableError, is_positive_number
from ..memory import MemoryView
from ._docstring import parse_docstring
from ._models import RunState
from ._skill_view import SkillContext, SkillHelpers
from ._tools import ArgumentsRefused, read_arguments

__all__ = ["FunctionTool", "ToolContext", "ToolMaker", "ToolOptions", "function_tool", "tool"]

P = ParamSpec("P")
R = TypeVar("R")

# What providers accept as a tool's name (OpenAI's rule; the strictest of the usual ones).
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolOptions(TypedDict, total=False):
    """What ``@tool(...)`` may be told; each defaults to what the function says."""

    name: str
    """The tool's name (default: the function's)."""
    description: str
    """What it does, for the model (default: the docstring's summary)."""
    timeout_s: float
    """Seconds it may run, in place of the runtime's ``skill_timeout_s``."""
    applies: Callable[[str], bool]
    """A matcher, as a skill's, for when it runs as a skill without a model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """What a function tool gets when a parameter is annotated ``ToolContext``: the run's
    read-only view and the helpers of this call."""

    context: SkillContext
    """The skill's view: ``state``, ``memory``, ``content(ref)``, ``arguments``."""
    helpers: SkillHelpers
    """``append_memory``, ``note_sources``, ``ask_clarification``... while the tool runs."""

    @property
    def state(self) -> RunState:
        """The run's state right now (frozen)."""
        return self.context.state

    @property
    def memory(self) -> MemoryView:
        """What earlier runs retained."""
        return self.context.memory


# The parameter types the runtime fills in itself, and how from (context, helpers).
_INJECTED: dict[Any, Callable[[SkillContext, SkillHelpers], Any]] = {
    ToolContext: lambda context, helpers: ToolContext(context=context, helpers=helpers),
    SkillContext: lambda context, helpers: context,
    SkillHelpers: lambda context, helpers: helpers,
}


@dataclass(frozen=True, slots=True)
class _Parameter:
    name: str
    positional: bool
    """Positional-only in the function: passed by position."""
    field: str | None
    """Its field in the input model, or None when the runtime injects it."""
    inject: Callable[[SkillContext, SkillHelpers], Any] | None = None


class FunctionTool(Generic[P, R]):
    """A typed function as a tool (a skill): make one with ``@agrun.tool``.

    Calling it calls the function; the runtime calls ``run`` instead, with the checked
    arguments on ``context.arguments`` (an instance of ``input_model``).
    """

    def __init__(self, function: Callable[P, R], **options: Unpack[ToolOptions]) -> None:
        """Read ``function``'s signature and docstring.

        Raises:
            ConfigError: not a function, an unknown option, a name a model cannot call,
                ``*args``/``**kwargs``, an annotation that does not resolve, or a type
                pydantic cannot check.
        """
        if not callable(function):
            raise ConfigError(f"tool() takes a function, got {type(function).__name__}")
        unknown = set(options) - set(ToolOptions.__annotations__)
        if unknown:
            raise ConfigError(f"unknown tool option(s): {', '.join(sorted(unknown))}")
        self.function = function
        name = options.get("name")
        description = options.get("description")
        timeout_s = options.get("timeout_s")
        applies = options.get("applies")
        self.name: str = name if name is not None else getattr(function, "__name__", "")
        if not isinstance(self.name, str) or not _TOOL_NAME.match(self.name):
            raise ConfigError(
                f"a tool's name must be 1-64 letters, digits, '_' or '-', got {self.name!r}: "
                "pass name=..."
            )
        doc = parse_docstring(getattr(function, "__doc__", None))
        self.description: str = doc.summary if description is None else description
        if not isinstance(self.description, str):
            raise ConfigError(f"tool {self.name!r}: description must be a string")
        if timeout_s is not None and not is_positive_number(timeout_s):
            raise ConfigError(f"tool {self.name!r}: timeout_s must be a positive number")
        self.timeout_s = timeout_s
        if applies is not None and not callable(applies):
            raise ConfigError(f"tool {self.name!r}: applies must be callable or None")
        self.applies = applies
        self._parameters, self.input_model = _input_model(self.name, function, doc.parameters)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool({self.name!r})"

    def run(self, input: str, context: SkillContext, helpers: SkillHelpers) -> Any:
        """Call the function with the checked arguments (or, run as a skill, with ``input``
        read as its arguments); return its result as JSON data.

        Raises:
            InputError: run as a skill on an input that is not its arguments.
            OutputNotSerializableError: the function returned something not JSON data.
        """
        arguments = context.arguments
        if not isinstance(arguments, self.input_model):
            arguments = self._arguments_of(input)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for parameter in self._parameters:
            if parameter.inject is not None:
                value = parameter.inject(context, helpers)
            else:
                value = getattr(arguments, parameter.field or "")
            if parameter.positional:
                args.append(value)
            else:
                kwargs[parameter.name] = value
        result: Any = self.function(*args, **kwargs)
        if inspect.isawaitable(result):
            return self._later(result)
        return self._plain(result)

    async def _later(self, pending: Awaitable[Any]) -> Any:
        return self._plain(await pending)

    def _plain(self, result: Any) -> Any:
        # A model, a dataclass, a date... becomes the JSON data pydantic would write for it.
        try:
            return to_jsonable_python(result)
        except PydanticSerializationError as error:
            raise OutputNotSerializableError(
                f"tool {self.name!r} returned a {type(result).__name__}, which is not JSON "
                f"data: {error}"
            ) from None

    def _arguments_of(self, input: str) -> BaseModel:
        # Run as a skill (by name, or as the default): the input is the arguments' JSON, or,
        # for a tool of one argument, that argument itself.
        try:
            value: Any = read_arguments(self, input).value
        except ArgumentsRefused as refusal:
            fields = [p.name for p in self._parameters if p.field is not None]
            if len(fields) != 1 or input.lstrip().startswith("{"):
                raise InputError(
                    f"tool {self.name!r} was run as a skill: its input must be a JSON object "
                    f"of its arguments ({', '.join(fields) or 'none'}): {refusal}"
                ) from None
            try:
                value = self.input_model.model_validate({fields[0]: input})
            except ValidationError as error:
                problem = error.errors(include_url=False)[0]["msg"]
                raise InputError(
                    f"tool {self.name!r} was run as a skill on an input that is not its "
                    f"{fields[0]!r}: {problem}"
                ) from None
        assert isinstance(value, self.input_model)
        return value


def function_tool(function: Callable[P, R], **options: Unpack[ToolOptions]) -> FunctionTool[P, R]:
    """``function`` as a tool; an existing `FunctionTool` is kept when nothing is changed."""
    if isinstance(function, FunctionTool):
        if not options:
            return function
        function = function.function
    return FunctionTool(function, **options)


class ToolMaker:
    """``@tool``, ``tool(function)`` and ``tool(name=...)(function)``: a typed function as
    a tool; a runtime's own (``runtime.tool``) registers it there too."""

    def __init__(self, register: Callable[[FunctionTool[Any, Any]], None] | None = None) -> None:
        self._register = register

    @overload
    def __call__(
        self, function: Callable[P, R], /, **options: Unpack[ToolOptions]
    ) -> FunctionTool[P, R]: ...

    @overload
    def __call__(
        self, function: None = None, /, **options: Unpack[ToolOptions]
    ) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...

    def __call__(
        self, function: Callable[..., Any] | None = None, /, **options: Unpack[ToolOptions]
    ) -> Any:
        """Make the tool (name, description and timeout as given, else from the function).

        Raises:
            ConfigError: see `FunctionTool`.
            DuplicateSkillError: (``runtime.tool``) the runtime has a skill of that name.
        """

        def make(target: Callable[..., Any]) -> FunctionTool[..., Any]:
            made = function_tool(target, **options)
            if self._register is not None:
                self._register(made)
            return made

        return make if function is None else make(function)


tool = ToolMaker()
"""``@agrun.tool``: a typed function (sync or async) as a tool; pass it in ``skills=``."""


def _input_model(
    name: str, function: Callable[..., Any], described: dict[str, str]
) -> tuple[tuple[_Parameter, ...], type[BaseModel]]:
    try:
        signature = inspect.signature(function)
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError, ValueError) as error:
        raise ConfigError(
            f"tool {name!r}: its signature cannot be read ({error}); annotate it with types "
            "defined where the function is"
        ) from None
    parameters: list[_Parameter] = []
    fields: dict[str, Any] = {}
    for index, (pname, parameter) in enumerate(signature.parameters.items()):
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ConfigError(
                f"tool {name!r}: *{pname} cannot be offered to a model; name each argument"
            )
        positional = parameter.kind is parameter.POSITIONAL_ONLY
        annotation = hints.get(pname, Any)
        # By identity: an annotation need not be hashable (``Annotated[int, {...}]``).
        inject = next((fill for kind, fill in _INJECTED.items() if annotation is kind), None)
        if inject is not None:
            parameters.append(_Parameter(pname, positional, None, inject))
            continue
        # Fields get neutral names, the parameter's own name being their alias: a parameter
        # called ``json`` or ``_id`` would otherwise clash with pydantic's own attributes.
        key = f"p{index}"
        default = ... if parameter.default is parameter.empty else parameter.default
        # Only a description that is there is passed: a None would hide Annotated's own.
        extra: dict[str, Any] = (
            {}
            if _described(annotation) or pname not in described
            else {"description": described[pname]}
        )
        fields[key] = (annotation, Field(default, alias=pname, **extra))
        parameters.append(_Parameter(pname, positional, key))
    try:
        model = create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
        model.model_json_schema()
    except Exception as error:  # pydantic's many ways to say a type is not for it
        raise ConfigError(
            f"tool {name!r}: its parameters cannot be checked or described as JSON "
            f"({type(error).__name__}: {error})"
        ) from None
    return tuple(parameters), model


def _described(annotation: Any) -> bool:
    # ``Annotated[int, Field(description=...)]`` says it already: the docstring does not win.
    return any(
        isinstance(extra, FieldInfo) and extra.description
        for extra in getattr(annotation, "__metadata__", ())
    )
