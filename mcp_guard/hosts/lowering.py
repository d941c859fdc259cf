"""The lowering: the schema a model host is shown, from the server's own (issue 24, items 2 and 3).

A compiler pass over a tool's ``inputSchema`` (a schema the guard supports) that produces a schema
the host's table accepts (``hosts.checker`` proves it on the output), and the exact inverse of
every reshaping it made, as a mapping tree (``hosts.inverse``). This module is the driver: it
walks the server's schema node by node and applies the steps, three kinds kept apart, each in a
module of its own and recorded apart in :attr:`Lowered.steps`:

- **widening** (``hosts.widening``): removes a constraint or restates it equivalently: a keyword
  the host refuses is dropped and written into the node's ``description`` as text (``maximum
  100``), a local ``$ref`` is inlined, a type list becomes ``anyOf``, ``oneOf`` becomes ``anyOf``,
  ``allOf`` branches of objects are merged, the root's combinators are merged into one object.
  Every argument the original accepts, the shown schema accepts too; the guard still judges every
  call against the original, so nothing dropped goes unenforced.
- **reshaping** (``hosts.reshaping``): a change of shape the host forces, with an exact inverse
  on arguments: OpenAI strict's optional property, shown required and nullable, whose ``null``
  maps back to "absent"; a value the host cannot describe shown as a string of JSON text and
  parsed back; a property name the host refuses, renamed. A reshaping that would have no exact
  inverse makes the tool **not presentable**.
- **narrowing** (``hosts.narrowing``): what the host forces that limits what the model may send,
  never what the guard accepts: OpenAI strict closes every object; an optional property that
  also accepts ``null`` cannot be sent as an explicit ``null`` (it means absent).

Entry point: :func:`lower`. Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

from typing import Any, Final

from ..core.json_values import escape_token, is_integer
from .checker import (
    KEYWORD_BOOLEANS,
    SCHEMA_LISTS,
    SCHEMA_MAPS,
    SCHEMA_VALUES,
    accepts,
    check_schema,
    fitting_names,
    name_fits,
)
from .inverse import Arr, Map, Member, Obj, Ref, kind_of
from .lowered import Lowered, Step, StepKind, unshown
from .narrowing import closable, close
from .reshaping import free, json_text, optional, shown_name, union
from .run import (
    ALL_KINDS,
    FOR_TYPE,
    FOR_TYPE_SETS,
    KIND_SETS,
    MAX_NODES,
    PLAIN,
    TYPED_KEYWORDS,
    Lowering,
    NotPresentable,
    Path,
    Run,
    constraining,
    new_tuple,
    types_of,
)
from .tables import HostProfile
from .widening import (
    accepted,
    choices,
    combinators,
    drop,
    located,
    reshaped_choices,
    resolve,
    root_object,
    write_notes,
)

__all__ = ["Lowered", "Step", "StepKind", "lower"]


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
    run = Run(schema, host)
    if not isinstance(schema, dict):
        return Lowered(host.name, None, (), ("the inputSchema is not an object schema",))
    try:
        out, mapping, _kinds = node(run, root_object(run, schema), "")
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
    steps = tuple(run.steps)
    return Lowered(
        host.name,
        None if reasons else out,
        steps,
        reasons,
        mapping,
        issues,
        run.maps,
        located=_located(run, steps),
        moved=run.located,
    )


def _located(run: Run, steps: tuple[Step, ...]) -> tuple[str, ...]:
    """The places in the server's document of the steps that leave a constraint unshown where the pass walked
    a node built from elsewhere (an inlined ``$ref``, a merged ``allOf`` or root alternative: :attr:`Run.moves`):
    :attr:`Lowered.located`; a value shown as JSON text is told by the instance pointer instead."""
    if not run.located:
        return ()
    return tuple(where for i, wheres in run.located.items() if unshown(steps[i]) for where in wheres)


def node(run: Run, schema: Any, path: Path) -> Lowering:
    """One node of the server's schema, lowered (the dispatch: references, permissive and typed hosts)."""
    run.nodes += 1
    if run.nodes > MAX_NODES:
        raise NotPresentable(f"the lowered schema would exceed {MAX_NODES} nodes")
    if schema is True or schema is False:
        if schema is False:
            run.step("widening", "dropped", path, "false")
        return free(run, schema, path)
    if "$ref" in schema:
        return ref(run, schema, path)
    if not run.host.typed_nodes:
        return generic(run, schema, path), None, ALL_KINDS
    t = schema.get("type")
    if type(t) is str:  # the common leaf, which the host takes as it stands: itself, no copy
        keys = run.leaves.get(t)
        if keys is not None and type(schema.get("description", "")) is str:
            if keys.issuperset(schema):
                return schema, None, KIND_SETS[t]
            if t == "string" and _string_choices(run, schema):
                return schema, None, KIND_SETS[t]
    if not _COMBINATORS.isdisjoint(schema):
        return combined(run, schema, path)
    return typed(run, schema, path)


