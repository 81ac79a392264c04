"""The context package's public door."""

from __future__ import annotations

import ast
import inspect

import pydantic

import agrun.context as context
from conftest import AGRUN_SOURCE


def test_public_names_are_importable_and_documented() -> None:
    assert len(set(context.__all__)) == len(context.__all__)
    for name in context.__all__:
        value = getattr(context, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), name


def _field_docstrings(cls: type) -> set[str]:
    # The fields documented by a string right under them, in cls and its bases. (The models do
    # not read these at import: that parses their source, which a page pays on a cold boot.)
    documented: set[str] = set()
    for klass in cls.__mro__:
        if not (issubclass(klass, pydantic.BaseModel) and klass.__module__.startswith("agrun")):
            continue
        module = AGRUN_SOURCE.parent.joinpath(*klass.__module__.split("."))
        path = module / "__init__.py" if module.is_dir() else module.with_suffix(".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        (body,) = (
            node
            for node in tree.body
            if isinstance(node, ast.ClassDef) and node.name == klass.__qualname__
        )
        for node, after in zip(body.body, body.body[1:], strict=False):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
                and after.value.value.strip()
            ):
                documented.add(node.target.id)
    return documented


def test_every_model_field_has_a_description_line() -> None:
    checked = 0
    for name in context.__all__:
        value = getattr(context, name)
        if inspect.isclass(value) and issubclass(value, pydantic.BaseModel):
            documented = _field_docstrings(value)
            for field, info in value.model_fields.items():
                assert info.description or field in documented, (name, field)
                checked += 1
    assert checked > 20  # the check reached the models' fields


def test_models_take_camel_case_and_give_camel_case() -> None:
    request = context.ContextRequest.model_validate(
        {"messages": [{"id": "m", "role": "tool", "toolCallId": "c"}], "systemPrompt": "s"}
    )
    assert request.messages[0].tool_call_id == "c"
    dumped = request.model_dump(by_alias=True)
    assert "systemPrompt" in dumped and "toolCallId" in dumped["messages"][0]


def test_the_package_reads_no_ambient_time_ids_or_randomness() -> None:
    import ast

    forbidden = {"time", "datetime", "random", "uuid", "secrets", "os", "js", "pyodide"}
    paths = sorted((AGRUN_SOURCE / "context").glob("*.py"))
    assert len(paths) > 10
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = {node.module.split(".")[0]}
            else:
                continue
            assert not names & forbidden, (path.name, names & forbidden)


def test_trusted_entries_equal_constructed_ones() -> None:
    from agrun.context._item import trusted_entry

    values = {
        "id": "message:m",
        "layer": "L0",
        "kind": "message",
        "content": "hi",
        "sources": ("m",),
        "tokens": 3,
        "role": "user",
        "name": None,
        "tool_calls": (),
        "tool_call_id": None,
        "compressed": False,
        "score": None,
    }
    fast = trusted_entry(dict(values))
    slow = context.ContextEntry.model_construct(**values)
    assert fast == slow
    assert fast.to_wire() == slow.to_wire()
    assert fast.model_fields_set == slow.model_fields_set
    assert context.ContextEntry.model_validate(fast.model_dump()) == fast
