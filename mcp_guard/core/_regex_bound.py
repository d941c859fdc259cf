"""The arithmetic of ``_regex_cost``'s bounds: the least of a few polynomials in ``n``.

A :class:`Bound` is the least of at most :data:`_MAX_POLYS` polynomials in the remaining length
``n``, each with non-negative integer coefficients (a :data:`Poly`: the coefficients of ``n**0``,
``n**1``, ...), of degree at most :data:`_MAX_DEGREE`: sums, products, least and most of two bounds,
and :func:`disjoint_sum`, the sum of one bound over attempts that read disjoint stretches of the text.
Coefficients saturate at :data:`_CAP`. A bound of higher degree has no use as a bound:
:class:`Unbounded` (the analysis's one fault, with its reason) is raised then.

The rules that build bounds from a pattern, and why they hold, are ``_regex_cost``'s.
"""

from __future__ import annotations

__all__ = ["N1", "ONE", "ZERO", "Bound", "N", "Poly", "Unbounded", "disjoint_sum"]

Poly = tuple[int, ...]  # coefficients of n**0, n**1, ...
_MAX_POLYS = 4
_MAX_DEGREE = 6
_PROBES = (0, 64, 1 << 20, 1 << 40)
_PROBE = 1 << 20
_CAP = 1 << 40
"""Coefficients saturate here. A polynomial with a coefficient this large is at least that
many steps on every non-empty string (and on the empty one when it is the constant), past
any call's budget (``budget.MAX_WORK`` units of ``ecma_regex.STEPS_PER_UNIT`` steps, about
2**25): capping it changes no decision, at classification or at a call, and keeps the
arithmetic on machine-sized integers (nested bounded repetitions of ambiguous groups,
``^(((a{1,50}){1,50}){1,50}){1,50}$``, otherwise grow thousand-digit coefficients and take
minutes to classify)."""


def _padd(p: Poly, q: Poly) -> Poly:
    if len(p) < len(q):
        p, q = q, p
    return tuple(a + (q[i] if i < len(q) else 0) for i, a in enumerate(p))


def _pmul(p: Poly, q: Poly) -> Poly:
    out = [0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        if a:
            for j, b in enumerate(q):
                out[i + j] += a * b
    return tuple(out)


def _pmax(p: Poly, q: Poly) -> Poly:
    if len(p) < len(q):
        p, q = q, p
    return tuple(max(a, q[i] if i < len(q) else 0) for i, a in enumerate(p))


def _peval(p: Poly, n: int) -> int:
    acc = 0
    for c in reversed(p):
        acc = acc * n + c
    return acc


def _trim(p: Poly) -> Poly:
    """``p`` without zero leading terms, its coefficients saturated at :data:`_CAP`."""
    while len(p) > 1 and p[-1] == 0:
        p = p[:-1]
    if max(p) > _CAP:
        p = tuple(min(c, _CAP) for c in p)
    return p


def _least_at(polys: list[Poly], n: int) -> Poly:
    return min(polys, key=lambda p: (_peval(p, n), len(p)))


class Bound:
    """The least of a few polynomials in ``n`` with non-negative integer coefficients."""

    __slots__ = ("polys",)

    def __init__(self, polys: tuple[Poly, ...]) -> None:
        kept: list[Poly] = []
        # Dropping a candidate of a least-of only loosens the bound; none left means no useful bound.
        candidates = {q for q in (_trim(p) for p in polys) if len(q) <= _MAX_DEGREE + 1}
        if not candidates:
            raise Unbounded(f"its search time grows faster than the length to the power {_MAX_DEGREE}")
        for p in sorted(candidates, key=lambda p: (len(p), _peval(p, _PROBE))):
            if not any(
                len(k) <= len(p) and all(c <= (p[i] if i < len(p) else 0) for i, c in enumerate(k)) for k in kept
            ):
                kept.append(p)
        if len(kept) > _MAX_POLYS:
            # Keep the least polynomial at each probe length: short, medium and long strings.
            kept = list(dict.fromkeys(_least_at(kept, n) for n in _PROBES))
        self.polys = tuple(kept)

    @staticmethod
    def const(c: int) -> Bound:
        return Bound(((c,),))

    def __add__(self, other: Bound) -> Bound:
        if len(self.polys) == 1 and len(other.polys) == 1:
            return _single(_padd(self.polys[0], other.polys[0]))
        return Bound(tuple(_padd(p, q) for p in self.polys for q in other.polys))

    def __mul__(self, other: Bound) -> Bound:
        if len(self.polys) == 1 and len(other.polys) == 1:
            return _single(_pmul(self.polys[0], other.polys[0]))
        return Bound(tuple(_pmul(p, q) for p in self.polys for q in other.polys))

    def least(self, other: Bound) -> Bound:
        return Bound(self.polys + other.polys)

    def most(self, other: Bound) -> Bound:
        return Bound(tuple(_pmax(p, q) for p in self.polys for q in other.polys))

    def at(self, n: int) -> int:
        """The bound's value at ``n`` (the least of its polynomials there)."""
        return min(_peval(p, n) for p in self.polys)

    def degree(self) -> int:
        return min(len(p) for p in self.polys) - 1

    def is_one(self) -> bool:
        return any(p == (1,) or p == (0,) for p in self.polys)

    def __repr__(self) -> str:
        return f"Bound({self.polys})"


def _single(p: Poly) -> Bound:
    p = _trim(p)
    if len(p) > _MAX_DEGREE + 1:
        raise Unbounded(f"its search time grows faster than the length to the power {_MAX_DEGREE}")
    bound = Bound.__new__(Bound)
    bound.polys = (p,)
    return bound


ONE = Bound.const(1)
ZERO = Bound.const(0)
N = Bound(((0, 1),))
N1 = Bound(((1, 1),))


class Unbounded(Exception):
    """The pattern's backtracking work has no polynomial bound (the message says why)."""


def disjoint_sum(work: Bound, extra: int) -> Bound:
    """Bound of the sum of ``work`` over attempts that read disjoint stretches of ``n`` characters.

    Each attempt reads its stretch and at most ``extra`` characters past it; there are at
    most ``n + 1`` attempts. Each polynomial ``p`` of ``work`` has non-negative coefficients,
    so ``p(a) + p(b) <= p(a + b) + p(0)``, and the sum is at most
    ``p((1 + extra) * n + extra) + (n + 1) * p(0)``.
    """
    stretch = (extra, 1 + extra)
    out = []
    for p in work.polys:
        composed: Poly = (0,)
        for c in reversed(p):
            composed = _padd(_pmul(composed, stretch), (c,))
        out.append(_padd(composed, (p[0], p[0])))
    return Bound(tuple(out))
