"""Classify a schema for ``standard`` or ``strict``: the extended table's rows those profiles
select, each row's subset rule, and the subset's node rules; a clean schema becomes the same
tree of :class:`XNode` the extended profile builds, and ``gen`` compiles it (judging doubles).

The node rules (spec, "Two profiles" and decisions 1–4): the root is an object schema (no
``type`` means ``object``, decision 1) and never a ``oneOf``; every nested schema has a
``type`` naming one supported type (decision 2); a ``oneOf`` node carries only ``description``
and annotations beside it (decision 3); a keyword stands only with the node types its row
names (decision 4); boolean schemas are refused, except the boolean ``additionalProperties``
(decision 9). A key without a row of the profile is ``unsupported_capability`` (decision 9).

The walk visits the complete schema once (spec, "Two error kinds") with the subschema and
depth budgets of ``budget``; every finding is worded here or by the row's subset rule. The
rows' own rules then build the parts, calling :meth:`SubsetClassifier.sub` for nested schemas.
One walker (:class:`SubsetWalker`) gives the verdict of ``compile(..., defer=True)`` and the findings
(with or without the tree).

This module does not generate code and never sees arguments.
"""

from __future__ import annotations

from typing import Any, Final

from ..budget import MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES
from ..json_values import json_type_name
from ..report import UNSUPPORTED, VALIDATION
from .ir import FindingLog, Keyword, Part, Path, XNode
from .kw_any import SUBSET_TYPES, TypePart, ValueBudget
from .table import FINISHERS, KEYWORDS, holder

__all__ = ["SUBSET_PROFILES", "SubsetClassifier", "SubsetQuick", "SubsetWalker"]

SUBSET_PROFILES: Final = ("standard", "strict")
"""The profiles this walk judges (spec, "Two profiles")."""

_ROWS: Final[dict[str, dict[str, Keyword]]] = {
    profile: {name: row for name, row in KEYWORDS.items() if profile in row.profiles} for profile in SUBSET_PROFILES
}
"""Each profile's selection of the table (one lookup per key)."""

_MISSING: Final = object()


def _untyped(schema: dict[str, Any]) -> str:
    """The finding for a nested schema without ``type`` (decision 2), true to what the node says."""
    if "enum" in schema:
        return (
            "a nested schema without `type` is not supported: its `enum` restricts the values, but the subset "
            "requires `type` on every nested schema"
        )
    return "a nested schema without `type` accepts any JSON value, which the subset does not support"


