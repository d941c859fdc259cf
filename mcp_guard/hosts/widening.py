"""Widening steps of the lowering: remove a constraint, or restate it equivalently (issue 24, item 3).

Every argument the server's schema accepts, the shown schema accepts too; the guard still judges
every call against the server's schema, so nothing a widening step removes goes unenforced. The
steps: a keyword the host refuses is dropped and written into the node's ``description`` as text
the model reads (:func:`drop`, :func:`write_notes`); a local ``$ref`` is followed
(:func:`resolve`: the driver inlines its target); ``oneOf`` is shown as ``anyOf`` and ``allOf`` is
merged into its node (:func:`combinators`); the root's combinators are merged into one object
(:func:`root_object`); ``enum``/``const`` keep only the choices of the node's type
(:func:`choices`), and are dropped where the node was reshaped inside (:func:`reshaped_choices`).

Each is a function of the pass's :class:`~.run.Run`; none recurses (the driver does).
Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from ..core.json_values import escape_token
from .inverse import Map
from .run import ANNOTATIONS, NotPresentable, Path, Run, constraining, of_kind, short

__all__ = [
    "accepted",
    "choices",
    "combinators",
    "drop",
    "located",
    "merge_all_of",
    "plain_pattern",
    "reshaped_choices",
    "resolve",
    "root_object",
    "write_notes",
]


_DEFAULT_NOTE = "default "
"""How :func:`drop` notes a ``default`` (an annotation the guard does not check)."""


def write_notes(out: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Write dropped constraints into ``out``'s ``description`` (the model reads them there): ``Also checked:
    maxLength 200.``, and a dropped ``default`` apart, ``Default: "x".`` (the guard checks no default: red
    team 38 F5 read "Also checked: default" as a promise); ``out`` is changed and returned."""
    if notes:
        checked = [n for n in notes if not n.startswith(_DEFAULT_NOTE)]
        defaults = [n.removeprefix(_DEFAULT_NOTE) for n in notes if n.startswith(_DEFAULT_NOTE)]
        parts = [f"Also checked: {'; '.join(checked)}."] if checked else []
        parts += [f"Default: {'; '.join(defaults)}."] if defaults else []
        said = out.get("description")
        extra = " ".join(parts)
        out["description"] = f"{said}\n{extra}" if isinstance(said, str) and said else extra
    return out


def drop(run: Run, node: dict[str, Any], key: str, path: Path, notes: list[str]) -> None:
    """``key`` of ``node`` is not shown as a keyword; its value goes into ``notes`` (the text)."""
    run.step("widening", "annotation" if key in ANNOTATIONS else "dropped", f"{path}/{escape_token(key)}", key)
    if key == "default":
        notes.append(f"{_DEFAULT_NOTE}{short(node[key])}")
    elif key not in ANNOTATIONS:
        notes.append(f"{key} {short(node[key])}")


# --- references ----------------------------------------------------------------------------


def resolve(run: Run, ref: str) -> tuple[str, Any]:
    """The target of a local reference (``#``, ``#/...`` JSON Pointer, or an anchor), with its key.

    Raises:
        NotPresentable: an anchor the schema does not hold.
        KeyError, IndexError, ValueError: a pointer that leads nowhere (``lower`` reports it).
    """
    if ref == "#" or ref == "":
        return "#", run.schema
    if ref.startswith("#/"):
        target: Any = run.schema
        for raw in ref[2:].split("/"):
            token = unquote(raw.replace("~1", "/").replace("~0", "~"))
            target = target[int(token)] if isinstance(target, list) else target[token]
        return ref, target
    found = _anchor(ref.lstrip("#"), run.schema)
    if found is None:
        raise NotPresentable(f"the reference {ref} could not be followed by the lowering")
    return ref, found


def located(run: Run, ref: str) -> str | None:
    """Where the target of a local reference is in the server's schema document, as the JSON Pointer the
    guard's findings name it by (``#/$defs/a%20b`` -> ``/$defs/a b``, ``#`` -> ``""``, an anchor -> the
    place of the node that declares it); None when it is nowhere (``resolve`` raises for it)."""
    if ref == "#" or ref == "":
        return ""
    if ref.startswith("#/"):
        return "".join("/" + escape_token(unquote(t.replace("~1", "/").replace("~0", "~"))) for t in ref[2:].split("/"))
    return _anchor_at(ref.lstrip("#"), run.schema, "")


