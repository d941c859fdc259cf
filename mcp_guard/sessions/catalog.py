"""The merged tool list of every upstream, and the route of each exposed tool.

:class:`Catalog` joins the pieces for one set of listings: each upstream's tools classified
(the relay's :class:`~mcp_guard.calls.tool_table.ToolTable`), named (:mod:`.naming`), compared
with the lock (:mod:`.pinning`) and given their rules (:mod:`.policy`). The relay side calls
:meth:`Catalog.update` with an upstream's complete listing (after it listed all pages, on
start and after ``list_changed``), serves ``tools/list`` from :meth:`Catalog.page`, and
routes ``tools/call`` through :meth:`Catalog.route` into the :class:`~.pipeline.Pipeline`.

A listed tool is the upstream's tool object with ``name`` replaced by the exposed name and
``_meta`` holding the guard's ``mcp-guard/schema`` verdict and
``mcp-guard/origin = {"server", "tool"}``; every other field is passed as the upstream sent it.

A tool that changed since it was pinned (rug pull) is never listed as the upstream now
describes it: its new description is how tool poisoning would reach the model. With
``guard.changedTools`` ``pinned`` (the default) it is listed with its pinned definition (from a
version-2 lock file), its ``_meta`` only the guard's keys (the upstream's current ``_meta`` is not
pinned) with ``_meta["mcp-guard/pin"] = {"status": "changed", "listed": "pinned"}``,
and its calls are checked against the pinned ``inputSchema`` before being refused with
``pinned_schema_changed``; with ``withhold``, or when the lock holds no definition (version 1),
it is left out of the list and its calls are refused the same way. The log and
:attr:`CatalogReport.pin_changes` say what changed, field by field.

:class:`~.merged_lists.MergedLists` (its own module) holds everything one client view sees: this
tool list, the prompts and the resources.

Generations (of the tool list and of the other lists) come from one process-wide counter
and change only when a list is rebuilt from a listing that differs from the one before: a
cursor stays valid while the list it pages is unchanged, and a cursor of another list (another
envelope's, or one dropped since) never matches.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.to_thread

from ..auth.principal import Principal
from ..calls.call import Route
from ..calls.pinning import (
    FieldChange,
    LockFile,
    PinReport,
    PinStatus,
    PreparedPins,
    diff_tool,
    report_of,
    server_status,
)
from ..calls.policy import Policy
from ..calls.principals import PrincipalPolicy
from ..calls.tool_table import ToolTable
from ..config import GatewayConfig
from ..wire.jsonrpc import Uncarriable, dumps
from ..wire.pieces import dumps_in_pieces
from ..wire.repeated import collector_paused

if TYPE_CHECKING:
    from ..hosts.listing import Presentation
from .naming import Collision, CursorCodec, NameMap

__all__ = [
    "ORIGIN_KEY",
    "PIN_KEY",
    "Catalog",
    "CatalogReport",
    "PinChange",
    "exposed_item",
    "listing_text",
    "next_generation",
]

log = logging.getLogger("mcp_guard")

ORIGIN_KEY = "mcp-guard/origin"
PIN_KEY = "mcp-guard/pin"
"""A tool listed with its pinned definition: ``_meta["mcp-guard/pin"] = {"status": "changed", "listed": "pinned"}``."""

PRESENT_ON_LOOP: Final = 500
"""Tools of a view past which ``guard.presentFor``'s presentation is made in a worker thread (a few ms below)."""

_GENERATIONS = itertools.count(1)


def next_generation() -> int:
    """A generation no list of this process had (one process-wide counter: see the module docstring)."""
    return next(_GENERATIONS)


_TEXT_NOT_MADE: Final = object()
"""``Catalog.update``'s ``text`` when the caller did not make it (``None`` is a listing without exact text)."""


def listing_text(listing: Any) -> bytes | None:
    """The exact JSON text of a listing, to tell an unchanged one (``None``: it has no exact text)."""
    try:
        return dumps(listing)
    except (Uncarriable, TypeError, ValueError, RecursionError):
        return None


