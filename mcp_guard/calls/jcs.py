"""RFC 8785 JSON Canonicalization Scheme (JCS): one byte string per JSON value.

Used for the journal's ``arguments_sha256`` (keyed: :mod:`.journal_key`) and the lock file's
tool digests, so that a digest can be recomputed with any JCS implementation (and the key).

The rules (RFC 8785 section 3.2):

- no whitespace; ``null``, ``true``, ``false`` as literals;
- strings as ECMAScript ``JSON.stringify`` writes them: ``"`` and ``\\`` escaped, the control
  characters U+0000–U+001F as ``\\b \\t \\n \\f \\r`` or ``\\u00xx`` (lower-case hex), every
  other character as itself in UTF-8 (section 3.2.2.2);
- numbers as ECMAScript ``Number.prototype.toString`` writes the IEEE 754 double
  (section 3.2.2.3, ECMA-262 "Number::toString"): shortest round-trip digits, ``-0`` as
  ``0``, exponent form below 1e-6 and from 1e21 on (``1e+21``, ``1.5e-7``);
- object members sorted by their names compared as arrays of UTF-16 code units
  (section 3.2.3), recursively; arrays keep their order.

Inputs outside I-JSON (RFC 7493), decided here:

- An ``int`` is a JSON number, so it is written as the double nearest to it, as a JSON parser
  that reads numbers as doubles (ECMAScript's, the RFC's reference) would read it:
  ``9007199254740993`` canonicalizes like ``9007199254740992``. An integer beyond the double
  range (about 1.8e308) has no canonical form: ``ValueError``.
- A literal no double holds exactly (``json_values.Inexact``, which the guard's decoders
  make of ``0.1000000000000000000001`` or ``1e400``, spec decision E1) is written, like an
  ``int``, as the double a JSON parser reads it as (``0.1``); one beyond the double range has
  no canonical form: ``ValueError``.
- ``NaN`` and ``±Infinity`` (which Python's ``json`` module reads): ``ValueError``, as the
  RFC requires.
- A lone surrogate in a string (``"\\ud800"``, which Python's ``json`` module reads) is
  written as the escape ``\\udxxx``, as ``JSON.stringify`` (ECMAScript 2019 and later)
  writes it; it cannot be UTF-8.

Anything that is not a JSON value (a tuple, a set, bytes, a non-string key, a ``bool``
subclass...) raises ``TypeError``. Values are never echoed in messages (they may be secrets).
Nesting has no limit here: the writer keeps its own stack (memory linear in the depth), so a
value nested past Python's recursion limit is canonicalized like any other.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterator
from decimal import Decimal
from typing import Any, Final

from ..core.json_values import Inexact

__all__ = ["canonical_json", "canonical_sha256", "number_to_string"]

_ESCAPES: Final = {
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
    0x22: '\\"',
    0x5C: "\\\\",
}
_STRING_TABLE: Final[dict[int, str]] = {c: _ESCAPES.get(c, f"\\u{c:04x}") for c in range(0x20)} | {
    0x22: '\\"',
    0x5C: "\\\\",
}
# Lone surrogates (U+D800–U+DFFF as single code points in a Python str) become \\udxxx escapes.
_STRING_TABLE.update({c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)})


def number_to_string(value: float) -> str:
    """The ECMAScript ``Number::toString(value)`` of a finite double (ECMA-262, radix 10).

    Raises:
        ValueError: ``value`` is NaN or infinite (RFC 8785 section 3.2.2.3 forbids them).
    """
    if not math.isfinite(value):
        raise ValueError("RFC 8785: NaN and Infinity have no canonical JSON form")
    if value == 0:
        return "0"  # also -0
    if value < 0:
        return "-" + number_to_string(-value)
    # repr gives the shortest digit string that reads back as the same double (and, among
    # those, the one closest to the value), which is the s of ECMA-262's Number::toString.
    _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    all_digits = "".join(map(str, digit_tuple)).lstrip("0")  # "0.001" has digits (1,) already
    digits = all_digits.rstrip("0")
    exponent += len(all_digits) - len(digits)  # trailing zeros moved into the exponent
    k = len(digits)
    n = k + exponent  # value = 0.digits × 10^n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    exp = f"e{'+' if e >= 0 else '-'}{abs(e)}"
    if k == 1:
        return digits + exp
    return digits[0] + "." + digits[1:] + exp


def _utf16_key(name: str) -> bytes:
    """A sort key ordering strings by UTF-16 code units (big-endian bytes compare the same way)."""
    return name.encode("utf-16-be", "surrogatepass")


def _string(text: str) -> str:
    """A JSON string literal as ``JSON.stringify`` writes it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Surrogate code points: a high one followed by a low one is one character in UTF-16
        # (ECMAScript strings are UTF-16), so pair them first; lone ones are escaped below.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return '"' + text.translate(_STRING_TABLE) + '"'