def _anchor_at(name: str, node: Any, at: str) -> str | None:
    """The pointer of the node under ``node`` (at ``at``) that declares the anchor ``name`` (as :func:`_anchor`)."""
    if isinstance(node, dict):
        if node.get("$anchor") == name or node.get("$id") == "#" + name:
            return at
        items: Any = ((escape_token(k), v) for k, v in node.items())
    elif isinstance(node, list):
        items = ((str(i), v) for i, v in enumerate(node))
    else:
        return None
    for token, value in items:
        found = _anchor_at(name, value, f"{at}/{token}")
        if found is not None:
            return found
    return None


def _anchor(name: str, node: Any) -> Any:
    if isinstance(node, dict):
        if node.get("$anchor") == name or node.get("$id") == "#" + name:
            return node
        for value in node.values():
            found = _anchor(name, value)
            if found is not None:
                return found
    elif isinstance(node, list):
        for value in node:
            found = _anchor(name, value)
            if found is not None:
                return found
    return None


# --- combinators -----------------------------------------------------------------------------


def combinators(run: Run, node: dict[str, Any], path: Path) -> dict[str, Any]:
    """``oneOf`` as ``anyOf``; ``allOf`` merged or dropped; an ``anyOf`` beside other constraints
    dropped into the text (the rest is dropped by the node's type rule)."""
    if "oneOf" in node:
        node = dict(node)
        branches = node.pop("oneOf")
        if "anyOf" in node:
            notes: list[str] = []
            drop(run, {"oneOf": branches}, "oneOf", path, notes)
            node = write_notes(node, notes)
        else:
            run.step("widening", "anyOf", path + "/oneOf", "oneOf shown as anyOf (the guard enforces exactly one)")
            node["anyOf"] = branches
            run.moves.append({path + "/anyOf": (path + "/oneOf",)})
    if "allOf" in node:
        node = merge_all_of(run, node, path)
    if "anyOf" in node and [k for k in constraining(node) if k != "anyOf"]:
        # siblings and branches: keep the siblings, show the branches' as text
        node = dict(node)
        notes = []
        drop(run, node, "anyOf", path, notes)
        del node["anyOf"]
        node = write_notes(node, notes)
    return node


def _branch(run: Run, branch: Any, at: Path) -> tuple[Any, Path]:
    """A branch of a combinator that the lowering merges, and where its keywords are as the guard's findings name
    them: ``at`` (its position), or, for a branch that is only a ``$ref``, its target and the target's place in
    the document, marked ``#`` (:attr:`Run.moves`: relocated no further)."""
    if isinstance(branch, dict) and "$ref" in branch and len(constraining(branch)) == 1:
        where = located(run, branch["$ref"])
        return resolve(run, branch["$ref"])[1], at if where is None else "#" + where
    return branch, at


def merge_all_of(run: Run, node: dict[str, Any], path: Path) -> dict[str, Any]:
    """``allOf`` folded into its node where the branches' keywords do not overlap (objects:
    properties and required unite); else dropped into the text. Returns a new node.

    A merged keyword is walked at its node's place (``/a/maxLength``) but stays, for the guard's findings,
    at its branch's (``/a/allOf/0/maxLength``): each is relocated so (:attr:`Run.moves`, in force until the
    caller has lowered the node), so a refusal for one the host is not shown says so."""
    merged = {k: v for k, v in node.items() if k != "allOf"}
    origins: dict[str, list[str]] = {}  # the merged node's pointer -> where its keyword is in the server's schema
    for i, raw in enumerate(node["allOf"]):
        branch, at = _branch(run, raw, f"{path}/allOf/{i}")
        if not isinstance(branch, dict):
            break
        for key, value in branch.items():
            if key in ANNOTATIONS:
                merged.setdefault(key, value)
                continue
            if key == "properties" and isinstance(merged.get(key), dict) and isinstance(value, dict):
                if set(merged[key]) & set(value):
                    break
                merged[key] = {**merged[key], **value}
            elif key == "required" and isinstance(merged.get(key), list) and isinstance(value, list):
                merged[key] = [*merged[key], *[r for r in value if r not in merged[key]]]
            elif key in merged and merged[key] != value:
                break
            else:
                merged[key] = value
            if key == "properties" and isinstance(value, dict):
                for name in value:
                    token = "/properties/" + escape_token(name)
                    origins[path + token] = [at + token]
            else:
                token = "/" + escape_token(key)
                origins.setdefault(path + token, [path + token] if key in node else []).append(at + token)
        else:
            continue
        notes: list[str] = []
        drop(run, node, "allOf", path, notes)
        return write_notes({k: v for k, v in node.items() if k != "allOf"}, notes)
    run.step("widening", "merged", path + "/allOf", "allOf merged into its node")
    if origins:
        run.moves.append({walked: tuple(places) for walked, places in origins.items()})
    return merged


