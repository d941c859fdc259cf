"""Tool definitions (Arcade preview format): validated against the format's own schema, converted into the subset."""

from __future__ import annotations

import copy
import hashlib
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from mcp_guard import classify
from mcp_guard.reports.documents import FieldError, loads
from mcp_guard.reports.tool_definitions import (
    AMENDMENT,
    SCHEMA_RESOURCE,
    OAuth2,
    ToolDefinition,
    definition_notes,
    definition_schema,
    is_tool_definition,
    parse_tool_definition,
    published_schema,
    to_mcp_tool,
)

SHARED_SCHEMA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / SCHEMA_RESOURCE
SHARED_SCHEMA_SHA256 = "4427f4c1027ec5673dea14fd9809354ffe4598b7ce9d8d54e88c3568f2c84f18"
"""SHA-256 of ../shared/data/arcade-tool-definition.schema.jsonc as handed out (2026-12-03)."""

GOOD: dict[str, Any] = {
    "$schema": "https://example.com/tool-definition.json",
    "name": "SendEmail",
    "description": "Send an email.",
    "version": "0123abcdef",
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
    "output": {"available_modes": ["value", "error"], "value": {"description": "Id.", "schema": {"type": "string"}}},
    "requirements": {"authorization": {"oauth2": {"url": "https://auth.example.com", "scope": "mail.send"}}},
}


def good() -> dict[str, Any]:
    return copy.deepcopy(GOOD)


def parsed(document: dict[str, Any]) -> ToolDefinition:
    result = parse_tool_definition(document)
    assert isinstance(result, ToolDefinition), result
    return result


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


# --- the schema is the package's, as published, with one amendment ------------------------------


def test_the_packaged_schema_is_the_shared_one() -> None:
    """The packaged file is the one handed out in ../shared, byte for byte (its digest pinned: a clone checks too)."""
    packaged = files("mcp_guard").joinpath("data", SCHEMA_RESOURCE).read_bytes()
    assert hashlib.sha256(packaged).hexdigest() == SHARED_SCHEMA_SHA256
    if SHARED_SCHEMA.is_file():  # beside CI's clone
        assert SHARED_SCHEMA.read_bytes() == packaged
        assert published_schema() == loads(SHARED_SCHEMA.read_text(encoding="utf-8"), comments=True)


def test_the_amendment_is_the_only_difference_from_the_letter() -> None:
    letter, read = published_schema(), definition_schema()
    at, keyword, reading = AMENDMENT
    assert at == "/$defs/value_schema" and letter["$defs"]["value_schema"][keyword] is False
    assert reading not in letter["$defs"]["value_schema"]
    read["$defs"]["value_schema"][keyword] = read["$defs"]["value_schema"].pop(reading)
    assert read == letter


def test_the_letter_refuses_every_enum_and_the_amended_schema_only_a_non_string_one() -> None:
    """docs/tool-definitions.md: `enum` under `then` beside `additionalProperties: false` is dead letter."""
    from mcp_guard import compile

    letter = compile(published_schema(), profile="extended")
    read = compile(definition_schema(), profile="extended")
    assert letter.report.ok and read.report.ok
    with_enum = good()
    without_enum = good()
    del without_enum["input"]["parameters"][4]["schema"]["enum"]
    assert letter.check(without_enum).ok and read.check(without_enum).ok
    assert [(i.keyword, i.instance_path) for i in letter.check(with_enum).issues] == [
        ("additionalProperties", "/input/parameters/4/schema/enum")
    ]
    assert read.check(with_enum).ok
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    assert not jsonschema_rs.Draft202012Validator(published_schema()).is_valid(with_enum)
    assert jsonschema_rs.Draft202012Validator(definition_schema()).is_valid(with_enum)


# --- accepted, as the schema says ---------------------------------------------------------------

ACCEPTED: list[tuple[str, Any]] = [
    ("/output/value/description", "The new message's id."),  # allowed by the schema (was refused)
    ("/output/value", ...),
    ("/output/available_modes", ["value", "error", "null", "artifact", "requires_authorization"]),
    ("/requirements/authorization", "none"),
    ("/requirements/authorization", "token"),
    ("/requirements/authorization", {"oauth2": {"url": "https://a.example"}}),
    ("/requirements/authorization", {"oauth2": {"url": "urn:example:auth", "scope": "a b"}}),
    ("/requirements/authorization", ...),
    ("/requirements/secrets", [{"key": "API_KEY"}]),  # the schema leaves `requirements` open
    ("/requirements", ...),
    ("/description", ...),
    ("/$schema", ...),
    ("/version", "a" * 40),
    ("/input/parameters/0/description", ...),
    ("/input/parameters/0/name", ""),  # the schema allows it, and a property may be named ""
    ("/input/parameters/4/schema/enum", []),
]


