"""Object keywords but the members' three (:mod:`.kw_members`): ``propertyNames``, ``required``,
``dependentRequired``, ``dependentSchemas``, ``minProperties``, ``maxProperties``, and draft-07's
``dependencies`` (2020-12 applicator and validation vocabularies). They apply to objects only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from ..json_values import escape_token
from ..report import VALIDATION
from .ir import ALL, BOTH, NEW, OBJECT, OLD, Ctx, Emitter, Keyword, Part, Path, Walk, XNode
from .kw_members import quick_schema, quick_schemas, schema_map
from .kw_string import non_negative, quick_count
from .writer import CHAIN_LIMIT

__all__ = [
    "ROWS",
    "Count",
    "DependentSchemas",
    "PropertyNames",
    "Required",
    "kw_count",
]


class PropertyNames(Part):
    """``propertyNames``: every member name (a string) satisfies the schema."""

    applies = "object"
    order = 40

    def __init__(self, node: XNode, path: Path) -> None:
        self.node = node
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield self.node

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [
            *g.charge(v, [self.node]),
            f"for k in {v}:",
            f"    if type(k) is str and not {g.test(self.node, 'k')}: return False",
        ]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        lines = [
            f"for k in {v}:",
            f"    if type(k) is str and not {g.test(self.node, 'k')}:",
            "        p = child(" + ip + ", k)",
        ]
        if self.node.boolean is False:
            lines.append(
                "        "
                + g.fail("propertyNames", self.path, "p", " is not allowed: no property name is (propertyNames: false)")
            )
            return lines
        lines += [
            "        q = []",
            f"        {g.cfn(self.node)}(k, p, q, w)",
            "        "
            + g.issue(
                "propertyNames",
                self.schema_path,
                "p",
                f"{g.const('the name of ')} + where(p) + {g.const(' breaks propertyNames: ')} + "
                "'; '.join(i.message for i in q[:3])",
            ),
        ]
        return lines


def kw_property_names(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``propertyNames``: a schema applied to each member name."""
    node = ctx.sub(value, path)
    return None if node is None else PropertyNames(node, path)


class Required(Part):
    """``required``: names that must be present (with ``when``: only when that member is, i.e.
    ``dependentRequired``)."""

    applies = "object"
    order = 20

    def __init__(self, keyword: str, names: tuple[str, ...], path: Path, when: str | None = None) -> None:
        self.keyword = keyword
        self.names = names
        self.path = path
        self.when = when

    @property
    def plain(self) -> frozenset[str] | None:
        """The names of a plain ``required`` (not ``dependentRequired``), else ``None``."""
        return frozenset(self.names) if self.keyword == "required" and self.when is None else None

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        if len(self.names) > CHAIN_LIMIT:
            lines = [f"for n in {g.const(self.names)}:", f"    if n not in {v}: return False"]
        else:
            lines = [f"if {g.const(n)} not in {v}: return False" for n in self.names]
        if self.when is None:
            return lines
        return [f"if {g.const(self.when)} in {v}:", *("    " + x for x in lines)]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        suffix = (
            " is required"
            if self.when is None
            else f" is required when `{escape_token(self.when)}` is present (dependentRequired)"
        )
        tails = tuple((n, "/" + escape_token(n) + "`" + suffix) for n in self.names)
        lines = [
            f"for n, m in {g.const(tails)}:",
            f"    if n not in {v}:",
            "        " + g.issue(self.keyword, self.schema_path, ip, f"{g.const('`')} + {ip} + m"),
        ]
        if self.when is None:
            return lines
        return [f"if {g.const(self.when)} in {v}:", *("    " + x for x in lines)]


def _names(ctx: Ctx, value: Any, path: Path, keyword: str) -> tuple[str, ...] | None:
    if type(value) is not list or any(type(n) is not str for n in value):
        ctx.finding(VALIDATION, keyword, path, f"`{keyword}` must be a list of strings")
        return None
    if len(set(value)) != len(value):
        ctx.finding(VALIDATION, keyword, path, f"`{keyword}` must not repeat a name")
        return None
    return tuple(value)


