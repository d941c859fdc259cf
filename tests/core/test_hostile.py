"""Hostile input to the schema core: nothing crashes, hangs or recurses without bound (issue: prove the core).

Each case has a clear, documented outcome (see ``mcp_guard.core.budget``): accepted, a
``validation`` or ``unsupported_capability`` report, or ``TypeError`` for a Python value
that is not JSON. No ``RecursionError`` escapes.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from mcp_guard import UNSUPPORTED, VALIDATION, check, classify, compile
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


def test_past_the_node_budget_work_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema of 50 times the budget: nothing past the budget is visited by a walk, and with ``known_json``
    nothing is scanned; the report is the one of the full classification (every profile)."""
    from mcp_guard.core import compiler
    from mcp_guard.core.extended.classify import Quick
    from mcp_guard.core.extended.subset import SubsetQuick

    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(50 * MAX_SCHEMA_NODES)}}
    visits = 0

    def counting(walk: Any) -> Any:
        clean = walk.clean

        def counted(self: Any, schema: Any, depth: int) -> bool:
            nonlocal visits
            visits += 1
            return bool(clean(self, schema, depth))

        return counted

    def no_scan(value: Any, *, what: str = "value") -> Any:
        raise AssertionError("the whole schema was scanned")

    for profile in ("extended", "standard", "strict"):
        expected = compile(wide, profile=profile).report
        assert [(i.kind, i.keyword) for i in expected.issues] == [("unsupported_capability", "properties")]
        with monkeypatch.context() as patch:
            patch.setattr(Quick, "clean", counting(Quick))
            patch.setattr(SubsetQuick, "clean", counting(SubsetQuick))
            patch.setattr(compiler, "scan", no_scan)
            for defer in (True, False):
                visits = 0
                assert compile(wide, profile=profile, defer=defer, known_json=True).report == expected
                assert visits <= 2 * MAX_SCHEMA_NODES + 2  # the verdict walk up to the budget, not 500,000


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


# --- found by a red-team session (2026-11-30): each of these was a fault ----------------------


def test_a_float_literal_stands_for_its_decimal_value_or_is_refused() -> None:
    """From 2**53 up a double's shortest decimal is not its value: 1e25 is no double (was fail-open)."""
    import json

    from mcp_guard.core.json_values import Inexact, exact_float, literal_float

    for text in ("1e25", "1E23", "-1e25", "1e308", "9007199254740993.0"):
        assert type(exact_float(text)) is Inexact, text
        assert type(literal_float(text)) is Inexact, text
    for text in ("1e22", "9007199254740992.0", "1.8014398509481984e16", "0.1", "1e2", "-0.0"):
        assert type(exact_float(text)) is float, text
    schema = {"type": "object", "properties": {"n": {"type": "number", "minimum": 10**25 + 1}}}
    arguments = json.loads('{"n": 1e25}', parse_float=exact_float)  # as the relay parses a client line
    report = compile(schema, profile="standard").check(arguments)
    assert [i.keyword for i in report.issues] == ["json"]  # refused, never forwarded as 1e+25


def test_oneof_branches_share_one_walk_of_an_unconstrained_container(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each branch used to walk the same big array again (is_json, canonical): unbudgeted work × branches."""
    import mcp_guard.core.json_values as jv

    walks: list[int] = []
    real = jv.is_json
    monkeypatch.setattr(jv, "is_json", lambda value: walks.append(id(value)) or real(value))
    branches = [{"type": "array", "enum": [[i]]} for i in range(50)]
    compiled = compile({"type": "object", "properties": {"a": {"oneOf": branches}}})
    big = list(range(10_000))
    report = compiled.check({"a": big})
    assert report.kind == VALIDATION
    assert walks.count(id(big)) <= 2, "once on the fast path and once on the slow path"


def test_shared_sub_objects_cost_their_distinct_containers_not_their_paths() -> None:
    """x = [x, x] forty times: 2**40 paths. Classification and checks end at once with a verdict."""
    shared: list[Any] = []
    for _ in range(40):
        shared = [shared, shared]
    report = classify({"type": "object", "properties": {"a": {"type": "array", "enum": [shared]}}})
    assert report.kind == UNSUPPORTED
    assert "budget" in report.issues[0].message
    shallow = compile({"type": "object", "properties": {"a": {"type": "array", "enum": [[[[[1]]]]]}}})
    assert [i.keyword for i in shallow.check({"a": shared}).issues] == ["enum"]  # keyed 4 levels deep only
    deep: list[Any] = [1]
    for _ in range(45):
        deep = [deep]
    compiled = compile({"type": "object", "properties": {"a": {"type": "array", "enum": [deep]}}})
    refused = compiled.check({"a": shared})  # keyed 46 levels deep: 2**41 nodes as a tree
    assert [i.keyword for i in refused.issues] == ["budget"]
    small: list[Any] = [1]
    for _ in range(10):
        small = [small, small]  # 2**11 nodes as a tree: within budget, compared exactly
    compiled = compile({"type": "object", "properties": {"a": {"type": "array", "enum": [small]}}})
    import copy

    assert compiled.check({"a": copy.deepcopy(small)}).ok
    assert compiled.check({"a": small}).ok


def test_a_bound_too_long_to_write_still_gives_a_verdict() -> None:
    """minimum or an enum choice of 10**5000: check() used to raise ValueError building the message."""
    huge = 10**5000
    for schema in (
        {"type": "object", "properties": {"a": {"type": "number", "minimum": huge}}},
        {"type": "object", "properties": {"a": {"type": "integer", "enum": [huge, 1]}}},
    ):
        compiled = compile(schema, profile="standard")
        assert compiled.supported
        report = compiled.check({"a": 2})
        assert report.kind == VALIDATION and "1e5000" in report.issues[0].message  # exact, never "too long to show"
        assert compiled.check({"a": huge}).ok


class _Str(str):
    pass


@pytest.mark.parametrize("defer", [False, True])
@pytest.mark.parametrize(
    "schema",
    [
        {_Str("type"): "object"},
        {"type": "object", "properties": {"a": {_Str("type"): "string"}}},
        {"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}], _Str("description"): "x"}}},
        {"type": "object", "properties": {"a": {"type": "string", _Str("maxLength"): 1}}},
    ],
)
def test_str_subclass_keys_in_a_schema_are_type_errors(schema: dict[Any, Any], defer: bool) -> None:
    """A key that only compares equal to a keyword is not JSON (was classified supported)."""
    with pytest.raises(TypeError, match="Python type _Str"):
        compile(schema, defer=defer)


def test_non_json_inside_an_enum_position_is_a_type_error_with_its_pointer() -> None:
    from collections import OrderedDict

    compiled = compile({"type": "object", "properties": {"e": {"type": "array", "enum": [[1, [2]]]}}})
    for bad in ({2}, OrderedDict(), (1,)):
        with pytest.raises(TypeError, match="'/e/1'"):
            compiled.check({"e": [1, bad]})


def test_a_long_required_list_is_one_loop_in_the_validator() -> None:
    names = [f"n{i}" for i in range(5_000)] + ["a/b", "c~d"]
    compiled = compile({"type": "object", "required": names})
    assert compiled.source is not None and len(compiled.source) < 2_000
    report = compiled.check({"n1": 0})
    assert len(report.issues) == len(names) - 1
    assert report.issues[0].message == "`/n0` is required"
    assert [i.message for i in report.issues[-2:]] == ["`/a~1b` is required", "`/c~0d` is required"]
    assert compiled.check(dict.fromkeys(names, 0)).ok
