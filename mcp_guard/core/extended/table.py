"""The extended profile's keyword table: one row per keyword, naming the dialects in which it
is enforced and the rule (in its keyword module) that classifies it and builds its part.

A key that has no row is ``unsupported_capability`` (E5: unknown keys may be constraints
their authors believe enforced); a row outside the schema's dialect is too (spec,
"Dialects": a keyword meant in another dialect). Adding a keyword: its rule and part in one
keyword module, and a row here.

``standard`` and ``strict`` are a selection of these rows (a row's ``profiles``), each with the
subset rule that spec decisions 1–4, 8 and 9 add (``subset``, ``types``, ``in_one_of``; the node
rules are ``subset``'s walk); their validators come from the same parts, judged on doubles.
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

BOTH: Final = frozenset({"standard", "strict"})
"""The subset profiles (spec, "Two profiles"): a row with them is the reference host's table."""
STANDARD: Final = frozenset({"standard"})
"""Annotations and the root ``$schema``: ``standard`` only."""
OBJECT: Final = frozenset({"object"})
ARRAY: Final = frozenset({"array"})
NUMERIC: Final = frozenset({"integer", "number"})

_STR = kw_core.annotation(str, "a string")
_BOOL = kw_core.annotation(bool, "a boolean")
_QSTR = kw_core.quick_annotation(str)
_QBOOL = kw_core.quick_annotation(bool)

KEYWORDS: dict[str, Keyword] = {
    k.name: k
    for k in (
        # any type
        Keyword("type", ALL, kw_any.kw_type, kw_any.quick_type, BOTH, kw_any.subset_type),
        Keyword("enum", ALL, kw_any.kw_enum, kw_any.quick_enum, BOTH, kw_any.subset_enum),
        Keyword("const", ALL, kw_any.kw_const, kw_any.quick_const),
        # numbers
        Keyword("minimum", ALL, kw_number.kw_bound, kw_number.quick_bound, BOTH, kw_number.subset_bound, types=NUMERIC),
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
        Keyword(
            "properties",
            ALL,
            kw_object.kw_properties,
            kw_object.quick_schemas,
            BOTH,
            kw_object.subset_properties,
            types=OBJECT,
        ),
        Keyword("patternProperties", ALL, kw_object.kw_pattern_properties, kw_object.quick_pattern_properties),
        Keyword(
            "additionalProperties",
            ALL,
            kw_object.kw_additional_properties,
            kw_object.quick_schema,
            BOTH,
            kw_object.subset_additional_properties,
            kw_object.quick_subset_additional,
            OBJECT,
        ),
        Keyword("propertyNames", ALL, kw_object.kw_property_names, kw_object.quick_schema),
        Keyword("required", ALL, kw_object.kw_required, kw_object.quick_required, BOTH, types=OBJECT),
        Keyword("minProperties", ALL, kw_object.kw_count, kw_string.quick_count),
        Keyword("maxProperties", ALL, kw_object.kw_count, kw_string.quick_count),
        Keyword("dependentRequired", NEW, kw_object.kw_dependent_required, kw_object.quick_dependent_required),
        Keyword("dependentSchemas", NEW, kw_object.kw_dependent_schemas, kw_object.quick_schemas),
        Keyword("dependencies", OLD, kw_object.kw_dependencies, kw_object.quick_dependencies),
        # arrays
        Keyword("prefixItems", frozenset({"2020-12"}), kw_array.kw_prefix_items, kw_array.quick_schema_list),
        Keyword("items", ALL, kw_array.kw_items, kw_array.quick_items, BOTH, kw_array.subset_items, types=ARRAY),
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
        Keyword("oneOf", ALL, kw_apply.kw_one_of, kw_array.quick_schema_list, BOTH, in_one_of=True),
        Keyword("not", ALL, kw_apply.kw_not, kw_object.quick_schema),
        Keyword("if", SINCE_07, kw_apply.kw_if, kw_object.quick_schema),
        Keyword("then", SINCE_07, kw_apply.kw_then_else, kw_object.quick_schema),
        Keyword("else", SINCE_07, kw_apply.kw_then_else, kw_object.quick_schema),
        Keyword("$ref", ALL, kw_apply.kw_ref),
        # identifiers and containers of definitions
        Keyword(
            "$schema",
            ALL,
            kw_core.kw_schema,
            kw_core.quick_schema_uri,
            STANDARD,
            kw_core.subset_schema,
            kw_core.quick_subset_schema,
            in_one_of=True,
        ),
        Keyword("$id", ALL, kw_core.kw_id, kw_core.quick_id),
        Keyword("$anchor", NEW, kw_core.kw_anchor),
        Keyword("$defs", ALL, kw_core.kw_defs, kw_object.quick_schemas),
        Keyword("definitions", ALL, kw_core.kw_defs, kw_object.quick_schemas),
        # annotations
        Keyword("$comment", ALL, _STR, _QSTR, STANDARD, in_one_of=True),
        Keyword("title", ALL, _STR, _QSTR, STANDARD, in_one_of=True),
        Keyword("description", ALL, _STR, _QSTR, BOTH, in_one_of=True),
        Keyword(
            "default",
            ALL,
            kw_core.annotation(None, "any JSON value"),
            kw_core.quick_annotation(None),
            STANDARD,
            in_one_of=True,
        ),
        Keyword(
            "examples",
            ALL,
            kw_core.annotation(list, "an array"),
            kw_core.quick_annotation(list),
            STANDARD,
            in_one_of=True,
        ),
        Keyword("deprecated", ALL, _BOOL, _QBOOL, STANDARD, in_one_of=True),
        Keyword("readOnly", ALL, _BOOL, _QBOOL, STANDARD, in_one_of=True),
        Keyword("writeOnly", ALL, _BOOL, _QBOOL, STANDARD, in_one_of=True),
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

    The last key of the path that stands as a keyword, read from the root: the key after a
    keyword of names is a name (a property called ``items``, or one called ``properties``, is a
    name), and indices are never keywords; ``"schema"`` at the root.
    """
    found = "schema"
    name = False
    for token in path:
        if name:
            name = False  # a name under a keyword of names (decision 10)
        elif type(token) is str and token in KEYWORDS:
            found = token
            name = token in _NAMES
    return found
