"""Exact schema numbers for the extended profile (E1): decimal values, never binary rounding.

A schema parsed by the relay holds a literal no double carries as a ``json_values.Inexact``
(its text). Here such a literal becomes a :class:`~decimal.Decimal` of its exact value (an
integral one becomes an ``int``), so ``minimum: 0.1000000000000000000001`` or a bound beyond
the double range is enforced exactly: Python compares ``int``, ``float`` and ``Decimal``
with each other by their exact values. ``multipleOf`` divides exactly in :class:`Fraction`.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Final

from ..budget import integer_digit_limit
from ..json_values import Inexact

__all__ = ["UNREACHABLE", "exact_number", "exact_value", "is_multiple", "literal", "show_number"]

_DEFAULT_DIGITS: Final = 4300
_EXACT_SPAN: Final = 2.0**53


def _digit_limit() -> int:
    return integer_digit_limit() or _DEFAULT_DIGITS


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
        if abs(value) >= _EXACT_SPAN:  # a double this large is an integer; its literal is its shortest repr
            return int(Decimal(repr(value)))
        return value  # type: ignore[no-any-return]
    if t is Inexact:
        try:
            d = Decimal(value.text)
        except InvalidOperation:
            return None
        if not d.is_finite() or abs(d.adjusted()) > _digit_limit():
            return None
        if d == d.to_integral_value():
            return int(d)
        return d
    return None


def exact_value(value: Any) -> Any:
    """A schema ``enum``/``const`` value with its ``Inexact`` literals made exact (for equality).

    An integral literal becomes an ``int``; a fraction a double holds exactly becomes that
    ``float``; any other fraction becomes :data:`UNREACHABLE` (an argument is a double or an
    integer, so it can never equal it), and so does a container holding one. Containers are
    copied; other values are returned as is.
    """
    t = type(value)
    if t is Inexact:
        exact = exact_number(value)
        if exact is None:
            return UNREACHABLE
        if type(exact) is Decimal:
            as_float = float(exact)
            return as_float if Decimal(repr(as_float)) == exact else UNREACHABLE
        return exact
    if t is list:
        items = [exact_value(v) for v in value]
        return UNREACHABLE if any(v is UNREACHABLE for v in items) else items
    if t is dict:
        members = {k: exact_value(v) for k, v in value.items()}
        return UNREACHABLE if any(v is UNREACHABLE for v in members.values()) else members
    return value


def literal(value: int | float | Decimal) -> int | float | Decimal:
    """The mathematical value of the JSON literal a number stands for (E1).

    A ``float`` stands for its shortest decimal (``repr``): the relay's parser keeps a literal
    as a double only when that decimal *is* the literal (``json_values.exact_float``).
    """
    if type(value) is float:
        return Decimal(repr(value))
    return value


def is_multiple(value: int | float, divisor: int | float | Decimal) -> bool:
    """Whether ``value`` is an integer multiple of ``divisor``, exactly (E1, ``multipleOf``).

    Both are finite and ``divisor > 0``; both stand for their literals' decimal values
    (:func:`literal`), so ``0.3`` is a multiple of ``0.1``. ``int`` by ``int`` is a remainder;
    everything else is divided in ``Fraction``.
    """
    if type(value) is int and type(divisor) is int:
        return value % divisor == 0
    if type(value) is float and value.is_integer() and type(divisor) is int:
        return int(value) % divisor == 0
    return (Fraction(literal(value)) / Fraction(literal(divisor))).denominator == 1


def show_number(value: int | float | Decimal) -> str:
    """A schema number for a message (bounded length; never an argument)."""
    if type(value) is Decimal:
        text = str(value)
    elif type(value) is int and value.bit_length() > 200:
        text = "a number of " + str(len(str(abs(value)))) + " digits"
    else:
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"
