"""Exact schema numbers for the extended profile (E1): decimal values, never binary rounding.

A schema parsed by the relay holds a literal no double carries as a ``json_values.Inexact``
(its text). Here such a literal becomes a :class:`~decimal.Decimal` of its exact value (an
integral one becomes an ``int``), so ``minimum: 0.1000000000000000000001`` or a bound beyond
the double range is enforced exactly: Python compares ``int``, ``float`` and ``Decimal``
with each other by their exact values. ``multipleOf`` divides exactly in :class:`Fraction`.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from ..json_values import Inexact, in_double_range, inexact_value, is_json, is_uncarriable, json_once

__all__ = [
    "UNREACHABLE",
    "exact_json",
    "exact_json_once",
    "exact_number",
    "exact_uncarriable",
    "exact_value",
    "is_multiple",
    "literal",
    "number_of",
    "show_number",
]

_EXACT_SPAN: Final = 2.0**53


class _Unreachable:
    """A schema choice no argument can equal (a decimal no double holds); equal only to itself."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNREACHABLE"


UNREACHABLE: Final = _Unreachable()


def exact_number(value: Any) -> int | float | Decimal | None:
    """The exact value of a schema number, or ``None`` when ``value`` is not a usable number.

    ``int`` (never ``bool``) and finite ``float`` stand for themselves; an ``Inexact`` literal
    becomes its ``Decimal`` (an ``int`` when integral). ``None`` for anything else, and for a
    literal whose exponent reaches past the guard's digit limit (decision 12).
    """
    t = type(value)
    if t is int:
        return value  # type: ignore[no-any-return]
    if t is float:
        if value - value != 0:
            return None
        if abs(value) >= _EXACT_SPAN:  # an integer, and the literal it stands for is its exact value
            return int(value)
        return value  # type: ignore[no-any-return]
    if t is Inexact:
        return inexact_value(value)
    return None


