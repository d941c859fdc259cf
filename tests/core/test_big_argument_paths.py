"""The inlined fast paths of the 1 MiB argument (issue 11, speed goal b) keep the exact verdicts.

``multipleOf`` by a decimal fraction tests a double inline (``values.multiple_accept``) before it
asks ``values.is_multiple``; an ``anyOf`` of a scalar schema and bare types runs the scalar's
tests inline. Each is compared with the exact rule (``Fraction`` of the literals) or with
python-jsonschema.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from typing import Any

import jsonschema
import pytest

from mcp_guard import classify
from mcp_guard import compile as compile_schema
from mcp_guard.core.extended.values import is_multiple, literal

try:
    classify({}, profile="extended")
except ValueError:
    pytest.skip("this build has no `extended` profile yet", allow_module_level=True)


def exact_multiple(value: float | int, divisor: float | int) -> bool:
    return (Fraction(literal(value)) / Fraction(literal(divisor))).denominator == 1


def values_near(divisor: float) -> list[float | int]:
    rng = random.Random(11)
    found: list[float | int] = [0, 3, 10**20, 0.0, 1e300, 2.0**53, 2.0**53 - 1, 1e-300, 5e-324]
    for _ in range(1500):
        n = rng.choice([rng.randint(-(10**6), 10**6), rng.randint(-(2**44), 2**44), rng.randint(-(10**17), 10**17)])
        found += [n * divisor, float(repr(n * divisor)), n * divisor + rng.choice([1e-9, 1e-3, 0.5]) * divisor]
        found.append(round(rng.uniform(-1e6, 1e6), rng.randint(0, 6)))
    return found


@pytest.mark.parametrize("divisor", [0.01, 0.1, 0.25, 2.5, 0.3, 1e-7, 0.015, 7.5])
def test_an_inlined_multiple_of_agrees_with_the_exact_rule(divisor: float) -> None:
    compiled = compile_schema({"type": "object", "properties": {"x": {"multipleOf": divisor}}}, profile="extended")
    assert "round(" in (compiled.source or "")  # the double's sure test stands inline
    for value in values_near(divisor):
        want = exact_multiple(value, divisor)
        assert is_multiple(value, divisor) is want, (value, divisor)
        assert compiled.check({"x": value}).ok is want, (value, divisor)


def test_an_inlined_multiple_of_by_a_fraction_tests_an_int_by_its_remainder() -> None:
    compiled = compile_schema({"type": "object", "properties": {"x": {"multipleOf": 2.5}}}, profile="extended")
    for value in (0, 5, 10, -15, 2, 3, 7, 10**30 + 5, 10**30 + 1):
        assert compiled.check({"x": value}).ok is exact_multiple(value, 2.5), value


def test_a_double_past_the_sure_test_still_asks_the_exact_rule() -> None:
    compiled = compile_schema({"type": "object", "properties": {"x": {"multipleOf": 0.01}}}, profile="extended")
    assert compiled.check({"x": 12.34}).ok and compiled.check({"x": 1e20}).ok and compiled.check({"x": 2.0**60}).ok
    assert not compiled.check({"x": 12.345}).ok


OPTIONAL_PRICE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "p": {"anyOf": [{"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.01}, {"type": "null"}]},
        "s": {"anyOf": [{"type": "boolean"}, {"type": "string", "maxLength": 3, "format": "date"}]},
        "o": {"anyOf": [{"type": "integer", "minimum": 5}, {"type": "number"}]},
    },
}

SAMPLES: list[Any] = [None, 0, -1, 1, 2.5, 12.345, 0.01, 1e300, True, False, "", "abc", "abcd", [], {}, [1], 5, 4.0]


def test_an_any_of_beside_bare_types_runs_its_scalar_branch_inline() -> None:
    source = compile_schema(OPTIONAL_PRICE, profile="extended").source or ""
    fast = source.split("\ndef c", 1)[0]
    assert "if not (y is None):" in fast and "if not (type(y) is bool):" in fast
    assert fast.count("def v") == 3  # the root, `o` and its overlapping integer branch (calls)


@pytest.mark.parametrize("name", ["p", "s", "o"])
def test_an_inlined_any_of_keeps_the_verdicts_and_the_findings(name: str) -> None:
    compiled = compile_schema(OPTIONAL_PRICE, profile="extended")
    oracle = jsonschema.Draft202012Validator(OPTIONAL_PRICE, format_checker=jsonschema.FormatChecker())
    for value in SAMPLES:
        report = compiled.check({name: value})
        assert report.ok is oracle.is_valid({name: value}), (name, value)
        if not report.ok:
            assert [(i.keyword, i.instance_path) for i in report.issues] == [("anyOf", f"/{name}")], value


def test_an_inlined_any_of_still_refuses_what_it_cannot_read() -> None:
    schema = {"type": "object", "properties": {"s": {"anyOf": [{"type": "string", "pattern": "^a"}, {"type": "null"}]}}}
    compiled = compile_schema(schema, profile="extended")
    assert compiled.check({"s": None}).ok and compiled.check({"s": "ab"}).ok
    refused = compiled.check({"s": "a\ud800"})
    assert [i.keyword for i in refused.issues] == ["pattern"] and "unchecked" in refused.issues[0].message


def test_a_const_int_is_tested_before_the_type_dispatch() -> None:
    schema = {"type": "object", "properties": {"v": {"const": 1}, "e": {"enum": [1, 2, "a", None]}}}
    compiled = compile_schema(schema, profile="extended")
    fast = (compiled.source or "").split("def c", 1)[0]
    assert fast.count("if not (type(y) is int and y in ") == 2  # the dispatch runs only past it
    oracle = jsonschema.Draft202012Validator(schema)
    for value in [1, 1.0, 2, 2.0, True, False, None, "a", "1", [1], {"a": 1}, 10**30]:
        for name in ("v", "e"):
            assert compiled.check({name: value}).ok is oracle.is_valid({name: value}), (name, value)
    assert [i.keyword for i in compiled.check({"v": float("nan")}).issues] == ["json"]


RECORDS: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "r": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/r"}}},
            "required": ["id"],
            "additionalProperties": False,
        }
    },
    "properties": {"rs": {"type": "array", "items": {"$ref": "#/$defs/r"}}},
}


def test_an_array_of_records_tests_each_record_inline_and_keeps_the_verdicts() -> None:
    compiled = compile_schema(RECORDS, profile="extended")
    fast = (compiled.source or "").split("def c", 1)[0]
    assert "for e" in fast and "w[0] -= 1" in fast.split("for e", 1)[1]  # inline, charged on entry
    oracle = jsonschema.Draft202012Validator(RECORDS)
    cases: list[Any] = [
        [],
        [{"id": 1}],
        [{"id": 1, "kids": [{"id": 2, "kids": []}]}],
        [{"id": 1, "kids": [{"id": "2"}]}],
        [{"id": 1}, {"id": 2, "x": 0}],
        [{"id": 1}, 3],
        [{"kids": []}],
        [{"id": 1.0}],
    ]
    for rs in cases:
        report = compiled.check({"rs": rs})
        assert report.ok is oracle.is_valid({"rs": rs}), rs
        want = sorted((e.json_path, e.validator) for e in oracle.iter_errors({"rs": rs}))
        assert len(report.issues) == len(want), (rs, report.issues, want)
    deep: dict[str, Any] = {"id": 0}
    for i in range(400):
        deep = {"id": i, "kids": [deep]}
    assert compiled.check({"rs": [deep]}).ok  # recursion through the inline loop still follows


NESTED_REQUIRED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "a": {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
            "additionalProperties": False,
        },
        "b": {"type": "string"},
        "c": {"type": "integer"},
    },
    "required": ["a", "c"],
    "additionalProperties": False,
}


def test_a_closed_object_tests_required_in_its_lookups_at_every_level() -> None:
    compiled = compile_schema(NESTED_REQUIRED, profile="extended")
    fast = (compiled.source or "").split("def c", 1)[0]
    assert " not in x: return False" not in fast and fast.count(": return False\n") > 3
    oracle = jsonschema.Draft202012Validator(NESTED_REQUIRED)
    for value in [
        {"a": {"x": 1}, "c": 1},
        {"a": {"x": 1}},
        {"c": 1},
        {"a": {}, "c": 1},
        {"a": {"x": 1}, "b": "s"},
        {"a": {"x": 1, "y": 2}, "c": 1},
        {"a": {"x": 1}, "c": 1, "d": 0},
        {},
    ]:
        report = compiled.check(value)
        assert report.ok is oracle.is_valid(value), value
        want = sorted((e.json_path, e.validator) for e in oracle.iter_errors(value))
        assert len(report.issues) == len(want), (value, report.issues)


# --- a closed object's key test, uniqueItems of strings, format date (issue 11, speed b) ----------


class Name(str):
    """A ``str`` subclass: not a JSON string (a JSON decoder never returns one)."""


CLOSED = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
    "additionalProperties": False,
}


def test_a_closed_object_tests_its_key_types_unless_the_caller_vouched_for_them() -> None:
    compiled = compile_schema({"type": "object", "properties": {"o": CLOSED}}, profile="extended")
    assert "if not w[3]:" in (compiled.source or "")  # the key loop is skipped only under `parsed`
    subclassed = {"o": {Name("a"): 1}}
    with pytest.raises(TypeError):
        compiled.check(subclassed)  # the default: every key tested, a subclass is not JSON
    parsed = json.loads('{"o": {"a": 1, "b": "x"}}')
    assert compiled.check(parsed, parsed=True).ok and compiled.check(parsed).ok
    for bad in ('{"o": {"a": 1, "c": 2}}', '{"o": {"a": "1"}}', '{"o": {"b": 1}}', '{"o": []}'):
        value = json.loads(bad)
        assert compiled.check(value, parsed=True) == compiled.check(value), bad
        assert not compiled.check(value, parsed=True).ok, bad


UNIQUE_STRINGS = {
    "type": "object",
    "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "uniqueItems": True}},
}


@pytest.mark.parametrize(
    ("tags", "ok"),
    [
        ([], True),
        (["a"], True),
        (["a", "b", "c"], True),
        (["a", "b", "a"], False),
        (["é", "e\u0301"], True),  # two code point sequences: distinct JSON strings
        (["\ud800", "\ud800"], False),  # lone surrogates are code points too
        (["a", 1], False),  # a non-string item: the loop refuses it before any set is built
        (["a", {"x": 1}], False),  # unhashable: never reaches the set
        (["a", "abcde"], False),  # maxLength, not uniqueness
    ],
)
def test_unique_strings_are_tested_by_a_set_after_the_items_loop(tags: list[Any], ok: bool) -> None:
    compiled = compile_schema(UNIQUE_STRINGS, profile="extended")
    source = compiled.source or ""
    assert "len(set(x)) < len(x)" in source  # the fast test: after the loop, no call
    assert compiled.check({"tags": tags}).ok is ok
    oracle = jsonschema.Draft202012Validator(UNIQUE_STRINGS)
    assert oracle.is_valid({"tags": tags}) is ok


def test_unique_strings_keep_their_messages() -> None:
    compiled = compile_schema(UNIQUE_STRINGS, profile="extended")
    issues = compiled.check({"tags": ["a", 1, "a", "abcde"]}).issues
    assert [(i.keyword, i.instance_path) for i in issues] == [
        ("uniqueItems", "/tags"),
        ("type", "/tags/1"),
        ("maxLength", "/tags/3"),
    ]
    with pytest.raises(TypeError):
        compiled.check({"tags": ["a", Name("b")]})  # a str subclass is not a JSON string


def test_unique_items_of_another_type_still_ask_the_json_equality_rule() -> None:
    schema = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    compiled = compile_schema({"type": "object", "properties": {"n": schema}}, profile="extended")
    assert "len(set(x))" not in (compiled.source or "")
    assert not compiled.check({"n": [1, 1.0]}).ok  # JSON equality: 1 and 1.0 are one number
    assert compiled.check({"n": [1, 2]}).ok


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("2026-12-01", True),
        ("2024-02-29", True),  # a leap day: past the shortcut, the checker says yes
        ("2000-02-29", True),
        ("1900-02-29", False),
        ("2023-02-29", False),
        ("2026-02-30", False),
        ("2026-13-01", False),
        ("2026-00-10", False),
        ("2026-1-011", False),
        ("2026/12/01", False),
        ("２０２６-12-01", False),  # digits, but not ASCII ones
        ("2026-12-01 ", False),
        ("12026-12-01", False),
        ("", False),
    ],
)
def test_format_date_by_its_shortcut_agrees_with_the_checker(text: str, ok: bool) -> None:
    from mcp_guard.core.formats import format_checker

    compiled = compile_schema(
        {"type": "object", "properties": {"d": {"type": "string", "format": "date"}}}, profile="extended"
    )
    assert "isdigit()" in (compiled.source or "")  # the shortcut stands inline
    checker = format_checker("date")
    assert checker is not None and checker(text) is ok
    assert compiled.check({"d": text}).ok is ok
