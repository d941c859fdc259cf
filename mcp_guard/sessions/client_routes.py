"""What one client message becomes in ``wrap``: refused at intake, judged, noted, or passed on as it is.

:class:`ClientRoutes` is the client → upstream routing of one :class:`~.relay.Relay` (which owns the order of the
client's messages and the sending; the stdio hot path, ``hot_path``, routes by the same methods):

- intake: a request whose id is not a string or an integer, or is that of a request still open, is refused
  -32600 (``client_requests``); any other request is admitted (open from now on);
- a ``tools/call`` (with an id) is judged against its envelope's tool table (mapped back first under
  ``--present-for``: ``calls.presenting``), after a listing of the guard's own when that table is not a complete,
  fresh listing (:meth:`ClientRoutes.needs_listing`); a ``tools/call`` without an id is dropped (a notification
  cannot be judged and answered);
- a ``tools/list`` request is noted, so that its answer is annotated; ``initialize``, ``logging/setLevel``,
  ``resources/subscribe`` and ``resources/unsubscribe`` are noted, to be replayed to a restarted upstream; a
  second ``initialize`` is refused (:data:`~mcp_guard.wire.messages.ALREADY_INITIALIZED`, red team 37 F8);
- a ``notifications/cancelled`` drops a call the guard still holds, or gives up one in flight; the client's
  answers to the upstream's requests go back under the upstream's own ids (``server_requests``).

Each method returns ``(to forward or None, reply or None)``; what is forwarded is the message as parsed (or, for a
call, what the pipeline made of it: mapped back, traced).
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import anyio

from ..calls.call import Route
from ..calls.pipeline import LISTING_FAILED, tool_name
from ..calls.policy import ToolPolicy
from ..calls.tool_table import ToolEntry, ToolTable
from ..peer.requests import ListingFailed
from ..wire.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, error_response, id_key, valid_id
from ..wire.messages import ALREADY_INITIALIZED
from ..wire.meta import era_meta

if TYPE_CHECKING:
    from .relay import Relay

__all__ = ["MAX_ROUTES", "ClientRoutes"]

MAX_ROUTES: Final = 100_000
"""Routes to listed tools kept (all of them, unless a server lists more, then made again as needed)."""

_TRACKED: Final = frozenset({"initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})


class ClientRoutes:
    """The routing of one relay's client messages (see the module docstring).

    Args:
        relay: the relay it routes for: its session, pipeline, tool tables (``listings``), answer notes, peer,
            and what a restart replays (``Relay.track``).
    """

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.session = relay.session
        self.pipeline = relay.session.pipeline
        self.table = relay.table
        self.listings = relay.listings
        self.notes = relay.notes
        self.counted = relay.counted
        self.peer = relay.peer
        self._routes: dict[str, tuple[ToolEntry, Route]] = {}

    def needs_listing(self, message: dict[str, Any]) -> bool:
        """A tools/call whose table is not a complete listing (:meth:`listing_needed`)."""
        if message.get("method") != "tools/call" or "id" not in message:
            return False
        return self.listing_needed(message, self.listings.table_for(message.get("params")))

    def listing_needed(self, message: dict[str, Any], table: ToolTable) -> bool:
        """Whether the tools/call ``message`` (with an id), judged against ``table`` (its envelope's), waits for a
        listing of the guard's own: a call is judged only against every page (red team 33: a client that listed
        the first page alone had a name another page lists again judged by the first page's schema, not refused
        as listed twice), so the guard lists every page itself first."""
        if table is not self.table and valid_id(message["id"]) and not self.listings.fresh(table):
            return True  # 2026-07-28 era: the listing's ttlMs has passed and no listen stream tells of changes
        if table.complete:
            return False
        params = message.get("params")
        name = params.get("name") if type(params) is dict else None
        return type(name) is str and valid_id(message["id"])

    async def route(self, message: dict[str, Any]) -> tuple[Any, Any]:
        """What to do with one client message: ``(to forward or None, reply or None)``.

        A ``tools/call`` is judged here (after the guard's own listing when it needs one).
        """
        refusal = self.refused_at_intake(message)
        if refusal is not None:
            return None, refusal
        return await self.route_admitted(message)

    async def route_admitted(self, message: dict[str, Any]) -> tuple[Any, Any]:
        """:meth:`route` for a message past :meth:`refused_at_intake`."""
        if "id" in message and message.get("method") == "tools/call":
            return await self.route_call(message)
        return self.admitted_now(message)

    def refused_at_intake(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The error answering a client request that cannot be relayed as it is, or None.

        A request whose id is not a string or an integer (its answer could not be told apart),
        or whose id is that of a request still open (in flight, or held: ``client_requests``; one
        answer could not be told from the other) is refused with -32600 and not forwarded: every
        request gets exactly one answer, its own. Any other request is admitted (open from now on).
        """
        if "id" not in message or message.get("method") is None:
            return None
        refusal = self.session.admit(message)
        if refusal is not None:
            return refusal
        if self.notes.any:  # notes of an earlier request under this id (given up)
            self.notes.forget(id_key(message["id"]))
        return None

    def route_now(self, message: dict[str, Any]) -> tuple[Any, Any]:
        """:meth:`route` for a message that needs no listing of the guard's own (see :meth:`needs_listing`).

        What is forwarded is always ``message`` itself, as parsed.
        """
        if "id" in message and message.get("method") is not None:
            refusal = self.refused_at_intake(message)
            if refusal is not None:
                return None, refusal
        return self.admitted_now(message)

    def admitted_now(self, message: dict[str, Any]) -> tuple[Any, Any]:
        """:meth:`route_now` for a message past :meth:`refused_at_intake`."""
        method = message.get("method")
        if method == "tools/call":
            if "id" not in message:
                self.counted.log(
                    logging.WARNING, "dropped a tools/call without an id: a notification cannot be judged and answered"
                )
                return None, None
            return self.call_verdict(message, self.listings.table_for(message.get("params")))
        if "id" in message and method == "tools/list":
            self.relay.note_list(message)
        elif method == "notifications/cancelled":
            return self._cancelled(message), None
        elif method is None:
            return self.relay.client_answer(message), None  # (under the upstream's own id: server_requests)
        elif type(method) is str and method in _TRACKED and "id" in message:
            if method == "initialize" and self.relay.replay.initialize_sent:  # (red team 37 F8: forwarded, replayed)
                self.counted.log(logging.WARNING, "refused a second initialize: the session has one already")
                return None, error_response(message["id"], INVALID_REQUEST, ALREADY_INITIALIZED)
            self.relay.replay.track(method, message.get("params"), message["id"])
        return message, None

    async def route_call(self, message: dict[str, Any]) -> tuple[Any, Any]:
        params = message.get("params")
        table = self.listings.table_for(params)
        if valid_id(message["id"]) and message.get("jsonrpc") == "2.0" and self.needs_listing(message):
            try:
                await self.listings.refresh(era_meta(params), table, not_before=anyio.current_time())
            except ListingFailed as exc:
                self.pipeline.trace_unrouted(LISTING_FAILED, INTERNAL_ERROR, (message["id"], params))
                text = f"mcp-guard could not list the upstream's tools: {exc}"
                return None, error_response(message["id"], INTERNAL_ERROR, text)
        return self.call_verdict(message, table)

    def call_verdict(self, message: dict[str, Any], table: ToolTable) -> tuple[Any, Any]:
        """A ``tools/call`` (with an id) judged against ``table``: ``(message, None)`` or ``(None, answer)``.

        The prelude and the pipeline's entry are the gateway's (``Pipeline.unlisted``, ``Pipeline.check``):
        one text and one log line per refusal for both commands."""
        request_id = message["id"]
        if not valid_id(request_id) or message.get("jsonrpc") != "2.0":
            text = "Invalid Request: a tools/call needs jsonrpc 2.0 and a string or integer id"
            return None, error_response(request_id if valid_id(request_id) else None, INVALID_REQUEST, text)
        params = message.get("params")
        name = tool_name(params)
        shown = None
        if name is not None and table.presented is not None:  # --present-for: mapped back first
            mapped = table.presented.map_call(self.pipeline, message)
            if isinstance(mapped, dict):
                return None, mapped
            message, tool = mapped
            params, shown, name = message["params"], tool, tool.name
        entry = table.get(name) if name is not None else None
        if entry is None:
            return None, self.session.unlisted(message, name)
        call = self.session.call_of(message, self._route_to(entry, table), shown, "")
        rejection = self.pipeline.check(call)
        if rejection is not None:
            return None, rejection.response(request_id)
        message = self.session.forwarded(message, call)  # (traced: its _meta carries the round trip's context)
        if self.pipeline.observer is not None or call.trace is not None:  # its outcome told (metrics, traces)
            self.notes.observe(request_id, partial(self.pipeline.observe, call, kind=None))
        if entry.output is not None:  # its result is judged (Pipeline.judge_output)
            self.notes.note_call(request_id, call)
        return message, None

    def _route_to(self, entry: ToolEntry, table: ToolTable) -> Route:
        """The pipeline's route to a listed tool (made once per listing of it): no renaming, no server
        name, and the one rule ``wrap``'s options set (``--hide-unsupported``: ``unsupported: hide``)."""
        cached = self._routes.get(entry.name)
        if cached is not None and cached[0] is entry and cached[1].policy.unsupported == table.unsupported:
            return cached[1]
        policy = ToolPolicy("allow", "", table.unsupported, None, None)
        route = Route(entry.name, "", entry.name, entry.compiled, policy, output=entry.output, outputs=table.outputs)
        if len(self._routes) > MAX_ROUTES:
            self._routes.clear()
        self._routes[entry.name] = (entry, route)
        return route

    def _cancelled(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """A client's cancellation: what to forward (the notice naming the request's upstream id), or None.

        A call the guard holds is dropped (neither sent nor answered); a request in flight is given
        up: the upstream may still answer it, and that late answer is passed on under the client's id
        (MCP clients drop it; the HTTP front frees the id with it) unless the client has sent another
        request under that id meanwhile (``peer.inflight``). A cancellation of a request the upstream
        sent the client goes to the upstream under that request's own id (``server_requests``). A
        cancellation naming no request in flight is dropped: the upstream was never sent such an id.
        """
        params = message.get("params")
        if type(params) is not dict or not valid_id(params.get("requestId")):
            return message
        withdrawal = self.session.withdraw(message)
        if withdrawal is None:
            return None
        if withdrawal.given_up is not None:
            # Sent: in flight under an upstream id of the guard's own. A cancelled tools/list stays noted: a late
            # answer must still be annotated (and cleaned).
            inflight, key = self.peer.inflight, id_key(params["requestId"])
            inflight.give_up(withdrawal.given_up, late=inflight.take(withdrawal.given_up), client=key)
            self.notes.ended(key, "cancelled")
        return withdrawal.notice
