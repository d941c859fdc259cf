"""Tool definitions in the Arcade preview format: validation against the format's schema, conversion to an MCP tool.

The format is defined by Arcade's preview ``tool_definition.schema.jsonc`` (JSON Schema
2020-12). The package ships it as published (``mcp_guard/data/``, comments stripped at load:
:func:`published_schema`), and :func:`parse_tool_definition` validates a definition against it
with the guard's own ``extended`` validator, so a definition is valid exactly when the schema
says so, except in the one place where the schema's letter defeats its own comment (below).
What the schema says, in short::

    {
      "$schema": "...",                        optional string, a URI
      "name": "SendEmail",                     required string
      "description": "...",                    optional string
      "version": "3f2a9c1",                    required, ^[a-f0-9]{7,40}$ (lower case)
      "input": {"parameters": [                required, at least one parameter
        {"name": "to",                         required string
         "required": true,                     required boolean
         "description": "...",                 optional string
         "schema": {"type": "string",          required: string | integer | float | boolean | json
                    "enum": ["a", "b"]},       optional array of strings, with type string only
         "inferrable": true}                   optional boolean, default true
      ]},
      "output": {                              required
        "available_modes": ["value", "error"], required, at least one of value | error | null |
                                               artifact | requires_authorization
        "value": {"description": "...",        optional; its description optional,
                  "schema": {...}}},           its schema (as above) required
      "requirements": {                        optional; keys other than authorization are
                                               allowed (the schema leaves this object open)
        "authorization": "none" | "token" | {"oauth2": {"url": URI, "scope": "a b"}}
      }
    }

No other keys are allowed (``additionalProperties: false``), and nothing is coerced (a
``"true"`` string is not a boolean).

**The amendment** (docs/tool-definitions.md): ``$defs/value_schema`` declares only ``type`` in
its ``properties`` beside ``additionalProperties: false``, and puts ``enum`` under ``then``
with the comment "String values can optionally be constrained to a known list". An
``additionalProperties`` sees only its sibling ``properties``, so to the letter every
``enum`` is refused and the ``then`` can never take effect. The guard reads that one keyword
as ``unevaluatedProperties: false`` (:data:`AMENDMENT`), which 2020-12 defines to see what
``then`` evaluated: an ``enum`` (an array of strings) is accepted with ``type: "string"`` and
refused with any other type, as the comment says; everything else is the letter.

**The guard's own rules**, checked once the schema passes, because the conversion needs them:
the tool's ``name`` is not empty (an MCP tool is called by its name), and no two parameters
share a name (each becomes one property of the ``inputSchema``; one would be lost).

Every problem is a :class:`~.documents.FieldError`: the JSON Pointer of the field, and what
the schema wanted with the keyword that said so (``must match the pattern `^[a-f0-9]{7,40}$`
(pattern)``); never a value of the document.

:func:`to_mcp_tool` converts a valid definition into an MCP tool whose ``inputSchema`` is
``{"type": "object", "properties": {...}, "required": [...], "additionalProperties": false}``;
``float`` becomes ``number``, string enums are kept, each parameter's description is kept. A
``json`` parameter (any JSON value) becomes an untyped property (``{}`` with its
description); it is never dropped. Whether the profile enforces that is the profile's call
(``extended`` does; ``standard`` and ``strict`` classify the tool unsupported at that
property), and :func:`definition_notes` says which, along with the parameters whose value
must come from the host (``inferrable: false``).

This module reads its packaged schema and does no other I/O; it does not classify tools (the
schema core does).
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Final, Literal, cast

from ..core import DEFAULT_PROFILE, Compiled, Issue, classify, compile
from ..core.json_values import json_type_name, pointer
from .documents import DocumentError, FieldError, loads

__all__ = [
    "AMENDMENT",
    "SCHEMA_RESOURCE",
    "DefinitionNote",
    "Input",
    "OAuth2",
    "Output",
    "OutputValue",
    "Parameter",
    "Requirements",
    "ToolDefinition",
    "ValueSchema",
    "definition_notes",
    "definition_schema",
    "is_tool_definition",
    "parse_tool_definition",
    "published_schema",
    "to_mcp_tool",
]

ValueType = Literal["string", "integer", "float", "boolean", "json"]
OutputMode = Literal["value", "error", "null", "artifact", "requires_authorization"]

SCHEMA_RESOURCE: Final = "arcade-tool-definition.schema.jsonc"
"""The packaged schema's file name in ``mcp_guard/data/`` (a copy of ``../shared/data/``'s)."""

AMENDMENT: Final = ("/$defs/value_schema", "additionalProperties", "unevaluatedProperties")
"""The one change the guard makes to the published schema: at this pointer, this keyword is
read as that one (same value, ``false``), so the ``enum`` its ``then`` allows is not refused."""

_JSON_TYPES: dict[str, str] = {"string": "string", "integer": "integer", "float": "number", "boolean": "boolean"}
"""The definition's value types and their JSON Schema ``type``; ``json`` has none."""


