"""Host profiles: what each model host accepts in a tool's parameters schema and name (issue 24, item 1).

One table per host, versioned; each rule carries its source (the host's documentation page or the
public thread that shows the refusal) and the date it was read. Where a rule is uncertain it says
so, and the table takes the side that keeps the host from refusing the tool (it refuses what it
is not sure the host accepts). The checker (``hosts.checker``) and the lowering (``hosts.lowering``)
read these tables and nothing else: one rule, one place.

A host profile answers, for a JSON Schema as an MCP client would hand it to the host:

- ``keywords``: the keywords the host accepts on a schema node (anything else is refused);
- ``refs``: whether ``$ref``/``$defs`` may stay (otherwise they are inlined);
- ``type_lists``/``null_type``: whether ``"type": [...]`` and ``"type": "null"`` are accepted
  (Gemini's OpenAPI subset says ``nullable: true`` instead);
- ``closed_objects``: every object must carry ``additionalProperties: false`` and list every
  property in ``required`` (OpenAI strict);
- ``typed_nodes``: every node must say what it is (``type``, or for OpenAI strict also
  ``anyOf``/``$ref``/``enum``/``const``);
- ``array_items``: every array must have ``items``;
- ``root_combinators``: whether the root may carry ``anyOf``/``oneOf``/``allOf``/``not``/``enum``;
- ``string_enums``: ``enum`` only on strings, with string choices (Gemini);
- ``formats``: the ``format`` values accepted (``None``: any);
- ``nonempty_objects``: a nested object must declare at least one property (Gemini);
- ``property_names``: the pattern a property name must match (``None``: any);
- ``declared_required``: every name in ``required`` must be a declared property (Gemini);
- ``limits``: OpenAI strict's documented sizes;
- ``name_pattern``: the tool name's pattern (length included).

Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = ["HOSTS", "HOST_NAMES", "HostName", "HostProfile", "Limits", "Rule", "host_profile"]

HostName = Literal["openai-strict", "openai", "gemini", "gemini-json", "anthropic"]
"""The host profiles ``check --host`` and the lowering know."""

HOST_NAMES: Final[tuple[HostName, ...]] = ("openai-strict", "openai", "gemini", "gemini-json", "anthropic")


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of a host table, as docs/hosts.md shows it.

    Attributes:
        text: the rule in a sentence.
        source: where it comes from (a documentation page's address, or a public thread).
        read: the date the source was read (``YYYY-MM``).
        certain: False where the source is indirect or sources disagree; the table then takes
            the side that keeps the host from refusing the tool.
    """

    text: str
    source: str
    read: str = "2026-12"
    certain: bool = True


@dataclass(frozen=True, slots=True)
class Limits:
    """Documented size limits (OpenAI strict): object nesting depth, total properties, total enum values."""

    depth: int
    properties: int
    enum_values: int


@dataclass(frozen=True, slots=True)
class HostProfile:
    """What one model host accepts (module docstring); build none: use :data:`HOSTS`."""

    name: HostName
    version: str
    summary: str
    keywords: frozenset[str]
    refs: bool
    type_lists: bool
    null_type: bool
    closed_objects: bool
    typed_nodes: bool
    array_items: bool
    root_combinators: bool
    string_enums: bool
    formats: frozenset[str] | None
    nonempty_objects: bool
    name_pattern: re.Pattern[str]
    name_rule: str
    property_names: re.Pattern[str] | None = None
    declared_required: bool = False
    limits: Limits | None = None
    rules: tuple[Rule, ...] = field(default=())

    def accepts_name(self, name: str) -> bool:
        """Whether the host accepts ``name`` as a tool (function) name."""
        return self.name_pattern.fullmatch(name) is not None


ANNOTATIONS: Final = frozenset({"description"})
"""Kept by every host: the text the model reads (and where a lowered constraint is written)."""

_OPENAI_NAME: Final = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_GEMINI_NAME: Final = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}")

OPENAI_FUNCTIONS: Final = "https://platform.openai.com/docs/guides/function-calling"
OPENAI_STRUCTURED: Final = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
GEMINI_FUNCTIONS: Final = "https://ai.google.dev/api/caching#FunctionDeclaration"
GEMINI_SCHEMA: Final = "https://ai.google.dev/api/caching#Schema"
VERTEX_FUNCTIONS: Final = "https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/FunctionDeclaration"
ANTHROPIC_TOOLS: Final = "https://docs.anthropic.com/en/api/messages (tools[].name, tools[].input_schema)"

_JSON_SCHEMA_ALL: Final = frozenset(
    {
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
        "maxProperties", "minProperties", "required", "dependentRequired", "allOf", "anyOf", "oneOf", "not", "if",
        "then", "else", "dependentSchemas", "prefixItems", "items", "contains", "properties", "patternProperties",
        "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "$ref", "$defs",
        "definitions", "format", "title", "description", "default", "examples", "deprecated", "readOnly",
        "writeOnly", "$comment", "$anchor", "contentEncoding", "contentMediaType", "contentSchema",
        "additionalItems", "dependencies",
    }
)  # fmt: skip
"""JSON Schema's validation, applicator, reference and annotation keywords (2020-12 and draft-07)."""

