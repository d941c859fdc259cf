"""The extended profile's classified form: schema nodes holding their keywords' parts.

A :class:`XNode` is one schema (an object or a boolean schema) at one place of the
document; its :class:`Part` values are what its keywords' classification rules returned.
Each part knows how to emit its own fast test and its own slow (issue-collecting) test
(``Part.fast`` / ``Part.slow``), so a keyword's rule, test and emitter live together in
its keyword module; :mod:`.gen` only arranges them by the JSON type they apply to.

Plain data; no schema walking (``classify``) and no code generation (``gen``) here: what a part's
emitter may ask of the generator is :class:`Emitter`, which ``gen.Gen`` implements, so the keyword
modules depend on this module only and ``gen`` (which arranges their parts) stands above them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Protocol

from ..budget import MAX_SCHEMA_NODES
from ..json_values import pointer
from ..report import Issue
from .writer import ModuleWriter

__all__ = [
    "ALL",
    "APPLIES",
    "ARRAY",
    "BOTH",
    "NEW",
    "NUMERIC",
    "OBJECT",
    "OLD",
    "SINCE_07",
    "STANDARD",
    "TUPLE_ITEMS",
    "Ctx",
    "Emitter",
    "Keyword",
    "Part",
    "Path",
    "Quick",
    "Subset",
    "SubsetQuick",
    "Walk",
    "XNode",
]

Path = tuple[str | int, ...]
"""A schema path (turned into a JSON Pointer where code or a finding needs it)."""

APPLIES = ("object", "array", "string", "number", "any", "inplace")
"""Where a part's test stands in a node's function: in the branch of the JSON type it applies to
(JSON Schema applicability: a keyword constrains only values of its own type), before the type
dispatch (``any``: ``enum``, ``const``) or after it (``inplace``: applicators on the same value)."""


class Part:
    """What one keyword contributes to its node's validator.

    ``applies`` places the part (see :data:`APPLIES`). ``fast(g, v)`` gives statements that
    ``return False`` when the value in local ``v`` breaks the keyword; ``slow(g, v, ip)``
    statements that append one or more issues to ``out`` when it does (``ip``: an expression
    for the value's JSON Pointer). Both run only on a value already known to be of the
    part's type. ``nodes()`` yields nested nodes (for work weights and the E6 cycle check);
    ``in_place`` says whether they are applied to the same value (an edge that consumes no
    part of the instance).
    """

    applies: ClassVar[str] = "any"
    in_place: ClassVar[bool] = False
    covers: ClassVar[bool] = False  # the part checks every member of its container is JSON
    proves: ClassVar[bool] = False  # passing the part proves the value JSON (a subschema held on it)
    refers: ClassVar[bool] = False  # its node is a ``$ref`` target, which charges the budget itself
    memo: ClassVar[bool] = False  # its node's verdict is kept per value and call (``Gen.memoized``)
    order: ClassVar[int] = 50
    path: Path

    def fast(self, g: Emitter, v: str) -> list[str]:
        """Statements that ``return False`` when ``v`` breaks the keyword."""
        raise NotImplementedError

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """Statements appending issues to ``out`` when ``v`` (pointer ``ip``) breaks the keyword."""
        raise NotImplementedError

    def nodes(self) -> Iterator[XNode]:
        """Nested nodes this part applies (none by default)."""
        return iter(())

    def bind(self, node: XNode) -> None:
        """Called once with the node the part belongs to (``unevaluated*`` need it)."""

    def props_code(self, g: Emitter, v: str) -> list[str]:
        """For ``unevaluatedProperties``: statements adding to the set ``s`` the member names this
        keyword evaluated in the valid object ``v`` (2020-12 annotation collection). None by default."""
        return []

    def items_code(self, g: Emitter, v: str) -> list[str]:
        """For ``unevaluatedItems``: statements raising ``p`` (items evaluated from the start) or adding
        indices to the set ``c`` for the valid array ``v``. None by default."""
        return []

    @property
    def schema_path(self) -> str:
        """The keyword's JSON Pointer in the schema."""
        return pointer(self.path)


@dataclass(eq=False)
class XNode:
    """One classified schema.

    Attributes:
        path: where the schema stands in the document (its ``schema_path`` prefix).
        boolean: ``True``/``False`` for a boolean schema, else ``None``.
        types: the JSON type names ``type`` allows (``integer`` distinct from ``number``), or
            ``None`` when the node has no ``type`` (every type; applicability decides).
        type_path: the pointer path of ``type`` (the node's own path for the root's implied object).
        parts: the parts of every other keyword, in schema order.
        evaluates: for ``unevaluated*``: whether this node's functions report what they evaluated.
    """

    path: Path
    boolean: bool | None = None
    types: frozenset[str] | None = None
    type_path: Path = ()
    parts: list[Part] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def of(self, applies: str) -> list[Part]:
        """The parts placed in ``applies`` (see :data:`APPLIES`), by their order, then schema order."""
        return sorted((p for p in self.parts if p.applies == applies), key=lambda p: p.order)

    def children(self) -> Iterator[tuple[XNode, bool, Path]]:
        """``(node, in_place, keyword_path)`` for every node a part of this one applies."""
        for part in self.parts:
            for sub in part.nodes():
                yield sub, part.in_place, part.path

    @property
    def scalar_only(self) -> bool:
        """True when the node's tests may stand inline in another function: no loops, no calls
        (no object or array keywords, no in-place applicator that is not one expression)."""
        if self.boolean is not None:
            return True
        return not any(
            p.applies in ("object", "array") or (p.applies == "inplace" and not getattr(p, "flat", False))
            for p in self.parts
        )

    @property
    def trivial(self) -> bool:
        """True for a node that accepts every JSON value (``true``, ``{}``, annotations only)."""
        return self.boolean is True or (self.boolean is None and self.types is None and not self.parts)


class Emitter(ModuleWriter):
    """What a part's emitters (``Part.fast``, ``Part.slow``, ``props_code``, ``items_code``) may ask of
    the code generator; ``gen.Gen`` implements it. Declared here, below the keyword modules, so that
    they need not import the generator that arranges their parts (no import cycle).

    Attributes (set by the generator around a part's call):
        decimals: E1's exact literals (``extended``); False for ``standard``/``strict`` (doubles).
        exact: generating the branch of an argument literal no double holds (E1).
        known: the ``type`` of the node being generated, for its ``any`` parts; ``None``: untyped.
        required: names an object's lookups test (``kw_members.Members.takes_required``).
        ints_first: an enum/const's int choices were tested before the node (``Choice.int_guard``).
    """

    decimals: bool
    exact: bool
    known: frozenset[str] | None
    required: frozenset[str]
    ints_first: bool

    def issue(self, keyword: str, schema_path: str, ip: str, message: str) -> str:
        """A statement appending a ``validation`` issue; ``ip`` and ``message`` are expressions."""
        raise NotImplementedError

    def fail(self, keyword: str, path: Path, ip: str, tail: str) -> str:
        """An issue whose message is ``where(ip) + tail`` (``tail`` a fixed text from the schema)."""
        raise NotImplementedError

    def vfn(self, node: XNode) -> str:
        """The name of the node's fast function ``(x, w) -> bool``, generated once."""
        raise NotImplementedError

    def cfn(self, node: XNode) -> str:
        """The name of the node's slow function ``(x, ip, out, w)``, generated once."""
        raise NotImplementedError

    def evaluated(self, node: XNode, kind: str, v: str, skip: Part | None = None, checked: bool = False) -> str:
        """An expression for what ``node`` evaluated in ``v`` (``unevaluated*``; see ``gen.Gen``)."""
        raise NotImplementedError

    def charge(self, v: str, nodes: list[XNode]) -> list[str]:
        """Statements charging a container's members to the budget (length times the heaviest)."""
        raise NotImplementedError

    def scanned(self, v: str) -> list[str]:
        """Statements charging a pass over a container's members that no member schema weighs (one unit a member)."""
        raise NotImplementedError

    def inlinable(self, node: XNode) -> bool:
        """Whether a member's test may stand inline in its container's loop (no loops, no calls)."""
        raise NotImplementedError

    def type_expr(self, types: frozenset[str], v: str) -> str:
        """An expression: whether ``v`` is of one of ``types`` (JSON Schema type names)."""
        raise NotImplementedError

    def loop_key_of(self, part: Part) -> str:
        """The record key of a part's items loop (one per part; see ``gen.Gen.loop_key``)."""
        raise NotImplementedError

    def check_fast(self, node: XNode, v: str) -> list[str]:
        """Statements that ``return False`` when ``v`` breaks ``node``: inline or a call."""
        raise NotImplementedError

    def loop_fast(self, node: XNode, v: str, key: str) -> list[str]:
        """``for`` over the items of array ``v``, each tested against ``node``; ``key``: the loop's record."""
        raise NotImplementedError

    def check_slow(self, node: XNode, v: str, ip: str) -> list[str]:
        """Statements appending the issues of ``v`` (pointer ``ip``) against ``node``."""
        raise NotImplementedError

    def test(self, node: XNode, v: str) -> str:
        """An expression: whether ``v`` satisfies ``node``."""
        raise NotImplementedError

    def body_fast(self, node: XNode, v: str, t: str) -> list[str]:
        """The fast test of ``node`` on ``v`` as statements (``t`` a free local for its type)."""
        raise NotImplementedError


class Ctx(Protocol):
    """What a keyword's classification rule may ask of the classifier (``classify``)."""

    dialect: str

    @property
    def spent(self) -> bool:
        """Past the subschema budget: stop visiting members (the finding is recorded once)."""

    def finding(self, kind: str, keyword: str, path: Path, message: str) -> None:
        """Record a finding at ``path`` (a schema path to the keyword or node)."""

    def sub(self, schema: Any, path: Path) -> XNode | None:
        """Classify a nested schema at ``path``; ``None`` when it cannot be enforced."""

    def defer(self, part: Any) -> None:
        """Register a part whose targets are resolved after the walk (``$ref``)."""

    def note(self, path: Path, message: str) -> None:
        """Record a note for the report (not a finding): E4's annotation-only formats."""

    def anchor(self, name: str, path: Path) -> None:
        """Record a plain-name anchor (``$anchor``, draft-07 ``$id: "#name"``) for the schema at ``path``."""


class Walk(Protocol):
    """What a keyword's quick test may ask of the walk's verdict (``classify.Walker.clean``, ``subset``'s)."""

    dialect: str

    def clean(self, schema: Any, depth: int) -> bool:
        """True when the nested ``schema`` at ``depth`` would classify with no finding."""


Quick = Callable[[Any, dict[str, Any], int, Walk], bool]
"""``quick(value, schema_object, depth_of_node, walk) -> bool`` (see ``Keyword.quick``)."""

Rule = Callable[[Ctx, Any, dict[str, Any], Path], "Part | list[Part] | None"]
"""``rule(ctx, value, schema_object, keyword_path) -> Part | list[Part] | None`` (``None``: nothing to enforce)."""

Subset = Callable[[Ctx, Any, dict[str, Any], Path], bool]
"""``subset(ctx, value, schema_object, keyword_path) -> bool``: the narrower rule ``standard`` and
``strict`` add to a row (spec decisions 8, 9): False after recording its finding (in the subset's
words), or silently when the JSON scan reports the value; True lets the row's ``rule`` run."""

SubsetQuick = Callable[[Any, dict[str, Any], int, Walk], bool]
"""The verdict-only test of a row under ``standard``/``strict`` where its ``quick`` is wider than
the subset: True only when ``subset`` and ``rule`` would both record nothing."""


ALL: Final = frozenset({"2020-12", "2019-09", "draft-07", "draft-06"})
"""The dialects the extended profile reads (a row's ``dialects``)."""
NEW: Final = frozenset({"2020-12", "2019-09"})
SINCE_07: Final = frozenset({"2020-12", "2019-09", "draft-07"})
OLD: Final = frozenset({"draft-07", "draft-06"})
TUPLE_ITEMS: Final = frozenset({"2019-09", "draft-07", "draft-06"})

BOTH: Final = frozenset({"standard", "strict"})
"""The subset profiles (spec, "Two profiles"): a row with them is the reference host's table."""
STANDARD: Final = frozenset({"standard"})
"""Annotations and the root ``$schema``: ``standard`` only."""
OBJECT: Final = frozenset({"object"})
ARRAY: Final = frozenset({"array"})
NUMERIC: Final = frozenset({"integer", "number"})


@dataclass(frozen=True, slots=True)
class Keyword:
    """One row of the extended keyword table (``table.KEYWORDS``).

    Attributes:
        name: the keyword as written in a schema.
        dialects: the dialects in which it is enforced exactly (``"2020-12"``, ``"2019-09"``,
            ``"draft-07"``, ``"draft-06"``); elsewhere it is ``unsupported_capability``
            (spec, "Dialects": a keyword meant in another dialect).
        rule: its classification rule, which also builds the part that enforces it.
        quick: its test for the verdict-only walk (``compile(..., defer=True)``): True only when
            ``rule`` would record no finding (nested schemas through ``walk.clean``) and every
            value it accepted has exact JSON types; ``None``: the walk defers to the full
            classifier (``$ref``, E5 keywords).
        profiles: the subset profiles that accept the row (``"standard"``, ``"strict"``; spec,
            "Two profiles"); empty: outside the reference host's table, refused there.
        subset: the row's subset rule under those profiles (see :data:`Subset`); ``None``: the
            row's ``rule`` is the subset's too.
        subset_quick: the verdict-only test under those profiles; ``None``: ``quick`` decides.
        types: the node types the keyword may stand with under the subset (decision 4); ``None``:
            any.
        in_one_of: whether it may stand beside ``oneOf`` under the subset (decision 3).
        emits: the :class:`Part` classes its ``rule`` builds: their ``fast``/``slow`` write its
            code (``gen`` arranges them; a node's parts of one loop are folded by its module's
            ``finish``). Empty: it constrains nothing itself (annotations, a keyword another
            row's part reads, an E5 keyword).

    Each keyword module declares its rows (``ROWS``) beside their rules, quick tests and parts;
    ``table.KEYWORDS`` registers them: one keyword, one place.
    """

    name: str
    dialects: frozenset[str]
    rule: Rule
    quick: Quick | None = None
    profiles: frozenset[str] = frozenset()
    subset: Subset | None = None
    subset_quick: SubsetQuick | None = None
    types: frozenset[str] | None = None
    in_one_of: bool = False
    emits: tuple[type[Part], ...] = ()


class FindingLog:
    """The findings half of ``Ctx`` that both classifiers share (``classify.Classifier``, ``subset.SubsetClassifier``).

    ``issues``: the findings in the order found, one per kind, keyword and place; ``nodes``: the
    subschemas visited so far, against :data:`~mcp_guard.core.budget.MAX_SCHEMA_NODES`.
    """

    def __init__(self) -> None:
        self.issues: list[Issue] = []
        self.seen_findings: set[tuple[str, str, str]] = set()
        self.nodes = 0

    @property
    def spent(self) -> bool:
        """Past the subschema budget: rules stop visiting their members (one finding says so)."""
        return self.nodes > MAX_SCHEMA_NODES

    def finding(self, kind: str, keyword: str, path: Path, message: str) -> None:
        """Record a finding (one per kind, keyword and place)."""
        at = pointer(path)
        if (kind, keyword, at) in self.seen_findings:
            return
        self.seen_findings.add((kind, keyword, at))
        self.issues.append(Issue(kind, keyword, at, None, message))  # type: ignore[arg-type]