@dataclass(frozen=True, slots=True)
class ValueSchema:
    """A parameter's (or the output value's) schema (``$defs/value_schema``): its type, and for
    ``string`` an optional list of the allowed strings (``None``: any string)."""

    type: ValueType
    enum: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Parameter:
    """One input parameter (``input.parameters[]``); ``inferrable`` defaults to true."""

    name: str
    required: bool
    value_schema: ValueSchema
    description: str | None = None
    inferrable: bool = True


@dataclass(frozen=True, slots=True)
class Input:
    """The tool's input: its parameters, in document order, names unique (the guard's rule)."""

    parameters: tuple[Parameter, ...]


@dataclass(frozen=True, slots=True)
class OutputValue:
    """``output.value``: the schema of the value the tool returns, and its description."""

    value_schema: ValueSchema
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Output:
    """What the tool may return: at least one mode, and optionally the value's schema."""

    available_modes: tuple[OutputMode, ...]
    value: OutputValue | None = None


@dataclass(frozen=True, slots=True)
class OAuth2:
    """OAuth 2.0 authorization: the provider's ``url`` (a URI) and the ``scope`` (one string)."""

    url: str
    scope: str | None = None


@dataclass(frozen=True, slots=True)
class Requirements:
    """What the tool needs before it runs: ``"none"``, ``"token"``, OAuth 2.0, or not said (``None``)."""

    authorization: Literal["none", "token"] | OAuth2 | None = None


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A valid tool definition document (see the module docstring for the format)."""

    name: str
    version: str
    input: Input
    output: Output
    description: str | None = None
    schema_uri: str | None = None
    requirements: Requirements | None = None


def published_schema() -> dict[str, Any]:
    """The packaged tool-definition schema as published (comments stripped), a fresh copy each call.

    Raises:
        DocumentError: the packaged file is missing or not JSON (a broken installation).
    """
    return copy.deepcopy(_published())


def definition_schema() -> dict[str, Any]:
    """The schema the guard validates definitions against: :func:`published_schema` with
    :data:`AMENDMENT` applied (a fresh copy each call)."""
    schema = published_schema()
    at, letter, reading = AMENDMENT
    node = _resolve(schema, at)
    node[reading] = node.pop(letter)
    return schema


@functools.cache
def _published() -> dict[str, Any]:
    try:
        text = files("mcp_guard").joinpath("data", SCHEMA_RESOURCE).read_text(encoding="utf-8")
    except OSError as exc:
        raise DocumentError(f"the packaged {SCHEMA_RESOURCE} cannot be read ({exc.strerror})") from None
    return cast(dict[str, Any], loads(text, comments=True))


@functools.cache
def _validator() -> Compiled:
    """The definition schema compiled by the ``extended`` profile (its reference validator)."""
    compiled = compile(definition_schema(), profile="extended")
    if not compiled.report.ok:  # pragma: no cover - a test holds the packaged schema supported
        raise DocumentError(f"the packaged {SCHEMA_RESOURCE} is not supported by the extended profile")
    return compiled


def is_tool_definition(value: Any) -> bool:
    """True when a JSON value looks like a tool definition rather than an MCP tool or a schema.

    The test: an object with an ``input`` key and no ``inputSchema``, ``type`` or
    ``properties`` key. A value that looks like one but is malformed is still a definition
    (:func:`parse_tool_definition` then says what is wrong).
    """
    return (
        type(value) is dict
        and "input" in value
        and "inputSchema" not in value
        and "type" not in value
        and "properties" not in value
    )


def parse_tool_definition(value: Any) -> ToolDefinition | list[FieldError]:
    """Validate a tool definition document (a parsed JSON value) against :func:`definition_schema`.

    Returns:
        The :class:`ToolDefinition`, or every problem found as :class:`FieldError` values (JSON
        Pointer into the document, and the reason with its keyword), in the schema's order;
        the guard's own rules (module docstring) only once the schema passes.

    Raises:
        TypeError: a Python value that is not JSON (as the schema core raises).
    """
    if type(value) is not dict:
        return [FieldError("", "a tool definition must be a JSON object")]
    issues = _validator().check(value).issues
    if issues:
        return [error for issue in issues for error in _explained(issue, value)]
    errors = _guard_rules(value)
    return errors or _definition(value)


def _guard_rules(document: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    if not document["name"]:
        errors.append(FieldError("/name", "must not be empty: an MCP tool is called by its name (the guard's rule)"))
    first: dict[str, int] = {}
    for index, parameter in enumerate(document["input"]["parameters"]):
        earlier = first.setdefault(parameter["name"], index)
        if earlier != index:
            errors.append(
                FieldError(
                    pointer(("input", "parameters", index, "name")),
                    f"repeats the name of {pointer(('input', 'parameters', earlier))}: each parameter becomes one "
                    "property of the tool's inputSchema (the guard's rule)",
                )
            )
    return errors


def _value_schema(value: dict[str, Any]) -> ValueSchema:
    enum = value.get("enum")
    return ValueSchema(value["type"], None if enum is None else tuple(enum))


def _definition(document: dict[str, Any]) -> ToolDefinition:
    """The dataclasses of a document the schema and the guard's rules passed."""
    parameters = tuple(
        Parameter(p["name"], p["required"], _value_schema(p["schema"]), p.get("description"), p.get("inferrable", True))
        for p in document["input"]["parameters"]
    )
    output = document["output"]
    value = output.get("value")
    requirements = document.get("requirements")
    authorization: Any = None if requirements is None else requirements.get("authorization")
    if type(authorization) is dict:
        oauth2 = authorization["oauth2"]
        authorization = OAuth2(oauth2["url"], oauth2.get("scope"))
    return ToolDefinition(
        name=document["name"],
        version=document["version"],
        input=Input(parameters),
        output=Output(
            tuple(output["available_modes"]),
            None if value is None else OutputValue(_value_schema(value["schema"]), value.get("description")),
        ),
        description=document.get("description"),
        schema_uri=document.get("$schema"),
        requirements=None if requirements is None else Requirements(authorization),
    )


