import pytest

import agrun
from agrun.testing import FixedClock, SequentialIds


async def test_run_returns_result_with_state() -> None:
    runtime = agrun.create_runtime(clock=FixedClock(), ids=SequentialIds())
    result = await runtime.run("hello")
    assert result.output == "echo: hello"
    assert result.state.run_id == "run-1"
    assert result.state.status == "succeeded"
    wire = result.to_wire()
    assert wire["state"]["runId"] == "run-1"


@pytest.mark.parametrize("bad", [None, 3, b"x", ["hi"]])
async def test_non_string_input_is_a_typed_error(bad: object) -> None:
    runtime = agrun.create_runtime()
    with pytest.raises(agrun.InputError, match="string"):
        await runtime.run(bad)  # type: ignore[arg-type]


def test_public_names_are_sorted_and_importable() -> None:
    assert agrun.__all__ == sorted(agrun.__all__)
    for name in agrun.__all__:
        assert getattr(agrun, name) is not None
