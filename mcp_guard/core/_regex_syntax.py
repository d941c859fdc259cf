"""ECMA-262 pattern syntax (``u`` mode) read into a tree for the bound analysis of ``ecma_regex``.

``regress`` has already judged the pattern valid when :func:`parse` runs, so the parser
only has to get the structure right (ECMA-262, 22.2.1: Disjunction, Alternative, Term,
Assertion, Quantifier, Atom, CharacterClass); anything it does not know raises
:class:`Unreadable` and the pattern is refused, never guessed.

Character sets are sorted tuples of inclusive code-point intervals. They only need to be
*supersets* of what an atom matches (the analysis asks "can these two sets share a
character?", and a superset can only answer "yes" more often): ``\\p{...}`` and ``\\P{...}``
are the whole code-point range, and so is the complement of a class that holds one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ANY",
    "CharSet",
    "Node",
    "Unreadable",
    "intersects",
    "parse",
    "shown",
    "union",
]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def shown(source: str, cut: int | None = None) -> str:
    """A pattern (or a part of one) as messages quote it: its text between backticks, as the schema
    writes it (not Python's ``repr``, which doubles every backslash), cut after ``cut`` characters
    (``…``); a lone surrogate, which no output encoding carries, is written ``\\uXXXX``."""
    text = source if cut is None or len(source) <= cut else source[:cut] + "…"
    return "`" + _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "`"


CharSet = tuple[tuple[int, int], ...]
MAX_CP = 0x10FFFF
ANY: CharSet = ((0, MAX_CP),)
EMPTY_SET: CharSet = ()


PROPERTY_WEIGHT = 12
"""Steps charged for one test of a class with a Unicode property (``\\p{L}``): ``regress``
takes about 24 ns for it against 0.5-2.3 ns for other tests (``benchmarks/pattern_cost.py``)."""


class Unreadable(Exception):
    """A construct the guard's analysis does not read (the message names it)."""


def union(a: CharSet, b: CharSet) -> CharSet:
    """The union of two interval sets."""
    if not a:
        return b
    if not b or a == b:
        return a
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(a + b):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


def intersects(a: CharSet, b: CharSet) -> bool:
    """Whether two interval sets share a code point."""
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] < b[j][0]:
            i += 1
        elif b[j][1] < a[i][0]:
            j += 1
        else:
            return True
    return False


def _complement(a: CharSet) -> CharSet:
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in a:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CP:
        out.append((nxt, MAX_CP))
    return tuple(out)


def _cs(*points: int | tuple[int, int]) -> CharSet:
    out: CharSet = ()
    for p in points:
        out = union(out, ((p, p),) if isinstance(p, int) else (p,))
    return out


_DIGIT = _cs((0x30, 0x39))
_WORD = _cs((0x30, 0x39), (0x41, 0x5A), 0x5F, (0x61, 0x7A))
# WhiteSpace and LineTerminator (ECMA-262, 12.2 and 12.3): \s.
_SPACE = _cs((0x09, 0x0D), 0x20, 0xA0, 0x1680, (0x2000, 0x200A), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF)
_DOT = _complement(_cs(0x0A, 0x0D, 0x2028, 0x2029))
_CLASS_ESCAPES = {
    "d": _DIGIT,
    "D": _complement(_DIGIT),
    "w": _WORD,
    "W": _complement(_WORD),
    "s": _SPACE,
    "S": _complement(_SPACE),
}
_CONTROL = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_SYNTAX = set("^$\\.*+?()[]{}|/")


@dataclass(frozen=True, slots=True)
class Node:
    """One node of a pattern tree.

    ``kind`` is one of ``chars`` (one code point of ``chars``), ``empty``, ``assert``
    (``text`` is ``^``, ``$``, ``b`` or ``B``), ``look`` (``ahead``, ``negative``; body in
    ``items[0]``), ``backref``, ``seq`` and ``alt`` (``items``), ``rep`` (body ``items[0]``,
    ``lo``, ``hi``: ``None`` for no upper bound), ``cap`` (a capturing group around
    ``items[0]``). ``text`` of a ``rep`` is its source text. ``weight`` of a ``chars`` node is
    the engine's cost of one test in steps (:data:`PROPERTY_WEIGHT` for Unicode properties).
    """

    kind: str
    items: tuple[Node, ...] = ()
    chars: CharSet = EMPTY_SET
    lo: int = 0
    hi: int | None = 0
    text: str = ""
    ahead: bool = True
    negative: bool = False
    weight: int = 1


