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

__all__ = ["ALL", "FINISHERS", "KEYWORDS"]

ALL: Final = frozenset({"2020-12", "2019-09", "draft-07", "draft-06"})
NEW: Final = frozenset({"2020-12", "2019-09"})
SINCE_07: Final = frozenset({"2020-12", "2019-09", "draft-07"})
OLD: Final = frozenset({"draft-07", "draft-06"})
TUPLE_ITEMS: Final = frozenset({"2019-09", "draft-07", "draft-06"})

_STR = kw_core.annotation(str, "a string")
_BOOL = kw_core.annotation(bool, "a boolean")

KEYWORDS: dict[str, Keyword] = {
    k.name: k
    for k in (
        # any type
        Keyword("type", ALL, kw_any.kw_type),
        Keyword("enum", ALL, kw_any.kw_enum),
        Keyword("const", ALL, kw_any.kw_const),
        # numbers
        Keyword("minimum", ALL, kw_number.kw_bound),
        Keyword("maximum", ALL, kw_number.kw_bound),
        Keyword("exclusiveMinimum", ALL, kw_number.kw_bound),
        Keyword("exclusiveMaximum", ALL, kw_number.kw_bound),
        Keyword("multipleOf", ALL, kw_number.kw_multiple_of),
        # strings
        Keyword("minLength", ALL, kw_string.kw_length),
        Keyword("maxLength", ALL, kw_string.kw_length),
        Keyword("pattern", ALL, kw_string.kw_pattern),
        Keyword("format", ALL, kw_string.kw_format),
        # objects
        Keyword("properties", ALL, kw_object.kw_properties),
        Keyword("patternProperties", ALL, kw_object.kw_pattern_properties),
        Keyword("additionalProperties", ALL, kw_object.kw_additional_properties),
        Keyword("propertyNames", ALL, kw_object.kw_property_names),
        Keyword("required", ALL, kw_object.kw_required),
        Keyword("minProperties", ALL, kw_object.kw_count),
        Keyword("maxProperties", ALL, kw_object.kw_count),
        Keyword("dependentRequired", NEW, kw_object.kw_dependent_required),
        Keyword("dependentSchemas", NEW, kw_object.kw_dependent_schemas),
        Keyword("dependencies", OLD, kw_object.kw_dependencies),
        # arrays
        Keyword("prefixItems", frozenset({"2020-12"}), kw_array.kw_prefix_items),
        Keyword("items", ALL, kw_array.kw_items),
        Keyword("additionalItems", TUPLE_ITEMS, kw_array.kw_additional_items),
        Keyword("contains", ALL, kw_array.kw_contains),
        Keyword("minContains", NEW, kw_array.kw_contains_bound),
        Keyword("maxContains", NEW, kw_array.kw_contains_bound),
        Keyword("uniqueItems", ALL, kw_array.kw_unique_items),
        Keyword("minItems", ALL, kw_object.kw_count),
        Keyword("maxItems", ALL, kw_object.kw_count),
        Keyword("unevaluatedProperties", frozenset({"2020-12"}), kw_unevaluated.kw_unevaluated_properties),
        Keyword("unevaluatedItems", frozenset({"2020-12"}), kw_unevaluated.kw_unevaluated_items),
        # in place
        Keyword("allOf", ALL, kw_apply.kw_all_of),
        Keyword("anyOf", ALL, kw_apply.kw_any_of),
        Keyword("oneOf", ALL, kw_apply.kw_one_of),
        Keyword("not", ALL, kw_apply.kw_not),
        Keyword("if", SINCE_07, kw_apply.kw_if),
        Keyword("then", SINCE_07, kw_apply.kw_then_else),
        Keyword("else", SINCE_07, kw_apply.kw_then_else),
        Keyword("$ref", ALL, kw_apply.kw_ref),
        # identifiers and containers of definitions
        Keyword("$schema", ALL, kw_core.kw_schema),
        Keyword("$id", ALL, kw_core.kw_id),
        Keyword("$anchor", NEW, kw_core.kw_anchor),
        Keyword("$defs", ALL, kw_core.kw_defs),
        Keyword("definitions", ALL, kw_core.kw_defs),
        # annotations
        Keyword("$comment", ALL, _STR),
        Keyword("title", ALL, _STR),
        Keyword("description", ALL, _STR),
        Keyword("default", ALL, kw_core.annotation(None, "any JSON value")),
        Keyword("examples", ALL, kw_core.annotation(list, "an array")),
        Keyword("deprecated", ALL, _BOOL),
        Keyword("readOnly", ALL, _BOOL),
        Keyword("writeOnly", ALL, _BOOL),
        Keyword("contentEncoding", NEW, _STR),  # draft-07 lets a validator assert it: not the same meaning
        Keyword("contentMediaType", NEW, _STR),
        Keyword("contentSchema", NEW, kw_core.kw_content_schema),
        # E5
        Keyword("$dynamicRef", ALL, kw_core.e5("dynamic references are not supported")),
        Keyword("$dynamicAnchor", ALL, kw_core.e5("dynamic anchors are not supported")),
        Keyword("$recursiveRef", ALL, kw_core.e5("recursive references are not supported")),
        Keyword("$recursiveAnchor", ALL, kw_core.e5("recursive anchors are not supported")),
        Keyword("$vocabulary", ALL, kw_core.e5("custom vocabularies are not supported")),
    )
}
"""Every keyword the extended profile knows (spec, "The extended profile")."""

FINISHERS: Final = (kw_object.finish, kw_array.finish)
"""Functions that fold a node's parts which share one loop (members, items) into one part."""
