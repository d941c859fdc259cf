"""``unevaluatedProperties`` and ``unevaluatedItems`` (2020-12 unevaluated vocabulary): the
members/items that no adjacent keyword, and no in-place subschema that holds, evaluated must
satisfy the schema. What was evaluated is collected by each keyword's own ``props_code`` /
``items_code`` (``ir.Part``), through ``gen.Gen.evaluated``; nothing is analysed per call
beyond that.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .ir import Ctx, Part, Path, XNode

if TYPE_CHECKING:
    from .gen import Gen

__all__ = ["UnevaluatedItems", "UnevaluatedProperties", "kw_unevaluated_items", "kw_unevaluated_properties"]

_FALSE_TAIL = {
    "unevaluatedProperties": " is not allowed: no keyword of the schema evaluates this property "
    "(unevaluatedProperties: false)",
    "unevaluatedItems": " is not allowed: no keyword of the schema evaluates this item (unevaluatedItems: false)",
}


class _Unevaluated(Part):
    order = 99  # after every sibling: they decide what is evaluated
    memo = True  # enclosing unevaluated* ask again: once per value (Gen.memoized)

    def __init__(self, node: XNode, path: Path) -> None:
        self.node = node
        self.path = path
        self.owner: XNode | None = None

    def bind(self, node: XNode) -> None:
        """See ``Part.bind``."""
        self.owner = node

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield self.node

    def _siblings(self, g: Gen, v: str, kind: str) -> str:
        assert self.owner is not None
        return g.evaluated(self.owner, kind, v, skip=self, checked=True)

    def _slow_member(self, g: Gen, v: str, ip: str, keyword: str) -> list[str]:
        if self.node.boolean is False:
            return [g.fail(keyword, self.path, "p", _FALSE_TAIL[keyword]), f"if not json_once({v}, w): w[1] = 1"]
        return g.check_slow(self.node, v, "p")


class UnevaluatedProperties(_Unevaluated):
    """``unevaluatedProperties``: a schema for the members nothing else evaluated."""

    applies = "object"

    def props_code(self, g: Gen, v: str) -> list[str]:
        """See ``Part.props_code``: every member (the rest are checked here)."""
        return [f"s.update({v})"]

    def fast(self, g: Gen, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [
            *g.charge(v, [self.node]),
            f"s = {self._siblings(g, v, 'props')}",
            f"for k, y in {v}.items():",
            f"    if k not in s and not {g.test(self.node, 'y')}: return False",
        ]

    def slow(self, g: Gen, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        return [
            f"s = {self._siblings(g, v, 'props')}",
            f"for k, y in {v}.items():",
            f"    if k not in s and not {g.test(self.node, 'y')}:",
            f"        p = child({ip}, k)",
            *("        " + x for x in self._slow_member(g, "y", ip, "unevaluatedProperties")),
        ]


class UnevaluatedItems(_Unevaluated):
    """``unevaluatedItems``: a schema for the items nothing else evaluated."""

    applies = "array"

    def items_code(self, g: Gen, v: str) -> list[str]:
        """See ``Part.items_code``: every item."""
        return [f"p = len({v})"]

    def fast(self, g: Gen, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [
            *g.charge(v, [self.node]),
            f"p, c = {self._siblings(g, v, 'items')}",
            f"for i in range(p, len({v})):",
            f"    if i not in c and not {g.test(self.node, v + '[i]')}: return False",
        ]

    def slow(self, g: Gen, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        return [
            f"p, c = {self._siblings(g, v, 'items')}",
            f"for i in range(p, len({v})):",
            f"    y = {v}[i]",
            f"    if i not in c and not {g.test(self.node, 'y')}:",
            f'        p = {ip} + "/" + str(i)',
            *("        " + x for x in self._slow_member(g, "y", ip, "unevaluatedItems")),
        ]


def kw_unevaluated_properties(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``unevaluatedProperties``: a schema."""
    node = ctx.sub(value, path)
    return None if node is None else UnevaluatedProperties(node, path)


def kw_unevaluated_items(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``unevaluatedItems``: a schema."""
    node = ctx.sub(value, path)
    return None if node is None else UnevaluatedItems(node, path)