def root_object(run: Run, schema: dict[str, Any]) -> dict[str, Any]:
    """At the root: a host that refuses combinators there is shown one object whose properties are
    every branch's (``anyOf``/``oneOf``: none required; ``allOf``: merged). Returns a new node."""
    node = dict(schema)
    if node.get("type") in (None, ["object"]):
        node["type"] = "object"
        if schema.get("type") is None:
            run.step("widening", "root", "/type", "the root shown with type object (arguments are objects)")
    if run.host.root_combinators:
        return node
    for key in ("not", "if", "then", "else", "enum", "const"):
        if key in node:
            notes: list[str] = []
            drop(run, node, key, "", notes)
            del node[key]
            node = write_notes(node, notes)
    if "allOf" in node:
        node = merge_all_of(run, node, "")
    for key in ("anyOf", "oneOf"):
        if key not in node:
            continue
        branches = node.pop(key)
        props = dict(node.get("properties", {})) if isinstance(node.get("properties"), dict) else {}
        # a merged property's places in the server's schema, below its pointer in the merged node (Run.moves)
        origins: dict[str, list[tuple[str, str]]] = {
            name: [("", "/properties/" + escape_token(name))] for name in props
        }
        for i, raw in enumerate(branches):
            if isinstance(raw, dict) and "$ref" in raw:
                branch, at = resolve(run, raw["$ref"])[1], located(run, raw["$ref"])
                at = f"/{key}/{i}" if at is None else "#" + at
            else:
                branch, at = raw, f"/{key}/{i}"
            if not isinstance(branch, dict) or not isinstance(branch.get("properties"), dict):
                continue
            wanted = branch.get("required")
            if isinstance(wanted, list):
                run.required_somewhere |= {r for r in wanted if isinstance(r, str)}
            for name, sub in branch["properties"].items():
                place = f"{at}/properties/{escape_token(name)}"
                if name not in props:
                    props[name] = sub
                    origins[name] = [("", place)]
                elif props[name] != sub:
                    props[name] = {"anyOf": [props[name], sub]}
                    origins[name] = [("/anyOf/0" + below, p) for below, p in origins[name]] + [("/anyOf/1", place)]
                else:  # one schema, shown once: its keywords are at both places
                    origins[name].append(("", place))
        if props:
            node["properties"] = props
        group: dict[str, list[str]] = {}
        for name, places in origins.items():
            token = "/properties/" + escape_token(name)
            for below, place in places:
                group.setdefault(token + below, []).append(place)
        moves = {walked: tuple(places) for walked, places in group.items() if places != [walked]}
        if moves:
            run.moves.append(moves)
        notes = [f"the arguments match {'one' if key == 'oneOf' else 'at least one'} of {len(branches)} alternatives"]
        run.step("widening", "root", "/" + key, f"root {key} merged into one object")
        node = write_notes(node, notes)
    return node


# --- keywords of one type ----------------------------------------------------------------------


def accepted(run: Run, key: str, value: Any) -> bool:
    """Whether the host takes this type-specific keyword with this value as it stands."""
    host = run.host
    if key not in host.keywords:
        return False
    if key == "format":
        return host.formats is None or value in host.formats
    return key != "pattern" or plain_pattern(value)


def plain_pattern(pattern: Any) -> bool:
    """A pattern without lookaround, back-references or named groups (the side hosts accept)."""
    return isinstance(pattern, str) and not any(s in pattern for s in ("(?", "\\k", "\\1", "\\2", "\\p", "\\P"))


def choices(run: Run, node: dict[str, Any], t: str, out: dict[str, Any], path: Path, notes: list[str]) -> None:
    """``enum``/``const`` restricted to the type's own values (the others are unreachable in a
    node of type ``t``); dropped where the host takes no such choices or too many."""
    host = run.host
    for key in ("enum", "const"):
        if key not in node:
            continue
        values = of_kind(node[key] if key == "enum" else [node[key]], t)
        if host.string_enums and t != "string":
            drop(run, node, key, path, notes)
            continue
        limit = host.limits.enum_values // 2 if host.limits is not None else None
        if limit is not None and len(values) > limit:
            drop(run, node, key, path, notes)
            continue
        if key == "const" and values and "const" in host.keywords:
            out["const"] = values[0]
        else:
            out["enum"] = values


def reshaped_choices(run: Run, out: dict[str, Any], mapping: Map, path: Path, notes: list[str]) -> dict[str, Any]:
    """``enum``/``const`` on a node reshaped inside are not shown (a choice written as JSON text
    would compare texts, not values: ``0`` and ``0.0`` are one choice, two texts)."""
    if mapping is not None:
        for key in ("enum", "const"):
            if key in out:
                drop(run, out, key, path, notes)
                del out[key]
    return out
