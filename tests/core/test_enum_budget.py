"""The ``enum``/``const`` value budget (``core.budget.MAX_ENUM_VALUES``, issue 11): a schema's
``enum`` and ``const`` values are counted as they are read, nested values included, and a schema
past the limit is refused at the keyword without being walked whole; the ``enum`` message says
how many choices it left out."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcp_guard import UNSUPPORTED, VALIDATION, compile
from mcp_guard.core.budget import MAX_ENUM_CHOICES, MAX_ENUM_VALUES

PROFILES = ("extended", "standard")

# Generous: the budget reads at most MAX_ENUM_VALUES values (milliseconds); walking the whole
# value, as before the budget, took seconds for these sizes.
CPU_BOUND = 1.5


def _schema(keyword: str, value: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": {"type": "array", keyword: value}}}


def _refused_quickly(schema: dict[str, Any], profile: str, keyword: str) -> str:
    """Compile as the relay does (defer, known JSON) and in full; both refuse at the keyword, in CPU time."""
    for defer in (True, False):
        start = time.process_time()
        report = compile(schema, profile=profile, defer=defer, known_json=True).report
        spent = time.process_time() - start
        assert spent < CPU_BOUND, (profile, defer, spent)
        found = [i for i in report.issues if i.schema_path == f"/properties/a/{keyword}"]
        assert found, report.issues
    return found[0].message


def _big_nested(nodes: int) -> list[Any]:
    """A value of about ``nodes`` distinct JSON nodes (no shared sub-objects)."""
    return [[i, {"y": str(i)}] for i in range(nodes // 4)]


@pytest.mark.parametrize("profile", PROFILES)
def test_enum_of_many_containers_is_cut_off(profile: str) -> None:
    choices = [[i, [i, [i, [i]]]] for i in range(MAX_ENUM_CHOICES)]  # 10,000 choices, 70,000 values
    many = [list(c) + [[j] for j in range(30)] for c in choices]  # 670,000 values
    issue = [i for i in compile(_schema("enum", many), profile=profile).report.issues if i.keyword == "enum"]
    assert issue and issue[0].kind == UNSUPPORTED
    message = _refused_quickly(_schema("enum", many), profile, "enum")
    if profile == "extended":
        assert f"{MAX_ENUM_VALUES:,}" in message


def test_huge_const_is_cut_off_extended() -> None:
    schema = _schema("const", _big_nested(3_000_000))
    message = _refused_quickly(schema, "extended", "const")
    assert f"{MAX_ENUM_VALUES:,}" in message and "budget" in message


def test_huge_const_standard_is_refused_quickly() -> None:
    _refused_quickly(_schema("const", _big_nested(3_000_000)), "standard", "const")


def test_huge_const_in_enum_is_cut_off() -> None:
    schema = _schema("enum", [_big_nested(3_000_000)])
    for profile in PROFILES:
        message = _refused_quickly(schema, profile, "enum")
        assert f"{MAX_ENUM_VALUES:,}" in message


@pytest.mark.parametrize("profile", PROFILES)
def test_budget_is_the_schemas_not_the_keywords(profile: str) -> None:
    per = 6_000  # each enum within MAX_ENUM_CHOICES; 20 of them pass MAX_ENUM_VALUES together
    props = {f"p{k}": {"type": "string", "enum": [f"{k}-{i}" for i in range(per)]} for k in range(20)}
    schema = {"type": "object", "properties": props}
    full = compile(schema, profile=profile).report
    deferred = compile(schema, profile=profile, defer=True).report
    assert full == deferred  # the verdict-only walk counts the same budget
    found = [i for i in full.issues if i.keyword == "enum"]
    first = MAX_ENUM_VALUES // per  # the enum that passes the budget, and every one after it
    assert [i.schema_path for i in found] == [f"/properties/p{k}/enum" for k in range(first, 20)]
    assert found[0].kind == UNSUPPORTED
    fewer = {"type": "object", "properties": dict(list(props.items())[: MAX_ENUM_VALUES // per])}
    assert compile(fewer, profile=profile).supported
    assert compile(fewer, profile=profile, defer=True).supported


def test_shared_sub_objects_count_as_trees() -> None:
    leaf = list(range(100))
    shared = [[leaf] * 100] * 20  # 20 * 100 * 100 leaves: a small object that stands for 200,000 values
    report = compile(_schema("const", shared), profile="extended").report
    assert [i.kind for i in report.issues] == [UNSUPPORTED]
    assert f"{MAX_ENUM_VALUES:,}" in report.issues[0].message


@pytest.mark.parametrize("profile", PROFILES)
def test_enum_message_says_how_many_it_leaves_out(profile: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "enum": [f"c{i}" for i in range(20)]}}}
    compiled = compile(schema, profile=profile)
    assert compiled.supported
    report = compiled.check({"a": "secret-value-xyz"})
    assert [i.kind for i in report.issues] == [VALIDATION]
    message = report.issues[0].message
    assert "c11" in message and "c12" not in message
    assert "… and 8 more" in message
    assert "secret-value-xyz" not in message


def test_enum_message_short_list_is_whole() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "y"]}}}
    message = compile(schema, profile="extended").check({"a": "secret"}).issues[0].message
    assert "more" not in message and '"x", "y"' in message and "secret" not in message
