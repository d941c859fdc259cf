"""The proof behind ``ecma_regex``'s cost: an upper bound on the steps of a backtracking search.

Model. A backtracking engine (``regress``) explores, from each start position, a tree of
path prefixes; one step tests one character or one assertion. Its work from one start is
the number of path prefixes it explores; a search tries every start position unless the
pattern begins with ``^`` (then every later start fails at once). For every sub-pattern
``X`` and remaining length ``n`` the analysis proves, as polynomials in ``n`` with
non-negative coefficients (a :class:`Bound` is the least of a few such polynomials):

- ``ways(X)``: paths by which ``X`` reads one fixed span of the text;
- ``ends(X)``: end positions one attempt of ``X`` can reach for a given text (1 when ``X``
  is prefix-free, no word of it a proper prefix of another, or anchored at the end);
- ``out(X)``: outcomes (path, end) one attempt hands to what follows;
- ``work(X)``: steps of one attempt, its failed branches included.

Rules (``first``/``last``: characters that can start/end a non-empty match; ``chars``:
every character it can read; ``pairs``: adjacent character pairs inside one match):

- Concatenation ``XY``: ``work = work(X) + out(X) * work(Y)``. When ``Y`` cannot start
  with a character that follows an end of ``X`` inside a longer match of ``X`` (*guarded*),
  every end of ``X`` but the farthest fails on ``Y``'s first test:
  ``work = work(X) + out(X) * entry(Y) + ways(X) * work(Y)``. When ``Y`` cannot read a last
  character of ``X``, the attempts of ``Y`` from the distinct ends of ``X`` read disjoint
  stretches (each end follows such a character), and their work sums like a loop's below.
  The split of a span between ``X`` and ``Y`` is unique when either side has a fixed
  length, ``X`` is prefix-free or ``Y`` suffix-free, ``Y`` cannot read a last character of
  ``X`` or ``X`` a first one of ``Y``, or no adjacent pair inside ``X`` (or ``Y``) joins a
  last character of ``X`` to a first character of ``Y`` (a second split point would be
  such a pair). A sequence is analysed grouped from the left and from the right; both
  analyses hold, and the better bound of each is kept.
- Alternation: sums; the maximum when the branches' first characters are disjoint (only
  one branch passes its first test).
- Quantifier ``X{lo,hi}``: when ``X`` reads a span in one way and its iterations can be
  cut in one way only (fixed length, prefix- or suffix-free, or the adjacent-pair rule of
  concatenation applied to ``X`` against itself), at most one chain of iterations ends at
  each position: ``out <= n + 1`` and ``work <= (n + 1) * (work(X) + 1)``. Under the
  adjacent-pair rule only the farthest end of an iteration can start the next one, so the
  iterations that continue read disjoint stretches of the text: when ``X`` reads at most a
  constant ``ov`` past its farthest end, their work sums to ``p((1 + ov) * n) + n * p(0)``
  for each polynomial ``p`` bounding ``work(X)`` (``p`` is superadditive), which keeps
  ``^[a-z]+(-[a-z]+)*$`` linear. Otherwise an unbounded quantifier can cut the same text
  into exponentially many chains (``(a+)+``, ``(a|aa)+``, ``(\\w+\\s?)*``): refused
  (:class:`Unbounded`). A bounded one is expanded into nested optionals and costed.
- Engine costs beyond tests: an iteration of a loop whose body is not a single character
  class costs 96 steps (224 when it captures), as measured; a leaf (an end of an iteration
  that no further iteration can start from) 8.
- Lookarounds run their body to its first success: ``work(body) + out(body) + 1``; a
  lookbehind body is analysed reversed, as the engine runs it. A backreference compares at
  most ``n`` characters; under a quantifier it is refused by the parser.

All bounds are monotone in ``n``; the search bound is ``work + out`` of the whole pattern
from one start, times ``n + 1`` starts unless anchored, plus ``n + 1`` for reading the
string. ``tests/core/test_ecma_regex.py`` checks it against a step-counting backtracker.

The polynomials' arithmetic (sums, products, least of, the sum over disjoint stretches, saturation)
is ``_regex_bound``'s; this module holds the rules above and the walk of the pattern's tree.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, replace

from ._regex_bound import N1, ONE, ZERO, Bound, N, Unbounded, disjoint_sum
from ._regex_syntax import ANY, CharSet, Node, intersects, shown, union

__all__ = ["search_steps"]

_ITERATION = 96
_CAPTURE_ITERATION = 224
_LEAF = 8
_MAX_PAIRS = 48
_MAX_EXPANSION = 1000
_MAX_OPS = 256
"""Iterations the analysis may expand, over the whole pattern. A bounded repetition of an
ambiguous part, ``X{lo,hi}``, is costed by expanding it into ``hi`` copies (each a
concatenation and an optional, about 0.1 ms); the pattern's own sequences and alternations
are bounded by its length. The corpus's and the test suite's 47 patterns expand at most 5;
nested or many bounded repetitions of ambiguous parts (``^(((a{1,999}){1,999}){1,999})$``,
``(a|aa){1,999}`` in many branches) would expand hundreds of thousands, for tens of seconds
on the event loop that classifies a listing. Past this the pattern is refused
(:class:`Unbounded`), after at most about 40 ms of analysis."""
_budget = threading.local()


@dataclass(frozen=True, slots=True)
class _Info:
    minlen: int
    maxlen: int | None
    first: CharSet
    last: CharSet
    chars: CharSet
    pairs: tuple[tuple[CharSet, CharSet], ...]
    pf: bool  # prefix-free: no word a proper prefix of another
    sf: bool  # suffix-free
    ea: bool  # every match ends at the end of the input
    sa: bool  # every match starts with ^
    entry: Bound | None  # work of a failing attempt when the next char is not in first
    ov: int | None  # reads at most this far past its farthest successful end (None: unbounded)
    ovf: int | None  # when it fails, reads at most this far past its start
    peek: int | None  # lookaheads and \b read at most this far past the end of what it consumed
    ways: Bound
    ends: Bound
    out: Bound
    work: Bound

    @property
    def nullable(self) -> bool:
        return self.minlen == 0

    @property
    def fixed(self) -> bool:
        return self.maxlen == self.minlen

    def span(self) -> Bound:
        if self.maxlen is None:
            return N1
        return N1.least(Bound.const(self.maxlen - self.minlen + 1))

    def starts(self) -> Bound:
        return ONE if self.sf or self.fixed else self.span()


def _imax(*values: int | None) -> int | None:
    if any(v is None for v in values):
        return None
    return max(v for v in values if v is not None)


def _pairs(*groups: tuple[tuple[CharSet, CharSet], ...]) -> tuple[tuple[CharSet, CharSet], ...]:
    seen: list[tuple[CharSet, CharSet]] = []
    for group in groups:
        for pair in group:
            if pair[0] and pair[1] and pair not in seen:
                seen.append(pair)
    if len(seen) > _MAX_PAIRS:
        a: CharSet = ()
        b: CharSet = ()
        for x, y in seen:
            a, b = union(a, x), union(b, y)
        return ((a, b),)
    return tuple(seen)


def _joins(pairs: tuple[tuple[CharSet, CharSet], ...], left: CharSet, right: CharSet) -> bool:
    """Whether some adjacent pair inside a match joins a ``left`` character to a ``right`` one."""
    return any(intersects(a, left) and intersects(b, right) for a, b in pairs)


_EMPTY = _Info(0, 0, (), (), (), (), True, True, False, False, None, 0, 0, 0, ONE, ONE, ONE, ONE)


def _chars(cs: CharSet, weight: int = 1) -> _Info:
    test = Bound.const(weight)
    return _Info(1, 1, cs, cs, cs, (), True, True, False, False, test, 0, 1, 0, ONE, ONE, ONE, test)


def _literal(run: list[Node]) -> _Info:
    """A run of single characters: what folding ``_concat`` over them gives, computed at once."""
    sets = [node.chars for node in run]
    if len(sets) == 1:
        return _chars(sets[0], run[0].weight)
    chars: CharSet = ()
    for cs in sets:
        chars = union(chars, cs)
    pairs = _pairs(tuple(itertools.pairwise(sets)))
    k = len(sets)
    steps = Bound.const(sum(node.weight for node in run))
    entry = Bound.const(run[0].weight)
    return _Info(k, k, sets[0], sets[-1], chars, pairs, True, True, False, False, entry, 0, k, 0, ONE, ONE, ONE, steps)


def _zero_width(ea: bool, sa: bool, peek: int | None, work: Bound) -> _Info:
    return _Info(0, 0, (), (), (), (), True, True, ea, sa, None, peek, peek, peek, ONE, ONE, ONE, work)


def _after_end(x: _Info) -> CharSet:
    """Characters that can follow an end of ``X`` inside a longer match of ``X`` from the same start.

    A shorter match ends with a last character of ``X`` (or is empty, when ``X`` is nullable);
    the longer one reads the next character right after it: an adjacent pair inside ``X``.
    """
    out: CharSet = x.first if x.nullable else ()
    for a, b in x.pairs:
        if intersects(a, x.last):
            out = union(out, b)
    return out


def _spend() -> None:
    """Charge one expanded iteration to the analysis's :data:`_MAX_OPS` (raises :class:`Unbounded` past it)."""
    _budget.left -= 1
    if _budget.left < 0:
        raise Unbounded(
            f"the guard's analysis of its repetitions needs more than {_MAX_OPS} steps "
            "(bounded repetitions of ambiguous parts, nested or many)"
        )