def _scalar(value: Any) -> str:
    """The canonical text of a JSON value that is not an object or array."""
    t = type(value)
    if t is str:
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if t is int:
        try:
            as_double = float(value)
        except OverflowError:
            raise ValueError("RFC 8785: an integer beyond the double range has no canonical JSON form") from None
        return number_to_string(as_double)
    if t is float:
        return number_to_string(value)
    if t is Inexact and value.text:
        as_double = float(value.text)  # what an RFC 8785 implementation reads the literal as
        if not math.isfinite(as_double):
            raise ValueError("RFC 8785: a number beyond the double range has no canonical JSON form")
        return number_to_string(as_double)
    raise TypeError(f"RFC 8785: a {t.__name__} is not a JSON value")


_Members = Iterator[tuple[str, Any]]
"""What is left of an object or array: (the text before an item, the item)."""


def _open(value: dict[str, Any] | list[Any], out: list[str]) -> tuple[_Members, str]:
    """Append the opening bracket of ``value``; return its members (sorted for an object) and its closer."""
    if type(value) is list:
        out.append("[")
        return zip(itertools.chain(("",), itertools.repeat(",")), value, strict=False), "]"  # the commas never end
    assert type(value) is dict
    for key in value:
        if type(key) is not str:
            raise TypeError("RFC 8785: object member names must be strings")
    out.append("{")
    keys = sorted(value, key=_utf16_key)
    return iter([(("," if i else "") + _string(key) + ":", value[key]) for i, key in enumerate(keys)]), "}"


def _write(value: Any, out: list[str]) -> None:
    """Append the canonical text of ``value`` to ``out``, without recursion.

    A stack of the objects and arrays left open (each with the iterator of its remaining
    members) replaces the call stack, so nesting costs memory linear in its depth and never
    raises ``RecursionError`` (a schema nested past the interpreter's limit once did, in
    ``pinning.compare``).
    """
    if type(value) is not dict and type(value) is not list:
        out.append(_scalar(value))
        return
    append = out.append
    stack: list[tuple[_Members, str]] = []
    members, closer = _open(value, out)
    while True:
        for prefix, item in members:
            append(prefix)
            t = type(item)
            if t is dict or t is list:
                stack.append((members, closer))
                members, closer = _open(item, out)
                break
            append(_string(item) if t is str else _scalar(item))
        else:
            append(closer)
            if not stack:
                return
            members, closer = stack.pop()


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 canonical form of a JSON value, as UTF-8 bytes.

    Args:
        value: ``dict`` (``str`` keys), ``list``, ``str``, ``int``, ``float``, ``bool`` or
            ``None``, exact types, nested.

    Raises:
        ValueError: NaN, ±Infinity, or an integer or literal beyond the double range.
        TypeError: a value that is not JSON.
    """
    out: list[str] = []
    _write(value, out)
    # Lone surrogates were escaped above, so the text is valid Unicode and encodes as UTF-8.
    return "".join(out).encode("utf-8")


def canonical_sha256(value: Any) -> str:
    """Lower-case hex SHA-256 of :func:`canonical_json` ``(value)``; raises as it does."""
    return hashlib.sha256(canonical_json(value)).hexdigest()
