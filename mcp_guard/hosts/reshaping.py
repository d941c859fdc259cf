"""Reshaping steps of the lowering: changes of shape a host forces, each with an exact inverse (issue 24, item 3).

Each step returns, beside the shown schema, the mapping node (``hosts.inverse``) that takes the
model's arguments back to the server's form exactly:

- :func:`json_text` / :func:`free`: a value the host cannot describe (any JSON value, a free-form
  object, an array without items, a recursive reference on a host without ``$ref``) is shown as a
  string of JSON text, parsed back (``inverse.JSON_TEXT``);
- :func:`nullable`: OpenAI strict's optional property, shown required and nullable; its ``null``
  maps back to "absent" (``inverse.Member.null_absent``; the driver records the step);
- :func:`shown_name`: a property name the host refuses, renamed (``inverse.Obj``; a long one cut, with a
  short hash of the server's name);
- :func:`union`: an ``anyOf`` of lowered branches, with the :class:`~.inverse.Choice` that picks
  the branch of a value exactly (by its JSON kind, its key set, or a tag member).

A reshaping that would have no exact inverse (a choice whose branches the mapping back could not
tell apart) raises :class:`~.run.NotPresentable`: the tool is then not presentable, never
approximated. Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from ..core.json_values import escape_token
from .inverse import JSON_TEXT, Choice, Map, Obj, Tag
from .narrowing import null_is_absent
from .run import ALL_KINDS, ANNOTATIONS, Lowering, NotPresentable, Path, Run, short

__all__ = ["free", "json_text", "nullable", "optional", "shown_name", "union"]


def json_text(node: Any, root: Any = None) -> Lowering:
    """A value the host cannot describe, shown as a string of JSON text (the server's schema of it
    written into the description). ``root``: the server's whole schema, whose ``$defs``/``definitions``
    entries the node refers to (a recursive reference) are written in with it, so the text names no
    definition the model was not given (red team 33)."""
    said = node.get("description") if isinstance(node, dict) else None
    bare = {k: v for k, v in node.items() if k not in ANNOTATIONS} if isinstance(node, dict) else {}
    defs = _definitions(bare, root) if root is not None else {}
    shape = (
        f" matching the JSON Schema {short({**bare, **defs} if defs else bare, 1200 if defs else 300)}" if bare else ""
    )
    text = f"Write this value as JSON text (a JSON value{shape})."
    out = {"type": "string", "description": f"{said}\n{text}" if isinstance(said, str) and said else text}
    return out, JSON_TEXT, frozenset({"string"})


def _definitions(node: Any, root: Any) -> dict[str, dict[str, Any]]:
    """The ``$defs``/``definitions`` entries of ``root`` that ``node`` refers to, directly or through one
    another (``{"$defs": {name: schema}}``); references of another form are left as they are."""
    found: dict[str, dict[str, Any]] = {}
    todo = [node]
    while todo:
        value = todo.pop()
        if isinstance(value, list):
            todo.extend(value)
            continue
        if not isinstance(value, dict):
            continue
        todo.extend(v for k, v in value.items() if k != "$ref")
        ref = value.get("$ref")
        if not isinstance(ref, str):
            continue
        for container in ("$defs", "definitions"):
            prefix = f"#/{container}/"
            name = ref[len(prefix) :] if ref.startswith(prefix) else None
            if name is None or "/" in name or name in found.get(container, {}):
                continue
            defs = root.get(container) if isinstance(root, dict) else None
            if isinstance(defs, dict) and name in defs:
                found.setdefault(container, {})[name] = defs[name]
                todo.append(defs[name])
    return found


def free(run: Run, node: Any, path: Path, what: str = "a value of any JSON type") -> Lowering:
    """Any JSON value: ``{}`` where the host takes an untyped node (no step), else JSON text."""
    if not run.host.typed_nodes:
        out: dict[str, Any] = {}
        if isinstance(node, dict) and isinstance(node.get("description"), str):
            out["description"] = node["description"]
        if node is False:
            out["not"] = {}
        return out, None, ALL_KINDS
    run.step("reshaping", "json-text", path, f"{what}, shown as JSON text")
    return json_text(node)


def nullable(child: dict[str, Any]) -> dict[str, Any]:
    """``child`` shown so that it also takes ``null`` (a new node; ``child`` itself when it does)."""
    if child.get("type") == "null":
        return child
    if "anyOf" in child:
        branches = child["anyOf"]
        if any(b.get("type") == "null" for b in branches):
            return child
        return {**child, "anyOf": [*branches, {"type": "null"}]}
    if "description" not in child:
        return {"anyOf": [child, {"type": "null"}]}
    inner = dict(child)
    description = inner.pop("description")
    out: dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
    if description is not None:
        out["description"] = description
    return out


def optional(run: Run, child: dict[str, Any], kinds: frozenset[str], path: Path) -> tuple[dict[str, Any], bool]:
    """A property its object does not require, on a host that requires every property (OpenAI
    strict): shown nullable, its ``null`` mapped back to absent. Returns the shown child and whether
    the server's schema takes ``null`` there too (then an explicit ``null`` cannot be sent: the
    narrowing ``null-is-absent`` is recorded instead of the reshaping)."""
    also_null = "null" in kinds
    if also_null:
        null_is_absent(run, path)
    else:
        run.step("reshaping", "nullable", path, "optional: shown required and nullable; null maps back to absent")
    return nullable(child), also_null


MAX_PROPERTY_NAME: Final = 64
"""The longest property name Gemini takes (``hosts.tables``: ``[a-zA-Z_][a-zA-Z0-9_]{0,63}``)."""


def shown_name(run: Run, name: str, path: Path) -> str:
    """The name a property is shown under (itself when the host takes it; else renamed, a step): a
    character the host refuses becomes ``_``, a first one it refuses gets a ``_`` before it, and a name
    past :data:`MAX_PROPERTY_NAME` keeps its head and ends with ``_`` and 8 hex digits of the SHA-256 of
    the server's name (as ``hosts.names`` makes tool names). Two names shown alike make the tool not
    presentable (``lowering.object_``): never merged."""
    pattern = run.host.property_names
    if pattern is None or pattern.fullmatch(name):
        return name
    shown = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
    if not shown or not (shown[0].isalpha() or shown[0] == "_"):
        shown = "_" + shown
    if len(shown) > MAX_PROPERTY_NAME:  # its head, and 8 hex digits of its SHA-256: two long names stay apart
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        shown = f"{shown[: MAX_PROPERTY_NAME - 9]}_{digest}"
    run.step("reshaping", "renamed", f"{path}/properties/{escape_token(name)}", f"property shown as `{shown}`")
    return shown


def union(run: Run, branches: list[Lowering], node: dict[str, Any], path: Path, *, with_null: bool) -> Lowering:
    """An anyOf of lowered branches, with its mapping choice; ``with_null``: the node also takes
    ``null``, shown as Gemini's ``nullable`` on each branch.

    Raises:
        NotPresentable: two branches of one JSON kind map back differently and nothing tells
            a value's branch.
    """
    if not branches or any(m is JSON_TEXT for _, m, _k in branches):
        return free(run, node, path, "a union with a branch of any value (or null alone)")
    if with_null:
        branches = [({**o, "nullable": True}, m, k | {"null"}) for o, m, k in branches]
    kinds = frozenset().union(*(k for _, _, k in branches)) if branches else frozenset()
    mapping: Map
    if len(branches) == 1:
        out, mapping, kinds = branches[0]
    else:
        out = {"anyOf": [o for o, _, _ in branches]}
        mapping = _choice(run, branches, path)
    if isinstance(node.get("description"), str) and "description" not in out:
        out = {**out, "description": node["description"]}
    return out, mapping, kinds


def _choice(run: Run, branches: list[Lowering], path: Path) -> Map:
    if all(m is None for _, m, _ in branches):
        return None
    closed = run.host.closed_objects
    tag = _tag(branches)
    for kind in ("object", "array", "string"):  # every mapping is the identity on null, booleans, numbers
        among = [(o, m) for o, m, k in branches if kind in k]
        if len(among) < 2 or all(m is None for _, m in among):
            continue
        keys = [frozenset(o.get("properties", {})) if closed and kind == "object" else None for o, _ in among]
        if kind == "object" and None not in keys and len(set(keys)) == len(keys):
            continue  # closed objects with all-required properties: the key set picks the branch
        if kind == "object" and tag is not None:
            continue  # a required member with a constant per branch picks it
        raise NotPresentable(
            f"`{path or '/'}`: alternatives of one JSON type map back differently and could not be told apart"
        )
    out = []
    for o, m, k in branches:
        keyset = frozenset(o["properties"]) if closed and "properties" in o else None
        out.append((k, keyset, m))
    return Choice(tuple(out), tag)


def _tag(branches: list[Lowering]) -> Tag | None:
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
