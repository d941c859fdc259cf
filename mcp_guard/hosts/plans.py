"""The mapping back of a tool's calls, compiled once per lowering (issue 24, items 3 and 6).

:func:`compile_back` turns a mapping tree (``hosts.inverse``) into one function of the model's
arguments, built of closures specialised to each node, so a call pays no generic walk over the
tree: ``None`` when the tree is the identity (the call is then a dictionary lookup), and where
only a part of the arguments is reshaped, only that part is visited. A value that needs no change
is returned as it is (the same object, no copy); the result equals :func:`.inverse.back`'s on
every value (``tests/hosts/test_plans.py`` compares them on the corpus), raising the same
:class:`~.inverse.BackError` (the pointer is found by ``inverse.back`` itself, on the rare
argument that holds a JSON text that does not parse).

Specialisations of an object node (``inverse.Obj``), the common case:

- no member renamed or reshaped inside, some optional ones whose ``null`` means absent (OpenAI
  strict): the arguments as they are when they hold no ``null`` at the top (one C-level scan),
  else without the ``null`` members;
- no member renamed, some reshaped inside: only those members visited, the object copied only
  when one of them changed;
- a member renamed: one pass over the arguments' keys, in their order.

Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .inverse import JSON_TEXT, Arr, Choice, Map, Obj, Ref, back, parse_json_text, pick

__all__ = ["UNBUILT", "Back", "compile_back"]

Back = Callable[[Any], Any]
"""The compiled mapping back: the model's arguments → the server-side arguments."""

UNBUILT: Final = object()
"""Marks a plan not built yet (``Lowered`` builds it on first use)."""


class _Unparsed(Exception):
    """A JSON text that does not parse, or a property sent under a server-side name the model was shown
    under another (``inverse.back`` then says where, and why)."""


def _json_text(value: Any) -> Any:
    if type(value) is not str:
        raise _Unparsed  # (outside the shown schema: a value shown as JSON text is a string)
    try:
        return parse_json_text(value)
    except (ValueError, RecursionError):
        raise _Unparsed from None


def compile_back(node: Map) -> Back | None:
    """The mapping back of ``node`` as one function (None: the identity).

    The function raises :class:`~.inverse.BackError` (with its instance pointer) where a shown
    JSON text does not parse, as :func:`.inverse.back` does; it never changes its argument.
    """
    fast = _compile(node, {})
    if fast is None or not _may_refuse(node, set()):
        return fast  # (no JSON text, no renamed member: nothing to refuse, no pointer to find)

    def mapped(value: Any) -> Any:
        try:
            return fast(value)
        except _Unparsed:
            return back(node, value)  # the reference walk finds the pointer, and raises

    return mapped


def _may_refuse(node: Map, seen: set[str]) -> bool:
    """Whether the compiled ``node`` may raise :class:`_Unparsed`: it holds a JSON text or a renamed member
    (a recursive reference is followed once)."""
    if node is None:
        return False
    if node is JSON_TEXT:
        return True
    if type(node) is Obj:
        return bool(node.renamed) or any(_may_refuse(m.node, seen) for m in node.members.values())
    if type(node) is Arr:
        return _may_refuse(node.items, seen)
    if type(node) is Ref:
        if node.name in seen:
            return False
        seen.add(node.name)
        return _may_refuse(node.table.get(node.name), seen)
    assert type(node) is Choice
    return any(_may_refuse(m, seen) for _, _, m in node.branches)


def _compile(node: Map, refs: dict[str, Back | None]) -> Back | None:
    if node is None:
        return None
    if node is JSON_TEXT:
        return _json_text
    if type(node) is Obj:
        return _object(node, refs)
    if type(node) is Arr:
        return _array(_compile(node.items, refs))
    if type(node) is Ref:
        return _ref(node, refs)
    assert type(node) is Choice
    return _choice(node, refs)


def _array(items: Back | None) -> Back | None:
    if items is None:
        return None

    def array(value: Any) -> Any:
        if type(value) is not list:
            return value
        out = [items(item) for item in value]
        return value if all(a is b for a, b in zip(out, value, strict=True)) else out

    return array


def _ref(node: Ref, refs: dict[str, Back | None]) -> Back:
    """A recursive reference: its target compiled on first use (the table is filled after the
    lowering, and a target may refer to itself)."""
    name, table = node.name, node.table
    missing = object()

    def ref(value: Any) -> Any:
        found = refs.get(name, missing)
        if found is missing:
            found = refs[name] = _compile(table.get(name), refs)
        return value if found is None else found(value)  # type: ignore[operator]

    return ref


def _choice(node: Choice, refs: dict[str, Back | None]) -> Back | None:
    compiled = {id(m): _compile(m, refs) for _, _, m in node.branches}
    if all(fn is None for fn in compiled.values()):
        return None

    def choice(value: Any) -> Any:
        fn = compiled.get(id(pick(node, value)))  # no branch of the value's kind: as it is
        return value if fn is None else fn(value)

    return choice


def _object(node: Obj, refs: dict[str, Back | None]) -> Back | None:
    members = node.members
    if any(shown != m.original for shown, m in members.items()):
        return _renaming(node, refs)
    nulls = frozenset(shown for shown, m in members.items() if m.null_absent)
    inner = [(shown, fn) for shown, m in members.items() if (fn := _compile(m.node, refs)) is not None]
    optional = tuple(nulls)  # (dropped from a copy where null: the others keep their order)
    if not inner:
        if not nulls:
            return None

        def absent_nulls(value: Any) -> Any:
            if type(value) is not dict or None not in value.values():
                return value
            out = value.copy()  # (a fifth faster than a comprehension over every member)
            get = out.get
            for key in optional:
                if get(key, out) is None:
                    del out[key]
            return out

        return absent_nulls

    def patched(value: Any) -> Any:
        if type(value) is not dict:
            return value
        out: dict[str, Any] | None = None
        for key, fn in inner:
            if key in value:
                item = value[key]
                if item is None and key in nulls:
                    continue  # absent: dropped below
                mapped = fn(item)
                if mapped is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = mapped
        if nulls and None in value.values():  # the model's nulls mean absent (not a JSON text that parsed to null)
            if out is None:
                out = value.copy()
            get = value.get
            for key in optional:
                if get(key, value) is None:
                    del out[key]
        return value if out is None else out

    return patched


def _renaming(node: Obj, refs: dict[str, Back | None]) -> Back:
    plan = {shown: (m.original, _compile(m.node, refs), m.null_absent) for shown, m in node.members.items()}
    renamed = node.renamed

    def renaming(value: Any) -> Any:
        if type(value) is not dict:
            return value
        out: dict[str, Any] = {}
        for key, item in value.items():
            member = plan.get(key)
            if member is None:
                if key in renamed:
                    raise _Unparsed  # a server-side name the model was not shown: the reference walk refuses it
                out[key] = item
                continue
            original, fn, null_absent = member
            if item is None and null_absent:
                continue
            out[original] = item if fn is None else fn(item)
        return out

    return renaming
