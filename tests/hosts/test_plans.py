"""The compiled mapping back (``hosts.plans``) against the reference walk (``hosts.inverse.back``).

For every host and every corpus tool the host is shown reshaped, shown-side values (the shown
form of the server's instances, and shapes drawn from the shown schema, ``null``s and JSON texts
that do not parse included) map back to the same value through both, or raise the same
``BackError`` with the same pointer; neither changes its argument, and a part that needs no change
is returned as it is (no copy).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_guard.hosts import HOSTS, BackError, lower
from mcp_guard.hosts.inverse import back
from mcp_guard.hosts.plans import compile_back
from tests.hosts.test_properties import corpus, guided, json_schema_view, lowered, needs_corpus, same


def outcome(fn: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(value)
    except BackError as exc:
        return "refused", (exc.pointer, str(exc))


def agree(result: Any, w: Any) -> None:
    plan = compile_back(result.mapping)
    before = copy.deepcopy(w)
    expected = outcome(lambda v: back(result.mapping, v), w)
    got = outcome((lambda v: v) if plan is None else plan, w)
    assert got[0] == expected[0], (result.host, w)
    if got[0] == "ok":
        assert same(got[1], expected[1]), (result.host, w)
    else:
        assert got[1] == expected[1]
    assert same(w, before)  # the argument is never changed


def mangled(w: Any) -> st.SearchStrategy[Any]:
    """``w`` with one member replaced by a null, a text that is not JSON, a value that is not a string, or
    removed."""
    if not isinstance(w, dict) or not w:
        return st.just(w)
    key = st.sampled_from(sorted(w))
    swap = st.sampled_from([None, "null", "{not json", '{"a": 1, "a": 2}', "NaN", "[1]", 1, {}, [1]])
    return st.one_of(
        st.tuples(key, swap).map(lambda kv: {**w, kv[0]: kv[1]}),
        key.map(lambda k: {m: x for m, x in w.items() if m != k}),
    )


@needs_corpus
@pytest.mark.parametrize("host", ["openai-strict", "gemini"])  # the hosts that reshape
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_the_compiled_mapping_back_is_the_reference_walk(host: str, data: st.DataObject) -> None:
    reshaped = [i for i in range(len(corpus())) if lowered(i, host).presentable and not lowered(i, host).identity]
    assert reshaped
    index = data.draw(st.sampled_from(reshaped), label="tool")
    schema = corpus()[index][1]
    result = lowered(index, host)
    v = data.draw(guided(schema, schema), label="v")
    try:
        w = result.present(v)
        json.dumps(w, allow_nan=False)
    except (TypeError, ValueError):
        w = None
    if w is not None:
        agree(result, w)
        agree(result, data.draw(mangled(w), label="mangled"))
        agree(result, data.draw(mangled(w).flatmap(mangled), label="mangled twice"))  # (a null beside a JSON text)
    agree(result, data.draw(guided(json_schema_view(result.schema), result.schema), label="w"))


def test_a_json_text_of_null_beside_a_null_meaning_absent_stays_null() -> None:
    """Red team 33: the null that means "absent" is the model's, not a JSON text that parses to null."""
    schema = {"type": "object", "properties": {"v": {}, "arr": {"type": "array"}, "m": {"type": "object"}}}
    result = lower(schema, HOSTS["openai-strict"])
    for w, expected in [
        ({"v": "null", "arr": None, "m": None}, {"v": None}),
        ({"v": "null"}, {"v": None}),
        ({"v": None, "arr": None, "m": "{}"}, {"m": {}}),
        ({"v": "null", "arr": ["null"], "m": None}, {"v": None, "arr": [None]}),  # (array items shown as JSON text)
    ]:
        assert back(result.mapping, w) == expected
        agree(result, w)


def test_a_value_shown_as_json_text_sent_as_anything_but_a_string_is_refused() -> None:
    """Red team rt39b F1: the model was shown a string of JSON text; a raw value there lies outside the
    schema it was shown and has no inverse. It once passed unchanged (a raw number for an any-type item),
    and a refusal below it spoke of "the JSON written" there."""
    schema = {
        "type": "object",
        "properties": {"l": {"type": "array", "items": {}}, "m": {"type": "object"}},
        "required": ["l"],
    }
    result = lower(schema, HOSTS["openai-strict"])
    plan = compile_back(result.mapping)
    assert plan is not None
    assert plan({"l": ["1", '{"a": 1}'], "m": None}) == {"l": [1, {"a": 1}]}
    for w, pointer in [
        ({"l": [1], "m": None}, "/l/0"),
        ({"l": ["1", None], "m": None}, "/l/1"),
        ({"l": [], "m": {}}, "/m"),
        ({"l": [[1]], "m": None}, "/l/0"),
    ]:
        for mapping in (plan, lambda v: back(result.mapping, v)):
            with pytest.raises(BackError) as caught:
                mapping(w)
            assert caught.value.pointer == pointer, w
            assert "must be JSON text" in str(caught.value)
        agree(result, w)


def test_what_needs_no_change_is_returned_as_it_is() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "n": {"type": "integer"},
            "inner": {"type": "object", "properties": {"meta": {"type": "object"}}, "required": ["meta"]},
        },
        "required": ["q"],
    }
    result = lower(schema, HOSTS["openai-strict"])
    plain = {"q": "a", "n": 1}
    assert result.back(plain) is plain  # no null, nothing reshaped inside
    assert result.back({"q": "a", "n": None, "inner": None}) == {"q": "a"}
    nested = {"q": "a", "inner": {"meta": '{"k": [1]}'}}
    assert result.back(nested) == {"q": "a", "inner": {"meta": {"k": [1]}}}
    assert nested == {"q": "a", "inner": {"meta": '{"k": [1]}'}}
    with pytest.raises(BackError) as refused:
        result.back({"q": "a", "inner": {"meta": "{"}})
    assert refused.value.pointer == "/inner/meta"
    assert (
        compile_back(lower({"type": "object", "properties": {"q": {"type": "string"}}}, HOSTS["openai"]).mapping)
        is None
    )


def test_a_recursive_reference_maps_back_through_its_definition() -> None:
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "required": ["tree"],
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["label"],
            }
        },
    }
    result = lower(schema, HOSTS["openai-strict"])
    assert result.presentable, result.reasons
    shown = {"tree": {"label": "a", "kids": [{"label": "b", "kids": None}, {"label": "c", "kids": []}]}}
    expected = {"tree": {"label": "a", "kids": [{"label": "b"}, {"label": "c", "kids": []}]}}
    assert result.back(shown) == expected == back(result.mapping, shown)
