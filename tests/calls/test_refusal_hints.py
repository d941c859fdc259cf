"""Refusals a model repairs in one try (issue 24, item 5): each finding says what the schema expects.

For an unknown key under a closed object, the declared names closest to it (or all of them); for
``enum``/``const``, the choices; for a missing property, its declared type. The same words under
every profile and in every mode (wrap's and serve's pipeline, both eras); the rejection's issues
carry them as data (``expected``, ``did_you_mean``); the log line does not; no argument value
ever appears in the text or the ``_meta``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcp_guard import compile
from mcp_guard.calls.refusals import logged_reason, schema_verdict
from mcp_guard.core.hints import MAX_SHOWN, MAX_VISITS, closest
from mcp_guard.wire.meta import REJECTION_KEY

PROFILES = ("strict", "standard", "extended")

STR = {"type": "string"}
INT = {"type": "integer"}

BATCH = {
    "type": "object",
    "properties": {
        "operations": {"type": "array", "items": STR},
        "continue": STR,
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "limit": INT,
        "options": {
            "type": "object",
            "properties": {"dryRun": {"type": "boolean"}, "max_results": INT},
            "additionalProperties": False,
        },
    },
    "required": ["operations", "mode"],
    "additionalProperties": False,
}


def refusal(schema: dict[str, Any], arguments: Any, profile: str, *, modern: bool = False) -> tuple[str, list[Any]]:
    compiled = compile(schema, profile=profile)
    assert compiled.supported, compiled.report
    verdict = schema_verdict("batch", compiled, arguments, modern=modern)
    assert verdict.result is not None, "the call must be refused"
    rejection = verdict.result["_meta"][REJECTION_KEY]
    return verdict.result["content"][0]["text"], rejection["issues"]


def issue_at(issues: list[Any], keyword: str, instance_path: str) -> dict[str, Any]:
    found = [i for i in issues if i["keyword"] == keyword and i["instance_path"] == instance_path]
    assert len(found) == 1, issues
    return dict(found[0])


# (id, arguments, keyword, instance path, words the text holds, the issue's hint data)
ROWS = [
    (
        "abbreviation",
        {"operations": [], "mode": "fast", "ops": []},
        "additionalProperties",
        "/ops",
        "`/ops` is not allowed: the schema declares no such property (additionalProperties: false) — did you mean "
        "`options`?",
        {
            "did_you_mean": ["options"],
            "expected": {"properties": ["operations", "continue", "mode", "limit", "options"]},
        },
    ),
    (
        "abbreviation-of-a-name-not-held",
        {"mode": "fast", "ops": [], "options": {}},
        "additionalProperties",
        "/ops",
        "— did you mean `operations`?",
        {
            "did_you_mean": ["operations"],
            "expected": {"properties": ["operations", "continue", "mode", "limit", "options"]},
        },
    ),
    (
        "no-close-name-lists-the-declared-ones",
        {"operations": [], "mode": "fast", "cursor": "x"},
        "additionalProperties",
        "/cursor",
        "— its declared properties are `operations`, `continue`, `mode`, `limit` and `options`",
        {
            "did_you_mean": [],
            "expected": {"properties": ["operations", "continue", "mode", "limit", "options"]},
        },
    ),
    (
        "typo-in-a-nested-closed-object",
        {"operations": [], "mode": "fast", "options": {"dryrun": True, "maxResult": 3}},
        "additionalProperties",
        "/options/maxResult",
        "`/options/maxResult` is not allowed: the schema declares no such property (additionalProperties: false) — "
        "did you mean `max_results`?",
        {"did_you_mean": ["max_results"], "expected": {"properties": ["dryRun", "max_results"]}},
    ),
    (
        "case-and-separators",
        {"operations": [], "mode": "fast", "options": {"dry_run": True}},
        "additionalProperties",
        "/options/dry_run",
        "did you mean `dryRun`?",
        {"did_you_mean": ["dryRun"], "expected": {"properties": ["dryRun", "max_results"]}},
    ),
    (
        "enum-choices",
        {"operations": [], "mode": "medium"},
        "enum",
        "/mode",
        '`/mode` must be one of: "fast", "slow" (enum)',
        {"expected": {"one_of": ["fast", "slow"]}},
    ),
    (
        "missing-property-type",
        {"mode": "fast"},
        "required",
        "",
        "`/operations` is required — an array",
        {"expected": {"type": ["array"]}},
    ),
    (
        "missing-property-type-and-choices",
        {"operations": []},
        "required",
        "",
        '`/mode` is required — a string, one of: "fast", "slow"',
        {"expected": {"type": ["string"], "one_of": ["fast", "slow"]}},
    ),
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("arguments", "keyword", "instance_path", "words", "data"), [pytest.param(*r[1:], id=r[0]) for r in ROWS]
)
def test_each_hint_kind_under_each_profile(
    profile: str, arguments: Any, keyword: str, instance_path: str, words: str, data: dict[str, Any]
) -> None:
    text, issues = refusal(BATCH, arguments, profile)
    assert words in text
    issue = issue_at(issues, keyword, instance_path)
    assert {k: issue[k] for k in ("expected", "did_you_mean") if k in issue} == data
    # The finding's own message is unchanged: the hint follows it in the text.
    assert issue["message"] in text and not issue["message"].endswith("?")


@pytest.mark.parametrize(("arguments", "_k", "_p", "_w", "_d"), [pytest.param(*r[1:], id=r[0]) for r in ROWS])
def test_the_same_refusal_under_every_profile_and_in_both_eras(
    arguments: Any, _k: str, _p: str, _w: str, _d: dict[str, Any]
) -> None:
    seen = {
        (text, json.dumps(issues))
        for profile in PROFILES
        for modern in (False, True)
        for text, issues in [refusal(BATCH, arguments, profile, modern=modern)]
    }
    assert len(seen) == 1


@pytest.mark.parametrize("profile", PROFILES)
def test_serve_and_wrap_pipelines_refuse_with_the_same_hints(profile: str) -> None:
    from mcp_guard.calls.call import Call
    from mcp_guard.calls.pipeline import WRAP_STEPS, Pipeline
    from mcp_guard.config import parse_config
    from mcp_guard.sessions.catalog import Catalog
    from mcp_guard.sessions.naming import CursorCodec

    config = {"mcpServers": {"fs": {"command": "x"}}, "guard": {"profile": profile, "nameFormat": "{tool}"}}
    cat = Catalog(parse_config(json.dumps(config), environ={}), None, CursorCodec(b"k" * 32))
    cat.update("fs", [{"name": "batch", "inputSchema": BATCH}])
    route = cat.route("batch")
    assert route is not None
    arguments = {"ops": [], "mode": "medium", "options": {"dry_run": True}}
    texts = set()
    for modern in (False, True):
        for pipeline in (Pipeline(), Pipeline(enabled=WRAP_STEPS)):
            rejection = pipeline.judge(Call(route, arguments, modern=modern))
            assert rejection is not None and rejection.result is not None
            texts.add(rejection.result["content"][0]["text"])
            issues = rejection.result["_meta"][REJECTION_KEY]["issues"]
            assert issue_at(issues, "additionalProperties", "/options/dry_run")["did_you_mean"] == ["dryRun"]
    assert texts == {refusal(BATCH, arguments, "extended")[0]}
    assert "— did you mean `operations`?" in texts.pop()


# Extended only: the subset profiles refuse these keywords (const, unevaluatedProperties, $ref, allOf,
# dependentRequired) as unsupported.
EXTENDED_ROWS = [
    (
        "const",
        {"type": "object", "properties": {"v": {"const": 2}}},
        {"v": 3},
        "const",
        "/v",
        "`/v` must be 2 (const)",
        {"expected": {"const": 2}},
    ),
    (
        "missing-const",
        {"type": "object", "properties": {"v": {"const": "two"}}, "required": ["v"]},
        {},
        "required",
        "",
        '`/v` is required — exactly "two"',
        {"expected": {"const": "two"}},
    ),
    (
        "unevaluated-properties-names-what-in-place-subschemas-declare",
        {
            "type": "object",
            "properties": {"a": STR},
            "allOf": [{"properties": {"bravo": INT}}],
            "unevaluatedProperties": False,
        },
        {"brav": 1},
        "unevaluatedProperties",
        "/brav",
        "(unevaluatedProperties: false) — did you mean `bravo`?",
        {"did_you_mean": ["bravo"], "expected": {"properties": ["a", "bravo"]}},
    ),
    (
        "closed-object-behind-a-ref",
        {
            "$defs": {
                "o": {
                    "type": "object",
                    "properties": {"alpha": {"type": ["integer", "null"]}},
                    "required": ["alpha"],
                    "additionalProperties": False,
                }
            },
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/o"}},
        },
        {"x": {"alpa": 1}},
        "additionalProperties",
        "/x/alpa",
        "— did you mean `alpha`?",
        {"did_you_mean": ["alpha"], "expected": {"properties": ["alpha"]}},
    ),
    (
        "missing-property-through-a-ref-with-a-type-list",
        {
            "$defs": {
                "o": {"type": "object", "properties": {"alpha": {"type": ["integer", "null"]}}, "required": ["alpha"]}
            },
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/o"}},
        },
        {"x": {}},
        "required",
        "/x",
        "`/x/alpha` is required — an integer or null",
        {"expected": {"type": ["integer", "null"]}},
    ),
    (
        "missing-property-whose-type-is-behind-a-ref",
        {
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/e"}},
            "required": ["x"],
            "$defs": {"e": {"enum": ["a", 1]}},
        },
        {},
        "required",
        "",
        '`/x` is required — one of: "a", 1',
        {"expected": {"one_of": ["a", 1]}},
    ),
    (
        "missing-property-of-any-of-types",
        {"type": "object", "properties": {"x": {"anyOf": [STR, INT]}}, "required": ["x"]},
        {},
        "required",
        "",
        "`/x` is required — a string or an integer",
        {"expected": {"type": ["string", "integer"]}},
    ),
    (
        "dependent-required",
        {"type": "object", "properties": {"a/b": STR, "c": {"type": "boolean"}}, "dependentRequired": {"c": ["a/b"]}},
        {"c": True},
        "dependentRequired",
        "",
        "`/a~1b` is required when `c` is present (dependentRequired) — a string",
        {"expected": {"type": ["string"]}},
    ),
]


@pytest.mark.parametrize(
    ("schema", "arguments", "keyword", "instance_path", "words", "data"),
    [pytest.param(*r[1:], id=r[0]) for r in EXTENDED_ROWS],
)
def test_hints_of_extended_keywords(
    schema: dict[str, Any], arguments: Any, keyword: str, instance_path: str, words: str, data: dict[str, Any]
) -> None:
    text, issues = refusal(schema, arguments, "extended")
    assert words in text, text
    issue = issue_at(issues, keyword, instance_path)
    assert {k: issue[k] for k in ("expected", "did_you_mean") if k in issue} == data


def test_a_property_of_an_any_of_branch_is_not_described_as_if_it_held() -> None:
    # `x` declared only inside one anyOf branch: that branch may not apply, so no type is claimed.
    schema = {"type": "object", "anyOf": [{"properties": {"x": STR}}, {"properties": {"y": INT}}], "required": ["x"]}
    text, issues = refusal(schema, {}, "extended")
    assert "`/x` is required. Correct" in text
    assert "expected" not in issue_at(issues, "required", "")


def test_an_object_that_declares_nothing_or_one_name() -> None:
    text, issues = refusal({"type": "object", "additionalProperties": False}, {"zzz": 1}, "standard")
    assert "— it declares no property" in text
    assert issue_at(issues, "additionalProperties", "/zzz")["expected"] == {"properties": []}
    text, _ = refusal(
        {"type": "object", "properties": {"query": STR}, "additionalProperties": False}, {"x": 1}, "strict"
    )
    assert "— its only declared property is `query`" in text


def test_long_lists_are_bounded_and_say_how_many_more() -> None:
    long = "v" * 300
    choices = [f"c{i}" for i in range(3)] + [long] + [f"d{i}" for i in range(30)]
    names = {f"field_{i:02}": STR for i in range(40)}
    schema = {
        "type": "object",
        "properties": {"pick": {"type": "string", "enum": choices}, **names},
        "required": ["pick"],
        "additionalProperties": False,
    }
    for profile in PROFILES:
        text, issues = refusal(schema, {"zzz": 1}, profile)
        missing = issue_at(issues, "required", "")["expected"]
        # The data: whole choices, a 300-character one left out and counted in `more`.
        assert missing["one_of"] == ["c0", "c1", "c2", *[f"d{i}" for i in range(MAX_SHOWN - 3)]]
        assert missing["more"] == len(choices) - MAX_SHOWN
        # The text: the first 12 choices, each cut at 40 characters, then how many more.
        assert '"' + "v" * 36 + "…" in text and long not in text
        assert f"… and {len(choices) - MAX_SHOWN} more" in text
        unknown = issue_at(issues, "additionalProperties", "/zzz")["expected"]
        assert unknown["properties"] == ["pick", *[f"field_{i:02}" for i in range(MAX_SHOWN - 1)]]
        assert unknown["more"] == 41 - MAX_SHOWN and f"… and {41 - MAX_SHOWN} more" in text


def test_the_ranking_budget_bounds_a_refusal_of_many_keys_under_a_huge_object() -> None:
    count = 5_000
    schema = {"type": "object", "properties": {f"name_{i}": STR for i in range(count)}, "additionalProperties": False}
    keys = {f"NAME_{i}": 1 for i in range(40)}  # each the same as a declared name but for case
    _, issues = refusal(schema, keys, "standard")
    ranked = [i for i in issues if i["did_you_mean"]]
    # Each key is ranked against every name until the report's budget is spent; the rest get the names only.
    assert len(ranked) == MAX_VISITS // count
    assert all(i["expected"]["more"] == count - MAX_SHOWN for i in issues)


def test_the_log_line_holds_no_suggestion() -> None:
    compiled = compile(BATCH, profile="standard")
    verdict = schema_verdict("batch", compiled, {"operations": [], "mode": "fast", "ops": 1}, modern=False)
    assert verdict.report is not None
    assert logged_reason(verdict.report, compiled.declared_names) == "additionalProperties at /…"


def test_closest_ranks_folded_equality_then_prefix_then_abbreviation_then_spelling() -> None:
    names = ["operations", "options", "limit", "max_results", "query", "cursor"]
    assert closest("ops", names) == ["options", "operations"]  # abbreviations: the shorter name is closer
    assert closest("maxResults", names) == ["max_results"]
    assert closest("qu", names) == ["query"]
    assert closest("limt", names) == ["limit"]
    assert closest("continue", names) == []
    assert closest("", names) == [] and closest("__", names) == []
    assert closest("o", names) == []  # one character says too little
    assert closest("operation", names, limit=1) == ["operations"]


# --- no argument value ever appears in a refusal (text or _meta) ---------------------------------------------

MARK = "Zq9#"
"""Every generated string value starts with this (no schema text, pointer or key holds it)."""

NESTED = {
    "type": "object",
    "properties": {
        "operations": {"type": "array", "items": STR},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "limit": INT,
        "options": {
            "type": "object",
            "properties": {"dryRun": {"type": "boolean"}, "tag": STR},
            "additionalProperties": False,
        },
    },
    "required": ["operations", "mode", "limit"],
    "additionalProperties": False,
}
KEYS = st.sampled_from(
    ["operations", "ops", "mode", "mod", "limit", "lmit", "options", "opts", "dryRun", "dry_run", "tag", "cursor"]
)
SECRETS = st.one_of(
    st.text(min_size=1, max_size=12).map(lambda s: MARK + s),
    st.integers(min_value=10**9, max_value=10**15),
    st.floats(min_value=1e9, max_value=1e15, allow_nan=False),
)
VALUES = st.recursive(
    SECRETS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3), max_leaves=8
)


def leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v)]
    return [value]


def renderings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value, json.dumps(value)[1:-1]]
    return [str(value), json.dumps(value), repr(value)]


@pytest.mark.parametrize("profile", PROFILES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arguments=st.dictionaries(KEYS, VALUES, max_size=6))
@example(arguments={"ops": MARK + "a", "mode": MARK + "b", "options": {"dry_run": 10**12, "tag": [MARK + "c"]}})
def test_no_argument_value_appears_in_a_refusal(profile: str, arguments: dict[str, Any]) -> None:
    compiled = compile(NESTED, profile=profile)
    assert compiled.supported
    verdict = schema_verdict("t", compiled, arguments, modern=False)
    if verdict.result is None:
        return
    shown = verdict.result["content"][0]["text"] + json.dumps(verdict.result["_meta"], ensure_ascii=False)
    shown_ascii = json.dumps(verdict.result["_meta"])
    for leaf in leaves(arguments):
        for text in renderings(leaf):
            assert text not in shown and text not in shown_ascii, (text, shown)
