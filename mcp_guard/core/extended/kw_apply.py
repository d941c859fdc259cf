"""In-place applicators: ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``,
``$ref`` (2020-12 applicator and core vocabularies; the same in draft-07 except ``$ref``'s
siblings, see :func:`kw_ref`). They apply to the value itself, of any type.

Failures of ``anyOf``/``oneOf`` say what each alternative wanted (:func:`alternatives`),
written for a model to fix its call; never "does not match anyOf".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

from ..report import UNSUPPORTED, VALIDATION, Issue
from .ir import ALL, BOTH, SINCE_07, Ctx, Emitter, Keyword, Part, Path, XNode
from .kw_array import quick_schema_list, schema_list
from .kw_members import quick_schema
from .writer import CHAIN_LIMIT

__all__ = ["AllOf", "AnyOf", "IfThenElse", "Not", "OneOf", "Ref", "alternatives"]

_SHOWN_BRANCHES = 8
_SHOWN_ISSUES = 3
_MESSAGE_LIMIT = 1200


def alternatives(
    collectors: tuple[Callable[..., None], ...], x: Any, ip: str, w: list[Any], only: tuple[int, ...] | None = None
) -> str:
    """What each alternative wanted of ``x``: ``"(1) … ; (2) …"`` from each branch's own issues.

    Runs each branch's slow path into a list of its own (the messages hold no argument value,
    so neither does this text); bounded in length. Alternatives nested in alternatives are
    explained :data:`_EXPLAINED_DEPTH` levels deep, no deeper: explaining is otherwise
    exponential in the nesting (E6), and the fast path already decided the verdict.
    """
    memo = w[2]
    if memo is None:
        memo = w[2] = {}
    depth = memo.get(_DEPTH_KEY, 0)
    if depth >= _EXPLAINED_DEPTH:
        return f"({len(collectors)} alternatives, none explained at this depth)"
    memo[_DEPTH_KEY] = depth + 1
    try:
        return _explain(collectors, x, ip, w, only)
    finally:
        memo[_DEPTH_KEY] = depth


_DEPTH_KEY = ("alternatives", "depth")
_EXPLAINED_DEPTH = 2


def _explain(
    collectors: tuple[Callable[..., None], ...], x: Any, ip: str, w: list[Any], only: tuple[int, ...] | None
) -> str:
    texts = []
    for index, collect in enumerate(collectors[:_SHOWN_BRANCHES]):
        if only is not None and index not in only:
            continue
        found: list[Issue] = []
        collect(x, ip, found, w)
        said = "; ".join(i.message for i in found[:_SHOWN_ISSUES]) + ("; …" if len(found) > _SHOWN_ISSUES else "")
        texts.append(f"({index + 1}) {said or 'no finding'}")
    text = " ".join(texts) + (" …" if len(collectors) > _SHOWN_BRANCHES else "")
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"


def _merge_items(expr: str) -> list[str]:
    return [f"q = {expr}", "if q[0] > p: p = q[0]", "c |= q[1]"]


def _merge_items_if_valid(expr: str) -> list[str]:
    return [f"q = {expr}", "if q is not None:", "    if q[0] > p: p = q[0]", "    c |= q[1]"]


class _Branches(Part):
    applies = "inplace"
    in_place = True
    proves = True  # a branch held, and a node's test holds only on JSON

    def props_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.props_code``: the branches that hold (``anyOf``, ``oneOf``)."""
        lines = []
        for b in self.branches:
            lines += [f"r = {g.evaluated(b, 'props', v)}", "if r is not None: s |= r"]
        return lines

    def items_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.items_code``: the branches that hold."""
        return [line for b in self.branches for line in _merge_items_if_valid(g.evaluated(b, "items", v))]

    def __init__(self, keyword: str, branches: list[XNode], path: Path) -> None:
        self.keyword = keyword
        self.branches = branches
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        return iter(self.branches)


class AllOf(_Branches):
    """``allOf``: every branch holds."""

    def props_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.props_code``: every branch's (all hold)."""
        return [f"s |= {g.evaluated(b, 'props', v, checked=True)}" for b in self.branches]

    def items_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.items_code``."""
        return [line for b in self.branches for line in _merge_items(g.evaluated(b, "items", v, checked=True))]

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [f"if not {g.test(b, v)}: return False" for b in self.branches]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``: each failing branch's own issues."""
        return [line for b in self.branches for line in g.check_slow(b, v, ip)]


