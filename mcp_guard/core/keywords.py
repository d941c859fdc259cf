"""The keyword table: one small function per keyword, shared by the classifier and the validator.

Each entry of :data:`KEYWORDS` says in which profiles the keyword is supported, which node
types it may stand with (spec decision 4), and which function handles it. The function
checks the keyword's own value (a malformed value is a ``validation`` finding, decision 8)
and returns what the validator needs to enforce it: a :class:`Part`. A keyword that is not
in the table, or not in the table for the profile, is ``unsupported_capability``
(decision 9). Because the classifier only accepts a keyword by calling its function, and the
function is what produces the enforcing part, a schema that classifies cleanly can never
meet an unknown keyword at call time.

This module does not walk schemas (``compiler`` does) and never sees arguments except
through the closures it builds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .budget import MAX_ENUM_CHOICES, MAX_SCHEMA_DEPTH, MAX_WORK
from .json_values import TooLarge, canonical, json_type_name, max_depth, pointer
from .report import UNSUPPORTED, VALIDATION

if TYPE_CHECKING:
    from .ir import Node

__all__ = [
    "ANNOTATIONS",
    "KEYWORDS",
    "PROFILES",
    "PROFILE_KEYWORDS",
    "SCHEMA_DIALECTS",
    "TYPE_NAMES",
    "TYPE_PARTS",
    "Additional",
    "Check",
    "Emitter",
    "Enum",
    "Items",
    "Keyword",
    "Minimum",
    "OneOf",
    "Part",
    "Properties",
    "QuickFn",
    "Required",
    "Site",
    "TypeName",
    "Walk",
    "issue_code",
    "where",
]

PROFILES = frozenset({"standard", "strict"})
"""The profiles whose keywords this table holds (spec, "Two profiles"); every valid name is ``profiles.PROFILES``."""

SUPPORTED_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
"""``type`` values the subset enforces (spec table, ``type``)."""

TYPE_NAMES = SUPPORTED_TYPES | {"null"}
"""Every JSON Schema type name; ``null`` is a real type the subset does not support."""

ANNOTATIONS = frozenset({"title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"})
"""JSON Schema's meta-data annotations that ``standard`` accepts wherever a schema stands."""

SCHEMA_DIALECTS = frozenset(
    f"{scheme}://json-schema.org/{path}{hash_}"
    for scheme in ("http", "https")
    for path in ("draft-06/schema", "draft-07/schema", "draft/2019-09/schema", "draft/2020-12/schema")
    for hash_ in ("", "#")
)
"""Root ``$schema`` values ``standard`` accepts (spec, "Two profiles")."""


class Site(Protocol):
    """What a keyword function may ask of the classifier (implemented in ``compiler``)."""

    profile: str

    def finding(self, kind: str, keyword: str, path: tuple[str | int, ...], message: str) -> None:
        """Record a finding at ``path`` (a schema path to the keyword or node)."""

    def subschema(self, schema: Any, path: tuple[str | int, ...], holder: str, depth: int) -> Node | None:
        """Classify and compile a nested schema; ``None`` when it cannot be enforced."""


# --- parts: what a keyword contributes to its node's validator -------------------------------


class Part:
    """Base of everything a keyword function returns for the validator."""

    __slots__ = ()


@dataclass(slots=True)  # not frozen: built per keyword at list time, frozen init costs
class TypeName(Part):
    """``type``: the node's JSON type, one of :data:`SUPPORTED_TYPES`."""

    name: str


TYPE_PARTS: dict[str, TypeName] = {name: TypeName(name) for name in SUPPORTED_TYPES}
"""One shared ``type`` part per type name (parts are never mutated); exactly the ``type`` values
:func:`kw_type` accepts, so the classifier may look a string up here before calling it."""


class Emitter(Protocol):
    """What a part's code emitters may ask of the code generator (``codegen``)."""

    def const(self, value: Any) -> str:
        """Bind ``value`` in the generated module's namespace; return the name to use in code.

        Schema values (names, bounds, choices, pointers, messages) reach generated code only
        this way, never spliced into source text.
        """


