"""String keywords: ``minLength``, ``maxLength`` (code points, E2), ``pattern`` (ECMA-262, E3),
``format`` (asserted for the formats 2020-12 defines, E4). They apply to strings only."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Final

from ..ecma_regex import Pattern, PatternError, compile_pattern
from ..formats import FORMATS, format_checker, format_cost, format_cost_terms, format_shortcut
from ..report import UNSUPPORTED, VALIDATION
from .ir import ALL, Ctx, Emitter, Keyword, Part, Path, Walk
from .values import exact_number
from .writer import OverBudget

__all__ = ["Format", "Length", "PatternPart", "kw_format", "kw_length", "kw_pattern", "search"]


class Length(Part):
    """``minLength`` / ``maxLength``: ``len(str)`` counts code points (a lone surrogate is one)."""

    applies = "string"

    def __init__(self, keyword: str, limit: int, path: Path) -> None:
        self.keyword = keyword
        self.limit = limit
        self.path = path
        self.op = ">=" if keyword == "minLength" else "<="

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [f"if not len({v}) {self.op} {g.const(self.limit)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        unit = "character" if self.limit == 1 else "characters"
        tail = f" must be {'at least' if self.op == '>=' else 'at most'} {self.limit} {unit} long ({self.keyword})"
        return [f"if not len({v}) {self.op} {g.const(self.limit)}:", "    " + g.fail(self.keyword, self.path, ip, tail)]


def count_of(value: Any) -> int | None:
    """The non-negative integer a count keyword's value stands for, or ``None``.

    Exact (E1, decision 5): ``1.0`` counts as ``1``, and so does any integral literal, also one
    no double holds (``1e23``, ``10000000000000000000000000.0``); a boolean is never a number.
    """
    exact = exact_number(value)
    if type(exact) is float and exact.is_integer():
        exact = int(exact)
    if type(exact) is int and exact >= 0:
        return exact
    return None


def non_negative(ctx: Ctx, value: Any, path: Path) -> int | None:
    """A keyword's non-negative integer value (:func:`count_of`), or ``None`` after a finding."""
    count = count_of(value)
    if count is None:
        keyword = path[-1]
        ctx.finding(VALIDATION, str(keyword), path, f"`{keyword}` must be a non-negative integer")
    return count