class AnyOf(_Branches):
    """``anyOf``: at least one branch holds.

    Branches that are only a ``type`` (pydantic's ``Optional``: ``[{"type": "string"}, {"type":
    "null"}]``) are tested inline, one expression, no calls (``bare``); so is a typed scalar
    branch beside them whose types they do not share (``[{"type": "number", "minimum": 0},
    {"type": "null"}]``: ``scalar``), whose tests then stand inline after theirs (``flat``).
    """

    @property
    def bare(self) -> bool:
        """Every branch is a bare ``type`` (no other keyword): the test is one expression."""
        return len(self.branches) <= CHAIN_LIMIT and all(_bare_type(b) for b in self.branches)

    @property
    def scalar(self) -> XNode | None:
        """The one branch that is not a bare ``type``, when its tests may stand inline (no loops,
        no calls, not a ``$ref`` target, which charges the budget on entry) and the bare types
        share none of its types: a value of theirs fails its first test, the type, at once, so
        testing them first keeps the verdict, and what the branch might raise, of schema order."""
        if len(self.branches) > CHAIN_LIMIT:
            return None
        rest = [b for b in self.branches if not _bare_type(b)]
        if len(rest) != 1 or rest[0].types is None or rest[0].meta.get("ref") or not rest[0].scalar_only:
            return None
        bare: frozenset[str] = frozenset().union(*(b.types or () for b in self.branches if b is not rest[0]))
        return rest[0] if not (_widened(bare) & _widened(rest[0].types)) else None

    @property
    def flat(self) -> bool:
        """The fast test has no calls (``bare`` or ``scalar``): the node may stand inline."""
        return self.bare or self.scalar is not None

    def _any(self, g: Emitter, v: str) -> str:
        if self.bare:
            return "(" + " or ".join(g.type_expr(b.types, v) for b in self.branches if b.types) + ")"
        if len(self.branches) > CHAIN_LIMIT:
            fns = g.late_tuple([g.vfn(b) for b in self.branches])
            return f"any(f({v}, w) for f in {fns})"
        return "(" + " or ".join(g.test(b, v) for b in self.branches) + ")"

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        scalar = None if self.bare else self.scalar
        if scalar is not None:
            bare = " or ".join(g.type_expr(b.types, v) for b in self.branches if b is not scalar and b.types)
            return [f"if not ({bare}):", *("    " + line for line in g.body_fast(scalar, v, g.name("u")))]
        return [f"if not {self._any(g, v)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``: one issue saying what each alternative wanted."""
        collectors = g.late_tuple([g.cfn(b) for b in self.branches])
        head = g.const(f" must match at least one of the {len(self.branches)} alternatives of anyOf: ")
        message = f"where({ip}) + {head} + {g.const(alternatives)}({collectors}, {v}, {ip}, w)"
        return [f"if not {self._any(g, v)}:", "    " + g.issue("anyOf", self.schema_path, ip, message)]


def _bare_type(node: XNode) -> bool:
    return node.boolean is None and not node.parts and node.types is not None


def _widened(types: frozenset[str] | None) -> frozenset[str]:
    """``types`` with ``integer`` beside ``number`` (every integer is a number)."""
    found = types or frozenset()
    return found | {"integer"} if "number" in found else found


class OneOf(_Branches):
    """``oneOf``: exactly one branch holds."""

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast`` (up to ``CHAIN_LIMIT`` branches unrolled: no loop over a tuple)."""
        if len(self.branches) <= CHAIN_LIMIT:
            first, *rest = self.branches
            lines = [f"o = 1 if {g.test(first, v)} else 0"]
            for b in rest:
                lines += [f"if {g.test(b, v)}:", "    if o: return False", "    o = 1"]
            return [*lines, "if not o: return False"]
        fns = g.late_tuple([g.vfn(b) for b in self.branches])
        return [
            "o = 0",
            f"for f in {fns}:",
            f"    if f({v}, w):",
            "        if o: return False",
            "        o = 1",
            "if not o: return False",
        ]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``: none matched (what each wanted), or which ones matched."""
        fns = g.late_tuple([g.vfn(b) for b in self.branches])
        collectors = g.late_tuple([g.cfn(b) for b in self.branches])
        n = len(self.branches)
        none = g.const(f" must match exactly one of the {n} alternatives of oneOf; it matches none: ")
        more = g.const(f" must match exactly one of the {n} alternatives of oneOf; it matches more than one: ")
        return [
            f"o = [i + 1 for i, f in enumerate({fns}) if f({v}, w)]",
            "if not o:",
            "    "
            + g.issue(
                "oneOf",
                self.schema_path,
                ip,
                f"where({ip}) + {none} + {g.const(alternatives)}({collectors}, {v}, {ip}, w)",
            ),
            "elif len(o) > 1:",
            "    " + g.issue("oneOf", self.schema_path, ip, f"where({ip}) + {more} + ', '.join(map(str, o[:8]))"),
        ]


def kw_all_of(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``allOf``: a non-empty list of schemas."""
    nodes = schema_list(ctx, value, path, "allOf")
    return None if nodes is None else AllOf("allOf", nodes, path)


def kw_any_of(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``anyOf``: a non-empty list of schemas."""
    nodes = schema_list(ctx, value, path, "anyOf")
    return None if nodes is None else AnyOf("anyOf", nodes, path)


def kw_one_of(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``oneOf``: a non-empty list of schemas."""
    nodes = schema_list(ctx, value, path, "oneOf")
    return None if nodes is None else OneOf("oneOf", nodes, path)


class Not(Part):
    """``not``: the schema must not hold."""

    applies = "inplace"
    in_place = True

    def __init__(self, node: XNode, path: Path) -> None:
        self.node = node
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield self.node

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        return [f"if {g.test(self.node, v)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        tail = f" must not match the schema at {self.schema_path} (not)"
        return [f"if {g.test(self.node, v)}:", "    " + g.fail("not", self.path, ip, tail)]


def kw_not(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``not``: a schema."""
    node = ctx.sub(value, path)
    return None if node is None else Not(node, path)


class IfThenElse(Part):
    """``if``/``then``/``else``: ``then`` holds where ``if`` does, ``else`` where it does not."""

    applies = "inplace"
    in_place = True

    def __init__(self, cond: XNode, then: XNode | None, other: XNode | None, path: Path) -> None:
        self.cond = cond
        self.then = then
        self.other = other
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield self.cond
        if self.then is not None:
            yield self.then
        if self.other is not None:
            yield self.other

    def props_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.props_code``: ``if``'s own when it holds, and the branch applied."""
        return self._annotations(g, v, "props")

    def items_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.items_code``."""
        return self._annotations(g, v, "items")

    def _annotations(self, g: Emitter, v: str, kind: str) -> list[str]:
        def add(expr: str) -> list[str]:
            return [f"s |= {expr}"] if kind == "props" else _merge_items(expr)

        lines = [f"r = {g.evaluated(self.cond, kind, v)}", "if r is not None:"]
        lines += ["    " + x for x in add("r")]
        if self.then is not None:
            lines += ["    " + x for x in add(g.evaluated(self.then, kind, v, checked=True))]
        if self.other is not None:
            lines += ["else:", *("    " + x for x in add(g.evaluated(self.other, kind, v, checked=True)))]
        return lines

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        lines = []
        if self.then is not None:
            lines += [f"if {g.test(self.cond, v)}:", f"    if not {g.test(self.then, v)}: return False"]
            if self.other is not None:
                lines += [f"elif not {g.test(self.other, v)}: return False"]
        elif self.other is not None:
            lines += [f"if not {g.test(self.cond, v)} and not {g.test(self.other, v)}: return False"]
        return lines

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``: the issues of ``then`` or ``else``."""
        if self.then is None and self.other is None:
            return []
        then = g.check_slow(self.then, v, ip) if self.then is not None else ["pass"]
        other = g.check_slow(self.other, v, ip) if self.other is not None else ["pass"]
        return [f"if {g.test(self.cond, v)}:", *("    " + x for x in then), "else:", *("    " + x for x in other)]


def kw_if(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``if``: a schema; with ``then`` and/or ``else`` (classified here) it applies one of them."""
    cond = ctx.sub(value, path)
    base = path[:-1]
    then = ctx.sub(schema["then"], (*base, "then")) if "then" in schema else None
    other = ctx.sub(schema["else"], (*base, "else")) if "else" in schema else None
    if cond is None or ("then" in schema and then is None) or ("else" in schema and other is None):
        return None
    return IfThenElse(cond, then, other, path)  # alone, it still collects annotations (unevaluated*)


def kw_then_else(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``then`` / ``else``: classified by ``if``; without ``if`` ignored by the dialect (still checked)."""
    if "if" not in schema:
        ctx.sub(value, path)
    return None


class Ref(Part):
    """``$ref``: the target schema holds (resolved after the walk; ``target`` set by ``classify``)."""

    applies = "inplace"
    in_place = True
    proves = True
    refers = True

    def __init__(self, ref: str, path: Path) -> None:
        self.ref = ref
        self.path = path
        self.target: XNode | None = None

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        if self.target is not None:
            yield self.target

    def props_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.props_code``: the target's."""
        assert self.target is not None
        return [f"s |= {g.evaluated(self.target, 'props', v, checked=True)}"]

    def items_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.items_code``."""
        assert self.target is not None
        return _merge_items(g.evaluated(self.target, "items", v, checked=True))

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        assert self.target is not None
        return [f"if not {g.test(self.target, v)}: return False"]

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``: the target's own issues."""
        assert self.target is not None
        return g.check_slow(self.target, v, ip)


IGNORED_BESIDE_REF = frozenset(
    {
        "$ref",
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "definitions",
        "$defs",
        "readOnly",
        "writeOnly",
        "deprecated",
        "contentMediaType",
        "contentEncoding",
        "$schema",
        "$id",
    }
)
"""Keys that constrain nothing, so they may stand beside a draft-07 ``$ref`` (which ignores its siblings)."""


def kw_ref(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``$ref``: a URI reference into this document (E5: nothing is fetched). In draft-06/07 its
    siblings are ignored by the dialect, so a constraining sibling is unsupported (spec, "Dialects")."""
    if type(value) is not str:
        ctx.finding(VALIDATION, "$ref", path, "`$ref` must be a string (a URI reference)")
        return None
    if ctx.dialect in ("draft-07", "draft-06"):
        base = path[:-1]
        for key in schema:
            if key not in IGNORED_BESIDE_REF:
                ctx.finding(
                    UNSUPPORTED,
                    str(key),
                    (*base, key),
                    f"`{key}` beside `$ref` is ignored by {ctx.dialect}, so it would not be enforced",
                )
    part = Ref(value, path)
    ctx.defer(part)
    return part


# --- the rows (``ir.Keyword``; registered by ``table.KEYWORDS``) ------------------------------

ROWS: Final = (
    Keyword("allOf", ALL, kw_all_of, quick_schema_list, emits=(AllOf,)),
    Keyword("anyOf", ALL, kw_any_of, quick_schema_list, emits=(AnyOf,)),
    Keyword("oneOf", ALL, kw_one_of, quick_schema_list, BOTH, in_one_of=True, emits=(OneOf,)),
    Keyword("not", ALL, kw_not, quick_schema, emits=(Not,)),
    Keyword("if", SINCE_07, kw_if, quick_schema, emits=(IfThenElse,)),
    Keyword("then", SINCE_07, kw_then_else, quick_schema),  # read by ``if``'s part
    Keyword("else", SINCE_07, kw_then_else, quick_schema),
    Keyword("$ref", ALL, kw_ref, emits=(Ref,)),  # the verdict's quick test: ``classify`` (the walk's own list)
)
"""In-place applicators."""