def exact_value(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """A schema ``enum``/``const`` value with its ``Inexact`` literals made exact (for equality).

    An integral literal becomes an ``int``, any other a ``Decimal`` (an argument literal no
    double holds is an exact number too, E1); one past the digit limit becomes
    :data:`UNREACHABLE`, and so does a container holding one. Containers are copied; other
    values are returned as is.
    """
    t = type(value)
    if t is Inexact:
        exact = exact_number(value)
        return UNREACHABLE if exact is None else exact
    if t is not list and t is not dict:
        return value
    memo = {} if memo is None else memo  # a shared sub-object is copied once: the copy stays shared
    found = memo.get(id(value))
    if found is not None:
        return found
    if t is list:
        items = [exact_value(v, memo) for v in value]
        copied: Any = UNREACHABLE if any(v is UNREACHABLE for v in items) else items
    else:
        members = {k: exact_value(v, memo) for k, v in value.items()}
        copied = UNREACHABLE if any(v is UNREACHABLE for v in members.values()) else members
    memo[id(value)] = copied
    return copied


def exact_json(value: Any) -> bool:
    """``json_values.is_json`` where an :class:`Inexact` literal within the digit limit is a number (E1)."""
    if is_json(value):
        return True
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        t = type(item)
        if t is Inexact:
            if argument_number(item) is None:
                return False
        elif t is dict or t is list:
            if id(item) in seen:
                return False  # shared or cyclic: the plain walk refused it, so it holds no JSON-only tree
            seen.add(id(item))
            if t is dict:
                if any(type(k) is not str for k in item):
                    return False
                stack.extend(item.values())
            else:
                stack.extend(item)
        elif not is_json(item):
            return False
    return True


def exact_json_once(value: Any, w: list[Any]) -> bool:
    """``json_values.json_once`` for the extended profile (see :func:`exact_json`): memoized per call."""
    if json_once(value, w):
        return True
    t = type(value)
    if t is Inexact:
        return argument_number(value) is not None
    if t is not dict and t is not list:
        return False
    return exact_json(value)


def exact_uncarriable(value: Any) -> bool:
    """A number the extended profile cannot carry: NaN, ±inf, or a literal beyond the range of a double or
    past the digit limit (:func:`argument_number`)."""
    if type(value) is Inexact:
        return argument_number(value) is None
    return is_uncarriable(value)


def number_of(value: Any) -> int | Decimal | None:
    """An :class:`Inexact` argument's exact value (``None``: one JSON cannot carry, :func:`argument_number`)."""
    return argument_number(value)


def argument_number(value: Inexact) -> int | Decimal | None:
    """The exact value of an argument literal no double holds (E1), or ``None`` for one JSON cannot carry to a
    server: beyond the range of a double (``1e400``, ``1e-400``: ``json_values.in_double_range``) or past the
    digit limit (spec decision 12). Schema literals are not bound by the range (``exact_number``): a bound no
    double holds is enforced exactly."""
    return inexact_value(value) if in_double_range(value) else None


def literal(value: int | float | Decimal) -> int | float | Decimal:
    """The mathematical value of the JSON literal a number stands for (E1).

    The relay's parsers keep a literal as a double only when the double stands for it
    exactly (``json_values.exact_float``): below 2**53 the literal is the double's shortest
    decimal (``repr``); from 2**53 up (every double an integer) it is the double's exact
    value, which is also how the relay writes such a double back.
    """
    if type(value) is float:
        if value >= _EXACT_SPAN or value <= -_EXACT_SPAN:
            return int(value)
        return Decimal(repr(value))
    return value


def is_multiple(value: int | float, divisor: int | float | Decimal) -> bool:
    """Whether ``value`` is an integer multiple of ``divisor``, exactly (E1, ``multipleOf``).

    Both are finite and ``divisor > 0``; both stand for their literals' decimal values
    (:func:`literal`), so ``0.3`` is a multiple of ``0.1``. ``int`` by ``int`` is a remainder,
    an ``int`` by a fraction ``p/q`` (the divisor's literal in lowest terms) is ``value * q % p``,
    a double is decided without its decimal where it can (see the comment in the code); the rest is divided in
    ``Fraction``.
    """
    if type(value) is int:
        if type(divisor) is int:
            return value % divisor == 0
        p, q, _r, _s = _ratio(divisor)
        return value * q % p == 0
    if type(value) is float:
        if type(divisor) is int and value.is_integer():
            return int(value) % divisor == 0
        # A double, decided without building its literal where it can (the ratio ``(p, q, r, s)``
        # of :func:`_ratio`; inline: per call):
        # The quotient ``t = value * q/p`` in doubles is within ``|n| * 2**-51`` of ``n``, the literal's
        # quotient, whenever that is an integer (three roundings). So with ``round(t)`` small
        # (≤ 2**43) the only candidate is ``n = round(t)``: far from it (0.01), no multiple; otherwise
        # ``X = n * p / q`` is the one multiple that can be the literal. ``n * p / q`` in Python (int
        # true division) is correctly rounded: if it is not ``value``, the literal is not ``X`` and no
        # multiple. If it is, ``X`` rounds to ``value``; when ``X`` has at most 15 significant digits
        # (``|n * p * s| < 10**15``, with ``X = n * p * s / 10**k``) it is the shortest decimal that
        # does (a decimal of ≤ 15 digits survives a round trip through a double, so no shorter or
        # other one of ≤ 15 digits rounds to the same double), which is the literal: a multiple.
        p, q, r, s = _RATIOS.get((type(divisor), divisor)) or _ratio(divisor)
        if r is not None and -_TWO53 < value < _TWO53:
            t = value * r
            n = round(t)
            if -_SMALL_QUOTIENT <= n <= _SMALL_QUOTIENT:
                if abs(t - n) > 0.01:
                    return False
                top = n * p
                if top / q != value:
                    return False
                if -_DIGITS15 < top * s < _DIGITS15:
                    return True
    return (Fraction(literal(value)) / Fraction(literal(divisor))).denominator == 1


def double_ratio(divisor: int | float | Decimal) -> tuple[int, int, float, int] | None:
    """``(p, q, r, s)`` of :func:`is_multiple`'s double test for ``divisor`` (its literal ``p/q`` in
    lowest terms, ``r`` the double nearest ``q/p``, ``q * s`` a power of ten), or ``None`` when no
    double holds ``p`` or ``q``: what the generated code inlines (``kw_number.MultipleOf``)."""
    p, q, r, s = _ratio(divisor)
    return None if r is None else (p, q, r, s)


def multiple_accept(value: str, ratio: tuple[str, str, str, str], t: str, n: str) -> str:
    """An expression true only when the double ``value`` is a multiple by :func:`is_multiple`'s
    sure test (its first branch ending in ``True``), for generated code; when false, ask
    :func:`is_multiple`. ``ratio`` is :func:`double_ratio`'s four as source constants, ``t`` and
    ``n`` two free local names (assigned inside the expression)."""
    p, q, r, s = ratio
    top = n if p == "1" else f"{n} * {p}"
    scaled = top if s == "1" else f"{top} * {s}"
    return (
        f"(type({value}) is float and {-_TWO53!r} < {value} < {_TWO53!r}"
        f" and {-_SMALL_QUOTIENT} <= ({n} := round({t} := {value} * {r})) <= {_SMALL_QUOTIENT}"
        f" and abs({t} - {n}) <= 0.01 and {top} / {q} == {value} and {-_DIGITS15} < {scaled} < {_DIGITS15})"
    )


_Ratio = tuple[int, int, float | None, int]
_RATIOS: dict[tuple[type, int | float | Decimal], _Ratio] = {}
_MAX_CACHED: Final = 4096
_DIGITS15: Final = 10**15
_SMALL_QUOTIENT: Final = 2**43
_TWO53: Final = 2.0**53


def _ratio(divisor: int | float | Decimal) -> _Ratio:
    """``(p, q, r, s)`` for a divisor whose literal is ``p/q`` in lowest terms: ``r`` the double
    nearest ``q/p`` and ``s`` with ``q * s`` a power of ten, or ``r = None`` when ``p`` or ``q`` is
    past 2**53 (no double holds it). Kept per ``(type, value)``: a double and a ``Decimal`` of
    the same value stand for different literals, so the type is part of the key."""
    key = (type(divisor), divisor)
    found = _RATIOS.get(key)
    if found is None:
        p, q = Fraction(literal(divisor)).as_integer_ratio()
        twos = fives = 0
        rest = q
        while rest % 2 == 0:
            rest, twos = rest // 2, twos + 1
        while rest % 5 == 0:
            rest, fives = rest // 5, fives + 1
        exact = rest == 1 and p < 2**53 and q < 2**53
        scale = 2 ** (max(twos, fives) - twos) * 5 ** (max(twos, fives) - fives)
        found = (p, q, q / p if exact else None, scale)
        if len(_RATIOS) < _MAX_CACHED:  # schema constants: a bounded set
            _RATIOS[key] = found
    return found


def show_number(value: int | float | Decimal) -> str:
    """A schema number for a message: the exact value of the literal it stands for (:func:`literal`),
    never rounded, in at most about 60 characters (never an argument).

    A number whose plain text fits in 40 characters is shown as before (``repr`` of an ``int`` or of a
    double below 2**53, ``str`` of a ``Decimal`` without an exponent: ``5``, ``0.1``, ``1e-05``,
    ``0.000001``). Any other is shown as mantissa and exponent with its trailing zeros dropped (``1e308``,
    ``-2.5e-300``, ``1e5000``; a ``Decimal``'s ``1E+400`` too), which parsed as a ``Decimal`` equals the
    value. Only a number of more significant digits than 40
    characters hold (past about 32) is cut, and says so: its first digits, ``…``, its exponent and its
    count of significant digits (``1.23456789012345678901234…e308 (309 significant digits)``), so the
    magnitude is still exact. An ``int`` is never turned into decimal text past its 40 leading digits
    (``str`` raises past 4,300 digits); ``Decimal(int)`` converts in binary, without that limit.
    """
    if type(value) is float and -_EXACT_SPAN < value < _EXACT_SPAN:
        return repr(value)  # the literal it stands for (``literal``); at most 24 characters
    exact = literal(value)
    if type(exact) is int:
        if exact.bit_length() <= 136:  # at most 42 digits: ``repr`` is cheap and safe
            text = repr(exact)
            if len(text) <= _SHOWN_CHARS:
                return text
        d = Decimal(exact)
    else:
        d = Decimal(exact)
        text = str(d)
        if not d.is_finite():
            return text
        if d.is_zero():
            return "0"
        if len(text) <= _SHOWN_CHARS and "E" not in text:
            return text
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)  # finite
    count = len(digits)
    while count > 1 and digits[count - 1] == 0:
        count -= 1
    power = exponent + len(digits) - 1  # the exponent of the leading digit
    head = "-" if sign else ""
    tail = f"e{power}"
    if len(head) + count + 1 + len(tail) <= _SHOWN_CHARS:
        rest = "".join(map(str, digits[1:count]))
        return f"{head}{digits[0]}{'.' + rest if rest else ''}{tail}"
    kept = "".join(map(str, digits[1:_CUT_DIGITS]))
    return f"{head}{digits[0]}.{kept}…{tail} ({count:,} significant digits)"


_SHOWN_CHARS: Final = 40
_CUT_DIGITS: Final = 24
