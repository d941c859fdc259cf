"""The slow path starts where the fast path's array loop stopped (issue 14, item 4: an invalid big
argument costs about what a valid one does), and reports exactly what it reported before.

``extended.writer.missed`` records, when an array's fast loop fails, the index of the failing item;
the slow path neither runs that array's fast test again nor walks the items before it. The reference
here is the same core with the record left out (``missed`` patched to record nothing, as the slow
path was before): every issue, pointer and message must be the same.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mcp_guard import classify
from mcp_guard import compile as compile_schema
from mcp_guard.core.extended import writer

try:
    classify({}, profile="extended")
except ValueError:
    pytest.skip("this build has no `extended` profile yet", allow_module_level=True)


RECORD = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 0},
        "name": {"type": "string", "minLength": 1},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "uniqueItems": True},
    },
    "required": ["id", "name"],
    "additionalProperties": False,
}

LIST = {
    "type": "object",
    "$defs": {"item": RECORD},
    "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
}


def records(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "name": f"n{i}", "tags": [f"t{i % 3}"] if i % 2 else []} for i in range(n)]


def broken(n: int, at: dict[int, dict[str, Any]]) -> dict[str, Any]:
    items = records(n)
    for index, change in at.items():
        items[index].update(change)
    return {"items": items}


def without_records(schema: Any) -> Any:
    """The schema compiled with ``missed`` recording nothing: the slow path of before."""
    saved = writer.missed

    def forgetful(w: list[Any], key: str, items: list[Any], item: Any) -> bool:
        return False

    writer.missed = forgetful  # type: ignore[assignment]
    try:
        compiled = compile_schema(schema, profile="extended")
        compiled.check({})  # the validator is generated now, with the patched name
    finally:
        writer.missed = saved
    return compiled


TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["v"],
        }
    },
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/node"}},
}


def tree(depth: int, bad: bool) -> dict[str, Any]:
    node: dict[str, Any] = {"v": "bad" if bad else 0, "kids": []}
    for level in range(depth):
        node = {"v": level, "kids": [{"v": level, "kids": []}, node, {"v": level}]}
    return {"root": node}


SHARED_ITEM = {"id": -1, "name": "x"}


def held(schema: dict[str, Any]) -> dict[str, Any]:
    """An object whose property ``a`` is ``schema`` (an arguments root is an object)."""
    return {"type": "object", "properties": {"a": schema}}


ONE_OF_ARRAYS = {
    "type": "object",
    "properties": {
        "a": {
            "anyOf": [
                {"type": "array", "items": {"type": "integer"}},
                {"type": "array", "items": {"type": "string"}},
            ]
        }
    },
}

CASES: list[tuple[str, Any, Any]] = [
    ("one error near the end", LIST, broken(400, {390: {"id": -1}})),
    ("one error near the start", LIST, broken(400, {2: {"name": ""}})),
    ("errors at the start, middle and end", LIST, broken(400, {0: {"id": "0"}, 200: {"x": 1}, 399: {"id": -5}})),
    ("several errors in one record", LIST, broken(50, {40: {"id": -1, "name": "", "tags": ["a", "a", "toolong"]}})),
    ("an error in a nested array", LIST, broken(50, {7: {"tags": ["ab", 3]}, 45: {"tags": ["a", "a"]}})),
    ("not an array", LIST, {"items": {"0": 1}}),
    ("a non-object item", LIST, {"items": [*records(5), 7, *records(3)]}),
    ("one shared failing item, met three times", LIST, {"items": [*records(5), SHARED_ITEM, {}, SHARED_ITEM]}),
    (
        "true after equal integers",
        held({"type": "array", "items": {"type": "integer"}}),
        {"a": [1, 2, 1, True, 3, True]},
    ),
    ("anyOf of two array branches", ONE_OF_ARRAYS, {"a": [1, 2, "x", 4, "y"]}),
    (
        "one array under two schemas",
        {
            "type": "object",
            "properties": {
                "a": {"type": "array", "items": {"type": "integer", "maximum": 5}},
                "b": {"type": "array", "items": {"type": "integer", "minimum": 3}},
            },
        },
        (lambda shared: {"a": shared, "b": shared})([1, 2, 3, 9, 4, 0]),
    ),
    (
        "prefixItems before the items",
        held({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}}),
        {"a": ["a", 1, 2, "b", 3, None]},
    ),
    (
        "contains and unevaluatedItems beside the items",
        held(
            {
                "type": "array",
                "allOf": [{"items": {"type": "integer"}}],
                "contains": {"minimum": 10},
                "unevaluatedItems": False,
            }
        ),
        {"a": [1, 2, 3, "x", 4]},
    ),
    ("a recursive schema, an error deep down", TREE, tree(30, bad=True)),
    ("a recursive schema, valid", TREE, tree(30, bad=False)),
]


@pytest.mark.parametrize(("label", "schema", "value"), CASES, ids=[c[0] for c in CASES])
def test_the_slow_path_reports_what_it_reported_without_the_records(label: str, schema: Any, value: Any) -> None:
    subject = compile_schema(schema, profile="extended")
    assert subject.supported, label
    # the fast loops record where they stop (one over every item: not with prefixItems)
    assert ("missed(" in (subject.source or "")) is ("prefixItems" not in label)
    reference = without_records(schema).check(copy.deepcopy(value))
    got = subject.check(value)
    assert got == reference, label
    assert got == subject.check(value, parsed=True), label


def test_an_invalid_argument_whose_check_fits_the_budget_is_explained_not_refused() -> None:
    """The slow path no longer tests again what the fast path tested: an array a third of the
    way to the budget's limit (``budget.MAX_WORK``) was walked three times for its errors, and
    refused for the budget; now its error is found and named."""
    from mcp_guard.core.budget import MAX_WORK

    schema = {"type": "object", "properties": {"n": {"type": "array", "items": {"type": "integer"}}}}
    length = MAX_WORK // 2 + 1000
    value = {"n": [0] * (length - 1) + ["x"]}
    issues = compile_schema(schema, profile="extended").check(value).issues
    assert [(i.keyword, i.instance_path) for i in issues] == [("type", f"/n/{length - 1}")]
    old = without_records(schema).check(value).issues
    assert [i.keyword for i in old] == ["budget"]  # (what the slow path answered before)
