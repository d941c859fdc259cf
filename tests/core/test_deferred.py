"""``compile(schema, defer=True)`` under ``standard``/``strict``: the verdict-only walk.

The relay classifies every listed tool with ``defer=True``: a clean schema gets the light
verdict walk (``extended.subset.SubsetQuick``, reading each selected row's quick test) and its
validator is built on the first call; a schema with findings is classified in full at once
(``extended.subset.SubsetClassifier``). These tests hold that to the full, eager
classification: the same report (every finding, in order), the same verdict for every
call, the same ``TypeError`` for non-JSON, on generated schemas inside and outside the
subset, on hostile ones, on the official suite's schemas and on the real tool corpus; and
each row's quick test to its rules.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_guard import compile as compile_schema
from mcp_guard.core.budget import MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES
from mcp_guard.core.extended.subset import SUBSET_PROFILES as PROFILES
from mcp_guard.core.extended.subset import SubsetClassifier, SubsetQuick
from mcp_guard.core.extended.table import KEYWORDS
from mcp_guard.core.json_values import Inexact, pointer, scan
from tests.datasets import JSON_SCHEMA_TEST_SUITE, TOOL_CORPUS

CORPUS = TOOL_CORPUS
SUITE = JSON_SCHEMA_TEST_SUITE
SUITE_DIALECTS = ("draft2020-12", "draft2019-09", "draft7", "draft6")

NAMES = st.sampled_from(["a", "b", "c", "type", "items", "x/y", "t~1", "oneOf", "properties"])
SUBSET_KEYS = [name for name, row in KEYWORDS.items() if row.profiles]
KEYS = st.sampled_from([*SUBSET_KEYS, "maxLength", "anyOf", "const", "$ref", "format", "pattern", "x-extra"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.5, -0.0, 1.0, 2.0**53, 1e308]),
    st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null", "x"]),
    st.sampled_from(["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-04/schema#"]),
)
HOSTILE = st.sampled_from([math.nan, math.inf, -math.inf, Inexact("1e400"), ("tuple",), {"set"}, b"bytes"])


def schema_like(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Values shaped like schemas: keyword-keyed objects, name-keyed objects, lists, leaves."""
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.dictionaries(KEYS, inner, max_size=5),
            st.dictionaries(NAMES, inner, max_size=3),
            st.lists(inner, max_size=3),
        ),
        max_leaves=20,
    )


def outcome(schema: Any, profile: str, defer: bool) -> tuple[str, Any]:
    """What compile says: its report as JSON, or the TypeError's message."""
    try:
        return "report", compile_schema(schema, profile=profile, defer=defer).report.to_json()
    except TypeError as exc:
        return "TypeError", str(exc)


def same_as_eager(schema: Any, profile: str) -> None:
    deferred = outcome(schema, profile, True)
    assert deferred == outcome(schema, profile, False), schema
    if SubsetQuick(profile).clean(schema, 0):  # the verdict walk may doubt a clean schema, never pass a dirty one
        assert deferred == ("report", {"ok": True, "kind": None, "issues": []}), schema


@pytest.mark.parametrize("profile", sorted(PROFILES))
@settings(max_examples=1500, deadline=None, derandomize=True)
@given(schema=st.dictionaries(KEYS, schema_like(SCALARS), max_size=6))
def test_deferred_report_is_the_eager_report(profile: str, schema: Any) -> None:
    """Schema-shaped garbage and near-misses: the same findings, in the same order."""
    same_as_eager(schema, profile)
    same_as_eager({"type": "object", "properties": {"p": schema, "q": {"type": "string"}}}, profile)
    same_as_eager({"properties": {"p": {"type": "array", "items": schema}}}, profile)
    same_as_eager({"properties": {"p": {"oneOf": [{"type": "string"}, schema]}}}, profile)


