"""Hostile input to the schema core: nothing crashes, hangs or recurses without bound (issue: prove the core).

Each case has a clear, documented outcome (see ``mcp_guard.core.budget``): accepted, a
``validation`` or ``unsupported_capability`` report, or ``TypeError`` for a Python value
that is not JSON. No ``RecursionError`` escapes.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from mcp_guard import check, classify, compile
from mcp_guard.core import MAX_ENUM_CHOICES, MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, MAX_WORK

DEEP = 100_000


def nested_list(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def nested_object(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def prop(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": schema}}


@pytest.mark.parametrize(
    ("schema", "make", "ok"),
    [
        ({"type": "object"}, nested_list, True),
        ({"type": "object"}, nested_object, True),
        (prop({"type": "array"}), nested_list, True),
        (prop({"type": "array"}), nested_object, False),  # an object where an array belongs
        (prop({"type": "object"}), nested_object, True),
        (prop({"type": "object"}), nested_list, False),
    ],
    ids=["undeclared-arrays", "undeclared-objects", "array-arrays", "array-objects", "object-objects", "object-arrays"],
)
def test_arguments_nested_100000_levels_are_judged_without_recursion(
    schema: dict[str, Any], make: Any, ok: bool
) -> None:
    assert check(schema, {"x": make(DEEP)}).ok is ok


def test_a_non_finite_number_100000_levels_down_is_found() -> None:
    report = check({"type": "object"}, {"x": nested_list(DEEP, float("nan"))})
    assert [(i.keyword, i.instance_path) for i in report.issues] == [("json", "/x" + "/0" * DEEP)]


@pytest.mark.parametrize(
    "make",
    [
        lambda d: nested_object(d, {"type": "object"}),  # not a schema shape, but deep
        lambda d: _deep_properties(d),
        lambda d: _deep_items(d),
        lambda d: _deep_one_of(d),
    ],
    ids=["raw", "properties", "items", "oneOf"],
)
def test_schemas_nested_100000_levels_are_refused_without_recursion(make: Any) -> None:
    report = classify(make(DEEP))
    assert report.kind == "unsupported_capability" or report.kind == "validation"
    assert not report.ok


def _deep_properties(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"a": node}}
    return node


def _deep_items(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "array", "items": node}
    return prop(node)


def _deep_one_of(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"oneOf": [node, {"type": "integer"}]}
    return prop(node)


def test_depth_budget_is_exact() -> None:
    inside = _deep_properties(MAX_SCHEMA_DEPTH)
    assert classify(inside).ok
    over = classify(_deep_properties(MAX_SCHEMA_DEPTH + 1))
    assert [(i.kind, i.keyword) for i in over.issues] == [("unsupported_capability", "schema")]


def test_sixteen_mib_strings_and_a_million_elements_are_accepted() -> None:
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string"}, "n": {"type": "array", "items": {"type": "integer", "minimum": 0}}},
    }
    assert check(schema, {"s": "x" * (16 << 20), "n": list(range(1_000_000))}).ok
    bad = check(schema, {"n": [*range(999_999), -1]})
    assert [(i.keyword, i.instance_path) for i in bad.issues] == [("minimum", "/n/999999")]


def test_work_over_budget_is_a_validation_finding_not_a_slow_guard() -> None:
    item = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(9)}}  # weight 10
    schema = prop({"type": "array", "items": item})
    fits = MAX_WORK // 10
    assert check(schema, {"x": [{}] * fits}).ok
    report = check(schema, {"x": [{}] * (fits + 1)})
    assert [(i.kind, i.keyword, i.instance_path) for i in report.issues] == [("validation", "budget", "")]
    assert "budget" in report.issues[0].message


def test_one_of_work_is_polynomial_even_for_adversarial_nesting() -> None:
    """Each branch is tested once per value: 20 nested two-way oneOfs over 2,000 elements stay cheap."""
    node: dict[str, Any] = {"type": "integer"}
    for _ in range(20):
        node = {"oneOf": [node, {"type": "string"}]}
    schema = prop({"type": "array", "items": node})
    report = check(schema, {"x": [1.5] * 2_000})  # matches no branch at every level
    assert report.kind == "validation" and len(report.issues) == 2_000


def test_schema_node_budget_names_the_composition() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(MAX_SCHEMA_NODES)}}
    report = classify(schema)
    assert [(i.kind, i.keyword) for i in report.issues] == [("unsupported_capability", "properties")]
    assert "budget" in report.issues[0].message
    within = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(MAX_SCHEMA_NODES - 1)}}
    assert classify(within).ok


def test_enum_budgets() -> None:
    assert classify(prop({"type": "string", "enum": [str(i) for i in range(MAX_ENUM_CHOICES)]})).ok
    over = classify(prop({"type": "string", "enum": [str(i) for i in range(MAX_ENUM_CHOICES + 1)]}))
    assert [(i.kind, i.keyword) for i in over.issues] == [("unsupported_capability", "enum")]
    deep = classify(prop({"type": "array", "enum": [nested_list(DEEP)]}))
    assert [(i.kind, i.keyword) for i in deep.issues] == [("unsupported_capability", "enum")]


def test_a_large_enum_is_a_set_lookup() -> None:
    compiled = compile(prop({"type": "string", "enum": [f"v{i}" for i in range(MAX_ENUM_CHOICES)]}))
    assert compiled.check({"x": "v9999"}).ok and not compiled.check({"x": "v10000"}).ok


def test_shared_containers_are_fine_and_cycles_are_type_errors() -> None:
    shared = {"type": "integer", "minimum": 0}
    assert classify({"type": "object", "properties": {"a": shared, "b": shared}}).ok
    node: dict[str, Any] = {"type": "object", "properties": {}}
    for _ in range(60):  # 2**60 paths: stopped by the node budget, quickly
        node = {"type": "object", "properties": {"a": node, "b": node}}
    assert classify(node).kind == "unsupported_capability"
    value: Any = 1
    for _ in range(60):
        value = [value, value]
    assert check({"type": "object"}, {"x": value}).ok
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(TypeError, match="/x/0"):
        check({"type": "object"}, {"x": cyclic})
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(TypeError, match="/properties/x/default/self"):
        classify(prop({"type": "object", "default": loop}))


def test_recursion_limit_is_untouched() -> None:
    before = sys.getrecursionlimit()
    check({"type": "object"}, {"x": nested_object(DEEP)})
    assert sys.getrecursionlimit() == before


@pytest.mark.parametrize("count", [17, 3_000, 9_000])
def test_objects_with_thousands_of_properties_compile_and_check(count: int) -> None:
    """Long property lists dispatch through a dict: no compiler recursion, same verdicts."""
    schema = {
        "type": "object",
        "properties": {f"p{i}": {"type": "integer", "minimum": 0} for i in range(count)},
        "required": ["p0"],
        "additionalProperties": False,
    }
    compiled = compile(schema)
    assert compiled.check({"p0": 1, f"p{count - 1}": 2}).ok
    report = compiled.check({"p1": -1, "zz": 1})
    assert sorted((i.keyword, i.instance_path) for i in report.issues) == [
        ("additionalProperties", "/zz"),
        ("minimum", "/p1"),
        ("required", ""),
    ]


@pytest.mark.parametrize("count", [17, 3_000])
def test_one_of_with_thousands_of_branches_compiles_and_checks(count: int) -> None:
    compiled = compile(prop({"oneOf": [{"type": "integer", "enum": [i]} for i in range(count)]}))
    assert compiled.check({"x": count - 1}).ok
    report = compiled.check({"x": -1})
    assert [(i.keyword, i.instance_path) for i in report.issues] == [("oneOf", "/x")]
    assert len(report.issues[0].message) < 500  # a bounded summary, not every alternative


def test_nested_one_of_messages_and_code_stay_small() -> None:
    node: dict[str, Any] = {"type": "string"}
    for depth in range(15):
        node = {"oneOf": [node, {"type": "integer", "minimum": depth}, {"type": "object", "required": ["a"]}]}
    compiled = compile(prop(node))
    report = compiled.check({"x": 1.5})
    assert report.kind == "validation" and len(report.issues[0].message) < 500
    assert len(compiled.source or "") < 200_000


def test_a_str_subclass_key_is_not_json_even_when_it_names_a_property() -> None:
    class Key(str):
        pass

    schema = prop({"type": "integer"})
    with pytest.raises(TypeError, match="object key"):
        check(schema, {Key("x"): 1})
