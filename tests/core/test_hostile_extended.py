"""Hostile schemas and arguments under the ``extended`` profile (issue 11, item 6; spec E3, E6).

Every case gets an answer within the work budget (``mcp_guard.core.budget``): the schema is
``unsupported_capability``, or the call gets its exact verdict, or the call is refused
(``validation``, keyword ``budget``); an invalid argument is never passed. Bounds are shown with
the budget itself, never with wall-clock time: :func:`bounded` runs a check with the budget
lowered (``compiler.MAX_WORK`` is read per call), so a call that completes under a small budget
did at most that much work, and a call refused under it was stopped by the counter.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import mcp_guard.core.compiler as compiler
from mcp_guard import UNSUPPORTED, VALIDATION, check, classify
from mcp_guard import compile as compile_schema
from mcp_guard.core import MAX_SCHEMA_NODES, MAX_WORK, Report
from mcp_guard.core.formats import FORMATS

try:
    classify({}, profile="extended")
except ValueError:
    pytest.skip("this build has no `extended` profile yet", allow_module_level=True)

X = "extended"


def refused_by_budget(report: Report) -> bool:
    return [(i.kind, i.keyword) for i in report.issues] == [(VALIDATION, "budget")]


def bounded(monkeypatch: pytest.MonkeyPatch, schema: Any, arguments: Any, budget: int) -> Report:
    """``check`` with the call's work budget lowered to ``budget`` units."""
    compiled = compile_schema(schema, profile=X)
    monkeypatch.setattr(compiler, "MAX_WORK", budget)
    try:
        return compiled.check(arguments)
    finally:
        monkeypatch.undo()


def answered(schema: Any, arguments: Any, valid: bool) -> Report:
    """The call's outcome; asserts it is the exact verdict, a budget refusal, or the schema's own refusal."""
    report = check(schema, arguments, profile=X)
    classification = classify(schema, profile=X)
    if not classification.ok:
        assert classification.kind == UNSUPPORTED and report.issues == classification.issues
    elif valid:
        assert report.ok or refused_by_budget(report), report
    else:
        assert not report.ok, "an invalid argument was passed"
        assert report.kind == VALIDATION
    return report


def prop(schema: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": schema}, **extra}


# --- $ref cycles and expansion bombs ---------------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {
            "type": "object",
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            **prop({"$ref": "#/$defs/a"}),
        },
        {
            "type": "object",
            "$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}]}},
            **prop({"$ref": "#/$defs/a"}),
        },
        {"type": "object", "$defs": {"a": {"not": {"$ref": "#/$defs/a"}}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
        {
            "type": "object",
            "$defs": {"a": {"allOf": [{"$anchor": "me", "$ref": "#me"}]}},
            **prop({"$ref": "#/$defs/a"}),
        },
        {"type": "object", "$defs": {"a": {"if": {"$ref": "#/$defs/a"}}}, **prop({"$ref": "#/$defs/a"})},
        {
            "type": "object",
            "$defs": {"a": {"dependentSchemas": {"k": {"$ref": "#/$defs/a"}}}},
            **prop({"$ref": "#/$defs/a"}),
        },
    ],
    ids=["root-self", "two-defs", "anyOf-self", "not-self", "anchor-self", "if-self", "dependentSchemas-self"],
)
def test_reference_cycles_that_consume_nothing_are_unsupported(schema: Any) -> None:
    """E6: a cycle that applies itself to the same value forever is refused at classification, with its keyword."""
    for defer in (False, True):
        report = compile_schema(schema, profile=X, defer=defer).report
        assert report.kind == UNSUPPORTED, report
        assert "$ref" in {i.keyword for i in report.issues}, report
    assert check(schema, {"x": "s"}, profile=X).kind == UNSUPPORTED


