"""Typed results: ``run(input, output_type=Model)`` (Python) and ``{ outputSchema }`` (JS).

The model is asked for structured output in two ways at once, so any provider gets it: the
request carries an OpenAI ``response_format`` of type ``json_schema`` (the provider's JSON
mode: the OpenAI adapter sends it, llama-server constrains its sampling with it, a page's
provider sees it as ``responseFormat``), and the system prompt says the same in words (for a
provider that ignores ``response_format``). Tools stay offered; the answer that ends the turn
is read as JSON and checked: against the pydantic model (``result.output`` is then its
instance) or against the JSON Schema (``result.output`` is the checked plain data). A reply
that does not fit goes back to the model as a ``schema_correction`` frame, within the run's
``max_corrections``; past it the run fails ``output_validation_failed``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .._base import ConfigError, find_uncrossable, json_nests_deeper
from .._base._json_schema import schema_problem

__all__ = ["OutputRefused", "OutputSpec"]

MAX_OUTPUT_DEPTH = 64
# A reply wrapped in a Markdown code fence, as small models often write JSON.
_FENCED = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


class OutputRefused(Exception):
    """A reply that is not the output asked for (internal; the model is told why)."""


@dataclass(frozen=True)
class OutputSpec:
    """What a run's answer must be: a JSON Schema, and the pydantic model behind it if any."""

    name: str
    schema: Mapping[str, Any]
    model: type[BaseModel] | None = None

    @classmethod
    def of(cls, output_type: Any = None, output_schema: Any = None) -> OutputSpec | None:
        """The spec for ``output_type`` (a pydantic model class) or ``output_schema`` (a
        JSON Schema object, as a page gives it); None when neither is given.

        Raises:
            ConfigError: both are given, or one is not what it must be.
        """
        if output_type is not None and output_schema is not None:
            raise ConfigError("give output_type or output_schema, not both")
        if output_type is not None:
            if not (isinstance(output_type, type) and issubclass(output_type, BaseModel)):
                raise ConfigError(
                    "output_type must be a pydantic model class (a BaseModel subclass), got "
                    f"{output_type!r}"
                )
            return cls(output_type.__name__, output_type.model_json_schema(), output_type)
        if output_schema is None:
            return None
        if not isinstance(output_schema, Mapping) or not output_schema:
            raise ConfigError(f"output_schema must be a JSON Schema object, got {output_schema!r}")
        problem = find_uncrossable(output_schema)
        if problem is not None:
            raise ConfigError(f"output_schema must be plain JSON: {problem}")
        title = output_schema.get("title")
        name = re.sub(r"[^A-Za-z0-9_-]", "_", title)[:64] if isinstance(title, str) else ""
        return cls(name or "output", dict(output_schema))

    def response_format(self) -> dict[str, Any]:
        """The request's ``response_format``: OpenAI's ``json_schema`` structured output."""
        return {"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema}}

    def instruction(self) -> str:
        """What the system prompt adds, for a provider without a JSON mode."""
        schema = json.dumps(self.schema, ensure_ascii=False, separators=(",", ":"))
        return (
            "When you give your final answer, answer with one JSON value and nothing else "
            f"(no prose, no code fence), matching this JSON Schema: {schema}"
        )

    def read(self, text: str) -> tuple[Any, Any]:
        """The reply ``text`` as output: ``(plain, typed)``, the checked JSON data and the
        value ``result.output`` carries (the model's instance, or the same data).

        Raises:
            OutputRefused: not JSON, too deep, or not what the schema or model says.
        """
        fenced = _FENCED.match(text)
        body = fenced.group(1) if fenced else text
        if json_nests_deeper(body, MAX_OUTPUT_DEPTH):
            raise OutputRefused(f"the answer nests deeper than {MAX_OUTPUT_DEPTH} levels")
        try:
            value = json.loads(body)
        except ValueError as error:
            raise OutputRefused(f"the answer is not JSON ({error})") from None
        if self.model is not None:
            try:
                typed = self.model.model_validate(value)
            except ValidationError as error:
                first = error.errors(include_url=False)[0]
                where = ".".join(str(part) for part in first["loc"]) or "the answer"
                raise OutputRefused(f"{where}: {first['msg']}") from None
            return typed.model_dump(mode="json"), typed
        problem = schema_problem(self.schema, value)
        if problem is not None:
            raise OutputRefused(problem)
        return value, value
