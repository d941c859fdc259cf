"""The pattern analysis is bounded: a pattern a server lists cannot make classification slow.

A new-user trial found ``^(((a{1,50}){1,50}){1,50}){1,50}$`` took 74 s of CPU to classify
(``{1,100}`` did not finish in 300 s), with the guard's event loop blocked the whole time:
the bound's coefficients grew to thousands of digits, and nested or many bounded
repetitions of ambiguous parts were expanded without limit. Coefficients now saturate past
any call's budget, and expansions are counted against one budget per pattern.
"""

from __future__ import annotations

import time

import pytest

from mcp_guard import classify
from mcp_guard.core import _regex_bound
from mcp_guard.core.budget import MAX_WORK
from mcp_guard.core.ecma_regex import STEPS_PER_UNIT, PatternError, compile_pattern

HOSTILE = [
    "^(((a{1,50}){1,50}){1,50}){1,50}$",
    "^(((a{1,100}){1,100}){1,100}){1,100}$",
    "^(((a{1,1000}){1,1000}){1,1000}){1,1000}$",
    "^" + "(" * 200 + "a{1,999}" + "){1,999}" * 200 + "$",
    "^(" + "|".join(["(a|aa){1,999}"] * 250) + ")$",
]


def test_saturation_is_past_every_budget() -> None:
    # Capping a coefficient changes no decision only when the cap exceeds a whole call's steps.
    assert _regex_bound._CAP > 8 * MAX_WORK * STEPS_PER_UNIT


@pytest.mark.parametrize("source", HOSTILE, ids=lambda s: s[:30])
def test_hostile_repetitions_are_refused_quickly(source: str) -> None:
    start = time.process_time()
    result = compile_pattern(source)
    spent = time.process_time() - start
    assert isinstance(result, PatternError)
    assert result.kind == "unsupported_capability"
    assert spent < 3.0, f"{spent:.1f} s of CPU to analyse one pattern"


def test_hostile_pattern_in_a_tool_schema_is_unsupported() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": HOSTILE[1]}}}
    start = time.process_time()
    report = classify(schema, profile="extended")
    assert time.process_time() - start < 3.0
    assert not report.ok
    assert [(i.kind, i.schema_path) for i in report.issues] == [("unsupported_capability", "/properties/a/pattern")]


@pytest.mark.parametrize(
    "source",
    [r"^(\w+\s?){1,50}$", "^(a|ab){0,40}c$", r"^(\d+\.?){1,4}$", "^([a-z]+-?){1,20}$"],
)
def test_ordinary_bounded_repetitions_are_still_analysed(source: str) -> None:
    # Within the expansion budget, the analysis runs as before: a bound, or a refusal for its own reason.
    result = compile_pattern(source)
    if isinstance(result, PatternError):
        assert "analysis of its repetitions" not in result.message
