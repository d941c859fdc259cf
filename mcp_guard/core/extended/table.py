"""The extended profile's keyword table: one row per keyword, naming the dialects in which it
is enforced and the rule (in its keyword module) that classifies it and builds its part.

A key that has no row is ``unsupported_capability`` (E5: unknown keys may be constraints
their authors believe enforced); a row outside the schema's dialect is too (spec,
"Dialects": a keyword meant in another dialect). Adding a keyword: its rule and part in one
keyword module, and a row here.
"""

from __future__ import annotations

from typing import Final

from . import kw_any, kw_apply, kw_array, kw_core, kw_number, kw_object, kw_string, kw_unevaluated
from .ir import Keyword

__all__ = ["ALL", "ELSEWHERE", "FINISHERS", "KEYWORDS", "holder"]

ALL: Final = frozenset({"2020-12", "2019-09", "draft-07", "draft-06"})
NEW: Final = frozenset({"2020-12", "2019-09"})
SINCE_07: Final = frozenset({"2020-12", "2019-09", "draft-07"})
OLD: Final = frozenset({"draft-07", "draft-06"})
TUPLE_ITEMS: Final = frozenset({"2019-09", "draft-07", "draft-06"})

_STR = kw_core.annotation(str, "a string")
_BOOL = kw_core.annotation(bool, "a boolean")
_QSTR = kw_core.quick_annotation(str)
_QBOOL = kw_core.quick_annotation(bool)

