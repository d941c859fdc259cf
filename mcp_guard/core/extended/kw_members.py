"""Object members: ``properties``, ``patternProperties`` and ``additionalProperties`` (2020-12
applicator vocabulary; draft-07 alike). They apply to objects only.

The three share one loop over the members (additional properties are those the other two do not
match): each keyword's rule returns its own part, and :func:`finish` folds the three into one
:class:`Members` part. The other object keywords are in :mod:`.kw_object`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from ..ecma_regex import PatternError
from ..json_values import escape_token
from ..report import UNSUPPORTED, VALIDATION
from .ir import ALL, BOTH, OBJECT, Ctx, Emitter, Keyword, Part, Path, Walk, XNode
from .kw_string import compiled_pattern, pattern_of, search
from .writer import CHAIN_LIMIT

_ABSENT = object()
"""The generated code's "no such member" marker (``dict.get``'s default): never a JSON value."""

_SPLIT_FROM = 4
"""Declared names past which the slow loop finds a member's name by index (``Members._split_slow``)."""

if TYPE_CHECKING:
    from ..ecma_regex import Pattern

__all__ = [
    "ROWS",
    "Additional",
    "Members",
    "PatternProperties",
    "Properties",
    "finish",
    "quick_schema",
    "quick_schemas",
    "quick_subset_additional",
    "schema_map",
    "subset_additional_properties",
    "subset_properties",
]


class Properties(Part):
    """``properties``: name → node (folded into :class:`Members`)."""

    applies = "object"

    def __init__(self, nodes: dict[str, XNode], path: Path) -> None:
        self.members = nodes
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        return iter(self.members.values())


class PatternProperties(Part):
    """``patternProperties``: (pattern, node) pairs (folded into :class:`Members`)."""

    applies = "object"

    def __init__(self, pairs: list[tuple[Pattern, XNode]], path: Path) -> None:
        self.pairs = pairs
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        return (n for _, n in self.pairs)


class Additional(Part):
    """``additionalProperties``: the node for members the other two do not match (folded)."""

    applies = "object"

    def __init__(self, node: XNode, path: Path) -> None:
        self.node = node
        self.path = path

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield self.node


def schema_map(ctx: Ctx, value: Any, path: Path, keyword: str) -> dict[str, XNode] | None:
    """An object of name → schema (``properties``, ``patternProperties``, ``dependentSchemas``): each
    subschema's node, or None (a finding says why; past the subschema budget the rest is not visited)."""
    if type(value) is not dict:
        ctx.finding(VALIDATION, keyword, path, f"`{keyword}` must be an object of schemas")
        return None
    found: dict[str, XNode] = {}
    complete = True
    for name, sub in value.items():
        if ctx.spent:
            return None  # past the subschema budget (one finding says so): the rest is not visited
        node = ctx.sub(sub, (*path, name))
        if node is None:
            complete = False
        else:
            found[name] = node
    return found if complete else None