class _Parser:
    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0
        self.loops = 0  # enclosing quantifiers that may repeat (hi > 1)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def eat(self, text: str) -> bool:
        if self.s.startswith(text, self.i):
            self.i += len(text)
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.eat(text):
            raise Unreadable(f"the text at offset {self.i} (expected {text!r})")

    def disjunction(self) -> Node:
        branches = [self.alternative()]
        while self.eat("|"):
            branches.append(self.alternative())
        return branches[0] if len(branches) == 1 else Node("alt", tuple(branches))

    def alternative(self) -> Node:
        items: list[Node] = []
        while self.i < len(self.s) and self.peek() not in "|)":
            items.append(self.term())
        if not items:
            return Node("empty")
        return items[0] if len(items) == 1 else Node("seq", tuple(items))

    def term(self) -> Node:
        start = self.i
        c = self.peek()
        if c == "^" or c == "$":
            self.i += 1
            return Node("assert", text=c)
        if self.s.startswith("\\b", self.i) or self.s.startswith("\\B", self.i):
            self.i += 2
            return Node("assert", text=self.s[self.i - 1])
        for opener, ahead, negative in (
            ("(?=", True, False),
            ("(?!", True, True),
            ("(?<=", False, False),
            ("(?<!", False, True),
        ):
            if self.eat(opener):
                body = self.disjunction()
                self.expect(")")
                return Node("look", (body,), ahead=ahead, negative=negative)
        # The quantifier decides whether a backreference inside the atom sits under a repeat:
        # look ahead for it before reading the atom.
        end = self._atom_end()
        lo, hi, qlen = self._quantifier_at(end)
        repeats = qlen > 0 and (hi is None or hi > 1)
        if repeats:
            self.loops += 1
        atom = self.atom()
        if repeats:
            self.loops -= 1
        if self.i != end:
            raise Unreadable(f"the atom at offset {start}")
        if qlen == 0:
            return atom
        self.i += qlen
        return Node("rep", (atom,), lo=lo, hi=hi, text=self.s[start : self.i])

    def _atom_end(self) -> int:
        """Offset just past the atom starting here (groups and classes skipped whole)."""
        s, i = self.s, self.i
        c = s[i]
        if c == "\\":
            return self._escape_end(i)
        if c == "[":
            i += 1
            if i < len(s) and s[i] == "^":
                i += 1
            while i < len(s) and s[i] != "]":
                i = self._escape_end(i) if s[i] == "\\" else i + 1
            return i + 1
        if c == "(":
            depth = 0
            while i < len(s):
                ch = s[i]
                if ch == "\\":
                    i = self._escape_end(i)
                    continue
                if ch == "[":
                    save, self.i = self.i, i
                    i = self._atom_end()
                    self.i = save
                    continue
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
                    if depth == 0:
                        return i + 1
                i += 1
            raise Unreadable("an unbalanced group")
        return i + 1

    def _escape_end(self, i: int) -> int:
        s = self.s
        if i + 1 >= len(s):
            raise Unreadable("a trailing backslash")
        c = s[i + 1]
        if c in "pPk" and i + 2 < len(s) and s[i + 2] in "{<":
            close = s.find("}" if s[i + 2] == "{" else ">", i + 2)
            if close < 0:
                raise Unreadable("an unterminated escape")
            return close + 1
        if c == "u" and i + 2 < len(s) and s[i + 2] == "{":
            return s.index("}", i) + 1
        if c == "u":
            end = i + 6
            if s[end : end + 2] == "\\u" and 0xD800 <= int(s[i + 2 : end], 16) <= 0xDBFF:
                tail = s[end + 2 : end + 6]
                if len(tail) == 4 and 0xDC00 <= int(tail, 16) <= 0xDFFF:
                    return end + 6
            return end
        if c == "x":
            return i + 4
        if c == "c":
            return i + 3
        if c.isdigit() and c != "0":
            j = i + 1
            while j < len(s) and s[j].isdigit():
                j += 1
            return j
        return i + 2

    def _quantifier_at(self, j: int) -> tuple[int, int | None, int]:
        s = self.s
        if j >= len(s):
            return 0, 0, 0
        c = s[j]
        if c in "*+?":
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            k = j + 1
        elif c == "{":
            close = s.find("}", j)
            body = s[j + 1 : close].split(",")
            lo = int(body[0])
            hi = lo if len(body) == 1 else (int(body[1]) if body[1] else None)
            k = close + 1
        else:
            return 0, 0, 0
        if k < len(s) and s[k] == "?":
            k += 1
        return lo, hi, k - j

    def atom(self) -> Node:
        c = self.peek()
        if c == ".":
            self.i += 1
            return Node("chars", chars=_DOT)
        if c == "[":
            return self.char_class()
        if c == "(":
            self.i += 1
            capturing = True
            if self.eat("?:"):
                capturing = False
            elif self.eat("?<"):
                close = self.s.find(">", self.i)
                self.i = close + 1
            elif self.peek() == "?":
                raise Unreadable(f"the group at offset {self.i - 1} (modifiers)")
            body = self.disjunction()
            self.expect(")")
            return Node("cap", (body,)) if capturing else body
        if c == "\\":
            weight = PROPERTY_WEIGHT if self.s.startswith(("\\p", "\\P"), self.i) else 1
            esc = self.escape(in_class=False)
            if esc == "backref":
                if self.loops:
                    raise Unreadable("a backreference inside a repeated group (its search time cannot be bounded)")
                return Node("backref")
            assert not isinstance(esc, str)
            return Node("chars", chars=esc, weight=weight)
        if c in "*+?{}|)]":
            raise Unreadable(f"the character {shown(c)} at offset {self.i}")
        self.i += 1
        cp = ord(c)
        return Node("chars", chars=((cp, cp),))

    def escape(self, in_class: bool) -> CharSet | str:
        """Read ``\\...`` at the cursor: a set, or ``"backref"`` (outside classes)."""
        s = self.s
        self.i += 1
        c = self.peek()
        self.i += 1
        if c in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[c]
        if c in "pP":
            self.i = s.index("}", self.i) + 1
            return ANY
        if c in _CONTROL:
            return _cs(_CONTROL[c])
        if c == "c":
            letter = self.peek()
            self.i += 1
            return _cs(ord(letter) % 32)
        if c == "0" and not self.peek().isdigit():
            return _cs(0)
        if c == "x":
            code = int(s[self.i : self.i + 2], 16)
            self.i += 2
            return _cs(code)
        if c == "u":
            if self.eat("{"):
                close = s.index("}", self.i)
                code = int(s[self.i : close], 16)
                self.i = close + 1
                return _cs(code)
            code = int(s[self.i : self.i + 4], 16)
            self.i += 4
            if 0xD800 <= code <= 0xDBFF and s.startswith("\\u", self.i):
                tail = s[self.i + 2 : self.i + 6]
                if len(tail) == 4 and all(ch in "0123456789abcdefABCDEF" for ch in tail):
                    low = int(tail, 16)
                    if 0xDC00 <= low <= 0xDFFF:
                        self.i += 6
                        return _cs(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
            return _cs(code)
        if in_class and c == "b":
            return _cs(0x08)
        if in_class and c == "-":
            return _cs(0x2D)
        if not in_class and (c == "k" or (c.isdigit() and c != "0")):
            if c == "k":
                self.i = s.index(">", self.i) + 1
            else:
                while self.peek().isdigit():
                    self.i += 1
            return "backref"
        if c in _SYNTAX:
            return _cs(ord(c))
        raise Unreadable(f"the escape \\{c} at offset {self.i - 2}")

    def class_atom(self) -> CharSet:
        if self.peek() == "\\":
            esc = self.escape(in_class=True)
            if isinstance(esc, str):
                raise Unreadable("a backreference in a class")
            return esc
        cp = ord(self.peek())
        self.i += 1
        return ((cp, cp),)

    def char_class(self) -> Node:
        self.expect("[")
        negated = self.eat("^")
        acc: CharSet = EMPTY_SET
        approximate = False
        while self.peek() != "]":
            if not self.peek():
                raise Unreadable("an unterminated class")
            is_prop = self.s.startswith(("\\p", "\\P"), self.i)
            first = self.class_atom()
            approximate = approximate or is_prop
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                last = self.class_atom()
                if len(first) != 1 or len(last) != 1 or first[0][0] != first[0][1] or last[0][0] != last[0][1]:
                    raise Unreadable("a class range between sets")
                acc = union(acc, ((first[0][0], last[0][0]),))
            else:
                acc = union(acc, first)
        self.i += 1
        if negated:
            acc = ANY if approximate else _complement(acc)
        return Node("chars", chars=acc, weight=PROPERTY_WEIGHT if approximate else 1)


def parse(source: str) -> Node:
    """The tree of an ECMA-262 ``u``-mode pattern that ``regress`` accepted.

    Raises:
        Unreadable: a construct the analysis does not read (modifier groups), or a
            backreference under a quantifier that may repeat.
    """
    parser = _Parser(source)
    try:
        tree = parser.disjunction()
    except (ValueError, IndexError) as exc:
        raise Unreadable(f"its syntax near offset {parser.i}") from exc
    if parser.i != len(source):
        raise Unreadable(f"the text at offset {parser.i}")
    return tree
