"""Generate a profile's validator from its classified tree: two Python functions per schema node.

Every profile's tree is made of the same parts (``extended.table``), so one generator serves all;
``decimals`` is E1's exact literals (``extended``), off for ``standard`` and ``strict``, which judge
doubles. ``v<n>(x, w) -> bool`` is the fast path
(True only for a JSON value that satisfies the node) and ``c<n>(x, ip, out, w)`` the slow
path that appends an :class:`~..report.Issue` per violation, run only when the fast path
said no. ``w`` is the call's cell ``[budget, scan flag, memo, keys exact, misses]``: ``keys exact``
is ``Compiled.check``'s ``parsed`` (every object key an exact ``str``); ``misses`` records where an
array's fast loop stopped (:meth:`Gen.loop_key`), so the slow path walks only what is left.

A node's function tests ``type`` first, then the keywords that apply to any value
(``enum``, ``const``), then dispatches on the value's JSON type to the keywords of that type
(JSON Schema applicability), then runs the in-place applicators (``allOf``, ``anyOf``,
``oneOf``, ``not``, ``if``, ``$ref``). The tests themselves come from the parts
(``Part.fast`` / ``Part.slow``), written beside each keyword's classification rule.
Scalar members are inlined into their container's loop; every other node is a function, and
nodes call each other by name, so ``$ref`` recursion through the instance is plain recursion.

Work budget (E6; ``budget``): a ``$ref`` target's function charges one unit on entry (all
recursion and shared expansion pass through one); a container whose members meet schemas
that multiply work (``items``, ``patternProperties``, ``additionalProperties``,
``contains``, ``propertyNames``, ``unevaluated*``) charges its length times the heaviest
of them; ``pattern``, ``format`` and ``uniqueItems`` charge their own costs. Every charge
tests the budget at once and raises :class:`OverBudget` when it is spent. Declared
properties and in-place applicators cost what the schema's size says, and a schema whose
references expand past the budget was refused at classification; but a pass over a value's
members that no member schema weighs (a ``properties`` walk of the undeclared members, what
a node evaluated for ``unevaluated*``) costs one unit a member, each time a branch makes it
(:meth:`Gen.scanned`).

Every schema value reaches the source only as a module constant (:meth:`Gen.const`).
"""

from __future__ import annotations

import re
from typing import Any

from ..json_values import Inexact, is_json, json_type_name, pointer
from ..report import ARGUMENTS, VALIDATION, Issue
from .ir import Emitter, Part, XNode
from .kw_apply import Ref
from .kw_members import Members
from .kw_object import Required
from .table import holder
from .values import exact_json, exact_json_once, exact_uncarriable, number_of
from .writer import Collect, Valid, base_namespace

__all__ = ["Gen", "generate", "type_words"]


_TESTS = {
    "object": "{t} is dict",
    "array": "{t} is list",
    "string": "{t} is str",
    "boolean": "{t} is bool",
    "null": "{v} is None",
    "integer": "({t} is int or ({t} is float and {v}.is_integer())"
    " or ({t} is Inexact and type(number_of({v})) is int))",
    "number": "({t} is int or ({t} is float and isfinite({v})) or ({t} is Inexact and number_of({v}) is not None))",
}

_DOUBLES = {
    **_TESTS,
    "integer": "({t} is int or ({t} is float and {v}.is_integer()))",
    "number": "({t} is int or ({t} is float and isfinite({v})))",
}
"""The type tests without E1's exact literals (``standard``, ``strict``: an ``Inexact`` is not JSON there)."""

_ORDER = ("object", "array", "string", "integer", "number", "boolean", "null")
_ARTICLE = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def type_words(types: frozenset[str]) -> str:
    """``"a string or null"``: what a ``type`` keyword wants, for messages."""
    names = [_ARTICLE[t] for t in _ORDER if t in types]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


_PLAIN_NAMES: dict[type, str] = {str: "string", int: "integer", bool: "boolean", type(None): "null"}
"""JSON type names of the scalar types that are always JSON, exact literals or not (``exact_json_once``
is true of each)."""


