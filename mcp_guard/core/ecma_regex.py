"""ECMA-262 ``pattern`` matching with a proven bound on its work (spec decision E3).

JSON Schema's ``pattern`` and ``patternProperties`` are ECMA-262 regular expressions with
the ``u`` flag, searched unanchored (2020-12 Validation, 6.3.3). The engine is ``regress``
(Rust's ECMA-262 engine): it judges syntax and does the matching, never Python ``re``.
``regress`` backtracks and offers no step limit, so its worst case is exponential
(``^(a+)+$`` on ``"a" * 24 + "b"`` takes 0.27 s and doubles per character) and an unanchored
``a*b`` over a long near miss is quadratic. The guard never runs a pattern whose work it
cannot bound: :func:`compile_pattern` parses the pattern itself (ECMA-262, 22.2.1, ``u``
mode) and proves an upper bound on the backtracking steps of one search as a polynomial in
the length of the searched string (``_regex_bound``), or refuses it (``unsupported_capability``)
and says why.

The bound (the reasoning is in ``_regex_bound``'s docstring): a backtracking search does one
step per character or assertion test on each path prefix it explores. Paths multiply in
two places only: where an alternation or a split between two parts lets the same text be
read in several ways, and where a quantifier's iterations can be cut in several ways. The
analysis proves, per sub-pattern, how many ways it can read a fixed span (``ways``), how
many outcomes one attempt can hand on (``out``) and how many steps one attempt does
(``work``), each a polynomial in the remaining length ``n``. A quantifier without an upper
bound is accepted only when its body reads any text in at most one way and its iterations
can be cut in only one way (proved from the first, last and adjacent-character sets of
the body); otherwise the paths grow exponentially and the pattern is refused. Unanchored
search multiplies the work of one attempt by ``n + 1`` start positions unless the pattern
begins with ``^``.

Usage by the core::

    compiled = compile_pattern(schema["pattern"])
    if isinstance(compiled, PatternError): ...       # classify: compiled.kind, .message
    units = compiled.cost(code_point_length(value))  # charge before searching (E6)
    if units > budget_left: refuse                   # never pass, never stall
    matched = compiled.search(value)                 # may raise UnsearchableText

A string with a lone surrogate cannot be searched (see :class:`UnsearchableText`).
"""

from __future__ import annotations

from typing import Final, Literal

import regress

from ._regex_bound import Bound, Unbounded, search_steps
from ._regex_syntax import Unreadable, parse
from .budget import MAX_WORK

__all__ = [
    "MIN_SEARCHABLE_LENGTH",
    "STEPS_PER_UNIT",
    "Pattern",
    "PatternError",
    "UnsearchableText",
    "compile_pattern",
    "is_ecma_regex",
]

STEPS_PER_UNIT: Final = 8
"""Backtracking steps (one character or assertion test of the engine) per work-budget unit.

One unit of :data:`mcp_guard.core.budget.MAX_WORK` is one subschema evaluation of the
generated validator: about 20 ns measured (an array element checked against ``{"type":
"integer"}``). A proven step of ``regress`` took at most 1.5 ns in the same run (the bound
is rarely tight: 0.001 to 1.5 ns per proven step), so 8 steps per unit keep a charged unit
below a validator unit. ``benchmarks/pattern_cost.py`` measures both in one run and prints
the ratio (below 1)."""

MIN_SEARCHABLE_LENGTH: Final = 256
"""A pattern whose proven bound for a string of this many code points exceeds the whole
call budget (:data:`~mcp_guard.core.budget.MAX_WORK` units) is refused at classification:
it could check almost nothing (a bounded repetition of an ambiguous group, ``(a|a){0,40}``,
or a polynomial of high degree)."""


class UnsearchableText(ValueError):
    """The string holds a lone surrogate (U+D800-U+DFFF), which the engine cannot read.

    ``regress`` reads UTF-8, and a lone surrogate has no UTF-8 form. ECMA-262 with the
    ``u`` flag would read it as one code point (E2 counts it as one), but no translation
    is faithful in general (``.``, ``\\W`` and ``[^a]`` match it, a literal ``\\uD800``
    matches it), so the core refuses such an argument (``validation``) rather than guess:
    under ``not`` a guessed non-match would pass. The message never holds the string.
    """


class PatternError:
    """Why a ``pattern`` cannot be enforced.

    Attributes:
        kind: ``"validation"``: the pattern is not ECMA-262 ``u``-mode syntax (the engine
            cannot read it; the schema is malformed). ``"unsupported_capability"``: the
            pattern is valid but its worst-case search time cannot be bounded, or the
            guard's analysis does not read one of its constructs (spec decision E3).
        message: why, for a server author; it quotes the pattern (schema text).
    """

    __slots__ = ("kind", "message")

    def __init__(self, kind: Literal["validation", "unsupported_capability"], message: str) -> None:
        self.kind: Literal["validation", "unsupported_capability"] = kind
        self.message = message

    def __repr__(self) -> str:
        return f"PatternError({self.kind!r}, {self.message!r})"


