"""``calls.outputs.judge_result`` called directly: its hot path (a result under ``enforce``) and what it
does with a schema the profile cannot enforce under each mode (issue 15)."""

from __future__ import annotations

from mcp_guard.calls.outputs import OUTPUT_INVALID, judge_result
from mcp_guard.core import compile
from mcp_guard.wire.meta import OUTPUT_KEY, REJECTION_KEY

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
UNSUPPORTED = {"type": "object", "$dynamicRef": "#x"}  # outside every profile's subset


def test_a_valid_result_under_enforce_is_the_upstream_s_own_object() -> None:
    result = {"content": [], "structuredContent": {"n": 1}}
    verdict = judge_result("t", compile(SCHEMA), result, "enforce", modern=False)
    assert verdict.result is result and verdict.outcome is None and verdict.report.ok


def test_an_invalid_result_under_enforce_is_withheld_with_its_findings() -> None:
    result = {"content": [], "structuredContent": {"n": "secret-text"}}
    verdict = judge_result("t", compile(SCHEMA), result, "enforce", modern=True)
    assert verdict.outcome == OUTPUT_INVALID and [i.keyword for i in verdict.report.issues] == ["type"]
    withheld = verdict.result
    assert withheld["isError"] is True and withheld["resultType"] == "complete"
    assert withheld["_meta"][REJECTION_KEY]["issues"][0]["instance_path"] == "/n"
    assert "secret-text" not in repr(withheld) and "secret-text" not in repr(verdict)


def test_interim_and_error_results_are_never_judged() -> None:
    compiled = compile(SCHEMA)
    for result in (
        {"content": [], "isError": True},
        {"resultType": "input_required", "inputRequests": {}},
        {"task": {"taskId": "1", "status": "working"}},
    ):
        assert judge_result("t", compiled, result, "enforce", modern=True).result is result


def test_enforce_withholds_a_result_whose_output_schema_cannot_be_enforced() -> None:
    """Enforce refuses such calls before they are forwarded; should a result reach the judge all the same
    (fail closed), it is withheld as unchecked, not passed on."""
    compiled = compile(UNSUPPORTED)
    result = {"content": [{"type": "text", "text": "secret-text"}], "structuredContent": {"n": 1}}
    verdict = judge_result("t", compiled, result, "enforce", modern=False)
    assert verdict.outcome == OUTPUT_INVALID
    withheld = verdict.result
    assert withheld["isError"] is True and "structuredContent" not in withheld
    rejection = withheld["_meta"][REJECTION_KEY]
    assert rejection["kind"] == OUTPUT_INVALID and rejection["schema"] == "outputSchema"
    assert [i["keyword"] for i in rejection["issues"]] == ["$dynamicRef"]
    assert "could not be checked" in withheld["content"][0]["text"] and "secret-text" not in repr(withheld)


def test_report_notes_an_output_schema_that_cannot_be_enforced() -> None:
    result = {"content": [], "structuredContent": {"n": 1}}
    verdict = judge_result("t", compile(UNSUPPORTED), result, "report", modern=False)
    assert verdict.outcome is None and verdict.result["structuredContent"] == {"n": 1}
    assert verdict.result["_meta"][OUTPUT_KEY]["checked"] is False
