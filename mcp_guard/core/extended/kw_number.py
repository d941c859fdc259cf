"""Numeric keywords: ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``,
``multipleOf`` (2020-12 validation vocabulary; the same in draft-06, draft-07, 2019-09).

Exact (E1): the bound is the literal's mathematical value (``values.exact_number``) and the
comparison is Python's exact mixed ``int``/``float``/``Decimal`` comparison; ``multipleOf``
divides exactly (``values.is_multiple``). They apply to numbers only (never booleans).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

from ..report import VALIDATION
from .ir import ALL, BOTH, NUMERIC, Ctx, Emitter, Keyword, Part, Path, Walk
from .values import double_ratio, exact_number, is_multiple, literal, multiple_accept, show_number

__all__ = ["Bound", "MultipleOf", "kw_bound", "kw_multiple_of", "subset_bound"]

_BOUNDS = {
    # keyword: (operator the value must satisfy against the bound, sign for the message)
    "minimum": (">=", "≥"),
    "maximum": ("<=", "≤"),
    "exclusiveMinimum": (">", ">"),
    "exclusiveMaximum": ("<", "<"),
}


class Bound(Part):
    """One of the four bounds: ``value <op> bound``, exactly."""

    applies = "number"

    def __init__(self, keyword: str, bound: int | float | Decimal, path: Path) -> None:
        self.keyword = keyword
        self.bound = bound
        self.path = path
        self.op, self.sign = _BOUNDS[keyword]

    def _test(self, g: Emitter, v: str) -> str:
        if g.exact:  # ``v`` holds an exact value (int or Decimal): compare with the bound's literal
            return f"{v} {self.op} {g.const(literal(self.bound))}"
        if type(self.bound) is Decimal:  # a float then stands for its literal's decimal (values.literal)
            return f"{g.const(literal)}({v}) {self.op} {g.const(self.bound)}"
        return f"{v} {self.op} {g.const(self.bound)}"  # double against double orders as their literals do

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [f"if not {self._test(g, v)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        tail = f" must be {self.sign} {show_number(self.bound)} ({self.keyword})"
        return [f"if not {self._test(g, v)}:", "    " + g.fail(self.keyword, self.path, ip, tail)]


def kw_bound(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """A bound: a number (not a boolean), any magnitude within the digit limit (E1)."""
    keyword = str(path[-1])
    exact = exact_number(value)
    if exact is None:
        ctx.finding(VALIDATION, keyword, path, f"`{keyword}` must be a number")
        return None
    return Bound(keyword, exact, path)


def subset_bound(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> bool:
    """A bound under ``standard``/``strict`` (decisions 6, 8): a double, finite, never a boolean."""
    t = type(value)
    if t is int or (t is float and value - value == 0):
        return True
    ctx.finding(VALIDATION, str(path[-1]), path, f"`{path[-1]}` must be a number")
    return False


class MultipleOf(Part):
    """``multipleOf``: the value divided by the divisor is an integer, exactly."""

    applies = "number"

    def __init__(self, divisor: int | float | Decimal, path: Path) -> None:
        self.divisor = divisor
        self.path = path

    def _test(self, g: Emitter, v: str) -> str:
        divisor, general = g.const(self.divisor), f"{g.const(is_multiple)}({v}, {g.const(self.divisor)})"
        if type(self.divisor) is int:
            return f"(({v} % {divisor} == 0) if type({v}) is int else {general})"
        ratio = double_ratio(self.divisor)
        if ratio is None:
            return general
        # Inline (per value): a double's sure test of ``is_multiple``, and an int's remainder
        # (``value * q % p``; always 0 when ``p`` is 1); anything else asks ``is_multiple``.
        p, q, r, s = ratio
        names = (str(p) if p == 1 else g.const(p), g.const(q), g.const(r), str(s) if s == 1 else g.const(s))
        whole = "True" if p == 1 else f"{v} * {names[1]} % {names[0]} == 0"
        sure = multiple_accept(v, names, g.name("mt"), g.name("mn"))
        return f"(({whole}) if type({v}) is int else ({sure} or {general}))"

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [f"if not {self._test(g, v)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        tail = f" must be a multiple of {show_number(self.divisor)} (multipleOf)"
        return [f"if not {self._test(g, v)}:", "    " + g.fail("multipleOf", self.path, ip, tail)]


def kw_multiple_of(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``multipleOf``: a number greater than 0."""
    exact = exact_number(value)
    if exact is None or exact <= 0:
        ctx.finding(VALIDATION, "multipleOf", path, "`multipleOf` must be a number greater than 0")
        return None
    return MultipleOf(exact, path)


# --- quick tests (verdict-only walk; see ``ir.Keyword.quick``) ------------------------------


def quick_bound(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """A bound as :func:`kw_bound` accepts it: an ``int`` or a finite ``float``."""
    t = type(value)
    return t is int or (t is float and value - value == 0)


def quick_multiple_of(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``multipleOf`` as :func:`kw_multiple_of` accepts it: a number greater than 0."""
    t = type(value)
    return (t is int or (t is float and value - value == 0)) and value > 0


# --- the rows (``ir.Keyword``; registered by ``table.KEYWORDS``) ------------------------------

ROWS: Final = (
    Keyword("minimum", ALL, kw_bound, quick_bound, BOTH, subset_bound, types=NUMERIC, emits=(Bound,)),
    Keyword("maximum", ALL, kw_bound, quick_bound, emits=(Bound,)),
    Keyword("exclusiveMinimum", ALL, kw_bound, quick_bound, emits=(Bound,)),
    Keyword("exclusiveMaximum", ALL, kw_bound, quick_bound, emits=(Bound,)),
    Keyword("multipleOf", ALL, kw_multiple_of, quick_multiple_of, emits=(MultipleOf,)),
)
"""Numbers."""
