"""JSON value rules, written once: types, equality, finiteness, JSON Pointers.

Python's data model disagrees with JSON in ways that matter to a guard: ``bool`` is a
subclass of ``int`` (``True == 1``), ``json.loads`` accepts ``NaN`` and ``Infinity`` and
turns ``1e400`` into ``inf``, and tuples, sets and bytes are not JSON at all. Every rule
here uses exact ``type(...) is`` tests so that none of that leaks into a verdict
(spec decisions 5, 6, 7 and 12).

What counts as a JSON value: ``dict`` with ``str`` keys, ``list``, ``str``, ``int``
(not ``bool``), finite ``float``, ``bool``, ``None`` — exact types, no subclasses.
A non-finite ``float`` is a value JSON cannot carry: a *verdict* (``validation``), not a
fault. So is an :class:`Inexact` number: a literal the relay's parser met whose decimal
value a double cannot hold (``0.99999999999999999999``, ``-1e-400``); rounding it would
silently change what the client sent (spec decision 12, extended to rounding). Anything
else is a programming fault of the caller: ``TypeError``.

This module does not know schemas.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Hashable, Iterable
from decimal import Decimal
from typing import Any, Final

__all__ = [
    "NOT_COMPARABLE",
    "Inexact",
    "TooLarge",
    "canonical",
    "canonical_once",
    "canonical_sized",
    "escape_token",
    "exact_float",
    "in_double_range",
    "inexact_value",
    "is_integer",
    "is_json",
    "is_number",
    "is_uncarriable",
    "json_once",
    "json_type_name",
    "literal_float",
    "literal_int",
    "max_depth",
    "pointer",
    "scan",
]

_isfinite = math.isfinite


class Inexact:
    """A number literal whose decimal value no double holds exactly.

    Produced by :func:`exact_float` and :func:`literal_float` (the relay's ``parse_float``
    hooks). It is not a JSON value for the validator (arguments holding one are refused,
    schemas holding one are not supported), but it keeps the literal's text so that the
    relay can pass it on digit for digit where it only relays. It never prints the text
    (``repr`` and ``str`` show none): it may be an argument, and arguments may be secrets.

    Attributes:
        text: the literal as it appeared in the JSON text (a valid JSON number token).
    """

    __slots__ = ("text",)

    def __init__(self, text: str = "") -> None:
        self.text = text

    def __repr__(self) -> str:
        return "Inexact()"


def exact_float(text: str) -> float | Inexact:
    """``parse_float`` hook: the double for ``text`` when it denotes exactly the same decimal value.

    The relay serializes a float with ``repr``, the shortest decimal that round-trips; when
    that decimal equals the literal's value (``0.1``, ``2.5``, ``1e2``, ``-0.0``), forwarding
    the double forwards exactly what was sent. Otherwise (more digits than a double holds,
    underflow to zero) an :class:`Inexact` stands in its place. From 2**53 up, where every
    double is an integer that Python compares with integers by its exact value, the literal
    must *be* that value: ``1e25`` (10**25, which no double holds) is an :class:`Inexact`,
    ``1e22`` is not. ``1e400`` still parses to ``inf`` (the non-finite rule).
    """
    value = float(text)
    if not _isfinite(value):
        return value
    if value >= _EXACT_SPAN or value <= -_EXACT_SPAN:
        # Here every double is an integer, and its shortest decimal may not be its value
        # (1e25 is 10000000000000000905969664): Python compares it with integers by its
        # value, so it stands for the literal only when the two are the same number.
        return value if Decimal(text) == int(value) else Inexact(text)
    shortest = repr(value)
    if shortest == text or Decimal(shortest) == Decimal(text):
        return value
    return Inexact(text)


_EXACT_SPAN: Final = 2.0**53
"""Below this magnitude a double and its shortest decimal order alike against every integer."""


def literal_float(text: str) -> float | Inexact:
    """``parse_float`` hook for what the guard relays from the upstream: like :func:`exact_float`,
    except that a literal beyond the double range (``1e400``) is also an :class:`Inexact`.

    Every number literal of the upstream's text then either parses to a double that is
    written back with the same value, or keeps its text: a result is relayed digit for
    digit, and a schema's ``minimum: 1.00000000000000000001`` is never read as ``1.0``.
    """
    value = exact_float(text)
    if type(value) is float and not _isfinite(value):
        return Inexact(text)
    return value


INT_BEYOND_DOUBLE_DIGITS: Final = 309
"""The fewest digits of an integer literal beyond the range of a double (the largest double is about
1.8e308, 309 digits): a shorter one is always within it."""


def literal_int(text: str) -> int | Inexact:
    """``parse_int`` hook for what a client sends: the integer, except that one beyond the range of a double
    (about 1.8e308) is an :class:`Inexact`, as ``1e400`` is (:func:`literal_float`).

    JSON does not tell ``1e400`` from a 401-digit integer: both are one number, beyond the range RFC 8259
    section 6 gives interoperability for, and a JavaScript server reads either as ``Infinity`` (Go's
    ``float64`` cannot hold it), past an ``integer`` or ``maximum`` the guard approved. So both are refused
    in arguments, in every profile (spec decision 12; docs/input-schema-subset.md E1), and relayed as
    written elsewhere. Red team 38 F1: the integer form was forwarded digit for digit.

    Raises:
        ValueError: more digits than Python reads (``sys.get_int_max_str_digits``), as ``int`` does.
    """
    value = int(text)
    if len(text) >= INT_BEYOND_DOUBLE_DIGITS:
        try:
            float(value)
        except OverflowError:
            return Inexact(text)
    return value


def inexact_value(value: Inexact) -> int | Decimal | None:
    """The exact value of an :class:`Inexact` literal (an ``int`` when integral), or ``None`` when
    its exponent reaches past the guard's digit limit (decision 12) or its text is not a number.

    The ``extended`` profile enforces such literals exactly (E1); the other profiles refuse them.
    """
    try:
        d = Decimal(value.text)
    except (ArithmeticError, ValueError):
        return None
    limit = sys.get_int_max_str_digits() or 4300
    if not d.is_finite() or abs(d.adjusted()) > limit:
        return None
    if d == d.to_integral_value():
        return int(d)
    return d


def in_double_range(value: Inexact) -> bool:
    """Whether a literal lies within the range of an IEEE 754 double: it does not overflow to an infinity
    (``1e400``), and it is zero or does not underflow to zero (``1e-400``).

    A literal outside that range is a number JSON cannot carry between the guard and a server: RFC 8259
    section 6 gives interoperability only within the range of binary64, and the parsers of nearly every
    server (Python, JavaScript, Go) read ``1e400`` as an infinity and ``1e-400`` as 0, which can break the
    very constraint the guard approved (``exclusiveMinimum: 0``). So it is refused in every profile (spec
    decision 12, which names ``1e400``); a literal within the range that no double holds exactly
    (``0.1000000000000000000001``) is judged by its exact value under ``extended`` (E1).
    """
    try:
        nearest = float(value.text)
    except ValueError:
        return False
    if not _isfinite(nearest):
        return False
    return nearest != 0.0 or Decimal(value.text) == 0


def is_uncarriable(value: Any) -> bool:
    """True for a number JSON cannot carry exactly here: NaN, ±inf, or an :class:`Inexact`."""
    t = type(value)
    return (t is float and not _isfinite(value)) or t is Inexact


def escape_token(token: str | int) -> str:
    """One JSON Pointer reference token, escaped per RFC 6901 (``~`` → ``~0``, ``/`` → ``~1``)."""
    text = str(token)
    if "~" in text or "/" in text:
        return text.replace("~", "~0").replace("/", "~1")
    return text


def pointer(parts: Iterable[str | int]) -> str:
    """The JSON Pointer (RFC 6901) for a path of object keys and array indices; ``""`` for none."""
    tokens = parts if type(parts) is tuple else tuple(parts)
    if not tokens:
        return ""
    text = "/".join(map(str, tokens))
    if "~" in text or text.count("/") != len(tokens) - 1:  # a token holds `~` or `/`: escape each
        return "".join("/" + escape_token(p) for p in tokens)
    return "/" + text


def is_integer(value: Any) -> bool:
    """JSON Schema ``integer``: a number with no fractional part (``1`` and ``1.0``), never a bool.

    Spec decisions 5 and 6. Non-finite floats are not integers.
    """
    t = type(value)
    return t is int or (t is float and value.is_integer())


def is_number(value: Any) -> bool:
    """JSON Schema ``number``: an ``int`` or a finite ``float``, never a bool (decision 6, 12)."""
    t = type(value)
    return t is int or (t is float and _isfinite(value))


def json_type_name(value: Any) -> str:
    """The JSON type of a value for messages: object, array, string, integer, number, boolean, null.

    Non-JSON Python values are named by their Python type (``"tuple"``); this never
    describes the value itself, only its type.
    """
    t = type(value)
    if t is dict:
        return "object"
    if t is list:
        return "array"
    if t is str:
        return "string"
    if t is bool:
        return "boolean"
    if t is int:
        return "integer"
    if t is float:
        if not _isfinite(value):
            return "non-finite number"
        return "integer" if value.is_integer() else "number"
    if value is None:
        return "null"
    return t.__name__


_SCALARS = (str, int, bool)


def is_json(value: Any) -> bool:
    """True when ``value`` is a JSON value in the exact sense of this module, all numbers finite.

    Any depth is safe: a bounded recursive walk (:func:`_tree`) decides the common case, and a
    value it cannot decide (deeper than :data:`_TREE_DEPTH`, more than :data:`_TREE_BUDGET`
    containers, or not JSON) goes to the iterative walk, which also tells a container shared
    by several parents (fine) from one that contains itself (not JSON). Used on the fast path
    for positions the schema does not constrain (undeclared properties, untyped array items),
    and to decide whether the slower :func:`scan` is needed at all.
    """
    t = type(value)
    if t is dict or t is list:
        return _tree(value, _TREE_BUDGET, 0) >= 0 or _is_json_container(value)
    if t is str or t is int or t is bool or value is None:
        return True
    if t is float:
        return _isfinite(value)
    return False


_TREE_DEPTH: Final = 200
"""Nesting :func:`_tree` walks recursively before it hands a value to the iterative walk."""

_TREE_BUDGET: Final = 100_000
"""Containers :func:`_tree` visits before it hands a value to the iterative walk (a Python
caller's shared containers can make a small value a huge tree)."""


def _tree(value: dict[Any, Any] | list[Any], budget: int, depth: int) -> int:
    """Recursive check of a container: the containers still allowed, or -1 for "undecided".

    -1 means: not JSON, or too deep or too large for this walk; :func:`_is_json_container`
    decides. A cycle always ends here as too deep, so it is never walked forever.
    """
    budget -= 1
    if budget < 0 or depth > _TREE_DEPTH:
        return -1
    items: Any = value
    if type(value) is dict:
        for key in value:
            if type(key) is not str:
                return -1
        items = value.values()
    for item in items:
        ti = type(item)
        if ti is str or ti is int or ti is bool or item is None:
            continue
        if ti is dict or ti is list:
            budget = _tree(item, budget, depth + 1)
            if budget < 0:
                return -1
        elif ti is not float or not _isfinite(item):
            return -1
    return budget


def _is_json_container(value: dict[Any, Any] | list[Any]) -> bool:
    """Iterative check of a container. A container met twice is checked once (shared, as Python
    callers may build them); a container that contains itself is not JSON (False)."""
    active: set[int] = {id(value)}  # containers on the current path
    done: set[int] = set()  # containers fully checked
    stack: list[tuple[Any, Any]] = [(value, iter(value.items()) if type(value) is dict else iter(value))]
    while stack:
        container, items = stack[-1]
        child: Any = None
        if type(container) is dict:
            for key, item in items:
                if type(key) is not str:
                    return False
                ti = type(item)
                if ti is str or ti is int or ti is bool or item is None:
                    continue
                if ti is float:
                    if not _isfinite(item):
                        return False
                    continue
                if ti is not dict and ti is not list:
                    return False
                child = item
                break
        else:
            for item in items:
                ti = type(item)
                if ti is str or ti is int or ti is bool or item is None:
                    continue
                if ti is float:
                    if not _isfinite(item):
                        return False
                    continue
                if ti is not dict and ti is not list:
                    return False
                child = item
                break
        if child is None:  # this container is done
            stack.pop()
            active.discard(id(container))
            done.add(id(container))
            continue
        cid = id(child)
        if cid in active:
            return False  # a cycle
        if cid not in done:
            active.add(cid)
            stack.append((child, iter(child.items()) if type(child) is dict else iter(child)))
    return True


def scan(value: Any, *, what: str = "value") -> list[tuple[str | int, ...]]:
    """Walk a value completely; return the paths of non-finite numbers, in document order.

    Args:
        value: the Python value to check (arguments or a schema).
        what: a word for error messages (``"arguments"``, ``"schema"``).

    Returns:
        The path (tuple of keys and indices) of every number JSON cannot carry exactly
        (``NaN``/``±inf`` floats and :class:`Inexact` values), in document order.

    Raises:
        TypeError: a value that is not JSON (tuple, set, bytes, a dict with a non-string
            key, a subclass of a JSON type, a container that contains itself, any other
            object); the message names its JSON Pointer and Python type, never the value.
            A container shared by several parents is fine, and walked once.
    """
    # Paths are kept as links to the parent's entry in ``trail`` and rebuilt only for a finding:
    # building each child's path as a tuple would cost time quadratic in the nesting depth.
    trail: list[tuple[int, str | int]] = [(-1, "")]

    def path_of(index: int) -> tuple[str | int, ...]:
        keys: list[str | int] = []
        while index > 0:
            parent, key = trail[index]
            keys.append(key)
            index = parent
        return tuple(reversed(keys))

    found: list[tuple[str | int, ...]] = []
    done: set[int] = set()  # containers already walked (a shared one is walked once)
    active: set[int] = set()  # containers on the current path (one met again is a cycle)
    stack: list[tuple[Any, int, bool]] = [(value, 0, False)]
    while stack:
        current, at, leaving = stack.pop()
        t = type(current)
        if leaving:
            active.discard(id(current))
            done.add(id(current))
            continue
        if t is str or t is int or t is bool or current is None:
            continue
        if t is float:
            if not _isfinite(current):
                found.append(path_of(at))
            continue
        if t is Inexact:
            found.append(path_of(at))
            continue
        if t is not dict and t is not list:
            raise TypeError(f"{what} at {pointer(path_of(at))!r} is not JSON: Python type {t.__name__}")
        cid = id(current)
        if cid in done:
            continue
        if cid in active:
            raise TypeError(f"{what} at {pointer(path_of(at))!r} is not JSON: it contains itself (a cycle)")
        active.add(cid)
        stack.append((current, at, True))
        children: list[tuple[Any, int, bool]] = []
        if t is dict:
            for key, item in current.items():
                if type(key) is not str:
                    raise TypeError(
                        f"{what} at {pointer(path_of(at))!r} is not JSON: an object key of Python type "
                        f"{type(key).__name__} (JSON object keys are strings)"
                    )
                trail.append((at, key))
                children.append((item, len(trail) - 1, False))
        else:
            for index, item in enumerate(current):
                trail.append((at, index))
                children.append((item, len(trail) - 1, False))
        stack.extend(reversed(children))
    return found


class _NotComparable:
    """A key equal to nothing but itself; stands for a value too deep to match any choice."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_COMPARABLE"


NOT_COMPARABLE: Hashable = _NotComparable()


class TooLarge(ValueError):
    """Raised by :func:`canonical` when a value, expanded as a tree, has more nodes than its cap."""


def canonical(value: Any, depth: int = 64, cap: int = 4_000_000) -> Hashable:
    """A hashable key such that two JSON values are equal (decision 7) iff their keys are equal.

    Numbers compare by value (``1 == 1.0``, ``0 == -0.0``, big integers exactly); booleans
    are tagged so that ``True`` never equals ``1``, at every depth (decision 6); strings
    compare case-sensitively; arrays by order and values; objects by keys and values.

    Args:
        value: a JSON value. Anything else in it (a set, a tuple, a subclass, a non-string
            key, NaN) yields :data:`NOT_COMPARABLE` at its place (an :class:`Inexact` literal or a
            ``Decimal`` is keyed by its exact value: the ``extended`` profile's numbers, E1), which equals no choice;
            never an exception (the caller's JSON scan reports such a value, with its pointer).
        depth: how many container levels to follow; a value nested deeper yields
            :data:`NOT_COMPARABLE`, which equals no choice. Callers pass the depth of the
            deepest ``enum`` choice, so the recursion is bounded by the schema, not by the
            arguments.
        cap: the most nodes the key may stand for, counted as a tree (within ``depth``).

    Raises:
        TooLarge: the value has more than ``cap`` nodes as a tree. Only a Python caller's
            shared sub-objects can make that happen in a small value (``x = [x, x]`` forty
            times over); the key of such a value costs as much to hash or compare as the
            tree it stands for, so it is refused rather than built.

    A container met twice is keyed once per depth, so building a key is linear in the
    distinct containers, not in the paths to them.
    """
    t = type(value)
    if t is dict or t is list:
        key, size = _canonical(value, depth, {})
        if size > cap:
            raise TooLarge(f"a value of more than {cap:,} nodes (counted as a tree)")
        return key
    return _canonical(value, depth, None)[0]


def canonical_sized(value: Any, depth: int, cap: int) -> tuple[Hashable, int]:
    """:func:`canonical` and the number of nodes the key stands for (the work it cost, for a budget).

    Raises:
        TooLarge: as :func:`canonical`.
    """
    t = type(value)
    if t is dict or t is list:
        key, size = _canonical(value, depth, {})
        if size > cap:
            raise TooLarge(f"a value of more than {cap:,} nodes (counted as a tree)")
        return key, size
    return _canonical(value, depth, None)


def _canonical(
    value: Any, depth: int, memo: dict[tuple[int, int], tuple[Hashable, int]] | None
) -> tuple[Hashable, int]:
    """The key of :func:`canonical` and the number of nodes it stands for."""
    t = type(value)
    if t is str or t is int:
        return value, 1
    if t is bool:
        return (bool, value), 1
    if t is float:
        return (value if value == value else NOT_COMPARABLE), 1  # NaN never equals anything, not even itself
    if value is None:
        return None, 1
    if t is Inexact or t is Decimal:  # an exact literal (extended, E1); numbers compare by value
        exact = inexact_value(value) if t is Inexact else value
        return (NOT_COMPARABLE if exact is None else exact), 1
    if (t is not dict and t is not list) or depth <= 0:
        return NOT_COMPARABLE, 1
    assert memo is not None
    seen = (id(value), depth)
    found = memo.get(seen)
    if found is not None:
        return found
    key: Hashable
    size = 1
    if t is dict:
        if any(type(k) is not str for k in value):
            key = NOT_COMPARABLE
        else:
            members = []
            for k, v in value.items():
                sub, n = _canonical(v, depth - 1, memo)
                members.append((k, sub))
                size += n
            key = (dict, frozenset(members))
    else:
        items = []
        for v in value:
            sub, n = _canonical(v, depth - 1, memo)
            items.append(sub)
            size += n
        key = (list, tuple(items))
    memo[seen] = (key, size)
    return key, size


def json_once(value: Any, w: list[Any]) -> bool:
    """:func:`is_json` for generated validators: a container is walked once per call.

    ``w`` is the call's cell (``[budget, scan flag, memo]``); the memo (by ``id``, the
    arguments being alive and unchanged during the call) makes the ``oneOf`` branches that
    look at the same unconstrained container share one walk.
    """
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return True
    if t is float:
        return _isfinite(value)
    if t is not dict and t is not list:
        return False
    memo = w[2]
    if memo is None:
        memo = w[2] = {}
    seen = id(value)
    found = memo.get(seen)
    if found is None:
        found = memo[seen] = is_json(value)
    return found  # type: ignore[no-any-return]


def canonical_once(value: Any, depth: int, w: list[Any]) -> Hashable:
    """:func:`canonical` for generated validators: a container is keyed once per call (see :func:`json_once`).

    Raises:
        TooLarge: the value, counted as a tree, is larger than the call's remaining budget.
    """
    t = type(value)
    if t is str or t is int:
        return value  # type: ignore[no-any-return]  # as ``_canonical`` keys them, without the call
    if t is not dict and t is not list:
        return _canonical(value, depth, None)[0]
    memo = w[2]
    if memo is None:
        memo = w[2] = {}
    seen = ("canonical", id(value), depth)
    found = memo.get(seen)
    if found is None:
        found = memo[seen] = canonical(value, depth, w[0])  # TooLarge past the call's budget
    return found  # type: ignore[no-any-return]


def max_depth(value: Any, limit: int = 1 << 30) -> int:
    """How many container levels a JSON value has (a scalar: 0, ``[1]``: 1). Iterative.

    Stops at ``limit + 1`` ("deeper than ``limit``"). A container met again at a level no
    deeper than before is not walked again, so shared sub-objects cost no more than once per
    level.
    """
    deepest = 0
    reached: dict[int, int] = {}
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, level = stack.pop()
        t = type(current)
        if t is not dict and t is not list:
            continue
        if reached.get(id(current), -1) >= level:
            continue
        reached[id(current)] = level
        level += 1
        if level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        stack.extend((v, level) for v in (current.values() if t is dict else current))
    return deepest
