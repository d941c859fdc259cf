"""toolcall-verifier documents: format per version, every check, verdicts, reasons, JSONL reading."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from mcp_guard.reports.verifier import (
    V1,
    V2,
    DocumentV1,
    DocumentV2,
    parse_document,
    render_verdicts,
    verify_document,
    verify_text,
)

TOOLS: list[dict[str, Any]] = [
    {
        "name": "fetch",
        "description": "Load rows.",
        "parameters": {
            "type": "object",
            "properties": {"year": {"type": "integer", "minimum": 2000}},
            "required": ["year"],
            "additionalProperties": False,
        },
    },
    {"name": "analyze", "description": "Summarize.", "parameters": {"type": "object"}, "x-origin": "any extra key"},
    {
        "name": "report",
        "description": "Final.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "browse",
        "description": "Web.",
        "parameters": {"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}},
    },
    {"name": "broken", "description": "Bad.", "parameters": {"type": "object", "properties": {"c": {"type": "strng"}}}},
    {"name": "titled", "description": "Annotated.", "parameters": {"type": "object", "title": "T"}},
    {"name": "twin", "description": "One.", "parameters": {"type": "object"}},
    {"name": "twin", "description": "Two.", "parameters": {"type": "object"}},
]

STATE: dict[str, Any] = {
    "required_steps": ["fetch", "analyze", "report"],
    "completed_steps": ["fetch"],
    "pending_steps": ["analyze", "report"],
    "terminal_tools": ["report"],
}


def doc(call: Any = None, version: str = V1, **changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema_version": version,
        "user_request": "Make the Q4 report.",
        "workflow_state": copy.deepcopy(STATE),
        "available_tools": copy.deepcopy(TOOLS),
        "candidate_call": {"name": "analyze", "arguments": {}} if call is None else call,
    }
    document.update(changes)
    return document


def checks(document: Any, profile: str = "standard") -> list[tuple[str, bool, int | None, str | None]]:
    verdict = verify_document(document, profile=profile)
    return [(c.check, c.ok, c.call, c.reason) for c in verdict.checks]


def failed(document: Any, profile: str = "standard") -> list[tuple[str, int | None, str | None]]:
    return [(name, call, reason) for name, ok, call, reason in checks(document, profile) if not ok]


# --- format ------------------------------------------------------------------------------------


def test_valid_documents_of_both_versions() -> None:
    for version in (V1, V2):
        verdict = verify_document(doc(version=version), profile="standard")
        assert verdict.verdict == "valid", verdict.to_json()
        assert verdict.schema_version == version
        assert verdict.reasons == []
        assert [c.check for c in verdict.checks] == [
            "document_structure",
            "tool_exists",
            "arguments",
            "terminal_order",
            "repeated_step",
        ]
    assert isinstance(parse_document(doc(version=V2)), DocumentV2)
    assert type(parse_document(doc())) is DocumentV1


def test_v2_metadata() -> None:
    full = {
        "scenario_family": "grounded_synthesis",
        "requires_transform": False,
        "requires_synthesis": True,
        "requires_all_tool_facts": None,
        "must_acknowledge_missing_data": False,
    }
    for metadata in (full, {}, {"scenario_family": None}, None):
        assert verify_document(doc(version=V2, metadata=metadata), profile="standard").verdict == "valid", metadata
    for bad, where in [
        ({"requires_transform": "yes"}, "/metadata/requires_transform"),
        ({"scenario_family": 3}, "/metadata/scenario_family"),
        ({"difficulty": "hard"}, "/metadata/difficulty"),
        ([], "/metadata"),
    ]:
        verdict = verify_document(doc(version=V2, metadata=bad), profile="standard")
        assert verdict.reasons == ["malformed_document"]
        assert [e.path for e in verdict.checks[0].errors] == [where]


MALFORMED: list[tuple[dict[str, Any], list[str]]] = [
    (doc(metadata={}), ["/metadata"]),  # v1 has no metadata
    (doc(extra=1), ["/extra"]),
    (doc(schema_version="toolcall-verifier-input/v3"), ["/schema_version"]),
    ({k: v for k, v in doc().items() if k != "schema_version"}, ["/schema_version"]),
    ({k: v for k, v in doc().items() if k != "user_request"}, ["/user_request"]),
    ({k: v for k, v in doc().items() if k != "available_tools"}, ["/available_tools"]),
    ({k: v for k, v in doc().items() if k != "candidate_call"}, ["/candidate_call"]),
    (doc(user_request=["x"]), ["/user_request"]),
    (doc(workflow_state={**STATE, "notes": []}), ["/workflow_state/notes"]),
    (doc(workflow_state={**STATE, "pending_steps": "analyze"}), ["/workflow_state/pending_steps"]),
    (doc(workflow_state={**STATE, "completed_steps": [1]}), ["/workflow_state/completed_steps/0"]),
    (doc(workflow_state={k: v for k, v in STATE.items() if k != "terminal_tools"}), ["/workflow_state/terminal_tools"]),
    (doc(workflow_state={**STATE, "recent_errors": None}), ["/workflow_state/recent_errors"]),
    (doc(available_tools=[{"name": "a", "description": "d"}]), ["/available_tools/0/parameters"]),
    (doc(available_tools=[{"name": "a", "description": "d", "parameters": True}]), ["/available_tools/0/parameters"]),
    (doc(available_tools=[{"name": "a", "parameters": {}}]), ["/available_tools/0/description"]),
    (doc(available_tools=[{"name": "", "description": "d", "parameters": {}}]), ["/available_tools/0/name"]),
    (doc({"arguments": {}}), ["/candidate_call/name"]),
    (doc({"name": 5}), ["/candidate_call/name"]),
    (doc({"name": "analyze", "arguments": None}), ["/candidate_call/arguments"]),
    (doc({"name": "analyze", "arguments": '{"a": 1}'}), ["/candidate_call/arguments"]),
    (doc({"name": "analyze", "arguments": [1]}), ["/candidate_call/arguments"]),
    (doc([{"name": "analyze"}, {"arguments": {}}]), ["/candidate_call/1/name"]),
    (doc([{"name": "analyze"}, "fetch"]), ["/candidate_call/1"]),
    (doc([]), ["/candidate_call"]),
    (doc("analyze"), ["/candidate_call"]),
    (doc(7), ["/candidate_call"]),
]


@pytest.mark.parametrize(("document", "paths"), MALFORMED, ids=[f"malformed-{i}" for i in range(len(MALFORMED))])
def test_malformed_documents(document: dict[str, Any], paths: list[str]) -> None:
    verdict = verify_document(document, profile="standard")
    assert verdict.verdict == "deterministic_invalid"
    assert verdict.reasons == ["malformed_document"]
    assert len(verdict.checks) == 1 and verdict.checks[0].check == "document_structure"
    assert [e.path for e in verdict.checks[0].errors] == paths
    assert verdict.checks[0].detail


def test_candidate_call_wrong_type_says_what_is_expected() -> None:
    verdict = verify_document(doc("analyze"), profile="standard")
    assert verdict.checks[0].errors[0].message == "must be a call object or an array of call objects"


@pytest.mark.parametrize("value", [[], "doc", None, 3])
def test_not_an_object(value: Any) -> None:
    verdict = verify_document(value, profile="standard")
    assert verdict.reasons == ["malformed_document"]
    assert verdict.schema_version is None


def test_values_are_not_coerced() -> None:
    assert failed(doc(version=V2, metadata={"requires_transform": 1})) == [
        ("document_structure", None, "malformed_document")
    ]
    assert failed(doc(user_request=1)) == [("document_structure", None, "malformed_document")]


def test_extra_keys_allowed_on_tools_and_calls() -> None:
    call = {"name": "analyze", "arguments": {}, "id": "call_1", "type": "function"}
    assert verify_document(doc(call), profile="standard").verdict == "valid"


# --- checks ------------------------------------------------------------------------------------


def test_candidate_call_one_of_is_read_by_meaning() -> None:
    """A well-formed call matches the published oneOf twice; it must still be valid (module docstring)."""
    assert verify_document(doc({"name": "analyze", "arguments": {}}), profile="standard").verdict == "valid"
    assert verify_document(doc([{"name": "analyze", "arguments": {}}]), profile="standard").verdict == "valid"


def test_absent_arguments_count_as_empty_object() -> None:
    assert verify_document(doc({"name": "analyze"}), profile="standard").verdict == "valid"
    assert failed(doc({"name": "fetch"})) == [("arguments", 0, "invalid_arguments")]
    issues = verify_document(doc({"name": "fetch"}), profile="standard").checks[2].issues
    assert [(i["keyword"], i["instance_path"]) for i in issues] == [("required", "")]


def test_unknown_and_ambiguous_tools() -> None:
    assert failed(doc({"name": "delete_all"})) == [("tool_exists", 0, "unknown_tool")]
    assert failed(doc({"name": "twin"})) == [("tool_exists", 0, "ambiguous_tool")]
    assert "arguments" not in [c[0] for c in checks(doc({"name": "delete_all"}))]


def test_arguments_under_the_subset() -> None:
    assert failed(doc({"name": "fetch", "arguments": {"year": 2024}})) == []
    assert failed(doc({"name": "fetch", "arguments": {"year": 1999}})) == [("arguments", 0, "invalid_arguments")]
    assert failed(doc({"name": "fetch", "arguments": {"year": True}})) == [("arguments", 0, "invalid_arguments")]
    assert failed(doc({"name": "fetch", "arguments": {"year": 2024, "x": 1}})) == [
        ("arguments", 0, "invalid_arguments")
    ]
    assert failed(doc({"name": "fetch", "arguments": {"year": 2024.0}})) == []


def test_unsupported_schema_is_never_a_pass() -> None:
    verdict = verify_document(doc({"name": "browse", "arguments": {"u": "https://x"}}), profile="standard")
    assert verdict.reasons == ["unsupported_capability"]
    check = verdict.checks[2]
    assert check.check == "arguments" and not check.ok
    assert [(i["keyword"], i["schema_path"]) for i in check.issues] == [("format", "/properties/u/format")]


def test_malformed_schema() -> None:
    assert failed(doc({"name": "broken", "arguments": {"c": 1}})) == [("arguments", 0, "malformed_schema")]


def test_profile() -> None:
    assert failed(doc({"name": "titled"})) == []
    assert failed(doc({"name": "titled"}), profile="strict") == [("arguments", 0, "unsupported_capability")]
    with pytest.raises(ValueError, match="unknown profile"):
        verify_document(doc({"name": "titled"}), profile="loose")


def test_terminal_tool_with_pending_steps() -> None:
    verdict = verify_document(doc({"name": "report", "arguments": {"text": "done"}}), profile="standard")
    assert verdict.reasons == ["steps_pending"]
    check = next(c for c in verdict.checks if c.check == "terminal_order")
    assert (check.ok, check.call) == (False, 0)


def test_terminal_tool_that_is_the_last_pending_step_passes() -> None:
    state = {**STATE, "completed_steps": ["fetch", "analyze"], "pending_steps": ["report"]}
    assert verify_document(doc({"name": "report"}, workflow_state=state), profile="standard").verdict == "valid"
    state = {**STATE, "completed_steps": ["fetch", "analyze"], "pending_steps": []}
    assert verify_document(doc({"name": "report"}, workflow_state=state), profile="standard").verdict == "valid"


def test_terminal_check_names_only_the_other_pending_steps() -> None:
    verdict = verify_document(doc({"name": "report"}), profile="standard")
    detail = next(c.detail for c in verdict.checks if c.check == "terminal_order")
    assert detail.endswith("steps are still pending: `analyze`")


def test_repeated_completed_step_is_a_warning() -> None:
    verdict = verify_document(doc({"name": "fetch", "arguments": {"year": 2024}}), profile="standard")
    assert verdict.verdict == "valid"
    assert [(w.warning, w.call) for w in verdict.warnings] == [("repeated_step", 0)]
    check = next(c for c in verdict.checks if c.check == "repeated_step")
    assert check.ok and "already in completed_steps" in check.detail


def test_array_of_calls_each_against_the_same_state() -> None:
    calls = [
        {"name": "analyze"},
        {"name": "report"},  # still refused: the state says analyze is pending
        {"name": "fetch", "arguments": {"year": 1}},
        {"name": "nope"},
    ]
    verdict = verify_document(doc(calls), profile="standard")
    assert failed(doc(calls)) == [
        ("terminal_order", 1, "steps_pending"),
        ("arguments", 2, "invalid_arguments"),
        ("tool_exists", 3, "unknown_tool"),
    ]
    assert verdict.reasons == ["steps_pending", "invalid_arguments", "unknown_tool"]
    assert [w.call for w in verdict.warnings] == [2]
    assert {c.call for c in verdict.checks if c.call is not None} == {0, 1, 2, 3}


def test_messages_never_echo_argument_values() -> None:
    secret = "sk-live-SECRET"
    verdict = verify_document(
        doc({"name": "fetch", "arguments": {"year": secret, "extra": [secret]}}), profile="standard"
    )
    assert verdict.reasons == ["invalid_arguments"]
    out: list[str] = []
    render_verdicts([verdict], out.append)
    assert secret not in json.dumps(verdict.to_json()) and secret not in "".join(out)


def test_verdict_json_shape() -> None:
    data = verify_document(doc({"name": "report"}), index=4, line=9, profile="standard").to_json()
    assert set(data) == {"index", "line", "schema_version", "verdict", "reasons", "checks", "warnings"}
    assert (data["index"], data["line"], data["verdict"]) == (4, 9, "deterministic_invalid")
    for check in data["checks"]:
        assert {"check", "ok", "detail", "call", "reason"} <= set(check)


# --- text --------------------------------------------------------------------------------------


def test_one_pretty_printed_document() -> None:
    text = "\n\n" + json.dumps(doc(), indent=2)
    verdicts = verify_text(text, profile="standard")
    assert [(v.index, v.line, v.verdict) for v in verdicts] == [(0, 3, "valid")]


def test_jsonl_with_a_broken_line_judges_the_rest() -> None:
    lines = [json.dumps(doc()), "{not json", "", json.dumps(doc({"name": "nope"})), json.dumps(doc(version=V2))]
    verdicts = verify_text("\n".join(lines) + "\n", profile="standard")
    assert [(v.index, v.line, v.verdict, v.reasons) for v in verdicts] == [
        (0, 1, "valid", []),
        (1, 2, "deterministic_invalid", ["malformed_document"]),
        (2, 4, "deterministic_invalid", ["unknown_tool"]),
        (3, 5, "valid", []),
    ]
    assert verdicts[1].checks[0].detail.startswith("(document): line 2 column 2: not JSON")


def test_jsonl_whose_first_line_is_broken() -> None:
    verdicts = verify_text("{oops\n" + json.dumps(doc()) + "\n", profile="standard")
    assert [v.verdict for v in verdicts] == ["deterministic_invalid", "valid"]


def test_jsonl_by_suffix() -> None:
    verdicts = verify_text("{oops\n[1]\n", name="runs.jsonl", profile="standard")
    assert len(verdicts) == 2 and all(v.reasons == ["malformed_document"] for v in verdicts)


def test_broken_single_document_is_one_verdict() -> None:
    text = json.dumps(doc(), indent=2)[:-3]
    verdicts = verify_text(text, profile="standard")
    assert len(verdicts) == 1 and verdicts[0].reasons == ["malformed_document"]


def test_duplicate_keys_and_inexact_numbers() -> None:
    duplicated = json.dumps(doc())[:-1] + ', "user_request": "other"}'
    assert verify_text(duplicated, profile="standard")[0].reasons == ["malformed_document"]
    inexact = json.dumps(doc({"name": "analyze", "arguments": {"x": 12345}})).replace("12345", "0.99999999999999999999")
    verdict = verify_text(inexact, profile="standard")[0]
    assert verdict.reasons == ["invalid_arguments"]
    assert [i["keyword"] for i in verdict.checks[2].issues] == ["json"]


def test_blank_text_has_no_documents() -> None:
    assert verify_text("", profile="standard") == [] and verify_text("\n  \n", profile="standard") == []


def test_library_and_text_agree() -> None:
    documents = [doc(), doc({"name": "report"}), doc({"name": "browse"}), doc([])]
    text = "\n".join(json.dumps(d) for d in documents)
    from_text = [v.to_json() for v in verify_text(text, profile="standard")]
    direct = [verify_document(d, index=i, line=i + 1, profile="standard").to_json() for i, d in enumerate(documents)]
    assert from_text == direct


def test_render() -> None:
    out: list[str] = []
    render_verdicts(
        verify_text(json.dumps(doc({"name": "fetch", "arguments": {"year": 1}})), profile="standard"), out.append
    )
    text = "".join(out)
    assert text.startswith("document 0 (line 1): deterministic_invalid: invalid_arguments\n")
    assert "  FAIL arguments [call 0]: " in text
    assert "  warning repeated_step [call 0]: " in text
    assert text.endswith("1 document: 0 valid, 1 deterministic_invalid\n")