def type_issue(value: Any, ip: str, type_path: str, expected: str, out: list[Issue], w: list[Any]) -> None:
    """Append the ``type`` finding for ``value`` (as ``writer.type_issue``, with E1's exact literals).

    A value JSON cannot carry gets no ``type`` finding: it flags the scan (``w[1]``) instead.
    (Runs on the per-call slow path: a string, integer, boolean or null is named with no further call.)
    """
    t = type(value)
    name = _PLAIN_NAMES.get(t)
    if name is None:
        if t is dict or t is list:
            # exact_json_once, inlined (every mistyped container of a call's slow path passes here): the
            # call's memo of is_json by id, then E1's exact literals only when that says no.
            memo = w[2]
            if memo is None:
                memo = w[2] = {}
            plain = memo.get(id(value))
            if plain is None:
                plain = memo[id(value)] = is_json(value)
            if not plain and not exact_json(value):
                w[1] = 1  # (a container's type is still wrong: its finding stands beside the scan's)
            name = "object" if t is dict else "array"
        else:
            if not exact_json_once(value, w):
                w[1] = 1
                if exact_uncarriable(value):
                    return
            name = ("integer" if type(number_of(value)) is int else "number") if t is Inexact else json_type_name(value)
    where_ = "`" + ip + "`" if ip else ARGUMENTS  # as writer.where()
    message = where_ + " must be " + expected + ", not " + name + " (type)"
    out.append(tuple.__new__(Issue, (VALIDATION, "type", type_path, ip, message)))


def _type_test(types: frozenset[str], v: str, t: str, decimals: bool = True) -> str:
    if "number" in types:
        types = types - {"integer"}
    table = _TESTS if decimals else _DOUBLES
    tests = [table[n].format(v=v, t=t) for n in _ORDER if n in types]
    return tests[0] if len(tests) == 1 else "(" + " or ".join(tests) + ")"


