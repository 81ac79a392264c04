"""The quick answers a turn takes for plain data (issue 25.5) say what the full walks say.

`find_uncrossable` and `SensitiveContentFilter.check` first ask a pass that builds no paths;
only when it finds something does the walk that names each problem run; `plain_copy` copies
and checks in one pass what the content store used to check, copy and make canonical in
three. These check, on random data with every kind of problem in it, that the answers are
the slow paths'.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agrun._base import CheckedDict, CheckedList, ConfigError, ReadOnlyError, freeze_json
from agrun._base._plain import (
    MAX_PLAIN_DEPTH,
    _check,
    find_uncrossable,
    plain_copy,
    scrubbed,
    thaw,
)
from agrun.content import ContentLimits, ContentStore, verified
from agrun.content._store import _BodyDict, _BodyList, _canonical, _measure
from agrun.context._recall_text import _terms, term_set, terms_of
from agrun.sensitive import PatternRedactor, SensitiveContentFilter
from agrun.sensitive._redactor import _compiled
from agrun.storage import TurnCommit
from agrun.storage._transfer import encode_commit, encode_json
from agrun.trace._attribution import _answer_runs, _grams, _shared_grams, sentences_of

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SECRET = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
TEXTS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ["plain", "x\ud800y", SECRET, f"key: {SECRET}", "password=hunter2", "d\x7fé", "9" * 17]
    ),
)
KEYS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["apiKey", "client_secret", "pageToken", "name", "k\udc00", SECRET]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-3, 3).map(float),  # integral floats, written as integers in a digest
    TEXTS,
    st.binary(max_size=8),
)


def _values(children: Any) -> Any:
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(KEYS, children, max_size=4),
        st.dictionaries(st.integers(0, 3), children, max_size=2),
        st.frozensets(st.integers(0, 3), max_size=2),
    )


DATA = st.recursive(SCALARS, _values, max_leaves=20)


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": [value]}
    return value


@SETTINGS
@given(DATA)
def test_the_quick_crossing_check_agrees_with_the_walk(value: Any) -> None:
    walk = _check(value, "$", set(), MAX_PLAIN_DEPTH)
    assert find_uncrossable(value) == walk
    assert find_uncrossable(value, max_depth=3) == _check(value, "$", set(), 3)


def test_the_quick_crossing_check_sees_depth_and_cycles() -> None:
    deep = _nested(40)  # 80 levels of objects and lists
    assert find_uncrossable(deep) == _check(deep, "$", set(), MAX_PLAIN_DEPTH) is not None
    looped: list[Any] = [1]
    looped.append({"again": looped})
    assert find_uncrossable(looped) == "$[1].again contains itself (a cycle)"
    shared = [1, 2]
    assert find_uncrossable({"a": shared, "b": shared}) is None


@SETTINGS
@given(DATA)
def test_a_checked_copy_crosses_exactly_where_its_plain_copy_does(value: Any) -> None:
    # A checked root is not walked again by the crossing check: its height alone must
    # give the walk's answer, at every depth bound and wherever it is nested; a part of
    # it (no height of its own) is walked like plain data.
    plain = plain_copy(value)
    checked = plain_copy(value, frozen=(CheckedDict, CheckedList))
    assert (checked is None) == (plain is None)
    if checked is None or plain is None:
        return
    assert checked == plain
    body = checked[0]
    parts = (
        list(body.values())
        if isinstance(body, dict)
        else list(body)
        if isinstance(body, list)
        else []
    )
    for bound in range(0, 8):
        for made, same in [(body, plain[0]), ({"x": [body]}, {"x": [plain[0]]})]:
            assert (find_uncrossable(made, max_depth=bound) is None) == (
                find_uncrossable(same, max_depth=bound) is None
            ), (bound, made)
        for part in parts:
            assert (find_uncrossable(part, max_depth=bound) is None) == (
                find_uncrossable(thaw(part), max_depth=bound) is None
            )


def test_a_checked_copy_is_read_only_all_the_way_down() -> None:
    copied = plain_copy({"a": [{"b": [1]}]}, frozen=(CheckedDict, CheckedList))
    assert copied is not None
    body = copied[0]
    assert body.height == 4
    with pytest.raises(ReadOnlyError):
        body["a"][0]["b"].append(2)
    with pytest.raises(ReadOnlyError):
        body["c"] = 1
    assert json.dumps(body) == '{"a": [{"b": [1]}]}'


@SETTINGS
@given(DATA)
# Found by hypothesis: the one empty tuple, met too deep on the walk's path first.
@example([{0: {"": {0: ()}, "0": ()}}])
def test_the_quick_secret_check_agrees_with_the_walk(value: Any) -> None:
    quick = SensitiveContentFilter(redactor=PatternRedactor(), max_depth=5)
    walker = SensitiveContentFilter(redactor=PatternRedactor(), max_depth=5)
    verdict = quick.check({"body": value})
    walked: list[str] = []
    walker._walk({"body": value}, walked)
    assert verdict.reasons == tuple(dict.fromkeys(walked))
    assert verdict.allowed is not walked


def test_a_secret_deep_in_plain_data_is_still_named_by_its_path() -> None:
    verdict = SensitiveContentFilter().check({"calls": [{"entries": [{"text": SECRET}]}]})
    assert not verdict.allowed
    assert verdict.reasons[0].startswith("$.calls[0].entries[0].text: ")
    assert SensitiveContentFilter().check({"calls": [{"pageToken": "abc"}]}).allowed
    refused = SensitiveContentFilter().check({"calls": [{"apiKey": "abc"}]})
    assert refused.reasons == ("$.calls[0].apiKey: secret key name",)


def _floats_in(value: Any) -> bool:
    """Whether ``value`` holds a float canonical JSON writes as an integer (``2.0``)."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_floats_in(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_floats_in(item) for item in value)
    return False