def test_recursion_through_the_instance_is_judged_at_any_depth() -> None:
    """A cycle that consumes a level each round is supported; 100,000 levels get a verdict, never a crash or a pass."""
    schema = {
        "type": "object",
        "$defs": {"node": {"type": "object", "properties": {"c": {"$ref": "#/$defs/node"}}, "required": ["c"]}},
        "properties": {"t": {"$ref": "#/$defs/node"}},
    }
    assert classify(schema, profile=X).ok

    def chain(depth: int, leaf: Any) -> Any:
        value = leaf
        for _ in range(depth):
            value = {"c": value}
        return value

    assert check(schema, {"t": chain(50, {"c": {}})}, profile=X).kind == VALIDATION  # the innermost lacks `c`
    for depth in (1_000, 100_000):
        answered(schema, {"t": chain(depth, {"c": 1})}, valid=False)  # an integer where an object belongs


def doubling(levels: int, op: str, leaf: Any) -> dict[str, Any]:
    """``d0`` applies ``d1`` twice, ``d1`` applies ``d2`` twice, ...: ``2**levels`` evaluations if expanded."""
    defs: dict[str, Any] = {
        f"d{i}": {op: [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(levels)
    }
    defs[f"d{levels}"] = leaf
    return {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}}


@pytest.mark.parametrize("op", ["anyOf", "allOf", "oneOf"])
def test_a_doubling_reference_bomb_is_unsupported(op: str) -> None:
    """E6: 30 levels of doubling is 2**30 evaluations of one value, past the budget: refused at classification."""
    schema = doubling(30, op, {"type": "integer"})
    for defer in (False, True):
        report = compile_schema(schema, profile=X, defer=defer).report
        assert report.kind == UNSUPPORTED, report
        assert any(i.keyword == "$ref" and "budget" in i.message for i in report.issues), report
    answered(schema, {"x": "s"}, valid=False)
    answered(schema, {"x": 1}, valid=op != "oneOf")


@pytest.mark.parametrize("op", ["anyOf", "allOf", "oneOf"])
def test_a_small_doubling_is_answered_exactly_within_its_weight(op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """10 levels (2**11 subschemas when expanded) is supported; every call, its issue report included, fits
    16 units per expanded subschema (the slow path explains the branches it tried)."""
    schema = doubling(10, op, {"type": "integer"})
    assert classify(schema, profile=X).ok
    valid = op != "oneOf"  # oneOf: both (identical) branches match, so it fails
    for value, ok in (("s", False), (1, valid), (1.5, False)):
        report = bounded(monkeypatch, schema, {"x": value}, 16 * 2**11)
        assert report.ok is ok and not refused_by_budget(report), (value, report)


def test_a_long_reference_chain_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    """60 definitions each referring to the next once: 61 evaluations on the fast path; reporting the
    violation (the slow path) costs more (each level re-tests the rest: quadratic, 61**2 / 2), within 10,000."""
    defs: dict[str, Any] = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(60)}
    defs["d60"] = {"type": "integer", "minimum": 0}
    schema = {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}}
    assert classify(schema, profile=X).ok
    assert bounded(monkeypatch, schema, {"x": 3}, 1_000).ok
    report = bounded(monkeypatch, schema, {"x": -1}, 10_000)
    assert [(i.keyword, i.instance_path) for i in report.issues] == [("minimum", "/x")]


# --- anyOf fan-out ------------------------------------------------------------------------------------


def test_any_of_fan_out_over_a_long_array_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """100 x 50 nested anyOf branches (5,150 subschemas) over 10,000 elements that match none: 5*10**7 evaluations."""
    inner = {"anyOf": [{"type": "integer", "multipleOf": 7 + i} for i in range(50)]}
    schema = prop({"type": "array", "items": {"anyOf": [inner] * 100}})
    assert classify(schema, profile=X).ok
    report = answered(schema, {"x": [1] * 10_000}, valid=False)
    assert refused_by_budget(report) or report.kind == VALIDATION
    assert not bounded(monkeypatch, schema, {"x": [1] * 10_000}, 50_000).ok
    ok = bounded(monkeypatch, schema, {"x": [7] * 5}, 50_000)  # the first branch of each matches
    assert ok.ok, ok


