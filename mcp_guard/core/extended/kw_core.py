"""Core and meta-data keywords: ``$schema``, ``$id``, ``$anchor``, ``$defs``/``definitions``,
``$comment``, the meta-data annotations and the content annotations; and the E5 keywords
that stay ``unsupported_capability``. None of them constrains a value."""

from __future__ import annotations

import re
from typing import Any

from ..report import UNSUPPORTED, VALIDATION
from .ir import Ctx, Part, Path, Rule

__all__ = ["annotation", "e5", "kw_anchor", "kw_defs", "kw_id", "kw_schema"]

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
