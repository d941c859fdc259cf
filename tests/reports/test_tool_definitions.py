"""Tool definitions (Arcade preview format): validation with precise errors, conversion into the subset."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mcp_guard import classify
from mcp_guard.reports.documents import FieldError
from mcp_guard.reports.tool_definitions import (
    ToolDefinition,
    definition_notes,
    is_tool_definition,
    parse_tool_definition,
    to_mcp_tool,
)

GOOD: dict[str, Any] = {
    "$schema": "https://example.com/tool-definition.json",
    "name": "SendEmail",
    "description": "Send an email.",
    "version": "0123abcdEF",
    "input": {
        "parameters": [
            {"name": "to", "required": True, "description": "Recipient.", "schema": {"type": "string"}},
            {"name": "count", "required": False, "schema": {"type": "integer"}},
            {"name": "ratio", "required": True, "schema": {"type": "float"}, "inferrable": True},
            {"name": "urgent", "required": False, "schema": {"type": "boolean"}},
            {"name": "tone", "required": False, "schema": {"type": "string", "enum": ["warm", "dry"]}},
            {"name": "account", "required": True, "schema": {"type": "string"}, "inferrable": False},
        ]
    },
    "output": {"available_modes": ["value", "error"], "description": "Id.", "value": {"schema": {"type": "string"}}},
    "requirements": {"authorization": {"oauth2": {"url": "https://auth.example.com", "scope": ["mail.send"]}}},
}


def good() -> dict[str, Any]:
    return copy.deepcopy(GOOD)


def parsed(document: dict[str, Any]) -> ToolDefinition:
    result = parse_tool_definition(document)
    assert isinstance(result, ToolDefinition), result
    return result


def test_conversion_is_in_the_subset_and_supported() -> None:
    tool = to_mcp_tool(parsed(good()))
    assert tool == {
        "name": "SendEmail",
        "description": "Send an email.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "to": {"type": "string", "description": "Recipient."},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "urgent": {"type": "boolean"},
                "tone": {"type": "string", "enum": ["warm", "dry"]},
                "account": {"type": "string"},
            },
            "required": ["to", "ratio", "account"],
            "additionalProperties": False,
        },
    }
    for profile in ("standard", "strict"):
        assert classify(tool["inputSchema"], profile=profile).ok


def test_json_parameter_becomes_untyped_and_the_tool_unsupported_at_that_parameter() -> None:
    document = good()
    document["input"]["parameters"].append(
        {"name": "payload", "required": False, "description": "Anything.", "schema": {"type": "json"}}
    )
    definition = parsed(document)
    schema = to_mcp_tool(definition)["inputSchema"]
    assert schema["properties"]["payload"] == {"description": "Anything."}
    report = classify(schema, profile="standard")
    assert [(i.kind, i.keyword, i.schema_path) for i in report.issues] == [
        ("unsupported_capability", "type", "/properties/payload")
    ]
    notes = [(n.note, n.parameter, n.path, n.schema_path) for n in definition_notes(definition)]
    assert ("json_parameter", "payload", "/input/parameters/6", "/properties/payload") in notes


def test_json_parameter_without_description_is_an_empty_schema() -> None:
    document = good()
    document["input"]["parameters"] = [{"name": "x", "required": True, "schema": {"type": "json"}}]
    schema = to_mcp_tool(parsed(document))["inputSchema"]
    assert schema == {"type": "object", "properties": {"x": {}}, "required": ["x"], "additionalProperties": False}


def test_not_inferrable_parameters_stay_and_are_flagged() -> None:
    definition = parsed(good())
    assert "account" in to_mcp_tool(definition)["inputSchema"]["properties"]
    notes = [(n.note, n.parameter, n.path) for n in definition_notes(definition)]
    assert notes == [("not_inferrable", "account", "/input/parameters/5")]


def test_no_required_parameter_leaves_required_out_and_minimal_document_is_valid() -> None:
    document = {"name": "Ping", "version": "abcdef0", "input": {"parameters": []}}
    tool = to_mcp_tool(parsed(document))
    assert tool == {"name": "Ping", "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False}}


@pytest.mark.parametrize(
    ("authorization"),
    ["none", "token", None, {"oauth2": {"url": "https://a"}}, {"oauth2": {"url": "https://a", "scope": "a b"}}],
)
def test_authorization_forms(authorization: Any) -> None:
    document = good()
    document["requirements"] = {"authorization": authorization}
    parsed(document)


def _set(document: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, for value ``...``, delete) the value at a slash path of plain keys and indices."""
    parts = [int(p) if p.isdigit() else p for p in path.strip("/").split("/")]
    target: Any = document
    for part in parts[:-1]:
        target = target[part]
    if value is ...:
        del target[parts[-1]]
    else:
        target[parts[-1]] = value