@pytest.mark.parametrize("profile", sorted(PROFILES))
@settings(max_examples=1500, deadline=None, derandomize=True)
@given(schema=st.dictionaries(KEYS, schema_like(st.one_of(SCALARS, HOSTILE)), max_size=6))
def test_hostile_values_anywhere_give_the_scan_verdict(profile: str, schema: Any) -> None:
    """NaN, Infinity, inexact literals and non-JSON Python values at any spot, under any keyword.

    Deferred or not, the scan's ``TypeError`` (same pointer) for a non-JSON value, and the
    scan's ``json`` findings (same pointers, first) for a number JSON cannot carry.
    """
    for root in (schema, {"type": "object", "properties": {"p": schema}, "maxItems": 1}):
        try:
            expected_json = [pointer(p) for p in scan(root, what="schema")]
            expected_error = None
        except TypeError as exc:
            expected_json, expected_error = [], str(exc)
        for defer in (True, False):
            kind, found = outcome(root, profile, defer)
            if expected_error is not None:
                assert (kind, found) == ("TypeError", expected_error), root
                continue
            assert kind == "report", (root, found)
            json_issues = [i["schema_path"] for i in found["issues"] if i["keyword"] == "json"]
            assert json_issues == expected_json, root
            assert [i["keyword"] for i in found["issues"][: len(expected_json)]] == ["json"] * len(expected_json)


def test_non_string_keys_are_type_errors_in_every_position() -> None:
    for schema in (
        {1: "x"},
        {"type": "object", "properties": {"a": {"type": "string", 2: 3}}},
        {"type": "object", "anyOf": [{(1, 2): 3}]},
        {"type": "object", "properties": {"a": {"type": "string", "maxLength": {3: 4}}}},
        {"properties": {5: {"type": "string"}}},
    ):
        for profile in sorted(PROFILES):
            assert outcome(schema, profile, True) == outcome(schema, profile, False)
            assert outcome(schema, profile, True)[0] == "TypeError", schema


def test_budgets_are_counted_alike() -> None:
    """The subschema count and the depth limit: the same finding at the same place."""
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(MAX_SCHEMA_NODES + 5)}}
    wide_dirty = {"type": "object", "properties": {**wide["properties"], "z": {"type": "string", "maxLength": 1}}}
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_SCHEMA_DEPTH + 2):
        deep = {"type": "array", "items": deep}
    deep_root = {"type": "object", "properties": {"d": deep, "e": {"type": "string", "format": "x"}}}
    for schema in (wide, wide_dirty, deep_root, {"type": "object", "properties": {"d": deep}}):
        for profile in sorted(PROFILES):
            deferred = compile_schema(schema, profile=profile, defer=True)
            assert deferred.report == compile_schema(schema, profile=profile).report
            assert not deferred.supported


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_quick_test_is_held_to_its_function(profile: str) -> None:
    """Each selected row's quick test says clean only where its subset rule and rule record nothing.

    (``type`` is the walk's own test, as the node rule of decision 2 is.)"""
    values: list[Any] = [
        None, True, 0, 1, -1, 2.5, math.nan, math.inf, "", "x", "string", "object", "null",
        "https://json-schema.org/draft/2020-12/schema", [], ["a"], ["a", "a"], ["a", 1], [1, 1.0],
        [{"a": 1}], [math.nan], [[]], {}, {"type": "string"}, {"a": {"type": "string"}},
        {"a": {"type": "string", "maxLength": 1}}, {"a": True}, [{"type": "string"}],
        [{"type": "string"}, {"type": "integer"}], [{"type": "null"}], [True], Inexact("1e400"),
        list(range(10_001)),
    ]  # fmt: skip
    checked = 0
    for name, row in KEYWORDS.items():
        quick = row.subset_quick or row.quick
        if quick is None or profile not in row.profiles or name == "type":
            continue
        for value in values:
            for depth in (0, 1):
                if not quick(value, {name: value}, depth, SubsetQuick(profile)):
                    continue
                classifier = SubsetClassifier(profile)
                classifier.depth = depth + 1  # inside the node, as the walk is when it meets the keyword
                path: tuple[str | int, ...] = (name,) if depth == 0 else ("properties", "p", name)
                if row.subset is None or row.subset(classifier, value, {name: value}, path):
                    row.rule(classifier, value, {name: value}, path)
                assert not classifier.issues, (name, value, depth, classifier.issues)
                checked += 1
    assert checked > 20


