import pytest

import agrun
from agrun import (
    MemoryEntry,
    Observation,
    ReadOnlyError,
    RunError,
    RunStarted,
    RunState,
    parse_event,
)


def test_run_state_has_the_spec_fields_and_no_output() -> None:
    assert list(RunState.model_fields) == [
        "run_id",
        "status",
        "step_count",
        "cycle_count",
        "phase",
        "selected_skill",
        "observation",
        "error",
        "oodae",
        # The continuity model spec 000 exposes through the run state.
        "context_snapshot",
        "read_attempt_signal",
    ]
    assert "output" not in RunState.model_fields


def test_wire_form_is_camel_case() -> None:
    state = RunState(run_id="run-1", status="running", phase="act", selected_skill="echo")
    assert state.to_wire() == {
        "runId": "run-1",
        "status": "running",
        "stepCount": 0,
        "cycleCount": 0,
        "phase": "act",
        "selectedSkill": "echo",
        "observation": None,
        "error": None,
        "oodae": {"cycles": []},
        "contextSnapshot": {"sessionMemory": None, "inquiryContext": None},
        "readAttemptSignal": None,
    }


def test_models_read_back_from_their_wire_form() -> None:
    error = RunError(code="skill_timeout", message="slow", skill="s", phase="act", cycle=1)
    assert RunError.model_validate(error.to_wire()) == error


@pytest.mark.parametrize("field", ["status", "phase", "run_id"])
def test_setting_a_field_is_a_typed_error(field: str) -> None:
    state = RunState(run_id="run-1", status="running")
    with pytest.raises(ReadOnlyError, match=f"RunState.{field} is read-only"):
        setattr(state, field, "x")
    assert state.status == "running"


def test_deleting_a_field_is_a_typed_error() -> None:
    state = RunState(run_id="run-1", status="running")
    with pytest.raises(ReadOnlyError):
        del state.status


def test_read_only_error_is_also_an_attribute_error() -> None:
    assert issubclass(ReadOnlyError, AttributeError)
    assert issubclass(ReadOnlyError, agrun.AgrunError)


def test_memory_entry_data_is_deeply_frozen_but_dumps_plain() -> None:
    entry = MemoryEntry(
        id="mem-1",
        seq=1,
        run_id="run-1",
        kind="fact",
        text="t",
        data={"tags": ["a"], "nested": {"n": 1}},
        created_at=5,
        source="skill",
    )
    with pytest.raises(TypeError):
        entry.data["tags"] = []  # type: ignore[index]
    with pytest.raises(AttributeError):
        entry.data["tags"].append("b")  # type: ignore[union-attr]
    assert entry.to_wire()["data"] == {"tags": ["a"], "nested": {"n": 1}}
    assert MemoryEntry.model_validate(entry.to_wire()) == entry


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValueError, match="output"):
        RunState(run_id="r", status="running", output="x")  # type: ignore[call-arg]


def test_events_parse_back_by_kind() -> None:
    event = RunStarted(run_id="run-1", seq=1, at=7, input="hi", input_chars=2, requested_skill=None)
    wire = event.to_wire()
    assert wire == {
        "runId": "run-1",
        "seq": 1,
        "at": 7,
        "kind": "RunStarted",
        "inputChars": 2,
        "input": "hi",
        "requestedSkill": None,
    }
    assert parse_event(wire) == event


def test_observation_wire_form() -> None:
    observation = Observation(
        cycle=1, skill="echo", outcome="succeeded", summary="hi", output_kind="text"
    )
    assert observation.to_wire() == {
        "cycle": 1,
        "skill": "echo",
        "outcome": "succeeded",
        "summary": "hi",
        "outputKind": "text",
        "errorCode": None,
    }
