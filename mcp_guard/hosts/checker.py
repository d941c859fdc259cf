"""The checker of a host profile: does the host accept this parameters schema and this name as they are?

:func:`check_schema` walks a JSON Schema (an MCP tool's ``inputSchema``, or the lowering's output)
and returns one :class:`HostIssue` per rule of the host's table (``hosts.tables``) that it breaks,
with a JSON Pointer (RFC 6901) to the node or keyword; ``()`` when the host accepts it unchanged.
:func:`check_name` does the same for a tool name. Values are schema text, never arguments.

Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, NamedTuple

from ..core.json_values import pointer
from .tables import HostProfile

__all__ = [
    "KEYWORD_BOOLEANS",
    "MAX_NAMES_KEPT",
    "SCHEMA_LISTS",
    "SCHEMA_MAPS",
    "SCHEMA_VALUES",
    "HostIssue",
    "check_name",
    "check_schema",
    "children",
    "fitting_names",
    "name_fits",
]


class HostIssue(NamedTuple):
    """A rule of a host's table that a schema or a name breaks.

    Attributes:
        rule: a short stable code (``keyword``, ``type-list``, ``open-object``, ``not-required``,
            ``undeclared-required``, ``untyped``, ``items``, ``enum``, ``format``, ``empty-object``, ``property-name``,
            ``root``, ``boolean-schema``, ``ref``, ``limit``, ``name``).
        keyword: the keyword concerned (the unknown key as written; ``""`` for a whole node).
        pointer: JSON Pointer into the schema (``"/name"`` for a tool name).
        message: one English sentence (schema text only).
    """

    rule: str
    keyword: str
    pointer: str
    message: str

    def to_json(self) -> dict[str, str]:
        """``{"rule", "keyword", "pointer", "message"}``."""
        return self._asdict()


SCHEMA_VALUES: Final = frozenset(
    {
        "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
        "unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema",
    }
)  # fmt: skip
"""Keywords whose value is one schema (``items`` may also be a list: draft-07 tuples)."""
SCHEMA_LISTS: Final = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
"""Keywords whose value is a list of schemas."""
SCHEMA_MAPS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
"""Keywords whose value maps names to schemas (``dependencies`` holds schemas or name lists)."""

KEYWORD_BOOLEANS: Final = frozenset(
    {"additionalProperties", "unevaluatedProperties", "unevaluatedItems", "additionalItems", "items"}
)
"""Keywords whose boolean value every host reads as the keyword's own form, not as a boolean schema."""

_ROOT_COMBINATORS: Final = ("anyOf", "oneOf", "allOf", "not", "enum")