class Gen(Emitter):
    """The code generator of one schema (implements what parts may ask; see ``ir.Part``).

    ``decimals``: E1's exact literals (``extended``); False for ``standard`` and ``strict``, which
    judge doubles: an argument literal no double holds is a number JSON cannot carry there
    (``json_values.is_uncarriable``), flagged for the JSON scan and never a number.
    """

    def __init__(self, decimals: bool = True) -> None:
        exact = {
            "json_once": exact_json_once,  # E1: a literal no double holds is a number here
            "type_issue": type_issue,
            "is_uncarriable": exact_uncarriable,
        }
        names = {**base_namespace(), **(exact if decimals else {}), "Inexact": Inexact, "number_of": number_of}
        super().__init__(names)
        self.decimals = decimals
        self.exact = False  # generating the branch of an argument literal no double holds (E1)
        self.known: frozenset[str] | None = None  # the ``type`` of the node being generated, for its parts
        self.required: frozenset[str] = frozenset()  # names an object's lookups test (``takes_required``)
        self.ints_first = False  # an enum/const's int choices were tested before the node (``Choice.int_guard``)
        self._vnames: dict[int, str] = {}
        self._cnames: dict[int, str] = {}
        self._enames: dict[tuple[int, str, int], str] = {}
        self._weights: dict[int, int] = {}
        self._loop_keys: dict[int, str] = {}

    # --- issues --------------------------------------------------------------------------------

    def issue(self, keyword: str, schema_path: str, ip: str, message: str) -> str:
        """A statement appending a ``validation`` issue; ``ip`` and ``message`` are expressions."""
        return (
            f"out.append(new(Issue, ({self.const(VALIDATION)}, {self.const(keyword)}, "
            f"{self.const(schema_path)}, {ip}, {message})))"
        )

    def fail(self, keyword: str, path: tuple[str | int, ...], ip: str, tail: str) -> str:
        """An issue whose message is ``where(ip) + tail`` (``tail`` a fixed text from the schema)."""
        return self.issue(keyword, pointer(path), ip, f"where({ip}) + {self.const(tail)}")

    # --- nodes ---------------------------------------------------------------------------------

    def vfn(self, node: XNode) -> str:
        """The name of the node's fast function, generated once (a bare ``$ref``'s is its target's)."""
        found = self._vnames.get(id(node))
        if found is not None:
            return found
        target = _bare_ref(node)
        if target is not None:
            found = self._vnames[id(node)] = self.vfn(target)
            return found
        name = self.name("v")
        self._vnames[id(node)] = name
        entry = ["w[0] -= 1", "if w[0] < 0: raise OverBudget"] if node.meta.get("ref") else []
        body = [*entry, *self.body_fast(node, "x", "t"), "return True"]
        if any(p.memo for p in node.parts):
            self.memoized(name, body)
        else:
            self.emit(f"def {name}(x, w):", body)
        return name

    def memoized(self, name: str, body: list[str]) -> None:
        """Emit ``name(x, w)`` whose result is kept per call and per value (``w[2]``, by ``id``).

        For the functions of ``unevaluated*``: a node's verdict and what it evaluated are asked
        again by every enclosing ``unevaluated*``; kept, each is computed once per value, so
        nesting costs linear, not exponential, work (E6). The arguments are alive and
        unchanged during the call, so an ``id`` stands for one value.
        """
        inner = "_" + name
        self.emit(f"def {inner}(x, w):", body)
        key = self.const(name)
        self.emit(
            f"def {name}(x, w):",
            [
                "m = w[2]",
                "if m is None: m = w[2] = {}",
                f"k = ({key}, id(x))",
                "if k in m: return m[k]",
                f"r = m[k] = {inner}(x, w)",
                "return r",
            ],
        )

    def cfn(self, node: XNode) -> str:
        """The name of the node's slow function, generated once (a bare ``$ref``'s is its target's)."""
        found = self._cnames.get(id(node))
        if found is not None:
            return found
        target = _bare_ref(node)
        if target is not None:
            found = self._cnames[id(node)] = self.cfn(target)
            return found
        name = self.name("c")
        self._cnames[id(node)] = name
        self.emit(f"def {name}(x, ip, out, w):", self.body_slow(node, "x", "ip", "t"))
        return name

    def evaluated(self, node: XNode, kind: str, v: str, skip: Part | None = None, checked: bool = False) -> str:
        """An expression for what ``node`` evaluated in ``v`` (2020-12 annotations, for ``unevaluated*``).

        ``kind`` ``"props"``: the set of member names; ``"items"``: ``(p, c)``, items before index
        ``p`` and the indices in ``c``. ``None`` when ``v`` does not satisfy ``node`` (unless
        ``checked``: the caller knows it does). ``skip``: a part of the node left out (an
        ``unevaluated*`` keyword asking about its own siblings).
        """
        key = (id(node), kind + ("!" if checked else ""), id(skip))
        name = self._enames.get(key)
        if name is None:
            name = self._enames[key] = self.name("ep" if kind == "props" else "ei")
            empty = "set()" if kind == "props" else "(0, set())"
            body = [] if checked else [f"if not {self.test(node, 'x')}: return None"]
            if node.boolean is None:
                body += self.scanned("x")  # its parts' scans and merges: a few passes over the members
                body += ["s = set()"] if kind == "props" else ["p = 0", "c = set()"]
                for part in node.parts:
                    if part is not skip:
                        body += part.props_code(self, "x") if kind == "props" else part.items_code(self, "x")
                body.append("return s" if kind == "props" else "return (p, c)")
            else:
                body.append(f"return {empty}")
            self.memoized(name, body)
        return f"{name}({v}, w)"

    def weight(self, node: XNode) -> int:
        """Subschema evaluations one value costs against ``node`` (a ``$ref`` target counts once:
        it charges itself on entry, so recursion is paid as it happens)."""
        found = self._weights.get(id(node))
        if found is None:
            self._weights[id(node)] = 1  # a cycle (through members) is paid per level, on entry
            found = 1 + sum(self.weight(sub) for p in node.parts if not p.refers for sub in p.nodes())
            self._weights[id(node)] = found
        return found

    def charge(self, v: str, nodes: list[XNode]) -> list[str]:
        """Charge a container's members to the budget: its length times its heaviest member schema."""
        heaviest = max((self.weight(n) for n in nodes), default=1)
        return [f"w[0] -= len({v}) * {self.const(heaviest)}", "if w[0] < 0: raise OverBudget"]

    def scanned(self, v: str) -> list[str]:
        """Charge a pass over a container's members that no member schema weighs: one unit a member.

        Each applicator branch that walks the members of the same value pays for its own walk
        (issue 25 item 4: an ``anyOf`` of 1,000 branches under ``unevaluatedProperties``, or an
        ``allOf`` of 50 ``properties``, walked a 100,000-key argument once per branch, uncharged).
        """
        return [f"w[0] -= len({v})", "if w[0] < 0: raise OverBudget"]

    def inlinable(self, node: XNode) -> bool:
        """Whether a member's test may stand inline in its container's loop (no loops, no calls)."""
        return node.scalar_only

    def type_expr(self, types: frozenset[str], v: str) -> str:
        """An expression: whether ``v`` is of one of ``types`` (JSON Schema type names; E1 literals)."""
        return _type_test(types, v, f"type({v})", self.decimals)

    def loop_key(self, node: XNode) -> str | None:
        """The record key (a constant's name) of the items loop in ``node``'s fast function, or ``None``.

        An array node whose items are all checked by one loop (``items``, no ``prefixItems``)
        records, when that loop fails, where (``missed``: ``w[4][key, id(array)]``, the index of the
        failing item, or of an earlier one that is the same object). Its items before that index
        passed the item schema, and the node's fast function is false for that array: the slow
        path (:meth:`check_slow`, ``Elements.slow``) does not run it again, nor walk those items.
        A record is a fact about one array and one node, so it holds wherever in the call the same
        pair meets again (the arguments are alive and unchanged during a call).
        """
        target = _bare_ref(node) or node
        if target.boolean is not None or target.trivial:
            return None
        for part in target.parts:
            if getattr(part, "loops", False):
                return self.loop_key_of(part)
        return None

    def loop_key_of(self, part: Part) -> str:
        """The record key of a part's items loop (see :meth:`loop_key`), one per part."""
        key = self._loop_keys.get(id(part))
        if key is None:
            key = self._loop_keys[id(part)] = self.const(self.name("loop"))
        return key

    def check_fast(self, node: XNode, v: str) -> list[str]:
        """Statements that ``return False`` when ``v`` breaks ``node``: inline or a call."""
        if self.inlinable(node):
            return self.body_fast(node, v, "u")
        return [f"if not {self.vfn(node)}({v}, w): return False"]

    def loop_fast(self, node: XNode, v: str, key: str) -> list[str]:
        """``for`` over the items of array ``v``, each tested against ``node`` (the rest items).

        An object node (say, a ``$ref`` to a closed record: a homogeneous array) stands inline in
        the loop, with its budget charge on entry when it is a ``$ref`` target: one call fewer
        per item. Its members' locals (``y``, ``u``, ``k``, ``n``) are free here: an array's
        loop stands in the array node's own function, and the loop variable is fresh.
        Every ``return False`` of the loop records where it stopped first (``key``, see
        :meth:`loop_key`); nothing is added to the loop that passes."""
        target = _bare_ref(node) or node
        if (
            self.inlinable(target)
            or target.boolean is not None
            or target.trivial
            or target.types != frozenset({"object"})
            or any(p.memo for p in target.parts)
        ):
            item, body = "y", self.check_fast(node, "y")
        else:
            item = self.name("e")
            entry = ["w[0] -= 1", "if w[0] < 0: raise OverBudget"] if target.meta.get("ref") else []
            body = [*entry, *self.body_fast(target, item, self.name("t"))]
        missed = f"return missed(w, {key}, {v}, {item})"
        return [f"for {item} in {v}:", *("    " + _RETURN_FALSE.sub(missed, line) for line in body)]

    def check_slow(self, node: XNode, v: str, ip: str) -> list[str]:
        """Statements appending the issues of ``v`` (pointer ``ip``) against ``node``."""
        if node.boolean is False:
            return [self.issue(holder(node.path), pointer(node.path), ip, f"where({ip}) + {self.const(_FALSE)}")]
        if self.inlinable(node):  # scalars inline, as on the fast path
            return self.body_slow(node, v, ip, "u")
        key = self.loop_key(node)
        if key is not None:  # a loop the fast path saw fail: known false, not run again
            known = f"({key}, id({v})) in (w[4] or ())"  # (``w[4]`` is None until a loop fails: no record)
            return [f"if {known} or not {self.vfn(node)}({v}, w): {self.cfn(node)}({v}, {ip}, out, w)"]
        return [f"if not {self.vfn(node)}({v}, w): {self.cfn(node)}({v}, {ip}, out, w)"]

    def test(self, node: XNode, v: str) -> str:
        """An expression: whether ``v`` satisfies ``node``."""
        if node.boolean is False:
            return "False"
        if node.trivial:
            return f"json_once({v}, w)"
        if node.boolean is None and not node.parts and node.types is not None:
            return self.type_expr(node.types, v)  # a bare ``type``: one expression, no call
        return f"{self.vfn(node)}({v}, w)"

    def _group_lines(self, parts: list[Part], v: str, ip: str | None) -> list[str]:
        lines: list[str] = []
        for part in parts:
            lines.extend(part.fast(self, v) if ip is None else part.slow(self, v, ip))
        return lines

    def body_fast(self, node: XNode, v: str, t: str) -> list[str]:
        """The fast test of ``node`` on ``v`` as statements (``t`` a free local for its type)."""
        if node.boolean is False:
            return ["return False"]
        if node.trivial:
            return [f"if not json_once({v}, w): return False"]
        return self._body(node, v, t, None)

    def body_slow(self, node: XNode, v: str, ip: str, t: str) -> list[str]:
        """The slow test of ``node`` on ``v`` (pointer ``ip``): statements that append issues."""
        if node.boolean is False:
            return [self.issue(holder(node.path), pointer(node.path), ip, f"where({ip}) + {self.const(_FALSE)}")]
        if node.trivial:
            return [f"if not json_once({v}, w): w[1] = 1"]
        if node.types is not None:
            # A value of the node's type is JSON at its top (exact types, finite, within the digit
            # limit); any other value goes to type_issue, which flags for the JSON scan what is not JSON.
            where_type, words = self.const(pointer(node.type_path)), self.const(type_words(node.types))
            head = [
                f"{t} = type({v})",
                f"if not {_type_test(node.types, v, t, self.decimals)}:",
                f"    type_issue({v}, {ip}, {where_type}, {words}, out, w)",
            ]
        else:
            # Only a double (or an ``Inexact``) can be a number JSON cannot carry: others skip that call.
            exact = f" or {t} is Inexact" if self.decimals else ""
            head = [
                f"{t} = type({v})",
                f"if (({t} is float{exact}) and is_uncarriable({v})) or not ({t} is str or {t} is dict "
                f"or {t} is int or {t} is list or {t} is bool or {v} is None or {t} is float{exact}):",
                "    w[1] = 1",  # the JSON scan reports it, with its pointer
            ]
        rest = self._body(node, v, t, ip)[1:]
        return [*head, "else:", *("    " + x for x in (rest or ["pass"]))]  # no return: it may stand inline

    def _number_branches(
        self, node: XNode, v: str, t: str, ip: str | None, untyped: bool
    ) -> list[tuple[str, list[str]]]:
        """The numeric branches: doubles and integers, and an argument literal no double holds (an
        ``Inexact``), on whose exact value the same keywords run (E1)."""
        refuse = "return False" if ip is None else "pass"  # slow: its head flagged it already
        parts = node.of("number")
        num = self._group_lines(parts, v, ip)
        exact: list[str] = []
        if not self.decimals:  # doubles only: an Inexact is not JSON here (the slow path's head flagged it)
            if untyped:
                return [(f"{t} is int or {t} is float", [f"if {t} is float and not isfinite({v}): {refuse}", *num])]
            return [(f"{t} is int or {t} is float", num)]
        if parts:
            self.exact = True
            try:
                exact = [f"n = number_of({v})", *self._group_lines(parts, "n", ip)]
            finally:
                self.exact = False
        if untyped:
            return [
                (f"{t} is int or {t} is float", [f"if {t} is float and not isfinite({v}): {refuse}", *num]),
                (f"{t} is Inexact", [f"if number_of({v}) is None: {refuse}", *exact]),
            ]
        if exact:  # the type test passed: an Inexact here is a number within the digit limit
            body = [f"if {t} is Inexact:", *("    " + x for x in exact), "else:", *("    " + x for x in num)]
            return [(f"{t} is int or {t} is float or {t} is Inexact", body)]
        return [(f"{t} is int or {t} is float or {t} is Inexact", num)]

    def _body(self, node: XNode, v: str, t: str, ip: str | None) -> list[str]:
        slow = ip is not None
        lines = [f"{t} = type({v})"]
        types = node.types
        if types is not None and not slow:  # the slow path tests the type in its head (body_slow)
            lines.append(f"if not {_type_test(types, v, t, self.decimals)}: return False")
        inplace = node.of("inplace")
        typed = any(node.of(a) for a in ("object", "array", "string", "number"))
        anys = node.of("any")
        guard = None
        if not slow and types is None and not typed and not inplace and len(anys) == 1:
            guard = getattr(anys[0], "int_guard", lambda g, v: None)(self, v)
        self.known, self.ints_first = types, guard is not None
        try:
            lines += self._group_lines(anys, v, ip)
        finally:
            self.known, self.ints_first = None, False
        proven = any(p.proves for p in inplace) or (
            not slow and any(getattr(p, "json_when_passed", False) for p in node.of("any"))
        )
        if types is None and not typed and proven:
            lines += self._group_lines(inplace, v, ip)  # JSON if they hold: no type dispatch needed
            return lines if slow else _unused_local_dropped(lines, t)
        branches: list[tuple[str, list[str]]] = []
        json_fail = "w[1] = 1" if slow else "return False"
        allowed = types if types is not None else frozenset(_ORDER)
        if "object" in allowed:
            saved = self.required  # (a member's function may be generated in the middle of these)
            objects, self.required = (node.of("object"), frozenset()) if slow else self._required_taken(node)
            try:
                obj = self._group_lines(objects, v, ip)
            finally:
                self.required = saved
            if not any(p.covers for p in node.of("object")):
                obj.append(f"if {v} and not json_once({v}, w): {json_fail}")
            branches.append((f"{t} is dict", obj))
        if "array" in allowed:
            arr = self._group_lines(node.of("array"), v, ip)
            if not any(p.covers for p in node.of("array")):
                arr.append(f"if {v} and not json_once({v}, w): {json_fail}")
            branches.append((f"{t} is list", arr))
        if "string" in allowed:
            branches.append((f"{t} is str", self._group_lines(node.of("string"), v, ip)))
        if allowed & {"integer", "number"}:
            branches += self._number_branches(node, v, t, ip, types is None)
        if types is None:  # (the slow path's head already flagged any value that is not JSON)
            branches.append((f"{t} is not bool and {v} is not None", ["pass" if slow else "return False"]))
        if types is None:  # every branch stands, so the last one catches only non-JSON values
            branches = [(cond, body or ["pass"]) for cond, body in branches]
        else:
            branches = [(cond, body) for cond, body in branches if body]
        if (
            types is not None
            and len(branches) == 1
            and len(allowed - {"integer"} if "number" in allowed else allowed) == 1
        ):
            lines += branches[0][1]  # the type test already decided the branch
        else:
            keyword = "if"
            for cond, body in branches:
                lines.append(f"{keyword} {cond}:")
                lines.extend("    " + line for line in body)
                keyword = "elif"
        lines += self._group_lines(inplace, v, ip)
        if slow:
            return lines
        if types is None:
            lines = _unused_local_dropped(lines, t)
            # An int among an enum/const's int choices is JSON and passes (``Choice.int_guard``):
            # the rest, with the type dispatch, runs for any other value only.
            return lines if guard is None else [f"if not {guard}:", *("    " + line for line in lines)]
        return self._bare_type_test(lines, types, v, t)

    def _required_taken(self, node: XNode) -> tuple[list[Part], frozenset[str]]:
        """The object parts of a node's fast path, and the names of a plain ``required`` that the
        object's lookups test instead (``kw_members.Members.takes_required``), left out."""
        parts = node.of("object")
        plain = [p for p in parts if type(p) is Required and p.plain is not None]
        takers = [p for p in parts if type(p) is Members]
        if len(plain) != 1 or len(takers) != 1:
            return parts, frozenset()
        names = plain[0].plain
        if names is None or not takers[0].takes_required(names):
            return parts, frozenset()
        return [p for p in parts if p is not plain[0]], names

    def _bare_type_test(self, lines: list[str], types: frozenset[str], v: str, t: str) -> list[str]:
        """The fast path without its local ``t`` when a one-name type test is its only use
        (``if not type(x) is dict: return False``): one store and load fewer per node and member."""
        if len(types) != 1 or types & {"integer", "number"}:
            return lines
        rest = lines[2:]
        used = re.compile(rf"\b{t}\b")
        if any(used.search(line) for line in rest):
            return lines
        return [f"if not {_type_test(types, v, f'type({v})', self.decimals)}: return False", *rest]