@pytest.mark.parametrize(("path", "value"), ACCEPTED, ids=[f"{a[0]}={a[1]!r}" for a in ACCEPTED])
def test_what_the_schema_allows_is_accepted(path: str, value: Any) -> None:
    document = good()
    _set(document, path, value)
    parsed(document)


def test_the_dataclasses_hold_the_document() -> None:
    definition = parsed(good())
    assert definition.version == "0123abcdef" and definition.schema_uri == GOOD["$schema"]
    assert definition.output.available_modes == ("value", "error")
    assert definition.output.value is not None and definition.output.value.description == "Id."
    assert definition.requirements is not None
    assert definition.requirements.authorization == OAuth2("https://auth.example.com", "mail.send")
    assert definition.input.parameters[4].value_schema.enum == ("warm", "dry")
    assert [p.inferrable for p in definition.input.parameters] == [True] * 5 + [False]


# --- refused, field by field --------------------------------------------------------------------

MALFORMED: list[tuple[str, Any, str, str]] = [
    # the cases issue 13 names, each once accepted
    ("/output", ..., "/output", "is required"),
    ("/input/parameters", [], "/input/parameters", "must have at least 1 item (minItems)"),
    ("/version", "0123ABCDEF", "/version", "must match the pattern `^[a-f0-9]{7,40}$` (pattern)"),
    ("/output/description", "Id.", "/output/description", "is not allowed"),
    (
        "/requirements/authorization",
        {"oauth2": {"url": "https://a.example", "scope": ["a"]}},
        "/requirements/authorization/oauth2/scope",
        "must be a string, not array (type)",
    ),
    (
        "/requirements/authorization",
        {"oauth2": {"url": "not a uri"}},
        "/requirements/authorization/oauth2/url",
        "must be a valid uri (format)",
    ),
    ("/$schema", "no scheme", "/$schema", "must be a valid uri (format)"),
    # the rest of the schema
    ("/name", ..., "/name", "is required"),
    ("/name", 7, "/name", "must be a string, not integer (type)"),
    ("/description", ["x"], "/description", "must be a string"),
    ("/version", "abc", "/version", "(pattern)"),
    ("/version", "g" * 7, "/version", "(pattern)"),
    ("/version", "a" * 41, "/version", "(pattern)"),
    ("/version", ..., "/version", "is required"),
    ("/input", ..., "/input", "is required"),
    ("/input/parameters", {}, "/input/parameters", "must be an array"),
    ("/input/parameters/0/required", "true", "/input/parameters/0/required", "must be a boolean"),
    ("/input/parameters/0/required", ..., "/input/parameters/0/required", "is required"),
    ("/input/parameters/0/name", ..., "/input/parameters/0/name", "is required"),
    ("/input/parameters/0/schema", ..., "/input/parameters/0/schema", "is required"),
    ("/input/parameters/0/schema/type", "number", "/input/parameters/0/schema/type", "(enum)"),
    ("/input/parameters/0/schema/type", ..., "/input/parameters/0/schema/type", "is required"),
    ("/input/parameters/0/schema/enum", [1], "/input/parameters/0/schema/enum/0", "must be a string"),
    ("/input/parameters/0/schema/enum", None, "/input/parameters/0/schema/enum", "must be an array"),
    ("/input/parameters/1/schema/enum", ["1"], "/input/parameters/1/schema/enum", "only with type `string`"),
    ("/input/parameters/0/schema/default", "x", "/input/parameters/0/schema/default", "is not allowed"),
    ("/input/parameters/0/inferrable", 0, "/input/parameters/0/inferrable", "must be a boolean"),
    ("/input/parameters/0/value_schema", {}, "/input/parameters/0/value_schema", "is not allowed"),
    ("/input/extra", 1, "/input/extra", "is not allowed"),
    ("/output/available_modes", ..., "/output/available_modes", "is required"),
    ("/output/available_modes", [], "/output/available_modes", "at least 1 item"),
    ("/output/available_modes", ["stream"], "/output/available_modes/0", "(enum)"),
    ("/output/value", {"schema": {"type": "tuple"}}, "/output/value/schema/type", "(enum)"),
    ("/output/value", {"description": "x"}, "/output/value/schema", "is required"),
    ("/requirements/authorization", "oauth", "/requirements/authorization", "(enum)"),
    ("/requirements/authorization", None, "/requirements/authorization", "oneOf"),
    ("/requirements/authorization", {"oauth2": {}}, "/requirements/authorization/oauth2/url", "is required"),
    (
        "/requirements/authorization",
        {"oauth2": {"url": "github.com/login"}},
        "/requirements/authorization/oauth2/url",
        "(format)",
    ),
    (
        "/requirements/authorization",
        {"oauth2": {"url": "https://a.example", "x": 1}},
        "/requirements/authorization/oauth2/x",
        "is not allowed",
    ),
    ("/requirements/authorization", {}, "/requirements/authorization/oauth2", "is required"),
    ("/toolkit", {}, "/toolkit", "is not allowed"),
    # the guard's own rules
    ("/name", "", "/name", "must not be empty"),
    ("/input/parameters/1/name", "to", "/input/parameters/1/name", "repeats the name of /input/parameters/0"),
]


