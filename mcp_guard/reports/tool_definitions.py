"""Tool definitions in the Arcade preview format: validation, and conversion to an MCP tool.

The format (one JSON object per tool; files may carry ``//`` and ``/* */`` comments)::

    {
      "$schema": "...",                        optional
      "name": "SendEmail",                     required, non-empty string
      "description": "...",                    optional string
      "version": "3f2a9c1",                    required, 7 to 40 hexadecimal digits
      "input": {"parameters": [                required (the list may be empty)
        {"name": "to",                         required, non-empty, unique in the list
         "required": true,                     required boolean
         "description": "...",                 optional string
         "schema": {"type": "string",          required: string | integer | float | boolean | json
                    "enum": ["a", "b"]},       optional list of strings (type string only)
         "inferrable": true}                   optional boolean, default true
      ]},
      "output": {                              optional
        "available_modes": ["value", "error"], required, non-empty: value | error | null |
                                               artifact | requires_authorization
        "description": "...",                  optional string
        "value": {"schema": {...}}},           optional, a value schema as above
      "requirements": {                        optional
        "authorization": "none" | "token" | {"oauth2": {"url": "...", "scope": [...]}}
      }
    }

No other keys are allowed anywhere (``extra="forbid"``), and values are not coerced (a
``"true"`` string is not a boolean). :func:`parse_tool_definition` reports every problem
with its JSON Pointer into the document and a reason.

:func:`to_mcp_tool` converts a valid definition into an MCP tool whose ``inputSchema`` is in
the guard's subset: ``{"type": "object", "properties": {...}, "required": [...],
"additionalProperties": false}``; ``float`` becomes ``number``, string enums are kept, each
parameter's description is kept. A ``json`` parameter takes any JSON value, which the subset
cannot express: it becomes an untyped property (``{}`` with its description), so the schema
core classifies the tool unsupported with a pointer to that property; it is never dropped.
Parameters with ``inferrable: false`` stay in the schema; :func:`definition_notes` flags them
(their value must come from the host, not the model).

This module does no I/O and does not classify (the schema core does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from ..core.json_values import pointer
from .documents import FieldError, field_errors

__all__ = [
    "DefinitionNote",
    "Input",
    "OAuth2",
    "Output",
    "Parameter",
    "Requirements",
    "ToolDefinition",
    "ValueSchema",
    "definition_notes",
    "is_tool_definition",
    "parse_tool_definition",
    "to_mcp_tool",
]

ValueType = Literal["string", "integer", "float", "boolean", "json"]
OutputMode = Literal["value", "error", "null", "artifact", "requires_authorization"]

_JSON_TYPES: dict[str, str] = {"string": "string", "integer": "integer", "float": "number", "boolean": "boolean"}
"""The definition's value types and their JSON Schema ``type``; ``json`` has none."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)


class ValueSchema(_Model):
    """A parameter's (or the output value's) schema: ``type``, and an optional string ``enum``."""

    type: ValueType
    enum: list[str] | None = None

    @model_validator(mode="after")
    def _enum_with_string(self) -> ValueSchema:
        if self.enum is not None and self.type != "string":
            raise ValueError(f"an enum is allowed only with type string, not {self.type}")
        return self


class Parameter(_Model):
    """One input parameter."""

    name: Annotated[str, Field(min_length=1)]
    required: bool
    description: str | None = None
    value_schema: ValueSchema = Field(alias="schema")
    inferrable: bool = True


class Input(_Model):
    """The tool's input: its parameters, in order, names unique."""

    parameters: list[Parameter]

    @field_validator("parameters")
    @classmethod
    def _unique_names(cls, parameters: list[Parameter]) -> list[Parameter]:
        seen: set[str] = set()
        for parameter in parameters:
            if parameter.name in seen:
                raise ValueError(f"two parameters are named `{parameter.name}`")
            seen.add(parameter.name)
        return parameters


class OutputValue(_Model):
    """``output.value``: the schema of the value the tool returns."""

    value_schema: ValueSchema = Field(alias="schema")


class Output(_Model):
    """What the tool may return."""

    available_modes: Annotated[list[OutputMode], Field(min_length=1)]
    description: str | None = None
    value: OutputValue | None = None


class OAuth2(_Model):
    """OAuth 2.0 authorization: the provider's ``url`` and the ``scope`` (a list, or one space-separated string)."""

    url: Annotated[str, Field(min_length=1)]
    scope: list[str] | str | None = None


class OAuth2Authorization(_Model):
    """``{"oauth2": {...}}``."""

    oauth2: OAuth2


def _authorization_form(value: Any) -> str:
    return "@object" if isinstance(value, dict | OAuth2Authorization) else "@string"


_TAGS = frozenset({"@object", "@string"})
"""Union tags pydantic puts into error locations; they are not document keys."""

Authorization = Annotated[
    Annotated[Literal["none", "token"], Tag("@string")] | Annotated[OAuth2Authorization, Tag("@object")],
    Discriminator(_authorization_form),
]


class Requirements(_Model):
    """What the tool needs before it runs: ``none``, a ``token``, or OAuth 2.0."""

    authorization: Authorization | None = None


class ToolDefinition(_Model):
    """A tool definition document (see the module docstring for the format)."""

    schema_uri: str | None = Field(default=None, alias="$schema")
    name: Annotated[str, Field(min_length=1)]
    description: str | None = None
    version: Annotated[str, Field(pattern=r"^[0-9a-fA-F]{7,40}$")]
    input: Input
    output: Output | None = None
    requirements: Requirements | None = None


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
    """Validate a tool definition document (a parsed JSON value).

    Returns:
        The :class:`ToolDefinition`, or every problem found as :class:`FieldError` values
        (JSON Pointer into the document and reason), in document order.
    """
    if type(value) is not dict:
        return [FieldError("", "a tool definition must be a JSON object")]
    try:
        return ToolDefinition.model_validate(value, by_alias=True, by_name=False)
    except ValidationError as exc:
        return field_errors(exc, drop=_TAGS)


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
            model), ``"json_parameter"`` (a ``json`` parameter became an untyped property,
            which makes the tool unsupported), or ``"annotation"`` (any tool under ``extended``:
            a ``format`` 2020-12 does not define, checked by nothing, E4; ``parameter`` empty).
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


def definition_notes(definition: ToolDefinition) -> list[DefinitionNote]:
    """The notes for a definition's parameters, in parameter order (see :class:`DefinitionNote`)."""
    notes: list[DefinitionNote] = []
    for index, parameter in enumerate(definition.input.parameters):
        path = pointer(("input", "parameters", index))
        schema_path = pointer(("properties", parameter.name))
        if parameter.value_schema.type == "json":
            notes.append(
                DefinitionNote(
                    "json_parameter",
                    parameter.name,
                    path,
                    schema_path,
                    f"parameter `{parameter.name}` has type json (any JSON value), which the guard's subset "
                    "cannot express: it is an untyped property, so calls to this tool are refused",
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
