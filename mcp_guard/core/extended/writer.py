"""The generated validator's module: its source, its namespace of constants, fresh names; and the
helpers every generated validator may call (``type_issue``, ``child``, ``where``, :class:`OverBudget`).

Safety of the generated source: it is built from fixed templates and generated names only.
Every value that comes from a schema (property names, bounds, enum choices, pointers, message
texts) is bound in the module namespace as a constant (:meth:`ModuleWriter.const`) and referred
to by name; none is ever spliced into the source.

``w`` in generated code is the call's cell ``[budget, scan flag, memo, keys exact, misses]`` (see ``gen``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from math import isfinite
from types import CodeType, FunctionType
from typing import Any, Final

from ..json_values import canonical_once, escape_token, is_json, is_uncarriable, json_once, json_type_name
from ..report import ARGUMENTS, VALIDATION, Issue

__all__ = [
    "CHAIN_LIMIT",
    "CHUNK_CHARS",
    "Collect",
    "ModuleWriter",
    "OverBudget",
    "Valid",
    "base_namespace",
    "child",
    "missed",
    "type_issue",
    "where",
]

Valid = Callable[[Any, list[Any]], bool]
"""``valid(arguments, cell) -> bool``: the generated fast path."""

Collect = Callable[[Any, str, list[Issue], list[Any]], None]
"""``collect(arguments, pointer, out, cell)``: the generated slow path, appending issues to ``out``."""


def where(instance_pointer: str) -> str:
    """How a message names an argument position: ```/a/0``` or "the arguments" (the root; not "the arguments
    object", which made "the arguments object must be an object, not string")."""
    return f"`{instance_pointer}`" if instance_pointer else ARGUMENTS


class OverBudget(Exception):
    """Raised by generated code when a call's work budget (``budget.MAX_WORK``) runs out."""


_PLAIN_NAMES: dict[type, str] = {str: "string", int: "integer", bool: "boolean", type(None): "null"}
"""JSON type names of the scalar types that are always JSON (see ``json_values.json_type_name``)."""


def type_issue(value: Any, ip: str, type_path: str, expected: str, out: list[Issue], w: list[Any]) -> None:
    """Append the ``type`` finding for ``value`` (doubles: ``standard``, ``strict``); flag (``w[1]``)
    a value the JSON scan must report.

    An uncarriable number gets no ``type`` finding: the scan reports it once, as ``json``.
    (Runs on the per-call slow path: the common types are named without further calls.)
    """
    t = type(value)
    name = _PLAIN_NAMES.get(t)
    if name is None:
        if t is dict or t is list:
            name = "object" if t is dict else "array"
            if not is_json(value):  # each position meets type_issue once per call: no memo needed
                w[1] = 1
        else:
            if is_uncarriable(value) or not is_json(value):
                w[1] = 1
                if is_uncarriable(value):
                    return
            name = json_type_name(value)
    where_ = "`" + ip + "`" if ip else ARGUMENTS  # as where()
    message = where_ + " must be " + expected + ", not " + name + " (type)"
    out.append(tuple.__new__(Issue, (VALIDATION, "type", type_path, ip, message)))


def missed(w: list[Any], key: str, items: list[Any], item: Any) -> bool:
    """Record that an array's fast loop ``key`` failed at ``item`` of ``items``; return False.

    The record (``w[4][key, id(items)]``) is the index of the first item that is ``item`` or
    equal to it in Python (``list.index``): never later than the failing item (an earlier equal
    item may be another JSON value, say ``1`` for ``true``, and passed), so every item before it
    passed. See ``gen.Gen.loop_key``. Costs nothing on a loop that passes, and at
    most a scan of the items the failed loop already tested.
    """
    try:
        index = items.index(item)  # identity first, then ==: an index no later than the failing item's
    except RecursionError:  # (== of deeply nested items): from the start, as without a record
        index = 0
    records = w[4]
    if records is None:
        records = w[4] = {}
    records[key, id(items)] = index
    return False


def child(ip: str, key: str) -> str:
    """The pointer of member ``key`` below ``ip`` (RFC 6901 escaping only when needed)."""
    if "~" in key or "/" in key:
        return ip + "/" + escape_token(key)
    return ip + "/" + key


CHAIN_LIMIT = 16
"""Objects with more declared properties than this dispatch through a dict, ``oneOf``s with
more branches loop over a tuple, and longer ``required`` lists loop over a constant: long
``elif`` or ``+`` chains nest in Python's syntax tree and exhaust its compiler's recursion
(about 3,000 deep), and a statement per name makes the source grow with the schema's size."""


CHUNK_CHARS: Final = 1 << 15
"""Characters of source given to one ``compile()`` call, at most (but for one longer function). One call
holds the interpreter lock throughout: a validator of many branches (2.3 MB of source for an ``anyOf``
of 1,000 branches) compiled at once held it 0.6 s on an idle machine, and every ``ping`` with it, even
from a worker thread (issue 25 items 1 and 4). A piece this long compiles in about 10 ms."""

_GENERATED: Final = re.compile(r"\b[A-Za-z_]+[0-9]+\b")
"""A generated name (``K12``, ``v5``, ``_ep4``, ``f7``: a prefix and a count, ``ModuleWriter.name``): the only
identifiers of generated source that end in digits (the templates' own names have none)."""


class ModuleWriter:
    """The generated module of one validator: its source, its namespace of constants, fresh names.

    Used by the generator (``gen``). Every
    schema value reaches the source only through :meth:`const` (see the module docstring).

    A function whose source is another's but for its generated names (each of a thousand ``anyOf``
    branches that differ only in their constants) is not compiled again: it is made of the first
    one's code with its own names (:meth:`load`), so a schema's validator compiles in time of the
    number of its distinct shapes, not of its size.
    """

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.source: list[str] = []  # the functions compiled, each a text
        self.trailer: list[str] = []  # assignments that need every function defined first
        self._consts: dict[tuple[type, Any], str] = {}
        self._count = 0
        self._shapes: dict[str, tuple[str, list[str]]] = {}  # a function's shape -> its first: (name, names)
        self._copies: list[tuple[str, str, dict[str, str]]] = []  # (name, first's name, first's names -> its)

    def const(self, value: Any) -> str:
        """Bind a schema value as a module constant; return its name (see the module docstring)."""
        try:
            key: tuple[type, Any] | None = (type(value), value)
            found = self._consts.get(key)  # type: ignore[arg-type]
        except TypeError:  # unhashable: no sharing
            key, found = None, None
        if found is not None:
            return found
        name = self.name("K")
        self.namespace[name] = value
        if key is not None:
            self._consts[key] = name
        return name

    def name(self, prefix: str) -> str:
        """A fresh generated name."""
        self._count += 1
        return f"{prefix}{self._count}"

    def late_tuple(self, names: list[str]) -> str:
        """A module-level tuple of generated functions, bound after they are all defined."""
        name = self.name("T")
        self.trailer.append(f"{name} = ({', '.join(names)},)")
        return name

    def late_dict(self, entries: dict[str, str]) -> str:
        """A module-level dict from schema constants (by name) to generated functions."""
        name = self.name("D")
        self.trailer.append(f"{name} = {{{', '.join(f'{k}: {v}' for k, v in entries.items())}}}")
        return name

    def emit(self, header: str, body: list[str]) -> None:
        """Append one function definition to the module (``header``: ``def NAME(...):``, NAME generated)."""
        text = "\n".join([header, *("    " + line for line in (body or ["pass"]))])
        names: dict[str, str] = {}
        shape = _GENERATED.sub(lambda m: names.setdefault(m.group(), f"@{len(names)}"), text)
        own = list(names)  # (the function's own name first: the header's)
        first = self._shapes.get(shape)
        if first is None:
            self._shapes[shape] = (own[0], own)
            self.source.append(text)
        else:
            self._copies.append((own[0], first[0], dict(zip(first[1], own, strict=True))))

    def load(self, valid_name: str, collect_name: str, label: str) -> tuple[Valid, Collect, str]:
        """Compile and run the module; ``(valid, collect, source)`` of the two named functions.

        The functions are compiled a piece of at most :data:`CHUNK_CHARS` at a time (the interpreter lock
        passes between pieces); each copy (see the class docstring) is the first's code object with its
        names replaced (``CodeType.replace``), bound in the same namespace; then the trailer runs. The
        source returned is what was compiled, followed by one comment line per copy saying what it is.
        """
        namespace = self.namespace
        piece: list[str] = []
        size = 0
        for text in [*self.source, ""]:
            if piece and (size + len(text) > CHUNK_CHARS or not text):
                # the source holds generated names and templates only; see the module docstring
                exec(compile("\n\n".join(piece), label, "exec"), namespace)
                piece, size = [], 0
            piece.append(text)
            size += len(text) + 2
        for name, first, names in self._copies:
            code = _renamed(namespace[first].__code__, names)
            namespace[name] = FunctionType(code.replace(co_name=name, co_qualname=name), namespace, name)
        if self.trailer:
            exec(compile("\n".join(self.trailer), label, "exec"), namespace)
        copies = [
            f"# {name} = {first} with {', '.join(f'{a}->{b}' for a, b in names.items() if a != b)}"
            for name, first, names in self._copies
        ]
        source = "\n\n".join([*self.source, "\n".join([*self.trailer, *copies])])
        return namespace[valid_name], namespace[collect_name], source


def _renamed(code: CodeType, names: dict[str, str]) -> CodeType:
    """``code`` with each global name of ``names`` replaced by its value, in its nested code too (a generator
    expression's). The rest (locals, attributes, the templates' names) is left as it is."""
    consts = tuple(_renamed(c, names) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_names=tuple(names.get(n, n) for n in code.co_names), co_consts=consts)


def base_namespace() -> dict[str, Any]:
    """The names every generated validator's source may use (``gen`` adds the exact-number ones)."""
    return {
        "Issue": Issue,
        "OverBudget": OverBudget,
        "new": tuple.__new__,
        "is_json": is_json,
        "json_once": json_once,
        "canonical_once": canonical_once,
        "isfinite": isfinite,
        "where": where,
        "type_issue": type_issue,
        "is_uncarriable": is_uncarriable,
        "child": child,
        "missed": missed,
    }