def _concat(x: _Info, y: _Info) -> _Info:
    minlen = x.minlen + y.minlen
    maxlen = None if x.maxlen is None or y.maxlen is None else x.maxlen + y.maxlen
    fixed = maxlen == minlen
    first = union(x.first, y.first) if x.nullable else x.first
    last = union(y.last, x.last) if y.nullable else y.last
    chars = union(x.chars, y.chars)
    pairs = _pairs(x.pairs, y.pairs, ((x.last, y.first),))
    # Guarded: every end of X but the farthest is followed by a character of X, which Y cannot
    # start with, so Y costs only its entry there (and, when nullable, hands on its empty match).
    after = _after_end(x)
    guarded = not intersects(after, y.first) and y.entry is not None
    pf = fixed or (x.pf and y.pf) or (y.pf and not y.nullable and not intersects(after, y.first))
    sf = fixed or (x.sf and y.sf) or (x.sf and not x.nullable and not intersects(x.last, y.chars))
    ea = y.ea or (x.ea and y.maxlen == 0)
    sa = x.sa
    if not x.nullable:
        entry = x.entry
    elif x.entry is not None and y.entry is not None:
        entry = x.entry + x.ways * y.entry
    else:
        entry = None
    split_one = (
        x.fixed
        or y.fixed
        or x.pf
        or y.sf
        # A second split point would put a last character of X inside Y, or a first one of Y inside X.
        or not intersects(x.last, y.chars)
        or not intersects(x.chars, y.first)
        or ((not x.nullable or not intersects(x.first, y.first)) and not _joins(x.pairs, x.last, y.first))
        or ((not y.nullable or not intersects(x.last, y.last)) and not _joins(y.pairs, x.last, y.first))
    )
    splits = ONE if split_one else x.ends.least(y.starts())
    ways = x.ways * y.ways * splits
    ends = ONE if pf or ea else _span(minlen, maxlen)
    out = (x.out * y.out).least(ends * ways)
    if guarded:
        assert y.entry is not None
        out = out.least(x.out * y.ways + x.ways * y.out if y.nullable else x.ways * y.out)
        work = (x.work + x.out * y.entry + x.ways * y.work).least(x.work + x.out * y.work)
    else:
        work = x.work + x.out * y.work
    if y.peek is not None and not intersects(x.last, y.chars):
        # Every end of X but the start follows a last character of X, which Y cannot read: the
        # attempts of Y from the distinct ends of X read disjoint stretches of the text.
        work = work.least(x.work + x.ways * (disjoint_sum(y.work, 1 + y.peek) + y.work))
    ov = _imax(x.ov, y.ov) if (guarded or x.pf) else None
    if y.entry is not None and not intersects(x.chars, y.first):
        # Confined: X reads only the run of its own characters and the one after it, where a
        # successful Y must start (every earlier character is one of X's): X reads nothing past
        # the end of a success.
        ov = _least(ov, y.ov if not y.nullable else _imax(1, y.ov))
    ovf = None
    if x.maxlen is not None:
        ovf = _imax(x.ovf, None if x.ov is None else x.maxlen + x.ov, None if y.ovf is None else x.maxlen + y.ovf)
    peek = _imax(x.peek, y.peek)
    reach = _reach(maxlen, peek)
    ov = _least(ov, reach)
    ovf = _least(ovf, reach)
    return _Info(minlen, maxlen, first, last, chars, pairs, pf, sf, ea, sa, entry, ov, ovf, peek, ways, ends, out, work)


