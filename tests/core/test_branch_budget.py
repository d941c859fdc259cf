"""The work budget charges what each applicator branch scans (issue 25 item 4).

An in-place applicator (``allOf``, ``anyOf``, ...) applies every branch to the same value: a
branch that walks the value's members (undeclared members of ``properties``, the names an
``unevaluatedProperties`` sibling asks it for) pays one unit a member for its own walk
(``extended.gen.Gen.scanned``). So an argument of many keys meets a schema of many branches
with the documented refusal (``validation``, keyword ``budget``), never a walk of
branches x keys. The counts here are set against ``MAX_WORK`` (4,000,000): just under it the
call is judged as before; past it, refused.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard.core import MAX_WORK, compile

KEYS = 100_000
ARGUMENTS = {f"k{i}": i for i in range(KEYS)}


def all_of(branches: int) -> dict[str, Any]:
    """``allOf`` of ``branches`` ``properties`` branches, each declaring one name the argument lacks."""
    return {"type": "object", "allOf": [{"properties": {f"a{i}": {"type": "string"}}} for i in range(branches)]}


def any_of_unevaluated(branches: int, branch: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "anyOf": [branch] * branches, "unevaluatedProperties": False}


def keywords(schema: dict[str, Any], arguments: Any) -> list[str]:
    compiled = compile(schema)
    assert compiled.supported
    return [i.keyword for i in compiled.check(arguments, parsed=True).issues]


def test_the_counts_below_are_set_against_the_documented_budget() -> None:
    assert MAX_WORK == 4_000_000


def test_all_of_branches_each_pay_for_their_walk_of_the_members() -> None:
    # 30 walks of 100,000 members fit in the budget; 50 do not.
    assert keywords(all_of(30), ARGUMENTS) == []
    assert keywords(all_of(50), ARGUMENTS) == ["budget"]


def test_a_single_branch_walks_a_big_argument_within_the_budget() -> None:
    assert keywords(all_of(1), {f"k{i}": i for i in range(1_000_000)}) == []


@pytest.mark.parametrize(
    "branch",
    [
        {"properties": {"k0": {"type": "integer"}}},  # each branch's test walks the undeclared members
        {"additionalProperties": True},  # each branch evaluates every member (its annotation is a full pass)
        {"patternProperties": {"^k": True}},
    ],
    ids=["properties", "additionalProperties", "patternProperties"],
)
def test_branches_under_unevaluated_properties_each_pay_for_their_pass(branch: dict[str, Any]) -> None:
    assert keywords(any_of_unevaluated(50, branch), ARGUMENTS) == ["budget"]


def test_few_branches_under_unevaluated_properties_are_judged_as_before() -> None:
    evaluating = {"additionalProperties": True}
    assert keywords(any_of_unevaluated(5, evaluating), ARGUMENTS) == []
    declaring = {"properties": {"k0": {"type": "integer"}}}
    assert set(keywords(any_of_unevaluated(5, declaring), {"k0": 1, "k1": 2})) == {"unevaluatedProperties"}


def test_the_refusal_is_the_budget_issue_with_no_argument_value() -> None:
    report = compile(all_of(50)).check({**ARGUMENTS, "k1": "sk-live-SECRET"}, parsed=True)
    (issue,) = report.issues
    assert (issue.kind, issue.keyword, issue.instance_path) == ("validation", "budget", "")
    assert "SECRET" not in issue.message and "work budget" in issue.message