@SETTINGS
@given(DATA)
def test_the_one_pass_copy_is_thaw_and_only_for_data_that_crosses(value: Any) -> None:
    copied = plain_copy(value)
    if find_uncrossable(value) is not None:
        assert copied is None
        return
    if copied is None:  # a set, bytes: not plain JSON types; the slow path takes them
        return
    body, floats = copied
    assert body == thaw(value)
    if isinstance(value, dict | list | tuple):
        assert body is not value  # a copy the store owns
    assert floats == _floats_in(value)


@SETTINGS
@given(DATA)
def test_a_stored_body_has_the_digest_of_its_canonical_json(value: Any) -> None:
    store = ContentStore(ContentLimits(max_bytes=1 << 30), SensitiveContentFilter())
    entry = store.put("content:r", value, run_id="r", now_ms=1)
    if entry is None:  # refused: it holds a secret
        return
    assert (entry.bytes, entry.digest) == _measure(thaw(entry.body))
    assert verified(entry) is entry


def test_secret_patterns_are_compiled_only_when_a_text_needs_them() -> None:
    # A runtime's creation compiled the whole catalog: 150-250 ms of every warm page start.
    _compiled.cache_clear()
    redactor = PatternRedactor()
    assert _compiled.cache_info().currsize == 0
    assert redactor.find("plain words about the weather in Paris") == ()
    assert _compiled.cache_info().currsize == 0
    assert redactor.find(f"my key is {SECRET}")
    assert 0 < _compiled.cache_info().currsize < len(redactor.patterns)
    # A host's own pattern is compiled at once, so a bad one is refused where it is given.
    with pytest.raises(re.error):
        PatternRedactor(["(unclosed"])


@SETTINGS
@given(st.text(max_size=200))
def test_remembered_terms_are_the_terms_and_a_caller_cannot_change_them(text: str) -> None:
    first = terms_of(text)
    assert first == _terms(text)
    first.append("changed")  # a caller's list is its own: the memo keeps a tuple
    assert terms_of(text) == _terms(text)
    long = text + " word" * 1_000  # past the memo's bound: read afresh, the same terms
    assert terms_of(long) == _terms(long)
    assert term_set(text) == set(_terms(text))
    assert term_set(long) == set(_terms(long))


def _scrub(text: str) -> str:
    return PatternRedactor().redact(text)


@SETTINGS
@given(DATA)
def test_the_scrubbing_copy_is_the_copy_of_the_scrubbed_value(value: Any) -> None:
    assert plain_copy(value, scrub=_scrub) == plain_copy(scrubbed(value, _scrub))


class _WalkingFilter(SensitiveContentFilter):
    """The filter without its one-walk copy: every put takes the slow path (copy, then the
    check that walks and names each reason)."""

    def clean_copy(self, value: Any, **_: Any) -> tuple[Any, bool] | None:
        return None


def _stores(extra: Any = None) -> tuple[ContentStore, ContentStore]:
    limits = ContentLimits(max_bytes=4_000)
    return (
        ContentStore(limits, _WalkingFilter(extra=extra)),
        ContentStore(limits, SensitiveContentFilter(extra=extra)),
    )


def _same_entry(slow: Any, quick: Any) -> None:
    assert (quick is None) == (slow is None)
    if quick is not None and slow is not None:
        assert quick.to_wire() == slow.to_wire()
        assert thaw(quick.body) == thaw(slow.body)


@SETTINGS
@given(DATA)
def test_a_trace_kept_in_one_walk_is_the_entry_the_slow_path_keeps(value: Any) -> None:
    # TraceStore.put scrubs, copies, checks and scans a trace in one walk (`put_scrubbed`);
    # what the store keeps or refuses is what `put` of the scrubbed value gives.
    slow, quick = _stores()
    kept = slow.put("trace:r", scrubbed(value, _scrub), run_id="r", now_ms=1)
    _same_entry(kept, quick.put_scrubbed("trace:r", value, _scrub, run_id="r", now_ms=1))


