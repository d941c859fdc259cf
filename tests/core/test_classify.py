"""Classification of input schemas against the subset contract.

Spec: /work/shared/spec/input-schema-subset.md. Every case asserts on kinds, keywords and
schema pointers, never on message wording. Schema findings carry ``instance_path is None``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mcp_guard import check, classify
from mcp_guard import compile as compile_schema

U = "unsupported_capability"
V = "validation"
PROFILES = ["standard", "strict"]
ANNOTATIONS = ["title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"]
TYPES = ["object", "array", "string", "integer", "number", "boolean"]

Finding = tuple[str, str, str]


def findings(report: Any) -> set[Finding]:
    """The schema findings as a set of (kind, keyword, schema_path); checks they are schema-only."""
    for issue in report.issues:
        assert issue.instance_path is None, issue
    return {(i.kind, i.keyword, i.schema_path) for i in report.issues}


def assert_report(report: Any, expected: set[Finding]) -> None:
    """Exactly the expected findings, and a report kind/ok consistent with them."""
    assert findings(report) == expected
    assert report.ok is (not expected)
    if not expected:
        assert report.kind is None
    elif any(k == U for k, _, _ in expected):
        assert report.kind == U
    else:
        assert report.kind == V


def assert_ok(schema: Any, profile: str) -> None:
    snapshot = copy.deepcopy(schema)
    report = classify(schema, profile=profile)
    assert_report(report, set())
    compiled = compile_schema(schema, profile=profile)
    assert compiled.supported is True
    assert compiled.report.ok
    assert schema == snapshot, "classification must not mutate the schema"


# --- node locations -------------------------------------------------------------------------
# Each wraps a nested schema node somewhere below the root and returns (schema, node pointer).


def in_property(node: Any) -> tuple[dict[str, Any], str]:
    return {"type": "object", "properties": {"a": node}}, "/properties/a"


def in_items(node: Any) -> tuple[dict[str, Any], str]:
    return {"type": "object", "properties": {"a": {"type": "array", "items": node}}}, "/properties/a/items"


def in_oneof_branch(node: Any) -> tuple[dict[str, Any], str]:
    schema = {"type": "object", "properties": {"a": {"oneOf": [{"type": "boolean"}, node]}}}
    return schema, "/properties/a/oneOf/1"


def in_deep_object(node: Any) -> tuple[dict[str, Any], str]:
    schema = {
        "properties": {
            "o": {"type": "object", "properties": {"p": {"type": "array", "items": node}}},
        }
    }
    return schema, "/properties/o/properties/p/items"


LOCATIONS = [
    pytest.param(in_property, id="property"),
    pytest.param(in_items, id="items"),
    pytest.param(in_oneof_branch, id="oneOf-branch"),
    pytest.param(in_deep_object, id="deep"),
]


def typed_node(type_name: str, **extra: Any) -> dict[str, Any]:
    """A valid node of the given type (arrays get an items schema), plus extra keys."""
    node: dict[str, Any] = {"type": type_name}
    if type_name == "array":
        node["items"] = {"type": "string"}
    node.update(extra)
    return node


# --- supported schemas ----------------------------------------------------------------------

VALID_SCHEMAS = [
    pytest.param({}, id="empty-root"),
    pytest.param({"type": "object"}, id="root-object"),
    pytest.param(
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]},
        id="spec-example",
    ),
    pytest.param({"properties": {"s": {"type": "string"}}}, id="root-without-type-with-properties"),
    pytest.param({"type": "object", "properties": {}}, id="empty-properties"),
    pytest.param({"type": "object", "required": []}, id="empty-required"),
    pytest.param({"type": "object", "required": ["ghost", "other"]}, id="required-names-unlisted-properties"),
    pytest.param({"type": "object", "additionalProperties": True}, id="additionalProperties-true"),
    pytest.param({"type": "object", "additionalProperties": False}, id="additionalProperties-false"),
    pytest.param({"type": "object", "description": "root"}, id="root-description"),
    pytest.param({"description": ""}, id="empty-description"),
    pytest.param(
        {
            "type": "object",
            "properties": {
                "o": {
                    "type": "object",
                    "description": "nested",
                    "properties": {"x": {"type": "string"}},
                    "required": ["x", "y"],
                    "additionalProperties": False,
                }
            },
        },
        id="nested-object-all-object-keywords",
    ),
    pytest.param(
        {"properties": {"s": {"type": "string", "enum": ["a", 1, None, True, [1], {"k": "v"}]}}},
        id="enum-mixed-json-values",
    ),
    pytest.param({"properties": {"s": {"type": "string", "enum": []}}}, id="enum-empty"),
    pytest.param({"properties": {"s": {"type": "string", "enum": ["a", "a", "a"]}}}, id="enum-duplicates"),
    pytest.param({"properties": {"o": {"type": "object", "enum": [{"a": 1}, {}]}}}, id="enum-on-object"),
    pytest.param({"properties": {"b": {"type": "boolean", "enum": [True]}}}, id="enum-on-boolean"),
    pytest.param(
        {"properties": {"a": {"type": "array", "items": {"type": "integer"}, "enum": [[1]]}}},
        id="enum-on-array",
    ),
    pytest.param({"properties": {"i": {"type": "integer", "minimum": 0}}}, id="minimum-zero"),
    pytest.param({"properties": {"i": {"type": "integer", "minimum": -5}}}, id="minimum-negative"),
    pytest.param({"properties": {"i": {"type": "integer", "minimum": 1.5}}}, id="minimum-float-on-integer"),
    pytest.param({"properties": {"i": {"type": "integer", "minimum": -0.0}}}, id="minimum-negative-zero"),
    pytest.param({"properties": {"i": {"type": "integer", "minimum": 2**64}}}, id="minimum-big-int"),
    pytest.param({"properties": {"i": {"type": "integer", "minimum": 10**400}}}, id="minimum-huge-int"),
    pytest.param({"properties": {"x": {"type": "number", "minimum": 1e-9}}}, id="minimum-on-number"),
    pytest.param({"properties": {"x": {"type": "number", "minimum": 1, "enum": [1, 2]}}}, id="minimum-with-enum"),
    pytest.param({"properties": {"l": {"type": "array", "items": {"type": "string"}}}}, id="items-string"),
    pytest.param(
        {"properties": {"l": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}}},
        id="items-nested-array",
    ),
    pytest.param(
        {
            "properties": {
                "l": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"k": {"type": "string"}},
                        "required": ["k"],
                        "additionalProperties": False,
                    },
                }
            }
        },
        id="items-object",
    ),
    pytest.param({"properties": {"b": {"type": "boolean"}}}, id="boolean"),
    pytest.param(
        {
            "properties": {
                t: {"type": t, "description": f"a {t}"} for t in ["string", "integer", "number", "boolean", "object"]
            }
        },
        id="description-on-every-type",
    ),
    pytest.param({"properties": {"u": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}, id="oneOf"),
    pytest.param({"properties": {"u": {"oneOf": [{"type": "string"}]}}}, id="oneOf-single-branch"),
    pytest.param(
        {"properties": {"u": {"description": "either", "oneOf": [{"type": "string"}, {"type": "integer"}]}}},
        id="oneOf-with-description",
    ),
    pytest.param(
        {"properties": {"u": {"oneOf": [{"oneOf": [{"type": "string"}, {"type": "number"}]}, {"type": "boolean"}]}}},
        id="oneOf-branch-is-oneOf-node",
    ),
    pytest.param(
        {
            "properties": {
                "u": {
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": {"kind": {"type": "string", "enum": ["a"]}},
                            "required": ["kind"],
                            "additionalProperties": False,
                        },
                        {"type": "array", "items": {"type": "integer", "minimum": 0}},
                    ]
                }
            }
        },
        id="oneOf-full-branches",
    ),
    pytest.param(
        {"properties": {"l": {"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}},
        id="items-oneOf",
    ),
    pytest.param(
        {
            "type": "object",
            "properties": {
                "a": {
                    "type": "object",
                    "properties": {
                        "b": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"c": {"type": "array", "items": {"type": "boolean"}}},
                            },
                        }
                    },
                }
            },
        },
        id="deep-nesting",
    ),
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("schema", VALID_SCHEMAS)
def test_supported_schema_has_no_finding(schema: Any, profile: str) -> None:
    assert_ok(schema, profile)


@pytest.mark.parametrize("profile", PROFILES)
def test_array_without_items_is_supported(profile: str) -> None:
    # The table does not make `items` mandatory; an array without it is typed, like an
    # object without `properties`.
    assert_ok({"properties": {"l": {"type": "array"}}}, profile)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("type_name", TYPES)
def test_enum_and_description_go_with_every_type(type_name: str, profile: str) -> None:
    node = typed_node(type_name, enum=[], description="d")
    assert_ok({"properties": {"a": node}}, profile)


# --- decision 1: the root --------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "root_type",
    [
        pytest.param("array", id="array"),
        pytest.param("string", id="string"),
        pytest.param("integer", id="integer"),
        pytest.param("number", id="number"),
        pytest.param("boolean", id="boolean"),
        pytest.param("null", id="null"),
        pytest.param(["object", "null"], id="list-object-null"),
        pytest.param(["object"], id="list-object"),
    ],
)
def test_root_type_other_than_object_is_unsupported(root_type: Any, profile: str) -> None:
    assert_report(classify({"type": root_type}, profile=profile), {(U, "type", "/type")})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "root_type",
    [
        pytest.param("foo", id="unknown-name"),
        pytest.param("Object", id="wrong-case"),
        pytest.param(5, id="number"),
        pytest.param(None, id="null"),
        pytest.param(True, id="bool"),
        pytest.param({}, id="object"),
    ],
)
def test_root_type_malformed_is_a_validation_finding(root_type: Any, profile: str) -> None:
    # A malformed root type is also "not object"; the malformed finding must be there and
    # every finding is about the root's `type`.
    report = classify({"type": root_type}, profile=profile)
    got = findings(report)
    assert (V, "type", "/type") in got
    assert {(kw, path) for _, kw, path in got} == {("type", "/type")}
    assert not report.ok


@pytest.mark.parametrize("profile", PROFILES)
def test_root_oneof_is_unsupported(profile: str) -> None:
    schema = {"oneOf": [{"type": "object"}, {"type": "object", "properties": {"a": {"type": "string"}}}]}
    assert_report(classify(schema, profile=profile), {(U, "oneOf", "/oneOf")})


@pytest.mark.parametrize("profile", PROFILES)
def test_root_oneof_with_type_object_is_unsupported(profile: str) -> None:
    report = classify({"type": "object", "oneOf": [{"type": "object"}]}, profile=profile)
    assert (U, "oneOf", "/oneOf") in findings(report)
    assert report.kind == U


@pytest.mark.parametrize("profile", PROFILES)
def test_root_oneof_branches_are_still_classified(profile: str) -> None:
    schema = {
        "oneOf": [
            {"type": "object"},
            {"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}},
        ]
    }
    got = findings(classify(schema, profile=profile))
    assert (U, "oneOf", "/oneOf") in got
    assert (U, "pattern", "/oneOf/1/properties/a/pattern") in got


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("root", [pytest.param(True, id="true"), pytest.param(False, id="false")])
def test_boolean_root_is_unsupported(root: bool, profile: str) -> None:
    assert_report(classify(root, profile=profile), {(U, "schema", "")})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "root",
    [
        pytest.param(5, id="int"),
        pytest.param(1.5, id="float"),
        pytest.param("object", id="string"),
        pytest.param('{"type": "object"}', id="json-text"),
        pytest.param(None, id="null"),
        pytest.param([], id="empty-list"),
        pytest.param([{"type": "object"}], id="list"),
    ],
)
def test_non_object_root_is_malformed(root: Any, profile: str) -> None:
    assert_report(classify(root, profile=profile), {(V, "schema", "")})
    assert compile_schema(root, profile=profile).supported is False


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("schema", "keyword"),
    [
        pytest.param({"minimum": 1}, "minimum", id="implied-object-minimum"),
        pytest.param({"items": {"type": "string"}}, "items", id="implied-object-items"),
        pytest.param({"type": "object", "minimum": 1}, "minimum", id="object-minimum"),
        pytest.param({"type": "object", "items": {"type": "string"}}, "items", id="object-items"),
    ],
)
def test_root_keyword_on_wrong_type(schema: dict[str, Any], keyword: str, profile: str) -> None:
    assert_report(classify(schema, profile=profile), {(U, keyword, "/" + keyword)})


# --- decision 2: untyped nested schemas -------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(
    "node",
    [
        pytest.param({}, id="empty"),
        pytest.param({"enum": [1, "a"]}, id="enum-only"),
        pytest.param({"enum": []}, id="empty-enum-only"),
        pytest.param({"description": "x"}, id="description-only"),
    ],
)
def test_untyped_nested_schema_is_unsupported(node: Any, where: Any, profile: str) -> None:
    schema, pointer = where(node)
    assert_report(classify(schema, profile=profile), {(U, "type", pointer)})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(
    "node",
    [
        pytest.param({"minimum": 1}, id="minimum"),
        pytest.param({"properties": {"x": {"type": "string"}}}, id="properties"),
        pytest.param({"required": ["x"]}, id="required"),
        pytest.param({"additionalProperties": False}, id="additionalProperties"),
        pytest.param({"items": {"type": "string"}}, id="items"),
    ],
)
def test_untyped_nested_schema_with_typed_keywords_is_unsupported(node: Any, where: Any, profile: str) -> None:
    # The missing type must be reported; whether the keyword is also "on the wrong type" is open.
    schema, pointer = where(node)
    report = classify(schema, profile=profile)
    assert (U, "type", pointer) in findings(report)
    assert report.kind == U


def test_untyped_nested_schema_with_annotation() -> None:
    schema, pointer = in_property({"title": "x"})
    assert_report(classify(schema, profile="standard"), {(U, "type", pointer)})
    strict = findings(classify(schema, profile="strict"))
    assert (U, "type", pointer) in strict
    assert (U, "title", pointer + "/title") in strict


@pytest.mark.parametrize("profile", PROFILES)
def test_every_untyped_property_is_reported(profile: str) -> None:
    schema = {"properties": {"a": {}, "b": {"type": "string"}, "c": {"enum": [1]}}}
    assert_report(classify(schema, profile=profile), {(U, "type", "/properties/a"), (U, "type", "/properties/c")})


# --- decision 3: oneOf nodes -----------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(
    ("sibling", "value"),
    [
        pytest.param("type", "string", id="type"),
        pytest.param("enum", ["a"], id="enum"),
        pytest.param("properties", {"x": {"type": "string"}}, id="properties"),
        pytest.param("required", ["x"], id="required"),
        pytest.param("additionalProperties", False, id="additionalProperties"),
        pytest.param("minimum", 1, id="minimum"),
        pytest.param("items", {"type": "string"}, id="items"),
        pytest.param("pattern", "^a", id="pattern"),
        pytest.param("x-extra", 1, id="unknown"),
    ],
)
def test_oneof_node_sibling_is_unsupported(sibling: str, value: Any, where: Any, profile: str) -> None:
    node = {"oneOf": [{"type": "string"}, {"type": "integer"}], sibling: value}
    schema, pointer = where(node)
    assert_report(classify(schema, profile=profile), {(U, sibling, pointer + "/" + sibling)})


@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize("annotation", ANNOTATIONS)
def test_oneof_node_annotation_sibling(annotation: str, where: Any) -> None:
    values = {
        "title": "T",
        "default": "a",
        "examples": ["a"],
        "$comment": "c",
        "deprecated": True,
        "readOnly": False,
        "writeOnly": True,
    }
    node = {"oneOf": [{"type": "string"}, {"type": "integer"}], annotation: values[annotation]}
    schema, pointer = where(node)
    assert_report(classify(schema, profile="standard"), set())
    assert_report(classify(schema, profile="strict"), {(U, annotation, pointer + "/" + annotation)})


@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(
    ("key", "value", "standard", "strict"),
    [
        pytest.param("description", 5, V, V, id="description-int"),
        pytest.param("description", None, V, V, id="description-null"),
        pytest.param("title", 5, V, U, id="title-int"),
        pytest.param("deprecated", "yes", V, U, id="deprecated-string"),
        pytest.param("examples", "x", V, U, id="examples-string"),
        pytest.param("$schema", "http://json-schema.org/draft-07/schema#", U, U, id="schema-dialect"),
    ],
)
def test_oneof_node_malformed_or_misplaced_companion(
    key: str, value: Any, standard: str, strict: str, where: Any
) -> None:
    node = {"oneOf": [{"type": "string"}, {"type": "integer"}], key: value}
    schema, pointer = where(node)
    assert_report(classify(schema, profile="standard"), {(standard, key, pointer + "/" + key)})
    strict_report = classify(schema, profile="strict")
    assert (strict, key, pointer + "/" + key) in findings(strict_report)
    assert {(kw, path) for _, kw, path in findings(strict_report)} == {(key, pointer + "/" + key)}
    assert strict_report.kind == strict


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(
    "value",
    [
        pytest.param([], id="empty-list"),
        pytest.param({}, id="object"),
        pytest.param({"type": "string"}, id="schema-not-list"),
        pytest.param("x", id="string"),
        pytest.param(None, id="null"),
        pytest.param(5, id="number"),
        pytest.param(True, id="true"),
    ],
)
def test_malformed_oneof(value: Any, where: Any, profile: str) -> None:
    schema, pointer = where({"oneOf": value})
    assert_report(classify(schema, profile=profile), {(V, "oneOf", pointer + "/oneOf")})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(
    ("branch", "expected"),
    [
        pytest.param(5, (V, "oneOf", ""), id="number"),
        pytest.param("string", (V, "oneOf", ""), id="string"),
        pytest.param(None, (V, "oneOf", ""), id="null"),
        pytest.param([{"type": "string"}], (V, "oneOf", ""), id="list"),
        pytest.param(True, (U, "schema", ""), id="true"),
        pytest.param(False, (U, "schema", ""), id="false"),
        pytest.param({}, (U, "type", ""), id="untyped"),
        pytest.param({"type": "null"}, (U, "type", "/type"), id="type-null"),
        pytest.param({"type": "string", "maximum": 3}, (U, "maximum", "/maximum"), id="unsupported-keyword"),
        pytest.param({"type": "integer", "minimum": "0"}, (V, "minimum", "/minimum"), id="malformed-keyword"),
    ],
)
def test_oneof_branch_follows_every_rule(branch: Any, expected: Finding, where: Any, profile: str) -> None:
    node = {"oneOf": [{"type": "integer"}, branch]}
    schema, pointer = where(node)
    kind, keyword, suffix = expected
    assert_report(classify(schema, profile=profile), {(kind, keyword, pointer + "/oneOf/1" + suffix)})


@pytest.mark.parametrize("profile", PROFILES)
def test_every_oneof_branch_is_classified(profile: str) -> None:
    node = {
        "oneOf": [
            {"type": "string", "pattern": "a"},
            {"type": "integer"},
            {"type": "object", "properties": {"k": {"type": "string", "format": "email"}}},
        ]
    }
    schema, pointer = in_property(node)
    expected = {
        (U, "pattern", pointer + "/oneOf/0/pattern"),
        (U, "format", pointer + "/oneOf/2/properties/k/format"),
    }
    assert_report(classify(schema, profile=profile), expected)


# --- decision 4: keyword on the wrong type ----------------------------------------------------

WRONG_TYPE_CASES = [
    pytest.param(keyword, value, type_name, id=f"{keyword}={value!r}-on-{type_name}")
    for keyword, value, wrong_types in [
        ("minimum", 1, ["string", "boolean", "array", "object"]),
        ("items", {"type": "string"}, ["string", "integer", "number", "boolean", "object"]),
        ("properties", {"x": {"type": "string"}}, ["string", "integer", "number", "boolean", "array"]),
        ("required", ["x"], ["string", "integer", "number", "boolean", "array"]),
        ("additionalProperties", False, ["string", "integer", "number", "boolean", "array"]),
        ("additionalProperties", True, ["string", "array"]),
    ]
    for type_name in wrong_types
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(("keyword", "value", "type_name"), WRONG_TYPE_CASES)
def test_keyword_on_wrong_type_is_unsupported(
    keyword: str, value: Any, type_name: str, where: Any, profile: str
) -> None:
    node = {"type": type_name, keyword: value}
    if type_name == "array" and keyword != "items":
        node["items"] = {"type": "string"}
    schema, pointer = where(node)
    assert_report(classify(schema, profile=profile), {(U, keyword, pointer + "/" + keyword)})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("node", "keyword"),
    [
        pytest.param({"type": "string", "minimum": "x"}, "minimum", id="minimum-string-on-string"),
        pytest.param({"type": "boolean", "minimum": True}, "minimum", id="minimum-bool-on-boolean"),
        pytest.param({"type": "string", "items": 5}, "items", id="items-number-on-string"),
        pytest.param({"type": "integer", "required": "a"}, "required", id="required-string-on-integer"),
        pytest.param({"type": "integer", "properties": []}, "properties", id="properties-list-on-integer"),
        pytest.param(
            {"type": "string", "additionalProperties": "no"}, "additionalProperties", id="aP-string-on-string"
        ),
    ],
)
def test_keyword_on_wrong_type_and_malformed(node: dict[str, Any], keyword: str, profile: str) -> None:
    schema, pointer = in_property(node)
    report = classify(schema, profile=profile)
    got = findings(report)
    assert (U, keyword, pointer + "/" + keyword) in got
    assert {(kw, path) for _, kw, path in got} == {(keyword, pointer + "/" + keyword)}
    assert report.kind == U


# --- decision 8: malformed supported keywords -------------------------------------------------

MALFORMED_CASES = [
    # (node, keyword, path relative to the node)
    *[
        pytest.param({"type": t}, "type", "/type", id=f"type-{label}")
        for label, t in [
            ("int", 5),
            ("null", None),
            ("true", True),
            ("object", {}),
            ("unknown-name", "foo"),
            ("wrong-case", "Object"),
            ("int-alias", "int"),
            ("empty-string", ""),
        ]
    ],
    *[
        pytest.param({"type": "object", "properties": v}, "properties", "/properties", id=f"properties-{label}")
        for label, v in [("list", []), ("string", "x"), ("int", 5), ("null", None), ("true", True)]
    ],
    *[
        pytest.param(
            {"type": "object", "properties": {"p": v}},
            "properties",
            "/properties/p",
            id=f"property-schema-{label}",
        )
        for label, v in [("int", 5), ("float", 1.5), ("string", "x"), ("list", []), ("null", None)]
    ],
    *[
        pytest.param({"type": "object", "required": v}, "required", "/required", id=f"required-{label}")
        for label, v in [
            ("string", "a"),
            ("int", 5),
            ("null", None),
            ("object", {}),
            ("true", True),
            ("list-of-int", [1]),
            ("duplicates", ["a", "a"]),
            ("list-with-null", ["a", None]),
            ("nested-list", [["a"]]),
            ("list-of-bool", [True]),
        ]
    ],
    *[
        pytest.param(
            {"type": "object", "additionalProperties": v},
            "additionalProperties",
            "/additionalProperties",
            id=f"additionalProperties-{label}",
        )
        for label, v in [
            ("string", "no"),
            ("one", 1),
            ("zero", 0),
            ("null", None),
            ("list", []),
            ("float", 1.5),
        ]
    ],
    *[
        pytest.param({"type": "string", "enum": v}, "enum", "/enum", id=f"enum-{label}")
        for label, v in [("string", "x"), ("int", 5), ("null", None), ("object", {}), ("true", True)]
    ],
    *[
        pytest.param({"type": "integer", "minimum": v}, "minimum", "/minimum", id=f"minimum-{label}")
        for label, v in [
            ("string", "1"),
            ("true", True),
            ("false", False),
            ("null", None),
            ("list", [1]),
            ("object", {}),
        ]
    ],
    *[
        pytest.param({"type": "string", "description": v}, "description", "/description", id=f"description-{label}")
        for label, v in [("int", 5), ("null", None), ("true", True), ("list", []), ("object", {})]
    ],
    *[
        pytest.param({"type": "array", "items": v}, "items", "/items", id=f"items-{label}")
        for label, v in [("int", 5), ("string", "x"), ("null", None), ("float", 1.5)]
    ],
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(("node", "keyword", "rel"), MALFORMED_CASES)
def test_malformed_keyword_is_validation(node: Any, keyword: str, rel: str, where: Any, profile: str) -> None:
    schema, pointer = where(node)
    report = classify(schema, profile=profile)
    assert_report(report, {(V, keyword, pointer + rel)})
    assert compile_schema(schema, profile=profile).supported is False


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param({"properties": []}, (V, "properties", "/properties"), id="properties-list"),
        pytest.param({"properties": {"p": 5}}, (V, "properties", "/properties/p"), id="property-schema-int"),
        pytest.param({"required": "a"}, (V, "required", "/required"), id="required-string"),
        pytest.param({"required": ["a", "a"]}, (V, "required", "/required"), id="required-duplicates"),
        pytest.param({"additionalProperties": "no"}, (V, "additionalProperties", "/additionalProperties"), id="aP"),
        pytest.param(
            {"additionalProperties": None}, (V, "additionalProperties", "/additionalProperties"), id="aP-null"
        ),
        pytest.param({"description": 5}, (V, "description", "/description"), id="description-int"),
        pytest.param({"enum": "x"}, (V, "enum", "/enum"), id="enum-string"),
    ],
)
def test_malformed_keyword_at_root(schema: dict[str, Any], expected: Finding, profile: str) -> None:
    assert_report(classify(schema, profile=profile), {expected})


SHAPE_CASES = [
    # (node, expected kind, keyword, path relative to the node)
    pytest.param(
        {"type": "object", "additionalProperties": {}},
        U,
        "additionalProperties",
        "/additionalProperties",
        id="aP-empty-schema",
    ),
    pytest.param(
        {"type": "object", "additionalProperties": {"type": "string"}},
        U,
        "additionalProperties",
        "/additionalProperties",
        id="aP-schema",
    ),
    pytest.param({"type": "array", "items": []}, U, "items", "/items", id="items-empty-list"),
    pytest.param({"type": "array", "items": [{"type": "string"}]}, U, "items", "/items", id="items-tuple"),
    pytest.param({"type": "array", "items": True}, U, "schema", "/items", id="items-true"),
    pytest.param({"type": "array", "items": False}, U, "schema", "/items", id="items-false"),
    pytest.param({"type": "object", "properties": {"p": True}}, U, "schema", "/properties/p", id="property-true"),
    pytest.param({"type": "object", "properties": {"p": False}}, U, "schema", "/properties/p", id="property-false"),
    pytest.param({"oneOf": [{"type": "string"}, True]}, U, "schema", "/oneOf/1", id="oneOf-branch-true"),
    pytest.param({"oneOf": [False]}, U, "schema", "/oneOf/0", id="oneOf-branch-false"),
    pytest.param({"type": ["string", "null"]}, U, "type", "/type", id="type-list-nullable"),
    pytest.param({"type": ["string", "integer"]}, U, "type", "/type", id="type-list-two"),
    pytest.param({"type": ["string"]}, U, "type", "/type", id="type-list-single"),
    pytest.param({"type": "null"}, U, "type", "/type", id="type-null"),
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(("node", "kind", "keyword", "rel"), SHAPE_CASES)
def test_unsupported_shapes(node: Any, kind: str, keyword: str, rel: str, where: Any, profile: str) -> None:
    schema, pointer = where(node)
    assert_report(classify(schema, profile=profile), {(kind, keyword, pointer + rel)})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param(
            {"additionalProperties": {}}, (U, "additionalProperties", "/additionalProperties"), id="aP-schema"
        ),
        pytest.param({"properties": {"p": True}}, (U, "schema", "/properties/p"), id="property-true"),
        pytest.param({"properties": {"p": False}}, (U, "schema", "/properties/p"), id="property-false"),
    ],
)
def test_unsupported_shapes_at_root(schema: dict[str, Any], expected: Finding, profile: str) -> None:
    assert_report(classify(schema, profile=profile), {expected})


# --- decision 9: features outside the table ---------------------------------------------------

FEATURES = [
    pytest.param(keyword, value, type_name, id=keyword or "empty-key")
    for keyword, value, type_name in [
        ("$ref", "#/$defs/s", "string"),
        ("$defs", {"s": {"type": "string"}}, "string"),
        ("definitions", {"s": {"type": "string"}}, "string"),
        ("$id", "urn:example:x", "string"),
        ("$anchor", "here", "string"),
        ("$dynamicRef", "#here", "string"),
        ("const", "x", "string"),
        ("anyOf", [{"type": "string"}], "string"),
        ("allOf", [{"type": "string"}], "string"),
        ("not", {"type": "integer"}, "string"),
        ("if", {"type": "string"}, "string"),
        ("then", {"type": "string"}, "string"),
        ("else", {"type": "string"}, "string"),
        ("pattern", "^a", "string"),
        ("patternProperties", {"^a": {"type": "string"}}, "object"),
        ("format", "email", "string"),
        ("minLength", 1, "string"),
        ("maxLength", 5, "string"),
        ("minItems", 1, "array"),
        ("maxItems", 5, "array"),
        ("uniqueItems", True, "array"),
        ("prefixItems", [{"type": "string"}], "array"),
        ("contains", {"type": "string"}, "array"),
        ("additionalItems", False, "array"),
        ("unevaluatedItems", False, "array"),
        ("maximum", 10, "integer"),
        ("exclusiveMinimum", 0, "integer"),
        ("exclusiveMaximum", 10, "number"),
        ("multipleOf", 2, "integer"),
        ("dependentRequired", {"a": ["b"]}, "object"),
        ("dependentSchemas", {"a": {"type": "object"}}, "object"),
        ("dependencies", {"a": ["b"]}, "object"),
        ("propertyNames", {"type": "string"}, "object"),
        ("unevaluatedProperties", False, "object"),
        ("minProperties", 1, "object"),
        ("maxProperties", 3, "object"),
        ("additional_properties", False, "object"),
        ("nullable", True, "string"),
        ("contentMediaType", "application/json", "string"),
        ("x-vendor", {"any": "thing"}, "string"),
        ("Type", "string", "string"),
        ("Description", "d", "string"),
        ("", 1, "string"),
    ]
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("keyword", "value", "type_name"), FEATURES)
def test_feature_outside_table_at_root(keyword: str, value: Any, type_name: str, profile: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, keyword: value}
    expected = {(U, keyword, "/" + keyword)}
    assert_report(classify(schema, profile=profile), expected)
    assert compile_schema(schema, profile=profile).supported is False
    # Checked before any argument: even a call that sends nothing is refused.
    report = check(schema, {}, profile=profile)
    assert_report(report, expected)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("keyword", "value", "type_name"), FEATURES)
def test_feature_outside_table_in_unsent_property(keyword: str, value: Any, type_name: str, profile: str) -> None:
    schema = {
        "type": "object",
        "properties": {"sent": {"type": "string"}, "a": typed_node(type_name, **{keyword: value})},
    }
    expected = {(U, keyword, "/properties/a/" + keyword)}
    assert_report(classify(schema, profile=profile), expected)
    assert_report(check(schema, {"sent": "x"}, profile=profile), expected)
    assert_report(compile_schema(schema, profile=profile).check({"sent": "x"}), expected)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("keyword", "value", "type_name"), FEATURES)
def test_feature_outside_table_in_items_of_empty_array(keyword: str, value: Any, type_name: str, profile: str) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "array", "items": typed_node(type_name, **{keyword: value})}},
    }
    expected = {(U, keyword, "/properties/a/items/" + keyword)}
    assert_report(classify(schema, profile=profile), expected)
    assert_report(check(schema, {"a": []}, profile=profile), expected)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("keyword", "value", "type_name"), FEATURES)
def test_feature_outside_table_in_unmatched_oneof_branch(
    keyword: str, value: Any, type_name: str, profile: str
) -> None:
    branch = typed_node(type_name, **{keyword: value})
    schema = {"type": "object", "properties": {"a": {"oneOf": [{"type": "boolean"}, branch]}}}
    expected = {(U, keyword, "/properties/a/oneOf/1/" + keyword)}
    assert_report(classify(schema, profile=profile), expected)
    # `true` matches branch 0 and would never reach branch 1.
    assert_report(check(schema, {"a": True}, profile=profile), expected)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_finding_is_reported(profile: str) -> None:
    schema = {
        "type": "object",
        "const": {},
        "properties": {
            "a": {"type": "string", "pattern": "x", "minLength": 1},
            "b": {"type": "array", "items": {"type": "integer", "maximum": 3}},
            "c": {"oneOf": [{"type": "string"}, {"type": "number", "multipleOf": 2}]},
        },
    }
    expected = {
        (U, "const", "/const"),
        (U, "pattern", "/properties/a/pattern"),
        (U, "minLength", "/properties/a/minLength"),
        (U, "maximum", "/properties/b/items/maximum"),
        (U, "multipleOf", "/properties/c/oneOf/1/multipleOf"),
    }
    assert_report(classify(schema, profile=profile), expected)


# --- annotations and $schema (profiles) -------------------------------------------------------

ANNOTATION_VALUES = [
    pytest.param("title", "Title", id="title"),
    pytest.param("title", "", id="title-empty"),
    pytest.param("default", None, id="default-null"),
    pytest.param("default", 0, id="default-zero"),
    pytest.param("default", "x", id="default-string"),
    pytest.param("default", [1, {"a": None}], id="default-list"),
    pytest.param("default", {"k": "v"}, id="default-object"),
    pytest.param("default", False, id="default-false"),
    pytest.param("examples", [], id="examples-empty"),
    pytest.param("examples", [1, "a", None], id="examples-mixed"),
    pytest.param("$comment", "note", id="comment"),
    pytest.param("deprecated", True, id="deprecated-true"),
    pytest.param("deprecated", False, id="deprecated-false"),
    pytest.param("readOnly", True, id="readOnly"),
    pytest.param("writeOnly", False, id="writeOnly"),
]


def annotation_places(annotation: str, value: Any) -> list[tuple[dict[str, Any], str]]:
    """The annotation at the root, in a property, an items schema, a oneOf node and a branch."""
    node = {annotation: value}
    return [
        ({"type": "object", **node}, ""),
        in_property({"type": "string", **node}),
        in_items({"type": "integer", **node}),
        in_property({"oneOf": [{"type": "string"}], **node}),
        in_oneof_branch({"type": "number", **node}),
    ]


@pytest.mark.parametrize(("annotation", "value"), ANNOTATION_VALUES)
def test_annotation_in_standard_is_accepted(annotation: str, value: Any) -> None:
    for schema, _ in annotation_places(annotation, value):
        assert_ok(schema, "standard")


@pytest.mark.parametrize(("annotation", "value"), ANNOTATION_VALUES)
def test_annotation_in_strict_is_unsupported(annotation: str, value: Any) -> None:
    for schema, pointer in annotation_places(annotation, value):
        assert_report(classify(schema, profile="strict"), {(U, annotation, pointer + "/" + annotation)})


MALFORMED_ANNOTATIONS = (
    [
        pytest.param("title", v, id=f"title-{label}")
        for label, v in [("int", 5), ("null", None), ("true", True), ("list", ["t"]), ("object", {})]
    ]
    + [pytest.param("$comment", v, id=f"comment-{label}") for label, v in [("int", 5), ("null", None), ("list", [])]]
    + [
        pytest.param(name, v, id=f"{name}-{label}")
        for name in ["deprecated", "readOnly", "writeOnly"]
        for label, v in [("string", "true"), ("one", 1), ("zero", 0), ("null", None)]
    ]
    + [
        pytest.param("examples", v, id=f"examples-{label}")
        for label, v in [("string", "x"), ("object", {}), ("int", 5), ("null", None), ("true", True)]
    ]
)


@pytest.mark.parametrize(("annotation", "value"), MALFORMED_ANNOTATIONS)
def test_malformed_annotation_in_standard_is_validation(annotation: str, value: Any) -> None:
    for schema, pointer in annotation_places(annotation, value):
        report = classify(schema, profile="standard")
        assert_report(report, {(V, annotation, pointer + "/" + annotation)})
        assert compile_schema(schema, profile="standard").supported is False


@pytest.mark.parametrize(("annotation", "value"), MALFORMED_ANNOTATIONS)
def test_malformed_annotation_in_strict_is_unsupported(annotation: str, value: Any) -> None:
    for schema, pointer in annotation_places(annotation, value):
        report = classify(schema, profile="strict")
        got = findings(report)
        assert (U, annotation, pointer + "/" + annotation) in got
        assert {(kw, path) for _, kw, path in got} == {(annotation, pointer + "/" + annotation)}
        assert report.kind == U


DIALECTS = [
    f"{scheme}://json-schema.org/{path}{suffix}"
    for scheme in ["http", "https"]
    for path in ["draft-06/schema", "draft-07/schema", "draft/2019-09/schema", "draft/2020-12/schema"]
    for suffix in ["", "#"]
]


@pytest.mark.parametrize("uri", DIALECTS)
def test_root_schema_dialect_accepted_in_standard(uri: str) -> None:
    assert_ok({"$schema": uri, "type": "object", "properties": {"a": {"type": "string"}}}, "standard")


@pytest.mark.parametrize("uri", DIALECTS)
def test_root_schema_dialect_unsupported_in_strict(uri: str) -> None:
    assert_report(classify({"$schema": uri, "type": "object"}, profile="strict"), {(U, "$schema", "/$schema")})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "value",
    [
        pytest.param("http://json-schema.org/draft-04/schema#", id="draft-04"),
        pytest.param("http://json-schema.org/draft-03/schema#", id="draft-03"),
        pytest.param("http://json-schema.org/schema#", id="unversioned"),
        pytest.param("https://json-schema.org/draft-2020-12/schema", id="misspelled-2020-12"),
        pytest.param("https://json-schema.org/draft/2020-12/schema/", id="trailing-slash"),
        pytest.param("https://json-schema.org/draft-07/schema##", id="double-hash"),
        pytest.param("json-schema.org/draft-07/schema", id="no-scheme"),
        pytest.param("https://example.com/my-dialect", id="unknown-uri"),
        pytest.param("", id="empty"),
        pytest.param(7, id="int"),
        pytest.param(None, id="null"),
        pytest.param(True, id="true"),
        pytest.param({"$id": "x"}, id="object"),
    ],
)
def test_root_schema_other_dialect_is_unsupported(value: Any, profile: str) -> None:
    assert_report(classify({"$schema": value, "type": "object"}, profile=profile), {(U, "$schema", "/$schema")})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", LOCATIONS)
@pytest.mark.parametrize(
    "uri",
    [
        pytest.param("http://json-schema.org/draft-07/schema#", id="draft-07"),
        pytest.param("https://json-schema.org/draft/2020-12/schema", id="2020-12"),
    ],
)
def test_nested_schema_dialect_is_unsupported(uri: str, where: Any, profile: str) -> None:
    schema, pointer = where({"type": "string", "$schema": uri})
    assert_report(classify(schema, profile=profile), {(U, "$schema", pointer + "/$schema")})


# --- decision 10: properties named like keywords ----------------------------------------------

KEYWORD_NAMES = [
    "description",
    "$ref",
    "type",
    "properties",
    "oneOf",
    "enum",
    "minimum",
    "items",
    "required",
    "additionalProperties",
    "pattern",
    "title",
    "default",
    "$schema",
    "$defs",
    "const",
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", KEYWORD_NAMES)
def test_property_named_like_keyword_is_a_property(name: str, profile: str) -> None:
    schema = {
        "type": "object",
        "properties": {name: {"type": "string"}},
        "required": [name],
        "additionalProperties": False,
    }
    assert_ok(schema, profile)
    nested = {"properties": {"o": {"type": "object", "properties": {name: {"type": "object", "properties": {}}}}}}
    assert_ok(nested, profile)


@pytest.mark.parametrize("profile", PROFILES)
def test_all_keyword_names_as_properties_together(profile: str) -> None:
    schema = {"type": "object", "properties": {name: {"type": "integer"} for name in KEYWORD_NAMES}}
    assert_ok(schema, profile)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", KEYWORD_NAMES)
def test_property_named_like_keyword_still_classified(name: str, profile: str) -> None:
    schema = {"type": "object", "properties": {name: {"type": "string", "pattern": "x"}}}
    assert_report(classify(schema, profile=profile), {(U, "pattern", f"/properties/{name}/pattern")})


# --- decision 13: both kinds in one schema ----------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param(
            {
                "properties": {
                    "a": {"type": "string", "pattern": "x"},
                    "b": {"type": "integer", "minimum": "1"},
                }
            },
            {(U, "pattern", "/properties/a/pattern"), (V, "minimum", "/properties/b/minimum")},
            id="unsupported-then-malformed",
        ),
        pytest.param(
            {
                "properties": {
                    "b": {"type": "integer", "minimum": "1"},
                    "a": {"type": "string", "pattern": "x"},
                }
            },
            {(V, "minimum", "/properties/b/minimum"), (U, "pattern", "/properties/a/pattern")},
            id="malformed-then-unsupported",
        ),
        pytest.param(
            {"required": "n", "properties": {"l": {"type": "array", "items": {}}}},
            {(V, "required", "/required"), (U, "type", "/properties/l/items")},
            id="malformed-required-and-untyped-items",
        ),
        pytest.param(
            {"type": "object", "description": 5, "additionalProperties": {"type": "string"}},
            {(V, "description", "/description"), (U, "additionalProperties", "/additionalProperties")},
            id="same-node",
        ),
    ],
)
def test_mixed_findings_are_unsupported(schema: dict[str, Any], expected: set[Finding], profile: str) -> None:
    report = classify(schema, profile=profile)
    assert_report(report, expected)
    assert report.kind == U


@pytest.mark.parametrize("profile", PROFILES)
def test_only_malformed_findings_are_validation(profile: str) -> None:
    schema = {
        "properties": {"a": {"type": "foo"}, "b": {"type": "integer", "minimum": None}},
        "required": [1],
    }
    report = classify(schema, profile=profile)
    assert_report(
        report,
        {
            (V, "type", "/properties/a/type"),
            (V, "minimum", "/properties/b/minimum"),
            (V, "required", "/required"),
        },
    )
    assert report.kind == V


# --- decision 14: supported means enforceable -------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"properties": {"n": {"type": "integer", "minimum": "1"}}}, id="malformed"),
        pytest.param({"properties": {"n": {"type": "integer", "maximum": 1}}}, id="unsupported"),
        pytest.param({"properties": {"n": {"type": "integer"}}, "required": ["n", "n"]}, id="malformed-required"),
    ],
)
def test_not_supported_schema_never_validates(schema: dict[str, Any], profile: str) -> None:
    compiled = compile_schema(schema, profile=profile)
    assert compiled.supported is False
    assert compiled.supported == compiled.report.ok
    assert compiled.report == classify(schema, profile=profile)
    for arguments in [{"n": 3}, {"n": "bad"}, {}, None, []]:
        got = compiled.check(arguments)
        assert got.issues == compiled.report.issues
        assert all(i.instance_path is None for i in got.issues)
        assert check(schema, arguments, profile=profile).issues == compiled.report.issues


@pytest.mark.parametrize("profile", PROFILES)
def test_supported_schema_compiles(profile: str) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}
    compiled = compile_schema(schema, profile=profile)
    assert compiled.supported is True
    assert compiled.report.ok
    assert compiled.report.kind is None
    assert compiled.check({"n": 2}).ok
    assert not compiled.check({"n": 0}).ok


# --- decision 15: pointer escaping ------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("name", "escaped"),
    [
        pytest.param("a/b~c", "a~1b~0c", id="slash-and-tilde"),
        pytest.param("~1", "~01", id="literal-tilde-one"),
        pytest.param("/", "~1", id="slash"),
        pytest.param("~", "~0", id="tilde"),
        pytest.param("", "", id="empty-name"),
        pytest.param("a b", "a b", id="space"),
        pytest.param("é", "é", id="non-ascii"),
    ],
)
def test_property_names_are_escaped_in_schema_pointers(name: str, escaped: str, profile: str) -> None:
    schema = {"type": "object", "properties": {name: {"type": "string", "pattern": "x"}}}
    assert_report(classify(schema, profile=profile), {(U, "pattern", f"/properties/{escaped}/pattern")})
    untyped = {"type": "object", "properties": {name: {}}}
    assert_report(classify(untyped, profile=profile), {(U, "type", f"/properties/{escaped}")})


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("keyword", "escaped"),
    [pytest.param("x/y~z", "x~1y~0z", id="slash-and-tilde"), pytest.param("~0", "~00", id="tilde-zero")],
)
def test_unknown_keyword_is_escaped(keyword: str, escaped: str, profile: str) -> None:
    schema = {"type": "object", "properties": {"p": {"type": "string", keyword: 1}}}
    assert_report(classify(schema, profile=profile), {(U, keyword, f"/properties/p/{escaped}")})


# --- profiles ---------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["", "Strict", "STANDARD", "lenient", "default"], ids=repr)
def test_unknown_profile_raises(profile: str) -> None:
    with pytest.raises(ValueError):
        classify({"type": "object"}, profile=profile)
    with pytest.raises(ValueError):
        compile_schema({"type": "object"}, profile=profile)
    with pytest.raises(ValueError):
        check({"type": "object"}, {}, profile=profile)


def test_default_profile_is_standard() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "title": "T"}
    assert classify(schema).ok
    assert compile_schema(schema).supported is True
    assert check(schema, {}).ok
    assert not classify(schema, profile="strict").ok
