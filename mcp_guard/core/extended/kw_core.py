"""Core and meta-data keywords: ``$schema``, ``$id``, ``$anchor``, ``$defs``/``definitions``,
``$comment``, the meta-data annotations and the content annotations; and the E5 keywords
that stay ``unsupported_capability``. None of them constrains a value."""

from __future__ import annotations

import re
from typing import Any, Final

from ..json_values import is_json
from ..report import UNSUPPORTED, VALIDATION
from .ir import ALL, BOTH, NEW, STANDARD, Ctx, Keyword, Part, Path, Quick, Rule, Walk
from .kw_members import quick_schemas

__all__ = [
    "SCHEMA_DIALECTS",
    "annotation",
    "e5",
    "kw_anchor",
    "kw_defs",
    "kw_id",
    "kw_schema",
    "quick_subset_schema",
    "subset_schema",
]

_ANCHOR = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*\Z")


def annotation(json_type: type | tuple[type, ...] | None, label: str) -> Rule:
    """The rule of an annotation whose value must be of ``json_type`` (``None``: any JSON value)."""

    def rule(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
        if json_type is not None and not (
            type(value) in json_type if isinstance(json_type, tuple) else type(value) is json_type
        ):
            ctx.finding(VALIDATION, str(path[-1]), path, f"`{path[-1]}` must be {label}")
        return None

    rule.__doc__ = f"An annotation ({label}); constrains nothing."
    return rule


def kw_schema(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``$schema``: only at the root (which chose the dialect; ``classify`` reads it)."""
    if len(path) != 1:
        ctx.finding(UNSUPPORTED, "$schema", path, "`$schema` is supported only at the root")
    return None


SCHEMA_DIALECTS = frozenset(
    f"{scheme}://json-schema.org/{path}{hash_}"
    for scheme in ("http", "https")
    for path in ("draft-06/schema", "draft-07/schema", "draft/2019-09/schema", "draft/2020-12/schema")
    for hash_ in ("", "#")
)
"""Root ``$schema`` values ``standard`` accepts (spec, "Two profiles"): the four dialects the
subset's keywords mean the same in."""


def subset_schema(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> bool:
    """``$schema`` under ``standard``: at the root only, naming a dialect of :data:`SCHEMA_DIALECTS`."""
    if len(path) != 1:
        ctx.finding(UNSUPPORTED, "$schema", path, "`$schema` is supported only at the root")
    elif type(value) is not str or value not in SCHEMA_DIALECTS:
        ctx.finding(
            UNSUPPORTED, "$schema", path, "`$schema` names a dialect other than draft-06, draft-07, 2019-09 or 2020-12"
        )
    else:
        return True
    return False


def quick_subset_schema(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``$schema`` as :func:`subset_schema` accepts it."""
    return depth == 0 and type(value) is str and value in SCHEMA_DIALECTS


def kw_id(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``$id``: at the root, the document's URI; below it, draft-06/07 ``"#name"`` anchors only (E5)."""
    if type(value) is not str:
        ctx.finding(VALIDATION, "$id", path, "`$id` must be a string")
        return None
    if len(path) == 1:
        return None  # classify reads the root's $id as the document's base URI
    if ctx.dialect in ("draft-07", "draft-06") and value.startswith("#") and _ANCHOR.match(value[1:]):
        ctx.anchor(value[1:], path[:-1])
        return None
    ctx.finding(UNSUPPORTED, "$id", path, "an embedded `$id` (a schema resource inside the schema) is not supported")
    return None


def kw_anchor(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``$anchor`` (2019-09, 2020-12): a plain name for its schema, a ``$ref`` target."""
    if type(value) is not str or not _ANCHOR.match(value):
        ctx.finding(VALIDATION, "$anchor", path, "`$anchor` must be a plain name (letters, digits, `-`, `_`, `.`)")
        return None
    ctx.anchor(value, path[:-1])
    return None


def kw_defs(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``$defs`` / ``definitions``: an object of schemas, each checked completely (``$ref`` targets)."""
    if type(value) is not dict:
        ctx.finding(VALIDATION, str(path[-1]), path, f"`{path[-1]}` must be an object of schemas")
        return None
    for name, sub in value.items():
        if ctx.spent:
            break  # past the subschema budget (one finding says so)
        ctx.sub(sub, (*path, name))
    return None


def kw_content_schema(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``contentSchema``: an annotation holding a schema (never applied; must be a schema's shape)."""
    if type(value) is not dict and type(value) is not bool:
        ctx.finding(VALIDATION, "contentSchema", path, "`contentSchema` must be a schema")
    return None


def e5(reason: str) -> Rule:
    """The rule of a keyword that stays ``unsupported_capability`` (E5), with why."""

    def rule(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
        ctx.finding(UNSUPPORTED, str(path[-1]), path, f"`{path[-1]}` is not supported: {reason}")
        return None

    rule.__doc__ = f"E5: unsupported ({reason})."
    return rule


# --- quick tests (verdict-only walk; see ``ir.Keyword.quick``) ------------------------------

_JSON_SCALARS: frozenset[type] = frozenset({str, int, bool, type(None)})


def quick_annotation(json_type: type | None) -> Quick:
    """The quick test of :func:`annotation` (``None``: any JSON value, checked to be JSON)."""

    if json_type is None:

        def quick_any(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
            return type(value) in _JSON_SCALARS or is_json(value)

        return quick_any
    if json_type is list:

        def quick_list(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
            return type(value) is list and is_json(value)

        return quick_list

    def quick(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
        return type(value) is json_type  # one test per keyword visited: a listing's descriptions and titles

    return quick


def quick_schema_uri(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``$schema``: at the root (the walk read the dialect from it)."""
    return depth == 0


def quick_id(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``$id`` at the root only (anchors need the full classifier)."""
    return depth == 0 and type(value) is str


def quick_content_schema(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``contentSchema``: an object or boolean, JSON."""
    return type(value) is bool or (type(value) is dict and is_json(value))


# --- the rows (``ir.Keyword``; registered by ``table.KEYWORDS``) ------------------------------

_STR = annotation(str, "a string")
_BOOL = annotation(bool, "a boolean")
_QSTR = quick_annotation(str)
_QBOOL = quick_annotation(bool)

ROWS: Final = (
    # identifiers and containers of definitions
    Keyword("$schema", ALL, kw_schema, quick_schema_uri, STANDARD, subset_schema, quick_subset_schema, in_one_of=True),
    Keyword("$id", ALL, kw_id, quick_id),
    Keyword("$anchor", NEW, kw_anchor),
    Keyword("$defs", ALL, kw_defs, quick_schemas),
    Keyword("definitions", ALL, kw_defs, quick_schemas),
    # annotations
    Keyword("$comment", ALL, _STR, _QSTR, STANDARD, in_one_of=True),
    Keyword("title", ALL, _STR, _QSTR, STANDARD, in_one_of=True),
    Keyword("description", ALL, _STR, _QSTR, BOTH, in_one_of=True),
    Keyword("default", ALL, annotation(None, "any JSON value"), quick_annotation(None), STANDARD, in_one_of=True),
    Keyword("examples", ALL, annotation(list, "an array"), quick_annotation(list), STANDARD, in_one_of=True),
    Keyword("deprecated", ALL, _BOOL, _QBOOL, STANDARD, in_one_of=True),
    Keyword("readOnly", ALL, _BOOL, _QBOOL, STANDARD, in_one_of=True),
    Keyword("writeOnly", ALL, _BOOL, _QBOOL, STANDARD, in_one_of=True),
    Keyword("contentEncoding", NEW, _STR, _QSTR),  # draft-07 lets a validator assert it: not the same meaning
    Keyword("contentMediaType", NEW, _STR, _QSTR),
    Keyword("contentSchema", NEW, kw_content_schema, quick_content_schema),
    # E5
    Keyword("$dynamicRef", ALL, e5("dynamic references are not supported")),
    Keyword("$dynamicAnchor", ALL, e5("dynamic anchors are not supported")),
    Keyword("$recursiveRef", ALL, e5("recursive references are not supported")),
    Keyword("$recursiveAnchor", ALL, e5("recursive anchors are not supported")),
    Keyword("$vocabulary", ALL, e5("custom vocabularies are not supported")),
)
"""Identifiers, containers of definitions, annotations (none constrains a value) and the E5 keywords."""
