"""Array keywords: ``prefixItems``, ``items`` (and draft-07's list form with
``additionalItems``), ``contains`` with ``minContains``/``maxContains``, ``uniqueItems``,
``minItems``/``maxItems`` (the latter via ``kw_object.kw_count``). They apply to arrays only.

``prefixItems``/``items``/``additionalItems`` share one loop: each rule returns its part and
:func:`finish` folds them into one :class:`Elements` part.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any, Final

from ..json_values import TooLarge, canonical_sized, max_depth
from ..report import UNSUPPORTED, VALIDATION
from .ir import ALL, ARRAY, BOTH, NEW, TUPLE_ITEMS, Ctx, Emitter, Keyword, Part, Path, Walk, XNode
from .kw_members import quick_schema
from .kw_object import Count, kw_count
from .kw_string import count_of, non_negative, quick_count
from .writer import OverBudget

_NO_RECORDS: Any = MappingProxyType({})
"""The records of a call whose fast loops all passed (its cell's ``w[4]`` is None): read only."""


__all__ = [
    "Contains",
    "Elements",
    "Prefix",
    "Rest",
    "Unique",
    "finish",
    "first_duplicate",
    "schema_list",
    "subset_items",
]

_UNIQUE_DEPTH = 200
"""How deep ``uniqueItems`` compares items; an item nested deeper refuses the call (``TooLarge``:
the budget refusal), never a verdict the guard did not establish (under ``not`` either would pass)."""


class Prefix(Part):
    """``prefixItems`` (draft-07: ``items`` as a list): one node per leading position (folded)."""

    applies = "array"

    def __init__(self, nodes: list[XNode], path: Path) -> None:
        self.items = nodes
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        return iter(self.items)


class Rest(Part):
    """``items`` (2020-12; draft-07 single schema) or draft-07 ``additionalItems`` (folded)."""

    applies = "array"

    def __init__(self, node: XNode, path: Path) -> None:
        self.node = node
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield self.node


def schema_list(ctx: Ctx, value: Any, path: Path, keyword: str) -> list[XNode] | None:
    """A keyword's non-empty list of schemas, each classified (``prefixItems``, ``allOf``, ``anyOf``, …)."""
    if type(value) is not list or not value:
        ctx.finding(VALIDATION, keyword, path, f"`{keyword}` must be a non-empty list of schemas")
        return None
    nodes = []
    for i, sub in enumerate(value):
        if ctx.spent:
            return None  # past the subschema budget (one finding says so)
        nodes.append(ctx.sub(sub, (*path, i)))
    return None if any(n is None for n in nodes) else nodes  # type: ignore[return-value]


def kw_prefix_items(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``prefixItems`` (2020-12): a non-empty list of schemas for the leading items."""
    nodes = schema_list(ctx, value, path, "prefixItems")
    return None if nodes is None else Prefix(nodes, path)


def kw_items(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``items``: 2020-12, one schema for the items after ``prefixItems``; draft-07/2019-09,
    one schema for every item, or a list of schemas for the leading items."""
    if type(value) is list:
        if ctx.dialect == "2020-12":
            ctx.finding(
                UNSUPPORTED, "items", path, "in 2020-12 `items` takes one schema; the list form is `prefixItems`"
            )
            return None
        nodes = schema_list(ctx, value, path, "items")
        return None if nodes is None else Prefix(nodes, path)
    node = ctx.sub(value, path)
    return None if node is None else Rest(node, path)


def subset_items(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> bool:
    """``items`` under ``standard``/``strict``: one schema; the tuple form is refused (decision 9)."""
    if type(value) is list:
        ctx.finding(UNSUPPORTED, "items", path, "tuple-form `items` (a list of schemas) is not supported")
        return False
    return True


def kw_additional_items(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``additionalItems`` (draft-07, 2019-09): the items after a list-form ``items``; without
    one the dialect ignores it (its schema is still checked)."""
    node = ctx.sub(value, path)
    if node is None or type(schema.get("items")) is not list:
        return None
    return Rest(node, path)


class Elements(Part):
    """One pass over an array's items applying the prefix nodes and the rest node; every item is
    checked to be JSON (``covers``)."""

    applies = "array"
    covers = True
    order = 60

    def __init__(self, prefix: Prefix | None, rest: Rest | None) -> None:
        self.prefix = prefix.items if prefix else []
        self.rest = rest
        self.path = (prefix or rest).path  # type: ignore[union-attr]
        self.loops = rest is not None and not self.prefix  # one loop over every item (``Gen.loop_key``)
        self.unique: Unique | None = None  # ``uniqueItems`` of items the loop proved exact strings (``finish``)

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield from self.prefix
        if self.rest is not None:
            yield self.rest.node

    def items_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.items_code``: the prefix, or every item when a rest schema applies."""
        if self.rest is not None:
            return [f"p = len({v})"]
        n = len(self.prefix)
        return [f"if p < {n}: p = min(len({v}), {n})"]

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        lines = g.charge(v, list(self.nodes()))
        n = len(self.prefix)
        if n:
            fns = g.late_tuple([g.vfn(node) for node in self.prefix])
            lines += [f"for f, y in zip({fns}, {v}):", "    if not f(y, w): return False"]
        body = g.check_fast(self.rest.node, "y") if self.rest else ["if not json_once(y, w): return False"]
        if self.rest is None and not n:
            return [f"if not json_once({v}, w): return False"]
        if self.rest is not None and not n:  # (an object item schema stands inline)
            after = self.unique.after_strings(v) if self.unique is not None else []
            return lines + g.loop_fast(self.rest.node, v, g.loop_key_of(self)) + after
        lines.append(f"for y in ({v}[{n}:] if len({v}) > {n} else ()):" if n else f"for y in {v}:")
        lines.extend("    " + x for x in body)
        return lines

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        lines = g.charge(v, list(self.nodes()))
        n = len(self.prefix)
        if n:
            vs = g.late_tuple([g.vfn(node) for node in self.prefix])
            cs = g.late_tuple([g.cfn(node) for node in self.prefix])
            lines += [
                f"for i, (f, c, y) in enumerate(zip({vs}, {cs}, {v})):",
                f'    if not f(y, w): c(y, {ip} + "/" + str(i), out, w)',
            ]
        if self.loops:  # from where the fast path's loop stopped (``Gen.loop_key``): the items before passed
            start = f"(w[4] or {g.const(_NO_RECORDS)}).get(({g.loop_key_of(self)}, id({v})), 0)"  # (None: no record)
            lines.append(f"for i in range({start}, len({v})):")
        else:
            lines.append(f"for i in range({n}, len({v})):")
        lines.append(f"    y = {v}[i]")
        if self.rest is None:
            lines.append("    if not json_once(y, w): w[1] = 1")
        elif g.inlinable(self.rest.node) or self.rest.node.boolean is False:
            lines.append(f'    p = {ip} + "/" + str(i)')
            lines.extend("    " + x for x in g.check_slow(self.rest.node, "y", "p"))
        else:  # one call, made only for an item the fast test refuses: its pointer is built for it alone
            lines.extend("    " + x for x in g.check_slow(self.rest.node, "y", f'{ip} + "/" + str(i)'))
        return lines


def finish(parts: list[Part]) -> list[Part]:
    """Fold the prefix and rest parts into one :class:`Elements` loop."""
    prefix = next((p for p in parts if type(p) is Prefix), None)
    rest = next((p for p in parts if type(p) is Rest), None)
    if prefix is None and rest is None:
        return parts
    elements = Elements(prefix, rest)
    unique = next((p for p in parts if type(p) is Unique), None)
    if unique is not None and rest is not None and elements.loops and _strings(rest.node):
        unique.strings, elements.unique = True, unique  # its fast test after the loop: see Unique
    return [*(p for p in parts if type(p) not in (Prefix, Rest)), elements]


def _strings(node: XNode) -> bool:
    """Whether ``node``'s fast test passes exact ``str`` values only (its ``type`` is ``string``)."""
    return node.boolean is None and not node.trivial and node.types == frozenset({"string"})


class Contains(Part):
    """``contains`` with ``minContains`` (default 1) and ``maxContains``: how many items match."""

    applies = "array"
    order = 70

    def __init__(self, node: XNode, low: int, high: int | None, path: Path, low_keyword: str, annotates: bool) -> None:
        self.annotates = annotates
        self.node = node
        self.low = low
        self.high = high
        self.path = path
        self.low_keyword = low_keyword

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield self.node

    def items_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.items_code``: the indices of the items that match (2020-12; 2019-09's
        ``contains`` evaluates no item for ``unevaluatedItems``)."""
        if not self.annotates:
            return []
        return [f"c.update(i for i, y in enumerate({v}) if {g.test(self.node, 'y')})"]

    def _count(self, g: Emitter, v: str, early: bool) -> list[str]:
        lines = ["m = 0", f"for y in {v}:", f"    if {g.test(self.node, 'y')}:", "        m += 1"]
        if early and self.high is None:
            lines.append(f"        if m >= {g.const(self.low)}: break")
        return lines

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        if self.low == 0 and self.high is None:
            return []
        lines = [*g.charge(v, [self.node]), *self._count(g, v, True), f"if m < {g.const(self.low)}: return False"]
        if self.high is not None:
            lines.append(f"if m > {g.const(self.high)}: return False")
        return lines

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        if self.low == 0 and self.high is None:
            return []
        at = self.path[:-1]
        what = f"matching the schema at {self.schema_path}"
        low_tail = f" must contain at least {self.low} item{'s' if self.low != 1 else ''} {what} ({self.low_keyword})"
        lines = [*self._count(g, v, False), f"if m < {g.const(self.low)}:"]
        lines.append("    " + g.fail(self.low_keyword, (*at, self.low_keyword), ip, low_tail))
        if self.high is not None:
            high_tail = f" must contain at most {self.high} item{'s' if self.high != 1 else ''} {what} (maxContains)"
            lines += [
                f"if m > {g.const(self.high)}:",
                "    " + g.fail("maxContains", (*at, "maxContains"), ip, high_tail),
            ]
        return lines


def kw_contains(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``contains``: a schema at least ``minContains`` (default 1) and at most ``maxContains`` items match."""
    node = ctx.sub(value, path)
    if node is None:
        return None
    low, low_keyword, high = 1, "contains", None
    if ctx.dialect in ("2020-12", "2019-09"):
        raw_low, raw_high = schema.get("minContains"), schema.get("maxContains")
        if raw_low is not None:
            count = count_of(raw_low)
            if count is None:
                return None  # its own rule (``kw_contains_bound``) reports it: the schema is malformed
            low, low_keyword = count, "minContains"
        if raw_high is not None:
            high = count_of(raw_high)
            if high is None:
                return None
    return Contains(node, low, high, path, low_keyword, ctx.dialect == "2020-12")


def kw_contains_bound(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``minContains`` / ``maxContains``: a non-negative integer; applied by ``contains`` (ignored without it)."""
    non_negative(ctx, value, path)
    return None


_PLAIN: frozenset[type] = frozenset({str, int})


def first_duplicate(items: list[Any], w: list[Any]) -> tuple[int, int] | None:
    """The first pair of equal items (JSON equality, decisions 6 and 7), or ``None``.

    Linear: one canonical key per item, each bounded by :data:`_UNIQUE_DEPTH`, the work of
    keying a container item charged to the call's budget (``json_values.TooLarge`` or
    ``OverBudget`` past either: the call is refused).
    """
    if set(map(type, items)) <= _PLAIN and len(set(items)) == len(items):
        return None  # strings and integers: Python's equality is JSON's, and a set found no two equal
    seen: dict[Any, int] = {}
    for index, item in enumerate(items):
        if type(item) is dict or type(item) is list:
            if max_depth(item, _UNIQUE_DEPTH) > _UNIQUE_DEPTH:
                raise TooLarge(f"an item nested more than {_UNIQUE_DEPTH} levels deep")
            key, size = canonical_sized(item, _UNIQUE_DEPTH, w[0])
            w[0] -= size  # the work of keying it (E6)
            if w[0] < 0:
                raise OverBudget
        else:
            key = canonical_sized(item, 0, 1)[0]
        found = seen.setdefault(key, index)
        if found != index:
            return found, index
    return None


class Unique(Part):
    """``uniqueItems: true``: no two items are equal."""

    applies = "array"
    order = 30

    def __init__(self, path: Path) -> None:
        self.path = path
        self.strings = False  # every item is of an ``items`` schema of ``type: string`` (``finish``)

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``. Items of ``type: string``: tested after the items loop (:meth:`after_strings`)."""
        if self.strings:
            return []
        return [f"if len({v}) > 1 and {g.const(first_duplicate)}({v}, w) is not None: return False"]

    def after_strings(self, v: str) -> list[str]:
        """The fast test where the items loop has proven every item an exact ``str`` (it returned
        False otherwise): Python's string equality is JSON's (code points), so a ``set`` with fewer
        members than the array found two equal items. No call, no charge (keying a string is
        its hash; :func:`first_duplicate` charges strings nothing either)."""
        return [f"if len({v}) > 1 and len(set({v})) < len({v}): return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        head, mid, end = (
            g.const(" must not hold equal items (uniqueItems): items "),
            g.const(" and "),
            g.const(" are equal"),
        )
        message = f"where({ip}) + {head} + str(d[0]) + {mid} + str(d[1]) + {end}"
        return [
            f"d = {g.const(first_duplicate)}({v}, w) if len({v}) > 1 else None",
            "if d is not None:",
            "    " + g.issue("uniqueItems", self.schema_path, ip, message),
        ]


def kw_unique_items(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``uniqueItems``: a boolean; ``true`` forbids equal items."""
    if type(value) is not bool:
        ctx.finding(VALIDATION, "uniqueItems", path, "`uniqueItems` must be a boolean")
        return None
    return Unique(path) if value else None


# --- quick tests (verdict-only walk; see ``ir.Keyword.quick``) ------------------------------


def quick_schema_list(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """A non-empty list of clean schemas (``prefixItems``, ``allOf``, ``anyOf``, ``oneOf``)."""
    if type(value) is not list or not value:
        return False
    depth += 1
    for sub in value:
        if not walk.clean(sub, depth):
            return False
    return True


def quick_items(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``items`` as :func:`kw_items` accepts it in the walk's dialect."""
    if type(value) is list:
        return walk.dialect != "2020-12" and quick_schema_list(value, schema, depth, walk)
    return walk.clean(value, depth + 1)


def quick_unique_items(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``uniqueItems``: a boolean."""
    return type(value) is bool


# --- the rows (``ir.Keyword``; registered by ``table.KEYWORDS``) ------------------------------

ROWS: Final = (
    Keyword("prefixItems", frozenset({"2020-12"}), kw_prefix_items, quick_schema_list, emits=(Prefix,)),
    Keyword("items", ALL, kw_items, quick_items, BOTH, subset_items, types=ARRAY, emits=(Rest, Prefix)),
    Keyword("additionalItems", TUPLE_ITEMS, kw_additional_items, quick_schema, emits=(Rest,)),
    Keyword("contains", ALL, kw_contains, quick_schema, emits=(Contains,)),
    Keyword("minContains", NEW, kw_contains_bound, quick_count),  # read by ``contains``'s part
    Keyword("maxContains", NEW, kw_contains_bound, quick_count),
    Keyword("uniqueItems", ALL, kw_unique_items, quick_unique_items, emits=(Unique,)),
    Keyword("minItems", ALL, kw_count, quick_count, emits=(Count,)),
    Keyword("maxItems", ALL, kw_count, quick_count, emits=(Count,)),
)
"""Arrays (``prefixItems`` and ``items`` fold into one :class:`Elements` loop: :func:`finish`)."""