_FALSE = " is not allowed here (the schema at this place is false)"

_RETURN_FALSE = re.compile(r"\breturn False$")
"""A fast line's verdict (a statement ending its line; generated lines hold no schema text)."""


def _unused_local_dropped(lines: list[str], t: str) -> list[str]:
    """An untyped node's fast lines without their first, ``t = type(v)``, when no other line reads
    ``t`` (an ``anyOf`` of types tests ``type(v)`` itself): one store fewer per member."""
    used = re.compile(rf"\b{t}\b")
    return lines if any(used.search(line) for line in lines[1:]) else lines[1:]


def _bare_ref(node: XNode) -> XNode | None:
    """The target of a node that is only a ``$ref`` (pydantic's ``{"$ref": "#/$defs/Item"}``), whose
    functions would only call the target's: its functions are the target's. ``None`` otherwise
    (a node that is itself a ``$ref`` target charges the budget on entry: it keeps its own)."""
    if node.boolean is not None or node.types is not None or len(node.parts) != 1 or node.meta.get("ref"):
        return None
    part = node.parts[0]
    return part.target if type(part) is Ref else None


def generate(root: XNode, *, decimals: bool = True) -> tuple[Valid, Collect, str]:
    """Generate the validator of a classified root node: ``(valid, collect, source)``.

    ``decimals``: E1's exact literals (``extended``); False judges doubles (``standard``, ``strict``).

    A root without ``type`` is treated as ``object`` (decision 1): the entry functions refuse any
    other value before the root's own functions run (which stay faithful for ``$ref: "#"``).
    """
    gen = Gen(decimals)
    valid_name = gen.vfn(root)
    collect_name = gen.cfn(root)
    if root.types is None:
        entry_v, entry_c = gen.name("entry_v"), gen.name("entry_c")
        gen.emit(f"def {entry_v}(x, w):", ["if type(x) is not dict: return False", f"return {valid_name}(x, w)"])
        gen.emit(
            f"def {entry_c}(x, ip, out, w):",
            [
                f"if type(x) is not dict: type_issue(x, ip, {gen.const('')}, {gen.const('an object')}, out, w)",
                f"else: {collect_name}(x, ip, out, w)",
            ],
        )
        valid_name, collect_name = entry_v, entry_c
    return gen.load(valid_name, collect_name, "<mcp-guard extended validator>")
