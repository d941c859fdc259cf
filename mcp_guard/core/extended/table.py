"""The extended profile's keyword table: every keyword module's rows (``ROWS``), one per keyword,
each naming the dialects in which it is enforced, its rule, its quick test and its parts (the
row stands in its keyword module beside them: one keyword, one place).

A key that has no row is ``unsupported_capability`` (E5: unknown keys may be constraints
their authors believe enforced); a row outside the schema's dialect is too (spec,
"Dialects": a keyword meant in another dialect). Adding a keyword: its rule, quick test, part
and row in one keyword module (a new module joins :data:`_MODULES`).

``standard`` and ``strict`` are a selection of these rows (a row's ``profiles``), each with the
subset rule that spec decisions 1–4, 8 and 9 add (``subset``, ``types``, ``in_one_of``; the node
rules are ``subset``'s walk); their validators come from the same parts, judged on doubles.
"""

from __future__ import annotations

from typing import Final

from . import kw_any, kw_apply, kw_array, kw_core, kw_members, kw_number, kw_object, kw_string, kw_unevaluated
from .ir import ALL, Keyword

__all__ = ["ALL", "ELSEWHERE", "FINISHERS", "KEYWORDS", "holder"]

_MODULES: Final = (
    kw_any,
    kw_number,
    kw_string,
    kw_members,
    kw_object,
    kw_array,
    kw_unevaluated,
    kw_apply,
    kw_core,
)
"""The keyword modules, in the table's order (any type, numbers, strings, objects' members, objects, arrays, in place,
identifiers and annotations)."""

KEYWORDS: dict[str, Keyword] = {row.name: row for module in _MODULES for row in module.ROWS}
"""Every keyword the extended profile knows (spec, "The extended profile")."""

ELSEWHERE: Final = {
    ("contentEncoding", "draft-07"): "draft-07 lets a validator assert it, and the guard does not decode content, so "
    "it cannot tell whether the author meant a constraint",
    ("contentMediaType", "draft-07"): "draft-07 lets a validator assert it, and the guard does not decode content, "
    "so it cannot tell whether the author meant a constraint",
}
"""Why a keyword the dialect does define is refused there (its meaning differs from the one enforced)."""

FINISHERS: Final = (kw_members.finish, kw_array.finish)
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