class Check(Part):
    """A constraint on a value already known to be of its node's type, enforced by generated code.

    ``valid_code(e, var)`` gives statements that ``return False`` when the value held in
    the local variable ``var`` breaks the constraint. ``collect_code(e, var, ptr)`` gives
    statements that append one :class:`Issue` to the local list ``out`` when it does;
    ``ptr`` is an expression for the value's JSON Pointer in the arguments.
    """

    __slots__ = ()

    def valid_code(self, e: Emitter, var: str) -> list[str]:
        """Statements (no indentation) that ``return False`` when ``var`` breaks the constraint."""
        raise NotImplementedError

    def collect_code(self, e: Emitter, var: str, ptr: str) -> list[str]:
        """Statements that append an ``Issue`` to ``out`` when ``var`` (pointer ``ptr``) breaks it."""
        raise NotImplementedError


def issue_code(e: Emitter, keyword: str, schema_path: str, ptr: str, message: str) -> str:
    """One generated statement appending a ``validation`` :class:`Issue` to ``out``.

    ``ptr`` and ``message`` are expressions; the issue is built with ``tuple.__new__``
    (bound as ``new``), which skips the named tuple's Python-level constructor on the
    per-call path.
    """
    return (
        f"out.append(new(Issue, ({e.const(VALIDATION)}, {e.const(keyword)}, {e.const(schema_path)}, {ptr}, {message})))"
    )


def _append(e: Emitter, keyword: str, schema_path: str, ptr: str, message_tail: str) -> str:
    """An issue whose message is ``where(ptr) + message_tail``."""
    return issue_code(e, keyword, schema_path, ptr, f"where({ptr}) + {e.const(message_tail)}")


@dataclass(slots=True)  # not frozen: built per keyword at list time, frozen init costs
class Minimum(Check):
    """``minimum``: ``value >= bound`` (Python compares ints and floats exactly)."""

    bound: int | float
    path: tuple[str | int, ...]

    @property
    def schema_path(self) -> str:
        """The JSON Pointer of the keyword in the schema (built when code is generated)."""
        return pointer(self.path)

    def valid_code(self, e: Emitter, var: str) -> list[str]:
        """See :meth:`Check.valid_code`."""
        return [f"if not {var} >= {e.const(self.bound)}: return False"]

    def collect_code(self, e: Emitter, var: str, ptr: str) -> list[str]:
        """See :meth:`Check.collect_code`."""
        tail = f" must be ≥ {_show_choice(self.bound)} (minimum)"
        return [
            f"if not {var} >= {e.const(self.bound)}:",
            "    " + _append(e, "minimum", self.schema_path, ptr, tail),
        ]


@dataclass(slots=True)  # not frozen: built per keyword at list time, frozen init costs
class Enum(Check):
    """``enum``: the value equals one of the choices (decisions 6, 7).

    Attributes:
        choices: the schema's list, as given.
        keys: :func:`json_values.canonical` keys of the choices (``depth`` levels deep); empty
            when ``strings`` is set.
        strings: the choices when all are strings (a plain set lookup then), else None.
    """

    choices: tuple[Any, ...]
    keys: frozenset[Any]
    depth: int
    strings: frozenset[str] | None
    path: tuple[str | int, ...]

    @property
    def schema_path(self) -> str:
        """The JSON Pointer of the keyword in the schema (built when code is generated)."""
        return pointer(self.path)

    def _test(self, e: Emitter, var: str) -> str:
        if self.strings is not None:
            return f"(type({var}) is str and {var} in {e.const(self.strings)})"
        return f"(canonical_once({var}, {e.const(self.depth)}, w) in {e.const(self.keys)})"

    def valid_code(self, e: Emitter, var: str) -> list[str]:
        """See :meth:`Check.valid_code`."""
        return [f"if not {self._test(e, var)}: return False"]

    def collect_code(self, e: Emitter, var: str, ptr: str) -> list[str]:
        """See :meth:`Check.collect_code`."""
        if self.choices:
            shown = ", ".join(_show_choice(c) for c in self.choices[:_ENUM_SHOWN])
            tail = f" must be one of: {shown}{', …' if len(self.choices) > _ENUM_SHOWN else ''} (enum)"
        else:
            tail = " allows no value (empty enum)"
        return [f"if not {self._test(e, var)}:", "    " + _append(e, "enum", self.schema_path, ptr, tail)]