class SubsetWalker(FindingLog):
    """One walk of one schema for ``profile``, with two outputs. Implements ``ir.Ctx`` and ``ir.Walk``.

    * The verdict, :meth:`clean` (``clean(schema, 0)`` for the root): would the schema classify
      with no finding? Each selected row's ``subset_quick`` (else its ``quick``) with the node
      rules, the subschema count and depth limits; any doubt is False. Every value a quick test
      accepts has exact JSON types, so a clean verdict also proves the schema is JSON.
    * The findings and the tree, :meth:`root` of a walker from :meth:`findings`: every node
      through :meth:`sub`, each row's subset rule then its rule (findings in the spec's words,
      parts).

    With ``skim`` (findings only, for a schema whose verdict was not clean), :meth:`sub` first
    asks the verdict of each nested schema, on the walk's own count and budget; one it finds
    clean has no finding to word, so the walk does not descend into it and puts an empty node
    in its place. The findings, their order and the subschema count are those of the full walk;
    the tree is not (it is never used: a schema with findings has none).
    """

    rows: dict[str, Keyword]  # the findings' state (:meth:`findings`): the profile's rows
    depth: int
    skim: bool

    def __init__(self, profile: str) -> None:  # the verdict's state only: a listing builds one walker per tool
        self.profile = profile
        self.dialect = "2020-12"  # the subset's keywords mean the same in the four dialects it accepts
        self.tests = _WALK_TESTS[profile]
        self.nodes = 0
        self.values = ValueBudget()  # the enum/const values of the document (kw_any)

    @classmethod
    def findings(cls, profile: str, *, skim: bool = False) -> SubsetWalker:
        """A walker ready for :meth:`root` (findings, and the tree unless ``skim``)."""
        walker = cls(profile)
        FindingLog.__init__(walker)
        walker.rows = _ROWS[profile]
        walker.depth = 0
        walker.skim = skim
        return walker

    def clean(self, schema: Any, depth: int) -> bool:
        """True when ``schema`` at ``depth`` (0: the root) would classify with no finding."""
        self.nodes += 1
        if type(schema) is not dict or self.nodes > MAX_SCHEMA_NODES or depth > MAX_SCHEMA_DEPTH:
            return False
        tests = self.tests
        if "oneOf" in schema:
            if depth == 0:
                return False  # the root must be an object schema
            for key, value in schema.items():
                test = tests.get(key)
                if test is None or type(key) is not str or not test[2] or not test[1](value, schema, depth, self):
                    return False
            return True
        ntype = schema.get("type", _MISSING)
        if ntype is _MISSING:
            if depth:
                return False  # a nested schema without type
            ntype = "object"
        elif type(ntype) is not str or ntype not in SUBSET_TYPES or (depth == 0 and ntype != "object"):
            return False
        for key, value in schema.items():  # this loop is the walk's cost: one lookup and one call per key
            test = tests.get(key)
            if test is None or type(key) is not str:  # a str subclass finds its row too: not JSON
                return False
            types = test[0]
            if (types is not None and ntype not in types) or not test[1](value, schema, depth, self):
                return False
        return True

    # --- ir.Ctx ----------------------------------------------------------------------------

    def note(self, path: Path, message: str) -> None:  # pragma: no cover - no subset row notes anything
        """Only ``format`` notes, and no subset row has it: refuse rather than drop it (fail closed)."""
        self.finding(UNSUPPORTED, "schema", path, message)

    def defer(self, part: Any) -> None:  # pragma: no cover - no subset row refers (no `$ref`)
        """Only ``$ref`` defers, and no subset row has it: refuse (fail closed)."""
        self.finding(UNSUPPORTED, "$ref", part.path, "`$ref` is not supported by the guard's schema subset")

    def anchor(self, name: str, path: Path) -> None:  # pragma: no cover - no subset row declares anchors
        """Only ``$anchor``/``$id`` declare anchors, and no subset row has them: refuse (fail closed)."""
        self.finding(UNSUPPORTED, "$anchor", path, "anchors are not supported by the guard's schema subset")

    def sub(self, schema: Any, path: Path) -> XNode | None:
        """Classify the schema at ``path``; ``None`` when it cannot be enforced (its findings recorded)."""
        if type(schema) is bool and path and path[-1] == "additionalProperties" and holder(path) == path[-1]:
            return XNode(path, boolean=schema)  # the boolean form (decision 9): a value, not a subschema
        if self.skim and self.depth and self.nodes <= MAX_SCHEMA_NODES:
            nodes, left = self.nodes, self.values.left
            if self.clean(schema, self.depth):
                return XNode(path)  # counted as the full walk counts them, in the same order
            self.nodes, self.values.left = nodes, left  # walked again, by the rules
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
        depth = self.depth
        if depth > MAX_SCHEMA_DEPTH:
            self.finding(
                UNSUPPORTED,
                "schema",
                path,
                f"schemas nested more than {MAX_SCHEMA_DEPTH} levels deep are not supported",
            )
            return None
        if type(schema) is bool:
            self.finding(
                UNSUPPORTED, "schema", path, "boolean schemas (true/false in place of a schema) are not supported"
            )
            return None
        if type(schema) is not dict:
            self.finding(VALIDATION, holder(path), path, f"a schema must be an object, not {json_type_name(schema)}")
            return None
        self.depth = depth + 1
        try:
            if "oneOf" in schema:
                return self._one_of(schema, path, depth == 0)
            return self._typed(schema, path, depth == 0)
        finally:
            self.depth = depth

    def root(self, schema: Any) -> XNode | None:
        """Classify the whole schema; the root node (meaningful only when there is no finding)."""
        return self.sub(schema, ())

    # --- the walk ----------------------------------------------------------------------------

    def _apply(self, row: Keyword, value: Any, schema: dict[str, Any], kpath: Path) -> Part | list[Part] | None:
        """The row's subset rule, then (when it lets the value through) the row's rule."""
        subset = row.subset
        if subset is not None and not subset(self, value, schema, kpath):
            return None
        return row.rule(self, value, schema, kpath)

    def _keyword(self, key: str, value: Any, schema: dict[str, Any], path: Path) -> Part | list[Part] | None:
        """A key of the node: its row's rules, or the finding for a key the profile has no row for."""
        kpath = (*path, key)
        row = self.rows.get(key)
        if row is None:
            known = KEYWORDS.get(key)
            if known is not None and known.profiles:
                self.finding(UNSUPPORTED, key, kpath, f"`{key}` is not accepted in the {self.profile} profile")
            else:
                self.finding(UNSUPPORTED, key, kpath, f"`{key}` is not supported by the guard's schema subset")
            return None
        return self._apply(row, value, schema, kpath)

    def _one_of(self, schema: dict[str, Any], path: Path, root: bool) -> XNode | None:
        """A ``oneOf`` node: only ``description`` and annotations beside it (decision 3)."""
        before = len(self.issues)
        if root:
            self.finding(UNSUPPORTED, "oneOf", (*path, "oneOf"), "the root must be an object schema, not a oneOf")
        part: Any = None
        for key, value in schema.items():
            row = self.rows.get(key)
            if key != "oneOf" and row is not None and not row.in_one_of:
                kpath = (*path, key)
                self.finding(
                    UNSUPPORTED,
                    key,
                    kpath,
                    f"`{key}` beside `oneOf` is not supported (a oneOf node carries only description and annotations)",
                )
                self._apply(row, value, schema, kpath)  # still report what lies below
                continue
            result = self._keyword(key, value, schema, path)
            if key == "oneOf":
                part = result
        if len(self.issues) != before or not isinstance(part, Part):
            return None
        node = XNode(path, parts=[part])
        part.bind(node)
        return node

    def _typed(self, schema: dict[str, Any], path: Path, root: bool) -> XNode | None:
        """A node that is not ``oneOf``: it has a ``type`` (the root may omit it; decisions 1, 2)."""
        before = len(self.issues)
        ntype: str | None = None
        type_path: Path = path
        if "type" in schema:
            type_path = (*path, "type")
            value = schema["type"]
            if type(value) is str and value in SUBSET_TYPES:
                ntype = value  # what the row's rules accept without a word (the common case, without the calls)
            else:
                found = self._keyword("type", value, schema, path)
                ntype = next(iter(found.names)) if type(found) is TypePart else None
            if ntype is not None and root and ntype != "object":
                self.finding(UNSUPPORTED, "type", type_path, "the root must be an object schema")
                ntype = None
        elif root:
            ntype = "object"
        else:
            self.finding(UNSUPPORTED, "type", path, _untyped(schema))

        parts: list[Part] = []
        rows = self.rows
        for key, value in schema.items():
            if key == "type":
                continue
            row = rows.get(key)
            if row is None:
                self._keyword(key, value, schema, path)  # words the finding
                continue
            kpath = (*path, key)
            types = row.types
            if types is not None and ntype is not None and ntype not in types:
                allowed = " and ".join(sorted(types))
                self.finding(UNSUPPORTED, key, kpath, f"`{key}` applies only to {allowed} schemas here, not {ntype}")
            result = self._apply(row, value, schema, kpath)
            if result is None:
                continue
            if isinstance(result, list):
                parts.extend(result)
            else:
                parts.append(result)

        if len(self.issues) != before or ntype is None:
            return None
        for finisher in FINISHERS:
            parts = finisher(parts)
        node = XNode(path, types=frozenset({ntype}), type_path=type_path, parts=parts)
        for part in parts:
            part.bind(node)
        return node