@dataclass(frozen=True)
class PinChange:
    """A tool that changed since it was pinned, and what the client is shown instead.

    Attributes:
        key: ``server/tool``.
        listed: ``pinned`` (listed with its pinned definition) or ``withheld`` (not listed).
        why: why it is withheld (``""`` when listed pinned).
        fields: what changed, field by field (:func:`.pinning.diff_tool`); ``None`` when the
            lock file holds no definition (version 1), so it cannot be told.
    """

    key: str
    listed: str
    why: str = ""
    fields: list[FieldChange] | None = None

    def line(self) -> str:
        """The log line (one per tool; server text in it is escaped by the log formatter)."""
        shown = "listed with its pinned definition" if self.listed == "pinned" else f"withheld: {self.why}"
        head = f"pinned tool changed (calls refused until pinned again; {shown}): {self.key}"
        if not self.fields:  # unknown (a version-1 lock), or no field differs as JSON (a number's spelling)
            return head
        return head + ": " + "; ".join(change.summary() for change in self.fields)

    def to_json(self) -> dict[str, Any]:
        """``{"listed", "why", "fields": [{"field", "change", "diff"}] | null}``."""
        fields = None if self.fields is None else [c.to_json() for c in self.fields]
        return {"listed": self.listed, "why": self.why or None, "fields": fields}


WITHHELD_BY_SETTING: Final = "guard.changedTools is withhold"
WITHHELD_NO_DEFINITION: Final = (
    "the lock file holds no definitions (version 1), so the pinned one cannot be shown, nor what changed; "
    "review the tool, then run `mcp-guard pin` again to record definitions"
)


