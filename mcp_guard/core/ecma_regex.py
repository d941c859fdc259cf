"""ECMA-262 ``pattern`` matching with a proven bound on its work (spec decision E3).

JSON Schema's ``pattern`` and ``patternProperties`` are ECMA-262 regular expressions with
the ``u`` flag, searched unanchored (2020-12 Validation, 6.3.3). The engine is ``regress``
(Rust's ECMA-262 engine): it judges syntax and does the matching, never Python ``re``.
``regress`` backtracks, so its worst case is exponential (``^(a+)+$`` on ``"a" * 24 + "b"``
takes 0.27 s and doubles per character); the guard never runs a pattern whose work it cannot
bound. :func:`compile_pattern` parses the pattern itself (ECMA-262, 22.2.1, ``u`` mode) and
proves an upper bound on the backtracking work of a search, as a function of the length of
the searched string, or refuses the pattern (``unsupported_capability``) and says why.

Usage by the core::

    compiled = compile_pattern(schema["pattern"])
    if isinstance(compiled, PatternError): ...       # classify: compiled.kind, .message
    units = compiled.cost(code_point_length(value))  # charge before searching (E6)
    if units > budget_left: refuse                   # never pass, never stall
    matched = compiled.search(value)                 # may raise UnsearchableText

The bound, its units and the lone-surrogate rule are documented on :class:`Pattern`.
"""

from __future__ import annotations

from typing import Final, Literal

import regress

__all__ = ["STEPS_PER_UNIT", "Pattern", "PatternError", "UnsearchableText", "compile_pattern"]

STEPS_PER_UNIT: Final = 64
"""Backtracking steps (one character or assertion test of the engine) per work-budget unit.

One unit of :data:`mcp_guard.core.budget.MAX_WORK` is one subschema evaluation; one
``regress`` step is far cheaper. ``benchmarks/pattern_cost.py`` measures the ratio."""


class UnsearchableText(ValueError):
    """The string holds a lone surrogate (U+D800-U+DFFF), which the engine cannot read.

    ``regress`` reads UTF-8, and a lone surrogate has no UTF-8 form. ECMA-262 with the
    ``u`` flag would read it as one code point (E2 counts it as one), but no faithful
    translation exists in general, so the guard refuses such an argument (``validation``)
    rather than guess a match; under ``not`` a guessed non-match would pass. The message
    never holds the string.
    """


class PatternError:
    """Why a ``pattern`` cannot be enforced.

    Attributes:
        kind: ``"validation"``: the pattern is not ECMA-262 ``u``-mode syntax (the engine
            cannot read it; the schema is malformed). ``"unsupported_capability"``: the
            pattern is valid but its worst-case search time cannot be bounded (or the
            guard's analysis cannot read one of its constructs), spec decision E3.
        message: why, for a server author; it may quote the pattern (schema text).
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

    ``cost(length)`` is an upper bound, in work-budget units, of :meth:`search` on a string
    of ``length`` code points (E2: a lone surrogate counts as one). The bound is proven by
    the static analysis of :func:`compile_pattern` (see the module ``_regex_bound``); it is
    monotone in ``length``.
    """

    __slots__ = ("_regex", "_steps", "source")

    def __init__(self, source: str, regex: regress.Regex, steps: object) -> None:
        self.source = source
        self._regex = regex
        self._steps = steps

    def cost(self, length: int) -> int:
        """Upper bound of the work of ``search`` on ``length`` code points, in budget units (>= 1)."""
        raise NotImplementedError

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text`` (ECMA-262 ``u`` flag, unanchored).

        Raises:
            UnsearchableText: ``text`` holds a lone surrogate (see the class).
        """
        try:
            return self._regex.find(text) is not None
        except UnicodeEncodeError:
            raise UnsearchableText("the string holds a lone surrogate, which the pattern engine cannot read") from None

    def __repr__(self) -> str:
        return f"Pattern({self.source!r})"


def compile_pattern(source: str) -> Pattern | PatternError:
    """Compile a JSON Schema ``pattern`` (ECMA-262, ``u`` flag), or say why it cannot be enforced.

    Returns:
        a :class:`Pattern`, or a :class:`PatternError` whose ``kind`` is ``"validation"``
        (``regress`` rejects the syntax) or ``"unsupported_capability"`` (no bound on the
        backtracking work can be proven: an unbounded quantifier over a body that can match
        the same text in more than one way, a backreference under a quantifier, ...).
        Never raises for any ``str``.
    """
    try:
        regress.Regex(source, "u")
    except regress.RegressError as exc:
        return PatternError("validation", f"pattern {source!r} is not an ECMA-262 regular expression: {exc}")
    except UnicodeEncodeError:
        return PatternError("unsupported_capability", f"pattern {source!r} holds a lone surrogate")
    return PatternError("unsupported_capability", "pattern analysis not implemented yet")
