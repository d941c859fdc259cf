"""ECMA-262 ``pattern`` matching with a proven bound on its work (spec decision E3).

JSON Schema's ``pattern`` and ``patternProperties`` are ECMA-262 regular expressions with
the ``u`` flag, searched unanchored (2020-12 Validation, 6.3.3). The engine is ``regress``
(Rust's ECMA-262 engine): it judges syntax and does the matching, never Python ``re``.
``regress`` backtracks and offers no step limit, so its worst case is exponential
(``^(a+)+$`` on ``"a" * 24 + "b"`` takes 0.27 s and doubles per character) and an unanchored
``a*b`` over a long near miss is quadratic. The guard never runs a pattern whose work it
cannot bound: :func:`compile_pattern` parses the pattern itself (ECMA-262, 22.2.1, ``u``
mode) and proves an upper bound on the backtracking steps of one search as a polynomial in
the length of the searched string (``_regex_cost``), or refuses it (``unsupported_capability``)
and says why.

The bound (the reasoning is in ``_regex_cost``'s docstring): a backtracking search does one
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
    units = compiled.cost(len(value))                # code points (E2); charge first (E6)
    if units > budget_left: refuse                   # never pass, never stall
    matched = compiled.search(value)                 # UnsearchableText: refuse (validation)

A string with a lone surrogate cannot be searched (see :class:`UnsearchableText`).
"""

from __future__ import annotations

import functools
from typing import Final, Literal

import regress

from ._regex_bound import Bound, Unbounded
from ._regex_cost import search_steps
from ._regex_syntax import Unreadable, parse, shown
from .budget import MAX_WORK

__all__ = [
    "MAX_ALTERNATIVES",
    "MAX_PATTERN_LENGTH",
    "MIN_SEARCHABLE_LENGTH",
    "STEPS_PER_UNIT",
    "Pattern",
    "PatternError",
    "Undecidable",
    "UnsearchableText",
    "compile_pattern",
    "is_ecma_regex",
]

STEPS_PER_UNIT: Final = 8
"""Backtracking steps (one character or assertion test of the engine) per work-budget unit.

One unit of :data:`mcp_guard.core.budget.MAX_WORK` is one subschema evaluation of the
generated validator: 13-21 ns measured (an array element checked against ``{"type":
"integer"}``). A character or assertion test of ``regress`` takes about 1-2 ns; an
iteration of a loop whose body is more than one character class costs it 110-350 ns, so
the bound charges such an iteration 96 steps (224 when the body captures). With 8 steps per
unit, ``benchmarks/pattern_cost.py`` measured a charged unit at 0.02 to 0.6 of a validator
unit's time (corpus, common and quadratic patterns, 1 KiB to 100 KiB near misses)."""

MIN_SEARCHABLE_LENGTH: Final = 256
"""A pattern whose proven bound for a string of this many code points exceeds the whole
call budget (:data:`~mcp_guard.core.budget.MAX_WORK` units) is refused at classification:
it could check almost nothing (a bounded repetition of an ambiguous group, ``(a|a){0,40}``,
or a polynomial of high degree)."""


MAX_PATTERN_LENGTH: Final = 4_096
"""The longest ``pattern`` (in code points) the guard analyses; longer ones are
``unsupported_capability`` (the corpus's longest is about 300)."""

MAX_ALTERNATIVES: Final = 2_000
"""The most alternatives one group may hold for ``regress`` to read it. ``regress``
compiles an alternation in time quadratic in its branches (30,000 took 4.7 s) and crashes
the process past about 40,000 (a native stack overflow), so the guard never hands it such a
text: the sum of the squares of the branch counts of all groups is held to
``MAX_ALTERNATIVES ** 2`` (about 30 ms of compilation)."""


_TABLE = 64


class Undecidable(ValueError):
    """The guard cannot decide this string within its limits: the core refuses the argument (``validation``)."""


