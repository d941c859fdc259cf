"""Judging tool entries for ``check``: statuses, accepted documents, thresholds, table and JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_guard.reports.tools import (
    ToolsReport,
    escape,
    judge_tool,
    judge_tools,
    render_table,
    report_tools,
    tool_entries,
)

OK_TOOL = {"name": "ok", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}}
UNSUPPORTED_TOOL = {
    "name": "fmt",
    "inputSchema": {"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}},
}
MALFORMED_TOOL = {"name": "bad", "inputSchema": {"type": "object", "properties": {"c": {"type": "strng"}}}}
BOTH_TOOL = {
    "name": "both",
    "inputSchema": {"type": "object", "properties": {"c": {"type": "strng"}, "d": {"type": "string", "pattern": "x"}}},
}
DEFINITION = {
    "name": "Def",
    "version": "abcdef1",
    "input": {"parameters": [{"name": "x", "required": True, "schema": {"type": "float"}, "inferrable": False}]},
    "output": {"available_modes": ["value"]},
}
TITLED_TOOL = {"name": "titled", "inputSchema": {"type": "object", "title": "T"}}


def findings(entry: Any, profile: str = "standard") -> list[tuple[str, str, str]]:
    return [(i.kind, i.keyword, i.schema_path) for i in judge_tool(entry, profile=profile).issues]


def test_statuses() -> None:
    assert judge_tool(OK_TOOL, profile="standard").status == "supported"
    assert judge_tool(UNSUPPORTED_TOOL, profile="standard").status == "unsupported"
    assert findings(UNSUPPORTED_TOOL) == [("unsupported_capability", "format", "/properties/u/format")]
    assert judge_tool(MALFORMED_TOOL, profile="standard").status == "malformed"
    assert judge_tool(BOTH_TOOL, profile="standard").status == "malformed"  # malformed wins: the definition is at fault
    assert {f[0] for f in findings(BOTH_TOOL)} == {"validation", "unsupported_capability"}


def test_profile_reaches_the_core() -> None:
    assert judge_tool(TITLED_TOOL, profile="standard").status == "supported"
    assert judge_tool(TITLED_TOOL, profile="strict").status == "unsupported"
    assert findings(TITLED_TOOL, "strict") == [("unsupported_capability", "title", "/title")]
    assert report_tools([TITLED_TOOL], profile="strict").counts()["unsupported"] == 1
    with pytest.raises(ValueError, match="unknown profile"):
        judge_tool(TITLED_TOOL, profile="lenient")


@pytest.mark.parametrize(
    ("entry", "paths"),
    [
        ({"inputSchema": {"type": "object"}}, ["/name"]),
        ({"name": 3, "inputSchema": {"type": "object"}}, ["/name"]),
        ({"name": "", "inputSchema": {"type": "object"}}, ["/name"]),
        ({"name": "x"}, ["/inputSchema"]),
        ({}, ["/name", "/inputSchema"]),
        ("tool", [""]),
    ],
)
def test_broken_entries_are_malformed_not_fatal(entry: Any, paths: list[str]) -> None:
    report = judge_tool(entry, profile="standard")
    assert report.status == "malformed"
    assert [e.path for e in report.definition_errors] == paths


def test_schema_that_is_not_an_object_is_malformed() -> None:
    report = judge_tool({"name": "x", "inputSchema": "object"}, profile="standard")
    assert report.status == "malformed"
    assert [(i.kind, i.keyword) for i in report.issues] == [("validation", "schema")]


def test_root_without_type_is_supported_though_the_sdk_would_reject_it() -> None:
    assert judge_tool(
        {"name": "x", "inputSchema": {"properties": {"a": {"type": "string"}}}}, profile="standard"
    ).supported


def test_tool_definition_entry() -> None:
    report = judge_tool(DEFINITION, profile="standard")
    assert report.source == "tool-definition"
    assert report.status == "supported"
    assert report.input_schema == {
        "type": "object",
        "properties": {"x": {"type": "number"}},
        "required": ["x"],
        "additionalProperties": False,
    }
    assert [n.note for n in report.notes] == ["not_inferrable"]
    broken = judge_tool({**DEFINITION, "version": "zz"}, profile="standard")
    assert broken.status == "malformed" and broken.name == "Def"
    assert [e.path for e in broken.definition_errors] == ["/version"]
    assert "malformed definition: must match the pattern `^[a-f0-9]{7,40}$` (pattern)" in render_table(
        report_tools([{**DEFINITION, "version": "zz"}], profile="standard")
    )


def test_duplicate_names_are_unsupported_both() -> None:
    reports = judge_tools([OK_TOOL, OK_TOOL, MALFORMED_TOOL, MALFORMED_TOOL, UNSUPPORTED_TOOL], profile="standard")
    assert [r.status for r in reports] == ["unsupported", "unsupported", "malformed", "malformed", "unsupported"]
    assert [n.note for n in reports[0].notes] == ["duplicate_name"]
    assert "2 tools" in reports[0].notes[0].message
    assert reports[4].notes == ()


@pytest.mark.parametrize(
    ("document", "count"),
    [
        ({"tools": [OK_TOOL, UNSUPPORTED_TOOL], "nextCursor": None, "_meta": {}}, 2),
        ([OK_TOOL, DEFINITION], 2),
        (DEFINITION, 1),
        (OK_TOOL, 1),
        ({"tools": []}, 0),
    ],
    ids=["tools-list-result", "bare-list", "definition", "one-tool", "empty"],
)
def test_accepted_documents(document: Any, count: int) -> None:
    assert len(tool_entries(document)) == count


@pytest.mark.parametrize("document", [{"tools": {}}, {"type": "object"}, "tools", 3, None])
def test_refused_documents(document: Any) -> None:
    with pytest.raises(ValueError, match=r"expected|`tools` must be an array"):
        tool_entries(document)


@pytest.mark.parametrize(
    ("tools", "unsupported", "malformed"),
    [
        ([OK_TOOL], False, False),
        ([OK_TOOL, UNSUPPORTED_TOOL], True, False),
        ([OK_TOOL, MALFORMED_TOOL], True, True),
        ([], False, False),
    ],
)
def test_fail_on(tools: list[Any], unsupported: bool, malformed: bool) -> None:
    report = report_tools(tools, profile="standard")
    assert report.fails("unsupported") is unsupported
    assert report.fails("malformed") is malformed
    assert report.fails("never") is False
    with pytest.raises(ValueError, match="unknown --fail-on"):
        report.fails("sometimes")


def test_json_report_shape() -> None:
    report = report_tools([OK_TOOL, UNSUPPORTED_TOOL, MALFORMED_TOOL, DEFINITION], source="file", profile="standard")
    data = json.loads(json.dumps(report.to_json("malformed")))
    assert data["summary"] == {"total": 4, "supported": 2, "unsupported": 1, "malformed": 1}
    assert data["fail_on"] == "malformed" and data["failed"] is True
    assert [t["status"] for t in data["tools"]] == ["supported", "unsupported", "malformed", "supported"]
    fmt = data["tools"][1]
    assert set(fmt) == {"name", "status", "supported", "source", "issues", "definition_errors", "notes"}
    assert fmt["issues"][0]["schema_path"] == "/properties/u/format"
    assert data["tools"][3]["input_schema"]["properties"] == {"x": {"type": "number"}}
    assert "fail_on" not in report.to_json()


def test_table_lists_every_finding_with_pointer_and_a_summary() -> None:
    text = render_table(report_tools([OK_TOOL, BOTH_TOOL, DEFINITION, {"inputSchema": {}}], profile="standard"))
    lines = text.splitlines()
    assert lines[0].split() == ["TOOL", "STATUS", "KEYWORD", "POINTER", "DETAIL"]
    assert lines[1].split() == ["ok", "supported"]
    both = [line for line in lines if "/properties/" in line]
    assert any("type" in line and "/properties/c/type" in line and "malformed:" in line for line in both)
    assert any("pattern" in line and "/properties/d/pattern" in line and "unsupported:" in line for line in both)
    assert any(line.startswith("(tool #3, no name)") and "malformed tool: is required" in line for line in lines)
    assert "note: Def: parameter `x` is not inferrable" in text
    assert lines[-1] == "4 tools: 2 supported, 0 unsupported, 2 malformed (profile standard)"


def test_tools_sharing_a_name_have_a_finding_row_each_and_their_note_once() -> None:
    """Red team, stop 33: the note was printed once per tool, and their rows had empty KEYWORD and POINTER."""
    text = render_table(report_tools([OK_TOOL, OK_TOOL, UNSUPPORTED_TOOL], profile="standard"))
    lines = text.splitlines()
    row = ["ok", "unsupported", "name", "/name", "unsupported:", "another", "tool", "is", "listed", "under", "this"]
    assert [line.split()[:11] for line in lines[1:3]] == [row, row]
    notes = [line for line in lines if line.startswith("note: ")]
    assert notes == [
        "note: ok: 2 tools are listed under the name `ok`: the guard refuses calls to all of them, since it "
        "cannot know which one the server would run"
    ]


def test_table_escapes_control_characters() -> None:
    evil = {"name": "x\x1b[31m\nFAKE supported", "inputSchema": {"type": "object", "\x07bell": 1}}
    text = render_table(report_tools([evil], profile="standard"))
    assert "\x1b" not in text and "\x07" not in text
    assert "x\\x1b[31m\\x0aFAKE supported" in text
    assert escape("a\u0085b\x7f") == "a\\u0085b\\x7f"


def test_summary_grammar() -> None:
    assert ToolsReport(judge_tools([OK_TOOL], profile="standard"), "strict").summary().startswith("1 tool: 1 supported")


def test_extended_annotation_formats_are_noted_not_silent() -> None:
    """E4: a format 2020-12 does not define constrains nothing; the report says so in its notes."""
    from mcp_guard.reports.tools import judge_tool

    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "format": "path"}}}}
    report = judge_tool(tool, profile="extended")
    assert report.status == "supported"
    assert [(n.note, n.schema_path) for n in report.notes] == [("annotation", "/properties/p/format")]
    assert judge_tool(tool, profile="standard").notes == ()
