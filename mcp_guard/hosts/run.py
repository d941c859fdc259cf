"""The state of one lowering pass, and the schema vocabulary its steps share (issue 24, item 3).

The driver (``hosts.lowering``) walks the server's schema; the steps (``hosts.widening``,
``hosts.reshaping``, ``hosts.narrowing``) are functions of a :class:`Run`: the host, the server's
schema (to follow its references), the steps recorded so far, and what recursion needs (the
references being inlined, the recursive targets kept in ``$defs`` and their mapping nodes).

Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..core.json_values import is_integer
from .checker import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES
from .inverse import Map, kind_of
from .lowered import Step, StepKind
from .tables import HostProfile

__all__ = [
    "ALL_KINDS",
    "ANNOTATIONS",
    "FOR_TYPE",
    "FOR_TYPE_SETS",
    "KIND",
    "KIND_SETS",
    "MAX_NODES",
    "PLAIN",
    "SCHEMA_KEYWORDS",
    "TYPED_KEYWORDS",
    "Lowering",
    "NotPresentable",
    "Path",
    "Run",
    "constraining",
    "moved",
    "new_tuple",
    "of_kind",
    "plain_keys",
    "short",
    "types_of",
]

Path = str
"""Where a node is in the server's schema: its JSON Pointer (RFC 6901, ``""`` for the root), built
as the pass descends (cheaper than a tuple turned into a pointer at each step)."""

Lowering = tuple[dict[str, Any], Map, frozenset[str]]
"""A lowered node: the shown schema, its mapping node (``hosts.inverse``), the JSON kinds it accepts."""

MAX_NODES: Final = 20_000
"""Lowered schema nodes (inlined ``$ref`` included) past which a tool is not presentable."""

ALL_KINDS: Final = frozenset({"object", "array", "string", "number", "boolean", "null"})
KIND: Final = {"integer": "number", "number": "number", "string": "string", "boolean": "boolean",
               "null": "null", "object": "object", "array": "array"}  # fmt: skip
"""The JSON kind (``inverse.kind_of``) of each JSON Schema type."""

ANNOTATIONS: Final = frozenset(
    {"title", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema", "$id", "$anchor",
     "contentEncoding", "contentMediaType", "contentSchema", "$defs", "definitions", "default", "description"}
)  # fmt: skip
"""Keys that constrain nothing (``default`` is written into the text where the host refuses it)."""

FOR_TYPE: Final = {
    "string": ("minLength", "maxLength", "pattern", "format"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "array": ("minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "prefixItems",
              "unevaluatedItems", "additionalItems"),
    "object": ("minProperties", "maxProperties", "propertyNames", "patternProperties", "dependentRequired",
               "dependentSchemas", "dependencies", "unevaluatedProperties"),
}  # fmt: skip
"""Keywords that constrain one type only (``items``, ``properties``, ``required`` and
``additionalProperties`` are handled by the type's own rule)."""

FOR_TYPE_SETS: Final = {t: frozenset(keys) for t, keys in FOR_TYPE.items()}
TYPED_KEYWORDS: Final = frozenset().union(*FOR_TYPE_SETS.values())
PLAIN: Final = ANNOTATIONS | {
    "type", "enum", "const", "items", "properties", "required", "additionalProperties", "anyOf", "allOf", "oneOf",
}  # fmt: skip
"""Keys a node's type rule leaves to other rules (annotations, and what the type's own rule or the
combinators handle)."""


SCHEMA_KEYWORDS: Final = SCHEMA_VALUES | SCHEMA_LISTS | SCHEMA_MAPS | {"dependencies"}
"""Keywords whose value holds subschemas (``hosts.checker``'s sets)."""

KIND_SETS: Final = {t: frozenset({kind}) for t, kind in KIND.items()}
"""The JSON kinds a node of each type accepts (one frozenset per type, shared)."""


def _leaf_keys(host: HostProfile) -> dict[str, frozenset[str]]:
    """Per scalar type, the keys a node of that type may hold for ``host`` to be shown it as it stands
    (its ``type``, a ``description``, and the host's keywords of the type whose value it takes
    whatever it is: not ``format`` or ``pattern``, which depend on the value)."""
    scalars = ("string", "integer", "number", "boolean", *(("null",) if host.null_type else ()))
    kept = host.keywords - {"format", "pattern"}
    return {t: frozenset({"type", "description"} | (FOR_TYPE_SETS.get(t, frozenset()) & kept)) for t in scalars}


_LEAVES: dict[int, tuple[HostProfile, dict[str, frozenset[str]]]] = {}


def leaf_keys(host: HostProfile) -> dict[str, frozenset[str]]:
    """:func:`_leaf_keys`, kept per host profile (by identity)."""
    found = _LEAVES.get(id(host))
    if found is None or found[0] is not host:
        found = _LEAVES[id(host)] = (host, _leaf_keys(host))
    return found[1]


_PLAIN_KEYS: dict[int, tuple[HostProfile, frozenset[str]]] = {}


def plain_keys(host: HostProfile) -> frozenset[str]:
    """The keys a node may hold for a host without typed nodes to be shown it as it stands: the
    host's keywords and ``description``, except those that hold subschemas (lowered in turn) and
    ``$defs``/``definitions`` (references are inlined). Kept per host profile (by identity)."""
    found = _PLAIN_KEYS.get(id(host))
    if found is None or found[0] is not host:
        keys = (host.keywords | {"description"}) - SCHEMA_KEYWORDS - {"$defs", "definitions"}
        found = _PLAIN_KEYS[id(host)] = (host, frozenset(keys))
    return found[1]


class NotPresentable(Exception):
    """Internal to the pass: a step without an exact inverse (the message says why); ``lower``
    turns it into a not-presentable :class:`~.lowered.Lowered`."""


class Run:
    """One lowering pass of one schema for one host.

    Attributes:
        schema: the server's schema (references are resolved in it).
        host: the host profile.
        steps: every step recorded so far.
        nodes: schema nodes lowered so far (``MAX_NODES`` bounds them).
        stack: the ``$ref`` targets being inlined (one met again is a recursion).
        located: index in :attr:`steps` -> the step's pointer as the places in the server's schema document the
            guard's findings name (:func:`moved`), for the steps taken where :attr:`moves` hold (an inlined
            ``$ref``'s target, ``/$defs/node/...``; a merged ``allOf`` branch, ``/allOf/0/...``); JSON text excepted.
        moves: the relocations in force while the pass lowers a node built from elsewhere, outermost first, a
            group per step that moved keywords: ``{prefix: targets}``, a step pointer at or below ``prefix``
            (where the pass walks) is the same below each target (where the keyword is in the server's
            schema, in the coordinates of the groups before; a target marked ``#`` is a place in the
            document, relocated no further).
        defs: lowered recursive targets, by their name in the shown ``$defs`` (hosts with ``$ref``).
        maps: the mapping node of each of :attr:`defs` (``inverse.Ref`` looks them up).
        def_names: reference → its name in the shown ``$defs``.
        depth: objects around the node being lowered (OpenAI strict bounds their nesting).
        leaves: per scalar type, the keys of a node the host is shown as it stands (typed hosts).
        enum_leaf: the same for a string with an ``enum`` (whose choices must then be strings).
        plain: the keys of a node a permissive host is shown as it stands (:func:`plain_keys`).
    """

    __slots__ = (
        "def_names", "defs", "depth", "enum_leaf", "host", "leaves", "located", "maps", "moves", "nodes", "plain",
        "required_somewhere", "schema", "stack",
        "steps",
    )  # fmt: skip

    def __init__(self, schema: Any, host: HostProfile) -> None:
        self.schema = schema
        self.host = host
        self.steps: list[Step] = []
        self.nodes = 0
        self.stack: list[str] = []
        self.located: dict[int, tuple[str, ...]] = {}
        self.moves: list[dict[str, tuple[str, ...]]] = []
        self.defs: dict[str, Any] = {}
        self.maps: dict[str, Map] = {}
        self.def_names: dict[str, str] = {}
        self.depth = 0
        self.leaves = leaf_keys(host) if host.typed_nodes else {}
        self.enum_leaf = self.leaves["string"] | {"enum"} if self.leaves else frozenset()
        self.plain = plain_keys(host)
        # Names a merged root alternative requires (widening.root_object): a null there is a value, not "absent".
        self.required_somewhere: frozenset[str] = frozenset()

    def step(self, kind: StepKind, code: str, path: Path, detail: str) -> None:
        """Record a step at ``path`` (a JSON Pointer into the server's schema, as the pass walks it; where
        :attr:`moves` relocate it, :attr:`located` gains its places in the server's schema)."""
        if self.moves and code != "json-text":  # (JSON text: told by the instance pointer, hosts.listing)
            found = moved(self.moves, path)
            if found != (path,):
                self.located[len(self.steps)] = found
        self.steps.append(new_tuple(Step, (kind, code, path, detail)))  # Step(...) without its Python-level __new__


def moved(moves: list[dict[str, tuple[str, ...]]], pointer: str) -> tuple[str, ...]:
    """The places in the server's schema of a keyword the pass walked at ``pointer``: each group of relocations
    of ``moves`` (:attr:`Run.moves`), innermost first, rewrites a pointer at or below one of its prefixes to the
    same below each of that prefix's targets (every prefix of the group that holds it: one looked up per
    segment of the pointer, so a merge of many properties costs no more per step than one); a target marked
    ``#`` (a place in the document: a ``$ref``'s) is relocated no further.

    Returns:
        The JSON Pointers, in order, without repeats (``(pointer,)`` when nothing relocates it)."""
    pending = [pointer]
    done: list[str] = []
    for group in reversed(moves):
        out = []
        for at in pending:
            hit = False
            prefix = at
            while True:
                targets = group.get(prefix)
                if targets is not None:
                    hit = True
                    rest = at[len(prefix) :]
                    for target in targets:
                        if target.startswith("#"):
                            done.append(target[1:] + rest)
                        else:
                            out.append(target + rest)
                if not prefix:
                    break
                prefix = prefix[: prefix.rindex("/")]
            if not hit:
                out.append(at)
        pending = out
    return tuple(dict.fromkeys(done + pending))


new_tuple: Final = tuple.__new__
"""Builds a named tuple from a tuple of all its fields (``new_tuple(Step, fields)``): a C call, where
the named tuple's own ``__new__`` is a Python function (a lowering builds one per step and per property)."""


_COMPACT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
"""``json.dumps`` with these arguments, built once (``dumps`` builds an encoder per call)."""


def short(value: Any, limit: int = 160) -> str:
    """Schema text for a description: compact JSON, cut to ``limit`` characters."""
    text = _COMPACT.encode(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def types_of(node: dict[str, Any]) -> list[str] | None:
    """The node's ``type`` as a list (None: it has none)."""
    t = node.get("type")
    if type(t) is str:
        return [t]
    if type(t) is list:
        return [x for x in t if type(x) is str]
    return None


def constraining(node: dict[str, Any]) -> list[str]:
    """The node's keys that are not annotations."""
    return [k for k in node if k not in ANNOTATIONS]


def of_kind(values: list[Any], t: str) -> list[Any]:
    """The values of ``values`` that are of JSON Schema type ``t``."""
    if t == "string":
        return [v for v in values if type(v) is str]  # a parsed schema's strings are str
    kind = KIND[t]
    out = [v for v in values if kind_of(v) == kind]
    return [v for v in out if is_integer(v)] if t == "integer" else out
