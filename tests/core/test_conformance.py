"""Conformance against the official JSON Schema Test Suite (draft 2020-12).

Every group of the suite files is adapted as follows (one rule for every file):

- The group's root ``$schema`` is dropped (every file is draft 2020-12).
- Unless the schema has ``type: "object"`` at its root, it is wrapped as the required
  property ``v`` of an object root, and each test's data is sent as ``{"v": data}``.

Then, in both profiles:

- A group whose (wrapped) schema classifies ok is inside the subset: the guard must agree
  with the suite's ``valid`` on every test, except for an entry of :data:`DIVERGENCES`.
- Every other group must classify as not ok (``unsupported_capability`` or
  ``validation``), and ``check`` must refuse every test's data: the guard never
  validates such a schema silently.
- A group that uses a keyword outside the subset's table *as a keyword* (found by
  :func:`keyword_positions`, which never mistakes a property name or an ``enum`` value
  for a keyword) must classify as ``unsupported_capability`` (spec decisions 9 and 13).
  For the unsupported-keyword files this covers every group that uses the file's keyword.

The suite data lives outside the repository. In a user's clone, where it is absent,
every test here is skipped.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

import pytest

from mcp_guard import check, classify
from tests.core.suite import SUITE_ROOT, keyword_positions, read_groups, uses_keyword, wrap

DATA_DIR = SUITE_ROOT / "draft2020-12"

U = "unsupported_capability"
V = "validation"
PROFILES = ["standard", "strict"]

# Suite files of the subset's own keywords.
SUPPORTED_FILES = (
    "type.json",
    "properties.json",
    "required.json",
    "additionalProperties.json",
    "enum.json",
    "minimum.json",
    "items.json",
    "oneOf.json",
)

# Suite files of keywords outside the subset → the keyword each file is about.
UNSUPPORTED_FILES = {
    "const.json": "const",
    "anyOf.json": "anyOf",
    "allOf.json": "allOf",
    "not.json": "not",
    "pattern.json": "pattern",
    "minLength.json": "minLength",
    "maxLength.json": "maxLength",
    "minItems.json": "minItems",
    "maxItems.json": "maxItems",
    "maximum.json": "maximum",
    "exclusiveMinimum.json": "exclusiveMinimum",
    "exclusiveMaximum.json": "exclusiveMaximum",
    "ref.json": "$ref",
    "prefixItems.json": "prefixItems",
}

# The spec's keyword table, and the annotations `standard` adds (spec, "Two profiles").
TABLE_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "description", "enum", "minimum", "items", "oneOf"}
)
ANNOTATION_KEYWORDS = frozenset({"title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"})

# Deliberate disagreements with the suite for in-subset groups:
# (file, group description, test description) → the reason, citing the spec decision.
# There are none: every in-subset group agrees with the suite on every test.
DIVERGENCES: dict[tuple[str, str, str], str] = {}

# Lower bounds pinned from the current suite snapshot (per profile), so this module can
# never silently compare nothing. Raise them when more groups fall inside the subset.
MIN_IN_SUBSET_GROUPS = 7
MIN_IN_SUBSET_TESTS = 54
MIN_KEYWORD_GROUPS = 99  # groups of the unsupported-keyword files that use their keyword


def keywords_outside_subset(schema: Any, profile: str) -> set[str]:
    allowed = TABLE_KEYWORDS | ANNOTATION_KEYWORDS if profile == "standard" else TABLE_KEYWORDS
    return {key for _, key in keyword_positions(schema) if key not in allowed}


# --------------------------------------------------------------------------- suite data


class Group(NamedTuple):
    file: str
    description: str
    schema: Any  # adapted: root `$schema` dropped, wrapped unless the root is `type: "object"`
    wrapped: bool
    tests: tuple[tuple[str, Any, bool], ...]  # (description, adapted data, valid)

    @property
    def id(self) -> str:
        return f"{self.file.removesuffix('.json')}::{self.description}"


def adapt(raw_schema: Any) -> tuple[Any, bool]:
    schema = copy.deepcopy(raw_schema)
    if isinstance(schema, dict):
        schema.pop("$schema", None)
    if isinstance(schema, dict) and schema.get("type") == "object":
        return schema, False
    return wrap(schema), True


def load_groups() -> list[Group]:
    groups = []
    for raw in read_groups("draft2020-12", [*SUPPORTED_FILES, *UNSUPPORTED_FILES]):
        schema, wrapped = adapt(raw.schema)
        tests = tuple((d, {"v": data} if wrapped else data, valid) for d, data, valid in raw.tests)
        groups.append(Group(raw.file, raw.description, schema, wrapped, tests))
    return groups


GROUPS = load_groups()

GROUP_PARAMS = [pytest.param(group, id=group.id) for group in GROUPS]
# Groups of the unsupported-keyword files that use the file's keyword as a keyword. (The
# others use it only as a property name or inside data; the generic tests cover them.)
KEYWORD_GROUPS = [
    g for g in GROUPS if g.file in UNSUPPORTED_FILES and uses_keyword(g.schema, UNSUPPORTED_FILES[g.file])
]
TEST_PARAMS = [
    pytest.param(group, description, data, valid, id=f"{group.id}::{description}")
    for group in GROUPS
    for description, data, valid in group.tests
]


# --------------------------------------------------------------------------- walker self-tests


def test_walker_finds_keywords_not_property_names_or_data() -> None:
    schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "$ref": {"enum": [{"$ref": "#/x", "const": 1}]},
            "n": {"oneOf": [{"type": "integer", "minimum": 1}, {"items": {"maxLength": 2}}]},
        },
        "required": ["const"],
        "$defs": {"anyOf": {"not": {"pattern": "^a"}}},
    }
    keys = {key for _, key in keyword_positions(schema)}
    assert {"type", "properties", "required", "enum", "oneOf", "minimum", "items", "maxLength"} <= keys
    assert {"$defs", "not", "pattern"} <= keys  # `pattern` below `$defs/anyOf/not`
    assert "$ref" not in keys and "const" not in keys and "anyOf" not in keys
    assert ("/properties/n/oneOf/1/items/maxLength", "maxLength") in set(keyword_positions(schema))
    assert ("/properties/pattern/type", "type") in set(keyword_positions(schema))
    assert not list(keyword_positions(True))


def test_walker_on_suite_negatives() -> None:
    # Two ref.json groups use "$ref" only as a property name or inside enum data.
    by_id = {group.id: group for group in GROUPS}
    assert not uses_keyword(by_id["ref::property named $ref that is not a reference"].schema, "$ref")
    assert not uses_keyword(by_id["ref::naive replacement of $ref with its destination is not correct"].schema, "$ref")
    assert uses_keyword(by_id["ref::property named $ref, containing an actual $ref"].schema, "$ref")


# --------------------------------------------------------------------------- classification


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("group", GROUP_PARAMS)
def test_group_classification(group: Group, profile: str) -> None:
    report = classify(group.schema, profile=profile)
    outside = keywords_outside_subset(group.schema, profile)
    if outside:
        # A keyword outside the table, wherever it stands, is unsupported (decision 9), and
        # one unsupported finding makes the report's kind unsupported (decision 13).
        assert not report.ok, f"classified ok despite {sorted(outside)}"
        assert report.kind == U, f"{sorted(outside)} but kind {report.kind}: {report.issues}"
    if not report.ok:
        assert report.kind in (U, V)
        assert all(issue.instance_path is None for issue in report.issues)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("group", [pytest.param(group, id=group.id) for group in KEYWORD_GROUPS])
def test_unsupported_keyword_group_is_refused(group: Group, profile: str) -> None:
    report = classify(group.schema, profile=profile)
    assert not report.ok
    assert report.kind == U


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("group", "description", "data", "valid"), TEST_PARAMS)
def test_suite_case(group: Group, description: str, data: Any, valid: bool, profile: str) -> None:
    classification = classify(group.schema, profile=profile)
    result = check(group.schema, data, profile=profile)
    if not classification.ok:
        # Outside the subset: the guard refuses every call, with the classification.
        assert not result.ok, "a schema outside the subset validated arguments"
        assert result.kind == classification.kind
        assert result.issues == classification.issues
        return
    key = (group.file, group.description, description)
    if key in DIVERGENCES:
        assert result.ok is not valid, f"listed divergence no longer diverges: {DIVERGENCES[key]}"
        return
    assert result.ok is valid, f"suite says valid={valid}, guard: {result.issues}"
    if not result.ok:
        assert result.kind == V
        assert all(issue.instance_path is not None for issue in result.issues)


# --------------------------------------------------------------------------- bookkeeping


def test_divergences_name_real_in_subset_cases() -> None:
    cases = {(g.file, g.description, d) for g in GROUPS for d, _, _ in g.tests}
    for key, reason in DIVERGENCES.items():
        assert key in cases, f"unknown suite case {key}"
        assert "decision" in reason, f"{key}: a divergence must cite the spec decision it follows"
        group = next(g for g in GROUPS if (g.file, g.description) == key[:2])
        assert any(classify(group.schema, profile=p).ok for p in PROFILES), f"{key}: group is not in the subset"


@pytest.mark.parametrize("profile", PROFILES)
def test_summary_enough_in_subset_groups_compared(profile: str) -> None:
    in_subset = [g for g in GROUPS if classify(g.schema, profile=profile).ok]
    compared_tests = sum(len(g.tests) for g in in_subset)
    assert len(in_subset) >= MIN_IN_SUBSET_GROUPS, [g.id for g in in_subset]
    assert compared_tests >= MIN_IN_SUBSET_TESTS
    # Every unsupported-keyword file has groups that use its keyword as a keyword.
    assert len(KEYWORD_GROUPS) >= MIN_KEYWORD_GROUPS
    assert {g.file for g in KEYWORD_GROUPS} == set(UNSUPPORTED_FILES)
