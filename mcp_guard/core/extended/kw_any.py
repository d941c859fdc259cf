"""``type``, ``enum``, ``const``: the keywords that apply to a value of any type (2020-12
validation vocabulary; the same in draft-06, draft-07 and 2019-09)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Final

from ..budget import MAX_ENUM_CHOICES, MAX_ENUM_VALUES, MAX_SCHEMA_DEPTH, MAX_WORK
from ..json_values import Inexact, TooLarge, canonical, json_type_name, max_depth
from ..report import UNSUPPORTED, VALIDATION
from .ir import ALL, BOTH, Ctx, Emitter, Keyword, Part, Path, Walk
from .values import UNREACHABLE, exact_value, show_number

__all__ = [
    "SUBSET_TYPES",
    "Choices",
    "TypePart",
    "ValueBudget",
    "kw_const",
    "kw_enum",
    "kw_type",
    "show_value",
    "subset_enum",
    "subset_type",
]

TYPE_NAMES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


class TypePart(Part):
    """``type``: the node reads ``names`` into ``XNode.types``; the generator tests it first."""

    applies = "type"

    def __init__(self, names: frozenset[str], path: Path) -> None:
        self.names = names
        self.path = path


def kw_type(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``type``: a type name or a non-empty list of unique names (``null`` included)."""
    names = value if type(value) is list else [value]
    if type(value) is list and not value:
        ctx.finding(VALIDATION, "type", path, "`type` must not be an empty list")
        return None
    if any(type(n) is not str or n not in TYPE_NAMES for n in names):
        ctx.finding(VALIDATION, "type", path, "`type` must name JSON Schema types (or be a list of them)")
        return None
    if len(set(names)) != len(names):
        ctx.finding(VALIDATION, "type", path, "`type` must not repeat a name")
        return None
    return TypePart(frozenset(names), path)


SUBSET_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
"""The ``type`` values ``standard`` and ``strict`` enforce (spec table, ``type``; ``null`` is not one)."""