def test_too_many_branches_are_unsupported() -> None:
    schema = prop({"anyOf": [{"const": i} for i in range(MAX_SCHEMA_NODES + 1)]})
    report = classify(schema, profile=X)
    assert report.kind == UNSUPPORTED and "budget" in " ".join(i.message for i in report.issues), report


def test_one_of_reports_every_branch_within_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    branches = [{"type": "object", "properties": {"k": {"const": i}}, "required": ["k"]} for i in range(1_000)]
    schema = prop({"oneOf": branches})
    assert classify(schema, profile=X).ok
    assert check(schema, {"x": {"k": 999}}, profile=X).ok
    report = check(schema, {"x": {"k": -1}}, profile=X)
    assert report.kind == VALIDATION and all(i.instance_path is not None for i in report.issues)
    assert len(str(report.to_json())) < 200_000  # the branches' wants are summarized, not a megabyte


# --- uniqueItems over 100,000 items -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "valid"),
    [
        (list(range(100_000)), True),
        ([*range(99_999), 0], False),
        ([*range(99_999), 5.0], False),  # 5 == 5.0 (decision 7)
        ([*(float(i) + 0.5 for i in range(99_999)), True, 1], True),  # true is not 1 (decision 6)
        ([{"a": i, "b": [i, str(i)]} for i in range(100_000)], True),
        ([*({"a": i, "b": [i]} for i in range(99_999)), {"b": [7.0], "a": 7}], False),  # key order does not matter
        ([[i % 2 == 0, i] for i in range(100_000)], True),
        (["x" * 10 + str(i) for i in range(100_000)], True),
    ],
    ids=["ints", "dup-int", "dup-float-int", "true-vs-1", "objects", "dup-object", "arrays", "strings"],
)
def test_unique_items_over_100000_items(items: list[Any], valid: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    schema = prop({"type": "array", "uniqueItems": True})
    report = answered(schema, {"x": items}, valid)
    assert report.ok is valid, report  # linear: within the default budget, so an exact verdict
    if not valid:
        assert [(i.keyword, i.instance_path) for i in report.issues] == [("uniqueItems", "/x")]
    # with an `items` schema each element is an evaluation the counter charges: a tenth of the
    # elements' count is not enough budget, and the call is refused, not passed
    typed = prop(
        {
            "type": "array",
            "items": {"type": ["integer", "number", "object", "array", "string", "boolean"]},
            "uniqueItems": True,
        }
    )
    assert refused_by_budget(bounded(monkeypatch, typed, {"x": items}, len(items) // 10))


def test_unique_items_of_deep_equal_values_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two equal 10,000-deep lists: comparing them is work the budget pays for."""

    def deep(n: int) -> Any:
        value: Any = 0
        for _ in range(n):
            value = [value]
        return value

    schema = prop({"type": "array", "uniqueItems": True})
    answered(schema, {"x": [deep(10_000), deep(10_000)]}, valid=False)
    answered(schema, {"x": [deep(10_000), deep(9_999)]}, valid=True)
    for depth in (100, 300):
        answered(schema, {"x": [deep(depth), deep(depth - 1)]}, valid=True)


@pytest.mark.parametrize("depth", [10, 300, 10_000])
def test_unique_items_under_not_never_passes_past_the_depth(depth: int) -> None:
    """``not: {uniqueItems: true}`` (a duplicate required): distinct deep items must never be taken as equal."""

    def deep(n: int) -> Any:
        value: Any = 0
        for _ in range(n):
            value = [value]
        return value

    schema = prop({"type": "array", "not": {"uniqueItems": True}})
    answered(schema, {"x": [deep(depth), deep(depth - 1)]}, valid=False)
    answered(schema, {"x": [deep(depth), deep(depth)]}, valid=True)


# --- unevaluatedProperties under deep composition -----------------------------------------------------


def nested_all_of(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"properties": {f"p{depth}": {"type": "integer"}}}
    for level in range(depth - 1, 0, -1):
        node = {"allOf": [node], "properties": {f"p{level}": {"type": "integer"}}}
    return node


@pytest.mark.parametrize("depth", [10, 50])
def test_unevaluated_properties_under_deep_composition(depth: int) -> None:
    schema = prop({"type": "object", "allOf": [nested_all_of(depth)], "unevaluatedProperties": False})
    assert classify(schema, profile=X).ok
    every = {f"p{i}": i for i in range(1, depth + 1)}
    answered(schema, {"x": every}, valid=True)
    report = answered(schema, {"x": {**every, "extra": 1}}, valid=False)
    assert {i.keyword for i in report.issues} == {"unevaluatedProperties"}
    assert {i.instance_path for i in report.issues} == {"/x/extra"}
    answered(schema, {"x": {**every, f"p{depth}": "s"}}, valid=False)


def test_unevaluated_properties_with_any_of_fan_out_over_many_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every anyOf branch must be evaluated to collect annotations: 200 branches x 2,000 keys is bounded."""
    branches = [{"properties": {f"k{i}": {"type": "integer"}}} for i in range(200)]
    schema = prop({"type": "object", "anyOf": branches, "unevaluatedProperties": False})
    assert classify(schema, profile=X).ok
    answered(schema, {"x": {f"k{i}": i for i in range(200)}}, valid=True)
    answered(schema, {"x": {f"k{i}": i for i in range(2_000)}}, valid=False)  # k200.. are unevaluated
    report = bounded(monkeypatch, schema, {"x": {f"k{i}": i for i in range(2_000)}}, 1_000)
    assert not report.ok


def test_unevaluated_items_over_nested_if_then_else() -> None:
    node: dict[str, Any] = {"prefixItems": [{"type": "integer"}]}
    for _ in range(30):
        node = {"if": node, "then": {"prefixItems": [True, {"type": "string"}]}, "else": {"prefixItems": [True]}}
    schema = prop({"type": "array", "allOf": [node], "unevaluatedItems": False})
    report = classify(schema, profile=X)
    if report.ok:
        answered(schema, {"x": [1, "a"]}, valid=True)
        answered(schema, {"x": [1, "a", None]}, valid=False)


# --- catastrophic backtracking --------------------------------------------------------------------------

NEAR_MISSES = {
    "^(a+)+$": "a" * 10_000 + "!",
    "(a|aa)+$": "a" * 10_000 + "!",
    "^(\\w+\\s?)*$": "word " * 2_000 + "!",
    "^(a|a?)+$": "a" * 10_000 + "b",
    "^([a-z]+)*[0-9]$": "abc" * 3_000 + "!",
}


@pytest.mark.parametrize("pattern", sorted(NEAR_MISSES))
@pytest.mark.parametrize("keyword", ["pattern", "patternProperties", "propertyNames"])
def test_catastrophic_patterns_never_stall_and_never_pass(pattern: str, keyword: str) -> None:
    """E3: refused at classification (saying why), or searched under a proven bound charged to the budget."""
    text = NEAR_MISSES[pattern]
    if keyword == "pattern":
        schema, arguments = prop({"type": "string", "pattern": pattern}), {"x": text}
    elif keyword == "patternProperties":
        schema, arguments = prop({"type": "object", "patternProperties": {pattern: False}}), {"x": {text: 1}}
        # the key does not match, so `false` never applies: valid, unless refused
        report = classify(schema, profile=X)
        if report.ok:
            assert check(schema, arguments, profile=X).ok or refused_by_budget(check(schema, arguments, profile=X))
        else:
            assert report.kind == UNSUPPORTED and "patternProperties" in {i.keyword for i in report.issues}
        return
    else:
        schema, arguments = prop({"type": "object", "propertyNames": {"pattern": pattern}}), {"x": {text: 1}}
    report = classify(schema, profile=X)
    if not report.ok:
        assert report.kind == UNSUPPORTED, report
        issue = next(i for i in report.issues if i.keyword == "pattern")
        assert issue.message and "pattern" in issue.message
    answered(schema, arguments, valid=False)


def test_a_bounded_pattern_is_charged_to_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A linear pattern over a long string costs its bound: a budget far below the string's length refuses."""
    schema = prop({"type": "string", "pattern": "^[a-z]+$"})
    report = classify(schema, profile=X)
    if not report.ok:
        pytest.skip(f"this build does not enforce the pattern yet: {report.issues[0].message}")
    text = "a" * 1_000_000
    assert check(schema, {"x": text}, profile=X).ok
    assert not check(schema, {"x": text + "!"}, profile=X).ok
    assert refused_by_budget(bounded(monkeypatch, schema, {"x": text}, 100))


def test_the_default_budget_is_the_documented_one() -> None:
    assert MAX_WORK == 4_000_000


# --- hostile strings under pattern and format: refused or judged, never both ways -----------------

HOSTILE_STRINGS = {
    "1 MiB": "a" * 2**20,
    "1 MiB of dots": "a." * 2**19,
    "lone surrogate": "a\ud800b",
    "NUL": "a\x00b",
    "astral": "😀" * 1000,
    "bidi": "\u202ea\u202c",
}


def refused_unchecked(report: Report) -> bool:
    """A refusal that claims nothing about the value: the budget, or a value the engine cannot read."""
    return not report.ok and all(
        i.instance_path is not None and i.keyword in ("budget", "json", "pattern", "format") for i in report.issues
    )


@pytest.mark.parametrize("text", sorted(HOSTILE_STRINGS), ids=sorted(HOSTILE_STRINGS))
@pytest.mark.parametrize(
    "node",
    [{"pattern": "^a"}, {"pattern": "b$"}, {"pattern": "^[a.]*$"}, *({"format": f} for f in sorted(FORMATS))],
    ids=lambda n: next(iter(n.values())),
)
def test_a_keyword_and_its_negation_never_both_pass(node: dict[str, Any], text: str) -> None:
    """For each hostile string, ``K`` and ``not: K`` never both pass (a refusal of either is fine: fail closed)."""
    value = HOSTILE_STRINGS[text]
    plain, negated = prop({"type": "string", **node}), prop({"type": "string", "not": node})
    assert classify(plain, profile=X).ok and classify(negated, profile=X).ok
    yes, no = check(plain, {"x": value}, profile=X), check(negated, {"x": value}, profile=X)
    assert not (yes.ok and no.ok), (node, text)
    assert yes.ok or no.ok or (refused_unchecked(yes) or refused_unchecked(no)), (yes, no)


def test_messages_never_echo_argument_values() -> None:
    """Errors name schema text and pointers, never the value sent (it may be a secret)."""
    secret = "s3cr3t-Value-42"
    schema = {
        "type": "object",
        "properties": {
            "p": {"type": "string", "pattern": "^x"},
            "f": {"type": "string", "format": "email"},
            "c": {"const": "x"},
            "e": {"enum": ["x", "y"]},
            "l": {"type": "string", "maxLength": 3},
            "o": {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 100}]},
            "u": {"type": "array", "uniqueItems": True},
            "n": {"not": {"type": "string"}},
            "d": {"type": "string", "format": "date"},
        },
        "additionalProperties": {"type": "integer"},
    }
    arguments = {key: secret for key in ("p", "f", "c", "e", "l", "o", "n", "d", "extra")} | {"u": [secret, secret]}
    report = check(schema, arguments, profile=X)
    assert len(report.issues) >= 10, report
    assert secret not in json.dumps(report.to_json())