# --- messages: one field, one reason -------------------------------------------------------------


def _field_error(issue: Issue) -> FieldError:
    """The issue at the field it names: ``required`` and ``additionalProperties`` messages name
    the key's pointer first (```/a` is required``); other messages start with the instance's."""
    path, message = issue.instance_path or "", issue.message
    if message.startswith("`"):
        end = message.find("` ", 1)
        named = message[1:end] if end > 0 else None
        if named is not None and named.startswith(path):
            path, message = named, message[end + 2 :]
    if issue.keyword == "unevaluatedProperties" and path.endswith("/schema/enum"):
        message = "is allowed only with type `string` (the format's comment on value_schema; unevaluatedProperties)"
    return FieldError(path, message)


def _explained(issue: Issue, document: dict[str, Any]) -> list[FieldError]:
    """A ``oneOf`` failure whose value has the type of exactly one alternative is explained by
    that alternative's own findings, field by field (``requirements.authorization``: an object
    is judged as ``{"oauth2": ...}``, a string as ``"none" | "token"``); any other issue as itself."""
    if issue.keyword != "oneOf":
        return [_field_error(issue)]
    alternatives = _resolve(definition_schema(), issue.schema_path)
    kind = json_type_name(_resolve(document, issue.instance_path or ""))
    fitting = [k for k, alt in enumerate(alternatives) if type(alt) is dict and _admits(alt.get("type"), kind)]
    if len(fitting) != 1:
        return [_field_error(issue)]
    at = issue.schema_path.removesuffix("/oneOf") + "/allOf/0"
    found = [
        i for i in _alternative(issue.schema_path, fitting[0]).check(document).issues if i.schema_path.startswith(at)
    ]
    return [_field_error(i) for i in found] or [_field_error(issue)]


def _admits(declared: Any, kind: str) -> bool:
    types = declared if type(declared) is list else [declared]
    return kind in types or (kind == "integer" and "number" in types)