@dataclass(slots=True)  # not frozen: built per keyword at list time, frozen init costs
class Properties(Part):
    """``properties``: the compiled schema of each declared property."""

    nodes: dict[str, Node]


@dataclass(slots=True)  # not frozen: built per keyword at list time, frozen init costs
class Required(Part):
    """``required``: names that must be present."""

    names: tuple[str, ...]
    path: tuple[str | int, ...]

    @property
    def schema_path(self) -> str:
        """The JSON Pointer of the keyword in the schema (built when code is generated)."""
        return pointer(self.path)


@dataclass(slots=True)  # not frozen: built per keyword at list time, frozen init costs
class Additional(Part):
    """``additionalProperties`` (boolean form): whether undeclared properties are allowed."""

    allowed: bool
    path: tuple[str | int, ...]

    @property
    def schema_path(self) -> str:
        """The JSON Pointer of the keyword in the schema (built when code is generated)."""
        return pointer(self.path)


@dataclass(slots=True)  # not frozen: built per keyword at list time, frozen init costs
class Items(Part):
    """``items`` (single-schema form): the compiled schema of every element."""

    node: Node


@dataclass(slots=True)  # not frozen: built per keyword at list time, frozen init costs
class OneOf(Part):
    """``oneOf``: the compiled branches."""

    branches: tuple[Node, ...]
    path: tuple[str | int, ...]

    @property
    def schema_path(self) -> str:
        """The JSON Pointer of the keyword in the schema (built when code is generated)."""
        return pointer(self.path)


KeywordFn = Callable[[Site, Any, dict[str, Any], tuple[str | int, ...], int], Part | None]
"""``fn(site, value, node, path_to_keyword, depth) -> Part | None``."""


class Walk(Protocol):
    """What a keyword's quick test may ask of the verdict-only walk (implemented in ``compiler``)."""

    def clean(self, schema: Any, depth: int) -> bool:
        """True when the nested ``schema`` (at ``depth``) is inside the subset with no finding."""


QuickFn = Callable[[Any, int, Walk], bool]
"""``quick(value, depth_of_node, walk) -> bool``: True only when ``fn`` would record no finding."""


@dataclass(slots=True)  # not frozen: built per keyword at list time, frozen init costs
class Keyword:
    """One row of the table.

    Attributes:
        name: the keyword as it appears in a schema.
        fn: checks the value and returns the enforcing part (``None`` for annotations, or
            when the value is malformed).
        types: node types it may stand with (decision 4); ``None`` for any type.
        profiles: profiles in which it is supported.
        in_one_of: whether it may stand beside ``oneOf`` (decision 3).
        accepts: for an annotation, the Python types of a value ``fn`` accepts with no finding
            and no part (``fn`` itself is the rule; this lets the classifier skip the call on
            the common case); ``None`` when ``fn`` must always run.
        opaque: the value holds JSON that ``fn`` does not type-check element by element
            (``enum`` choices, ``default``, ``examples``); the classifier checks it is JSON
            before ``fn`` runs. Every other accepted value is type-checked exactly by its ``fn``,
            which is what lets a schema that classifies cleanly skip a separate JSON walk.
        quick: the keyword's test for the verdict-only walk that classifies a listing
            (``compiler.compile(..., defer=True)``): True only when ``fn`` would accept the
            value with no finding, nested schemas included (through ``walk``); False sends the
            whole schema to the full classifier, which words the findings. ``None`` for rows
            whose ``accepts`` decides (annotations), and for ``type``, which the walk reads
            from :data:`TYPE_PARTS`. The node's ``types`` rule (decision 4) is the walk's.
            A property test holds each ``quick`` to its ``fn``.
    """

    name: str
    fn: KeywordFn
    types: frozenset[str] | None
    profiles: frozenset[str]
    in_one_of: bool = False
    accepts: frozenset[type] | None = None
    opaque: bool = False
    quick: QuickFn | None = None


