"""The exact inverses of the lowering's reshaping steps, applied to arguments (issue 24, item 3).

The lowering (``hosts.lowering``) builds, beside the schema the model is shown, a tree of *mapping
nodes* that mirrors where it reshaped: :func:`back` takes the model's arguments (valid under the
shown schema) to the arguments the server's own schema judges, and :func:`present` takes
arguments of the server's schema to the shown schema's (tests and examples). ``None`` is the
identity at a node. Nodes:

- :data:`JSON_TEXT`: the value was shown as a string holding JSON text; ``back`` parses it
  (a value that is not a string lies outside the shown schema and is refused; duplicate keys,
  ``NaN`` and ``Infinity`` are refused; a literal no double holds stays exact,
  ``core.json_values.Inexact``), ``present`` writes it.
- :class:`Obj`: an object's members: a shown name that differs from the server's (``renamed``),
  a member whose ``null`` means "absent" (OpenAI strict's optional property, ``null_absent``),
  the members' own nodes; ``closed`` records that the shown object admits no other key (a
  narrowing: it limits what the model may send, never what the guard accepts).
- :class:`Arr`: every element through one node.
- :class:`Choice`: an ``anyOf`` whose branches map differently; the branch is picked by the
  value's JSON kind and, for closed objects, by its exact key set (the lowering refuses a
  choice it could not pick exactly: the tool is then not presentable).
- :class:`Ref`: a recursive ``$ref`` kept in ``$defs``: the node is looked up in its table.

A value ``back`` cannot map (a JSON text that does not parse, a value shown as JSON text sent as
anything but a string) gives a :class:`BackError` with
its instance pointer; the session refuses the call with it. Messages hold no argument values.
Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from ..core.json_values import escape_token, literal_float, literal_int

__all__ = ["JSON_TEXT", "Arr", "BackError", "Choice", "JsonText", "Map", "Member", "Obj", "Ref", "back", "json_text_at",
           "kind_of", "narrowed", "parse_json_text", "pick", "present", "shown_pointer"]  # fmt: skip


class JsonText:
    """The value was shown as a string of JSON text (one instance: :data:`JSON_TEXT`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "JSON_TEXT"


JSON_TEXT: Final = JsonText()


class Member(NamedTuple):
    """One shown member of an :class:`Obj`: its server-side name, its node, whether null means absent
    (``null_absent``), and whether the server's schema accepts a null there (then an explicit null
    cannot be sent: a narrowing). Immutable (a named tuple: a lowering builds one per property)."""

    original: str
    node: Map
    null_absent: bool = False
    null_narrowed: bool = False


@dataclass(frozen=True, slots=True)
class Obj:
    """An object's members by shown name; ``closed``: no other key may be shown (a narrowing)."""

    members: dict[str, Member]
    closed: bool = False
    narrowed_closed: bool = False

    @property
    def renamed(self) -> dict[str, str]:
        """Server-side names shown under another name -> that name: a key the model sends under the server's
        name instead is refused (mapped back, it would meet or replace the shown one's value)."""
        return {m.original: shown for shown, m in self.members.items() if shown != m.original}

    def shown_name(self, original: str) -> str:
        """The shown name of a server-side member name (itself when not renamed)."""
        for shown, member in self.members.items():
            if member.original == original:
                return shown
        return original


@dataclass(frozen=True, slots=True)
class Arr:
    """Every element of an array through ``items``."""

    items: Map


@dataclass(frozen=True, slots=True)
class Tag:
    """A discriminating member of an ``anyOf`` of objects: every object branch requires it, each
    with its own string constant (``{"type": {"const": "text"}}``): ``shown`` and ``original``
    name it, ``branches`` maps each constant to its branch's index."""

    shown: str
    original: str
    branches: dict[str, int]


@dataclass(frozen=True, slots=True)
class Choice:
    """An ``anyOf``: ``branches`` are (JSON kinds the branch accepts, shown key set of a closed
    object branch or None, node); ``tag``: how objects pick their branch, when a member tells."""

    branches: tuple[tuple[frozenset[str], frozenset[str] | None, Map], ...]
    tag: Tag | None = None


@dataclass(frozen=True, slots=True)
class Ref:
    """A recursive reference: the node of ``$defs/name`` in ``table`` (filled once lowered)."""

    name: str
    table: dict[str, Map] = field(compare=False, repr=False)


Map = JsonText | Obj | Arr | Choice | Ref | None
"""A mapping node (``None``: the identity)."""


class BackError(ValueError):
    """A shown value that cannot be mapped back (``pointer``: where in the arguments)."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(message)
        self.pointer = pointer


def kind_of(value: Any) -> str:
    """The JSON kind of a value: ``object``, ``array``, ``string``, ``number``, ``boolean``, ``null``."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "number"


def _no_constant(text: str) -> Any:
    raise ValueError(text)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate key")
    return out


def parse_json_text(text: str) -> Any:
    """The value a shown JSON text stands for: one JSON value, no duplicate keys, no ``NaN`` or
    ``Infinity``; a literal no double holds stays exact (``core.json_values.literal_float``).

    Raises:
        ValueError: the text is not such a value.
    """
    return json.loads(
        text,
        parse_float=literal_float,
        parse_int=literal_int,
        parse_constant=_no_constant,
        object_pairs_hook=_no_duplicates,
    )


def renamed_text(at: str, key: str, shown: str) -> str:
    """The refusal of a property sent under the server's name where the model was shown another (names are
    the schema's, never a value)."""
    return f"`{at}/{escape_token(key)}` is not a name your model was shown: the property is shown as `{shown}`"


def _parse(text: Any, at: str) -> Any:
    if not isinstance(text, str):
        raise BackError(at, _not_text(at))
    try:
        return parse_json_text(text)
    except RecursionError:
        raise BackError(at, f"`{at or '/'}` holds JSON text nested deeper than the guard maps back") from None
    except ValueError:
        raise BackError(at, _not_text(at)) from None


def _not_text(at: str) -> str:
    return (
        f"`{at or '/'}` must be JSON text (the schema your model was shown asks for this value written as "
        "JSON in a string: one value, no duplicate keys, no NaN or Infinity)"
    )


def _tagged(node: Choice, value: Any, name: str) -> Map | JsonText | bool:
    """The branch a tag names (``False``: no tag decides)."""
    tag = node.tag
    if tag is None or not isinstance(value, dict):
        return False
    key = value.get(name)
    index = tag.branches.get(key) if isinstance(key, str) else None
    return False if index is None else node.branches[index][2]


def pick(node: Choice, value: Any) -> Map:
    """The branch of ``node`` that maps a shown ``value`` back: the one its tag names, else the
    first of the value's JSON kind (for objects, the one whose shown key set is the value's)."""
    if node.tag is not None:
        tagged = _tagged(node, value, node.tag.shown)
        if tagged is not False:
            return tagged  # type: ignore[return-value]
    kind = kind_of(value)
    candidates = [b for b in node.branches if kind in b[0]]
    if kind == "object" and len(candidates) > 1:
        keys = frozenset(value)
        exact = [b for b in candidates if b[1] is not None and b[1] == keys]
        candidates = exact or candidates
    return candidates[0][2] if candidates else None


def back(node: Map, value: Any, at: str = "") -> Any:
    """The server-side value of a shown ``value`` (raises :class:`BackError` where it cannot map).

    Unknown keys and values of kinds the node does not expect pass unchanged: the guard judges them.
    A value shown as JSON text is the exception: there the shown schema allows a string only, and a
    value of another kind has no inverse, so it is refused (red team rt39b F1: a raw number passed
    unchanged, and a refusal below it spoke of "the JSON written" where none was).
    The reference walk, with instance pointers; a call's path uses the same mapping compiled once
    per tool (``hosts.plans``), which comes here only to say where a JSON text does not parse.
    """
    return _back_at(node, value, at)


def _back_at(node: Map, value: Any, at: str) -> Any:
    if node is None:
        return value
    if type(node) is Ref:
        return _back_at(node.table.get(node.name), value, at)
    if node is JSON_TEXT:
        return _parse(value, at)
    if type(node) is Obj:
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        for key, item in value.items():
            member = node.members.get(key)
            if member is None:
                if key in node.renamed:
                    raise BackError(f"{at}/{escape_token(key)}", renamed_text(at, key, node.renamed[key]))
                out[key] = item
                continue
            if member.null_absent and item is None:
                continue
            out[member.original] = _back_at(member.node, item, f"{at}/{escape_token(key)}")
        return out
    if type(node) is Arr:
        if not isinstance(value, list):
            return value
        return [_back_at(node.items, item, f"{at}/{i}") for i, item in enumerate(value)]
    assert type(node) is Choice
    return _back_at(pick(node, value), value, at)


def _pick_present(node: Choice, value: Any) -> Map:
    if node.tag is not None:
        tagged = _tagged(node, value, node.tag.original)
        if tagged is not False:
            return tagged  # type: ignore[return-value]
    kind = kind_of(value)
    candidates = [b for b in node.branches if kind in b[0]]
    if kind == "object" and len(candidates) > 1:
        for branch in candidates:
            sub = branch[2]
            if type(sub) is Obj and {sub.shown_name(k) for k in value} <= set(sub.members):
                return sub
    return candidates[0][2] if candidates else None


def present(node: Map, value: Any) -> Any:
    """The shown value of a server-side ``value`` (the inverse of :func:`back` on its domain)."""
    if node is None:
        return value
    if type(node) is Ref:
        return present(node.table.get(node.name), value)
    if node is JSON_TEXT:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    if type(node) is Obj:
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        seen: set[str] = set()
        for key, item in value.items():
            shown = node.shown_name(key)
            member = node.members.get(shown)
            out[shown] = item if member is None else present(member.node, item)
            seen.add(shown)
        for shown, member in node.members.items():
            if member.null_absent and shown not in seen:
                out[shown] = None
        return out
    if type(node) is Arr:
        return [present(node.items, item) for item in value] if isinstance(value, list) else value
    assert type(node) is Choice
    return present(_pick_present(node, value), value)


def narrowed(node: Map, value: Any, at: str = "") -> str | None:
    """The instance pointer of the first part of ``value`` a narrowing step keeps the model from
    sending (a key a closed object does not show, an explicit null that stands for absent), or None."""
    if node is None or node is JSON_TEXT:
        return None
    if type(node) is Ref:
        return narrowed(node.table.get(node.name), value, at)
    if type(node) is Obj:
        if not isinstance(value, dict):
            return None
        for key, item in value.items():
            shown = node.shown_name(key)
            member = node.members.get(shown)
            where = f"{at}/{escape_token(key)}"
            if member is None:
                if node.closed:
                    return where
                continue
            if member.null_absent and item is None:
                return where
            found = narrowed(member.node, item, where)
            if found is not None:
                return found
        return None
    if type(node) is Arr:
        if not isinstance(value, list):
            return None
        for i, item in enumerate(value):
            found = narrowed(node.items, item, f"{at}/{i}")
            if found is not None:
                return found
        return None
    assert type(node) is Choice
    return narrowed(_pick_present(node, value), value, at)


def _member_node(node: Map, original: str) -> Obj | None:
    """The object node under ``node`` (through references and choices) that declares the server-side member
    ``original``; None when there is none (a choice's branches all show a server-side name alike)."""
    for _ in range(MAX_REF_HOPS):
        if type(node) is Ref:
            node = node.table.get(node.name)
        elif type(node) is Choice:
            found = [m for _, _, m in node.branches if _member_node(m, original) is not None]
            return _member_node(found[0], original) if found else None
        else:
            break
    if type(node) is Obj and any(m.original == original for m in node.members.values()):
        return node
    return None


MAX_REF_HOPS: Final = 64
"""References followed in a row before :func:`shown_pointer` gives up (a reference to a reference...)."""


def shown_pointer(node: Map, pointer: str) -> str:
    """The instance pointer, in the arguments the model sent, of the server-side instance ``pointer`` (each
    member under the name it was shown by); from a value shown as JSON text down, or where the mapping tree
    does not say (an array's element, a choice among branches that do not declare the member), the rest of
    the pointer as it is. ``""`` (the root) is itself."""
    if not pointer.startswith("/"):
        return pointer
    tokens = pointer[1:].split("/")
    out: list[str] = []
    for i, raw in enumerate(tokens):
        token = raw.replace("~1", "/").replace("~0", "~")
        owner = _member_node(node, token) if node is not None and node is not JSON_TEXT else None
        if owner is not None:
            shown = owner.shown_name(token)
            out.append(escape_token(shown))
            node = owner.members[shown].node
            continue
        items = node
        for _ in range(MAX_REF_HOPS):
            if type(items) is not Ref:
                break
            items = items.table.get(items.name)
        if type(items) is Arr and (token.isdigit() or token == "-"):
            out.append(raw)
            node = items.items
            continue
        out += tokens[i:]
        break
    return "/" + "/".join(out)


def _resolved(node: Map) -> Map:
    """``node`` past the references it is (at most :data:`MAX_REF_HOPS` in a row)."""
    for _ in range(MAX_REF_HOPS):
        if type(node) is not Ref:
            break
        node = node.table.get(node.name)
    return node


def json_text_at(node: Map, pointer: str) -> tuple[str, str] | None:
    """Where the server-side instance ``pointer`` lies inside a value shown as JSON text: ``(the instance
    pointer of that value, the rest of ``pointer`` within its JSON)`` (the rest ``""`` when ``pointer`` is that
    value itself); None when no JSON text holds it, or where the mapping tree does not say (a key the schema
    does not declare, a choice without such a member). Members are followed by their server-side names (as
    ``pointer`` has them), an array's elements by index (in a choice, its first array branch, as :func:`pick`
    takes the first branch of a value's kind); both pointers are server-side."""
    if pointer and not pointer.startswith("/"):
        return None
    tokens = pointer[1:].split("/") if pointer else []
    for i in range(len(tokens) + 1):
        node = _resolved(node)
        if node is JSON_TEXT:
            return "".join("/" + t for t in tokens[:i]), "".join("/" + t for t in tokens[i:])
        if node is None or i == len(tokens):
            return None
        token = tokens[i].replace("~1", "/").replace("~0", "~")
        owner = _member_node(node, token)
        if owner is not None:
            node = owner.members[owner.shown_name(token)].node
            continue
        if not token.isdigit():
            return None
        if type(node) is Choice:
            node = next((m for kinds, _, m in node.branches if "array" in kinds), None)
            node = _resolved(node)
        if type(node) is not Arr:
            return None
        node = node.items
    return None  # (not reached: the loop returns at its last round)
