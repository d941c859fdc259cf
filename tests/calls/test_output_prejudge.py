"""A big result's check against its ``outputSchema`` done in a worker thread, and taken on the loop (issue 25).

``calls.outputs.prejudge_result`` checks a result's ``structuredContent`` where it is called (the peer's
worker thread, ``peer.connection``); ``judge_result`` on the loop then takes that report for this very
value against this very schema, and checks anything else as before. The verdicts are the same either way.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard.calls import outputs
from mcp_guard.calls.outputs import OUTPUT_INVALID, judge_result, prejudge_result
from mcp_guard.core import Compiled, compile

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The values ``Compiled.check`` is called with (the fixture clears what an earlier test left)."""
    seen: list[Any] = []
    check = Compiled.check

    def counting(self: Compiled, value: Any, **kwargs: Any) -> Any:
        seen.append(value)
        return check(self, value, **kwargs)

    monkeypatch.setattr(Compiled, "check", counting)
    monkeypatch.setattr(outputs, "_prejudged", {})
    return seen


@pytest.mark.parametrize("mode", ["enforce", "report"])
@pytest.mark.parametrize("structured", [{"n": 1}, {"n": "one"}, {}])
def test_the_loop_takes_the_report_made_in_the_thread(checks: list[Any], mode: str, structured: Any) -> None:
    compiled = compile(SCHEMA)
    result = {"content": [], "structuredContent": structured}
    expected = judge_result("t", compiled, {**result, "structuredContent": dict(structured)}, mode, modern=False)
    checks.clear()
    prejudge_result(compiled, result, mode)
    assert checks == [structured]
    verdict = judge_result("t", compiled, result, mode, modern=False)
    assert checks == [structured]  # not checked again
    assert (verdict.outcome, verdict.report) == (expected.outcome, expected.report)
    assert (verdict.outcome == OUTPUT_INVALID) is (structured != {"n": 1})


def test_another_value_or_schema_is_checked_anew(checks: list[Any]) -> None:
    compiled, other = compile(SCHEMA), compile(SCHEMA)
    result = {"structuredContent": {"n": 1}}
    prejudge_result(compiled, result, "enforce")
    judge_result("t", other, result, "enforce", modern=False)  # another schema (a table listed again)
    changed = {"structuredContent": {"n": "one"}}
    assert judge_result("t", compiled, changed, "enforce", modern=False).outcome == OUTPUT_INVALID
    assert len(checks) == 3


@pytest.mark.parametrize(
    "result",
    [
        {"isError": True, "structuredContent": {"n": 1}},
        {"resultType": "input_required", "structuredContent": {"n": 1}},
        {"content": []},
        ["not", "a", "result"],
    ],
)
def test_what_is_not_judged_is_not_checked_in_the_thread(checks: list[Any], result: Any) -> None:
    prejudge_result(compile(SCHEMA), result, "enforce")
    prejudge_result(compile(SCHEMA), {"structuredContent": {"n": 1}}, "off")
    assert checks == [] and outputs._prejudged == {}


def test_unclaimed_reports_are_bounded(checks: list[Any]) -> None:
    compiled = compile(SCHEMA)
    results = [{"structuredContent": {"n": i}} for i in range(outputs.MAX_PREJUDGED * 3)]
    for result in results:
        prejudge_result(compiled, result, "enforce")
    assert len(outputs._prejudged) <= outputs.MAX_PREJUDGED