def where(instance_pointer: str) -> str:
    """How a message names an argument position: ```/a/0``` or "the arguments object"."""
    return f"`{instance_pointer}`" if instance_pointer else "the arguments object"


# --- supported keywords ---------------------------------------------------------------------


def kw_type(site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int) -> Part | None:
    """``type``: one string naming a supported JSON type (spec table; decisions 8, 9)."""
    if type(value) is list:
        site.finding(UNSUPPORTED, "type", path, "type lists (a value of several types) are not supported")
    elif type(value) is not str:
        site.finding(VALIDATION, "type", path, f"`type` must be a string, not {json_type_name(value)}")
    elif value == "null":
        site.finding(UNSUPPORTED, "type", path, 'type "null" is not supported')
    elif value not in SUPPORTED_TYPES:
        site.finding(VALIDATION, "type", path, "`type` does not name a JSON Schema type")
    else:
        return TYPE_PARTS[value]
    return None


def kw_properties(site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int) -> Part | None:
    """``properties``: an object of property name → schema, each checked recursively (decision 10)."""
    if type(value) is not dict:
        site.finding(VALIDATION, "properties", path, "`properties` must be an object")
        return None
    nodes: dict[str, Node] = {}
    complete = True
    subschema = site.subschema
    depth += 1
    for name, sub in value.items():
        if type(name) is not str:
            site.finding(VALIDATION, "properties", path, "property names must be strings")
            return None
        compiled = subschema(sub, (*path, name), "properties", depth)
        if compiled is None:
            complete = False
        else:
            nodes[name] = compiled
    return Properties(nodes) if complete else None


def kw_required(site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int) -> Part | None:
    """``required``: a list of unique strings; may name undeclared properties (spec table)."""
    if type(value) is not list or any(type(n) is not str for n in value):
        site.finding(VALIDATION, "required", path, "`required` must be a list of strings")
        return None
    if len(set(value)) != len(value):
        site.finding(VALIDATION, "required", path, "`required` must not repeat a name")
        return None
    return Required(tuple(value), path)


def kw_additional_properties(
    site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int
) -> Part | None:
    """``additionalProperties``: boolean only; a schema value is unsupported (decision 9)."""
    if type(value) is bool:
        return Additional(value, path)
    if type(value) is dict:
        site.finding(UNSUPPORTED, "additionalProperties", path, "schema-valued additionalProperties is not supported")
    else:
        site.finding(VALIDATION, "additionalProperties", path, "`additionalProperties` must be a boolean")
    return None


def kw_description(
    site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int
) -> Part | None:
    """``description``: an annotation that must be a string (spec table; decision 8)."""
    if type(value) is not str:
        site.finding(VALIDATION, "description", path, "`description` must be a string")
    return None


_ENUM_SHOWN = 12


def kw_enum(site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int) -> Part | None:
    """``enum``: a list of JSON values; equality per decisions 6 and 7; empty rejects all."""
    if type(value) is not list:
        site.finding(VALIDATION, "enum", path, "`enum` must be a list")
        return None
    if len(value) > MAX_ENUM_CHOICES:
        site.finding(UNSUPPORTED, "enum", path, f"`enum` has more than {MAX_ENUM_CHOICES} choices, the guard's budget")
        return None
    if all(type(c) is str for c in value):  # the common case: a plain set lookup, no canonical keys
        return Enum(tuple(value), frozenset(), 0, frozenset(value), path)
    limit = max((max_depth(c, MAX_SCHEMA_DEPTH) for c in value), default=0)
    if limit > MAX_SCHEMA_DEPTH:
        site.finding(UNSUPPORTED, "enum", path, f"`enum` choices nest deeper than {MAX_SCHEMA_DEPTH} levels")
        return None
    try:
        keys = frozenset(canonical(c, limit, MAX_WORK) for c in value)
    except TooLarge:
        site.finding(
            UNSUPPORTED,
            "enum",
            path,
            f"`enum` choices stand for more than {MAX_WORK:,} values counted as trees (shared sub-objects), "
            "the guard's budget",
        )
        return None
    return Enum(tuple(value), keys, limit, None, path)