_STRICT_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

OPENAI_STRICT: Final = HostProfile(
    name="openai-strict",
    version="2026-12",
    summary="OpenAI function calling with `strict: true` (Structured Outputs' JSON Schema subset)",
    keywords=frozenset(
        {
            "type",
            "description",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
            "const",
            "anyOf",
            "$ref",
            "$defs",
            "pattern",
            "format",
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "minItems",
            "maxItems",
        }
    ),
    refs=True,
    type_lists=False,
    null_type=True,
    closed_objects=True,
    typed_nodes=True,
    array_items=True,
    root_combinators=False,
    string_enums=False,
    formats=_STRICT_FORMATS,
    nonempty_objects=False,
    name_pattern=_OPENAI_NAME,
    name_rule="^[a-zA-Z0-9_-]{1,64}$",
    limits=Limits(depth=10, properties=5000, enum_values=1000),
    rules=(
        Rule("the root is an object (`type: object`), not `anyOf`", OPENAI_STRUCTURED),
        Rule("every object has `additionalProperties: false`", OPENAI_STRUCTURED),
        Rule(
            "every property is listed in `required`; an optional one is written as a union with null", OPENAI_STRUCTURED
        ),
        Rule(
            "supported: type, properties, required, additionalProperties, items, enum, const, anyOf, $ref/$defs, "
            "description; string pattern and format; number multipleOf, maximum, exclusiveMaximum, minimum, "
            "exclusiveMinimum; array minItems, maxItems",
            OPENAI_STRUCTURED,
        ),
        Rule(
            "refused: allOf, not, if/then/else, dependentRequired, dependentSchemas, patternProperties",
            OPENAI_STRUCTURED,
        ),
        Rule(
            "keywords the page does not list (minLength, maxLength, uniqueItems, propertyNames, minProperties, "
            "oneOf, title, default, examples) are treated as refused",
            OPENAI_STRUCTURED + " (silent on them; threads show `'default' is not permitted`)",
            certain=False,
        ),
        Rule("format: date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid", OPENAI_STRUCTURED),
        Rule(
            'type lists other than `[X, "null"]` are written as anyOf',
            OPENAI_STRUCTURED + " (shows only [X, null])",
            certain=False,
        ),
        Rule(
            "every node says what it is: type, anyOf, $ref, enum or const (a bare `{}` is refused)",
            "sttp-ai PR #521; " + OPENAI_STRUCTURED,
        ),
        Rule("at most 10 levels of object nesting, 5000 properties, 1000 enum values", OPENAI_STRUCTURED),
        Rule("arrays have `items`", OPENAI_STRUCTURED),
        Rule("name: ^[a-zA-Z0-9_-]{1,64}$", OPENAI_FUNCTIONS),
    ),
)

OPENAI: Final = HostProfile(
    name="openai",
    version="2026-12",
    summary="OpenAI function calling without strict mode",
    keywords=_JSON_SCHEMA_ALL | {"$schema", "$id"},
    refs=True,
    type_lists=True,
    null_type=True,
    closed_objects=False,
    typed_nodes=False,
    array_items=True,
    root_combinators=False,
    string_enums=False,
    formats=None,
    nonempty_objects=False,
    name_pattern=_OPENAI_NAME,
    name_rule="^[a-zA-Z0-9_-]{1,64}$",
    rules=(
        Rule(
            "the root is `type: object` without oneOf/anyOf/allOf/enum/not at the top level",
            OPENAI_FUNCTIONS + " (error text: schema must be a JSON Schema of 'type: \"object\"')",
        ),
        Rule(
            "arrays have `items` (`array schema missing items`)",
            "chatlas PR #255; letta #3137; openai-agents-python #404",
        ),
        Rule("other JSON Schema keywords are accepted (not enforced by the host)", OPENAI_FUNCTIONS, certain=False),
        Rule("name: ^[a-zA-Z0-9_-]{1,64}$", OPENAI_FUNCTIONS),
    ),
)