def kw_required(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``required``: a list of unique strings."""
    names = _names(ctx, value, path, "required")
    return None if names is None else Required("required", names, path)


def kw_dependent_required(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | list[Part] | None:
    """``dependentRequired``: an object of name → list of unique names."""
    if type(value) is not dict:
        ctx.finding(VALIDATION, "dependentRequired", path, "`dependentRequired` must be an object of lists")
        return None
    parts: list[Part] = []
    for when, names in value.items():
        found = _names(ctx, names, (*path, when), "dependentRequired")
        if found is None:
            return None
        if found:
            parts.append(Required("dependentRequired", found, (*path, when), when))
    return parts


class DependentSchemas(Part):
    """``dependentSchemas``: when the member is present, the object satisfies the schema (in place)."""

    applies = "object"
    in_place = True
    order = 70

    def __init__(self, when: str, node: XNode, path: Path) -> None:
        self.when = when
        self.node = node
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield self.node

    def props_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.props_code``: the schema's, when it applied."""
        return [f"if {g.const(self.when)} in {v}: s |= {g.evaluated(self.node, 'props', v, checked=True)}"]

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [f"if {g.const(self.when)} in {v} and not {g.test(self.node, v)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        return [f"if {g.const(self.when)} in {v}:", *("    " + x for x in g.check_slow(self.node, v, ip))]


def kw_dependent_schemas(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | list[Part] | None:
    """``dependentSchemas``: an object of name → schema."""
    nodes = schema_map(ctx, value, path, "dependentSchemas")
    if nodes is None:
        return None
    return [DependentSchemas(when, node, (*path, when)) for when, node in nodes.items()]


def kw_dependencies(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | list[Part] | None:
    """draft-07 ``dependencies``: each member a list of names (required) or a schema."""
    if type(value) is not dict:
        ctx.finding(VALIDATION, "dependencies", path, "`dependencies` must be an object")
        return None
    parts: list[Part] = []
    complete = True
    for when, dep in value.items():
        if ctx.spent:
            return None
        if type(dep) is list:
            names = _names(ctx, dep, (*path, when), "dependencies")
            if names is None:
                complete = False
            elif names:
                parts.append(Required("dependencies", names, (*path, when), when))
        else:
            node = ctx.sub(dep, (*path, when))
            if node is None:
                complete = False
            else:
                parts.append(DependentSchemas(when, node, (*path, when)))
    return parts if complete else None


class Count(Part):
    """``minProperties`` / ``maxProperties`` / ``minItems`` / ``maxItems``: a bound on ``len``."""

    order = 15

    def __init__(self, keyword: str, limit: int, path: Path, applies: str) -> None:
        self.keyword = keyword
        self.limit = limit
        self.path = path
        self.applies = applies  # type: ignore[misc]
        self.op = ">=" if keyword.startswith("min") else "<="

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [f"if not len({v}) {self.op} {g.const(self.limit)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        what = (
            ("property" if self.limit == 1 else "properties")
            if self.applies == "object"
            else ("item" if self.limit == 1 else "items")
        )
        tail = f" must have {'at least' if self.op == '>=' else 'at most'} {self.limit} {what} ({self.keyword})"
        return [f"if not len({v}) {self.op} {g.const(self.limit)}:", "    " + g.fail(self.keyword, self.path, ip, tail)]


def kw_count(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``min/maxProperties``, ``min/maxItems``: a non-negative integer."""
    limit = non_negative(ctx, value, path)
    if limit is None:
        return None
    keyword = str(path[-1])
    return Count(keyword, limit, path, "object" if keyword.endswith("Properties") else "array")


# --- quick tests (verdict-only walk; see ``ir.Keyword.quick``) ------------------------------


def _quick_names(value: Any) -> bool:
    if type(value) is not list:
        return False
    for name in value:
        if type(name) is not str:
            return False
    return len(set(value)) == len(value)


def quick_required(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``required`` as :func:`kw_required` accepts it: a list of unique strings."""
    if type(value) is not list:  # _quick_names, inline: nearly every object schema has one
        return False
    for name in value:
        if type(name) is not str:
            return False
    return len(set(value)) == len(value)


def quick_dependent_required(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``dependentRequired``: an object of lists of unique strings."""
    return type(value) is dict and all(type(k) is str and _quick_names(v) for k, v in value.items())


def quick_dependencies(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """draft-07 ``dependencies``: each member a list of unique strings or a clean schema."""
    if type(value) is not dict:
        return False
    for name, dep in value.items():
        if type(name) is not str:
            return False
        if type(dep) is list:
            if not _quick_names(dep):
                return False
        elif not walk.clean(dep, depth + 1):
            return False
    return True


# --- the rows (``ir.Keyword``; registered by ``table.KEYWORDS``) ------------------------------

ROWS: Final = (
    Keyword("propertyNames", ALL, kw_property_names, quick_schema, emits=(PropertyNames,)),
    Keyword("required", ALL, kw_required, quick_required, BOTH, types=OBJECT, emits=(Required,)),
    Keyword("minProperties", ALL, kw_count, quick_count, emits=(Count,)),
    Keyword("maxProperties", ALL, kw_count, quick_count, emits=(Count,)),
    Keyword("dependentRequired", NEW, kw_dependent_required, quick_dependent_required, emits=(Required,)),
    Keyword("dependentSchemas", NEW, kw_dependent_schemas, quick_schemas, emits=(DependentSchemas,)),
    Keyword("dependencies", OLD, kw_dependencies, quick_dependencies, emits=(Required, DependentSchemas)),
)
"""Objects, but their members (:mod:`.kw_members`)."""