def _show_choice(choice: Any) -> str:
    """A schema's enum choice or bound for a message (schema values, never argument values).

    A value Python will not write as text (an integer of more than 4,300 digits) is named,
    not shown: building a message never raises.
    """
    try:
        text = json.dumps(choice, ensure_ascii=False, allow_nan=True)
    except ValueError:
        return "(a number too long to show)"
    return text if len(text) <= 40 else text[:37] + "…"


def kw_minimum(site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int) -> Part | None:
    """``minimum``: an inclusive lower bound; a finite number, never a boolean (decisions 6, 8)."""
    t = type(value)
    if t is not int and not (t is float and math.isfinite(value)):
        site.finding(VALIDATION, "minimum", path, "`minimum` must be a number")
        return None
    return Minimum(value, path)


def kw_items(site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int) -> Part | None:
    """``items``: one schema for every element; the tuple (list) form is unsupported (decision 9)."""
    if type(value) is list:
        site.finding(UNSUPPORTED, "items", path, "tuple-form `items` (a list of schemas) is not supported")
        return None
    compiled = site.subschema(value, path, "items", depth + 1)
    return Items(compiled) if compiled is not None else None


def kw_one_of(site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int) -> Part | None:
    """``oneOf``: a non-empty list of full schemas; exactly one must match (decision 3)."""
    if type(value) is not list or not value:
        site.finding(VALIDATION, "oneOf", path, "`oneOf` must be a non-empty list of schemas")
        return None
    branches: list[Node] = []
    complete = True
    for index, branch in enumerate(value):
        compiled = site.subschema(branch, (*path, index), "oneOf", depth + 1)
        if compiled is None:
            complete = False
        else:
            branches.append(compiled)
    return OneOf(tuple(branches), path) if complete else None


# --- quick tests (verdict only; see ``Keyword.quick``) --------------------------------------


def quick_properties(value: Any, depth: int, walk: Walk) -> bool:
    """``properties`` as :func:`kw_properties` accepts it: string names, clean subschemas."""
    if type(value) is not dict:
        return False
    depth += 1
    for name, sub in value.items():
        if type(name) is not str or not walk.clean(sub, depth):
            return False
    return True


def quick_required(value: Any, depth: int, walk: Walk) -> bool:
    """``required`` as :func:`kw_required` accepts it: a list of unique strings."""
    if type(value) is not list:
        return False
    for name in value:
        if type(name) is not str:
            return False
    return len(set(value)) == len(value)


def quick_additional_properties(value: Any, depth: int, walk: Walk) -> bool:
    """``additionalProperties`` as :func:`kw_additional_properties` accepts it: a boolean."""
    return type(value) is bool


_ENUM_SCALARS: frozenset[type] = frozenset({str, int, bool, type(None)})


def quick_enum(value: Any, depth: int, walk: Walk) -> bool:
    """``enum`` as :func:`kw_enum` accepts it, for scalar choices (containers: the full path)."""
    if type(value) is not list or len(value) > MAX_ENUM_CHOICES:
        return False
    for choice in value:
        t = type(choice)
        if t not in _ENUM_SCALARS and not (t is float and math.isfinite(choice)):
            return False
    return True


def quick_minimum(value: Any, depth: int, walk: Walk) -> bool:
    """``minimum`` as :func:`kw_minimum` accepts it: a finite number, not a boolean."""
    t = type(value)
    return t is int or (t is float and math.isfinite(value))


def quick_items(value: Any, depth: int, walk: Walk) -> bool:
    """``items`` as :func:`kw_items` accepts it: one clean schema."""
    return type(value) is not list and walk.clean(value, depth + 1)


def quick_one_of(value: Any, depth: int, walk: Walk) -> bool:
    """``oneOf`` as :func:`kw_one_of` accepts it: a non-empty list of clean schemas."""
    if type(value) is not list or not value:
        return False
    depth += 1
    for branch in value:
        if not walk.clean(branch, depth):
            return False
    return True