def subset_type(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> bool:
    """``type`` under ``standard``/``strict``: one string naming a type of :data:`SUBSET_TYPES` (spec
    table; decisions 8, 9)."""
    if type(value) is list:
        ctx.finding(UNSUPPORTED, "type", path, "type lists (a value of several types) are not supported")
    elif type(value) is not str:
        ctx.finding(VALIDATION, "type", path, f"`type` must be a string, not {json_type_name(value)}")
    elif value == "null":
        ctx.finding(UNSUPPORTED, "type", path, 'type "null" is not supported')
    elif value not in SUBSET_TYPES:
        ctx.finding(VALIDATION, "type", path, "`type` does not name a JSON Schema type")
    else:
        return True
    return False


_SHOWN = 12


def show_value(value: Any) -> str:
    """A schema value (an ``enum`` choice, a ``const``) for a message; bounded length.

    A number is shown exactly (``values.show_number``: ``1e308``, never "too long to show"); a literal
    no double holds (``Inexact``) is shown as written in the schema when that fits in 40 characters,
    else by its exact value. Any other value is its JSON text, cut at 40 characters (``…``).
    """
    t = type(value)
    if t is Inexact:
        if len(value.text) <= 40:
            return str(value.text)
        try:
            return show_number(Decimal(value.text))
        except ArithmeticError:  # not a number: never from the relay's parser
            return "(a value too long to show)"
    if t is int or t is float or t is Decimal:
        return show_number(value)
    try:
        text = json.dumps(value, ensure_ascii=False, default=lambda v: v.text if type(v) is Inexact else str(v))
    except ValueError:  # an int past the digit limit inside a container
        return "(a value too long to show)"
    return text if len(text) <= 40 else text[:37] + "…"


class Choices(Part):
    """``enum`` / ``const``: the value equals one of the choices (decisions 6, 7; E1)."""

    applies = "any"
    order = 10

    def __init__(self, keyword: str, choices: list[Any], path: Path, inexact: bool = True) -> None:
        self.keyword = keyword
        self.path = path
        self.choices = choices
        self.strings: frozenset[str] | None = None
        self.keys: frozenset[Any] = frozenset()
        self.ints: frozenset[int] = frozenset()  # the int choices: an int argument among them matches at once
        self.depth = 0
        self.json_when_passed = (
            False  # passing the fast test proves the value a JSON string (gen skips its type dispatch)
        )
        if all(type(c) is str for c in choices):
            self.strings = frozenset(choices)
            self.json_when_passed = len(self.strings) != 1  # that test includes ``type(v) is str``
        else:
            # Literals no double holds become exact numbers (E1); without any, the choices are
            # keyed as they are (``canonical`` keeps shared sub-objects shared, and caps them).
            exact = [c for c in map(exact_value, choices) if c is not UNREACHABLE] if inexact else choices
            self.depth = max((max_depth(c, MAX_SCHEMA_DEPTH) for c in exact), default=0)
            self.keys = frozenset(canonical(c, self.depth, MAX_WORK) for c in exact)
            self.ints = frozenset(c for c in exact if type(c) is int)

    def _test(self, g: Emitter, v: str) -> str:
        if self.strings is not None:
            if len(self.strings) == 1:
                return f"{v} == {g.const(next(iter(self.strings)))}"
            if g.known == frozenset({"string"}):
                return f"{v} in {g.const(self.strings)}"
            return f"(type({v}) is str and {v} in {g.const(self.strings)})"
        full = f"(canonical_once({v}, {g.const(self.depth)}, w) in {g.const(self.keys)})"
        if self.ints and not g.ints_first:
            # An int equal to an int choice is that choice (decision 6: 1 == 1.0, never true); any
            # other value takes the canonical test.
            return f"((type({v}) is int and {v} in {g.const(self.ints)}) or {full})"
        return full

    def int_guard(self, g: Emitter, v: str) -> str | None:
        """An expression true when ``v`` is an int among the int choices (so a JSON value that
        passes), for a node of no other keyword: its tests then run only when this is false."""
        return f"(type({v}) is int and {v} in {g.const(self.ints)})" if self.ints else None

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [f"if not {self._test(g, v)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        if self.keyword == "const":
            tail = f" must be {show_value(self.choices[0])} (const)"
        elif self.choices:
            shown = ", ".join(show_value(c) for c in self.choices[:_SHOWN])
            more = len(self.choices) - _SHOWN
            tail = f" must be one of: {shown}{f' … and {more} more' if more > 0 else ''} (enum)"
        else:
            tail = " allows no value (empty enum)"
        return [f"if not {self._test(g, v)}:", "    " + g.fail(self.keyword, self.path, ip, tail)]


def _literals(choices: list[Any]) -> tuple[bool, bool]:
    """``(any Inexact literal, any past the digit limit)`` in the choices: iterative, each shared
    container visited once (so a Python caller's shared sub-objects cost their distinct containers)."""
    found = past = False
    seen: set[int] = set()
    stack = list(choices)
    while stack:
        item = stack.pop()
        t = type(item)
        if t is Inexact:
            found = True
            past = past or exact_value(item) is UNREACHABLE
        elif (t is dict or t is list) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.values() if t is dict else item)
    return found, past


class ValueBudget:
    """What is left of one schema's :data:`~mcp_guard.core.budget.MAX_ENUM_VALUES`: the JSON values
    (nodes, nested ones included, counted as trees) its ``enum`` and ``const`` keywords may hold.

    A classifier (or verdict-only walk) holds one as its ``values`` attribute for the whole
    document; a rule given a context without one counts against a fresh budget.
    """

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_ENUM_VALUES


def value_budget(holder: object) -> ValueBudget:
    """The :class:`ValueBudget` of a classifier or walk (its ``values`` attribute), or a fresh one."""
    found = getattr(holder, "values", None)
    return found if isinstance(found, ValueBudget) else ValueBudget()


_PAST = -1
""":func:`_measure`: more values than the budget holds."""


def _measure(choices: list[Any], left: int) -> tuple[int, int]:
    """``(values, depth)`` of ``choices``: their JSON values (every node, as a tree) and their
    container depth (a scalar: 0, ``[1]``: 1), walked iteratively in order.

    Stops as soon as the count passes ``left`` (``values`` is then :data:`_PAST`) or the depth
    passes :data:`MAX_SCHEMA_DEPTH` (``depth`` is then ``MAX_SCHEMA_DEPTH + 1``): the work is
    bounded by ``left`` nodes whatever the size of the value.
    """
    count = deepest = 0
    stack: list[Any] = [iter(choices)]
    while stack:
        for item in stack[-1]:
            count += 1
            if count > left:
                return _PAST, deepest
            t = type(item)
            if t is dict or t is list:
                if len(stack) > MAX_SCHEMA_DEPTH:
                    return count, MAX_SCHEMA_DEPTH + 1
                stack.append(iter(item.values() if t is dict else item))
                deepest = max(deepest, len(stack) - 1)
                break
        else:
            stack.pop()
    return count, deepest


def _counted(ctx: Ctx, keyword: str, choices: list[Any], path: Path) -> bool:
    """Charge ``choices`` to the schema's :class:`ValueBudget`; False after the finding when they
    pass it or nest deeper than :data:`MAX_SCHEMA_DEPTH` (``budget``; never walked past the limit)."""
    budget = value_budget(ctx)
    count, depth = _measure(choices, budget.left)
    if count == _PAST:
        budget.left = 0
        ctx.finding(
            UNSUPPORTED,
            keyword,
            path,
            f"the schema's `enum` and `const` values pass {MAX_ENUM_VALUES:,} JSON values (nested ones "
            "included) here, the guard's budget",
        )
        return False
    budget.left -= count
    if depth > MAX_SCHEMA_DEPTH:
        ctx.finding(UNSUPPORTED, keyword, path, f"`{keyword}` values nest deeper than {MAX_SCHEMA_DEPTH} levels")
        return False
    return True


def _choices(ctx: Ctx, keyword: str, choices: list[Any], path: Path) -> Part | None:
    if len(choices) > MAX_ENUM_CHOICES:
        ctx.finding(
            UNSUPPORTED, keyword, path, f"`{keyword}` has more than {MAX_ENUM_CHOICES} choices, the guard's budget"
        )
        return None
    if not _counted(ctx, keyword, choices, path):
        return None
    inexact, past = _literals(choices)
    if past:
        ctx.finding(VALIDATION, keyword, path, f"`{keyword}` holds a number literal past the guard's digit limit")
        return None
    try:
        return Choices(keyword, choices, path, inexact)
    except TooLarge:
        ctx.finding(
            UNSUPPORTED,
            keyword,
            path,
            f"`{keyword}` choices stand for more than {MAX_WORK:,} values counted as trees (shared sub-objects), "
            "the guard's budget",
        )
        return None


def kw_enum(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``enum``: a list of JSON values (empty allowed: rejects every value)."""
    if type(value) is not list:
        ctx.finding(VALIDATION, "enum", path, "`enum` must be a list")
        return None
    return _choices(ctx, "enum", value, path)


def subset_enum(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> bool:
    """``enum`` under ``standard``/``strict`` (decisions 6, 7): choices nesting within the depth
    limit (said in the subset's words). A number JSON cannot carry among them is the JSON scan's
    finding; the rule still builds the part (such a choice equals no argument: fail closed)."""
    if type(value) is not list or len(value) > MAX_ENUM_CHOICES or all(type(c) is str for c in value):
        return True  # the rule words a list that is not one, or too long
    count, depth = _measure(value, value_budget(ctx).left)  # the rule charges (and words) the count
    if count != _PAST and depth > MAX_SCHEMA_DEPTH:
        ctx.finding(UNSUPPORTED, "enum", path, f"`enum` choices nest deeper than {MAX_SCHEMA_DEPTH} levels")
        return False
    return True


def kw_const(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``const``: any JSON value; the instance must equal it."""
    return _choices(ctx, "const", [value], path)


# --- quick tests (verdict-only walk; see ``ir.Keyword.quick``) ------------------------------

_SCALARS: frozenset[type] = frozenset({str, int, bool, type(None)})


def _scalar(value: Any) -> bool:
    t = type(value)
    return t in _SCALARS or (t is float and value - value == 0)


def quick_type(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``type`` as :func:`kw_type` accepts it."""
    if type(value) is str:
        return value in TYPE_NAMES
    if type(value) is not list or not value:
        return False
    return all(type(n) is str and n in TYPE_NAMES for n in value) and len(set(value)) == len(value)


def quick_enum(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``enum`` of scalar choices (containers: the full classifier), within the schema's value budget."""
    if type(value) is not list or len(value) > MAX_ENUM_CHOICES:
        return False
    scalars = _SCALARS
    for choice in value:  # _scalar, inline: a listing's enums hold many choices
        t = type(choice)
        if t not in scalars and (t is not float or choice - choice != 0):
            return False
    return _charge(walk, len(value))


def quick_const(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``const`` of a scalar (containers: the full classifier)."""
    return _scalar(value) and _charge(walk, 1)


def _charge(walk: Walk, count: int) -> bool:
    """Charge ``count`` scalar values to the walk's :class:`ValueBudget`; False past it."""
    budget = value_budget(walk)
    budget.left -= count
    return budget.left >= 0


# --- the rows (``ir.Keyword``; registered by ``table.KEYWORDS``) ------------------------------

ROWS: Final = (
    Keyword("type", ALL, kw_type, quick_type, BOTH, subset_type, emits=(TypePart,)),
    Keyword("enum", ALL, kw_enum, quick_enum, BOTH, subset_enum, emits=(Choices,)),
    Keyword("const", ALL, kw_const, quick_const, emits=(Choices,)),
)
"""Any type: ``type`` (the node's ``types``), ``enum``, ``const``."""
