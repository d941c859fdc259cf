"""What a model host is shown, in a session: ``wrap --present-for NAME``, ``serve``'s ``guard.presentFor``
(issue 24, item 3).

The pure part is ``hosts.listing`` (the lowering of each schema, names made valid, collisions withheld);
this module puts it between the guard's listings and its call pipeline, the same for both commands:

- :func:`presented`: a ``tools/list``'s entries (as the guard lists them: its verdict in
  ``_meta["mcp-guard/schema"]``) shown to a host: each entry's ``name`` and ``inputSchema`` as the host is
  shown them, its ``_meta["mcp-guard/schema"]`` the server's schema's verdict plus ``host`` (the profile and
  version, the server's name, the lowering's steps). Tools the host cannot be shown are left out (listed
  in :attr:`Presentation.withheld`, logged once per listing).
- :class:`ShownNames`: ``wrap``'s record of what it showed, page by page (the upstream's own pages and
  cursors pass through ``wrap``), keyed by the shown name; emptied when the tools change.
- :func:`called` (and :func:`map_call`, a whole request for either session): a ``tools/call``'s ``params``
  mapped back: the server's (or ``serve``'s exposed) name and the arguments to judge against the server's
  own schema, exactly as without a host; or the ``CallToolResult`` refusing a call that cannot be mapped
  back (a JSON text that does not parse), or None for a name the host was not shown.

A refusal of arguments that break a constraint the model was not shown says so
(:func:`~.refusals.schema_verdict`'s ``not_shown``). Nothing here logs an argument value.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..hosts.inverse import BackError
from ..hosts.listing import UNSUPPORTED_TEXT, Presentation, ShownTool, present_tools
from ..hosts.tables import HostProfile
from ..safe_text import escape
from ..wire.meta import REJECTION_KEY, SCHEMA_KEY, is_modern
from ..wire.repeated import collector_paused
from .refusals import refusal_result

if TYPE_CHECKING:
    from .pipeline import Pipeline

__all__ = ["BACK_ERROR", "Mapped", "Prepared", "ShownNames", "called", "map_call", "presented"]

log = logging.getLogger(__name__)

BACK_ERROR: Final = "validation"
"""The refusal kind of a call whose arguments cannot be mapped back (they do not match the shown schema's
reshaping: a value shown as JSON text that is not JSON): the arguments do not match, as a schema finding."""

TOO_DEEP: Final = "the arguments nest deeper than the guard maps back"
"""A refusal's words for arguments whose mapping back ran past Python's recursion limit (red team 32: a crash)."""

MAX_LOGGED_WITHHELD: Final = 10
"""A listing's log line names at most this many withheld tools."""


def _entry(tool: dict[str, Any], shown: ShownTool) -> dict[str, Any]:
    """``tool`` (the presentation's copy) with ``_meta["mcp-guard/schema"]`` gaining ``host``."""
    meta = tool.get("_meta")
    meta = dict(meta) if type(meta) is dict else {}
    verdict = meta.get(SCHEMA_KEY)
    meta[SCHEMA_KEY] = {**(verdict if type(verdict) is dict else {}), "host": shown.meta()}
    tool["_meta"] = meta
    return tool


def _verdict_supported(tool: dict[str, Any]) -> bool:
    """Whether the guard's verdict on a listed tool (``_meta["mcp-guard/schema"]``) says it is supported."""
    meta = tool.get("_meta")
    verdict = meta.get(SCHEMA_KEY) if type(meta) is dict else None
    return (
        type(verdict) is dict
        and verdict.get("supported") is True
        and verdict.get("output", {}).get("supported", True) is not False
    )


@dataclass(frozen=True, slots=True)
class Prepared:
    """A listing's presentation made ahead, in a worker thread, from the tools as the upstream listed them
    (:meth:`ShownNames.prepare`): the presentation, and each tool's ``inputSchema`` object, so that the
    loop can tell the listing it then shows is the same one (:func:`presented`'s ``prepared``)."""

    presentation: Presentation
    schemas: dict[str, Any]


def _reused(tools: Sequence[Any], prepared: Prepared) -> Presentation | None:
    """``prepared``'s presentation for the annotated ``tools``: their entries (with the guard's verdicts) as
    shown, without lowering anything again; None when the tools are not the prepared ones (a name, a schema
    object or a verdict differs: the caller presents them anew)."""
    ready = prepared.presentation
    by_name = {t.name: t for t in ready.shown.values()}
    out = Presentation([], {}, {})
    for entry in tools:
        if type(entry) is not dict or type(entry.get("name")) is not str:
            continue  # (present_tools withholds these too: no name to call them by)
        name = entry["name"]
        supported = _verdict_supported(entry)
        if name in ready.withheld:
            if supported and ready.withheld[name] == UNSUPPORTED_TEXT:
                return None  # the guard supports what the thread took for unsupported: present anew
            out.withheld[name] = ready.withheld[name]
            continue
        shown = by_name.get(name)
        if shown is None or prepared.schemas.get(name) is not entry.get("inputSchema"):
            return None
        if not supported:
            out.withheld[name] = UNSUPPORTED_TEXT
            continue
        copy = dict(entry)
        copy["name"] = shown.shown_name
        if shown.lowered is not None:
            copy["inputSchema"] = shown.lowered.schema
        out.tools.append(copy)
        out.shown[shown.shown_name] = shown
    return out


