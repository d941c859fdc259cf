"""The spec's Example section, row by row, in both profiles, with its `pattern` and `title` variants."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mcp_guard import check, classify
from mcp_guard import compile as compile_schema

U = "unsupported_capability"
V = "validation"
PROFILES = ["standard", "strict"]

EXAMPLE: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer", "minimum": 1}},
    "required": ["n"],
}

# (arguments, expected findings as (kind, keyword, schema_path, instance_path)); empty = forwarded
ROWS = [
    pytest.param({"n": 3}, set(), id="n=3-forwarded"),
    pytest.param({"n": 3.0}, set(), id="n=3.0-forwarded"),
    pytest.param({"n": 0}, {(V, "minimum", "/properties/n/minimum", "/n")}, id="n=0-minimum"),
    pytest.param({"n": True}, {(V, "type", "/properties/n/type", "/n")}, id="n=true-type"),
    pytest.param({}, {(V, "required", "/required", "")}, id="empty-required"),
]

ALL_ARGUMENTS = [row.values[0] for row in ROWS]


def findings(report: Any) -> set[tuple[str, str, str, str | None]]:
    return {(i.kind, i.keyword, i.schema_path, i.instance_path) for i in report.issues}


def assert_outcome(report: Any, expected: set[tuple[str, str, str, str | None]]) -> None:
    assert findings(report) == expected
    assert len(report.issues) == len(expected)
    assert report.ok is (not expected)
    assert report.kind == (None if not expected else V)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("arguments", "expected"), ROWS)
def test_example_row(arguments: dict[str, Any], expected: set[Any], profile: str) -> None:
    assert classify(EXAMPLE, profile=profile).ok
    assert_outcome(check(EXAMPLE, arguments, profile=profile), expected)
    compiled = compile_schema(EXAMPLE, profile=profile)
    assert compiled.supported is True
    assert_outcome(compiled.check(arguments), expected)


def with_pattern(on: str) -> dict[str, Any]:
    schema = copy.deepcopy(EXAMPLE)
    if on != "n":
        schema["properties"][on] = {"type": "string"}
    schema["properties"][on]["pattern"] = "^a"
    return schema


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("arguments", ALL_ARGUMENTS, ids=[row.id for row in ROWS])
@pytest.mark.parametrize(
    "on",
    [pytest.param("n", id="on-sent-property"), pytest.param("m", id="on-unsent-property")],
)
def test_example_with_pattern_rejects_every_call(on: str, arguments: dict[str, Any], profile: str) -> None:
    schema = with_pattern(on)
    expected = {(U, "pattern", f"/properties/{on}/pattern", None)}
    assert_pattern = findings(classify(schema, profile=profile))
    assert assert_pattern == expected
    compiled = compile_schema(schema, profile=profile)
    assert compiled.supported is False
    for report in (check(schema, arguments, profile=profile), compiled.check(arguments)):
        assert findings(report) == expected
        assert report.kind == U
        assert not report.ok


def with_title() -> dict[str, Any]:
    schema = copy.deepcopy(EXAMPLE)
    schema["properties"]["n"]["title"] = "N"
    return schema


@pytest.mark.parametrize(("arguments", "expected"), ROWS)
def test_example_with_title_in_standard_behaves_like_the_example(arguments: dict[str, Any], expected: set[Any]) -> None:
    schema = with_title()
    assert classify(schema, profile="standard").ok
    assert compile_schema(schema, profile="standard").supported is True
    assert_outcome(check(schema, arguments, profile="standard"), expected)


def test_example_with_title_in_standard_forwards_n_3() -> None:
    report = check(with_title(), {"n": 3}, profile="standard")
    assert report.ok
    assert report.kind is None


@pytest.mark.parametrize("arguments", ALL_ARGUMENTS, ids=[row.id for row in ROWS])
def test_example_with_title_in_strict_rejects_every_call(arguments: dict[str, Any]) -> None:
    schema = with_title()
    expected = {(U, "title", "/properties/n/title", None)}
    assert findings(classify(schema, profile="strict")) == expected
    compiled = compile_schema(schema, profile="strict")
    assert compiled.supported is False
    for report in (check(schema, arguments, profile="strict"), compiled.check(arguments)):
        assert findings(report) == expected
        assert report.kind == U