class UnsearchableText(Undecidable):
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

    __slots__ = ("_regex", "_steps", "_table", "source")

    def __init__(self, source: str, regex: regress.Regex, steps: Bound) -> None:
        self.source = source
        self._regex = regex
        self._steps = steps
        # Most argument strings are short: their cost is a table lookup (a polynomial otherwise).
        self._table = tuple(steps.at(n) // STEPS_PER_UNIT + 1 for n in range(_TABLE))

    def steps(self, length: int) -> int:
        """The proven upper bound of backtracking steps of one search over ``length`` code points."""
        return self._steps.at(length)

    def cost(self, length: int) -> int:
        """Upper bound of the work of :meth:`search` on ``length`` code points, in budget units (>= 1)."""
        if length < _TABLE:
            return self._table[length]
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


def _engine_can_read(source: str) -> bool:
    """Whether ``regress`` can be given ``source`` safely (see :data:`MAX_ALTERNATIVES`); linear."""
    counts = [1]
    load = 0
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i += 1
            while i < n and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
        elif c == "(":
            counts.append(1)
        elif c == ")" and len(counts) > 1:
            load += counts.pop() ** 2
        elif c == "|":
            counts[-1] += 1
            if counts[-1] > MAX_ALTERNATIVES:
                return False
        i += 1
    load += sum(k * k for k in counts)
    return load <= MAX_ALTERNATIVES**2


# regress errors that are limits of the engine, not ECMA-262 syntax errors.
_ENGINE_LIMITS = ("limit exceeded", "too deeply nested")


def _is_engine_limit(exc: regress.RegressError) -> bool:
    text = str(exc)
    return any(limit in text for limit in _ENGINE_LIMITS)


def _engine(source: str) -> regress.Regex | PatternError:
    try:
        return regress.Regex(source, "u")
    except regress.RegressError as exc:
        if _is_engine_limit(exc):
            return PatternError(
                "unsupported_capability", f"pattern {shown(source, 40)}: the pattern engine's limit: {exc}"
            )
        return PatternError(
            "validation", f"pattern {shown(source)} is not an ECMA-262 regular expression (u flag): {exc}"
        )
    except UnicodeEncodeError:
        return PatternError(
            "unsupported_capability",
            f"pattern {shown(source)} holds a lone surrogate, which the pattern engine cannot read",
        )


def is_ecma_regex(source: str) -> bool:
    """Whether ``source`` is ECMA-262 regular expression syntax with the ``u`` flag (``regress`` judges).

    The ``regex`` format (2020-12 Validation, 7.3.8). A lone surrogate in ``source`` is read
    by ECMA-262 as a literal code point; ``regress`` cannot take it, so it is judged as the
    ``\\u{D800}`` escape of the same code point would be, except after a backslash or in a
    group name, where it is invalid. Linear in the length (``regress`` compiles about 2 MiB
    of pattern a second).

    Raises:
        Undecidable: the text holds more alternatives than ``regress`` can be given safely
            (:data:`MAX_ALTERNATIVES`), or reaches one of its limits (nesting deeper than
            255 groups, too many loops or captures): neither valid nor invalid can be said.
    """
    if not _engine_can_read(source):
        raise Undecidable("the regular expression holds more alternatives than the guard can have checked")
    try:
        regress.Regex(source, "u")
        return True
    except regress.RegressError as exc:
        if _is_engine_limit(exc):
            raise Undecidable(f"the regular expression reaches a limit of the pattern engine: {exc}") from None
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
    except regress.RegressError as exc:
        if _is_engine_limit(exc):
            raise Undecidable(f"the regular expression reaches a limit of the pattern engine: {exc}") from None
        return False


@functools.lru_cache(maxsize=4096)
def compile_pattern(source: str) -> Pattern | PatternError:
    """Compile a JSON Schema ``pattern`` (ECMA-262, ``u`` flag), or say why it cannot be enforced.

    Returns:
        a :class:`Pattern`, or a :class:`PatternError` whose ``kind`` is ``"validation"``
        (``regress`` rejects the syntax) or ``"unsupported_capability"`` (no polynomial
        bound on the backtracking work can be proven: an unbounded quantifier over a body
        that can match the same text in more than one way, a backreference under a
        quantifier; a bound so steep that a string of :data:`MIN_SEARCHABLE_LENGTH`
        code points exceeds the call budget; a pattern beyond :data:`MAX_PATTERN_LENGTH`
        or :data:`MAX_ALTERNATIVES`). Never raises for any ``str``. Results are cached
        (the last 4,096 sources): tools repeat patterns, and both result types are
        immutable.
    """
    if len(source) > MAX_PATTERN_LENGTH:
        return PatternError(
            "unsupported_capability",
            f"pattern {shown(source, 40)} is {len(source)} characters long; "
            f"the guard analyses at most {MAX_PATTERN_LENGTH}",
        )
    if not _engine_can_read(source):
        return PatternError(
            "unsupported_capability",
            f"pattern {shown(source, 40)} holds more alternatives than the guard can have the engine compile "
            f"(at most {MAX_ALTERNATIVES} in one group)",
        )
    regex = _engine(source)
    if isinstance(regex, PatternError):
        return regex
    try:
        steps = search_steps(parse(source))
    except RecursionError:
        return PatternError("unsupported_capability", f"pattern {shown(source, 40)} nests too deeply for the analysis")
    except Unreadable as exc:
        return PatternError("unsupported_capability", f"pattern {shown(source)}: the guard cannot analyse {exc}")
    except Unbounded as exc:
        return PatternError("unsupported_capability", f"pattern {shown(source)}: {exc}")
    if steps.at(MIN_SEARCHABLE_LENGTH) // STEPS_PER_UNIT >= MAX_WORK:
        return PatternError(
            "unsupported_capability",
            f"pattern {shown(source)}: its proven worst case on a {MIN_SEARCHABLE_LENGTH}-character string exceeds the "
            f"work budget of a whole call (degree {steps.degree()} in the length)",
        )
    return Pattern(source, regex, steps)