@SETTINGS
@given(DATA, st.sampled_from([None, "CUST-", "a"]))
def test_a_body_scanned_as_it_is_copied_is_kept_or_refused_as_the_walk_decides(
    value: Any, refused_word: str | None
) -> None:
    # `put` takes the filter's one-walk copy for plain data without a secret; the host's
    # own check is still asked of it.
    def host(entry: Any) -> bool:
        return refused_word is not None and refused_word in repr(entry)

    slow, quick = _stores(extra=host)
    kept = slow.put("content:r", value, run_id="r", now_ms=1)
    _same_entry(kept, quick.put("content:r", value, run_id="r", now_ms=1))


@pytest.mark.parametrize("levels", [62, 63, 64, 65])
def test_the_one_walk_scan_refuses_what_is_too_deep_for_the_filter(levels: int) -> None:
    # As a body, a value sits a level below the entry the filter is given: the one-walk
    # copy takes only what the filter's own depth bound lets through.
    slow, quick = _stores()
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    kept = slow.put("content:r", value, run_id="r", now_ms=1)
    _same_entry(kept, quick.put("content:r", value, run_id="r", now_ms=1))
    assert SensitiveContentFilter().clean_copy(value) is None or (
        SensitiveContentFilter().check({"body": value}).allowed
    )


def _freeze_one_call_a_node(value: Any, dict_type: Any, list_type: Any) -> Any:
    # freeze_json as it was before scalars were taken without a call each.
    if isinstance(value, dict):
        return dict_type(
            {k: _freeze_one_call_a_node(v, dict_type, list_type) for k, v in value.items()}
        )
    if isinstance(value, list | tuple):
        return list_type(_freeze_one_call_a_node(v, dict_type, list_type) for v in value)
    return value


def _canonical_one_call_a_node(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {key: _canonical_one_call_a_node(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical_one_call_a_node(item) for item in value]
    return value


def _shape(value: Any) -> Any:
    """``value`` with each container's exact type beside it (equality ignores it)."""
    if isinstance(value, dict):
        return (type(value), [(k, _shape(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value), [_shape(v) for v in value])
    return (type(value), value)


@SETTINGS
@given(DATA)
def test_freezing_and_the_canonical_form_are_what_one_call_a_node_gave(value: Any) -> None:
    frozen = freeze_json(value, _BodyDict, _BodyList)
    assert _shape(frozen) == _shape(_freeze_one_call_a_node(value, _BodyDict, _BodyList))
    assert _shape(_canonical(value)) == _shape(_canonical_one_call_a_node(value))


def _encoded(encode: Any) -> tuple[str, str]:
    try:
        return "text", encode()
    except ConfigError as error:
        return "refused", str(error)


class _Inner(BaseModel):
    x: float = 2.0


@SETTINGS
@given(DATA, st.booleans())
@example(_Inner(), False)  # a model inside: the dump made it plain data, and still does
@example({"a": "d\x7fé", "b": [1.0, 2**53]}, True)
def test_a_commit_is_encoded_or_refused_as_its_dump_was(value: Any, ascii_only: bool) -> None:
    commit = TurnCommit(
        session_id="s",
        turn_id="t",
        messages=[{"said": value}],
        content_entries=[{"ref": "content:r", "body": value}],
        last_run={"output": value},
    )
    assert _encoded(lambda: encode_commit(commit, ascii_only=ascii_only)) == _encoded(
        lambda: encode_json(commit.model_dump(by_alias=True), ascii_only=ascii_only)
    )


@SETTINGS
@given(DATA)
def test_an_entry_crosses_as_pydantic_would_dump_it(value: Any) -> None:
    # ContentEntry.to_wire thaws its frozen body itself (pydantic's walk is slower, and in
    # WebAssembly it stops at ~50 levels): the same wire form, key order included.
    entry = ContentStore(ContentLimits(), SensitiveContentFilter()).put(
        "content:r", value, run_id="r", now_ms=1
    )
    if entry is None:
        return
    wire, dumped = entry.to_wire(), entry.model_dump(mode="json", by_alias=True)
    assert wire == dumped
    assert list(wire) == list(dumped)
    assert json.dumps(wire) == json.dumps(dumped)


WORDS = st.sampled_from(["the", "cat", "sat", "on", "mat", "Mat", "a", "dog", "ran"])
PROSE = st.lists(
    st.tuples(WORDS, st.sampled_from([" ", " ", ", ", ". ", "! ", "\n"])), max_size=30
).map(lambda pairs: "".join(word + gap for word, gap in pairs))


@SETTINGS
@given(PROSE, PROSE)
def test_the_runs_an_entry_shares_with_an_answer_are_those_of_whole_sets(
    answer: str, entry: str
) -> None:
    # Attribution looks for the answer's runs of NGRAM words only where one could start in
    # an entry; the sentences it marks are those whose set of runs meets the entry's.
    spans = sentences_of(answer)
    said, first = _answer_runs(answer, spans)
    whole = {i for i, (start, end) in enumerate(spans) if _grams(answer[start:end]) & _grams(entry)}
    assert _shared_grams(entry, said, first) == whole