def _walk_tests(rows: dict[str, Keyword]) -> dict[str, tuple[frozenset[str] | None, Any, bool]]:
    """Each selected row as the verdict walk reads it: ``(types, quick test, in_one_of)``; ``type``'s
    test is the walk's own (decision 2), and a row without a quick test is never clean."""
    tests: dict[str, tuple[frozenset[str] | None, Any, bool]] = {}
    for name, row in rows.items():
        quick = _type_tested if name == "type" else (row.subset_quick or row.quick or _never)
        tests[name] = (row.types, quick, row.in_one_of)
    return tests


def _type_tested(value: Any, schema: dict[str, Any], depth: int, walk: Any) -> bool:
    return True  # the walk tested ``type`` before the keywords (SubsetQuick.clean)


def _never(value: Any, schema: dict[str, Any], depth: int, walk: Any) -> bool:
    return False  # pragma: no cover - every selected row has a quick test


_WALK_TESTS: Final = {profile: _walk_tests(rows) for profile, rows in _ROWS.items()}


SubsetQuick = SubsetWalker
"""The verdict's former name (``SubsetQuick(profile).clean(schema, 0)``), kept for its callers."""

SubsetClassifier = SubsetWalker.findings
"""The findings' and tree's former name (``SubsetClassifier(profile, skim=...)``), kept for its callers."""