def children(node: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every subschema of ``node`` with its path below it (``("properties", "a")``, ``("anyOf", 0)``)."""
    for key, value in node.items():
        if key in SCHEMA_VALUES and type(value) in (dict, bool):
            yield (key,), value
        elif (key in SCHEMA_LISTS or key == "items") and type(value) is list:
            for i, sub in enumerate(value):
                yield (key, i), sub
        elif (key in SCHEMA_MAPS or key == "dependencies") and type(value) is dict:
            for name, sub in value.items():
                if type(sub) in (dict, bool):
                    yield (key, name), sub


def check_name(name: str, host: HostProfile) -> HostIssue | None:
    """The issue with ``name`` as a tool name for ``host``, or None when it is accepted."""
    if host.accepts_name(name):
        return None
    return HostIssue("name", "name", "/name", f"the tool name does not match {host.name_rule} ({host.name})")


MAX_NAMES_KEPT: Final = 65_536
"""Property names kept per host profile by :func:`fitting_names` (past it, names are matched each time)."""

_NAMES: dict[int, tuple[HostProfile, set[str]]] = {}


def fitting_names(host: HostProfile) -> set[str]:
    """Property names found to match ``host.property_names``, kept per host profile (by identity): a name
    repeats across a listing's schemas (the corpus: 4,842 property names, 1,413 distinct), and matching the
    pattern was a third of a Gemini lowering's time (the pass and this checker match every name). A caller
    adds a name only once the pattern matched it, while the set holds fewer than :data:`MAX_NAMES_KEPT`;
    the set only grows (a name in it matches the pattern for good: profiles are immutable)."""
    found = _NAMES.get(id(host))
    if found is None or found[0] is not host:
        found = _NAMES[id(host)] = (host, set())
    return found[1]


def name_fits(host: HostProfile, fitting: set[str], name: str) -> bool:
    """Whether ``name`` matches ``host.property_names`` (not None), ``fitting`` (:func:`fitting_names`) first."""
    if name in fitting:
        return True
    assert host.property_names is not None
    if host.property_names.fullmatch(name) is None:
        return False
    if len(fitting) < MAX_NAMES_KEPT:
        fitting.add(name)
    return True


class _Refused(Exception):
    """Internal: the quick walk's first finding (:func:`accepts`)."""


_SUBSCHEMAS: Final = SCHEMA_VALUES | SCHEMA_LISTS | SCHEMA_MAPS | {"dependencies"}


_HostSets = tuple[HostProfile, frozenset[str], frozenset[str], dict[str, frozenset[str]]]
_PER_HOST: dict[int, _HostSets] = {}
"""Per host profile (by identity): the keys a node may hold, those that say a node's type, and per
scalar type the keys of a leaf in which no rule can find anything (:func:`_host_sets`)."""

_STR: Final = frozenset({str})
_UNION: Final = frozenset({"anyOf", "description"})
_RULED: Final = _SUBSCHEMAS | {"type", "format", "enum", "properties", "required", "$ref"}
"""Keys a rule of :meth:`_Walk.node` looks at beyond being allowed."""


def _host_sets(host: HostProfile) -> _HostSets:
    found = _PER_HOST.get(id(host))
    if found is None or found[0] is not host:
        said = ("type", "anyOf") if host.string_enums else ("type", "anyOf", "$ref", "enum", "const")
        allowed = host.keywords | {"description"}
        scalars = ("string", "integer", "number", "boolean", *(("null",) if host.null_type else ()))
        leaf = frozenset({"type"} | (allowed - _RULED)) if "type" in allowed else frozenset()
        leaves = {t: leaf for t in scalars} if leaf else {}
        found = _PER_HOST[id(host)] = (host, allowed, frozenset(said), leaves)
    return found


class _Walk:
    def __init__(self, host: HostProfile, *, quick: bool = False) -> None:
        self.host = host
        self.quick = quick
        _, self.allowed, self.typing, self.leaves = _host_sets(host)
        self.union = "anyOf" in self.allowed
        self.issues: list[HostIssue] = []
        self.properties = 0
        self.enum_values = 0

    def add(self, rule: str, keyword: str, path: tuple[str | int, ...], message: str) -> None:
        if self.quick:
            raise _Refused
        self.issues.append(HostIssue(rule, keyword, pointer(path), message))

    def root(self, schema: Any) -> None:
        host = self.host
        if type(schema) is not dict:
            self.add("root", "", (), f"{host.name} needs the parameters schema to be an object schema")
            return
        if schema.get("type") != "object":
            self.add("root", "type", ("type",), f'{host.name} needs `type: "object"` at the root')
        if not host.root_combinators:
            for key in _ROOT_COMBINATORS:
                if key in schema:
                    self.add("root", key, (key,), f"{host.name} refuses `{key}` at the root of the parameters")
        self.node(schema, (), 0, root=True)
        limits = host.limits
        if limits is not None:
            if self.properties > limits.properties:
                self.add("limit", "properties", (), f"more than {limits.properties} properties in all ({host.name})")
            if self.enum_values > limits.enum_values:
                self.add("limit", "enum", (), f"more than {limits.enum_values} enum values in all ({host.name})")

    def leaf(self, node: Any) -> bool:
        """Whether :meth:`node` would return at once on ``node``, finding and counting nothing (a scalar
        node of allowed keys that no rule looks at): the walk skips the call."""
        if type(node) is not dict:
            return False
        t = node.get("type")
        if type(t) is not str:
            return False
        keys = self.leaves.get(t)
        return keys is not None and keys.issuperset(node)

    def node(self, node: Any, path: tuple[str | int, ...], depth: int, *, root: bool = False) -> None:
        host = self.host
        if type(node) is not dict:
            if path and path[-1] in KEYWORD_BOOLEANS:
                return  # `additionalProperties: false` and the like: the keyword's own boolean form
            self.add(
                "boolean-schema", "", path, f"a boolean schema (`{str(node).lower()}`) is not accepted by {host.name}"
            )
            return
        t = node.get("type")
        if type(t) is str:
            leaf = self.leaves.get(t)
            if leaf is not None and leaf.issuperset(node):
                return  # a scalar node of allowed keys that no rule below looks at: nothing to find
        elif t is None and self.union and _UNION.issuperset(node) and type(node.get("anyOf")) is list:
            leaves = self.leaves
            for i, sub in enumerate(node["anyOf"]):  # a union and its text: only its branches to look at
                if type(sub) is dict:
                    t = sub.get("type")  # (self.leaf, inline: OpenAI strict's optional ones are unions with null)
                    if type(t) is str and (keys := leaves.get(t)) is not None and keys.issuperset(sub):
                        continue
                self.node(sub, (*path, "anyOf", i), depth)
            return
        if not self.allowed.issuperset(node):
            for key in node:
                if key not in self.allowed:
                    self.add("keyword", key, (*path, key), f"`{key}` is not accepted by {host.name}")
        if type(t) is str:
            types = [t]
        elif type(t) is list:
            types = [x for x in t if type(x) is str]
            if not host.type_lists:
                self.add("type-list", "type", (*path, "type"), f"a list of types is not accepted by {host.name}")
        else:
            types = []
        if "null" in types and not host.null_type:
            self.add("type-list", "type", (*path, "type"), f"the `null` type is not accepted by {host.name}")
        if host.typed_nodes and not root and self.typing.isdisjoint(node):
            self.add("untyped", "", path, f"{host.name} needs every schema to say its type")
        is_object = "object" in types
        if host.closed_objects and (is_object or "properties" in node):
            if node.get("additionalProperties") is not False:
                self.add("open-object", "additionalProperties", (*path, "additionalProperties"),
                         f"{host.name} needs `additionalProperties: false` on every object")  # fmt: skip
            props = node.get("properties")
            required = node.get("required")
            names = set(props) if type(props) is dict else set()
            listed = set(required) if type(required) is list and set(map(type, required)) <= _STR else set()
            if names - listed:
                self.add("not-required", "required", (*path, "required"),
                         f"{host.name} needs every property listed in `required`")  # fmt: skip
        if host.declared_required and is_object and type(node.get("required")) is list:
            declared = node.get("properties")
            if any(type(r) is not str or type(declared) is not dict or r not in declared for r in node["required"]):
                self.add("undeclared-required", "required", (*path, "required"),
                         f"{host.name} needs every name in `required` to be a declared property")  # fmt: skip
        if host.array_items and "array" in types and type(node.get("items")) is not dict:
            self.add("items", "items", path, f"{host.name} needs `items` on every array")
        if host.string_enums:
            for key in ("enum",):
                if key in node:
                    values = node[key]
                    if types != ["string"] or type(values) is not list or any(type(v) is not str for v in values):
                        self.add(
                            "enum",
                            key,
                            (*path, key),
                            f"{host.name} accepts `enum` only on strings, with string choices",
                        )
            if ("properties" in node or "required" in node) and types != ["object"]:
                self.add("keyword", "properties", path, f"{host.name} accepts properties and required only on objects")
        if host.formats is not None and "format" in node and node["format"] not in host.formats:
            self.add("format", "format", (*path, "format"), f"{host.name} does not accept this `format`")
        if host.nonempty_objects and not root and types == ["object"]:
            props = node.get("properties")
            if type(props) is not dict or not props:
                self.add(
                    "empty-object", "properties", path, f"{host.name} needs a nested object to declare its properties"
                )
        props = node.get("properties")
        if type(props) is dict:
            self.properties += len(props)
            if host.property_names is not None and not (fitting := fitting_names(host)).issuperset(props):
                for name in props:
                    if not name_fits(host, fitting, name):
                        self.add("property-name", "properties", (*path, "properties", name),
                                 f"{host.name} does not accept this property name")  # fmt: skip
        if type(node.get("enum")) is list:
            self.enum_values += len(node["enum"])
        if "$ref" in node and not host.refs:
            self.add("ref", "$ref", (*path, "$ref"), f"{host.name} does not accept `$ref`")
        inner = depth + 1 if is_object else depth
        if host.limits is not None and inner > host.limits.depth:
            self.add("limit", "", path, f"objects nest deeper than {host.limits.depth} levels ({host.name})")
            return
        if _SUBSCHEMAS.isdisjoint(node):
            return  # a leaf (most nodes)
        for key, value in node.items():
            if key not in _SUBSCHEMAS:
                continue
            kind = type(value)
            is_leaf = self.leaf  # (a leaf's walk would return at once: not called, no path built)
            if kind is dict or kind is bool:
                if key in SCHEMA_VALUES and not is_leaf(value):
                    self.node(value, (*path, key), inner)
            elif kind is list and (key in SCHEMA_LISTS or key == "items"):
                for i, sub in enumerate(value):
                    if not is_leaf(sub):
                        self.node(sub, (*path, key, i), inner)
            if kind is dict and key not in SCHEMA_VALUES:  # a map of names to schemas
                leaves = self.leaves
                for name, sub in value.items():
                    if type(sub) is dict:
                        t = sub.get("type")  # (self.leaf, inline: most properties are leaves)
                        if type(t) is str and (keys := leaves.get(t)) is not None and keys.issuperset(sub):
                            continue
                        self.node(sub, (*path, key, name), inner)
                    elif type(sub) is bool:
                        self.node(sub, (*path, key, name), inner)


def accepts(schema: Any, host: HostProfile) -> bool:
    """Whether ``host`` accepts ``schema`` as it stands (:func:`check_schema` finds nothing), at the
    cost of a walk that stops at the first finding and writes no pointer."""
    try:
        _Walk(host, quick=True).root(schema)
    except _Refused:
        return False
    return True


def check_schema(schema: Any, host: HostProfile) -> tuple[HostIssue, ...]:
    """Every rule of ``host``'s table that ``schema`` breaks as it stands (``()``: accepted as-is).

    Args:
        schema: the parameters schema as a JSON value (an ``inputSchema``).
        host: a profile of ``hosts.tables.HOSTS``.
    """
    walk = _Walk(host)
    walk.root(schema)
    return tuple(walk.issues)