@dataclass
class CatalogReport:
    """What the operator should know about the current merged list (for the log and ``check``).

    Attributes:
        collisions: exposed names withheld because several tools map to them.
        nameless: ``server`` names of tools without a string ``name`` or with an empty one (withheld), one per tool.
        changed, new, missing: ``server/tool`` keys against the lock (see :mod:`.pinning`).
        pin_changes: ``server/tool`` → how each changed tool is shown and what changed.
        denied, hidden: exposed names the policy keeps out of the list.
        unsupported: exposed names whose schema the guard cannot enforce.
        unpinned_refused: ``guard.newTools`` is ``reject`` and no lock file is in force, so
            every call is refused until ``mcp-guard pin`` writes one.
        patterns: policy patterns that match nothing (:meth:`.policy.Policy.pattern_warnings`).
    """

    collisions: list[Collision] = field(default_factory=list)
    nameless: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    pin_changes: dict[str, PinChange] = field(default_factory=dict)
    denied: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    unpinned_refused: bool = False
    patterns: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One human line per finding, most serious first."""
        out = []
        if self.unpinned_refused:
            out.append(
                "guard.newTools is reject and there is no lock file: every tools/call is refused until "
                "`mcp-guard pin --config FILE` pins the tools"
            )
        out += [f"name collision: {c.describe()}" for c in self.collisions]
        out += [f"a tool of {s} has no name (missing, empty or not a string); withheld" for s in self.nameless]
        out += [
            self.pin_changes[k].line() if k in self.pin_changes else f"pinned tool changed (calls refused): {k}"
            for k in self.changed
        ]
        out += [f"tool not in the lock file: {k}" for k in self.new]
        out += [f"pinned tool no longer listed: {k}" for k in self.missing]
        out += [f"policy pattern that matches nothing: {line}" for line in self.patterns]
        out += [f"denied by policy: {name}" for name in self.denied]
        out += [f"hidden: {name}" for name in self.hidden]
        return out


def exposed_item(item: dict[str, Any], exposed: str, server: str, kind: str = "tool") -> dict[str, Any]:
    """``item`` renamed to ``exposed``, with ``_meta["mcp-guard/origin"] = {"server", kind: original name}``."""
    out = dict(item)
    out["name"] = exposed
    meta = dict(out["_meta"]) if type(out.get("_meta")) is dict else {}
    meta[ORIGIN_KEY] = {"server": server, kind: item["name"]}
    out["_meta"] = meta
    return out


class Catalog:
    """The gateway's merged tool list.

    Args:
        config: the gateway configuration (profile, name format, policy, page size).
        lock: the lock file in force, or ``None``.
        cursors: the cursor codec (default: a new random key).
        quiet: log nothing (``check --config`` prints the report instead). Otherwise each
            server's tool counts and each finding of the report are logged once per change.

    Attributes:
        generation: bumped by every :meth:`update`; cursors of older generations are refused.
        report: findings about the current list.
    """

    def __init__(
        self,
        config: GatewayConfig,
        lock: LockFile | None = None,
        cursors: CursorCodec | None = None,
        *,
        quiet: bool = False,
    ) -> None:
        self.config = config
        self.quiet = quiet
        self.lock = lock
        self.policy = Policy(config.guard)
        self.principals = PrincipalPolicy(config.guard.principals)
        self.cursors = cursors if cursors is not None else CursorCodec()
        self.generation = next_generation()
        self.report = CatalogReport()
        self._listings: dict[str, list[Any]] = {}
        self._texts: dict[str, bytes | None] = {}
        self._routes: dict[str, Route] = {}
        self._by_origin: dict[tuple[str, str], Route] = {}
        self._listed: list[dict[str, Any]] = []
        self.pins = PinReport()
        # Per server, its listing classified (tool name -> (annotated tool, entry)): redone
        # only when that server's listing changes, so one server's change costs no other's.
        self._annotated: dict[str, dict[str, tuple[dict[str, Any], Any]]] = {}
        self._tables: dict[str, ToolTable] = {}
        # Per server, its tools against the lock (digests are computed once per listing).
        self._status: dict[str, dict[str, PinStatus]] = {}
        self._pins_ahead = PreparedPins()  # a big listing's digests and diffs, made in the worker thread (prepare)
        # Per server, the pinned definitions of its changed tools, classified the same way.
        self._pinned: dict[str, dict[str, tuple[dict[str, Any], Any]]] = {}
        self._pinned_tables: dict[str, ToolTable] = {}
        self._logged: set[str] = set()
        # Per set of matching guard.principals rules: (generation, the tools those callers see), for this generation.
        self._views: dict[tuple[str, ...], tuple[int, list[dict[str, Any]]]] = {}
        # What guard.presentFor's host is shown of each view, by the view's generation (calls.presenting).
        self._presented: dict[int, Presentation] = {}
        self._owned: dict[int, frozenset[str]] = {}  # the names each presentation answers for (owned)

    def prepare(self, server: str, tools: Sequence[Any]) -> bytes | None:
        """(In a worker thread.) What :meth:`update` would make of ``server``'s big listing before it can be
        compared or routed: its JSON text (returned, for :meth:`update`'s ``text``), its schemas'
        classification (``ToolTable.prepare``, which :meth:`update` then looks up) and its comparison with
        the lock (``PreparedPins``). Reads the catalog
        and writes only the server's table's prepared schemas; nothing it leaves out is lost
        (:meth:`update` does it). A listing of one schema of 1,000,000 properties: 1.8 s on the loop."""
        self._table(server).prepare({"tools": list(tools)})
        changed = self._pins_ahead.prepare(self.lock, server, tools)  # (5.5 s on the loop for 1,000,000 properties)
        if changed:  # (shown with their pinned definitions: classified here too, _annotate_pinned)
            self._pinned_table(server).prepare({"tools": [dict(d) for d in changed]})
        # (the same text as _text's, made by encoder calls of bounded size: the loop runs between them)
        with collector_paused(), contextlib.suppress(Uncarriable, TypeError, ValueError, RecursionError):
            return dumps_in_pieces(list(tools))
        return None

    def update(self, server: str, tools: Sequence[Any] | None, text: object = _TEXT_NOT_MADE) -> bool:
        """Replace ``server``'s listing (all pages, wire dicts); ``None`` removes it (upstream down).

        Rebuilds names, routes and the report over every server's current listing, and
        changes :attr:`generation`, unless the listing is the one the catalog holds (the same
        JSON text; ``text``, when given, is that text made already: :meth:`prepare`). Returns
        whether it rebuilt.
        """
        if tools is None:
            if server not in self._listings:
                return False
            self._listings.pop(server, None)
            self._texts.pop(server, None)
            self._annotated.pop(server, None)
            self._tables.pop(server, None)
            self._pinned.pop(server, None)
            self._pinned_tables.pop(server, None)
            self._status.pop(server, None)
        else:
            made = listing_text(tools) if text is _TEXT_NOT_MADE else text if type(text) is bytes else None
            if server in self._listings and made is not None and self._texts.get(server) == made:
                return False
            self._listings[server] = list(tools)
            self._texts[server] = made
            self._annotated[server] = self._annotate(server, self._listings[server])
            self._status[server] = server_status(self.lock, server, self._listings[server], self._pins_ahead)
            self._pinned[server] = self._annotate_pinned(server)
        self._rebuild()
        return True

    def _table(self, server: str) -> ToolTable:
        table = self._tables.get(server)
        if table is None:
            label = None if self.quiet else f"upstream {server}: "
            table = self._tables.setdefault(
                server, ToolTable(self.config.guard.profile, label=label, outputs=self.config.guard.outputs)
            )
        return table

    def _annotate(self, server: str, tools: list[Any]) -> dict[str, tuple[dict[str, Any], Any]]:
        table = self._table(server)
        table.invalidate()
        out: dict[str, tuple[dict[str, Any], Any]] = {}
        for tool in table.annotate({"tools": tools}, cache=True, first_page=True)["tools"]:
            if type(tool) is dict and type(tool.get("name")) is str:
                out[tool["name"]] = (tool, table.get(tool["name"]))
        return out

    def _pinned_table(self, server: str) -> ToolTable:
        table = self._pinned_tables.get(server)
        if table is None:
            table = self._pinned_tables.setdefault(server, ToolTable(self.config.guard.profile, label=None))
        return table

    def _annotate_pinned(self, server: str) -> dict[str, tuple[dict[str, Any], Any]]:
        """The pinned definitions of ``server``'s changed tools, classified (tool name -> (tool, entry))."""
        lock = self.lock
        if lock is None or not lock.definitions:
            return {}
        status = self._status[server]
        pinned = [dict(lock.definitions[k]) for k, s in status.items() if s == "changed" and k in lock.definitions]
        if not pinned:
            self._pinned_tables.pop(server, None)
            return {}
        table = self._pinned_table(server)
        table.invalidate()
        out: dict[str, tuple[dict[str, Any], Any]] = {}
        for tool in table.annotate({"tools": pinned}, cache=True, first_page=True)["tools"]:
            meta = dict(tool["_meta"])
            meta[PIN_KEY] = {"status": "changed", "listed": "pinned"}
            out[tool["name"]] = ({**tool, "_meta": meta}, table.get(tool["name"]))
        return out

    def _pin_changes(self, pins: PinReport) -> dict[str, PinChange]:
        """How each changed tool is shown, and what changed (see the module docstring)."""
        out: dict[str, PinChange] = {}
        withhold = self.config.guard.changed_tools == "withhold"
        for key in pins.keys("changed"):
            server, name = key.split("/", 1)
            pinned = self.lock.definitions.get(key) if self.lock is not None else None
            listed = self._annotated.get(server, {}).get(name)
            fields = None if pinned is None or listed is None else diff_tool(pinned, listed[0], self._pins_ahead)
            if pinned is None:
                out[key] = PinChange(key, "withheld", WITHHELD_NO_DEFINITION, fields)
            elif withhold or name not in self._pinned.get(server, {}):
                out[key] = PinChange(key, "withheld", WITHHELD_BY_SETTING, fields)
            else:
                out[key] = PinChange(key, "pinned", "", fields)
        return out

    def _rebuild(self) -> None:
        guard = self.config.guard
        order = [s.name for s in self.config.servers if s.name in self._listings]
        listings = [(name, self._listings[name]) for name in order]
        names = NameMap.build(
            listings, guard.name_format, lambda o: self.policy.for_tool(o.server, o.name).access == "allow"
        )
        self.pins = pins = report_of(self.lock, [(name, self._status[name]) for name in order])
        annotated = {(server, name): pair for server, _ in listings for name, pair in self._annotated[server].items()}
        report = CatalogReport(
            collisions=names.collisions,
            nameless=[s for s, _ in names.nameless],
            changed=pins.keys("changed"),
            pin_changes=self._pin_changes(pins),
            new=pins.keys("new"),
            missing=pins.missing,
            unpinned_refused=self.lock is None and guard.new_tools == "reject" and bool(listings),
        )
        routes: dict[str, Route] = {}
        listed: list[dict[str, Any]] = []
        for exposed, (origin, _tool) in names.items.items():
            tool, entry = annotated[(origin.server, origin.name)]
            change = report.pin_changes.get(f"{origin.server}/{origin.name}")
            pinned = self._pinned.get(origin.server, {}).get(origin.name) if change is not None else None
            if pinned is not None:
                # Judged against the pinned inputSchema (and shown so, unless withheld): no answer to a
                # call quotes the new schema, which nobody reviewed.
                tool, entry = pinned
            assert entry is not None
            route = Route(
                exposed=exposed,
                server=origin.server,
                tool=origin.name,
                compiled=entry.compiled,
                policy=self.policy.for_tool(origin.server, origin.name),
                pin=pins.of(origin.server, origin.name),
                output=entry.output,
                outputs=self.config.guard.outputs,
            )
            routes[exposed] = route
            if route.policy.access == "deny":
                report.denied.append(exposed)
            elif route.policy.access == "hide":
                report.hidden.append(exposed)
            if not route.enforceable:
                report.unsupported.append(exposed)
                if route.policy.access == "allow" and route.policy.unsupported == "hide":
                    report.hidden.append(exposed)
            if route.visible and (change is None or change.listed == "pinned"):
                listed.append(exposed_item(tool, exposed, origin.server))
        listed_names = {
            server: [t["name"] for t in tools if type(t) is dict and type(t.get("name")) is str]
            for server, tools in listings
        }
        configured = {s.name for s in self.config.servers}
        every_server_listed = all(s.name in self._listings for s in self.config.enabled)
        report.patterns = self.policy.pattern_warnings(
            configured,
            listed_names,
            every_server_listed=every_server_listed,
            exposed={r.exposed: f"{r.server}/{r.tool}" for r in routes.values()},
        )
        report.patterns += self.principals.pattern_warnings(
            configured, listed_names, every_server_listed=every_server_listed
        )
        self._routes = routes
        self._by_origin = {(r.server, r.tool): r for r in routes.values()}
        self._listed = listed
        self._views = {}
        self._presented = {}
        self._owned = {}
        self.report = report
        self.generation = next_generation()
        lines = report.lines()
        if not self.quiet:
            for line in lines:
                if line not in self._logged:  # each fact once, until it changes
                    log.warning("%s", line)
        self._logged = set(lines)

    def route(self, exposed: str) -> Route | None:
        """The route of an exposed name, hidden and denied ones included (their calls are
        answered as unknown by the pipeline, and journaled); ``None`` for names the guard
        does not offer at all (unknown, or withheld by a collision)."""
        return self._routes.get(exposed)

    def route_of(self, server: str, tool: str) -> Route | None:
        """The route of ``server``'s tool ``tool``; ``None`` when it is withheld or not listed."""
        return self._by_origin.get((server, tool))

    @property
    def tools(self) -> list[dict[str, Any]]:
        """Every listed tool (visible ones), in server order then each server's order."""
        return list(self._listed)

    def view_of(self, principal: Principal | None) -> tuple[int, list[dict[str, Any]]]:
        """``(generation, tools)`` that ``principal`` is shown (None: a client without one).

        The tools of :attr:`tools` less those the ``guard.principals`` rules matching the caller deny or
        hide (issue 27). Callers matching the same rules share one view; each view has a generation of
        its own, so a cursor of one view is refused by every other (a caller whose rules changed, for a
        token with other groups, lists again from the start).
        """
        matched = self.principals.matching(principal)
        if not matched:
            return self.generation, self._listed
        found = self._views.get(matched)
        if found is None:
            shown = []
            for item in self._listed:
                origin = item["_meta"][ORIGIN_KEY]
                if self.principals.verdict_of(matched, origin["server"], origin["tool"]).access == "allow":
                    shown.append(item)
            found = self._views[matched] = (next_generation(), shown)
        return found

    def presentation_of(self, principal: Principal | None) -> Presentation | None:
        """What ``guard.presentFor``'s model host is shown of ``principal``'s view (:meth:`view_of`): the
        tools with their schemas lowered and names made valid for it, and each shown name's tool
        (``calls.presenting.presented``), made once per view; None without ``presentFor``."""
        host = self.config.guard.present_for
        if host is None:
            return None
        generation, listed = self.view_of(principal)
        found = self._presented.get(generation)
        if found is None:
            from ..calls.presenting import presented  # (the lowering is loaded only for a host)
            from ..hosts.tables import host_profile

            found = self._presented[generation] = presented(listed, host_profile(host))
        return found

    def owned(self, principal: Principal | None, name: str) -> bool:
        """Whether a call to ``name`` is the presentation's to map back or refuse (:meth:`presentation_of`): a
        name shown to the host, or a tool of ``principal``'s view (withheld from the host, or shown under
        another name: unknown to the model). Any other name (hidden, denied, unknown, a server that is down)
        goes the way it goes without a host: the pipeline refuses and journals it, or it is answered -32603."""
        presentation = self.presentation_of(principal)
        if presentation is None:
            return False
        generation = self.view_of(principal)[0]
        names = self._owned.get(generation)
        if names is None:
            names = self._owned[generation] = frozenset(
                (*presentation.shown, *presentation.withheld, *(t.name for t in presentation.shown.values()))
            )
        return name in names

    async def presented_for(self, principal: Principal | None) -> Presentation | None:
        """:meth:`presentation_of`, a view of more than :data:`PRESENT_ON_LOOP` tools presented in a worker thread
        (lowering 10,000 tools held the loop 0.45 s on an idle machine: issue 25 item 1)."""
        host = self.config.guard.present_for
        if host is None:
            return None  # (every tools/call and tools/list asks: nothing to look up without a host)
        generation, listed = self.view_of(principal)
        if generation not in self._presented and len(listed) > PRESENT_ON_LOOP:
            from ..calls.presenting import presented
            from ..hosts.tables import host_profile

            found = await anyio.to_thread.run_sync(presented, listed, host_profile(host))
            if self.view_of(principal)[0] == generation:  # (else the view changed meanwhile: made anew below)
                self._presented[generation] = found
        return self.presentation_of(principal)

    def page(self, cursor: Any = None, principal: Principal | None = None) -> dict[str, Any]:
        """A ``tools/list`` result: one page of the merged list as ``principal`` sees it (:meth:`view_of`; as
        ``guard.presentFor``'s host is shown it, :meth:`presentation_of`) and, when more remain, ``nextCursor``.

        Raises:
            InvalidCursor: the cursor is not one this catalog issued for the current list
                (answer -32602).
        """
        generation, listed = self.view_of(principal)
        shown = self.presentation_of(principal)
        if shown is not None:
            listed = shown.tools
        items, next_cursor = self.cursors.page(listed, cursor, "tools", generation, self.config.guard.page_size)
        result: dict[str, Any] = {"tools": items}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result