def presented(
    tools: Sequence[Any], host: HostProfile, *, label: str = "", prepared: Prepared | None = None
) -> Presentation:
    """``tools`` (one listing's entries, each with the guard's verdict in ``_meta``) as ``host`` is shown them.

    A tool the guard does not support (its verdict, or its ``outputSchema``'s) is withheld: its calls
    are refused anyway, and no host is shown a schema the guard cannot judge. Withheld tools are logged
    (names escaped, at most :data:`MAX_LOGGED_WITHHELD`), ``label`` before the line (``"upstream fs: "``).

    Returns:
        The presentation: ``tools`` to list (copies; the inputs are not modified), ``shown`` (shown name
        -> :class:`~mcp_guard.hosts.listing.ShownTool`) and ``withheld`` (name -> why). ``prepared``: the
        same listing presented ahead in a worker thread (:meth:`ShownNames.prepare`), taken when it is
        the same (then nothing is lowered here, on the loop).
    """
    out = _reused(tools, prepared) if prepared is not None else None
    if out is None:
        named = [t for t in tools if type(t) is dict and type(t.get("name")) is str]
        supported = {t["name"] for t in named if _verdict_supported(t)}
        try:
            with collector_paused():  # as ToolTable's listings: a lowering makes many objects (collected after)
                out = present_tools(tools, host, supported=supported.__contains__)
        except Exception:  # a fault of the lowering: nothing is shown rather than a schema not made right
            log.exception("%sinternal error while lowering the tools for %s; none is shown", label, host.name)
            out = Presentation([], {}, dict.fromkeys((t["name"] for t in named), "internal error"))
    out.tools = [_entry(t, out.shown[t["name"]]) for t in out.tools]
    if out.withheld:
        names = [escape(n) for n in list(out.withheld)[:MAX_LOGGED_WITHHELD]]
        more = len(out.withheld) - len(names)
        log.info(
            "%s%d tool(s) not shown to %s: %s%s (their calls are refused as unknown)",
            label,
            len(out.withheld),
            host.name,
            ", ".join(names),
            f", and {more} more" if more > 0 else "",
        )
    return out


class ShownNames:
    """``wrap``'s record of the tools it showed a host, page by page (shown name -> :class:`ShownTool`).

    ``wrap`` relays the upstream's own pages: each is shown on its own (:meth:`show`), and a shown name
    another page already gave to a different tool is withheld from the later page (two tools are never
    merged under one name). :meth:`clear` when the tools change (``list_changed``).
    """

    __slots__ = ("_prepared", "host", "shown")

    def __init__(self, host: HostProfile) -> None:
        self.host = host
        self.shown: dict[str, ShownTool] = {}
        self._prepared: Prepared | None = None

    def prepare(
        self, tools: Sequence[Any], supported: Callable[[str], bool], keys: Mapping[int, bytes | None] | None = None
    ) -> None:
        """(In a worker thread, with ``ToolTable.prepare``.) Present a page of tools, as the upstream listed
        them, ahead of :meth:`show`, which then only copies entries: lowering a big listing held the loop
        (10,000 tools: 0.45 s on an idle machine; issue 25 item 1). ``supported``: the guard's verdict by
        name, from the schemas classified ahead; ``keys``: their exact keys by ``id()`` of the schema object, as
        the classification made them (``present_tools``: not made again). Only the loop reads what this writes,
        once it returned."""
        named = [t for t in tools if type(t) is dict and type(t.get("name")) is str]
        presentation = present_tools(named, self.host, supported=supported, keys=keys)
        self._prepared = Prepared(presentation, {t["name"]: t.get("inputSchema") for t in named})

    def clear(self) -> None:
        """Forget what was shown (the upstream's tools changed)."""
        self.shown.clear()

    def map_call(
        self, pipeline: Pipeline, message: dict[str, Any]
    ) -> tuple[dict[str, Any], ShownTool] | dict[str, Any]:
        """:func:`map_call` against what this table's host was shown (``wrap``: no import on the call's path,
        which cost ~1.7 us a call, measure24)."""
        return map_call(pipeline, message, self.shown)

    def show(self, tools: Sequence[Any], *, label: str = "") -> list[Any]:
        """The entries of one page as the host is shown them (see :func:`presented`; made ahead by
        :meth:`prepare` when it was called for this page); recorded."""
        prepared, self._prepared = self._prepared, None
        out = presented(tools, self.host, label=label, prepared=prepared)
        entries = []
        for entry in out.tools:
            tool = out.shown[entry["name"]]
            earlier = self.shown.get(tool.shown_name)
            if earlier is not None and earlier.name != tool.name:
                log.info(
                    "%stool %s not shown to %s: its name collides with another's once made valid",
                    label,
                    escape(tool.name),
                    self.host.name,
                )
                continue
            self.shown[tool.shown_name] = tool
            entries.append(entry)
        return entries


