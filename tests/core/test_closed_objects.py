"""Closed objects (``additionalProperties: false``) and ``date`` on the big-argument path (issue 11, speed goal b).

The generated fast path of an object with few declared names (closed or open) looks each declared
name up once and counts the names found; these pin that it keeps the loop's exact verdicts.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from mcp_guard import VALIDATION, check, classify
from mcp_guard import compile as compile_schema
from mcp_guard.core.formats import format_checker, format_cost

try:
    classify({}, profile="extended")
except ValueError:
    pytest.skip("this build has no `extended` profile yet", allow_module_level=True)

CLOSED: dict[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "tag": {"type": "string", "maxLength": 3}, "any": {}},
    "required": ["id"],
    "additionalProperties": False,
}


class Key(str):
    pass


OPEN: dict[str, Any] = {**CLOSED, "additionalProperties": True}
TYPED_REST: dict[str, Any] = {**CLOSED, "additionalProperties": {"type": "string"}}


@pytest.mark.parametrize("schema", [CLOSED, OPEN, TYPED_REST])
def test_an_object_with_few_declared_names_looks_them_up(schema: dict[str, Any]) -> None:
    fast = (compile_schema(schema, profile="extended").source or "").split("def c")[0]
    assert ".get(" in fast and "len(x) != " in fast and " == " not in fast  # no chain of name tests


@pytest.mark.parametrize(
    ("arguments", "closed", "open_", "typed_rest"),
    [
        ({"id": 1}, True, True, True),
        ({"id": 1, "tag": "abc", "any": [1, {"a": None}]}, True, True, True),
        ({"id": 1, "other": "x"}, False, True, True),
        ({"id": 1, "other": 1}, False, True, False),
        ({"id": 1, "other": float("nan")}, False, False, False),  # an undeclared member is JSON-checked
        ({"other": "x", "id": 1, "more": [None]}, False, True, False),
        ({"tag": "abc", "other": "x"}, False, False, False),  # id is required, whatever else is there
        ({"id": 1, "tag": "abcd", "other": "x"}, False, False, False),
        ({"id": True, "other": "x"}, False, False, False),
    ],
)
@pytest.mark.parametrize("parsed", [False, True])
def test_the_count_of_names_found_decides_the_undeclared_members(
    arguments: dict[str, Any], closed: bool, open_: bool, typed_rest: bool, parsed: bool
) -> None:
    for schema, valid in ((CLOSED, closed), (OPEN, open_), (TYPED_REST, typed_rest)):
        compiled = compile_schema(schema, profile="extended")
        assert compiled.check(arguments, parsed=parsed).ok is valid, (schema, arguments)
        standard = compile_schema({**schema, "properties": {**schema["properties"], "any": {"type": "array"}}})
        if "any" not in arguments:
            assert standard.check(arguments, parsed=parsed).ok is valid, (schema, arguments)


@pytest.mark.parametrize(
    ("arguments", "valid"),
    [
        ({"id": 1}, True),
        ({"id": 1, "tag": "abc", "any": [1, {"a": None}]}, True),
        ({"tag": "abc"}, False),  # id is required
        ({"id": 1, "tag": "abcd"}, False),
        ({"id": 1, "other": 1}, False),
        ({"id": 1.5}, False),
        ({"id": 1, "any": float("nan")}, False),  # a declared member is still JSON-checked
        ({"id": 1, "tag": None}, False),
    ],
)
def test_a_closed_object_keeps_its_verdicts(arguments: dict[str, Any], valid: bool) -> None:
    report = check(CLOSED, arguments, profile="extended")
    assert report.ok is valid
    if not valid:
        assert report.kind == VALIDATION


@pytest.mark.parametrize("arguments", [{Key("id"): 1}, {"id": 1, Key("tag"): "a"}, {"id": 1, Key("x"): "a"}])
@pytest.mark.parametrize("schema", [CLOSED, OPEN, TYPED_REST])
def test_a_str_subclass_key_naming_a_declared_property_is_not_json(
    arguments: dict[Any, Any], schema: dict[str, Any]
) -> None:
    with pytest.raises(TypeError, match="object key"):
        check(schema, arguments, profile="extended")


def test_date_agrees_with_the_calendar_on_every_day_of_four_years() -> None:
    date = format_checker("date")
    assert date is not None
    for year in (1900, 2000, 2024, 2026):
        for month in range(0, 14):
            for day in range(0, 33):
                text = f"{year:04d}-{month:02d}-{day:02d}"
                try:
                    datetime.date(year, month, day)
                    exists = True
                except ValueError:
                    exists = False
                assert date(text) is exists, text
    for text in ("2026-1-01", "２０２６-01-01", "٢٠٢٦-01-01", "2026-0١-01", "2026-01-01 ", "+026-01-01", "2026/01/01"):
        assert not date(text), text


def test_format_cost_is_the_documented_bound() -> None:
    assert format_cost("date", 10) == 16 + 10
    assert format_cost("hostname", 10) == 16 + 256 * 10
    assert format_cost("hostname", 10_000) == 16 + 256 * 253  # no more past its length limit
    assert format_cost("no-such-format", 10) == 0


@pytest.mark.parametrize("divisor", [0.01, 0.25, 0.1, 1e-5, 3])
def test_multiple_of_a_double_agrees_with_exact_arithmetic(divisor: float) -> None:
    """``is_multiple`` on doubles (its inline quotient test) against the literals' fractions (E1)."""
    from decimal import Decimal
    from fractions import Fraction

    from mcp_guard.core.extended.values import is_multiple

    values = [round(k * 0.37 - 1000.0, places) for k in range(3000) for places in (0, 1, 2, 3)]
    values += [1.25, 0.3, 1e20, 5e-324, 2.0**60, 123.456, -0.0, 1e15 + 0.5]
    for value in values:
        exact = (Fraction(Decimal(repr(value))) / Fraction(Decimal(repr(divisor)))).denominator == 1
        if value >= 2**53 or value <= -(2**53):  # from 2**53 up a double stands for its exact value
            exact = (Fraction(int(value)) / Fraction(Decimal(repr(divisor)))).denominator == 1
        assert is_multiple(value, divisor) is exact, (value, divisor)


WIDE: dict[str, Any] = {
    "type": "object",
    "properties": {name: {"type": "string", "maxLength": 2} for name in "abcdefg"},
    "required": ["a", "g"],
}


@pytest.mark.parametrize("closed", [False, True])
def test_the_slow_path_of_many_declared_names_splits_on_their_index_and_keeps_argument_order(closed: bool) -> None:
    schema = {**WIDE, "additionalProperties": False} if closed else WIDE
    compiled = compile_schema(schema, profile="extended")
    slow = "def c" + (compiled.source or "").split("def c", 1)[1]
    assert ".get(k)" in slow and " == " not in slow
    arguments = {"g": 1, "z": "x", "c": "abc", "a": None, "f": "ok", "e": "long"}
    report = compiled.check(arguments)
    found = [(i.keyword, i.instance_path, i.schema_path) for i in report.issues]
    wanted = [
        ("type", "/g", "/properties/g/type"),
        *([("additionalProperties", "/z", "/additionalProperties")] if closed else []),
        ("maxLength", "/c", "/properties/c/maxLength"),
        ("type", "/a", "/properties/a/type"),
        ("maxLength", "/e", "/properties/e/maxLength"),
    ]
    assert found == wanted
    del arguments["g"]
    assert compiled.check(arguments).issues[0].keyword == "required"  # required first, as before
