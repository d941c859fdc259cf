"""Classify a schema for the extended profile: one complete walk, then local ``$ref``
resolution, then the E6 cycle check; a clean schema becomes a tree of :class:`XNode`.

The walk visits every subschema (every ``properties`` value, every branch, every ``$defs``
entry, also ones no call reaches; spec "Two error kinds") and gives each key to its row of
``table.KEYWORDS``; a key with no row, or a row of another dialect, is
``unsupported_capability``. ``$ref`` targets are resolved after the walk, inside this one
document only (E5): a JSON Pointer fragment (``~0``/``~1``, percent-decoding), a plain-name
anchor (``$anchor``, draft-07 ``$id: "#name"``), or the root ``$id``'s URI with either.
A cycle of in-place applications (``$ref``, ``allOf``, …) that consumes no part of the
instance is ``unsupported_capability`` (E6); recursion through instances is fine.

One walker (:class:`Walker`) gives the two outputs: the verdict (is the document clean? the
keywords' quick tests, for every tool of a listing) and the findings, with or without the
tree; a findings walk asks the verdict of each nested schema first and words only what it
doubts.

This module does not generate code (``gen``) and never sees arguments.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import unquote, urldefrag, urljoin

from ..budget import MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, MAX_WORK
from ..json_values import pointer
from ..report import UNSUPPORTED, VALIDATION
from .ir import FindingLog, Path, Walk, XNode
from .ir import Quick as QuickTest
from .kw_any import TypePart, ValueBudget
from .kw_apply import Ref
from .table import ELSEWHERE, FINISHERS, KEYWORDS, holder

__all__ = ["DIALECTS", "Quick", "Walker", "dialect_of"]

DIALECTS: Final = {
    "json-schema.org/draft/2020-12/schema": "2020-12",
    "json-schema.org/draft/2019-09/schema": "2019-09",
    "json-schema.org/draft-07/schema": "draft-07",
    "json-schema.org/draft-06/schema": "draft-06",
}
"""The ``$schema`` URIs the profile accepts (``http`` or ``https``, with or without a trailing ``#``)."""


def dialect_of(uri: str) -> str | None:
    """The dialect a root ``$schema`` names, or ``None`` for any other URI."""
    for scheme in ("https://", "http://"):
        if uri.startswith(scheme):
            rest = uri[len(scheme) :]
            return DIALECTS.get(rest[:-1] if rest.endswith("#") else rest)
    return None


class Walker(FindingLog):
    """One walk of one document for the extended profile, with two outputs. Implements ``ir.Ctx``
    and ``ir.Walk``.

    * The verdict, :meth:`root`: would the document classify with no finding and no note? Each
      node is :meth:`clean` (the keywords' quick tests, no paths, no parts): True only where the
      full output would find nothing; any doubt (an anchor, a ``format`` that is only an
      annotation, ``enum`` containers, a ``$ref`` other than ``#/$defs/Name``) is False. Every
      value a quick test accepts has exact JSON types, so a clean verdict also proves the schema
      is JSON. ``compile(..., defer=True)`` asks it of every tool of a listing.
    * The findings, and with ``build`` the tree, :meth:`classify`: every node through
      :meth:`sub` and each key's rule (paths, findings in the spec's words, parts), then local
      ``$ref`` resolution and the E6 checks. Without ``build`` (findings only), :meth:`sub`
      first offers each nested schema to :meth:`clean` and stands an empty node in for one it
      finds clean: the findings, their order and the subschema count are the full walk's (a
      clean subtree has none to word); a ``$ref`` met on the way makes it the full walk.

    Both outputs share one state (the dialect, the subschema count, the ``enum``/``const``
    value budget), the node gates (the subschema and depth budgets; a key with no row of the
    dialect is refused) and one keyword table (``table.KEYWORDS``: a row's ``quick`` and its
    ``rule`` side by side), so the verdict is the findings' by construction wherever the quick
    tests vouch (``ir.Keyword.quick``: True only where ``rule`` records nothing).
    """

    def __init__(self) -> None:  # the verdict's state only: a listing builds one walker per tool
        self.dialect = "2020-12"
        self.nodes = 0
        self.values = ValueBudget()  # the enum/const values of the document (kw_any)
        self.quicks = _QUICKS_2020
        self.ref_names: list[str] | None = None  # the verdict's ``$ref`` values, once there is one (_quick_ref)

    def _start(self, document: Any, build: bool) -> None:
        """The state of :meth:`classify` (any verdict's state is dropped)."""
        super().__init__()
        self.document = document
        self.build = build
        self.dialect = "2020-12"
        self.values = ValueBudget()
        self.quicks = _QUICKS_2020
        self.ref_names = None
        self.notes: list[tuple[str, str]] = []
        self.memo: dict[Path, XNode] = {}
        self.refs: list[Ref] = []
        self.anchors: dict[str, Path] = {}
        self.depth = 0
        self.base = ""

    def _read_in(self, dialect: str) -> None:
        """The root's ``$schema`` named ``dialect``: both outputs read the keyword table's rows of it."""
        self.dialect = dialect
        self.quicks = _QUICKS[dialect]

    # --- the verdict -----------------------------------------------------------------------------

    def root(self, schema: Any) -> bool:
        """The verdict: True when the whole document is clean (the root rules of "Dialects" included)."""
        if type(schema) is not dict:
            return False
        uri = schema.get("$schema")
        if uri is not None:
            dialect = dialect_of(uri) if type(uri) is str else None
            if dialect is None:
                return False
            self._read_in(dialect)
        kind = schema.get("type", "object")
        if kind != "object" and kind != ["object"]:
            return False
        if not self.clean(schema, 0):
            return False
        return self.ref_names is None or _refs_fit(schema, self.ref_names)

    def clean(self, schema: Any, depth: int) -> bool:
        """True when ``schema`` at nesting ``depth`` would classify with no finding (``ir.Walk``)."""
        self.nodes = nodes = self.nodes + 1
        if nodes > MAX_SCHEMA_NODES or depth > MAX_SCHEMA_DEPTH:
            return False
        if type(schema) is not dict:
            return type(schema) is bool
        quicks = self.quicks
        for key, value in schema.items():
            quick = quicks.get(key)
            if quick is None or type(key) is not str or not quick(value, schema, depth, self):
                return False
        return True

    # --- the findings and the tree -----------------------------------------------------------------

    def classify(self, document: Any, *, build: bool = True) -> XNode | None:
        """Classify the whole document: its findings in ``issues``, its notes in ``notes``; with
        ``build``, the root node (meaningful only when there is no finding), else ``None``.

        Without ``build``, a document whose ``$ref``s must be resolved is walked in full
        (``build`` becomes True and the root node is returned): the E6 checks read the tree.
        """
        self._start(document, build)
        try:
            return self._root()
        except _Resolve:
            self._start(document, True)
            return self._root()

    # --- ir.Ctx ----------------------------------------------------------------------------

    def note(self, path: Path, message: str) -> None:
        """Record a note: something the report must say that is not a finding (E4's annotation formats)."""
        self.notes.append((pointer(path), message))

    def defer(self, part: Any) -> None:
        """Register a ``$ref`` part, resolved after the walk (which needs the whole tree: see :meth:`classify`)."""
        if not self.build:
            raise _Resolve
        self.refs.append(part)

    def anchor(self, name: str, path: Path) -> None:
        """Record a plain-name anchor; the same name twice is malformed."""
        known = self.anchors.setdefault(name, path)
        if known != path:
            self.finding(VALIDATION, "$anchor", path, f"the anchor name {name!r} is declared twice in this schema")

    def sub(self, schema: Any, path: Path) -> XNode | None:
        """Classify the schema at ``path`` (once per place); ``None`` when it is not a schema."""
        found = self.memo.get(path)
        if found is not None:
            return found
        if not self.build and self.depth and self.nodes <= MAX_SCHEMA_NODES:
            nodes, left = self.nodes, self.values.left
            if self.clean(schema, self.depth) and self.ref_names is None:
                return XNode(path, boolean=schema if type(schema) is bool else None)  # nothing to word below
            self.nodes, self.values.left, self.ref_names = nodes, left, None  # walked again, by the rules
        self.nodes += 1
        if self.nodes > MAX_SCHEMA_NODES:
            if self.nodes == MAX_SCHEMA_NODES + 1:
                self.finding(
                    UNSUPPORTED,
                    holder(path),
                    path,
                    f"the schema has more than {MAX_SCHEMA_NODES} subschemas, the guard's work budget",
                )
            return None
        if self.depth > MAX_SCHEMA_DEPTH:
            self.finding(
                UNSUPPORTED,
                "schema",
                path,
                f"schemas nested more than {MAX_SCHEMA_DEPTH} levels deep are not supported",
            )
            return None
        self.depth += 1
        try:
            return self._node(schema, path)
        finally:
            self.depth -= 1

    # --- the walk ----------------------------------------------------------------------------

    def _node(self, schema: Any, path: Path) -> XNode | None:
        if type(schema) is bool:
            node = self.memo[path] = XNode(path, boolean=schema)
            return node
        if type(schema) is not dict:
            self.finding(VALIDATION, holder(path), path, "a schema must be an object or a boolean")
            return None
        node = self.memo[path] = XNode(path)
        parts = []
        dialect = self.dialect
        for key, value in schema.items():
            kpath = (*path, key)
            row = KEYWORDS.get(key)
            if row is None:
                self.finding(
                    UNSUPPORTED,
                    key,
                    kpath,
                    f"`{key}` is not a JSON Schema keyword; the guard refuses unknown keys (they may be constraints "
                    "their authors believe enforced)",
                )
                continue
            if dialect not in row.dialects:
                why = ELSEWHERE.get((key, dialect))
                self.finding(
                    UNSUPPORTED,
                    key,
                    kpath,
                    f"`{key}` is not supported in {dialect}: {why}"
                    if why
                    else f"`{key}` is not a keyword of {dialect} (the schema's dialect), so it would not be enforced",
                )
                continue
            result = row.rule(self, value, schema, kpath)
            if result is None:
                continue
            if isinstance(result, list):
                parts.extend(result)
            elif type(result) is TypePart:
                node.types, node.type_path = result.names, result.path
            else:
                parts.append(result)
        for finisher in FINISHERS:
            parts = finisher(parts)
        for part in parts:
            part.bind(node)
        node.parts = parts
        return node

    # --- the document ------------------------------------------------------------------------

    def _root(self) -> XNode | None:
        schema = self.document
        if type(schema) is bool:
            self.finding(UNSUPPORTED, "schema", (), "the root must be an object schema, not a boolean schema")
            return None
        if type(schema) is dict:
            uri = schema.get("$schema")
            if uri is not None:
                dialect = dialect_of(uri) if type(uri) is str else None
                if dialect is None:
                    self.finding(
                        UNSUPPORTED,
                        "$schema",
                        ("$schema",),
                        "`$schema` names a dialect other than draft-06, draft-07, 2019-09 or 2020-12",
                    )
                else:
                    self._read_in(dialect)
            base = schema.get("$id")
            if type(base) is str:
                self.base = urldefrag(base)[0]
        root = self.sub(schema, ())
        if root is None:
            return None
        if root.types is None:
            pass  # decision 1: no type means object (the entry function refuses other values)
        elif root.types != frozenset({"object"}):
            self.finding(UNSUPPORTED, "type", root.type_path, 'the root must accept only objects (`type: "object"`)')
        resolved = bool(self.refs)
        while self.refs:
            self._resolve(self.refs.pop())
        if resolved:
            self._cycles()
            if not self.issues:
                self._expansion(root)
        if root.types is None and not root.meta.get("ref"):
            root.types, root.type_path = frozenset({"object"}), ()  # decision 1 (no `$ref` sees the root)
        return root if self.build else None

    def _resolve(self, part: Ref) -> None:
        ref = part.ref
        if ref.startswith("#"):
            fragment = ref[1:]
        else:
            joined = urljoin(self.base, ref) if self.base else ref
            document, fragment = urldefrag(joined)
            if not self.base or document != self.base:
                self.finding(
                    UNSUPPORTED,
                    "$ref",
                    part.path,
                    "a `$ref` that leaves this schema is not supported (nothing is fetched)",
                )
                return
        fragment = unquote(fragment)
        if fragment and not fragment.startswith("/"):
            path = self.anchors.get(fragment)
            if path is None:
                self.finding(
                    VALIDATION,
                    "$ref",
                    part.path,
                    f"`$ref` names the anchor {fragment!r}, which this schema does not declare",
                )
                return
            part.target = self.memo.get(path)
            if part.target is not None:
                part.target.meta["ref"] = True
            return
        target: Any = self.document
        path_list: list[str | int] = []
        for token in fragment.split("/")[1:] if fragment else []:
            token = token.replace("~1", "/").replace("~0", "~")
            if type(target) is dict and token in target:
                target = target[token]
                path_list.append(token)
            elif (
                type(target) is list
                and token.isdigit()
                and (token == "0" or token[0] != "0")
                and int(token) < len(target)
            ):
                target = target[int(token)]
                path_list.append(int(token))
            else:
                self.finding(VALIDATION, "$ref", part.path, "`$ref` points at nothing in this schema")
                return
        path = tuple(path_list)
        depth, self.depth = self.depth, 0
        try:
            part.target = self.memo.get(path) or self.sub(target, path)
        finally:
            self.depth = depth
        if part.target is not None:
            part.target.meta["ref"] = True

    def _cycles(self) -> None:
        """E6: a cycle of in-place applications (no part of the instance consumed) is unsupported."""
        grey, black = 1, 2
        color: dict[int, int] = {}
        for start in list(self.memo.values()):
            if id(start) in color:
                continue
            color[id(start)] = grey
            stack = [(start, _in_place(start))]
            while stack:
                node, edges = stack[-1]
                for sub, kpath in edges:
                    state = color.get(id(sub))
                    if state is None:
                        color[id(sub)] = grey
                        stack.append((sub, _in_place(sub)))
                        break
                    if state == grey:
                        self.finding(
                            UNSUPPORTED,
                            str(kpath[-1]),
                            kpath,
                            "a reference cycle that consumes no part of the value (it would apply itself forever) "
                            "is not supported",
                        )
                else:
                    color[id(node)] = black
                    stack.pop()

    def _expansion(self, root: XNode) -> None:
        """E6: references that expand past the work budget on one value (a schema whose checks
        could never fit) are unsupported: the weight of the root with every ``$ref`` expanded
        (recursion through the instance counts once per level) must stay within ``MAX_WORK``.
        Likewise its depth with every ``$ref`` expanded (recursion again once) must stay within
        ``MAX_SCHEMA_DEPTH``, the limit on nesting: a chain of references is nesting all the same,
        and its checks are generated and run as nested calls."""
        limit = MAX_WORK
        weights: dict[int, int] = {}
        heights: dict[int, int] = {}
        active: set[int] = {id(root)}
        # (node, its children left, weight so far, height so far)
        stack = [(root, iter([sub for sub, _in, _path in root.children()]), 1, 0)]
        while stack:
            node, subs, total, height = stack[-1]
            for sub in subs:
                known = weights.get(id(sub))
                if known is not None:
                    total += known
                    height = max(height, heights[id(sub)])
                elif id(sub) in active:
                    total += 1  # recursion: paid per level of the instance, on entry, by the budget
                else:
                    stack[-1] = (node, subs, total, height)
                    active.add(id(sub))
                    stack.append((sub, iter([s for s, _in, _path in sub.children()]), 1, 0))
                    break
                if total > limit:
                    break
            else:
                stack.pop()
                active.discard(id(node))
                weights[id(node)] = total = min(total, limit + 1)
                heights[id(node)] = height = height + 1
                if total > limit:
                    self._too_heavy(node)
                    return
                if height > MAX_SCHEMA_DEPTH + 1:
                    self.finding(
                        UNSUPPORTED,
                        "$ref",
                        node.path,
                        f"the references below this schema nest it more than {MAX_SCHEMA_DEPTH} levels deep",
                    )
                    return
                if stack:
                    parent, parent_subs, parent_total, parent_height = stack[-1]
                    stack[-1] = (parent, parent_subs, parent_total + total, max(parent_height, height))
                continue
            if total > limit:
                self._too_heavy(node)
                return

    def _too_heavy(self, node: XNode) -> None:
        self.finding(
            UNSUPPORTED,
            "$ref",
            node.path,
            f"the references below this schema expand to more than {MAX_WORK:,} subschema evaluations of one "
            "value, the guard's work budget",
        )


def _in_place(node: XNode) -> Any:
    return iter([(sub, kpath) for sub, in_place, kpath in node.children() if in_place])


class _Resolve(Exception):
    """A findings-only walk met a ``$ref``: the document is walked in full (see :meth:`Walker.classify`)."""


Quick = Walker
"""The verdict's former name (``Quick().root(schema)``), kept for its callers."""


def _quick_ref(value: Any, schema: dict[str, Any], depth: int, walk: Walk) -> bool:
    """2020-12 ``$ref`` of the form pydantic and zod emit, ``#/$defs/Name`` or ``#/definitions/Name``
    (a name with no ``/``, ``~`` or ``%``: the pointer is the name); recorded for :func:`_refs_fit`.
    Any other reference (anchors, escapes, nested pointers, other documents): the full classifier."""
    if type(value) is not str or not isinstance(walk, Walker):
        return False
    for prefix in _REF_PREFIXES:
        if value.startswith(prefix):
            name = value[len(prefix) :]
            if name and "/" not in name and "~" not in name and "%" not in name:
                if walk.ref_names is None:
                    walk.ref_names = [value]
                else:
                    walk.ref_names.append(value)
                return True
    return False


_REF_PREFIXES: Final = ("#/$defs/", "#/definitions/")

_NOT_SCHEMAS: Final = frozenset({"default", "examples", "enum", "const", "contentSchema", "required", "type"})
"""Keywords whose values hold no subschema (JSON data; a ``$ref`` key in them is data)."""


def _refs_fit(document: dict[str, Any], refs: list[str]) -> bool:
    """E6 for a clean walk that met ``$ref``s (a conservative stand-in for the classifier's checks).

    True only when every target exists in the root's ``$defs``/``definitions`` (the walk found them
    clean), no target is reached again while it is being expanded (so there is no cycle at all,
    in place or through members: recursion is the classifier's to count), and the document with
    every reference expanded has at most ``MAX_WORK`` schemas (every object and boolean at a
    schema position counted, ``$defs`` too: at least the classifier's count). Anything else is
    False, and the full classifier decides.
    """
    targets: dict[str, Any] = {}
    for ref in set(refs):
        holder_key, name = ref[2:].split("/", 1)
        defs = document.get(holder_key)
        if type(defs) is not dict or name not in defs:
            return False
        targets[ref] = defs[name]
    try:
        return _expanded(document, targets, {}, set()) <= MAX_WORK
    except (_Doubt, RecursionError):
        return False


class _Doubt(Exception):
    """The expansion cannot be counted here (see :func:`_expanded`): the full classifier decides."""


def _expanded(schema: Any, targets: dict[str, Any], weights: dict[str, int], active: set[str]) -> int:
    """Objects and booleans at the schema positions of ``schema``, every ``$ref`` replaced by its
    target (capped past ``MAX_WORK``). Raises :class:`_Doubt` for a target reached within its own
    expansion, or a ``$ref`` key that is not one the walk recorded (a member name, say)."""
    t = type(schema)
    if t is bool:
        return 1
    if t is not dict:
        return 0
    total = 1
    for key, value in schema.items():
        if key == "$ref":
            if type(value) is not str or value not in targets:
                raise _Doubt
            known = weights.get(value)
            if known is None:
                if value in active:
                    raise _Doubt
                active.add(value)
                known = weights[value] = _expanded(targets[value], targets, weights, active)
                active.discard(value)
            total += known
        elif key in _NOT_SCHEMAS:
            continue
        elif key in _MAPS:
            if type(value) is dict:
                total += sum(_expanded(sub, targets, weights, active) for sub in value.values())
        elif type(value) is list:
            total += sum(_expanded(sub, targets, weights, active) for sub in value)
        else:
            total += _expanded(value, targets, weights, active)
        if total > MAX_WORK:
            return MAX_WORK + 1
    return total


_MAPS: Final = frozenset({"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"})
"""Keywords whose value maps names (or patterns) to subschemas."""


_QUICKS: Final[dict[str, dict[str, QuickTest]]] = {
    dialect: {name: row.quick for name, row in KEYWORDS.items() if dialect in row.dialects and row.quick is not None}
    for dialect in DIALECTS.values()
}
_QUICKS["2020-12"]["$ref"] = _quick_ref
"""Per dialect, the quick test of every keyword enforced in it (``table.KEYWORDS``); a key not here
(unknown, another dialect's, or one with no quick test) sends the schema to the full classifier."""
_QUICKS_2020: Final = _QUICKS["2020-12"]
"""The walk's tests until a root ``$schema`` names another dialect (one lookup saved per schema)."""