def quick_schema(value: Any, depth: int, walk: Walk) -> bool:
    """``$schema`` as :func:`kw_schema` accepts it: at the root, a compatible dialect."""
    return depth == 0 and type(value) is str and value in SCHEMA_DIALECTS


# --- annotations (standard only) ------------------------------------------------------------


def _annotation(name: str, json_type: type | None, label: str) -> KeywordFn:
    def fn(site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int) -> Part | None:
        if json_type is not None and type(value) is not json_type:
            site.finding(VALIDATION, name, path, f"`{name}` must be {label}")
        return None

    fn.__name__ = f"kw_{name.lstrip('$')}"
    fn.__doc__ = f"``{name}``: an annotation ({label}); constrains nothing (spec, standard profile)."
    return fn


_JSON_TYPES: frozenset[type] = frozenset({str, int, float, bool, type(None), dict, list})


def _annotation_row(name: str, json_type: type | None, label: str) -> Keyword:
    """A ``standard``-only annotation row: ``fn`` and ``accepts`` derive from the same ``json_type``."""
    accepts = _JSON_TYPES if json_type is None else frozenset({json_type})
    return Keyword(
        name,
        _annotation(name, json_type, label),
        None,
        _STANDARD,
        in_one_of=True,
        accepts=accepts,
        opaque=json_type is None or json_type is list,
    )


def kw_schema(site: Site, value: Any, node: dict[str, Any], path: tuple[str | int, ...], depth: int) -> Part | None:
    """``$schema``: only at the root, only a compatible dialect (spec, "Two profiles")."""
    if len(path) != 1:
        site.finding(UNSUPPORTED, "$schema", path, "`$schema` is supported only at the root")
    elif value not in SCHEMA_DIALECTS if type(value) is str else True:
        site.finding(
            UNSUPPORTED,
            "$schema",
            path,
            "`$schema` names a dialect other than draft-06, draft-07, 2019-09 or 2020-12",
        )
    return None


_BOTH = PROFILES
_STANDARD = frozenset({"standard"})
_OBJECT = frozenset({"object"})
_NUMERIC = frozenset({"integer", "number"})

KEYWORDS: dict[str, Keyword] = {
    k.name: k
    for k in (
        Keyword("type", kw_type, None, _BOTH),
        Keyword("properties", kw_properties, _OBJECT, _BOTH, quick=quick_properties),
        Keyword("required", kw_required, _OBJECT, _BOTH, quick=quick_required),
        Keyword("additionalProperties", kw_additional_properties, _OBJECT, _BOTH, quick=quick_additional_properties),
        Keyword("description", kw_description, None, _BOTH, in_one_of=True, accepts=frozenset({str})),
        Keyword("enum", kw_enum, None, _BOTH, opaque=True, quick=quick_enum),
        Keyword("minimum", kw_minimum, _NUMERIC, _BOTH, quick=quick_minimum),
        Keyword("items", kw_items, frozenset({"array"}), _BOTH, quick=quick_items),
        Keyword("oneOf", kw_one_of, None, _BOTH, in_one_of=True, quick=quick_one_of),
        _annotation_row("title", str, "a string"),
        _annotation_row("default", None, "any JSON value"),
        _annotation_row("examples", list, "an array"),
        _annotation_row("$comment", str, "a string"),
        _annotation_row("deprecated", bool, "a boolean"),
        _annotation_row("readOnly", bool, "a boolean"),
        _annotation_row("writeOnly", bool, "a boolean"),
        Keyword("$schema", kw_schema, None, _STANDARD, in_one_of=True, quick=quick_schema),
    )
}
"""The subset (spec, "Supported keywords" and "Two profiles"). Everything else is unsupported."""

PROFILE_KEYWORDS: dict[str, dict[str, Keyword]] = {
    profile: {name: k for name, k in KEYWORDS.items() if profile in k.profiles} for profile in PROFILES
}
"""The rows of :data:`KEYWORDS` each profile accepts (a view of the one table, for one lookup per key)."""