def kw_length(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``minLength`` / ``maxLength``: a non-negative integer."""
    limit = non_negative(ctx, value, path)
    return None if limit is None else Length(str(path[-1]), limit, path)


def search(pattern: Pattern, text: str, w: list[Any]) -> bool:
    """Search ``text``, charging the pattern's cost bound to the call's budget first (E3, E6).

    Raises:
        OverBudget: the bound is more than the call's remaining budget.
        ecma_regex.UnsearchableText: a lone surrogate in ``text``; ``Compiled.check`` refuses the
            call (never a guessed match or non-match: under ``not`` either could pass).
    """
    w[0] -= pattern.cost(len(text))
    if w[0] < 0:
        raise OverBudget
    return pattern.search(text)


@lru_cache(maxsize=4096)
def pattern_of(source: str) -> Pattern | PatternError:
    """``ecma_regex.compile_pattern``, once per distinct source (a listing repeats its patterns)."""
    return compile_pattern(source)


def compiled_pattern(ctx: Ctx, keyword: str, value: Any, path: Path) -> Pattern | None:
    """A pattern keyword's value compiled by the ECMA-262 engine, or ``None`` after a finding."""
    if type(value) is not str:
        ctx.finding(VALIDATION, keyword, path, f"`{keyword}` must be a string (a regular expression)")
        return None
    found = pattern_of(value)
    if isinstance(found, PatternError):
        kind = UNSUPPORTED if found.kind == UNSUPPORTED else VALIDATION
        ctx.finding(kind, keyword, path, found.message)  # the engine's message names the pattern
        return None
    return found


class PatternPart(Part):
    """``pattern``: an ECMA-262 match somewhere in the string (unanchored)."""

    applies = "string"

    def __init__(self, pattern: Pattern, path: Path) -> None:
        self.pattern = pattern
        self.path = path

    def _test(self, g: Emitter, v: str) -> str:
        return f"{g.const(search)}({g.const(self.pattern)}, {v}, w)"

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [f"if not {self._test(g, v)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``; the message shows the pattern (schema text, never the value)."""
        source = self.pattern.source
        shown = source if len(source) <= 60 else source[:57] + "…"
        tail = f" must match the pattern `{shown}` (pattern)"
        return [f"if not {self._test(g, v)}:", "    " + g.fail("pattern", self.path, ip, tail)]


def kw_pattern(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``pattern``: a string the ECMA-262 engine reads and can bound (E3)."""
    pattern = compiled_pattern(ctx, "pattern", value, path)
    return None if pattern is None else PatternPart(pattern, path)


class Format(Part):
    """``format`` with a checker (the format-assertion vocabulary for 2020-12's formats)."""

    applies = "string"

    def __init__(self, name: str, checker: Callable[[str], bool], path: Path) -> None:
        self.name = name
        self.checker = checker
        self.path = path

    def _charge(self, g: Emitter, v: str) -> list[str]:
        """Charge the checker's cost bound (``formats.format_cost``) to the budget before it runs (E6)."""
        terms = format_cost_terms(self.name)
        if terms is None:
            return [f"w[0] -= {g.const(format_cost)}({g.const(self.name)}, len({v}))", "if w[0] < 0: raise OverBudget"]
        units, limit = terms  # format_cost, inline: one call fewer per formatted string
        length = f"len({v})" if limit is None else f"min(len({v}), {limit})"
        charge = length if units == 1 else f"{units} * {length}"
        return [f"w[0] -= 16 + {charge}", "if w[0] < 0: raise OverBudget"]

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``; the checker is called only where the format's shortcut (if it has one,
        ``formats.format_shortcut``) does not already prove the string valid."""
        test = f"{g.const(self.checker)}({v})"
        shortcut = format_shortcut(self.name)
        if shortcut is not None:
            template, constant = shortcut
            test = template.format(v=v, c=g.const(constant)) + " or " + test
        return [*self._charge(g, v), f"if not ({test}): return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        tail = f" must be a valid {self.name} (format)"
        test = f"{g.const(self.checker)}({v})"
        return [*self._charge(g, v), f"if not {test}:", "    " + g.fail("format", self.path, ip, tail)]


def kw_format(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``format``: asserted for 2020-12's formats (E4); any other name is an annotation (a note)."""
    if type(value) is not str:
        ctx.finding(VALIDATION, "format", path, "`format` must be a string")
        return None
    checker = format_checker(value)
    if checker is None:
        if value in FORMATS:
            ctx.finding(UNSUPPORTED, "format", path, f"format {value!r} has no checker in this build of the guard")
        else:
            ctx.note(path, f"format {value!r} is not defined by JSON Schema 2020-12: an annotation, not checked")
        return None
    return Format(value, checker, path)


# --- quick tests (verdict-only walk; see ``ir.Keyword.quick``) ------------------------------


def quick_count(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """A non-negative integer, as :func:`non_negative` accepts it."""
    t = type(value)
    if t is int:
        return bool(value >= 0)
    return count_of(value) is not None


def quick_pattern(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``pattern`` as :func:`kw_pattern` accepts it: a string the engine reads and bounds."""
    return type(value) is str and not isinstance(pattern_of(value), PatternError)


def quick_format(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``format`` with a checker (an annotation-only name needs a note: the full classifier)."""
    return type(value) is str and format_checker(value) is not None


# --- the rows (``ir.Keyword``; registered by ``table.KEYWORDS``) ------------------------------

ROWS: Final = (
    Keyword("minLength", ALL, kw_length, quick_count, emits=(Length,)),
    Keyword("maxLength", ALL, kw_length, quick_count, emits=(Length,)),
    Keyword("pattern", ALL, kw_pattern, quick_pattern, emits=(PatternPart,)),
    Keyword("format", ALL, kw_format, quick_format, emits=(Format,)),
)
"""Strings."""