def kw_properties(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``properties``: an object of property name → schema (names are names, decision 10)."""
    nodes = schema_map(ctx, value, path, "properties")
    return None if nodes is None else Properties(nodes, path)


def kw_pattern_properties(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``patternProperties``: an object of ECMA-262 pattern → schema (E3)."""
    nodes = schema_map(ctx, value, path, "patternProperties")
    if nodes is None:
        return None
    pairs = []
    for source, node in nodes.items():
        pattern = compiled_pattern(ctx, "patternProperties", source, (*path, source))
        if pattern is None:
            return None
        pairs.append((pattern, node))
    return PatternProperties(pairs, path)


def kw_additional_properties(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> Part | None:
    """``additionalProperties``: a schema (boolean or object) for the members not matched."""
    node = ctx.sub(value, path)
    return None if node is None else Additional(node, path)


def subset_properties(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> bool:
    """``properties`` under ``standard``/``strict``: an object (its members are classified by the rule)."""
    if type(value) is dict:
        return True
    ctx.finding(VALIDATION, "properties", path, "`properties` must be an object")
    return False


def subset_additional_properties(ctx: Ctx, value: Any, schema: dict[str, Any], path: Path) -> bool:
    """``additionalProperties`` under ``standard``/``strict``: a boolean; a schema is refused (decision 9)."""
    if type(value) is bool:
        return True
    if type(value) is dict:
        ctx.finding(UNSUPPORTED, "additionalProperties", path, "schema-valued additionalProperties is not supported")
    else:
        ctx.finding(VALIDATION, "additionalProperties", path, "`additionalProperties` must be a boolean")
    return False


def quick_subset_additional(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``additionalProperties`` as :func:`subset_additional_properties` accepts it: a boolean."""
    return type(value) is bool


class Members(Part):
    """One loop over an object's members applying ``properties``, ``patternProperties`` and
    ``additionalProperties``; every member is checked to be JSON (``covers``)."""

    applies = "object"
    covers = True
    order = 60

    def __init__(self, props: Properties | None, patterns: PatternProperties | None, extra: Additional | None) -> None:
        self.props = props.members if props else {}
        self.pairs = patterns.pairs if patterns else []
        self.extra = extra
        self.path = (props or patterns or extra).path  # type: ignore[union-attr]

    def nodes(self) -> Iterator[XNode]:
        """See ``Part.nodes``."""
        yield from self.props.values()
        yield from (n for _, n in self.pairs)
        if self.extra is not None:
            yield self.extra.node

    def props_code(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.props_code``: declared names present, names a pattern matches, or all."""
        if self.extra is not None:
            return [f"s.update({v})"]
        lines = []
        if self.props:
            lines += [f"for k in {g.const(tuple(self.props))}:", f"    if k in {v}: s.add(k)"]
        for pattern, _ in self.pairs:
            lines += [f"for k in {v}:", f"    if {g.const(search)}({g.const(pattern)}, k, w): s.add(k)"]
        return lines

    def _extra_fast(self, g: Emitter) -> list[str]:
        if self.extra is None:
            return ["if not json_once(y, w): return False"]
        return g.check_fast(self.extra.node, "y")

    def _extra_slow(self, g: Emitter, ip: str) -> list[str]:
        if self.extra is None:
            return ["if not json_once(y, w): w[1] = 1"]
        node = self.extra.node
        if node.boolean is False:
            tail = " is not allowed: the schema declares no such property (additionalProperties: false)"
            return [
                "p = child(" + ip + ", k)",
                g.fail("additionalProperties", self.extra.path, "p", tail),
                "if not json_once(y, w): w[1] = 1",
            ]
        return ["p = child(" + ip + ", k)", *g.check_slow(node, "y", "p")]

    def fast(self, g: Emitter, v: str) -> list[str]:
        """See ``Part.fast``."""
        if not self.props and not self.pairs:
            if self.extra is None or self.extra.node.trivial:
                return [f"if {v} and not json_once({v}, w): return False"]
            if self.extra.node.boolean is False:
                return [f"if {v}: return False"]
        if self.props and not self.pairs and len(self.props) <= CHAIN_LIMIT:
            return self._lookup_fast(g, v)
        lines = [*self._walk_charge(g, v), f"for k, y in {v}.items():", "    if type(k) is not str: return False"]
        body = self._loop(g, None)
        return lines + ["    " + line for line in body]

    def _lookup_fast(self, g: Emitter, v: str) -> list[str]:
        """Few declared names, no patterns: each member name an exact ``str`` (a subclass is not
        JSON, left to the slow path; not tested when the caller vouched for the keys, ``w[3]``:
        ``Compiled.check``'s ``parsed``); then each declared name is looked up once, not matched
        per member (a chain of ``==`` per member costs the product of the two counts), and the
        names found are counted. The object's names are all declared exactly when it has as many
        as were found (its names are distinct exact strings, each equal to at most one declared
        name): a closed object (``additionalProperties: false``) is then refused on any other
        count, and only an object with undeclared members walks them, for ``additionalProperties``
        (or the JSON test). Same verdict and charges as the loop (declared properties charge
        nothing)."""
        lines = [
            *self._charge(g, v),
            "if not w[3]:",
            f"    for k in {v}:",
            "        if type(k) is not str: return False",
        ]
        missing = g.const(_ABSENT)
        found = g.name("f")  # a fresh local: inline members and an enclosing loop use their own
        taken = sum(name in g.required for name in self.props)
        optional = taken < len(self.props)
        if optional:
            lines.append(f"{found} = {g.const(taken)}")
        for name, node in self.props.items():
            lines.append(f"y = {v}.get({g.const(name)}, {missing})")
            if name in g.required:  # (``takes_required``: the lookup is the ``required`` test)
                lines += [f"if y is {missing}: return False", *g.check_fast(node, "y")]
            else:
                member = ["    " + x for x in g.check_fast(node, "y")]
                lines += [f"if y is not {missing}:", f"    {found} += 1", *member]
        count = found if optional else g.const(taken)
        if self.extra is not None and self.extra.node.boolean is False:
            return [*lines, f"if len({v}) != {count}: return False"]
        return [
            *lines,
            f"if len({v}) != {count}:",
            *("    " + x for x in g.scanned(v)),
            f"    for k, y in {v}.items():",
            f"        if k not in {g.const(frozenset(self.props))}:",
            *("            " + x for x in self._extra_fast(g)),
        ]

    def takes_required(self, names: frozenset[str]) -> bool:
        """Whether the fast path's lookups (:meth:`_lookup_fast`) can test ``required`` ``names`` too
        (each is declared: looked up once, present or not). A fast path's order is its own: it
        only says yes or no, and what it may raise (a budget charge, an unreadable pattern) the slow
        path, which runs every test of a value the fast path refused, raises as well."""
        return bool(self.props) and not self.pairs and len(self.props) <= CHAIN_LIMIT and names <= self.props.keys()

    def _charge(self, g: Emitter, v: str) -> list[str]:
        """Declared properties cost what the schema says (once each); patterns and the rest, per member."""
        if not self.pairs and (self.extra is None or self.extra.node.boolean is not None):
            return []
        return g.charge(v, list(self.nodes()))

    def _walk_charge(self, g: Emitter, v: str) -> list[str]:
        """What a walk over every member costs: :meth:`_charge`, or one unit a member (``Gen.scanned``)."""
        return self._charge(g, v) or g.scanned(v)

    def slow(self, g: Emitter, v: str, ip: str) -> list[str]:
        """See ``Part.slow``."""
        lines = [*self._walk_charge(g, v), f"for k, y in {v}.items():", "    if type(k) is not str: w[1] = 1"]
        return lines + ["    " + line for line in self._loop(g, ip)]

    def _member(self, g: Emitter, node: XNode, name: str, ip: str | None) -> list[str]:
        if ip is None:
            return g.check_fast(node, "y")
        return [f"p = {ip} + {g.const('/' + escape_token(name))}", *g.check_slow(node, "y", "p")]

    def _split_slow(self, g: Emitter, ip: str, extra: list[str]) -> list[str]:
        """The slow loop's dispatch of a member to its declared name (more than :data:`_SPLIT_FROM`
        of them, none past ``CHAIN_LIMIT``): the name's index, then a binary split on it, so a
        member costs one lookup and a few integer tests, not a test per declared name before its
        own. Members are still met in argument order, so the issues are in the same order."""
        index = g.name("i")  # a fresh local
        members = list(self.props.items())

        def split(low: int, high: int) -> list[str]:
            if high - low == 1:
                name, node = members[low]
                return self._member(g, node, name, ip) or ["pass"]
            middle = (low + high) // 2
            return [
                f"if {index} < {g.const(middle)}:",
                *("    " + x for x in split(low, middle)),
                "else:",
                *("    " + x for x in split(middle, high)),
            ]

        positions = g.const({name: i for i, name in enumerate(self.props)})
        return [
            f"{index} = {positions}.get(k)",
            f"if {index} is None:",
            *("    " + x for x in extra),
            "else:",
            *("    " + x for x in split(0, len(members))),
        ]

    def _loop(self, g: Emitter, ip: str | None) -> list[str]:
        extra = self._extra_fast(g) if ip is None else self._extra_slow(g, ip)
        lines: list[str] = []
        if len(self.props) > CHAIN_LIMIT:
            entries = {}
            for name, node in self.props.items():
                fn = g.name("m")
                if ip is None:
                    g.emit(f"def {fn}(y, w):", [*g.check_fast(node, "y"), "return True"])
                else:
                    g.emit(f"def {fn}(y, ip, out, w):", self._member(g, node, name, "ip"))
                entries[g.const(name)] = fn
            call = "f(y, w)" if ip is None else f"f(y, {ip}, out, w)"
            head = [f"f = {g.late_dict(entries)}.get(k)", "if f is not None:"]
            if ip is None:
                head += ["    h = 1", "    if not f(y, w): return False"]
            else:
                head += ["    h = 1", f"    {call}"]
            if not self.pairs:
                return [*head, "else:", *("    " + x for x in extra)]
            lines = ["h = 0", *head]
        elif self.props and not self.pairs and ip is not None and len(self.props) > _SPLIT_FROM:
            return self._split_slow(g, ip, extra)
        elif self.props and not self.pairs:
            keyword = "if"
            for name, node in self.props.items():
                lines.append(f"{keyword} k == {g.const(name)}:")
                lines.extend("    " + x for x in self._member(g, node, name, ip))
                keyword = "elif"
            return [*lines, "else:", *("    " + x for x in extra)]
        elif self.props:
            lines = ["h = 0"]
            keyword = "if"
            for name, node in self.props.items():
                lines.append(f"{keyword} k == {g.const(name)}:")
                lines.append("    h = 1")
                lines.extend("    " + x for x in self._member(g, node, name, ip))
                keyword = "elif"
        else:
            lines = ["h = 0"]
        for pattern, node in self.pairs:
            lines.append(f"if {g.const(search)}({g.const(pattern)}, k, w):")
            lines.append("    h = 1")
            if ip is None:
                lines.extend("    " + x for x in g.check_fast(node, "y"))
            else:
                lines += ["    p = child(" + ip + ", k)", *("    " + x for x in g.check_slow(node, "y", "p"))]
        lines.append("if not h:")
        lines.extend("    " + x for x in extra)
        return lines


def finish(parts: list[Part]) -> list[Part]:
    """Fold ``properties``, ``patternProperties`` and ``additionalProperties`` into one loop."""
    props = next((p for p in parts if type(p) is Properties), None)
    patterns = next((p for p in parts if type(p) is PatternProperties), None)
    extra = next((p for p in parts if type(p) is Additional), None)
    if props is None and patterns is None and extra is None:
        return parts
    rest = [p for p in parts if type(p) not in (Properties, PatternProperties, Additional)]
    return [*rest, Members(props, patterns, extra)]


def quick_schemas(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """An object of clean schemas (``properties``, ``dependentSchemas``, ``$defs``)."""
    if type(value) is not dict:
        return False
    depth += 1
    for name, sub in value.items():
        if type(name) is not str or not walk.clean(sub, depth):
            return False
    return True


def quick_pattern_properties(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """``patternProperties`` as its rule accepts it: readable, bounded patterns of clean schemas."""
    if not quick_schemas(value, schema, depth, walk):
        return False
    return all(not isinstance(pattern_of(source), PatternError) for source in value)


def quick_schema(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """One clean schema (``additionalProperties``, ``propertyNames``, ``not``, ``contains``, …)."""
    return walk.clean(value, depth + 1)


# --- the rows (``ir.Keyword``; registered by ``table.KEYWORDS``) ------------------------------

ROWS: Final = (
    Keyword(
        "properties", ALL, kw_properties, quick_schemas, BOTH, subset_properties, types=OBJECT, emits=(Properties,)
    ),
    Keyword("patternProperties", ALL, kw_pattern_properties, quick_pattern_properties, emits=(PatternProperties,)),
    Keyword(
        "additionalProperties",
        ALL,
        kw_additional_properties,
        quick_schema,
        BOTH,
        subset_additional_properties,
        quick_subset_additional,
        OBJECT,
        emits=(Additional,),
    ),
)
"""The members of objects, folded into one :class:`Members` loop (:func:`finish`)."""
