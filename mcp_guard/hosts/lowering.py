"""The lowering: the schema a model host is shown, from the server's own (issue 24, items 2 and 3).

A compiler pass over a tool's ``inputSchema`` (a schema the guard supports) that produces a schema
the host's table accepts (``hosts.checker`` proves it on the output), and the exact inverse of
every reshaping it made, as a mapping tree (``hosts.inverse``). Three kinds of step, recorded
apart in :attr:`Lowered.steps` and kept apart below:

- **widening** (``_widen_*``, ``_drop``): removes a constraint or restates it equivalently: a
  keyword the host refuses is dropped and written into the node's ``description`` as text
  (``maximum 100``), a local ``$ref`` is inlined, a type list becomes ``anyOf``, ``oneOf``
  becomes ``anyOf``, ``allOf`` branches of objects are merged, the root's combinators are merged
  into one object. Every argument the original accepts, the shown schema accepts too; the guard
  still judges every call against the original, so nothing dropped goes unenforced.
- **reshaping** (``_json_text``, ``_strict_object``): a change of shape the host forces, with an
  exact inverse on arguments: OpenAI strict's optional property, shown required and nullable,
  whose ``null`` maps back to "absent"; a value the host cannot describe (any JSON value, a
  free-form object, an array without items, a recursive reference on a host without ``$ref``)
  shown as a string of JSON text and parsed back; a property name the host refuses, renamed.
  A reshaping that would have no exact inverse (a choice whose branches the mapping back could
  not tell apart, two property names made alike) makes the tool **not presentable**.
- **narrowing** (recorded as such): what the host forces that limits what the model may send,
  never what the guard accepts: OpenAI strict closes every object; an optional property that
  also accepts ``null`` cannot be sent as an explicit ``null`` (it means absent).

Entry point: :func:`lower`. Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple

from ..core.json_values import is_integer, pointer
from .checker import KEYWORD_BOOLEANS, SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES, HostIssue, accepts, check_schema
from .inverse import JSON_TEXT, Arr, Choice, Map, Member, Obj, Ref, Tag, back, kind_of, narrowed, present
from .tables import HostProfile

__all__ = ["Lowered", "Step", "StepKind", "lower"]

StepKind = Literal["widening", "reshaping", "narrowing"]

MAX_NODES: Final = 20_000
"""Lowered schema nodes (inlined ``$ref`` included) past which a tool is not presentable."""

ALL_KINDS: Final = frozenset({"object", "array", "string", "number", "boolean", "null"})
_KIND: Final = {"integer": "number", "number": "number", "string": "string", "boolean": "boolean",
                "null": "null", "object": "object", "array": "array"}  # fmt: skip

_ANNOTATIONS: Final = frozenset(
    {"title", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema", "$id", "$anchor",
     "contentEncoding", "contentMediaType", "contentSchema", "$defs", "definitions", "default", "description"}
)  # fmt: skip
"""Keys that constrain nothing (``default`` is written into the text where the host refuses it)."""

_FOR_TYPE: Final = {
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


_FOR_TYPE_SETS: Final = {t: frozenset(keys) for t, keys in _FOR_TYPE.items()}
_TYPED_KEYWORDS: Final = frozenset().union(*_FOR_TYPE_SETS.values())
_PLAIN: Final = _ANNOTATIONS | {
    "type", "enum", "const", "items", "properties", "required", "additionalProperties", "anyOf", "allOf", "oneOf",
}  # fmt: skip
"""Keys ``one_type`` leaves to other rules (annotations, and what the type's own rule or the
combinators handle)."""


class Step(NamedTuple):
    """One step of a lowering.

    Attributes:
        kind: ``widening``, ``reshaping`` or ``narrowing`` (module docstring).
        code: what was done (``dropped``, ``inlined``, ``anyOf``, ``merged``, ``json-text``,
            ``nullable``, ``renamed``, ``closed``, ``null-is-absent``, ``items``, ``root``).
        pointer: JSON Pointer into the server's schema.
        detail: a sentence (schema text only); for ``dropped``, the keyword.
    """

    kind: StepKind
    code: str
    pointer: str
    detail: str

    def to_json(self) -> dict[str, str]:
        """``{"kind", "code", "pointer", "detail"}``."""
        return self._asdict()


@dataclass(slots=True)
class Lowered:
    """The result of :func:`lower`.

    Attributes:
        host: the host profile's name.
        schema: the schema the model is shown (None when not presentable).
        steps: every step, in the order taken.
        reasons: why the tool is not presentable (``()`` when it is).
        mapping: the mapping tree (``hosts.inverse``); None is the identity.
        issues: what the host's checker says of :attr:`schema` (``()`` when presentable).
    """

    host: str
    schema: Any
    steps: tuple[Step, ...]
    reasons: tuple[str, ...] = ()
    mapping: Map = None
    issues: tuple[HostIssue, ...] = ()
    _defs: dict[str, Map] = field(default_factory=dict, repr=False)

    @property
    def presentable(self) -> bool:
        """True when the host accepts :attr:`schema` and every reshaping has an exact inverse."""
        return not self.reasons

    @property
    def not_shown(self) -> tuple[Step, ...]:
        """The constraints the model is not shown as keywords (widening ``dropped`` steps); the guard
        enforces every one of them."""
        return tuple(s for s in self.steps if s.kind == "widening" and s.code == "dropped")

    @property
    def identity(self) -> bool:
        """True when arguments need no mapping back."""
        return self.mapping is None

    def back(self, arguments: Any) -> Any:
        """The server-side arguments of the model's ``arguments`` (raises ``inverse.BackError``)."""
        return back(self.mapping, arguments)

    def present(self, arguments: Any) -> Any:
        """The shown form of server-side ``arguments`` (the inverse of :meth:`back`)."""
        return present(self.mapping, arguments)

    def narrowed(self, arguments: Any) -> str | None:
        """Where a narrowing step keeps the model from sending ``arguments`` (None: nowhere)."""
        return narrowed(self.mapping, arguments)


