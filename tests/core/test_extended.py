"""The ``extended`` profile: classification, exact enforcement, pointers and messages.

Table-driven: each case is a schema, arguments and the expected verdict (and, for a
rejection, the keyword and pointers). The suite-wide conformance and the differential tests
live elsewhere; these pin the profile's own decisions (E1-E6) and messages.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from mcp_guard import check, classify, compile
from mcp_guard.core.json_values import Inexact, exact_float

U = "unsupported_capability"
V = "validation"


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


ACCEPT = [
    ("optional-null", obj(a={"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}), {"a": None}),
    ("type-list", obj(a={"type": ["string", "null"]}), {"a": "x"}),
    ("untyped", obj(a={}), {"a": [1, {"b": None}]}),
    ("maximum", obj(a={"type": "integer", "maximum": 100}), {"a": 100}),
    ("multipleOf-decimal", obj(a={"multipleOf": 0.1}), {"a": 0.3}),
    ("multipleOf-int", obj(a={"multipleOf": 3}), {"a": 9.0}),
    ("bound-no-double", obj(a={"maximum": Inexact("0.1000000000000000000001")}), {"a": 0.1}),
    ("bignum-bound", obj(a={"minimum": Inexact("1e400")}), {"a": 10**401}),
    ("length-code-points", obj(a={"maxLength": 2}), {"a": "😀😀"}),
    ("const", obj(a={"const": 1}), {"a": 1.0}),
    ("enum-bool-apart", obj(a={"enum": [[True], 2]}), {"a": [True]}),
    ("additional-schema", {"type": "object", "additionalProperties": {"type": "integer"}}, {"x": 1}),
    ("pattern-props-absent", {"type": "object", "propertyNames": {"maxLength": 3}}, {"abc": 1}),
    ("prefix", obj(a={"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}), {"a": [1, "x"]}),
    ("contains", obj(a={"contains": {"const": 2}, "maxContains": 1}), {"a": [1, 2, 3]}),
    ("unique", obj(a={"uniqueItems": True}), {"a": [1, True, "1", [1], {"a": 1}]}),
    ("dependentRequired", {"dependentRequired": {"a": ["b"]}}, {"b": 1}),
    ("if-then", {"if": {"required": ["a"]}, "then": {"required": ["b"]}}, {"a": 1, "b": 2}),
    ("ref-defs", {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}, {"a": 1}),
    ("ref-recursive", {"properties": {"a": {"$ref": "#"}}}, {"a": {"a": {}}}),
    (
        "ref-anchor",
        {"$defs": {"n": {"$anchor": "num", "type": "integer"}}, "properties": {"a": {"$ref": "#num"}}},
        {"a": 2},
    ),
    ("ref-escaped", {"$defs": {"a/b": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/a~1b"}}}, {"a": 2}),
    (
        "ref-root-id",
        {
            "$id": "https://x.test/s",
            "$defs": {"n": {"type": "integer"}},
            "properties": {"a": {"$ref": "https://x.test/s#/$defs/n"}},
        },
        {"a": 2},
    ),
    ("root-oneOf", {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": 1}),
    ("not", obj(a={"not": {"type": "string"}}), {"a": 1}),
    ("boolean-true", obj(a=True), {"a": 1}),
    (
        "draft7-items-list",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "properties": {"a": {"items": [{"type": "integer"}], "additionalItems": False}},
        },
        {"a": [1]},
    ),
    (
        "draft7-dependencies",
        {"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}},
        {"a": 1, "b": 2},
    ),
    ("minimum-ignores-bool", obj(a={"minimum": 0}), {"a": True}),
    ("unevaluated-through-allOf", {"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False}, {"a": 1}),
    (
        "unevaluated-anyOf-branch",
        {
            "anyOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {}}}],
            "unevaluatedProperties": False,
        },
        {"b": 1},
    ),
    ("unevaluated-items-prefix", obj(a={"prefixItems": [{}], "unevaluatedItems": False}), {"a": [1]}),
    ("unevaluated-items-contains", obj(a={"contains": {"const": 1}, "unevaluatedItems": False}), {"a": [1, 1]}),
    ("unknown-format-annotation", obj(a={"type": "string", "format": "path"}), {"a": "x"}),
]


@pytest.mark.parametrize(("schema", "arguments"), [c[1:] for c in ACCEPT], ids=[c[0] for c in ACCEPT])
def test_accepts(schema: dict[str, Any], arguments: Any) -> None:
    compiled = compile(schema, profile="extended")
    assert compiled.report.ok, compiled.report
    assert compiled.check(arguments).ok


REJECT = [
    (
        "optional-null",
        obj(a={"anyOf": [{"type": "integer", "maximum": 100}, {"type": "null"}]}),
        {"a": 101},
        "anyOf",
        "/properties/a/anyOf",
        "/a",
    ),
    ("type-list", obj(a={"type": ["string", "null"]}), {"a": 1}, "type", "/properties/a/type", "/a"),
    ("bool-not-number", obj(a={"type": "number"}), {"a": True}, "type", "/properties/a/type", "/a"),
    (
        "multipleOf-decimal",
        obj(a={"multipleOf": 0.1}),
        {"a": 0.35000000000000003},
        "multipleOf",
        "/properties/a/multipleOf",
        "/a",
    ),
    (
        "multipleOf-huge",
        obj(a={"multipleOf": 0.123456789}),
        {"a": 1e308},
        "multipleOf",
        "/properties/a/multipleOf",
        "/a",
    ),
    (
        "bound-no-double",
        obj(a={"maximum": Inexact("0.0999999999999999999999")}),
        {"a": 0.1},
        "maximum",
        "/properties/a/maximum",
        "/a",
    ),
    (
        "exclusiveMinimum",
        obj(a={"exclusiveMinimum": 0}),
        {"a": 0},
        "exclusiveMinimum",
        "/properties/a/exclusiveMinimum",
        "/a",
    ),
    ("minLength", obj(a={"minLength": 3}), {"a": "😀😀"}, "minLength", "/properties/a/minLength", "/a"),
    ("const", obj(a={"const": 1}), {"a": True}, "const", "/properties/a/const", "/a"),
    ("enum-deep-bool", obj(a={"enum": [[1]]}), {"a": [True]}, "enum", "/properties/a/enum", "/a"),
    (
        "additional-schema",
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"x": "1"},
        "type",
        "/additionalProperties/type",
        "/x",
    ),
    (
        "additional-false",
        {"properties": {"a": {}}, "additionalProperties": False},
        {"b": 1},
        "additionalProperties",
        "/additionalProperties",
        "/b",
    ),
    ("pattern-names", {"propertyNames": {"maxLength": 1}}, {"ab": 1}, "propertyNames", "/propertyNames", "/ab"),
    (
        "prefix",
        obj(a={"prefixItems": [{"type": "integer"}], "items": False}),
        {"a": [1, 2]},
        "items",
        "/properties/a/items",
        "/a/1",
    ),
    ("contains", obj(a={"contains": {"const": 2}}), {"a": [1, 3]}, "contains", "/properties/a/contains", "/a"),
    (
        "maxContains",
        obj(a={"contains": {"const": 2}, "maxContains": 1}),
        {"a": [2, 2]},
        "maxContains",
        "/properties/a/maxContains",
        "/a",
    ),
    ("unique", obj(a={"uniqueItems": True}), {"a": [1, 1.0]}, "uniqueItems", "/properties/a/uniqueItems", "/a"),
    ("minItems", obj(a={"minItems": 1}), {"a": []}, "minItems", "/properties/a/minItems", "/a"),
    ("maxProperties", {"maxProperties": 1}, {"a": 1, "b": 2}, "maxProperties", "/maxProperties", ""),
    ("required", {"required": ["a"]}, {}, "required", "/required", ""),
    (
        "dependentRequired",
        {"dependentRequired": {"a": ["b"]}},
        {"a": 1},
        "dependentRequired",
        "/dependentRequired/a",
        "",
    ),
    (
        "dependentSchemas",
        {"dependentSchemas": {"a": {"required": ["b"]}}},
        {"a": 1},
        "required",
        "/dependentSchemas/a/required",
        "",
    ),
    ("if-then", {"if": {"required": ["a"]}, "then": {"required": ["b"]}}, {"a": 1}, "required", "/then/required", ""),
    ("if-else", {"if": {"required": ["a"]}, "else": {"required": ["b"]}}, {}, "required", "/else/required", ""),
    (
        "ref-recursive",
        {"properties": {"a": {"$ref": "#"}, "n": {"type": "integer"}}},
        {"a": {"a": {"n": "x"}}},
        "type",
        "/properties/n/type",
        "/a/a/n",
    ),
    ("oneOf-both", {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": 1, "b": 2}, "oneOf", "/oneOf", ""),
    ("not", obj(a={"not": {"type": "string"}}), {"a": "s"}, "not", "/properties/a/not", "/a"),
    ("boolean-false", obj(a=False), {"a": 1}, "properties", "/properties/a", "/a"),
    ("false-items-named-property", obj(items=False), {"items": 1}, "properties", "/properties/items", "/items"),
    ("root-not-object", {"properties": {}}, [1], "type", "", ""),
    ("allOf", {"allOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": 1}, "required", "/allOf/1/required", ""),
    (
        "unevaluated-failing-branch",
        {
            "anyOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {}}}],
            "unevaluatedProperties": False,
        },
        {"a": 1, "b": 1},
        "unevaluatedProperties",
        "/unevaluatedProperties",
        "/a",
    ),
    (
        "unevaluated-ref",
        {"$defs": {"d": {"properties": {"a": {}}}}, "$ref": "#/$defs/d", "unevaluatedProperties": False},
        {"a": 1, "c": 2},
        "unevaluatedProperties",
        "/unevaluatedProperties",
        "/c",
    ),
    (
        "unevaluated-items",
        obj(a={"prefixItems": [{}], "unevaluatedItems": {"type": "string"}}),
        {"a": [1, 2]},
        "type",
        "/properties/a/unevaluatedItems/type",
        "/a/1",
    ),
]


@pytest.mark.parametrize(
    ("schema", "arguments", "keyword", "schema_path", "instance_path"),
    [c[1:] for c in REJECT],
    ids=[c[0] for c in REJECT],
)
def test_rejects(
    schema: dict[str, Any], arguments: Any, keyword: str | None, schema_path: str | None, instance_path: str | None
) -> None:
    compiled = compile(schema, profile="extended")
    assert compiled.report.ok, compiled.report
    report = compiled.check(arguments)
    assert report.kind == V
    if keyword is not None:
        found = [(i.keyword, i.schema_path, i.instance_path) for i in report.issues]
        assert (keyword, schema_path, instance_path) in found, found


UNSUPPORTED = [
    ("nullable", obj(a={"type": "string", "nullable": True}), "nullable", "/properties/a/nullable"),
    ("x-ext", {"x-foo": 1}, "x-foo", "/x-foo"),
    ("dynamicRef", {"$dynamicRef": "#a"}, "$dynamicRef", "/$dynamicRef"),
    ("vocabulary", {"$vocabulary": {}}, "$vocabulary", "/$vocabulary"),
    ("remote-ref", {"properties": {"a": {"$ref": "https://x.test/s.json"}}}, "$ref", "/properties/a/$ref"),
    ("nested-id", {"properties": {"a": {"$id": "https://x.test/a"}}}, "$id", "/properties/a/$id"),
    ("ref-cycle-root", {"$ref": "#"}, "$ref", "/$ref"),
    ("ref-cycle-defs", {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}, "$ref", None),
    ("root-null", {"type": ["object", "null"]}, "type", "/type"),
    ("root-boolean", True, "schema", ""),
    (
        "nested-schema",
        {"properties": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}},
        "$schema",
        "/properties/a/$schema",
    ),
    ("2020-dependencies", {"dependencies": {"a": ["b"]}}, "dependencies", "/dependencies"),
    ("2020-additionalItems", obj(a={"additionalItems": False}), "additionalItems", "/properties/a/additionalItems"),
    ("2020-items-list", obj(a={"items": [{}]}), "items", "/properties/a/items"),
    (
        "draft7-prefixItems",
        {"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"prefixItems": [{}]}}},
        "prefixItems",
        "/properties/a/prefixItems",
    ),
    (
        "draft7-ref-sibling",
        {"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"$ref": "#", "maxLength": 1}}},
        "maxLength",
        "/properties/a/maxLength",
    ),
    ("draft4", {"$schema": "http://json-schema.org/draft-04/schema#"}, "$schema", "/$schema"),
    (
        "ref-expansion-bomb",
        {
            "$defs": {
                **{f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(30)},
                "d30": {"type": "integer"},
            },
            "properties": {"x": {"$ref": "#/$defs/d0"}},
        },
        "$ref",
        None,
    ),
]


@pytest.mark.parametrize(
    ("schema", "keyword", "schema_path"), [c[1:] for c in UNSUPPORTED], ids=[c[0] for c in UNSUPPORTED]
)
def test_unsupported(schema: Any, keyword: str, schema_path: str | None) -> None:
    report = classify(schema, profile="extended")
    assert report.kind == U, report
    found = [(i.keyword, i.schema_path) for i in report.issues if i.kind == U]
    if schema_path is None:
        assert keyword in [k for k, _ in found], found
    else:
        assert (keyword, schema_path) in found, found
    assert not check(schema, {}, profile="extended").ok


MALFORMED = [
    ("type", obj(a={"type": "foo"}), "type"),
    ("minLength", obj(a={"minLength": -1}), "minLength"),
    ("multipleOf", obj(a={"multipleOf": 0}), "multipleOf"),
    ("maximum-bool", obj(a={"maximum": True}), "maximum"),
    ("required", {"required": ["a", "a"]}, "required"),
    ("anyOf-empty", {"anyOf": []}, "anyOf"),
    ("ref-nowhere", {"properties": {"a": {"$ref": "#/$defs/missing"}}}, "$ref"),
    ("title", {"title": 1}, "title"),
    ("enum-past-digit-limit", obj(a={"enum": [Inexact("1e5000")]}), "enum"),
    ("const-past-digit-limit", obj(a={"const": Inexact("1e-5000")}), "const"),
]


@pytest.mark.parametrize(("schema", "keyword"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed(schema: Any, keyword: str) -> None:
    report = classify(schema, profile="extended")
    assert report.kind == V
    assert keyword in [i.keyword for i in report.issues]


def test_any_of_message_says_what_each_branch_wanted() -> None:
    schema = obj(limit={"anyOf": [{"type": "integer", "maximum": 100}, {"type": "null"}]})
    (issue,) = check(schema, {"limit": 101}, profile="extended").issues
    assert "`/limit` must be ≤ 100 (maximum)" in issue.message
    assert "must be null" in issue.message
    assert "101" not in issue.message


def test_messages_never_echo_values() -> None:
    secret = "hunter2-secret"
    schema = obj(a={"anyOf": [{"type": "string", "maxLength": 3}, {"const": "x"}]}, b={"not": {"type": "string"}})
    report = check(schema, {"a": secret, "b": secret, secret: 1}, profile="extended")
    assert not report.ok
    assert all(secret not in i.message for i in report.issues)


def test_non_finite_arguments_are_refused() -> None:
    schema = obj(a={})
    for bad in (float("nan"), float("inf"), Inexact("1e99999")):
        report = check(schema, {"a": bad}, profile="extended")
        assert [i.keyword for i in report.issues] == ["json"]


@pytest.mark.parametrize(
    ("schema", "literal", "ok"),
    [
        ({"type": "integer", "multipleOf": 0.5}, "1e308", True),
        ({"type": "integer"}, "1.00000000000000000000001", False),
        ({"maximum": 1}, "1.00000000000000000000001", False),
        ({"exclusiveMaximum": Inexact("1.0000000000000000000001")}, "1.00000000000000000000001", True),
        ({"enum": [Inexact("1.00000000000000000000001")]}, "1.000000000000000000000010", True),
        ({"const": 1e308}, "1e308", False),
        ({"minimum": 0}, "1e999999", False),
        ({"maximum": 10000000000000000905969664}, "10000000000000000905969664.0", True),  # a double's exact value
        ({"multipleOf": 3}, "1152921504606846976.0", False),  # 2**60: its exact value, not its repr
    ],
)
def test_argument_literals_no_double_holds_are_exact(schema: dict[str, Any], literal: str, ok: bool) -> None:
    """E1: an argument literal no double holds (an ``Inexact`` from the relay's parser) is enforced exactly."""
    import json

    from mcp_guard.core.json_values import exact_float

    arguments = json.loads('{"v": ' + literal + "}", parse_float=exact_float)
    report = check(obj(v=schema), arguments, profile="extended")
    assert report.ok is ok, report


@pytest.mark.parametrize(
    ("schema", "literal"),
    [
        ({"type": "number", "exclusiveMinimum": 0}, "1e-400"),  # a server reads 0 (red team 35: 1/d crashed)
        ({"type": "integer", "minimum": 1}, "1e400"),  # a server reads inf
        ({"type": "number", "maximum": 0}, "-1E+400"),
        ({}, "-2.5e-330"),
    ],
)
def test_argument_literals_beyond_the_double_range_are_numbers_json_cannot_carry(
    schema: dict[str, Any], literal: str
) -> None:
    """Decision 12 (which names ``1e400``) in every profile: exact or not, a literal a server's parser reads
    as an infinity or as zero is refused (keyword ``json``), never forwarded (RFC 8259 section 6)."""
    from mcp_guard.wire.jsonrpc import loads_client

    report = check(obj(v=schema), loads_client('{"v": ' + literal + "}"), profile="extended")
    assert [(i.keyword, i.instance_path) for i in report.issues] == [("json", "/v")], report


def test_unique_items_past_the_depth_refuses_never_decides() -> None:
    deep_a: Any = 0
    for _ in range(300):
        deep_a = [deep_a]
    deep_b: Any = 0
    for _ in range(299):
        deep_b = [deep_b]
    for schema in ({"type": "array", "uniqueItems": True}, {"type": "array", "not": {"uniqueItems": True}}):
        report = check(obj(x=schema), {"x": [deep_a, deep_b]}, profile="extended")
        assert [i.keyword for i in report.issues] == ["budget"]


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


_UNDECIDED = {"type": "array", "uniqueItems": True}  # on [deep(300), deep(299)]: past the comparison depth
_LONE = {"type": "string", "pattern": "a"}  # on a lone surrogate: the engine cannot read it

CONTEXTS = [
    ("not", {"not": _UNDECIDED}, [_deep(300), _deep(299)]),
    ("oneOf", {"oneOf": [_UNDECIDED, {"type": "string"}]}, [_deep(300), _deep(299)]),
    ("anyOf", {"anyOf": [_UNDECIDED, {"type": "string"}]}, [_deep(300), _deep(299)]),
    ("if", {"if": _UNDECIDED, "then": False}, [_deep(300), _deep(299)]),
    ("contains-max", {"contains": _UNDECIDED, "maxContains": 0}, [[_deep(300), _deep(299)]]),
    ("not-pattern", {"not": _LONE}, "\ud800"),
    ("propertyNames-under-not", {"not": {"propertyNames": _LONE}}, {"\ud800": 1}),
    ("dependentSchemas-under-not", {"not": {"dependentSchemas": {"a": {"properties": {"a": _LONE}}}}}, {"a": "\ud800"}),
    ("unevaluated", {"anyOf": [{"properties": {"a": _LONE}}], "unevaluatedProperties": False}, {"a": "\ud800"}),
]


@pytest.mark.parametrize(("schema", "value"), [c[1:] for c in CONTEXTS], ids=[c[0] for c in CONTEXTS])
def test_what_the_guard_cannot_establish_refuses_the_call_in_every_context(schema: dict[str, Any], value: Any) -> None:
    """L2: a limit (comparison depth, an unreadable string) aborts the call; no context turns it into a pass."""
    report = check(obj(x=schema), {"x": value}, profile="extended")
    assert [i.keyword for i in report.issues] in (["budget"], ["pattern"]), report


def test_unevaluated_under_deep_composition_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nested anyOf, each with unevaluatedProperties: every node's verdict and annotations once per value (E6).

    Without the per-call memo this is 3**60 evaluations; on a small budget it must still pass.
    """
    from mcp_guard.core import compiler

    schema: dict[str, Any] = {"properties": {"z": {}}}
    for i in range(60):
        schema = {"anyOf": [schema, {"properties": {f"a{i}": {}}}], "unevaluatedProperties": False}
    compiled = compile(obj(x=schema), profile="extended")
    monkeypatch.setattr(compiler, "MAX_WORK", 50_000)
    assert compiled.check({"x": {"z": 1}}).ok
    assert compiled.check({"x": {"a59": 2}}).ok
    assert not compiled.check({"x": {"a7": 1, "a59": 2}}).ok
    assert [i.keyword for i in compiled.check({"x": {"q": 1}}).issues] == ["unevaluatedProperties"]


def test_recursion_down_very_deep_arguments_is_refused_not_a_crash() -> None:
    deep: dict[str, Any] = {}
    for _ in range(5000):
        deep = {"a": deep}
    report = check({"properties": {"a": {"$ref": "#"}}}, deep, profile="extended")
    assert [i.keyword for i in report.issues] == ["budget"]


def test_expansion_bomb_meets_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """2**39 evaluations by references: unsupported (E6); a call past the budget is refused (a small budget here)."""
    from mcp_guard.core import compiler

    defs: dict[str, Any] = {"d0": {"type": "string", "maxLength": 0}}
    for i in range(1, 40):
        defs[f"d{i}"] = {"anyOf": [{"$ref": f"#/$defs/d{i - 1}"}, {"$ref": f"#/$defs/d{i - 1}"}]}
    report = classify({"$defs": defs, "properties": {"a": {"$ref": "#/$defs/d39"}}}, profile="extended")
    assert [(i.kind, i.keyword) for i in report.issues] == [(U, "$ref")]
    monkeypatch.setattr(compiler, "MAX_WORK", 20_000)
    compiled = compile(
        {"properties": {"a": {"items": {"$ref": "#/$defs/s"}}}, "$defs": {"s": {"type": "string"}}}, profile="extended"
    )
    assert compiled.report.ok
    assert compiled.check({"a": ["x"] * 100}).ok
    assert [i.keyword for i in compiled.check({"a": ["x"] * 30_000}).issues] == ["budget"]


def test_format_outside_2020_12_is_a_note() -> None:
    compiled = compile(obj(a={"type": "string", "format": "int32"}), profile="extended")
    assert compiled.report.ok
    assert [(n.schema_path, "int32" in n.message) for n in compiled.notes] == [("/properties/a/format", True)]


def test_messages_show_exact_choices_as_written_and_name_the_pattern_once() -> None:
    (issue,) = check(obj(a={"enum": [Inexact("1.00000000000000000001"), "x"]}), {"a": 2}, profile="extended").issues
    assert "1.00000000000000000001" in issue.message and "Inexact" not in issue.message
    (finding,) = classify(obj(a={"type": "string", "pattern": "("}), profile="extended").issues
    assert finding.kind == V and not finding.message.startswith("`pattern` pattern")


def test_unique_items_charges_the_work_of_keying(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_guard.core import compiler

    monkeypatch.setattr(compiler, "MAX_WORK", 5_000)
    compiled = compile(obj(a={"uniqueItems": True}), profile="extended")
    assert compiled.check({"a": [[i, [i]] for i in range(10)]}).ok
    assert [i.keyword for i in compiled.check({"a": [[i, [i]] for i in range(2_000)]}).issues] == ["budget"]


def test_hostile_choices_meet_the_budget_not_memory_or_the_stack() -> None:
    """S1-S3: shared sub-objects, deep nesting, a bound too long to write: verdicts, never a crash."""
    for leaf in ([], [Inexact("1.00000000000000000001")]):
        shared: Any = leaf
        for _ in range(40):
            shared = [shared, shared]
        report = classify(obj(a={"type": "array", "enum": [shared]}), profile="extended")
        assert [(i.kind, i.keyword) for i in report.issues] == [(U, "enum")]
    report = classify(obj(x={"type": "array", "enum": [_deep(5000)]}), profile="extended")
    assert [(i.kind, i.keyword) for i in report.issues] == [(U, "enum")]
    (issue,) = check(obj(a={"minimum": 10**5000}), {"a": 2}, profile="extended").issues
    assert issue.keyword == "minimum" and "≥ 1e5000 (minimum)" in issue.message


def test_decimal_bound_is_kept_exact() -> None:
    compiled = compile(obj(a={"minimum": Inexact("1.00000000000000000001")}), profile="extended")
    assert compiled.check({"a": 1.0}).issues[0].keyword == "minimum"
    assert compiled.check({"a": 2}).ok
    assert "1.00000000000000000001" in str(Decimal("1.00000000000000000001"))


# --- the verdict-only walk (compile(..., defer=True)) holds to the full classifier ---------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mcp_guard.core.extended import classify_extended  # noqa: E402
from mcp_guard.core.extended.classify import Quick  # noqa: E402
from mcp_guard.core.extended.table import KEYWORDS  # noqa: E402
from tests.datasets import TOOL_CORPUS  # noqa: E402

_KEYS = st.sampled_from([*KEYWORDS, "x-extra", "nullable"])
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from([0.5, -0.0, 2.0, float("nan"), 1e308]),
    st.sampled_from(["object", "string", "integer", "null", "date", "path", "#/$defs/a", "^a", "(", "x"]),
    st.sampled_from([("t",), Inexact("1e400")]),
)
_SCHEMAS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.dictionaries(_KEYS, inner, max_size=5),
        st.dictionaries(st.sampled_from(["a", "b", "type"]), inner, max_size=3),
        st.lists(inner, max_size=3),
    ),
    max_leaves=25,
)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(schema=st.dictionaries(_KEYS, _SCHEMAS, max_size=6))
def test_quick_walk_never_passes_what_the_classifier_refuses(schema: dict[str, Any]) -> None:
    for root in (schema, {"type": "object", "properties": {"p": schema}}):
        if Quick().root(root):
            issues, node, notes = classify_extended(root)
            assert issues == [] and node is not None and notes == (), root


_CORPUS = TOOL_CORPUS


def test_quick_walk_agrees_with_the_classifier_on_the_corpus() -> None:
    import json

    passed = 0
    for path in sorted(_CORPUS.glob("*.json")):
        document = json.loads(path.read_text())
        for tool in document["tools"] if isinstance(document, dict) else document:
            schema = tool["inputSchema"]
            issues, _node, notes = classify_extended(schema)
            if Quick().root(schema):
                passed += 1
                assert not issues and not notes, tool["name"]
            compiled = compile(schema, profile="extended", defer=True)
            assert compiled.report.ok == (not issues), tool["name"]
    assert passed > 500  # the walk decides most real schemas by itself


@pytest.mark.parametrize("literal", ["1e23", "1e25", "2.0e25", "10000000000000000000000000.0", "3e0"])
def test_an_integral_count_literal_no_double_holds_is_a_count(literal: str) -> None:
    """E1 and decision 5: a length or count written as an integral exponent literal is that integer, exactly."""
    text = (
        '{"type": "object", "properties": {"s": {"type": "string", "maxLength": LIT},'
        ' "a": {"type": "array", "maxItems": LIT, "contains": {"const": 1}, "maxContains": LIT}}}'
    ).replace("LIT", literal)
    schema = json.loads(text, parse_float=exact_float)
    assert classify(schema, profile="extended").ok
    assert check(schema, {"s": "abc", "a": [1, 1, 1]}, profile="extended").ok
    assert check(schema, {"a": [2]}, profile="extended").ok is False  # contains is still enforced
    over = check(schema, {"s": "abcd", "a": [1, 1, 1, 1]}, profile="extended")
    assert over.ok is (literal != "3e0")  # maxLength, maxItems and maxContains exactly


@pytest.mark.parametrize("literal", ["3.5", "-1e23", "true", '"3"'])
def test_a_count_that_is_no_non_negative_integer_is_malformed(literal: str) -> None:
    text = '{"type": "object", "properties": {"s": {"maxLength": LIT}}}'.replace("LIT", literal)
    schema = json.loads(text, parse_float=exact_float)
    report = classify(schema, profile="extended")
    assert [(i.kind, i.keyword) for i in report.issues] == [("validation", "maxLength")]


# --- the verdict walk's $ref (classify.Quick, for the speed of long listings; issue 11) ---------

_REF_TO = st.sampled_from(["#/$defs/a", "#/$defs/b", "#/$defs/c", "#/definitions/a", "#/$defs/a~1", "#"])
_REF_SHAPES = st.one_of(
    _REF_TO.map(lambda r: {"$ref": r}),
    _REF_TO.map(lambda r: {"allOf": [{"$ref": r}], "type": "object"}),
    _REF_TO.map(lambda r: {"anyOf": [{"$ref": r}, {"type": "null"}]}),
    st.tuples(_REF_TO, _REF_TO).map(
        lambda r: {"type": "object", "properties": {"p": {"$ref": r[0]}, "$ref": {"$ref": r[1]}}}
    ),
    _REF_TO.map(lambda r: {"type": "array", "items": {"$ref": r}}),
    _REF_TO.map(lambda r: {"not": {"properties": {"x": {"$ref": r}}}}),
    _REF_TO.map(lambda r: {"dependentSchemas": {"$ref": {"$ref": r}}}),
    st.just({"type": "string"}),
    st.just({"default": {"$ref": "#/$defs/zz"}, "type": "integer"}),
)


@settings(max_examples=800, deadline=None, derandomize=True)
@given(
    defs=st.dictionaries(st.sampled_from(["a", "b", "c", "a/b"]), _REF_SHAPES, max_size=4),
    legacy=st.dictionaries(st.sampled_from(["a"]), _REF_SHAPES, max_size=1),
    root=_REF_SHAPES,
)
def test_quick_refs_never_pass_what_the_classifier_refuses(
    defs: dict[str, Any], legacy: dict[str, Any], root: dict[str, Any]
) -> None:
    """Reference graphs of every shape (in-place cycles, recursion through members, missing or escaped
    targets, a member named ``$ref``): a clean verdict of the walk is the classifier's."""
    schema = {"type": "object", "properties": {"r": root}, "$defs": defs, **({"definitions": legacy} if legacy else {})}
    if Quick().root(schema):
        issues, node, notes = classify_extended(schema)
        assert issues == [] and node is not None and notes == (), schema


def _chain(levels: int, fan_out: int) -> dict[str, Any]:
    """``$defs`` d0 .. d<levels>: each of ``fan_out`` members refers to the next (``fan_out ** levels`` expanded)."""
    defs: dict[str, Any] = {f"d{levels}": {"type": "string"}}
    for i in range(levels):
        defs[f"d{i}"] = {
            "type": "object",
            "properties": {f"p{j}": {"$ref": f"#/$defs/d{i + 1}"} for j in range(fan_out)},
        }
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def test_quick_refs_decide_pydantic_shapes_and_leave_bombs_to_the_classifier() -> None:
    pydantic = {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/Item"}, "all": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "required": ["item"],
        "$defs": {
            "Item": {"type": "object", "properties": {"tag": {"anyOf": [{"$ref": "#/$defs/Tag"}, {"type": "null"}]}}},
            "Tag": {"enum": ["a", "b"], "type": "string"},
        },
    }
    assert Quick().root(pydantic) and classify_extended(pydantic)[0] == []
    assert Quick().root(_chain(7, 4)) and classify_extended(_chain(7, 4))[0] == []  # 4**7 = 16,384 expanded
    bomb = _chain(12, 4)  # 4**12 = 16.8 million subschema evaluations of one value: past MAX_WORK
    assert not Quick().root(bomb)
    assert [i.keyword for i in classify_extended(bomb)[0]] == ["$ref"]
    assert compile(bomb, profile="extended", defer=True).report.kind == U
    recursive = {
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/T"}},
        "$defs": {"T": {"properties": {"k": {"$ref": "#/$defs/T"}}}},
    }
    assert not Quick().root(recursive)  # recursion through members: the classifier counts it (and accepts it)
    assert compile(recursive, profile="extended", defer=True).supported
    cycle = {
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/T"}},
        "$defs": {"T": {"allOf": [{"$ref": "#/$defs/T"}]}},
    }
    assert not Quick().root(cycle) and compile(cycle, profile="extended", defer=True).report.kind == U


@given(st.integers(-(10**25), 10**25), st.integers(0, 10**6), st.integers(-420, 420))
@settings(max_examples=300, deadline=None)
def test_in_double_range_agrees_with_the_nearest_double(whole: int, fraction: int, exponent: int) -> None:
    """Oracle: Python's own ``float``: in range exactly when the nearest double is finite, and zero only for zero."""
    from mcp_guard.core.json_values import in_double_range

    text = f"{whole}.{fraction}e{exponent}"
    nearest = float(text)
    expected = nearest not in (float("inf"), float("-inf")) and (nearest != 0.0 or Decimal(text) == 0)
    assert in_double_range(Inexact(text)) is expected