@dataclass(frozen=True, slots=True)
class Mapped:
    """A ``tools/call`` mapped back: ``params`` to judge and forward (the server's name, its arguments)
    and the tool as it was shown (its refusals then say what the model was not shown)."""

    params: dict[str, Any]
    shown: ShownTool


def called(params: dict[str, Any], shown: Mapping[str, ShownTool], *, modern: bool) -> Mapped | dict[str, Any] | None:
    """A call's ``params`` (``name`` a string) mapped back through what the host was shown.

    Args:
        params: the request's ``params``.
        shown: shown name -> :class:`ShownTool` (:attr:`Presentation.shown`, :attr:`ShownNames.shown`).
        modern: a 2026-07-28-era request (a refusal's result then carries ``resultType``).

    Returns:
        :class:`Mapped`; or None when no tool is shown under the name (answer as an unknown tool: the
        host never showed it); or the ``CallToolResult`` refusing arguments that cannot be mapped back
        (kind :data:`BACK_ERROR`, the instance pointer; hosts.inverse's text, which holds no value).
    """
    tool = shown.get(params["name"])
    if tool is None:
        return None
    arguments = params.get("arguments", {})
    lowered = tool.lowered
    try:
        back = arguments if lowered is None or lowered.identity else lowered.back(arguments)
    except (BackError, RecursionError) as exc:
        pointer, message = (exc.pointer, str(exc)) if isinstance(exc, BackError) else ("", TOO_DEEP)
        issue = {"kind": BACK_ERROR, "keyword": "inputSchema", "schema_path": "", "instance_path": pointer}
        issue["message"] = message
        text = (
            f"mcp-guard refused this call to `{tool.shown_name}`: the arguments do not match the tool's input "
            f"schema as your model was shown it, so nothing was sent to the server. {message[:1].upper()}"
            f"{message[1:]}. Correct the arguments and call again."
        )
        return refusal_result(BACK_ERROR, tool.shown_name, text, modern=modern, issues=[issue])
    if tool.name == params["name"] and back is arguments:
        return Mapped(params, tool)
    out = {**params, "name": tool.name}
    if "arguments" in params or back is not arguments:
        out["arguments"] = back
    return Mapped(out, tool)


def _with_params(message: dict[str, Any], params: dict[str, Any], name: str, arguments: Any) -> dict[str, Any]:
    """A copy of the request ``message`` whose ``params`` are a copy of ``params`` with ``name`` and, unless
    None, ``arguments`` set (copies and item sets: a third cheaper than ``{**a, k: v}`` on a call's hot path)."""
    out = params.copy()
    out["name"] = name
    if arguments is not None:
        out["arguments"] = arguments
    request = message.copy()
    request["params"] = out
    return request


def map_call(
    pipeline: Pipeline, message: dict[str, Any], shown: Mapping[str, ShownTool], server: str = ""
) -> tuple[dict[str, Any], ShownTool] | dict[str, Any]:
    """A ``tools/call`` request (``params`` with a string ``name``, a valid id) mapped back for ``wrap`` and
    ``serve`` alike (:func:`called`): ``(the request to judge and forward, the tool as shown)``, or the
    response answering it (an unknown tool through ``pipeline.unlisted``, or arguments that cannot be
    mapped back: logged, counted by the observer under ``server`` and traced, as every refusal is)."""
    params = message["params"]
    name = params["name"]
    tool = shown.get(name)
    if tool is not None:  # the common call, mapped without the refusal's machinery (called() is its reference)
        lowered = tool.lowered
        plan = None if lowered is None else lowered.back_plan
        if plan is None:
            if tool.name == name:
                return message, tool  # nothing to map: the request as it came
            return _with_params(message, params, tool.name, None), tool
        arguments = params.get("arguments", {})
        try:
            back = plan(arguments)
        except (BackError, RecursionError):
            pass  # refused below, by called(), which says where
        else:
            if back is arguments and tool.name == name:
                return message, tool
            return _with_params(
                message, params, tool.name, back if back is not arguments or "arguments" in params else None
            ), tool
    request_id = message["id"]
    mapped = called(params, shown, modern=is_modern(params))
    if mapped is None:
        return pipeline.unlisted(params["name"], request=(request_id, params)).response(request_id)
    if not isinstance(mapped, Mapped):
        from .call import Rejection
        from .refusals import logged_pointer

        pointer = mapped["_meta"][REJECTION_KEY]["issues"][0]["instance_path"]
        reason = (
            f"not mapped back (a value shown as JSON text, or a name, at {logged_pointer(pointer, '') or '(root)'})"
        )
        pipeline.refused(params["name"], Rejection(BACK_ERROR, reason, result=mapped))
        if pipeline.observer is not None:
            pipeline.observer.call_ended(server, shown[params["name"]].name, "rejected", BACK_ERROR, None)
        pipeline.trace_unrouted(BACK_ERROR, None, (request_id, params))  # (a tool error: no JSON-RPC error)
        return {"jsonrpc": "2.0", "id": request_id, "result": mapped}
    return ({**message, "params": mapped.params} if mapped.params is not params else message), mapped.shown