class NotPresentable(Exception):
    """Internal: a step without an exact inverse (the message says why)."""


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _types(node: dict[str, Any]) -> list[str] | None:
    t = node.get("type")
    if type(t) is str:
        return [t]
    if type(t) is list:
        return [x for x in t if type(x) is str]
    return None


def _constraining(node: dict[str, Any]) -> list[str]:
    return [k for k in node if k not in _ANNOTATIONS]


def _of_kind(values: list[Any], t: str) -> list[Any]:
    kind = _KIND[t]
    out = [v for v in values if kind_of(v) == kind]
    return [v for v in out if is_integer(v)] if t == "integer" else out


class _Lowering:
    def __init__(self, schema: Any, host: HostProfile) -> None:
        self.schema = schema
        self.host = host
        self.steps: list[Step] = []
        self.nodes = 0
        self.stack: list[str] = []  # $ref targets being inlined (a cycle: recursion)
        self.defs: dict[str, Any] = {}  # lowered recursive targets (hosts with $ref)
        self.maps: dict[str, Map] = {}
        self.def_names: dict[str, str] = {}
        self.depth = 0  # objects around the node being lowered (OpenAI strict counts their nesting)

    # --- bookkeeping -----------------------------------------------------------------------

    def step(self, kind: StepKind, code: str, path: tuple[str | int, ...], detail: str) -> None:
        self.steps.append(Step(kind, code, pointer(path), detail))

    def text(self, out: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        """Write dropped constraints into ``description`` (the model reads them there)."""
        if notes:
            said = out.get("description")
            extra = "Also checked: " + "; ".join(notes) + "."
            out["description"] = f"{said}\n{extra}" if isinstance(said, str) and said else extra
        return out

    def drop(self, node: dict[str, Any], key: str, path: tuple[str | int, ...], notes: list[str]) -> None:
        """Widening: ``key`` is not shown as a keyword; its value goes into the text."""
        self.step("widening", "annotation" if key in _ANNOTATIONS else "dropped", (*path, key), key)
        if key in ("default",):
            notes.append(f"default {_short(node[key])}")
        elif key not in _ANNOTATIONS:
            notes.append(f"{key} {_short(node[key])}")

    # --- references ------------------------------------------------------------------------

    def resolve(self, ref: str) -> tuple[str, Any]:
        """The target of a local reference (``#``, ``#/...`` JSON Pointer, or an anchor)."""
        if ref == "#" or ref == "":
            return "#", self.schema
        if ref.startswith("#/"):
            target: Any = self.schema
            for raw in ref[2:].split("/"):
                token = raw.replace("~1", "/").replace("~0", "~")
                from urllib.parse import unquote

                token = unquote(token)
                target = target[int(token)] if isinstance(target, list) else target[token]
            return ref, target
        found = self.anchor(ref.lstrip("#"), self.schema)
        if found is None:
            raise NotPresentable(f"the reference {ref} could not be followed by the lowering")
        return ref, found

    def anchor(self, name: str, node: Any) -> Any:
        if isinstance(node, dict):
            if node.get("$anchor") == name or node.get("$id") == "#" + name:
                return node
            for value in node.values():
                found = self.anchor(name, value)
                if found is not None:
                    return found
        elif isinstance(node, list):
            for value in node:
                found = self.anchor(name, value)
                if found is not None:
                    return found
        return None

    def ref(self, node: dict[str, Any], path: tuple[str | int, ...]) -> tuple[dict[str, Any], Map, frozenset[str]]:
        key, target = self.resolve(node["$ref"])
        siblings = [k for k in _constraining(node) if k != "$ref"]
        if siblings:
            notes: list[str] = []
            for k in siblings:
                self.drop(node, k, path, notes)
        else:
            notes = []
        if key in self.stack:  # recursion
            if not self.host.refs:
                self.step("reshaping", "json-text", path, "a recursive reference, shown as JSON text")
                return self.json_text(node, path)
            name = self.def_names.setdefault(key, f"d{len(self.def_names)}")
            self.step("widening", "ref", path, f"a recursive reference, kept as #/$defs/{name}")
            out = {"$ref": f"#/$defs/{name}"}
            return out, Ref(name, self.maps), ALL_KINDS
        self.stack.append(key)
        self.step("widening", "inlined", (*path, "$ref"), node["$ref"])
        try:
            out, mapping, kinds = self.node(target, path)
        finally:
            self.stack.pop()
        if key in self.def_names and self.def_names[key] not in self.defs:
            name = self.def_names[key]
            self.defs[name] = out
            self.maps[name] = mapping
        if isinstance(node.get("description"), str) and out.get("description") is None:
            out = {**out, "description": node["description"]}
        return self.text(dict(out), notes), mapping, kinds

    # --- nodes -----------------------------------------------------------------------------

    def json_text(self, node: Any, path: tuple[str | int, ...]) -> tuple[dict[str, Any], Map, frozenset[str]]:
        """Reshaping: a value the host cannot describe, shown as a string of JSON text."""
        said = node.get("description") if isinstance(node, dict) else None
        bare = {k: v for k, v in node.items() if k not in _ANNOTATIONS} if isinstance(node, dict) else {}
        shape = f" matching the JSON Schema {_short(bare, 300)}" if bare else ""
        text = f"Write this value as JSON text (a JSON value{shape})."
        out = {"type": "string", "description": f"{said}\n{text}" if isinstance(said, str) and said else text}
        return out, JSON_TEXT, frozenset({"string"})

    def node(self, node: Any, path: tuple[str | int, ...]) -> tuple[dict[str, Any], Map, frozenset[str]]:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise NotPresentable(f"the lowered schema would exceed {MAX_NODES} nodes")
        if node is True or node is False:
            if node is False:
                self.step("widening", "dropped", path, "false")
            return self.free(node, path)
        if "$ref" in node:
            return self.ref(node, path)
        if not self.host.typed_nodes:
            return self.generic(node, path), None, ALL_KINDS
        return self.typed(node, path)

    def free(
        self, node: Any, path: tuple[str | int, ...], what: str = "a value of any JSON type"
    ) -> tuple[dict[str, Any], Map, frozenset[str]]:
        """Any JSON value: ``{}`` where the host takes it, else JSON text."""
        if not self.host.typed_nodes:
            out: dict[str, Any] = {}
            if isinstance(node, dict) and isinstance(node.get("description"), str):
                out["description"] = node["description"]
            if node is False:
                out["not"] = {}
            return out, None, ALL_KINDS
        self.step("reshaping", "json-text", path, f"{what}, shown as JSON text")
        return self.json_text(node, path)

    # --- the permissive hosts: keep what is accepted, drop the rest ---------------------------

    def generic(self, node: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
        host = self.host
        out: dict[str, Any] = {}
        notes: list[str] = []
        for key, value in node.items():
            if key not in host.keywords and key != "description":
                self.drop(node, key, path, notes)
                continue
            if key in ("$defs", "definitions"):
                continue  # references are inlined (recursive ones kept in the root's $defs)
            out[key] = self.generic_value(key, value, path)
        types = _types(node) or []
        if host.array_items and "array" in types and not isinstance(node.get("items"), dict):
            if isinstance(node.get("items"), list):
                self.drop(node, "items", path, notes)
            out["items"] = {}
            self.step("widening", "items", path, "an array without `items` shown with `items: {}` (any element)")
        return self.text(out, notes)

    def generic_value(self, key: str, value: Any, path: tuple[str | int, ...]) -> Any:
        if type(value) is bool and key in KEYWORD_BOOLEANS:
            return value
        if key in SCHEMA_VALUES and type(value) in (dict, bool):
            return self.node(value, (*path, key))[0]
        if (key in SCHEMA_LISTS or key == "items") and type(value) is list:
            return [self.node(v, (*path, key, i))[0] for i, v in enumerate(value)]
        if (key in SCHEMA_MAPS or key == "dependencies") and type(value) is dict:
            return {
                name: self.node(v, (*path, key, name))[0] if type(v) in (dict, bool) else v for name, v in value.items()
            }
        return value

    # --- the typed hosts (OpenAI strict, Gemini) ----------------------------------------------

    def typed(self, node: dict[str, Any], path: tuple[str | int, ...]) -> tuple[dict[str, Any], Map, frozenset[str]]:
        node = self.combinators(node, path)
        if "anyOf" in node:
            return self.any_of(node, path)
        types = _types(node)
        if types is None:
            values = node["enum"] if type(node.get("enum")) is list else [node["const"]] if "const" in node else None
            if values is None:
                return self.free(node, path)
            types = sorted({"integer" if kind_of(v) == "number" and is_integer(v) else kind_of(v) for v in values})
            types = ["number" if t == "number" else t for t in types]
            if "number" in types and "integer" in types:
                types.remove("integer")
        if not types:
            return self.free(node, path)
        if len(types) == 1:
            return self.one_type(node, types[0], path)
        self.step("widening", "anyOf", (*path, "type"), "a list of types shown as anyOf")
        notes: list[str] = []
        for key in _constraining(node):
            if key not in (
                "type",
                "enum",
                "const",
                "items",
                "properties",
                "required",
                "additionalProperties",
            ) and not any(key in keys for keys in _FOR_TYPE.values()):
                self.drop(node, key, path, notes)
        node = self.text(dict(node), notes)
        nullable = "null" in types and not self.host.null_type
        branches = [(t, self.one_type(node, t, path, quiet=True)) for t in types if not (nullable and t == "null")]
        return self.union([b for _, b in branches], node, path, nullable=nullable)

    def combinators(self, node: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
        """Widening: ``oneOf`` as ``anyOf``; ``allOf`` merged or dropped; the rest dropped by ``one_type``."""
        if "oneOf" in node:
            node = dict(node)
            branches = node.pop("oneOf")
            if "anyOf" in node:
                notes: list[str] = []
                self.drop({"oneOf": branches}, "oneOf", path, notes)
                node = self.text(node, notes)
            else:
                self.step(
                    "widening", "anyOf", (*path, "oneOf"), "oneOf shown as anyOf (the guard enforces exactly one)"
                )
                node["anyOf"] = branches
        if "allOf" in node:
            node = self.merge_all_of(node, path)
        if "anyOf" in node and [k for k in _constraining(node) if k != "anyOf"]:
            # siblings and branches: keep the siblings, show the branches' as text
            node = dict(node)
            notes = []
            self.drop(node, "anyOf", path, notes)
            del node["anyOf"]
            node = self.text(node, notes)
        return node

    def merge_all_of(self, node: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
        """Widening: ``allOf`` folded into its node where the branches' keywords do not overlap
        (objects: properties and required unite); else dropped into the text."""
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for _i, branch in enumerate(node["allOf"]):
            if isinstance(branch, dict) and "$ref" in branch and len(_constraining(branch)) == 1:
                branch = self.resolve(branch["$ref"])[1]
            if not isinstance(branch, dict):
                break
            for key, value in branch.items():
                if key in _ANNOTATIONS:
                    merged.setdefault(key, value)
                elif key == "properties" and isinstance(merged.get(key), dict) and isinstance(value, dict):
                    if set(merged[key]) & set(value):
                        break
                    merged[key] = {**merged[key], **value}
                elif key == "required" and isinstance(merged.get(key), list) and isinstance(value, list):
                    merged[key] = [*merged[key], *[r for r in value if r not in merged[key]]]
                elif key in merged and merged[key] != value:
                    break
                else:
                    merged[key] = value
            else:
                continue
            notes: list[str] = []
            self.drop(node, "allOf", path, notes)
            return self.text({k: v for k, v in node.items() if k != "allOf"}, notes)
        self.step("widening", "merged", (*path, "allOf"), "allOf merged into its node")
        return merged

    def any_of(self, node: dict[str, Any], path: tuple[str | int, ...]) -> tuple[dict[str, Any], Map, frozenset[str]]:
        branches = node["anyOf"]
        if any(b is True or (isinstance(b, dict) and not _constraining(b)) for b in branches):
            return self.free(node, path)
        nullable = False
        lowered = []
        for i, branch in enumerate(branches):
            if not self.host.null_type and isinstance(branch, dict) and branch.get("type") == "null":
                nullable = True
                continue
            lowered.append(self.node(branch, (*path, "anyOf", i)))
        return self.union(lowered, node, path, nullable=nullable)

    def union(
        self,
        branches: list[tuple[dict[str, Any], Map, frozenset[str]]],
        node: dict[str, Any],
        path: tuple[str | int, ...],
        *,
        nullable: bool,
    ) -> tuple[dict[str, Any], Map, frozenset[str]]:
        """An anyOf of lowered branches (Gemini's null as ``nullable``), with its mapping choice."""
        if not branches or any(m is JSON_TEXT for _, m, _k in branches):
            return self.free(node, path, "a union with a branch of any value (or null alone)")
        if nullable:
            branches = [({**o, "nullable": True}, m, k | {"null"}) for o, m, k in branches]
        kinds = frozenset().union(*(k for _, _, k in branches)) if branches else frozenset()
        if len(branches) == 1:
            out, mapping, kinds = branches[0]
        else:
            out = {"anyOf": [o for o, _, _ in branches]}
            mapping = self.choice(branches, path)
        if isinstance(node.get("description"), str) and "description" not in out:
            out = {**out, "description": node["description"]}
        return out, mapping, kinds

    def choice(self, branches: list[tuple[dict[str, Any], Map, frozenset[str]]], path: tuple[str | int, ...]) -> Map:
        if all(m is None for _, m, _ in branches):
            return None
        tag = _tag(branches)
        for kind in ("object", "array", "string"):  # every mapping is the identity on null, booleans, numbers
            among = [(o, m) for o, m, k in branches if kind in k]
            if len(among) < 2 or all(m is None for _, m in among):
                continue
            keys = [frozenset(o.get("properties", {})) if self.host.closed_objects and kind == "object" else None
                    for o, _ in among]  # fmt: skip
            if kind == "object" and None not in keys and len(set(keys)) == len(keys):
                continue  # closed objects with all-required properties: the key set picks the branch
            if kind == "object" and tag is not None:
                continue  # a required member with a constant per branch picks it
            raise NotPresentable(
                f"`{pointer(path) or '/'}`: alternatives of one JSON type map back differently and could not be "
                "told apart"
            )
        out = []
        for o, m, k in branches:
            keyset = frozenset(o["properties"]) if self.host.closed_objects and "properties" in o else None
            out.append((k, keyset, m))
        return Choice(tuple(out), tag)

    def one_type(
        self, node: dict[str, Any], t: str, path: tuple[str | int, ...], *, quiet: bool = False
    ) -> tuple[dict[str, Any], Map, frozenset[str]]:
        host = self.host
        notes: list[str] = []
        out: dict[str, Any] = {"type": t}
        if isinstance(node.get("description"), str):
            out["description"] = node["description"]
        if t == "null" and not host.null_type:
            return self.free(node, path)
        if "default" in node and not quiet:
            self.drop(node, "default", path, notes)
        if not _PLAIN.issuperset(node):  # the common node holds only annotations and structure
            own = _FOR_TYPE_SETS.get(t, frozenset())
            for key in node:
                if key in _PLAIN:
                    continue
                if key not in own:
                    if key not in _TYPED_KEYWORDS and not quiet:
                        self.drop(node, key, path, notes)  # not, if/then/else, ...: no type of their own
                    continue
                if self.accepted(key, node[key]):
                    out[key] = node[key]
                    continue
                self.drop(node, key, path, notes)
        if "enum" in node or "const" in node:
            self.choices(node, t, out, path, notes)
        if t == "array":
            return self.array(node, out, path, notes)
        if t == "object":
            return self.object(node, out, path, notes)
        return self.text(out, notes), None, frozenset({_KIND[t]})

    def reshaped_choices(
        self, out: dict[str, Any], mapping: Map, path: tuple[str | int, ...], notes: list[str]
    ) -> dict[str, Any]:
        """Widening: ``enum``/``const`` on a node reshaped inside are not shown (a choice written as
        JSON text would compare texts, not values: ``0`` and ``0.0`` are one choice, two texts)."""
        if mapping is not None:
            for key in ("enum", "const"):
                if key in out:
                    self.drop(out, key, path, notes)
                    del out[key]
        return out

    def accepted(self, key: str, value: Any) -> bool:
        """Whether the host takes this type-specific keyword with this value as it stands."""
        host = self.host
        if key not in host.keywords:
            return False
        if key == "format":
            return host.formats is None or value in host.formats
        return key != "pattern" or _plain_pattern(value)

    def choices(
        self, node: dict[str, Any], t: str, out: dict[str, Any], path: tuple[str | int, ...], notes: list[str]
    ) -> None:
        """``enum``/``const`` restricted to the type's own values (the others are unreachable)."""
        for key in ("enum", "const"):
            if key not in node:
                continue
            values = _of_kind(node[key] if key == "enum" else [node[key]], t)
            if self.host.string_enums and t != "string":
                self.drop(node, key, path, notes)
                continue
            limit = self.host.limits.enum_values // 2 if self.host.limits is not None else None
            if limit is not None and len(values) > limit:
                self.drop(node, key, path, notes)
                continue
            if key == "const" and values and "const" in self.host.keywords:
                out["const"] = values[0]
            else:
                out["enum"] = values

    def array(
        self, node: dict[str, Any], out: dict[str, Any], path: tuple[str | int, ...], notes: list[str]
    ) -> tuple[dict[str, Any], Map, frozenset[str]]:
        items = node.get("items", True)
        if isinstance(items, list):  # draft-07 tuple: positions shown as text, elements as any value
            self.drop(node, "items", path, notes)
            items = True
        if "prefixItems" in node:
            items = True
        child, mapping, _ = self.node(items, (*path, "items"))
        out["items"] = child
        found: Map = Arr(mapping) if mapping is not None else None
        return self.text(self.reshaped_choices(out, found, path, notes), notes), found, frozenset({"array"})

    def object(
        self, node: dict[str, Any], out: dict[str, Any], path: tuple[str | int, ...], notes: list[str]
    ) -> tuple[dict[str, Any], Map, frozenset[str]]:
        host = self.host
        props: dict[str, Any] = node["properties"] if isinstance(node.get("properties"), dict) else {}
        extra = node.get("additionalProperties", True)
        open_map = (isinstance(extra, dict) and bool(_constraining(extra))) or "patternProperties" in node
        root = path == ()
        if not props and not root:
            return self.free(node, path, "an object without declared properties")
        limits = host.limits
        if limits is not None and not root and self.depth + 1 > limits.depth:
            return self.free(node, path, f"an object nested past the host's {limits.depth} levels")
        if host.closed_objects and open_map:
            if root:
                raise NotPresentable("the root object takes keys its properties do not name (a map), and the host "
                                     "closes every object")  # fmt: skip
            return self.free(node, path, "an object whose keys follow a pattern or a schema")
        required = [r for r in node.get("required", []) if isinstance(r, str)]
        undeclared = [r for r in required if r not in props]
        if undeclared:
            if host.closed_objects:
                if root:
                    raise NotPresentable("the root requires properties it does not declare, and the host closes "
                                         "every object")  # fmt: skip
                return self.free(node, path, "an object that requires properties it does not declare")
            self.step("widening", "dropped", (*path, "required"), "required")
            notes.append(f"also required: {', '.join(undeclared)}")
        if "additionalProperties" in node and not host.closed_objects:
            if "additionalProperties" not in host.keywords:
                self.drop(node, "additionalProperties", path, notes)
            else:
                out["additionalProperties"] = self.node(extra, (*path, "additionalProperties"))[0]
        members: dict[str, Member] = {}
        shown_props: dict[str, Any] = {}
        changed = False
        self.depth += 1
        try:
            lowered = [(name, self.node(sub, (*path, "properties", name))) for name, sub in props.items()]
        finally:
            self.depth -= 1
        for name, (child, mapping, kinds) in lowered:
            shown = self.shown_name(name, path)
            if shown != name:
                changed = True
            if shown in members:
                raise NotPresentable(f"`{pointer(path) or '/'}`: two property names become `{shown}` for the host")
            null_absent = narrowed_null = False
            if host.closed_objects and name not in required:
                null_absent = True
                narrowed_null = "null" in kinds
                child = self.nullable(child)
                if narrowed_null:
                    self.step("narrowing", "null-is-absent", (*path, "properties", name),
                              "optional and nullable: a null from the model means absent")  # fmt: skip
                else:
                    self.step("reshaping", "nullable", (*path, "properties", name),
                              "optional: shown required and nullable; null maps back to absent")  # fmt: skip
            members[shown] = Member(name, mapping, null_absent, narrowed_null)
            shown_props[shown] = child
            if mapping is not None or null_absent:
                changed = True
        out["properties"] = shown_props
        closed = False
        if host.closed_objects:
            out["required"] = list(shown_props)
            closed = True
            if extra is not False:
                self.step("narrowing", "closed", path, "object closed: the model may send only its properties")
            out["additionalProperties"] = False
        else:
            shown_required = [members_name for members_name, m in members.items() if m.original in required]
            if shown_required:
                out["required"] = shown_required
        if not props and "properties" not in node and not host.closed_objects:
            del out["properties"]
        found: Map = Obj(members, closed, closed and extra is not False) if changed or closed else None
        return self.text(self.reshaped_choices(out, found, path, notes), notes), found, frozenset({"object"})

    def shown_name(self, name: str, path: tuple[str | int, ...]) -> str:
        pattern = self.host.property_names
        if pattern is None or pattern.fullmatch(name):
            return name
        shown = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)[:64]
        if not shown or not (shown[0].isalpha() or shown[0] == "_"):
            shown = ("_" + shown)[:64]
        self.step("reshaping", "renamed", (*path, "properties", name), f"property shown as `{shown}`")
        return shown

    def nullable(self, child: dict[str, Any]) -> dict[str, Any]:
        if child.get("type") == "null":
            return child
        if "anyOf" in child:
            branches = child["anyOf"]
            if any(b.get("type") == "null" for b in branches):
                return child
            return {**child, "anyOf": [*branches, {"type": "null"}]}
        description = child.get("description")
        inner = {k: v for k, v in child.items() if k != "description"}
        out: dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
        if description is not None:
            out["description"] = description
        return out


def _tag(branches: list[tuple[dict[str, Any], Map, frozenset[str]]]) -> Tag | None:
    """The member that tells an ``anyOf``'s object branches apart: required in each shown branch,
    a distinct string constant in each (``const``, or a one-choice ``enum``); None when there is none."""
    objects = [(i, o, m) for i, (o, m, k) in enumerate(branches) if "object" in k]
    if any(k - {"object", "null"} and "object" in k for _, _, k in branches):
        return None  # a branch that is an object among other kinds: no member decides
    if len(objects) < 2 or any(not isinstance(o.get("properties"), dict) for _, o, _ in objects):
        return None
    for name in objects[0][1]["properties"]:
        found: dict[str, int] = {}
        for i, o, _m in objects:
            sub = o["properties"].get(name)
            if not isinstance(sub, dict) or name not in o.get("required", ()):
                break
            value = sub.get(
                "const", sub["enum"][0] if isinstance(sub.get("enum"), list) and len(sub["enum"]) == 1 else None
            )
            if not isinstance(value, str) or value in found:
                break
            found[value] = i
        else:
            first = objects[0][2]
            original = first.members[name].original if type(first) is Obj and name in first.members else name
            return Tag(name, original, found)
    return None


def _plain_pattern(pattern: Any) -> bool:
    """A pattern without lookaround, back-references or named groups (the side hosts accept)."""
    return isinstance(pattern, str) and not any(s in pattern for s in ("(?", "\\k", "\\1", "\\2", "\\p", "\\P"))


def lower(schema: Any, host: HostProfile) -> Lowered:
    """The schema ``host`` is shown for a tool whose ``inputSchema`` is ``schema``.

    Args:
        schema: the tool's ``inputSchema``, a schema the guard supports (``core.compile`` finds no
            issue in it); the lowering reads it and never changes it.
        host: a profile of ``hosts.tables.HOSTS``.

    Returns:
        A :class:`Lowered`; ``presentable`` is False (with ``reasons``) when a step would have no
        exact inverse, or when the host's checker still refuses the result.
    """
    run = _Lowering(schema, host)
    if not isinstance(schema, dict):
        return Lowered(host.name, None, (), ("the inputSchema is not an object schema",))
    try:
        root = root_object(run, schema)
        out, mapping, _kinds = run.node(root, ())
    except NotPresentable as exc:
        return Lowered(host.name, None, tuple(run.steps), (str(exc),))
    except (KeyError, IndexError, ValueError, TypeError) as exc:  # a reference the lowering cannot follow
        return Lowered(
            host.name, None, tuple(run.steps), (f"the lowering could not read the schema ({type(exc).__name__})",)
        )
    if run.defs:
        out = {**out, "$defs": run.defs}
    out["type"] = "object"
    issues = () if accepts(out, host) else check_schema(out, host)  # the full walk only to say why
    reasons = tuple(f"{i.pointer or '/'}: {i.message}" for i in issues)
    return Lowered(host.name, None if reasons else out, tuple(run.steps), reasons, mapping, issues, run.maps)


def root_object(run: _Lowering, schema: dict[str, Any]) -> dict[str, Any]:
    """Widening at the root: a host that refuses combinators there is shown one object whose
    properties are every branch's (``anyOf``/``oneOf``: none required; ``allOf``: merged)."""
    node = dict(schema)
    if node.get("type") in (None, ["object"]):
        node["type"] = "object"
        if schema.get("type") is None:
            run.step("widening", "root", ("type",), "the root shown with type object (arguments are objects)")
    if run.host.root_combinators:
        return node
    for key in ("not", "if", "then", "else", "enum", "const"):
        if key in node:
            notes: list[str] = []
            run.drop(node, key, (), notes)
            del node[key]
            node = run.text(node, notes)
    if "allOf" in node:
        node = run.merge_all_of(node, ())
    for key in ("anyOf", "oneOf"):
        if key not in node:
            continue
        branches = node.pop(key)
        props = dict(node.get("properties", {})) if isinstance(node.get("properties"), dict) else {}
        for _i, branch in enumerate(branches):
            if isinstance(branch, dict) and "$ref" in branch:
                branch = run.resolve(branch["$ref"])[1]
            if not isinstance(branch, dict) or not isinstance(branch.get("properties"), dict):
                continue
            for name, sub in branch["properties"].items():
                if name in props and props[name] != sub:
                    props[name] = {"anyOf": [props[name], sub]}
                else:
                    props.setdefault(name, sub)
        if props:
            node["properties"] = props
        notes = [f"the arguments match {'one' if key == 'oneOf' else 'at least one'} of {len(branches)} alternatives"]
        run.step("widening", "root", (key,), f"root {key} merged into one object")
        node = run.text(node, notes)
    return node