def _string_choices(run: Run, schema: dict[str, Any]) -> bool:
    """Whether ``schema`` is a string leaf whose ``enum`` the host is shown as it stands (every
    choice a string, within the host's limit): what :func:`one_type` would build, equal to it."""
    choices = schema.get("enum")
    if type(choices) is not list or not run.enum_leaf.issuperset(schema):
        return False
    limits = run.host.limits
    return (limits is None or len(choices) <= limits.enum_values // 2) and all(type(v) is str for v in choices)


def ref(run: Run, schema: dict[str, Any], path: Path) -> Lowering:
    """A local ``$ref``: its target inlined (widening); a recursive one kept in ``$defs`` where the
    host takes ``$ref``, else shown as JSON text (reshaping)."""
    key, target = resolve(run, schema["$ref"])
    notes: list[str] = []
    for k in constraining(schema):
        if k != "$ref":
            drop(run, schema, k, path, notes)
    if key in run.stack:  # recursion
        if not run.host.refs:
            run.step("reshaping", "json-text", path, "a recursive reference, shown as JSON text")
            return json_text(schema, run.schema)
        name = run.def_names.setdefault(key, f"d{len(run.def_names)}")
        run.step("widening", "ref", path, f"a recursive reference, kept as #/$defs/{name}")
        return {"$ref": f"#/$defs/{name}"}, Ref(name, run.maps), ALL_KINDS
    run.stack.append(key)
    run.step("widening", "inlined", path + "/$ref", schema["$ref"])
    where = located(run, schema["$ref"])
    depth = len(run.moves)
    if where is not None:  # the steps inside, by their place in the document (an inner reference's: its own)
        run.moves.append({path: ("#" + where,)})
    try:
        out, mapping, kinds = node(run, target, path)
    finally:
        run.stack.pop()
        del run.moves[depth:]
    if key in run.def_names and run.def_names[key] not in run.defs:
        name = run.def_names[key]
        run.defs[name] = out
        run.maps[name] = mapping
    if isinstance(schema.get("description"), str) and out.get("description") is None:
        out = {**out, "description": schema["description"]}
    return write_notes(dict(out), notes), mapping, kinds


# --- the permissive hosts: keep what is accepted, drop the rest -----------------------------------


def generic(run: Run, schema: dict[str, Any], path: Path) -> dict[str, Any]:
    """A node for a host without typed nodes: every keyword it takes kept (subschemas lowered),
    the others dropped into the text; an array given ``items: {}`` where the host needs it. A node
    of keywords the host takes, none holding a subschema, is returned as it is (no copy)."""
    host = run.host
    if run.plain.issuperset(schema) and not (host.array_items and "array" in (types_of(schema) or ())):
        return schema
    out: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in schema.items():
        if key not in host.keywords and key != "description":
            drop(run, schema, key, path, notes)
            continue
        if key in ("$defs", "definitions"):
            continue  # references are inlined (recursive ones kept in the root's $defs)
        out[key] = _generic_value(run, key, value, path)
    types = types_of(schema) or []
    if host.array_items and "array" in types and not isinstance(schema.get("items"), dict):
        if isinstance(schema.get("items"), list):
            drop(run, schema, "items", path, notes)
        out["items"] = {}
        run.step("widening", "items", path, "an array without `items` shown with `items: {}` (any element)")
    return write_notes(out, notes)


def _generic_value(run: Run, key: str, value: Any, path: Path) -> Any:
    if type(value) is bool and key in KEYWORD_BOOLEANS:
        return value
    if key in SCHEMA_VALUES and type(value) in (dict, bool):
        return node(run, value, f"{path}/{key}")[0]
    if (key in SCHEMA_LISTS or key == "items") and type(value) is list:
        return [node(run, v, f"{path}/{key}/{i}")[0] for i, v in enumerate(value)]
    if (key in SCHEMA_MAPS or key == "dependencies") and type(value) is dict:
        return {
            name: node(run, v, f"{path}/{key}/{escape_token(name)}")[0] if type(v) in (dict, bool) else v
            for name, v in value.items()
        }
    return value


# --- the typed hosts (OpenAI strict, Gemini) --------------------------------------------------------


def combined(run: Run, schema: dict[str, Any], path: Path) -> Lowering:
    """A node with combinators for a host that needs every node typed: the combinators first
    (``widening.combinators``), then an ``anyOf`` or the node's type rule (:func:`typed`). The places a
    merged ``allOf`` or a ``oneOf`` shown as ``anyOf`` relocate (:attr:`Run.moves`) hold for this node only."""
    depth = len(run.moves)
    schema = combinators(run, schema, path)
    out = any_of(run, schema, path) if "anyOf" in schema else typed(run, schema, path)
    del run.moves[depth:]
    return out


def typed(run: Run, schema: dict[str, Any], path: Path) -> Lowering:
    """A node for a host that needs every node typed, past its combinators (:func:`combined`): one rule per
    type (a type list as ``anyOf`` of one node per type: widening)."""
    t = schema.get("type")
    if type(t) is str:
        return one_type(run, schema, t, path)
    types = types_of(schema)
    if types is None:
        values = (
            schema["enum"] if type(schema.get("enum")) is list else [schema["const"]] if "const" in schema else None
        )
        if values is None:
            return free(run, schema, path)
        types = sorted({"integer" if kind_of(v) == "number" and is_integer(v) else kind_of(v) for v in values})
        if "number" in types and "integer" in types:
            types.remove("integer")
    if not types:
        return free(run, schema, path)
    if len(types) == 1:
        return one_type(run, schema, types[0], path)
    with_null = "null" in types and not run.host.null_type
    if with_null and len(types) == 2:  # (red team 33: `check --host gemini` said anyOf for what it shows nullable)
        run.step("widening", "nullable", path + "/type", "a type or null shown as nullable")
    else:
        run.step("widening", "anyOf", path + "/type", "a list of types shown as anyOf")
    notes: list[str] = []
    for key in constraining(schema):
        if key not in _TYPE_RULES and not any(key in keys for keys in FOR_TYPE.values()):
            drop(run, schema, key, path, notes)
    schema = write_notes(dict(schema), notes)
    branches = [one_type(run, schema, t, path, quiet=True) for t in types if not (with_null and t == "null")]
    return union(run, branches, schema, path, with_null=with_null)


_COMBINATORS: Final = frozenset({"oneOf", "allOf", "anyOf"})
_TYPE_RULES: Final = ("type", "enum", "const", "items", "properties", "required", "additionalProperties")


def any_of(run: Run, schema: dict[str, Any], path: Path) -> Lowering:
    """An ``anyOf``: each branch lowered (Gemini's ``null`` branch as ``nullable``), then united."""
    branches = schema["anyOf"]
    if any(b is True or (isinstance(b, dict) and not constraining(b)) for b in branches):
        return free(run, schema, path)
    with_null = False
    lowered = []
    for i, branch in enumerate(branches):
        if not run.host.null_type and isinstance(branch, dict) and branch.get("type") == "null":
            with_null = True
            continue
        lowered.append(node(run, branch, f"{path}/anyOf/{i}"))
    return union(run, lowered, schema, path, with_null=with_null)


def one_type(run: Run, schema: dict[str, Any], t: str, path: Path, *, quiet: bool = False) -> Lowering:
    """A node of one type ``t``: its keywords the host takes kept, the others dropped into the
    text (``quiet``: one branch of a type list, whose drops the list recorded)."""
    host = run.host
    notes: list[str] = []
    out: dict[str, Any] = {"type": t}
    if isinstance(schema.get("description"), str):
        out["description"] = schema["description"]
    if t == "null" and not host.null_type:
        return free(run, schema, path)
    if "default" in schema and not quiet:
        drop(run, schema, "default", path, notes)
    if not PLAIN.issuperset(schema):  # the common node holds only annotations and structure
        own = FOR_TYPE_SETS.get(t, frozenset())
        for key in schema:
            if key in PLAIN:
                continue
            if key not in own:
                if key not in TYPED_KEYWORDS and not quiet:
                    drop(run, schema, key, path, notes)  # not, if/then/else, ...: no type of their own
                continue
            if accepted(run, key, schema[key]):
                out[key] = schema[key]
                continue
            drop(run, schema, key, path, notes)
    if "enum" in schema or "const" in schema:
        choices(run, schema, t, out, path, notes)
    if t == "array":
        return array(run, schema, out, path, notes)
    if t == "object":
        return object_(run, schema, out, path, notes)
    return write_notes(out, notes), None, KIND_SETS[t]


def array(run: Run, schema: dict[str, Any], out: dict[str, Any], path: Path, notes: list[str]) -> Lowering:
    """An array: its ``items`` lowered (a draft-07 tuple's positions are written as text)."""
    items = schema.get("items", True)
    if isinstance(items, list):  # draft-07 tuple: positions shown as text, elements as any value
        drop(run, schema, "items", path, notes)
        items = True
    if "prefixItems" in schema:
        items = True
    child, mapping, _ = node(run, items, path + "/items")
    out["items"] = child
    found: Map = Arr(mapping) if mapping is not None else None
    return write_notes(reshaped_choices(run, out, found, path, notes), notes), found, KIND_SETS["array"]


def object_(run: Run, schema: dict[str, Any], out: dict[str, Any], path: Path, notes: list[str]) -> Lowering:
    """An object: its properties lowered and, where the host needs, renamed (reshaping), optional
    ones made nullable (reshaping) and the object closed (narrowing)."""
    host = run.host
    props: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    extra = schema.get("additionalProperties", True)
    root = path == ""
    if not props and not root:
        return free(run, schema, path, "an object without declared properties")
    limits = host.limits
    if limits is not None and not root and run.depth + 1 > limits.depth:
        return free(run, schema, path, f"an object nested past the host's {limits.depth} levels")
    required = [r for r in schema.get("required", []) if isinstance(r, str)]
    undeclared = [r for r in required if r not in props]
    if host.closed_objects:
        why = closable(schema, undeclared, root=root)
        if why is not None:
            return free(run, schema, path, why)
    elif undeclared:
        run.step("widening", "dropped", path + "/required", "required")
        notes.append(f"also required: {', '.join(undeclared)}")
    if "additionalProperties" in schema and not host.closed_objects:
        if "additionalProperties" not in host.keywords:
            drop(run, schema, "additionalProperties", path, notes)
        else:
            out["additionalProperties"] = node(run, extra, path + "/additionalProperties")[0]
    members: dict[str, Member] = {}
    shown_props: dict[str, Any] = {}
    changed = False
    below = path + "/properties/"
    run.depth += 1
    leaves = run.leaves
    try:
        lowered: list[tuple[str, Path, Lowering]] = []
        for name, sub in props.items():
            where = below + (name if "/" not in name and "~" not in name else escape_token(name))
            if leaves and type(sub) is dict and run.nodes < MAX_NODES:  # node()'s common leaf, without the call
                t = sub.get("type")
                keys = leaves.get(t) if type(t) is str else None
                if keys is not None and keys.issuperset(sub) and type(sub.get("description", "")) is str:
                    run.nodes += 1
                    lowered.append((name, where, (sub, None, KIND_SETS[t])))  # type: ignore[index]
                    continue
            lowered.append((name, where, node(run, sub, where)))
    finally:
        run.depth -= 1
    fitting = None if host.property_names is None or (known := fitting_names(host)).issuperset(props) else known
    optional_ones = host.closed_objects and (set(props) - set(required))
    for name, where, (child, mapping, kinds) in lowered:
        shown = name if fitting is None or name_fits(host, fitting, name) else shown_name(run, name, path)
        if shown != name:
            changed = True
        if shown in members:
            raise NotPresentable(f"`{path or '/'}`: two property names become `{shown}` for the host")
        null_absent = narrowed_null = False
        if optional_ones and name in optional_ones:
            null_absent = True
            if root and "null" in kinds and name in run.required_somewhere:
                raise NotPresentable(
                    f"`{where}`: an alternative of the root requires it and takes null, which means absent under the "
                    "others: no exact inverse"
                )
            child, narrowed_null = optional(run, child, kinds, where)
        members[shown] = new_tuple(Member, (name, mapping, null_absent, narrowed_null))
        shown_props[shown] = child
        if mapping is not None or null_absent:
            changed = True
    out["properties"] = shown_props
    if host.closed_objects:
        close(run, out, extra, path)
    else:
        shown_required = [as_shown for as_shown, m in members.items() if m.original in required]
        if shown_required:
            out["required"] = shown_required
    if not props and "properties" not in schema and not host.closed_objects:
        del out["properties"]
    closed = host.closed_objects
    found: Map = Obj(members, closed, closed and extra is not False) if changed or closed else None
    return write_notes(reshaped_choices(run, out, found, path, notes), notes), found, KIND_SETS["object"]