@functools.cache
def _alternative(one_of: str, index: int) -> Compiled:
    """The definition schema with the ``oneOf`` at ``one_of`` replaced by its alternative ``index``
    alone (as ``allOf``), to explain a failure the real schema found (never to decide one)."""
    schema = definition_schema()
    parent = _resolve(schema, one_of.removesuffix("/oneOf"))
    parent["allOf"] = [parent.pop("oneOf")[index]]
    return compile(schema, profile="extended")


def _resolve(value: Any, at: str) -> Any:
    """The value at JSON Pointer ``at`` (RFC 6901) in ``value``, which must hold it."""
    for token in at.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        value = value[int(key)] if type(value) is list else value[key]
    return value


# --- conversion -----------------------------------------------------------------------------------


def to_mcp_tool(definition: ToolDefinition) -> dict[str, Any]:
    """The MCP tool (``name``, ``description`` when given, ``inputSchema``) for a valid definition.

    See the module docstring for the conversion. ``required`` is left out when no parameter
    is required; every parameter keeps its definition order.
    """
    properties: dict[str, Any] = {}
    for parameter in definition.input.parameters:
        prop: dict[str, Any] = {}
        json_type = _JSON_TYPES.get(parameter.value_schema.type)
        if json_type is not None:
            prop["type"] = json_type
        if parameter.description is not None:
            prop["description"] = parameter.description
        if parameter.value_schema.enum is not None:
            prop["enum"] = list(parameter.value_schema.enum)
        properties[parameter.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [p.name for p in definition.input.parameters if p.required]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    tool: dict[str, Any] = {"name": definition.name}
    if definition.description is not None:
        tool["description"] = definition.description
    tool["inputSchema"] = schema
    return tool


@dataclass(frozen=True, slots=True)
class DefinitionNote:
    """Something the operator must know about a converted definition that is not a schema finding.

    Attributes:
        note: ``"not_inferrable"`` (the parameter's value must come from the host, not the
            model), ``"json_parameter"`` (a ``json`` parameter became an untyped property: the
            message says whether the profile that judged enforces it), or ``"annotation"`` (any
            tool under ``extended``: a ``format`` 2020-12 does not define, checked by nothing,
            E4; ``parameter`` empty).
        parameter: the parameter's name.
        path: JSON Pointer to the parameter in the definition document (``/input/parameters/2``).
        schema_path: JSON Pointer to its property in the converted ``inputSchema``.
        message: a short English sentence.
    """

    note: str
    parameter: str
    path: str
    schema_path: str
    message: str

    def to_json(self) -> dict[str, str]:
        """The five fields as a JSON object."""
        return {
            "note": self.note,
            "parameter": self.parameter,
            "path": self.path,
            "schema_path": self.schema_path,
            "message": self.message,
        }


@functools.cache
def _accepts_untyped(profile: str) -> bool:
    """Whether ``profile`` enforces an untyped property (``{}``: any JSON value)."""
    return classify({"type": "object", "properties": {"p": {}}}, profile=profile).ok


def definition_notes(definition: ToolDefinition, *, profile: str = DEFAULT_PROFILE) -> list[DefinitionNote]:
    """The notes for a definition's parameters, in parameter order (see :class:`DefinitionNote`).

    Args:
        definition: a valid definition.
        profile: the profile that judged the converted tool (one of ``core.PROFILES``); the
            ``json_parameter`` note says what that profile does with the untyped property.

    Raises:
        ValueError: an unknown profile.
    """
    notes: list[DefinitionNote] = []
    for index, parameter in enumerate(definition.input.parameters):
        path = pointer(("input", "parameters", index))
        schema_path = pointer(("properties", parameter.name))
        if parameter.value_schema.type == "json":
            verdict = (
                f"the {profile} profile accepts any JSON value there"
                if _accepts_untyped(profile)
                else f"the {profile} profile cannot enforce that, so calls to this tool are refused "
                "(the extended profile accepts any JSON value there)"
            )
            notes.append(
                DefinitionNote(
                    "json_parameter",
                    parameter.name,
                    path,
                    schema_path,
                    f"parameter `{parameter.name}` has type json (any JSON value): it is an untyped property; "
                    + verdict,
                )
            )
        if not parameter.inferrable:
            notes.append(
                DefinitionNote(
                    "not_inferrable",
                    parameter.name,
                    path,
                    schema_path,
                    f"parameter `{parameter.name}` is not inferrable: its value must come from the host, "
                    "not from the model",
                )
            )
    return notes