MALFORMED: list[tuple[str, Any, str, str]] = [
    ("/name", ..., "/name", "is required"),
    ("/name", "", "/name", "must have at least 1 character"),
    ("/name", 7, "/name", "must be a string"),
    ("/description", ["x"], "/description", "must be a string"),
    ("/version", "abc", "/version", "must match pattern"),
    ("/version", "g" * 7, "/version", "must match pattern"),
    ("/version", "a" * 41, "/version", "must match pattern"),
    ("/version", ..., "/version", "is required"),
    ("/input", ..., "/input", "is required"),
    ("/input/parameters", {}, "/input/parameters", "must be an array"),
    ("/input/parameters/0/required", "true", "/input/parameters/0/required", "must be a boolean"),
    ("/input/parameters/0/required", ..., "/input/parameters/0/required", "is required"),
    ("/input/parameters/0/name", ..., "/input/parameters/0/name", "is required"),
    ("/input/parameters/0/schema", ..., "/input/parameters/0/schema", "is required"),
    ("/input/parameters/0/schema/type", "number", "/input/parameters/0/schema/type", "must be 'string'"),
    ("/input/parameters/0/schema/type", "array", "/input/parameters/0/schema/type", "must be 'string'"),
    ("/input/parameters/0/schema/enum", [1], "/input/parameters/0/schema/enum/0", "must be a string"),
    ("/input/parameters/1/schema/enum", ["1"], "/input/parameters/1/schema", "only with type string"),
    ("/input/parameters/0/inferrable", 0, "/input/parameters/0/inferrable", "must be a boolean"),
    ("/input/parameters/0/value_schema", {}, "/input/parameters/0/value_schema", "is not a field"),
    ("/input/parameters/1/name", "to", "/input/parameters", "two parameters are named `to`"),
    ("/input/extra", 1, "/input/extra", "is not a field"),
    ("/output/available_modes", [], "/output/available_modes", "at least 1 item"),
    ("/output/available_modes", ["stream"], "/output/available_modes/0", "must be 'value'"),
    ("/output/value", {"schema": {"type": "tuple"}}, "/output/value/schema/type", "must be 'string'"),
    ("/requirements/authorization", "oauth", "/requirements/authorization", "must be 'none' or 'token'"),
    ("/requirements/authorization", {"oauth2": {}}, "/requirements/authorization/oauth2/url", "is required"),
    ("/requirements/authorization", {"oauth2": {"url": "u", "x": 1}}, "/requirements/authorization/oauth2/x", "is not"),
    ("/requirements/secrets", [], "/requirements/secrets", "is not a field"),
    ("/toolkit", {}, "/toolkit", "is not a field of this format"),
]


@pytest.mark.parametrize(("path", "value", "where", "why"), MALFORMED, ids=[f"{m[0]}={m[1]!r}" for m in MALFORMED])
def test_malformed_documents_name_the_field_and_the_reason(path: str, value: Any, where: str, why: str) -> None:
    document = good()
    _set(document, path, value)
    result = parse_tool_definition(document)
    assert isinstance(result, list)
    assert len(result) == 1, result
    assert result[0].path == where
    assert why in result[0].message


def test_every_problem_is_reported_at_once() -> None:
    document = good()
    document["version"] = "x"
    document["input"]["parameters"][0]["required"] = "yes"
    document["extra"] = True
    result = parse_tool_definition(document)
    assert isinstance(result, list)
    assert [e.path for e in result] == ["/version", "/input/parameters/0/required", "/extra"]


def test_not_an_object() -> None:
    assert parse_tool_definition([]) == [FieldError("", "a tool definition must be a JSON object")]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"name": "a", "input": {}}, True),
        ({"input": 1}, True),
        ({"name": "a", "inputSchema": {}, "input": {}}, False),
        ({"type": "object", "properties": {"input": {}}}, False),
        ({"type": "object", "input": {}}, False),
        ({"name": "a"}, False),
        ([], False),
    ],
)
def test_detection(value: Any, expected: bool) -> None:
    assert is_tool_definition(value) is expected