@pytest.mark.parametrize(("path", "value", "where", "why"), MALFORMED, ids=[f"{m[0]}={m[1]!r}" for m in MALFORMED])
def test_malformed_documents_name_the_field_and_the_reason(path: str, value: Any, where: str, why: str) -> None:
    document = good()
    _set(document, path, value)
    result = parse_tool_definition(document)
    assert isinstance(result, list)
    assert [e.path for e in result] == [where], result
    assert why in result[0].message


SECRET = "sk-live-0123456789"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("/version", SECRET),
        ("/input/parameters/0/schema/type", SECRET),
        ("/output/available_modes/0", SECRET),
        ("/requirements/authorization", SECRET),
        ("/requirements/authorization", {"oauth2": {"url": SECRET, "scope": [SECRET]}}),
        ("/toolkit", SECRET),
    ],
)
def test_messages_never_quote_a_value_of_the_document(path: str, value: Any) -> None:
    document = good()
    _set(document, path, value)
    result = parse_tool_definition(document)
    assert isinstance(result, list) and result
    assert all(SECRET not in e.message and SECRET not in e.path for e in result), result


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


def _verdict_cases() -> list[tuple[str, dict[str, Any], bool]]:
    cases = []
    for path, value in ACCEPTED:
        document = good()
        _set(document, path, value)
        cases.append((f"accepted {path}", document, True))
    for path, value, _, why in MALFORMED:
        if "the guard's rule" in why or why.startswith(("must not be empty", "repeats")):
            continue  # the guard's own rules: no schema says them
        document = good()
        _set(document, path, value)
        cases.append((f"refused {path}={value!r}", document, False))
    return cases


def test_the_verdicts_agree_with_jsonschema_rs_on_the_same_schema() -> None:
    """A second implementation of 2020-12 (formats asserted) on the amended schema agrees on every case."""
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    oracle = jsonschema_rs.Draft202012Validator(definition_schema(), validate_formats=True)
    for label, document, valid in _verdict_cases():
        assert oracle.is_valid(document) is valid, label
        assert isinstance(parse_tool_definition(document), ToolDefinition) is valid, label


# --- conversion ---------------------------------------------------------------------------------


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
    for profile in ("extended", "standard", "strict"):
        assert classify(tool["inputSchema"], profile=profile).ok


def _with_json_parameter() -> ToolDefinition:
    document = good()
    document["input"]["parameters"].append(
        {"name": "payload", "required": False, "description": "Anything.", "schema": {"type": "json"}}
    )
    return parsed(document)


def test_json_parameter_becomes_untyped_and_standard_refuses_the_tool_at_that_parameter() -> None:
    definition = _with_json_parameter()
    schema = to_mcp_tool(definition)["inputSchema"]
    assert schema["properties"]["payload"] == {"description": "Anything."}
    report = classify(schema, profile="standard")
    assert [(i.kind, i.keyword, i.schema_path) for i in report.issues] == [
        ("unsupported_capability", "type", "/properties/payload")
    ]
    assert classify(schema, profile="extended").ok


def test_the_json_parameter_note_is_worded_for_the_profile_that_judged() -> None:
    definition = _with_json_parameter()
    notes = {
        profile: [n for n in definition_notes(definition, profile=profile) if n.note == "json_parameter"]
        for profile in ("extended", "standard", "strict")
    }
    for profile, found in notes.items():
        assert [(n.parameter, n.path, n.schema_path) for n in found] == [
            ("payload", "/input/parameters/6", "/properties/payload")
        ]
        assert f"the {profile} profile" in found[0].message
    assert "accepts any JSON value there" in notes["extended"][0].message
    assert "refused" not in notes["extended"][0].message
    for profile in ("standard", "strict"):
        assert "cannot enforce that, so calls to this tool are refused" in notes[profile][0].message
    assert definition_notes(definition) == definition_notes(definition, profile="extended")  # the default


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


def test_no_required_parameter_leaves_required_out_and_a_minimal_document_is_valid() -> None:
    document = {
        "name": "Ping",
        "version": "abcdef0",
        "input": {"parameters": [{"name": "x", "required": False, "schema": {"type": "string"}}]},
        "output": {"available_modes": ["null"]},
    }
    tool = to_mcp_tool(parsed(document))
    assert tool == {
        "name": "Ping",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": False},
    }


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