GEMINI: Final = HostProfile(
    name="gemini",
    version="2026-12",
    summary="Gemini `functionDeclarations[].parameters` (a select subset of the OpenAPI 3.0 Schema object)",
    keywords=frozenset(
        {"type", "description", "properties", "required", "items", "enum", "anyOf", "nullable", "format"}
    ),
    refs=False,
    type_lists=False,
    null_type=False,
    closed_objects=False,
    typed_nodes=True,
    array_items=True,
    root_combinators=False,
    string_enums=True,
    formats=frozenset({"date-time", "enum"}),
    nonempty_objects=True,
    name_pattern=_GEMINI_NAME,
    name_rule="^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$",
    property_names=re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}"),
    declared_required=True,
    rules=(
        Rule(
            "refused: additionalProperties, $schema, $ref/$defs, type lists",
            GEMINI_SCHEMA + "; promptfoo #6902, cherry-studio #3270",
        ),
        Rule(
            "every name in `required` is a declared property (else 400: `required[0]: property is not defined`)",
            "iBUHub/AIStudioToAPI #154, moltis-org/moltis #849",
        ),
        Rule(
            "a root object without properties: `properties` must be non-empty for an OBJECT, so clients give "
            "Gemini no `parameters` for a tool without arguments; shown as it is (the model sends none)",
            "pipecat-flows #110, agno #2112, zeph PR #1674, aichat PR #666 (2024-26: some report it accepted now)",
            certain=False,
        ),
        Rule("every node has one `type` (a node without one is refused or skipped)", "gemini-cli PR #9574, #4594"),
        Rule(
            "properties/required only on objects; a nested object declares at least one property",
            "opencode #11889 / PR #11888",
        ),
        Rule("enum only on strings, with string choices", GEMINI_SCHEMA + " (`enum[] string`); 5ire #218"),
        Rule("no `null` type: `nullable: true` instead", GEMINI_SCHEMA),
        Rule("arrays have `items`", "DEEIX-Chat #546; mcp-obsidian #21"),
        Rule(
            "bounds, lengths, pattern, title, default, example, min/maxItems and min/maxProperties are listed by the "
            "Schema reference but refused by some endpoints and models: treated as refused",
            GEMINI_SCHEMA + " vs. the threads above",
            certain=False,
        ),
        Rule(
            "format: only `date-time` and `enum` on strings",
            GEMINI_SCHEMA + " (Vertex: int32/int64, float/double too)",
            certain=False,
        ),
        Rule("anyOf is accepted", GEMINI_SCHEMA + " (recent field; older models refused it)", certain=False),
        Rule(
            "property names: ^[a-zA-Z_][a-zA-Z0-9_]{0,63}$",
            VERTEX_FUNCTIONS + " (parameters; the Gemini API page is silent)",
            certain=False,
        ),
        Rule(
            "name: starts with a letter or `_`; letters, digits, `_ . -`; at most 64 (colons left out)",
            GEMINI_FUNCTIONS + "; " + VERTEX_FUNCTIONS,
        ),
    ),
)

GEMINI_JSON: Final = HostProfile(
    name="gemini-json",
    version="2026-12",
    summary="Gemini `functionDeclarations[].parametersJsonSchema` (JSON Schema)",
    keywords=_JSON_SCHEMA_ALL | {"propertyOrdering"},
    refs=True,
    type_lists=True,
    null_type=True,
    closed_objects=False,
    typed_nodes=False,
    array_items=False,
    root_combinators=True,
    string_enums=False,
    formats=None,
    nonempty_objects=False,
    name_pattern=_GEMINI_NAME,
    name_rule="^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$",
    rules=(
        Rule(
            "JSON Schema with $ref/$defs and additionalProperties; the schema describes an object",
            GEMINI_FUNCTIONS + " (parametersJsonSchema)",
        ),
        Rule("`$schema` is refused", "promptfoo PR #6904; gemini-cli PR #9574"),
        Rule("`$id`, `$anchor` and unknown keys are treated as refused", GEMINI_FUNCTIONS + " (silent)", certain=False),
        Rule("name: as `gemini`", GEMINI_FUNCTIONS),
    ),
)

ANTHROPIC: Final = HostProfile(
    name="anthropic",
    version="2026-12",
    summary="Anthropic Messages API `tools[].input_schema` (JSON Schema)",
    keywords=_JSON_SCHEMA_ALL | {"$schema", "$id"},
    refs=True,
    type_lists=True,
    null_type=True,
    closed_objects=False,
    typed_nodes=False,
    array_items=False,
    root_combinators=False,
    string_enums=False,
    formats=None,
    nonempty_objects=False,
    name_pattern=_OPENAI_NAME,
    name_rule="^[a-zA-Z0-9_-]{1,64}$",
    rules=(
        Rule("input_schema is a JSON Schema object with `type: object` at the root", ANTHROPIC_TOOLS),
        Rule(
            "no oneOf, allOf or anyOf at the top level",
            "public threads (API error: input_schema does not support oneOf, allOf, or anyOf at the top level)",
            certain=False,
        ),
        Rule("name: ^[a-zA-Z0-9_-]{1,64}$", ANTHROPIC_TOOLS),
    ),
)

HOSTS: Final[dict[HostName, HostProfile]] = {h.name: h for h in (OPENAI_STRICT, OPENAI, GEMINI, GEMINI_JSON, ANTHROPIC)}
"""Every host profile by name, in :data:`HOST_NAMES` order."""


def host_profile(name: str) -> HostProfile:
    """The profile named ``name``.

    Raises:
        ValueError: an unknown host (the message lists the known ones).
    """
    try:
        return HOSTS[name]  # type: ignore[index]
    except KeyError:
        raise ValueError(f"unknown host {name!r}; expected one of {', '.join(HOST_NAMES)}") from None