def test_a_deferred_schema_changed_before_its_first_call_fails_closed() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    compiled = compile_schema(schema, profile="standard", defer=True)
    assert compiled.supported
    schema["properties"]["n"]["maximum"] = 3
    refused = compiled.check({"n": 1})
    assert refused.kind == "unsupported_capability"
    assert [i.keyword for i in refused.issues] == ["maximum"]
    assert not compiled.supported


def test_a_deferred_schema_validates_exactly() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "o": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "boolean"}}]},
            "e": {"enum": [1, "a", None]},
        },
        "required": ["n"],
        "additionalProperties": False,
    }
    deferred, eager = compile_schema(schema, defer=True), compile_schema(schema)
    for arguments in ({"n": 1}, {"n": 0}, {"n": 1.0, "o": [True]}, {"o": 1}, {"n": 2, "e": None, "z": 1}, {"n": True}):
        assert deferred.check(arguments) == eager.check(arguments), arguments
    assert deferred.source == eager.source


def suite_schemas() -> dict[str, list[Any]]:
    """Every group's schema of every dialect folder of the suite (``optional/`` included), raw and wrapped."""
    schemas: dict[str, list[Any]] = {}
    for dialect in SUITE_DIALECTS:
        for path in sorted((SUITE / dialect).rglob("*.json")):
            schemas.setdefault(dialect, []).extend(
                group["schema"] for group in json.loads(path.read_text(encoding="utf-8"))
            )
    return {
        dialect: [
            form
            for raw in raws
            for form in (
                [raw, {"type": "object", "properties": {"v": raw}, "required": ["v"]}] if type(raw) is dict else [raw]
            )
        ]
        for dialect, raws in schemas.items()
    }


def test_suite_schemas_classify_alike() -> None:
    schemas = suite_schemas()
    # every dialect folder is read, each with its optional/ files (a moved folder fails here, not silently)
    assert {dialect: len(forms) > 400 for dialect, forms in schemas.items()} == dict.fromkeys(SUITE_DIALECTS, True)
    for forms in schemas.values():
        for schema in forms:
            for profile in sorted(PROFILES):
                same_as_eager(schema, profile)


def test_corpus_schemas_classify_alike() -> None:
    count = supported = 0
    for path in sorted(CORPUS.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        tools = document.get("tools", document) if type(document) is dict else document
        for tool in tools:
            schema = tool.get("inputSchema")
            for profile in sorted(PROFILES):
                same_as_eager(schema, profile)
                deferred = compile_schema(schema, profile=profile, defer=True)
                if deferred.supported:
                    supported += 1
                    assert deferred.check({}) == compile_schema(schema, profile=profile).check({})
            count += 1
    assert count >= 200 and supported > 150, (count, supported)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_a_schema_the_verdict_walk_doubts_is_built_in_full(profile: str) -> None:
    """``enum`` choices that are containers send the schema past the verdict walk; the skimming
    classifier finds nothing, and the validator must still be the full one, never the skimmed tree."""
    schema = {
        "type": "object",
        "properties": {"e": {"type": "array", "enum": [[1, 2], [3]]}, "s": {"type": "string"}},
        "additionalProperties": False,
    }
    assert not SubsetQuick(profile).clean(schema, 0)
    deferred, eager = compile_schema(schema, profile=profile, defer=True), compile_schema(schema, profile=profile)
    assert deferred.supported and eager.supported
    for arguments in ({"e": [1, 2]}, {"e": [2]}, {"s": 1}, {"z": 1}, {"e": [3], "s": "x"}):
        assert deferred.check(arguments) == eager.check(arguments), arguments
    assert not deferred.check({"e": [2]}).ok and not deferred.check({"s": 1}).ok
    assert deferred.source == eager.source