class Pattern:
    """A compiled ``pattern``: ECMA-262 ``u``-flag semantics, unanchored search, bounded work.

    Attributes:
        source: the pattern as written in the schema.

    :meth:`cost` is an upper bound, in work-budget units, of :meth:`search` on a string of
    ``length`` code points (E2: a lone surrogate counts as one). It is monotone in
    ``length`` and costs a few polynomial evaluations (about a microsecond).
    """

    __slots__ = ("_regex", "_steps", "source")

    def __init__(self, source: str, regex: regress.Regex, steps: Bound) -> None:
        self.source = source
        self._regex = regex
        self._steps = steps

    def steps(self, length: int) -> int:
        """The proven upper bound of backtracking steps of one search over ``length`` code points."""
        return self._steps.at(length)

    def cost(self, length: int) -> int:
        """Upper bound of the work of :meth:`search` on ``length`` code points, in budget units (>= 1)."""
        return self._steps.at(length) // STEPS_PER_UNIT + 1

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text`` (ECMA-262 ``u`` flag, unanchored).

        Charge :meth:`cost` first: the time is bounded by it, not by anything here.

        Raises:
            UnsearchableText: ``text`` holds a lone surrogate (see the class).
        """
        try:
            return self._regex.find(text) is not None
        except UnicodeEncodeError:
            raise UnsearchableText(
                "the string holds a lone surrogate (U+D800-U+DFFF), which the pattern engine cannot read"
            ) from None

    def __repr__(self) -> str:
        return f"Pattern({self.source!r})"


def _engine(source: str) -> regress.Regex | PatternError:
    try:
        return regress.Regex(source, "u")
    except regress.RegressError as exc:
        return PatternError("validation", f"pattern {source!r} is not an ECMA-262 regular expression (u flag): {exc}")
    except UnicodeEncodeError:
        return PatternError(
            "unsupported_capability",
            f"pattern {source!r} holds a lone surrogate, which the pattern engine cannot read",
        )


def is_ecma_regex(source: str) -> bool:
    """Whether ``source`` is ECMA-262 regular expression syntax with the ``u`` flag (``regress`` judges).

    The ``regex`` format (2020-12 Validation, 7.3.8). A lone surrogate in ``source`` is read
    by ECMA-262 as a literal code point; ``regress`` cannot take it, so it is judged as the
    ``\\u{D800}`` escape of the same code point would be, except after a backslash or in a
    group name, where it is invalid. Linear in the length (``regress`` compiles about 2 MiB of pattern a second);
    never raises.
    """
    try:
        regress.Regex(source, "u")
        return True
    except regress.RegressError:
        return False
    except UnicodeEncodeError:
        pass
    out = []
    for i, ch in enumerate(source):
        if "\ud800" <= ch <= "\udfff":
            if i and source[i - 1] == "\\":
                return False  # an identity escape of a non-syntax character
            name = max(source.rfind("(?<", 0, i), source.rfind("\\k<", 0, i))
            if name >= 0 and source.find(">", name) > i and source[name + 3 : name + 4] not in ("=", "!"):
                return False  # a lone surrogate is not an identifier character of a group name
            out.append(f"\\u{{{ord(ch):X}}}")  # the same code point, as an escape regress can read
        else:
            out.append(ch)
    try:
        regress.Regex("".join(out), "u")
        return True
    except regress.RegressError:
        return False


def compile_pattern(source: str) -> Pattern | PatternError:
    """Compile a JSON Schema ``pattern`` (ECMA-262, ``u`` flag), or say why it cannot be enforced.

    Returns:
        a :class:`Pattern`, or a :class:`PatternError` whose ``kind`` is ``"validation"``
        (``regress`` rejects the syntax) or ``"unsupported_capability"`` (no polynomial
        bound on the backtracking work can be proven: an unbounded quantifier over a body
        that can match the same text in more than one way, a backreference under a
        quantifier; or a bound so steep that a string of :data:`MIN_SEARCHABLE_LENGTH`
        code points exceeds the call budget). Never raises for any ``str``.
    """
    regex = _engine(source)
    if isinstance(regex, PatternError):
        return regex
    try:
        steps = search_steps(parse(source))
    except Unreadable as exc:
        return PatternError("unsupported_capability", f"pattern {source!r}: the guard cannot analyse {exc}")
    except Unbounded as exc:
        return PatternError("unsupported_capability", f"pattern {source!r}: {exc}")
    if steps.at(MIN_SEARCHABLE_LENGTH) // STEPS_PER_UNIT >= MAX_WORK:
        return PatternError(
            "unsupported_capability",
            f"pattern {source!r}: its proven worst case on a {MIN_SEARCHABLE_LENGTH}-character string exceeds the "
            f"work budget of a whole call (degree {steps.degree()} in the length)",
        )
    return Pattern(source, regex, steps)
