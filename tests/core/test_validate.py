"""Validation of arguments against supported schemas.

Spec: /work/shared/spec/input-schema-subset.md. Cases assert on (kind, keyword, schema_path,
instance_path) as a multiset: order is not part of the contract, the number of findings is.
Every rule here holds in both profiles (the schemas carry no annotation).
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from mcp_guard import check, classify
from mcp_guard import compile as compile_schema

V = "validation"
TYPES = ["object", "array", "string", "integer", "number", "boolean"]

Finding = tuple[str, str, str, str | None]


@pytest.fixture(params=["standard", "strict"])
def profile(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def findings(report: Any) -> Counter[Finding]:
    return Counter((i.kind, i.keyword, i.schema_path, i.instance_path) for i in report.issues)


def run(schema: Any, arguments: Any, profile: str) -> Any:
    """check() and compile().check() must agree; the schema must classify cleanly."""
    assert classify(schema, profile=profile).ok, "test schema must be supported"
    schema_before = copy.deepcopy(schema)
    arguments_before = copy.deepcopy(arguments)
    report = check(schema, arguments, profile=profile)
    compiled = compile_schema(schema, profile=profile)
    again = compiled.check(arguments)
    assert findings(again) == findings(report)
    assert compiled.check(arguments).issues == again.issues, "a compiled schema is reusable"
    assert schema == schema_before, "validation must not mutate the schema"
    assert arguments == arguments_before, "validation must not mutate (or default) the arguments"
    return report


def assert_valid(schema: Any, arguments: Any, profile: str) -> None:
    report = run(schema, arguments, profile)
    assert report.ok is True
    assert report.kind is None
    assert report.issues == ()


def assert_invalid(schema: Any, arguments: Any, expected: list[tuple[str, str, str]], profile: str) -> None:
    """expected: (keyword, schema_path, instance_path) triples, all of kind validation."""
    report = run(schema, arguments, profile)
    assert findings(report) == Counter((V, kw, sp, ip) for kw, sp, ip in expected)
    assert report.ok is False
    assert report.kind == V


def prop(node: dict[str, Any], name: str = "a") -> dict[str, Any]:
    return {"type": "object", "properties": {name: node}}


# --- type -------------------------------------------------------------------------------------

SAMPLES: list[tuple[str, Any]] = [
    ("object", {}),
    ("object-nonempty", {"k": 1}),
    ("array", []),
    ("array-nonempty", [1]),
    ("string", "s"),
    ("empty-string", ""),
    ("numeric-string", "1"),
    ("int", 1),
    ("zero", 0),
    ("negative-int", -7),
    ("big-int", 2**70),
    ("float-integral", 1.0),
    ("negative-zero", -0.0),
    ("float", 1.5),
    ("true", True),
    ("false", False),
    ("null", None),
]

ACCEPTS = {
    "object": {"object", "object-nonempty"},
    "array": {"array", "array-nonempty"},
    "string": {"string", "empty-string", "numeric-string"},
    "integer": {"int", "zero", "negative-int", "big-int", "float-integral", "negative-zero"},
    "number": {"int", "zero", "negative-int", "big-int", "float-integral", "negative-zero", "float"},
    "boolean": {"true", "false"},
}

TYPE_CASES = [
    pytest.param(type_name, value, label in ACCEPTS[type_name], id=f"{type_name}-{label}")
    for type_name in TYPES
    for label, value in SAMPLES
]


@pytest.mark.parametrize(("type_name", "value", "accepted"), TYPE_CASES)
def test_type(type_name: str, value: Any, accepted: bool, profile: str) -> None:
    node: dict[str, Any] = {"type": type_name}
    schema = prop(node)
    if accepted:
        assert_valid(schema, {"a": value}, profile)
    else:
        assert_invalid(schema, {"a": value}, [("type", "/properties/a/type", "/a")], profile)


@pytest.mark.parametrize(("type_name", "value", "accepted"), TYPE_CASES)
def test_type_in_items(type_name: str, value: Any, accepted: bool, profile: str) -> None:
    schema = prop({"type": "array", "items": {"type": type_name}})
    good = next(v for label, v in SAMPLES if label in ACCEPTS[type_name])
    if accepted:
        assert_valid(schema, {"a": [good, value, good]}, profile)
    else:
        assert_invalid(schema, {"a": [good, value, good]}, [("type", "/properties/a/items/type", "/a/1")], profile)


@pytest.mark.parametrize(
    ("node", "value"),
    [
        pytest.param({"type": "integer", "minimum": 5, "enum": [7]}, "x", id="integer-minimum-enum"),
        pytest.param({"type": "integer", "minimum": 5}, True, id="bool-against-minimum"),
        pytest.param({"type": "string", "enum": ["a"]}, 1, id="string-enum"),
        pytest.param(
            {
                "type": "object",
                "properties": {"k": {"type": "string"}},
                "required": ["k", "m"],
                "additionalProperties": False,
            },
            [{"x": 1}],
            id="object-keywords",
        ),
        pytest.param({"type": "object", "required": ["k"]}, None, id="object-required-null"),
        pytest.param({"type": "array", "items": {"type": "string"}}, {"0": 5}, id="array-items"),
        pytest.param({"type": "array", "items": {"type": "string"}, "enum": [["x"]]}, "x", id="array-enum"),
    ],
)
def test_failed_type_reports_nothing_else_for_that_value(node: dict[str, Any], value: Any, profile: str) -> None:
    assert_invalid(prop(node), {"a": value}, [("type", "/properties/a/type", "/a")], profile)


# --- decision 11: non-object arguments --------------------------------------------------------

NON_OBJECT_ARGUMENTS = [
    pytest.param("{}", id="json-text"),
    pytest.param('{"n": 3}', id="json-text-with-member"),
    pytest.param("", id="empty-string"),
    pytest.param(None, id="null"),
    pytest.param([], id="empty-list"),
    pytest.param([{"n": 3}], id="list-of-object"),
    pytest.param(3, id="int"),
    pytest.param(3.5, id="float"),
    pytest.param(0, id="zero"),
    pytest.param(True, id="true"),
    pytest.param(False, id="false"),
]


@pytest.mark.parametrize("arguments", NON_OBJECT_ARGUMENTS)
def test_non_object_arguments_with_implied_root_type(arguments: Any, profile: str) -> None:
    schema = {"properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": False}
    assert_invalid(schema, arguments, [("type", "", "")], profile)


@pytest.mark.parametrize("arguments", NON_OBJECT_ARGUMENTS)
def test_non_object_arguments_with_root_type(arguments: Any, profile: str) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert_invalid(schema, arguments, [("type", "/type", "")], profile)


@pytest.mark.parametrize("arguments", NON_OBJECT_ARGUMENTS)
def test_non_object_arguments_with_empty_root(arguments: Any, profile: str) -> None:
    assert_invalid({}, arguments, [("type", "", "")], profile)


@pytest.mark.parametrize("schema", [pytest.param({}, id="empty"), pytest.param({"type": "object"}, id="object")])
def test_empty_arguments_object(schema: dict[str, Any], profile: str) -> None:
    assert_valid(schema, {}, profile)
    assert_valid(schema, {"anything": [1, {"x": None}]}, profile)


# --- minimum ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_name", "minimum", "value", "ok"),
    [
        pytest.param("integer", 1, 1, True, id="int-equal-bound"),
        pytest.param("integer", 1, 2, True, id="int-above"),
        pytest.param("integer", 1, 0, False, id="int-below"),
        pytest.param("integer", 1, 1.0, True, id="int-float-equal-bound"),
        pytest.param("integer", 1, 0.0, False, id="int-float-below"),
        pytest.param("integer", 0, -0.0, True, id="negative-zero-at-zero"),
        pytest.param("integer", -0.0, 0, True, id="zero-at-negative-zero"),
        pytest.param("integer", -5, -5, True, id="negative-bound-equal"),
        pytest.param("integer", -5, -6, False, id="negative-bound-below"),
        pytest.param("integer", 1.5, 1, False, id="fractional-bound-below"),
        pytest.param("integer", 1.5, 2, True, id="fractional-bound-above"),
        pytest.param("number", 0.1, 0.1, True, id="number-equal"),
        pytest.param("number", 0.1, 0.09999999999999999, False, id="number-just-below"),
        pytest.param("number", 0, -1e-300, False, id="number-tiny-negative"),
        pytest.param("number", 0, 1e-300, True, id="number-tiny-positive"),
        pytest.param("number", 1, 1.5, True, id="number-float-above-int-bound"),
        pytest.param("number", 2, 1.5, False, id="number-float-below-int-bound"),
        pytest.param("number", -1e308, -1.7e308, False, id="number-huge-negative"),
        pytest.param("integer", 2**53 + 1, 2**53, False, id="big-int-below"),
        pytest.param("integer", 2**53 + 1, float(2**53), False, id="big-float-below-big-int"),
        pytest.param("integer", 2**53 + 1, 2**53 + 1, True, id="big-int-equal"),
        pytest.param("integer", float(2**53), 2**53 + 1, True, id="big-int-above-float-bound"),
        pytest.param("number", 10**400, 1e308, False, id="huge-int-bound-float-below"),
        pytest.param("number", 1e308, 10**400, True, id="float-bound-huge-int-above"),
        pytest.param("integer", 10**400, 10**400 - 1, False, id="huge-int-bound-below"),
        pytest.param("integer", 10**400, 10**400, True, id="huge-int-bound-equal"),
    ],
)
def test_minimum(type_name: str, minimum: Any, value: Any, ok: bool, profile: str) -> None:
    schema = prop({"type": type_name, "minimum": minimum})
    if ok:
        assert_valid(schema, {"a": value}, profile)
    else:
        assert_invalid(schema, {"a": value}, [("minimum", "/properties/a/minimum", "/a")], profile)


def test_minimum_in_items(profile: str) -> None:
    schema = prop({"type": "array", "items": {"type": "integer", "minimum": 0}})
    assert_invalid(
        schema,
        {"a": [0, -1, 3, -2]},
        [
            ("minimum", "/properties/a/items/minimum", "/a/1"),
            ("minimum", "/properties/a/items/minimum", "/a/3"),
        ],
        profile,
    )


# --- required ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("required", "arguments", "missing"),
    [
        pytest.param(["a"], {"a": 1}, [], id="present"),
        pytest.param(["b"], {"b": None}, [], id="present-null-undeclared"),
        pytest.param(["a"], {}, ["a"], id="missing-one"),
        pytest.param(["a", "b", "c"], {"b": 0}, ["a", "c"], id="missing-two"),
        pytest.param(["a", "b"], {}, ["a", "b"], id="missing-all"),
        pytest.param(["A"], {"a": 1}, ["A"], id="case-sensitive"),
        pytest.param([], {}, [], id="empty-required"),
        pytest.param(["ghost"], {"other": 1}, ["ghost"], id="not-in-properties"),
        pytest.param(["a/b~c"], {"a/b~c": 1}, [], id="escaped-name-present"),
    ],
)
def test_required(required: list[str], arguments: dict[str, Any], missing: list[str], profile: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": required}
    if missing:
        assert_invalid(schema, arguments, [("required", "/required", "") for _ in missing], profile)
    else:
        assert_valid(schema, arguments, profile)


def test_required_nested(profile: str) -> None:
    schema = prop({"type": "object", "required": ["x", "y"]}, name="o")
    assert_invalid(
        schema,
        {"o": {"y": 1}},
        [("required", "/properties/o/required", "/o")],
        profile,
    )
    assert_valid(schema, {}, profile)


def test_required_in_items(profile: str) -> None:
    schema = prop({"type": "array", "items": {"type": "object", "required": ["id"]}}, name="l")
    assert_invalid(
        schema,
        {"l": [{"id": 1}, {}, {"id": 2}, {"ID": 3}]},
        [
            ("required", "/properties/l/items/required", "/l/1"),
            ("required", "/properties/l/items/required", "/l/3"),
        ],
        profile,
    )


def test_required_and_property_errors_together(profile: str) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["a", "c"],
    }
    assert_invalid(
        schema,
        {"b": 1},
        [("required", "/required", ""), ("required", "/required", ""), ("type", "/properties/b/type", "/b")],
        profile,
    )


# --- additionalProperties ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "extras"),
    [
        pytest.param({}, [], id="empty"),
        pytest.param({"a": 1}, [], id="declared-only"),
        pytest.param({"extra": 1}, ["/extra"], id="one-extra"),
        pytest.param({"a": 1, "x": None, "y": []}, ["/x", "/y"], id="two-extras"),
        pytest.param({"A": 1}, ["/A"], id="case-sensitive"),
        pytest.param({"a/b~c": 1}, ["/a~1b~0c"], id="escaped-extra"),
        pytest.param({"": 1}, ["/"], id="empty-name-extra"),
    ],
)
def test_additional_properties_false(arguments: dict[str, Any], extras: list[str], profile: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False}
    if extras:
        assert_invalid(
            schema, arguments, [("additionalProperties", "/additionalProperties", p) for p in extras], profile
        )
    else:
        assert_valid(schema, arguments, profile)


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"type": "object", "properties": {"a": {"type": "integer"}}}, id="absent"),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": True},
            id="true",
        ),
    ],
)
def test_additional_properties_allowed(schema: dict[str, Any], profile: str) -> None:
    assert_valid(schema, {"a": 1, "extra": "anything", "more": {"x": [None, 1.5]}}, profile)


def test_additional_properties_false_with_required_outside_properties(profile: str) -> None:
    schema = {"type": "object", "required": ["x"], "additionalProperties": False}
    assert_invalid(schema, {"x": 1}, [("additionalProperties", "/additionalProperties", "/x")], profile)


def test_additional_properties_false_nested(profile: str) -> None:
    schema = prop({"type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": False}, name="o")
    assert_invalid(
        schema,
        {"o": {"k": "v", "z": 1}, "top-level-extra": 1},
        [("additionalProperties", "/properties/o/additionalProperties", "/o/z")],
        profile,
    )


def test_declared_property_with_bad_value_is_not_extra(profile: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False}
    assert_invalid(schema, {"a": "x"}, [("type", "/properties/a/type", "/a")], profile)


# --- enum -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "value", "ok"),
    [
        pytest.param({"type": "string", "enum": ["a", "b"]}, "a", True, id="string-member"),
        pytest.param({"type": "string", "enum": ["a", "b"]}, "c", False, id="string-non-member"),
        pytest.param({"type": "string", "enum": ["a"]}, "a ", False, id="string-trailing-space"),
        pytest.param({"type": "integer", "enum": [1, 2]}, 2, True, id="integer-member"),
        pytest.param({"type": "integer", "enum": [1, 2]}, 3, False, id="integer-non-member"),
        pytest.param({"type": "boolean", "enum": [True]}, True, True, id="boolean-member"),
        pytest.param({"type": "boolean", "enum": [True]}, False, False, id="boolean-non-member"),
        pytest.param({"type": "object", "enum": [{"k": "v"}]}, {"k": "v"}, True, id="object-member"),
        pytest.param({"type": "object", "enum": [{"k": "v"}]}, {"k": "w"}, False, id="object-non-member"),
        pytest.param(
            {"type": "array", "items": {"type": "integer"}, "enum": [[1, 2]]}, [1, 2], True, id="array-member"
        ),
        pytest.param(
            {"type": "array", "items": {"type": "integer"}, "enum": [[1, 2]]},
            [1],
            False,
            id="array-non-member",
        ),
        pytest.param({"type": "number", "enum": [1, 2], "minimum": 0}, 1, True, id="with-minimum"),
    ],
)
def test_enum(node: dict[str, Any], value: Any, ok: bool, profile: str) -> None:
    schema = prop(node)
    if ok:
        assert_valid(schema, {"a": value}, profile)
    else:
        assert_invalid(schema, {"a": value}, [("enum", "/properties/a/enum", "/a")], profile)


def test_enum_narrows_and_does_not_replace_other_constraints(profile: str) -> None:
    # enum allows 0 but minimum does not: both constraints hold.
    schema = prop({"type": "integer", "enum": [0, 5], "minimum": 1})
    assert_valid(schema, {"a": 5}, profile)
    report = run(schema, {"a": 0}, profile)
    assert findings(report) == Counter([(V, "minimum", "/properties/a/minimum", "/a")])
    report = run(schema, {"a": 3}, profile)
    assert findings(report) == Counter([(V, "enum", "/properties/a/enum", "/a")])
    report = run(schema, {"a": -1}, profile)
    assert set(findings(report)) == {
        (V, "minimum", "/properties/a/minimum", "/a"),
        (V, "enum", "/properties/a/enum", "/a"),
    }


def test_enum_on_array_and_items_both_apply(profile: str) -> None:
    schema = prop({"type": "array", "items": {"type": "integer", "minimum": 0}, "enum": [[1, 2], [-1]]})
    assert_valid(schema, {"a": [1, 2]}, profile)
    assert_invalid(schema, {"a": [-1]}, [("minimum", "/properties/a/items/minimum", "/a/0")], profile)
    assert_invalid(schema, {"a": [2, 1]}, [("enum", "/properties/a/enum", "/a")], profile)


# --- items ------------------------------------------------------------------------------------


def test_items_every_element(profile: str) -> None:
    schema = prop({"type": "array", "items": {"type": "string"}})
    assert_valid(schema, {"a": []}, profile)
    assert_valid(schema, {"a": ["x", "y"]}, profile)
    assert_invalid(
        schema,
        {"a": [1, "x", None, True]},
        [
            ("type", "/properties/a/items/type", "/a/0"),
            ("type", "/properties/a/items/type", "/a/2"),
            ("type", "/properties/a/items/type", "/a/3"),
        ],
        profile,
    )


def test_items_nested_arrays(profile: str) -> None:
    schema = prop({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}})
    assert_valid(schema, {"a": [[], [1, 2], [3.0]]}, profile)
    assert_invalid(
        schema,
        {"a": [[1], [2, "x"], 3]},
        [("type", "/properties/a/items/items/type", "/a/1/1"), ("type", "/properties/a/items/type", "/a/2")],
        profile,
    )


def test_array_without_items_accepts_any_elements(profile: str) -> None:
    assert_valid(prop({"type": "array"}), {"a": [1, "x", None, {"k": [True]}]}, profile)


def test_items_objects(profile: str) -> None:
    schema = prop(
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"label": {"type": "string"}},
                "required": ["label"],
                "additionalProperties": False,
            },
        },
        name="options",
    )
    assert_invalid(
        schema,
        {"options": [{"label": "a"}, {"label": 1}, {"label": "c", "x": 0}, {}]},
        [
            ("type", "/properties/options/items/properties/label/type", "/options/1/label"),
            ("additionalProperties", "/properties/options/items/additionalProperties", "/options/2/x"),
            ("required", "/properties/options/items/required", "/options/3"),
        ],
        profile,
    )


# --- properties -------------------------------------------------------------------------------


def test_absent_properties_are_not_checked(profile: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    assert_valid(schema, {}, profile)
    assert_valid(schema, {"b": "x"}, profile)


def test_every_bad_property_is_reported(profile: str) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
    }
    assert_invalid(
        schema,
        {"a": "x", "b": 2, "c": "y"},
        [("type", "/properties/a/type", "/a"), ("type", "/properties/c/type", "/c")],
        profile,
    )


def test_deep_pointers(profile: str) -> None:
    schema = prop(
        {"type": "object", "properties": {"p": {"type": "object", "properties": {"q": {"type": "integer"}}}}},
        name="o",
    )
    assert_invalid(
        schema,
        {"o": {"p": {"q": "x"}}},
        [("type", "/properties/o/properties/p/properties/q/type", "/o/p/q")],
        profile,
    )


@pytest.mark.parametrize(
    "name",
    [
        "description",
        "$ref",
        "type",
        "properties",
        "oneOf",
        "enum",
        "minimum",
        "items",
        "required",
        "title",
        "$schema",
    ],
)
def test_property_named_like_keyword_validates_as_property(name: str, profile: str) -> None:
    # decision 10
    schema = {"type": "object", "properties": {name: {"type": "integer", "minimum": 0}}, "required": [name]}
    assert_valid(schema, {name: 3}, profile)
    assert_invalid(schema, {name: -1}, [("minimum", f"/properties/{name}/minimum", f"/{name}")], profile)
    assert_invalid(schema, {name: "x"}, [("type", f"/properties/{name}/type", f"/{name}")], profile)
    assert_invalid(schema, {}, [("required", "/required", "")], profile)


@pytest.mark.parametrize(
    ("name", "escaped"),
    [
        pytest.param("a/b~c", "a~1b~0c", id="slash-and-tilde"),
        pytest.param("~1", "~01", id="literal-tilde-one"),
        pytest.param("", "", id="empty-name"),
        pytest.param("0", "0", id="digit-name"),
    ],
)
def test_pointer_escaping(name: str, escaped: str, profile: str) -> None:
    # decision 15
    schema = {"type": "object", "properties": {name: {"type": "integer"}}}
    assert_invalid(schema, {name: "x"}, [("type", f"/properties/{escaped}/type", f"/{escaped}")], profile)
    nested = prop({"type": "object", "properties": {name: {"type": "array", "items": {"type": "integer"}}}}, name=name)
    assert_invalid(
        nested,
        {name: {name: [1, "x"]}},
        [("type", f"/properties/{escaped}/properties/{escaped}/items/type", f"/{escaped}/{escaped}/1")],
        profile,
    )


# --- oneOf ------------------------------------------------------------------------------------

SCALAR_ONEOF = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
NUMERIC_ONEOF = {"oneOf": [{"type": "integer"}, {"type": "number"}]}


@pytest.mark.parametrize(
    ("node", "value", "ok"),
    [
        pytest.param(SCALAR_ONEOF, "x", True, id="first-branch"),
        pytest.param(SCALAR_ONEOF, 3, True, id="second-branch"),
        pytest.param(SCALAR_ONEOF, 3.0, True, id="integral-float-second-branch"),
        pytest.param(SCALAR_ONEOF, 3.5, False, id="none-float"),
        pytest.param(SCALAR_ONEOF, None, False, id="none-null"),
        pytest.param(SCALAR_ONEOF, True, False, id="none-bool"),
        pytest.param(SCALAR_ONEOF, [], False, id="none-array"),
        pytest.param(NUMERIC_ONEOF, 1.5, True, id="number-only"),
        pytest.param(NUMERIC_ONEOF, 1, False, id="both-int"),
        pytest.param(NUMERIC_ONEOF, 1.0, False, id="both-integral-float"),
        pytest.param(NUMERIC_ONEOF, True, False, id="numeric-none-bool"),
        pytest.param({"oneOf": [{"type": "string"}, {"type": "string"}]}, "x", False, id="identical-branches"),
        pytest.param({"oneOf": [{"type": "string"}]}, "x", True, id="single-branch"),
        pytest.param({"oneOf": [{"type": "string"}]}, 1, False, id="single-branch-none"),
        pytest.param(
            {"oneOf": [{"type": "integer", "minimum": 10}, {"type": "integer", "enum": [1, 2, 3]}]},
            2,
            True,
            id="constraint-selects-branch",
        ),
        pytest.param(
            {"oneOf": [{"type": "integer", "minimum": 2}, {"type": "integer", "enum": [1, 2, 3]}]},
            2,
            False,
            id="constraints-both-match",
        ),
        pytest.param(
            {"oneOf": [{"type": "integer", "minimum": 10}, {"type": "integer", "enum": [1, 2, 3]}]},
            5,
            False,
            id="constraints-none-match",
        ),
        pytest.param(
            {
                "description": "d",
                "oneOf": [{"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["b"]}],
            },
            "b",
            True,
            id="with-description",
        ),
    ],
)
def test_oneof(node: dict[str, Any], value: Any, ok: bool, profile: str) -> None:
    schema = prop(node)
    if ok:
        assert_valid(schema, {"a": value}, profile)
    else:
        assert_invalid(schema, {"a": value}, [("oneOf", "/properties/a/oneOf", "/a")], profile)


TAGGED = {
    "oneOf": [
        {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["circle"]},
                "r": {"type": "number", "minimum": 0},
            },
            "required": ["kind", "r"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"kind": {"type": "string", "enum": ["square"]}, "side": {"type": "number"}},
            "required": ["kind", "side"],
            "additionalProperties": False,
        },
    ]
}


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        pytest.param({"kind": "circle", "r": 1}, True, id="circle"),
        pytest.param({"kind": "square", "side": 2.5}, True, id="square"),
        pytest.param({"kind": "circle", "r": -1}, False, id="circle-bad-radius"),
        pytest.param({"kind": "circle", "side": 1}, False, id="mixed-up"),
        pytest.param({"kind": "triangle"}, False, id="unknown-kind"),
        pytest.param({}, False, id="empty"),
        pytest.param("circle", False, id="not-object"),
    ],
)
def test_oneof_object_branches_report_one_issue(value: Any, ok: bool, profile: str) -> None:
    # Branch failures never leak: exactly one oneOf issue at the value.
    schema = prop(TAGGED, name="shape")
    if ok:
        assert_valid(schema, {"shape": value}, profile)
    else:
        assert_invalid(schema, {"shape": value}, [("oneOf", "/properties/shape/oneOf", "/shape")], profile)


def test_oneof_in_items(profile: str) -> None:
    schema = prop({"type": "array", "items": SCALAR_ONEOF}, name="opts")
    assert_valid(schema, {"opts": ["a", 1, "b"]}, profile)
    assert_invalid(
        schema,
        {"opts": ["a", 1, None, 2.5]},
        [
            ("oneOf", "/properties/opts/items/oneOf", "/opts/2"),
            ("oneOf", "/properties/opts/items/oneOf", "/opts/3"),
        ],
        profile,
    )


def test_nested_oneof(profile: str) -> None:
    inner = {"oneOf": [{"type": "integer"}, {"type": "boolean"}]}
    schema = prop({"oneOf": [inner, {"type": "string"}]})
    assert_valid(schema, {"a": 1}, profile)
    assert_valid(schema, {"a": False}, profile)
    assert_valid(schema, {"a": "s"}, profile)
    assert_invalid(schema, {"a": 1.5}, [("oneOf", "/properties/a/oneOf", "/a")], profile)


def test_oneof_errors_inside_matched_branch_are_none(profile: str) -> None:
    # Whatever fails inside a branch, the value's only finding is the oneOf one; others values still report.
    schema = {
        "type": "object",
        "properties": {"shape": TAGGED, "n": {"type": "integer"}},
    }
    assert_invalid(
        schema,
        {"shape": {"kind": "circle", "r": "x"}, "n": "y"},
        [("oneOf", "/properties/shape/oneOf", "/shape"), ("type", "/properties/n/type", "/n")],
        profile,
    )


# --- annotations never validate (standard) ----------------------------------------------------


@pytest.mark.parametrize(
    ("node", "value"),
    [
        pytest.param({"type": "integer", "default": "not an int"}, 3, id="default-wrong-type"),
        pytest.param({"type": "integer", "examples": ["x", None]}, 3, id="examples-wrong-type"),
        pytest.param({"type": "integer", "readOnly": True}, 3, id="readOnly-sent"),
        pytest.param({"type": "integer", "writeOnly": True}, 3, id="writeOnly-sent"),
        pytest.param({"type": "integer", "deprecated": True}, 3, id="deprecated-sent"),
        pytest.param({"type": "integer", "title": "T", "$comment": "c"}, 3, id="title-comment"),
        pytest.param({"type": "integer", "description": "must be 7"}, 3, id="description"),
    ],
)
def test_annotations_do_not_validate(node: dict[str, Any], value: Any) -> None:
    schema = prop(node)
    assert_valid(schema, {"a": value}, "standard")
    assert_invalid(schema, {"a": "s"}, [("type", "/properties/a/type", "/a")], "standard")


def test_default_is_never_injected() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer", "default": 5}}, "required": ["a"]}
    arguments: dict[str, Any] = {}
    assert_invalid(schema, arguments, [("required", "/required", "")], "standard")
    assert arguments == {}


def test_root_schema_dialect_does_not_change_validation() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1}},
    }
    assert_valid(schema, {"n": 1.0}, "standard")
    assert_invalid(schema, {"n": 0}, [("minimum", "/properties/n/minimum", "/n")], "standard")


# --- reports ----------------------------------------------------------------------------------


def test_check_equals_compiled_check(profile: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "minimum": 0},
            "l": {"type": "array", "items": {"type": "string"}},
            "z": {"type": "boolean"},
        },
        "required": ["a", "z"],
        "additionalProperties": False,
    }
    arguments = {"a": -1, "l": ["x", 2], "q": 1}
    compiled = compile_schema(schema, profile=profile)
    assert compiled.supported is True
    first = compiled.check(arguments)
    assert set(first.issues) == set(check(schema, arguments, profile=profile).issues)
    assert findings(first) == Counter(
        [
            (V, "minimum", "/properties/a/minimum", "/a"),
            (V, "type", "/properties/l/items/type", "/l/1"),
            (V, "required", "/required", ""),
            (V, "additionalProperties", "/additionalProperties", "/q"),
        ]
    )
    assert compiled.check({"a": 0, "z": False}).ok


def test_issue_fields(profile: str) -> None:
    report = check({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": "x"}, profile=profile)
    (issue,) = report.issues
    assert issue.kind == V
    assert isinstance(issue.message, str)
    assert issue.message
    assert issue.to_json() == {
        "kind": V,
        "keyword": "type",
        "schema_path": "/properties/a/type",
        "instance_path": "/a",
        "message": issue.message,
    }
    assert report.to_json()["ok"] is False
    assert report.to_json()["kind"] == V
