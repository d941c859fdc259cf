"""``unevaluatedProperties`` and ``unevaluatedItems`` (2020-12 unevaluated vocabulary): the
members/items that no adjacent keyword, and no in-place subschema that holds, evaluated must
satisfy the schema. What was evaluated is collected by each keyword's own ``props_code`` /
``items_code`` (``ir.Part``), through ``gen.Gen.evaluated``; nothing is analysed per call
beyond that.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Final

from .ir import NEW, Ctx, Emitter, Keyword, Part, Path, XNode
from .kw_members import quick_schema

__all__ = ["UnevaluatedItems", "UnevaluatedProperties", "kw_unevaluated_items", "kw_unevaluated_properties"]

_FALSE_TAIL = {
    "unevaluatedProperties": " is not allowed: no keyword of the schema evaluates this property "
    "(unevaluatedProperties: false)",
    "unevaluatedItems": " is not allowed: no keyword of the schema evaluates this item (unevaluatedItems: false)",
}


class _Unevaluated(Part):
    """Both keywords: one loop over the members (items) the siblings did not evaluate, each held to
    the schema. A subclass names its keyword, what ``Gen.evaluated`` collects (``kind``), the loop's
    head, the test that a member is unevaluated, and a member's pointer."""

    order = 99  # after every sibling: they decide what is evaluated
    memo = True  # enclosing unevaluated* ask again: once per value (Gen.memoized)
    keyword: ClassVar[str]
    kind: ClassVar[str]
    unseen: ClassVar[str]  # the member ``y`` was not evaluated (names the loop's locals)

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

    def _head(self, g: Emitter, v: str, evaluated: str) -> list[str]:
        """Bind what the siblings evaluated, and loop with the member in ``y``."""
        raise NotImplementedError

    def _pointer(self, ip: str) -> str:
        """An expression for the member's JSON Pointer."""
        raise NotImplementedError

    def _loop(self, g: Emitter, v: str) -> list[str]:
        assert self.owner is not None
        return self._head(g, v, g.evaluated(self.owner, self.kind, v, skip=self, checked=True))

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        test = f"    if {self.unseen} and not {g.test(self.node, 'y')}: return False"
        return [*g.charge(v, [self.node]), *self._loop(g, v), test]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        if self.node.boolean is False:
            member = [
                g.fail(self.keyword, self.path, "p", _FALSE_TAIL[self.keyword]),
                "if not json_once(y, w): w[1] = 1",
            ]
        else:
            member = g.check_slow(self.node, "y", "p")
        return [
            *self._loop(g, v),
            f"    if {self.unseen} and not {g.test(self.node, 'y')}:",
            f"        p = {self._pointer(ip)}",
            *("        " + x for x in member),
        ]


class UnevaluatedProperties(_Unevaluated):
    """``unevaluatedProperties``: a schema for the members nothing else evaluated."""

    applies = "object"
    keyword = "unevaluatedProperties"
    kind = "props"
    unseen = "k not in s"

    def props_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.props_code``: every member (the rest are checked here)."""
        return [f"s.update({v})"]

    def _head(self, g: Emitter, v: str, evaluated: str) -> list[str]:
        return [f"s = {evaluated}", f"for k, y in {v}.items():"]

    def _pointer(self, ip: str) -> str:
        return f"child({ip}, k)"


class UnevaluatedItems(_Unevaluated):
    """``unevaluatedItems``: a schema for the items nothing else evaluated."""

    applies = "array"
    keyword = "unevaluatedItems"
    kind = "items"
    unseen = "i not in c"

    def items_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.items_code``: every item."""
        return [f"p = len({v})"]

    def _head(self, g: Emitter, v: str, evaluated: str) -> list[str]:
        return [f"p, c = {evaluated}", f"for i in range(p, len({v})):", f"    y = {v}[i]"]

    def _pointer(self, ip: str) -> str:
        return f'{ip} + "/" + str(i)'


def kw_unevaluated_properties(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``unevaluatedProperties``: a schema."""
    node = ctx.sub(value, path)
    return None if node is None else UnevaluatedProperties(node, path)


def kw_unevaluated_items(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``unevaluatedItems``: a schema."""
    node = ctx.sub(value, path)
    return None if node is None else UnevaluatedItems(node, path)


# --- the rows (``ir.Keyword``; registered by ``table.KEYWORDS``) ------------------------------

ROWS: Final = (
    Keyword(
        "unevaluatedProperties",
        NEW,
        kw_unevaluated_properties,
        quick_schema,
        emits=(UnevaluatedProperties,),
    ),
    Keyword("unevaluatedItems", NEW, kw_unevaluated_items, quick_schema, emits=(UnevaluatedItems,)),
)
"""``unevaluatedProperties``, ``unevaluatedItems``."""
