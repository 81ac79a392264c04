"""Window guards (spec 003): the current request and the wire units."""

from __future__ import annotations

import pytest

from agrun.context import Message, current_request_index, is_said_by_person, wire_units
from conftest import LIBRARY_FRAMES


def user(i: str, text: str, **kw: object) -> Message:
    return Message(id=i, role="user", content=text, **kw)


def test_anchor_is_the_last_person_message_matching_the_input() -> None:
    window = [user("1", "do it"), user("2", "other"), user("3", "do it"), user("4", "later")]
    assert current_request_index(window, "do it") == 2


def test_anchor_falls_back_to_the_last_person_message() -> None:
    window = [user("1", "a"), Message(id="2", role="assistant", content="b"), user("3", "c")]
    assert current_request_index(window, "not there") == 2
    assert current_request_index(window) == 2


@pytest.mark.parametrize("author", LIBRARY_FRAMES)
def test_library_frames_never_become_the_anchor(author: str) -> None:
    # An injected message must name its injector (Message refuses it otherwise).
    by = {"injected_by": "rule-7"} if author == "injected" else {}
    window = [user("1", "the request"), user("2", "the request", author=author, **by)]
    assert current_request_index(window, "the request") == 0
    assert not is_said_by_person(window[1])


def test_a_message_with_injected_by_is_not_a_person() -> None:
    window = [user("1", "x", author="injected", injected_by="rule-7")]
    assert current_request_index(window, "x") == -1
    # A message built without validation (model_construct) that claims a person wrote it
    # while naming an injector is still not taken for the request.
    forged = Message.model_construct(id="2", role="user", content="x", injected_by="rule-7")
    assert not is_said_by_person(forged)
    assert current_request_index([forged], "x") == -1


def test_no_anchor_is_an_honest_minus_one() -> None:
    assert current_request_index([]) == -1
    frames = [Message(id="1", role="assistant", content="hi"), user("2", "x", author="nudge")]
    assert current_request_index(frames, "x") == -1


def test_wire_units_keep_calls_with_their_results_newest_first() -> None:
    window = [
        Message(id="t0", role="tool", content="orphan", tool_call_id="c0"),
        user("u1", "q"),
        Message(id="a1", role="assistant", tool_calls=[{"id": "c1", "name": "f"}]),
        Message(id="t1", role="tool", content="r", tool_call_id="c1"),
        Message(id="r1", role="assistant", content="done"),
    ]
    assert list(wire_units(window)) == [(4, 5), (2, 4), (1, 2), (0, 1)]