KEYWORDS: dict[str, Keyword] = {
    k.name: k
    for k in (
        # any type
        Keyword("type", ALL, kw_any.kw_type, kw_any.quick_type),
        Keyword("enum", ALL, kw_any.kw_enum, kw_any.quick_enum),
        Keyword("const", ALL, kw_any.kw_const, kw_any.quick_const),
        # numbers
        Keyword("minimum", ALL, kw_number.kw_bound, kw_number.quick_bound),
        Keyword("maximum", ALL, kw_number.kw_bound, kw_number.quick_bound),
        Keyword("exclusiveMinimum", ALL, kw_number.kw_bound, kw_number.quick_bound),
        Keyword("exclusiveMaximum", ALL, kw_number.kw_bound, kw_number.quick_bound),
        Keyword("multipleOf", ALL, kw_number.kw_multiple_of, kw_number.quick_multiple_of),
        # strings
        Keyword("minLength", ALL, kw_string.kw_length, kw_string.quick_count),
        Keyword("maxLength", ALL, kw_string.kw_length, kw_string.quick_count),
        Keyword("pattern", ALL, kw_string.kw_pattern, kw_string.quick_pattern),
        Keyword("format", ALL, kw_string.kw_format, kw_string.quick_format),
        # objects
        Keyword("properties", ALL, kw_object.kw_properties, kw_object.quick_schemas),
        Keyword("patternProperties", ALL, kw_object.kw_pattern_properties, kw_object.quick_pattern_properties),
        Keyword("additionalProperties", ALL, kw_object.kw_additional_properties, kw_object.quick_schema),
        Keyword("propertyNames", ALL, kw_object.kw_property_names, kw_object.quick_schema),
        Keyword("required", ALL, kw_object.kw_required, kw_object.quick_required),
        Keyword("minProperties", ALL, kw_object.kw_count, kw_string.quick_count),
        Keyword("maxProperties", ALL, kw_object.kw_count, kw_string.quick_count),
        Keyword("dependentRequired", NEW, kw_object.kw_dependent_required, kw_object.quick_dependent_required),
        Keyword("dependentSchemas", NEW, kw_object.kw_dependent_schemas, kw_object.quick_schemas),
        Keyword("dependencies", OLD, kw_object.kw_dependencies, kw_object.quick_dependencies),
        # arrays
        Keyword("prefixItems", frozenset({"2020-12"}), kw_array.kw_prefix_items, kw_array.quick_schema_list),
        Keyword("items", ALL, kw_array.kw_items, kw_array.quick_items),
        Keyword("additionalItems", TUPLE_ITEMS, kw_array.kw_additional_items, kw_object.quick_schema),
        Keyword("contains", ALL, kw_array.kw_contains, kw_object.quick_schema),
        Keyword("minContains", NEW, kw_array.kw_contains_bound, kw_string.quick_count),
        Keyword("maxContains", NEW, kw_array.kw_contains_bound, kw_string.quick_count),
        Keyword("uniqueItems", ALL, kw_array.kw_unique_items, kw_array.quick_unique_items),
        Keyword("minItems", ALL, kw_object.kw_count, kw_string.quick_count),
        Keyword("maxItems", ALL, kw_object.kw_count, kw_string.quick_count),
        Keyword("unevaluatedProperties", NEW, kw_unevaluated.kw_unevaluated_properties, kw_object.quick_schema),
        Keyword("unevaluatedItems", NEW, kw_unevaluated.kw_unevaluated_items, kw_object.quick_schema),
        # in place
        Keyword("allOf", ALL, kw_apply.kw_all_of, kw_array.quick_schema_list),
        Keyword("anyOf", ALL, kw_apply.kw_any_of, kw_array.quick_schema_list),
        Keyword("oneOf", ALL, kw_apply.kw_one_of, kw_array.quick_schema_list),
        Keyword("not", ALL, kw_apply.kw_not, kw_object.quick_schema),
        Keyword("if", SINCE_07, kw_apply.kw_if, kw_object.quick_schema),
        Keyword("then", SINCE_07, kw_apply.kw_then_else, kw_object.quick_schema),
        Keyword("else", SINCE_07, kw_apply.kw_then_else, kw_object.quick_schema),
        Keyword("$ref", ALL, kw_apply.kw_ref),
        # identifiers and containers of definitions
        Keyword("$schema", ALL, kw_core.kw_schema, kw_core.quick_schema_uri),
        Keyword("$id", ALL, kw_core.kw_id, kw_core.quick_id),
        Keyword("$anchor", NEW, kw_core.kw_anchor),
        Keyword("$defs", ALL, kw_core.kw_defs, kw_object.quick_schemas),
        Keyword("definitions", ALL, kw_core.kw_defs, kw_object.quick_schemas),
        # annotations
        Keyword("$comment", ALL, _STR, _QSTR),
        Keyword("title", ALL, _STR, _QSTR),
        Keyword("description", ALL, _STR, _QSTR),
        Keyword("default", ALL, kw_core.annotation(None, "any JSON value"), kw_core.quick_annotation(None)),
        Keyword("examples", ALL, kw_core.annotation(list, "an array"), kw_core.quick_annotation(list)),
        Keyword("deprecated", ALL, _BOOL, _QBOOL),
        Keyword("readOnly", ALL, _BOOL, _QBOOL),
        Keyword("writeOnly", ALL, _BOOL, _QBOOL),
        Keyword("contentEncoding", NEW, _STR, _QSTR),  # draft-07 lets a validator assert it: not the same meaning
        Keyword("contentMediaType", NEW, _STR, _QSTR),
        Keyword("contentSchema", NEW, kw_core.kw_content_schema, kw_core.quick_content_schema),
        # E5
        Keyword("$dynamicRef", ALL, kw_core.e5("dynamic references are not supported")),
        Keyword("$dynamicAnchor", ALL, kw_core.e5("dynamic anchors are not supported")),
        Keyword("$recursiveRef", ALL, kw_core.e5("recursive references are not supported")),
        Keyword("$recursiveAnchor", ALL, kw_core.e5("recursive anchors are not supported")),
        Keyword("$vocabulary", ALL, kw_core.e5("custom vocabularies are not supported")),
    )
}
"""Every keyword the extended profile knows (spec, "The extended profile")."""

ELSEWHERE: Final = {
    ("contentEncoding", "draft-07"): "draft-07 lets a validator assert it, and the guard does not decode content, so "
    "it cannot tell whether the author meant a constraint",
    ("contentMediaType", "draft-07"): "draft-07 lets a validator assert it, and the guard does not decode content, "
    "so it cannot tell whether the author meant a constraint",
}
"""Why a keyword the dialect does define is refused there (its meaning differs from the one enforced)."""

FINISHERS: Final = (kw_object.finish, kw_array.finish)
"""Functions that fold a node's parts which share one loop (members, items) into one part."""


_NAMES: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
"""Keywords whose members are names, not keywords (decision 10)."""


def holder(path: tuple[str | int, ...]) -> str:
    """The keyword a subschema at ``path`` belongs to (``items``, ``properties``, ``not``, …).

    The nearest key of the path that is a keyword and not a name under a keyword of names
    (a property called ``items`` is a name); ``"schema"`` at the root.
    """
    for index in range(len(path) - 1, -1, -1):
        token = path[index]
        if type(token) is str and token in KEYWORDS and (index == 0 or path[index - 1] not in _NAMES):
            return token
    return "schema"
