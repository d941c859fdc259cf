"""One ``tools/list`` shown to a model host, and each ``tools/call`` mapped back (issue 24, item 3).

The API a session calls (``wrap --present-for NAME``, ``serve``'s ``guard.presentFor``):

- at ``tools/list`` time, :func:`present_tools` with the server's tools (as listed, after the
  guard's own verdicts) and the host: the tools to list (each with its name made valid for the
  host and its ``inputSchema`` lowered), and the ones withheld, with why;
- at ``tools/call`` time, :meth:`Presentation.call` with the called (shown) name and the
  model's arguments: the server's name and the arguments to judge against the server's own
  schema, exactly as without a host (or a :class:`~.inverse.BackError` to refuse with);
- for ``_meta["mcp-guard/schema"]``, :meth:`ShownTool.meta`; for a refusal's text,
  :meth:`ShownTool.not_shown_at` tells whether a finding is about a constraint the model was not
  shown, :meth:`ShownTool.shown_pointer` names its place as the model sent it, and
  :meth:`ShownTool.json_text_at` whether that place is inside a value sent as JSON text.

Pure: imports neither ``mcp`` nor ``anyio``; keeps no state beyond the one listing it describes.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from .checker import accepts
from .inverse import json_text_at, shown_pointer
from .lowering import Lowered, lower
from .names import host_name, host_names
from .plans import Back
from .run import new_tuple
from .tables import HostProfile

__all__ = ["KEY_FORMAT", "UNSUPPORTED_TEXT", "Presentation", "ShownTool", "present_tools", "schema_key"]

UNSUPPORTED_TEXT: Final = "the guard does not support its schema"
"""Why a tool the guard does not support is withheld from a host (:func:`present_tools`)."""


class ShownTool(NamedTuple):
    """One tool as the host is shown it (immutable; a named tuple: a listing builds one per tool,
    at a quarter of a frozen dataclass's cost).

    Attributes:
        name: the server's name.
        shown_name: the name the host is shown.
        lowered: the lowering (None: the host takes the schema as it is).
        host: the host profile's name and version (``openai-strict@2026-12``).
    """

    name: str
    shown_name: str
    lowered: Lowered | None
    host: str

    def meta(self) -> dict[str, Any]:
        """What ``_meta["mcp-guard/schema"]`` adds for the host: ``{"host", "name", "lowering"}``
        (``lowering``: the steps, ``[]`` when the schema is shown as it is; ``name``: the server's)."""
        steps = [] if self.lowered is None else [s.to_json() for s in self.lowered.steps]
        return {"host": self.host, "name": self.name, "lowering": steps}

    def shown_pointer(self, instance_path: str) -> str:
        """``instance_path`` (a pointer into the server-side arguments) as it is in the arguments the model
        sent: each property under the name it was shown by (``inverse.shown_pointer``)."""
        if self.lowered is None or self.lowered.mapping is None:
            return instance_path
        return shown_pointer(self.lowered.mapping, instance_path)

    def json_text_at(self, instance_path: str) -> tuple[str, str] | None:
        """Where ``instance_path`` (a pointer into the server-side arguments) lies inside a value the model was
        shown as a string of JSON text: ``(that string's pointer in the arguments the model sent, the rest of
        the pointer within its JSON)``, the rest ``""`` for the JSON's value itself; None when no JSON text
        holds it (``inverse.json_text_at``)."""
        if self.lowered is None or self.lowered.mapping is None:
            return None
        found = json_text_at(self.lowered.mapping, instance_path)
        if found is None:
            return None
        return shown_pointer(self.lowered.mapping, found[0]), found[1]

    def not_shown_at(self, schema_path: str, instance_path: str | None = None) -> bool:
        """Whether a finding at ``schema_path`` (a pointer into the server's schema) concerns a constraint the
        model was not shown (a refusal then says so): a step's that leaves it out, at the keyword's place as the
        guard's findings name it (:attr:`~.lowered.Lowered.unshown_at`): the step's position, or, where the
        lowering walked the keyword elsewhere, its place in the document (an inlined ``$ref``'s target,
        ``/$defs/...``; a merged ``allOf`` branch, ``/a/allOf/0/...``; a root alternative merged into one
        object, ``/anyOf/1/...``: :attr:`~.lowered.Lowered.located`); or, given the finding's ``instance_path``, any
        constraint on a value inside one shown as JSON text (a recursive ``$ref`` among them, whose findings
        point into ``$defs``)."""
        lowered = self.lowered
        if lowered is None:
            return False
        pointers = lowered.unshown_at
        if any(schema_path == p or schema_path.startswith(p + "/") for p in pointers):
            return True
        return instance_path is not None and self.json_text_at(instance_path) is not None


@dataclass(slots=True)
class Presentation:
    """A listing shown to one host.

    Attributes:
        tools: the ``tools/list`` entries to show, in the server's order (each a copy of the
            server's entry with ``name`` and ``inputSchema`` replaced where needed).
        shown: shown name → :class:`ShownTool`.
        withheld: server name → why the host is not shown the tool (not presentable, a name
            that collides once made valid, a tool the guard does not support).
    """

    tools: list[dict[str, Any]]
    shown: dict[str, ShownTool]
    withheld: dict[str, str] = field(default_factory=dict)
    _routes: dict[str, tuple[str, Back | None]] = field(default_factory=dict, repr=False, compare=False)

    def call(self, shown_name: str, arguments: Any) -> tuple[str, Any]:
        """The server's name and server-side arguments of a call the model made.

        Raises:
            KeyError: no tool is shown under ``shown_name`` (the session answers as for an unknown tool).
            BackError: the arguments cannot be mapped back (a JSON text that does not parse);
                its ``pointer`` is the instance pointer; refuse the call with it.
        """
        route = self._routes.get(shown_name)
        if route is None:  # built on the first call of each tool: its name and compiled mapping back
            tool = self.shown[shown_name]
            route = self._routes[shown_name] = (tool.name, None if tool.lowered is None else tool.lowered.back_plan)
        name, plan = route
        return name, arguments if plan is None else plan(arguments)


KEY_FORMAT: Final = 4
"""The ``marshal`` format of :func:`schema_key` (format 4 writes short ASCII strings in a byte of
length, a fifth faster than format 2 on the corpus; its references back to an object written
before only shorten the bytes, which still decode to the schema)."""


def schema_key(schema: Any) -> bytes | None:
    """An exact key for a parsed schema: equal keys mean equal schemas, types, key order and every
    string kept (the bytes decode back to the schema); None for a value ``marshal`` refuses (an
    ``Inexact`` literal, nesting past its depth limit). Two equal schemas whose parts are shared
    differently may get different keys: a lowering is then done twice, never shared wrongly."""
    try:
        return marshal.dumps(schema, KEY_FORMAT)
    except (ValueError, RecursionError):
        return None


_UNSEEN: Final[Any] = object()


def present_tools(
    tools: Sequence[Any],
    host: HostProfile,
    *,
    supported: Callable[[str], bool] | None = None,
    keys: Mapping[int, bytes | None] | None = None,
) -> Presentation:
    """Show ``tools`` (``tools/list`` entries) to ``host``.

    One check and, where needed, one lowering per distinct schema (:func:`schema_key`, or the caller's
    ``keys``), as the guard classifies one verdict per distinct schema.

    Args:
        tools: the server's tool entries (dicts with ``name`` and ``inputSchema``); entries
            without a string name or an object ``inputSchema`` are withheld.
        host: a profile of ``hosts.tables.HOSTS``.
        supported: whether the guard supports a tool, by server name (the session's verdicts);
            a tool it does not support is withheld (its calls are refused anyway). Default: all.
        keys: exact keys the caller made of the ``inputSchema`` objects, by ``id()`` of the object (the
            guard's classification, ``calls.tool_table``: ``marshal`` bytes, ``equal keys mean equal
            schemas``), for objects it keeps alive during the call; a schema without one (absent or None)
            is keyed here. Spares a second ``marshal`` walk of every schema (a third of a listing's cost).

    Returns:
        The :class:`Presentation`.
    """
    try:
        return _present(tools, host, supported, None, keys)
    except _Collided:  # rare: names made alike; every name first, then the listing
        named = [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
        return _present(tools, host, supported, host_names(named, host).shown, keys)


class _Collided(Exception):
    """Internal: two names become one for the host (:func:`present_tools` starts again, names first)."""


def _present(
    tools: Sequence[Any],
    host: HostProfile,
    supported: Callable[[str], bool] | None,
    names: dict[str, str] | None,
    keys: Mapping[int, bytes | None] | None,
) -> Presentation:
    """:func:`present_tools` in one pass over the listing (each entry is read once, from memory the
    pass has not touched yet on a long listing: the cost is there); ``names``: the shown name of each
    server name, or None to make them here, raising :class:`_Collided` where two become one.

    The caller's ``keys`` and this function's (``marshal`` formats 2 and 4) may meet in one ``seen``: bytes
    ``marshal`` wrote decode to one value whatever the format, so equal bytes are still equal schemas."""
    label = f"{host.name}@{host.version}"
    out = Presentation([], {})
    listed, shown, withheld = out.tools, out.shown, out.withheld
    seen: dict[bytes, Lowered | None] = {}
    dumps = marshal.dumps
    fits = host.name_pattern.fullmatch
    taken: set[str] = set()
    for entry in tools:
        if not isinstance(entry, dict):
            continue
        name = entry.get("name")
        if not isinstance(name, str):
            continue
        shown_name: str | None
        if names is None:
            shown_name = name if fits(name) is not None else host_name(name, host)
            if shown_name in taken:
                raise _Collided
            taken.add(shown_name)
        else:
            shown_name = names.get(name)
        if supported is not None and not supported(name):
            withheld[name] = UNSUPPORTED_TEXT
            continue
        if shown_name is None:
            withheld[name] = f"its name collides with another's once made valid for {host.name}"
            continue
        schema = entry.get("inputSchema")
        if not isinstance(schema, dict):
            withheld[name] = "it has no object inputSchema"
            continue
        key = None if keys is None else keys.get(id(schema))
        if key is None:
            try:
                key = dumps(schema, KEY_FORMAT)  # schema_key, inline: once per tool
            except (ValueError, RecursionError):
                key = None
        lowered = _UNSEEN if key is None else seen.get(key, _UNSEEN)
        if lowered is _UNSEEN:
            lowered = None if accepts(schema, host) else lower(schema, host)
            if key is not None:
                seen[key] = lowered
        if lowered is not None and lowered.reasons:
            withheld[name] = "; ".join(lowered.reasons)
            continue
        copy = dict(entry)
        copy["name"] = shown_name
        if lowered is not None:
            copy["inputSchema"] = lowered.schema
        listed.append(copy)
        shown[shown_name] = new_tuple(ShownTool, (name, shown_name, lowered, label))  # ShownTool(...), a C call
    return out