def _reach(maxlen: int | None, peek: int | None) -> int | None:
    """A bounded-length node reads at most its length, one failed test and its peeks."""
    if maxlen is None or peek is None:
        return None
    return maxlen + 1 + peek


def _least(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _span(minlen: int, maxlen: int | None) -> Bound:
    if maxlen is None:
        return N1
    return N1.least(Bound.const(maxlen - minlen + 1))


def _alt(x: _Info, y: _Info) -> _Info:
    minlen = min(x.minlen, y.minlen)
    maxlen = None if x.maxlen is None or y.maxlen is None else max(x.maxlen, y.maxlen)
    fixed = maxlen == minlen
    disjoint = not x.nullable and not y.nullable and not intersects(x.first, y.first)
    pf = fixed or (x.pf and y.pf and disjoint)
    sf = fixed or (x.sf and y.sf and not x.nullable and not y.nullable and not intersects(x.last, y.last))
    entry = x.entry + y.entry if x.entry is not None and y.entry is not None else None
    ways = x.ways.most(y.ways) if disjoint else x.ways + y.ways
    ends = ONE if pf or (x.ea and y.ea) else _span(minlen, maxlen)
    out = (x.out + y.out).least(ends * ways)
    work = x.work + y.work
    if disjoint:
        out = out.least(x.out.most(y.out))
        if entry is not None:
            work = work.least(x.work.most(y.work) + entry)
    peek = _imax(x.peek, y.peek)
    reach = _reach(maxlen, peek)
    ov = _least(_imax(x.ov, x.ovf, y.ov, y.ovf), reach)
    ovf = _least(_imax(x.ovf, y.ovf), reach)
    return _Info(
        minlen,
        maxlen,
        union(x.first, y.first),
        union(x.last, y.last),
        union(x.chars, y.chars),
        _pairs(x.pairs, y.pairs),
        pf,
        sf,
        x.ea and y.ea,
        x.sa and y.sa,
        entry,
        ov,
        ovf,
        peek,
        ways,
        ends,
        out,
        work,
    )


def _optional(x: _Info, control: Bound = ONE) -> _Info:
    """``X?``: ``X`` or nothing (ECMA-262 rejects an empty iteration, so at most both).

    ``control``: the engine's steps for the choice (an iteration of a bounded loop costs more).
    """
    alt = _alt(x, _EMPTY)
    entry = x.entry + ONE if x.entry is not None else None
    # A span is read by X (a non-empty one) or by the skip (the empty one): never both.
    ways = x.ways.most(ONE)
    return _Info(
        alt.minlen, alt.maxlen, alt.first, alt.last, alt.chars, alt.pairs, alt.pf, alt.sf, False, False,
        entry, alt.ov, 0, alt.peek, ways, alt.ends, alt.out, alt.work + control,
    )  # fmt: skip


def _cuts_once(x: _Info) -> bool:
    """Whether a text splits into iterations of ``X`` in at most one way (``X`` non-empty)."""
    return x.fixed or x.pf or x.sf or not _joins(x.pairs, x.last, x.first)


def _repeat(node: Node, x: _Info) -> _Info:
    lo, hi = node.lo, node.hi
    if hi == 0:
        return _EMPTY
    control = Bound.const(_iteration_steps(node.items[0]))
    if lo == 1 and hi == 1:
        return _decided(_decided(x, control), ONE)
    if lo == 0 and hi == 1:
        return _decided(_optional(x), ONE)
    if not x.nullable and x.ways.is_one() and _cuts_once(x):
        return _loop(x, lo, hi, control)
    if hi is None:
        why = "matches empty text" if x.nullable else "can match the same text in more than one way"
        raise Unbounded(
            f"the quantifier in {shown(node.text)} repeats a part that {why} (a nested quantifier over overlapping "
            "alternatives), so a search can take exponential time"
        )
    if hi > _MAX_EXPANSION:
        raise Unbounded(
            f"the bounded quantifier in {shown(node.text)} repeats an ambiguous part more than {_MAX_EXPANSION} times"
        )
    inner = _EMPTY
    for _ in range(hi - lo):
        _spend()
        inner = _optional(_concat(x, inner), control) if inner is not _EMPTY else _optional(x, control)
    # Each mandatory iteration is entered through the loop's decision too, and the path that
    # has run its iterations takes one more (the count reached: ECMA-262 RepeatMatcher, step 2).
    mandatory = _decided(x, control)
    acc = inner
    for _ in range(lo):
        _spend()
        acc = _concat(mandatory, acc) if acc is not _EMPTY else mandatory
    return _decided(acc, ONE)


def _decided(x: _Info, control: Bound) -> _Info:
    """``X`` entered through a loop's decision: ``control`` more steps on every attempt, failed or not."""
    entry = None if x.entry is None else x.entry + control
    return replace(x, entry=entry, work=x.work + control)


def _iteration_steps(body: Node) -> int:
    """What one iteration of a quantifier costs the engine beyond its body, in steps.

    Measured (``benchmarks/pattern_cost.py``): ``regress`` runs a loop over one character
    class in about 2 ns per iteration, any other loop in 110-150 ns (its backtrack stack
    grows each iteration) and one whose body captures in 220-350 ns. A step is budgeted at
    about 2 ns (:data:`~mcp_guard.core.ecma_regex.STEPS_PER_UNIT`).
    """
    if body.kind == "chars":
        return 1
    return _CAPTURE_ITERATION if _captures(body) else _ITERATION


def _captures(node: Node) -> bool:
    return node.kind == "cap" or any(_captures(item) for item in node.items)


def _loop(x: _Info, lo: int, hi: int | None, control: Bound) -> _Info:
    """``X{lo,hi}`` whose body reads a span one way and whose iterations cut one way."""
    minlen = lo * x.minlen
    maxlen = None if hi is None or x.maxlen is None else hi * x.maxlen
    iterations = N if hi is None else N.least(Bound.const(hi))
    chains = iterations + ONE if x.pf else N1
    work = chains * (x.work + control) + ONE
    spine = x.pf or not _joins(x.pairs, x.last, x.first)
    if spine and x.ov is not None and (x.pf or x.entry is not None):
        # Continuing iterations read disjoint stretches: sum p over them (p superadditive).
        spread = disjoint_sum(x.work, x.ov)
        # An iteration that the next one continues costs the engine its full control (it grows
        # the backtrack stack); there are at most n / minlen of them. A leaf (an end of X that
        # no further iteration can start from) costs a failed entry and a few steps.
        leaves = ZERO if x.pf or x.entry is None else N1 * (x.entry + Bound.const(_LEAF))
        c = control.at(0)
        iterating = Bound(((c, -(-c // x.minlen)),))
        if hi is not None:
            iterating = iterating.least(Bound.const(c * (hi + 1)))
        work = work.least(spread + x.work + leaves + iterating + N1 + ONE)
    pf = maxlen == minlen or (lo == hi and x.pf)
    ends = ONE if pf else _span(minlen, maxlen)
    ov = _imax(x.ov, x.ovf)
    if lo == 0:
        ovf: int | None = 0
    elif lo == 1:
        ovf = x.ovf
    else:
        ovf = None if x.maxlen is None or ov is None else (lo - 1) * x.maxlen + ov
    reach = _reach(maxlen, x.peek)
    return _Info(
        minlen,
        maxlen,
        x.first,
        x.last,
        x.chars,
        _pairs(x.pairs, ((x.last, x.first),)),
        pf,
        pf,
        False,
        False,
        x.entry + ONE if x.entry is not None else None,
        _least(ov, reach),
        _least(ovf, reach),
        x.peek,
        ONE,
        ends,
        chains.least(ends),
        work,
    )


def _both(a: _Info, b: _Info) -> _Info:
    """Two analyses of one sequence, grouped from the left and from the right: both hold, keep the better of each."""
    return _Info(
        a.minlen,
        a.maxlen,
        a.first,
        a.last,
        a.chars,
        a.pairs if len(a.pairs) <= len(b.pairs) else b.pairs,
        a.pf or b.pf,
        a.sf or b.sf,
        a.ea or b.ea,
        a.sa or b.sa,
        b.entry if a.entry is None else (a.entry if b.entry is None else a.entry.least(b.entry)),
        _least(a.ov, b.ov),
        _least(a.ovf, b.ovf),
        _least(a.peek, b.peek),
        a.ways.least(b.ways),
        a.ends.least(b.ends),
        a.out.least(b.out),
        a.work.least(b.work),
    )


def _analyse(node: Node, backwards: bool) -> _Info:
    kind = node.kind
    if kind == "chars":
        return _chars(node.chars, node.weight)
    if kind == "empty":
        return _EMPTY
    if kind == "assert":
        end_mark, start_mark = ("^", "$") if backwards else ("$", "^")
        return _zero_width(node.text == end_mark, node.text == start_mark, 1 if node.text in "bB" else 0, ONE)
    if kind == "look":
        body = _analyse(node.items[0], backwards=not node.ahead)
        # A lookahead reads its body's reach past the position; a lookbehind reads behind it, where
        # the per-iteration amortization of loops cannot follow it: no local reach either way.
        reads_forward = node.ahead != backwards
        peek = _reach(body.maxlen, body.peek) if reads_forward else None
        return _zero_width(False, False, peek, body.work + body.out + ONE)
    if kind == "backref":
        return _Info(
            0, None, ANY, ANY, ANY, ((ANY, ANY),), False, False, False, False, None, 0, None, 0, ONE, N1, ONE, N1
        )
    if kind == "seq":
        items = list(reversed(node.items)) if backwards else list(node.items)
        parts: list[_Info] = []
        run: list[Node] = []
        for item in [*items, None]:
            if item is not None and item.kind == "chars":
                run.append(item)
                continue
            if run:
                parts.append(_literal(run))
                run = []
            if item is not None:
                parts.append(_analyse(item, backwards))
        left = parts[0]
        for part in parts[1:]:
            left = _concat(left, part)
        right = parts[-1]
        for part in reversed(parts[:-1]):
            right = _concat(part, right)
        return _both(left, right)
    if kind == "alt":
        acc = _analyse(node.items[0], backwards)
        for item in node.items[1:]:
            acc = _alt(acc, _analyse(item, backwards))
        return acc
    if kind == "rep":
        return _repeat(node, _analyse(node.items[0], backwards))
    if kind == "cap":
        return _analyse(node.items[0], backwards)
    raise Unbounded(f"an unknown construct {kind!r}")


def _anchored_entry(node: Node) -> int | None:
    """Steps to fail a start position past 0 when every branch starts with ``^`` (else ``None``)."""
    if node.kind == "assert" and node.text == "^":
        return 1
    if node.kind == "seq":
        return _anchored_entry(node.items[0])
    if node.kind == "alt":
        total = 0
        for item in node.items:
            e = _anchored_entry(item)
            if e is None:
                return None
            total += e
        return total
    return None


def search_steps(tree: Node) -> Bound:
    """The bound on the steps of one unanchored search over ``n`` code points.

    Raises:
        Unbounded: no polynomial bound exists by these rules (the message says where).
    """
    _budget.left = _MAX_OPS
    info = _analyse(tree, backwards=False)
    attempt = info.work + info.out + ONE
    anchored = _anchored_entry(tree)
    if anchored is not None:
        return attempt + N1 * Bound.const(anchored) + N1
    return N1 * attempt + N1
