"""What a refused call looks like, built once for wrap and serve (design.md, "What the client sees")."""

from __future__ import annotations

import pytest

from mcp_guard import compile
from mcp_guard.calls.refusals import FORWARD, refusal_result, schema_verdict, unknown_tool
from mcp_guard.cli import main
from mcp_guard.config import GuardSettings
from mcp_guard.wire.meta import REJECTION_KEY

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}


def test_a_refusal_is_an_error_result_with_one_text_and_the_rejection_in_meta() -> None:
    result = refusal_result("budget_exceeded", "t", "no more calls", modern=True, limit_per_minute=2)
    assert result == {
        "content": [{"type": "text", "text": "no more calls"}],
        "isError": True,
        "_meta": {REJECTION_KEY: {"kind": "budget_exceeded", "tool": "t", "issues": [], "limit_per_minute": 2}},
        "resultType": "complete",
    }
    assert "resultType" not in refusal_result("too_large", "t", "x", modern=False)


def test_the_schema_step_forwards_valid_arguments_and_refuses_others_by_pointer() -> None:
    compiled = compile(SCHEMA)
    assert schema_verdict("t", compiled, {"n": 2}, modern=False) is FORWARD
    refused = schema_verdict("t", compiled, {"n": 0}, modern=False)
    assert refused.result is not None and refused.kind == "validation"
    issues = refused.result["_meta"][REJECTION_KEY]["issues"]
    assert [(i["keyword"], i["instance_path"]) for i in issues] == [("minimum", "/n")]
    unsupported = schema_verdict("t", compile({"type": "string", "pattern": "a"}), "a", modern=False)
    assert unsupported.kind == "unsupported_capability"


def test_an_unknown_tool_is_minus_32602_and_a_long_name_is_cut() -> None:
    assert unknown_tool("nope") == (-32602, "Unknown tool: nope")
    code, text = unknown_tool("x" * 500)
    assert code == -32602 and text == "Unknown tool: " + "x" * 64 + "…"


def test_an_unsupported_refusal_names_what_the_operator_can_do_and_those_settings_exist(
    capsys: pytest.CaptureFixture[str],
) -> None:
    schema = {"type": "object", "$dynamicRef": "#x"}
    refused = schema_verdict("t", compile(schema, profile="standard"), {}, modern=False)
    assert refused.kind == "unsupported_capability" and refused.result is not None
    text = refused.result["content"][0]["text"]
    assert "configuration must change" not in text  # no setting relaxes a keyword
    for remedy in ("`--profile`", "`guard.profile`", "--hide-unsupported", '`guard.unsupported: "hide"`'):
        assert remedy in text
    # Under extended, the widest profile, no other profile is suggested (trial3 T6); the other remedies stay.
    widest = schema_verdict("t", compile(schema, profile="extended"), {}, modern=False)
    assert widest.result is not None
    text = widest.result["content"][0]["text"]
    assert "`--profile`" not in text and "already runs `extended`, its widest profile" in text
    for remedy in ("--hide-unsupported", '`guard.unsupported: "hide"`', "schema changed"):
        assert remedy in text
    with pytest.raises(SystemExit):
        main(["wrap", "--help"])
    assert "--hide-unsupported" in capsys.readouterr().out
    settings = GuardSettings.model_validate({"profile": "standard", "unsupported": "hide"})
    assert (settings.profile, settings.unsupported) == ("standard", "hide")
