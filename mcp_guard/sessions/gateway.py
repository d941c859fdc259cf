"""The gateway: ``serve``'s routing of a session, one MCP client in front of every enabled upstream of a config.

A :class:`Gateway` stands behind one :class:`~.session.Session` (the client's side, as for ``wrap``) and
holds one :class:`~.link.Link` per enabled server (its own module; the gateway is the link's
:class:`~.link.LinkOwner`, told of what happens upstream). Each link talks to its upstream
through the peer ``wrap`` uses too (``peer.connection``: connections through the connector
seam, ``upstream.stdio_connector``, ``http_upstream.http_connector``; eager restarts with backoff):

- A link that cannot start, or whose upstream goes away, is logged and started again with
  backoff (0.5 s doubling to 30 s after failed or short-lived starts); the other links are
  not affected. While a link is down its tools, prompts and resources leave the merged
  lists (the client gets ``notifications/tools/list_changed``); requests it had not
  answered are answered at once with JSON-RPC -32603 (a ``tools/call`` is journaled
  ``upstream_died``); nothing is re-sent.
- Handshake era: the session answers ``initialize`` itself (the client's protocol version
  when every upstream agreed on it, capabilities merged over the upstreams), and initializes
  each upstream with the client's own ``initialize`` params, then
  ``notifications/initialized`` and the last ``logging/setLevel``.
- 2026-07-28 era: no handshake; every request is served from the merged lists its own
  envelope sees, listed per envelope, kept fresh by ``ttlMs`` or the guard's listen streams;
  ``server/discover`` and the client's ``subscriptions/listen`` are the session's. That half
  of the gateway is :mod:`.modern_era` (:class:`~.modern_era.ModernEra`, ``Gateway.modern``).

Routing (client → upstream): ``tools/list`` from the merged :class:`~.catalog.Catalog` with
the guard's cursors; ``tools/call`` → :meth:`Catalog.route` → :meth:`Pipeline.admit` →
forwarded with ``params.name`` the upstream's own name → :meth:`Pipeline.finish`;
``prompts/get`` and ``completion/complete`` (``ref/prompt``) by namespaced prompt name (:mod:`.named_routes`);
``resources/read``, ``subscribe``, ``unsubscribe`` and ``completion/complete``
(``ref/resource``) by the URI table; ``logging/setLevel`` and
``notifications/roots/list_changed`` to every link; ``ping`` is answered by the session.

Ids: each link gives every request it forwards an id of its own (a string with a random
nonce) and restores the client's id on the answer; ``notifications/cancelled`` goes to the
link that holds the request, with that link's id. Requests from an upstream to the client
(sampling, elicitation, roots) get a session id of their own, and the client's answer goes
back to that upstream under the upstream's id. Progress tokens pass through unchanged.

A ``list_changed`` notification from upstream ``k`` makes the session list ``k`` again,
update the merged list and send the client one ``list_changed`` of that kind (2026-07-28 era:
on every listen stream of the client that asked for that kind).

Messages are parsed and re-serialized as in the relay (compact, ASCII-only); ``mcp-guard/``
``_meta`` keys coming from upstreams are removed. Logs never hold argument values.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Mapping
from typing import Any, Final

import anyio
import anyio.abc

from ..calls.journal import Journal
from ..calls.pinning import LockFile
from ..calls.pipeline import LISTING_FAILED, SERVER_UNAVAILABLE, Pipeline, tool_name
from ..calls.policy import Budget
from ..calls.stores import JournalSink, SharedBudget
from ..config import GatewayConfig
from ..core import Compiled
from ..peer.inflight import InFlight
from ..peer.requests import RequestFailed
from ..peer.upstream import EXIT_WAIT_SECONDS, PENDING_DRAIN_SECONDS, Connector, LineLink
from ..streams.ends import stop_signal
from ..streams.pipes import LineHandler
from ..wire.framing import DEFAULT_MAX_LINE
from ..wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Uncarriable,
    dumps,
    error_response,
    id_key,
    invalid_request_text,
    valid_id,
)
from ..wire.messages import ALREADY_INITIALIZED
from ..wire.meta import is_modern
from .catalog import Catalog
from .client_requests import Ticket
from .envelopes import (
    merged_capabilities,
)
from .freshness import KINDS
from .link import Forwarded, Link, connector_for, unavailable
from .merged_lists import MergedLists
from .methods import BEFORE_INITIALIZE, LIST_METHODS, ROUTED_METHODS
from .modern_era import ModernEra, gateway_info, gateway_instructions
from .named_routes import DOWN, NamedRoutes
from .naming import CursorCodec, InvalidCursor
from .session import Session
from .upstream_side import STOPPED_AFTER_CLIENT
from .whereabouts import Whereabouts

__all__ = ["Gateway", "Link", "RequestFailed", "connector_for", "serve_session"]

log = logging.getLogger("mcp_guard")

RELIST_INTERVAL: Final = 1.0
"""A link lists again at most once per this many seconds after ``list_changed`` (notifications meanwhile coalesce)."""

NOT_INITIALIZED: Final = (
    "mcp-guard: the client has not sent initialize, so the gateway has not set up its servers for it: in the "
    "handshake era every request but ping comes after initialize (a 2026-07-28 request carries its protocol "
    "version in _meta); the request was not sent"
)


def serve_session(
    client: LineLink,
    config: GatewayConfig,
    *,
    journal: Journal | JournalSink | None = None,
    budget: Budget | SharedBudget | None = None,
    **options: Any,
) -> Session:
    """``serve``'s session: ``client`` served by every enabled upstream of ``config`` (:class:`Gateway`, the other
    ``options`` as it takes them); every call through the whole pipeline, journaled to ``journal`` (or not) and
    counted in ``budget`` (the process's shared one, or its own: None)."""
    pipeline = Pipeline(budget=budget, journal=journal, new_tools=config.guard.new_tools, client=client)
    session = Session(client, pipeline)
    Gateway(session, config, **options)
    return session


class Gateway:
    """``serve``'s routing of a :class:`~.session.Session`: one client served by every enabled upstream of ``config``.

    Args:
        session: the client's session (its pipeline journals and counts every call); the gateway attaches
            itself to it as its routing.
        config: the gateway configuration.
        lock: the lock file in force (or ``None``).
        connectors: per server name, a connector replacing :func:`connector_for` (tests).
        request_timeout: seconds the guard waits for an upstream to answer its own requests
            (handshake, listings, discovery, a listen stream's acknowledgement).
        start_timeout: seconds the first ``tools/list`` (and the ``initialize`` answer) waits
            for upstreams still starting.
        drain_timeout: seconds the requests the client sent before closing may take to be
            answered (``upstream.PENDING_DRAIN_SECONDS``, as ``wrap``'s; ``--request-timeout``
            shortens it); the upstreams then get at most ``upstream.EXIT_WAIT_SECONDS`` to exit,
            and are stopped (SIGTERM at once); what is still open is answered with -32603.
        max_message_bytes: the cap on one message from an upstream (``--max-message-bytes``).
        relist_interval: seconds between two rounds of re-listing one upstream after its
            ``list_changed`` notifications (which coalesce meanwhile).
        client_request_timeout: seconds a forwarded client request may wait for its answer
            (counted again from each progress notification for it) before it is answered
            with -32603 and cancelled upstream (``--request-timeout``, as for ``wrap``);
            ``None``: no limit. ``subscriptions/listen`` and ``tasks/result`` have none.

    Attributes:
        links: one :class:`Link` per enabled server, in config order.
        view: the merged lists of the handshake era (2026-07-28 envelopes have their own).
        pipeline: the session's: the ordered checks and the journal of every ``tools/call``.
    """

    def __init__(
        self,
        session: Session,
        config: GatewayConfig,
        *,
        lock: LockFile | None = None,
        connectors: Mapping[str, Connector] | None = None,
        request_timeout: float = 30.0,
        start_timeout: float = 30.0,
        drain_timeout: float = PENDING_DRAIN_SECONDS,
        max_message_bytes: int = DEFAULT_MAX_LINE,
        relist_interval: float = RELIST_INTERVAL,
        client_request_timeout: float | None = None,
    ) -> None:
        self.session = session
        self.hot: LineHandler | None = None  # (no stdio hot path: the gateway answers and renames every line)
        self.start_failure: Exception | None = None  # (never: a server that cannot start is started again)
        # The session's (its pipeline, client_requests, server_requests, log_counts), for the links and views.
        self.pipeline = session.pipeline
        self.requests = session.requests
        self.server_requests = session.server_requests
        self.counted = session.counted
        self.config = config
        self.lock = lock
        self.request_timeout = request_timeout
        self.start_timeout = start_timeout
        self.drain_timeout = drain_timeout
        self.relist_interval = relist_interval
        self.client_request_timeout = client_request_timeout
        self.cursors = CursorCodec()
        self.view = MergedLists(config, lock, self.cursors)
        self.pipeline.principals = self.view.catalog.principals or None  # (guard.principals; the catalog's copy)
        connectors = connectors or {}
        self.links = [
            Link(self, s.name, connectors.get(s.name) or connector_for(s, max_message_bytes)) for s in config.enabled
        ]
        self.by_name = {link.name: link for link in self.links}
        self.init_params: Any = None
        self.log_level: Any = None
        self.closing = False
        self._announced = False
        self._init_answered = anyio.Event()  # (requests after initialize are answered after it: red team 33)
        self._era_known = anyio.Event()
        self._started = False
        # Names and URIs the client was shown, with their server: a request to one whose server
        # is down is told so (-32603), not answered as unknown.
        self.whereabouts = Whereabouts(self.links, config.guard.name_format, request_timeout)
        self.named = NamedRoutes(self, self.by_name)  # prompts/get, resources/*, completion/complete
        self.modern = ModernEra(self)  # the 2026-07-28 era: listings per envelope, listen streams, discovery
        session.attach(self)

    @property
    def catalog(self) -> Catalog:
        """The merged tool list of the handshake era."""
        return self.view.catalog

    def unready(self) -> list[str]:
        """The names of the enabled servers whose upstream is not connected, initialized and listed."""
        return [link.name for link in self.links if not link.ready]

    # --- running ------------------------------------------------------------------------------

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Nothing starts before the client shows its era (its ``initialize``, or a first other request); a
        config with no enabled server is served (every list is empty), with a warning (issue 13 item 3)."""
        if not self.links:
            log.warning(
                "the config enables no server (mcpServers is empty, or every entry is disabled): "
                "the gateway serves no tools, prompts or resources"
            )

    async def drain(self) -> None:
        """The client closed its side: requests it sent just before are still answered if they can be within
        ``drain_timeout`` (PENDING_DRAIN_SECONDS, as wrap's are, trial T4: the client may be reading; a slow
        server may be starting); the upstreams then get EXIT_WAIT_SECONDS to exit, and are stopped (SIGTERM at
        once). What is still open is answered with an error, never dropped. The client's own listen streams
        are the session's: they end with it, unanswered (red team 34), and hold nothing up."""
        with anyio.move_on_after(min(self.drain_timeout, self.client_request_timeout or self.drain_timeout)):
            while len(self.requests) > sum(x.request_id in self.requests for x in self.modern.listens.values()):
                await anyio.sleep(0.02)
        self.closing = True
        for listen in list(self.modern.listens.values()):
            self.requests.close(listen.request_id)  # (as when the client cancels one: no answer, no more frames)
            listen.scope.cancel()
        await self._close_upstreams(anyio.current_time() + min(EXIT_WAIT_SECONDS, self.drain_timeout))
        for request_id in self.requests.open_ids():  # (valid ids only: id_key keeps them as they are)
            await self.reply(error_response(request_id, INTERNAL_ERROR, STOPPED_AFTER_CLIENT))

    async def refuse_for(self, failure: Exception) -> None:
        """(Never called: :attr:`start_failure` stays None.)"""

    def inflight_of(self, owner: Any) -> InFlight[Any]:
        """The requests in flight at the link ``owner``."""
        link: Link = owner
        return link.peer.inflight

    def spawn(self, func: Any, *args: Any) -> None:
        """Run ``func(*args)`` in the session's task group."""
        self.session.spawn(func, *args)

    def _start_links(self) -> None:
        if not self._started:
            self._started = True
            for link in self.links:
                self.spawn(link.run)

    async def wait_for_client_era(self) -> None:
        """Wait until the client showed its era (``initialize``, or a first other request)."""
        await self._era_known.wait()

    async def settled(self) -> None:
        """Wait (at most ``start_timeout``) until every link made its first attempt."""
        self._start_links()
        with anyio.move_on_after(self.start_timeout):
            for link in self.links:
                await link.settled.wait()
            await self.view.prepared()  # (a big listing is classified off the loop: MergedLists.put_tools)

    async def _close_upstreams(self, deadline: float) -> None:
        """Close every upstream's input; wait until they are gone, or ``deadline`` (``anyio.current_time()``)."""
        with anyio.CancelScope(deadline=deadline):
            for link in self.links:
                if link.upstream is not None:
                    with contextlib.suppress(Exception):
                        await link.upstream.close_send()
            while any(link.upstream is not None for link in self.links):
                await anyio.sleep(0.02)

    async def reply(self, message: dict[str, Any]) -> None:
        """Send one message to the client (``Session.reply``: the answer to a request the client cancelled is
        dropped)."""
        await self.session.reply(message)

    def compiled_for(self, params: dict[str, Any]) -> Compiled | None:
        """The schema a ``tools/call`` with ``params`` would be judged by now (the handshake era's view;
        a 2026-07-28 call's envelope may judge by another, and then checks again), or None."""
        route = self.view.catalog.route(params["name"])
        return None if route is None else route.compiled

    async def client_message(self, message: Any) -> None:
        """One parsed client message, in the order read (``client_lines``)."""
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            found = message.get("id") if type(message) is dict else None
            text = invalid_request_text(message, batches=False)
            await self.reply(error_response(found if valid_id(found) else None, INVALID_REQUEST, text))
            return
        method = message.get("method")
        if type(method) is not str and "method" in message:
            found = message.get("id")
            text = invalid_request_text(message)
            await self.reply(error_response(found if valid_id(found) else None, INVALID_REQUEST, text))
            return
        if type(method) is not str:
            await self._client_answer(message)
        elif "id" in message:
            if method == "initialize" and valid_id(message["id"]):
                self.requests.admit(message["id"])  # (answered once the upstreams settled, or at the drain)
                await self._initialize(message)
            else:
                refusal = self.session.admit(message)
                if refusal is not None:
                    await self.reply(refusal)
                    return
                if not self._era_known.is_set():
                    self._start_links()
                    self._era_known.set()
                self.session.spawn(self._request, message, self.requests.ticket(message["id"]))
        else:
            await self._client_notification(method, message)

    async def _initialize(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        if type(params) is not dict:
            await self.reply(error_response(message["id"], INVALID_PARAMS, "Invalid params: initialize needs params"))
            return
        if self.init_params is not None:  # (red team 37 F8: a second one replaced what restarts replay)
            self.counted.log(logging.WARNING, "refused a second initialize: the session has one already")
            await self.reply(error_response(message["id"], INVALID_REQUEST, ALREADY_INITIALIZED))
            return
        self.init_params = params
        self._era_known.set()
        # Upstreams already running for a 2026-07-28 probe get the handshake now.
        late = [link for link in self.links if link.ready and not link.initialized]
        self.spawn(self._answer_initialize, message["id"], params, late)

    async def _late_handshake(self, link: Link) -> None:
        try:
            await link.handshake()
        except RequestFailed as exc:
            log.error("upstream %s: could not initialize it: %s", link.name, exc)
            return
        await self.link_changed(link)

    async def _answer_initialize(self, request_id: Any, params: dict[str, Any], late: list[Link]) -> None:
        async with anyio.create_task_group() as tg:
            for link in late:
                tg.start_soon(self._late_handshake, link)
        await self.settled()
        ready = [link for link in self.links if link.ready]
        versions = {json.dumps(link.protocol_version) for link in ready}
        requested = params.get("protocolVersion")
        version = ready[0].protocol_version if len(versions) == 1 and ready else requested
        result = {
            "protocolVersion": version,
            "capabilities": merged_capabilities(link.capabilities for link in ready),
            "serverInfo": gateway_info(),
            "instructions": gateway_instructions(self.links),
        }
        try:
            await self.reply({"jsonrpc": "2.0", "id": request_id, "result": result})
        finally:
            self._init_answered.set()
        self._announced = True

    async def _client_notification(self, method: str, message: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            return  # each upstream got its own
        if method == "notifications/cancelled":
            params = message.get("params")
            request_id = params.get("requestId") if type(params) is dict else None
            if not valid_id(request_id):
                return
            listen = self.modern.listens.get(id_key(request_id))
            if listen is not None:
                self.requests.close(request_id)  # a cancelled stream is not answered
                listen.scope.cancel()  # its upstream streams are cancelled with it
                return
            withdrawal = self.session.withdraw(message)
            if withdrawal is None:
                return  # answered already or never asked; or not forwarded yet: it will not be (see forward)
            link: Link = withdrawal.owner
            if withdrawal.given_up is not None:
                await link.cancelled(withdrawal.given_up[1])  # its late answer is dropped: the id is the client's again
            with contextlib.suppress(RequestFailed, Uncarriable):
                await link.send(withdrawal.notice)
            return
        if method in ROUTED_METHODS or method in LIST_METHODS:  # (red team 32: every upstream ran an unchecked call)
            self.counted.log(
                logging.WARNING, "dropped a client %s without an id: it cannot be judged and answered", method
            )
            return
        for link in self.links:  # roots/list_changed and any other notification: every running upstream
            if link.ready:
                with contextlib.suppress(RequestFailed, Uncarriable):
                    await link.send(message)

    async def _client_answer(self, message: dict[str, Any]) -> None:
        """The client's answer to a request an upstream sent it: back to that upstream, under its id."""
        found = self.session.client_answer(message)
        if found is None:
            return
        link, answer = found
        try:
            await link.send(answer)
        except (RequestFailed, Uncarriable):
            log.warning("upstream %s: could not pass on the client's answer", link.name)

    # --- client requests ----------------------------------------------------------------------

    def _modern(self, params: Any) -> bool:
        """Whether a request is served from its 2026-07-28 envelope's lists (no handshake in this session)."""
        return is_modern(params) and self.init_params is None

    async def _request(self, message: dict[str, Any], ticket: Ticket | None) -> None:
        """One client request (admitted as ``ticket``), served in a task of its own: the client may cancel it and
        reuse its id meanwhile; what this task answers then goes nowhere (``Session.serving``)."""
        request_id = message["id"]
        self.session.serving(request_id, ticket)
        method = message["method"]
        params = message.get("params")
        if self.init_params is None and method not in BEFORE_INITIALIZE and not is_modern(params):
            await self.reply(error_response(request_id, INTERNAL_ERROR, NOT_INITIALIZED))
            return
        if self.init_params is not None:
            await self._init_answered.wait()  # a request sent after initialize is not answered before it
        try:
            if method == "ping":
                await self._result(request_id, {}, params)
            elif method == "server/discover":
                await self.modern.discover(message)
            elif method == "tools/call":
                await self._tools_call(message)
            elif method in LIST_METHODS:
                await self._list(request_id, params, LIST_METHODS[method])
            elif method == "prompts/get":
                await self.named.prompt(message, params.get("name") if type(params) is dict else None, ("name",))
            elif method in ("resources/subscribe", "resources/unsubscribe") and self._modern(params):
                text = f"Method not found: {method} is not in the 2026-07-28 era; use subscriptions/listen"
                await self.reply(error_response(request_id, METHOD_NOT_FOUND, text))
            elif method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
                await self.named.resource(message, params.get("uri") if type(params) is dict else None)
            elif method == "completion/complete":
                await self.named.complete(message)
            elif method == "logging/setLevel":
                await self._set_level(message)
            elif method == "subscriptions/listen" and self._modern(params):
                await self.modern.listen(message)
            else:
                text = f"Method not found: the gateway does not route {method[:80]}"
                await self.reply(error_response(request_id, METHOD_NOT_FOUND, text))
        except InvalidCursor as exc:
            await self.reply(error_response(request_id, INVALID_PARAMS, str(exc)))

    async def _result(self, request_id: Any, result: dict[str, Any], params: Any) -> None:
        if is_modern(params):
            result = {**result, "resultType": "complete"}
        await self.reply({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def view_for(self, params: Any, kind: str, server_of: ModernEra.ServerOf | None = None) -> MergedLists:
        """The merged lists a request is served from: its envelope's (fresh for ``kind``), or the handshake era's.

        ``server_of``: the server a view routes the request's one name to (or None); then only that
        server's listing needs to be fresh, unless the name routes nowhere (``ModernEra.routed``).
        """
        if self._modern(params):
            if server_of is not None:
                return (await self.modern.routed(params, kind, server_of)).view
            return (await self.modern.view(params, {kind})).view
        await self.settled()
        return self.view

    async def _list(self, request_id: Any, params: Any, member: str) -> None:
        """``tools/list``, ``prompts/list``, ``resources/list``, ``resources/templates/list`` from the merged lists."""
        cursor = params.get("cursor") if type(params) is dict else None
        kind = "resources" if member == "resourceTemplates" else member
        caller = self.session.principal_of(request_id)  # (its tools/list)
        envelope = await self.modern.view(params, {kind}) if self._modern(params) else None
        view = self.view if envelope is None else envelope.view
        if envelope is None:
            await self.settled()
        if member == "tools":
            await view.catalog.presented_for(caller)  # (guard.presentFor: a big listing lowered off the loop)
        result = view.page(member, cursor, caller)
        if envelope is not None:  # 2026-07-28 list results carry their cache hints: the shortest ttlMs of the
            # upstreams' listings, and private (each gateway session merges for its own client and policy).
            result.update(resultType="complete", ttlMs=envelope.ttl_ms(kind), cacheScope="private")
        await self.reply({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def _tools_call(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        params = message.get("params")
        name, request = tool_name(params), (request_id, params)  # (request: the trace of a refusal before routing)
        if name is None:
            await self.reply(self.session.unlisted(message, None))
            return
        assert type(params) is dict
        called = name

        def server_of(view: MergedLists) -> str | None:
            route = view.catalog.route(called)
            return route.server if route is not None else None

        catalog = (await self.view_for(params, "tools", server_of)).catalog
        shown = None
        principal = self.session.principal_of(request_id)
        presentation = await catalog.presented_for(principal)
        if presentation is not None and catalog.owned(principal, name):
            # guard.presentFor: the name the host was shown, mapped back first (any other name goes on below,
            # as without a host: hidden and denied ones refused and journaled, a down server's said so)
            from ..calls.presenting import map_call  # (loaded with the lowering, for a host only)

            tool = presentation.shown.get(name)
            found = catalog.route(tool.name) if tool is not None else None  # (the server, for the metrics)
            mapped = map_call(self.pipeline, message, presentation.shown, found.server if found is not None else "")
            if isinstance(mapped, dict):
                await self.reply(mapped)
                return
            message, tool = mapped
            params, shown, name = message["params"], tool, tool.name
        route = catalog.route(name)
        link = self.by_name[route.server] if route is not None else None
        if link is not None and link.tools_stale:
            # Its server said its tools changed: judged against the new listing, never the replaced one.
            if not await link.tools_current():
                self.pipeline.trace_unrouted(LISTING_FAILED, INTERNAL_ERROR, request, link.name)
                text = (
                    f"mcp-guard: the server `{link.name}` said its tools changed and could not be listed again "
                    f"within {self.request_timeout:g} s; the call was not sent"
                )
                await self.reply(error_response(request_id, INTERNAL_ERROR, text))
                return
            catalog = (await self.view_for(params, "tools", server_of)).catalog
            route = catalog.route(name)
        if (
            route is None
            and (down := self.whereabouts.down_owner("tool", name)) is not None
            and await self.whereabouts.restarted(down)
        ):
            catalog = (await self.view_for(params, "tools", server_of)).catalog
            route = catalog.route(name)
        if route is None:
            down = self.whereabouts.down_owner("tool", name)
            if down is not None:
                await self.pipeline.refused_unrouted(down, name, SERVER_UNAVAILABLE, request)  # (then answered)
                await self.reply(
                    error_response(request_id, INTERNAL_ERROR, unavailable(down, "tool", self.by_name[down].failure))
                )
                return
            await self.reply(self.session.unlisted(message, name))
            return
        call = self.session.call_of(message, route, shown, None)
        rejection = await self.pipeline.admit(call)  # (Pipeline.check, then the journal, shared budget, intent)
        if rejection is not None:
            await self.reply(rejection.response(request_id))
            return
        outgoing = self.session.forwarded(message, call)
        link = self.by_name[route.server]
        await self.forward(link, outgoing, Forwarded(request_id, "tools/call", call, modern=call.modern))

    async def forward(self, link: Link, message: dict[str, Any], forwarded: Forwarded) -> None:
        request_id = forwarded.client_id
        if not self.session.holds(request_id):  # cancelled while it was being checked: never sent
            if forwarded.call is not None:
                await self.pipeline.finish(forwarded.call, None, "cancelled")
            return
        try:
            upstream_id = await link.forward(message, forwarded)
        except Uncarriable:
            if forwarded.call is not None:
                await self.pipeline.finish(forwarded.call, {"error": "uncarriable"})
            text = "Invalid params: the request holds a number JSON cannot carry exactly; it was not forwarded"
            await self.reply(error_response(request_id, INVALID_PARAMS, text))
            return
        except RequestFailed:
            if forwarded.call is not None:
                await self.pipeline.finish(forwarded.call, None)
            await self.reply(error_response(request_id, INTERNAL_ERROR, DOWN))
            return
        if not link.holds(upstream_id):
            return
        if not self.requests.sent(request_id, link, self.session.served(request_id)):  # cancelled while being sent
            await link.cancelled(upstream_id)
            notice = {"requestId": upstream_id, "reason": "cancelled by the client"}
            with contextlib.suppress(RequestFailed, Uncarriable):
                await link.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": notice})
            return

    async def answer(self, link: Link, forwarded: Forwarded, response: dict[str, Any]) -> None:
        """An upstream answered a forwarded request: journal it (calls), restore the client's id, pass it on.

        An answer holding a number JSON cannot carry (NaN, Infinity) is withheld: the client gets
        -32603 instead, and a call is journaled ``protocol_error``. A call's result is judged against
        the tool's ``outputSchema`` first (``Pipeline.judge_output``; journaled ``output_invalid``).
        """
        ticket = self.forget_client_request(forwarded.client_id)
        outcome = None
        if forwarded.call is not None:  # judged against the outputSchema of the route it was admitted by
            response, outcome = self.pipeline.judge_output(forwarded.call, response)
        result = response.get("result")
        if forwarded.modern and type(result) is dict and "resultType" not in result:
            # A handshake-era upstream answered a 2026-07-28 client's request: the era requires it.
            response = {**response, "result": {**result, "resultType": "complete"}}
        outgoing = {**response, "id": forwarded.client_id}
        writer = self.session.writer
        async with writer.turn(outgoing) as big:  # (a big one made in the worker thread: client_writer)
            try:
                data = await writer.encode(outgoing, big)
            except Uncarriable:
                log.warning(
                    "upstream %s: withheld an answer holding a number JSON cannot carry (NaN or Infinity)", link.name
                )
                text = "mcp-guard: the upstream's answer holds a number JSON cannot carry (NaN or Infinity); withheld"
                response = error_response(response.get("id"), INTERNAL_ERROR, text)
                data = dumps(error_response(forwarded.client_id, INTERNAL_ERROR, text))
            if forwarded.call is not None:
                await self.pipeline.finish(forwarded.call, response, outcome)
            if self.session.goes_out(outgoing, ticket):
                await writer.send(data)

    def forget_client_request(self, client_id: Any) -> Ticket | None:
        """The client's request ``client_id`` is no longer held by any upstream (its answer is going out): its
        ticket (``ClientRequests.unsent``), or None."""
        return self.requests.unsent(client_id)

    async def _set_level(self, message: dict[str, Any]) -> None:
        self.log_level = message.get("params")
        for link in self.links:
            if link.ready and "logging" in link.capabilities:
                try:
                    await link.request("logging/setLevel", self.log_level)
                except RequestFailed as exc:
                    log.warning("upstream %s: could not set the log level: %s", link.name, exc)
        await self._result(message["id"], {}, message.get("params"))

    def modern_list_changed(self, link: Link, kind: str) -> None:
        """A 2026-07-28-era upstream said its ``kind`` list changed (``link.LinkOwner``): ``ModernEra.list_changed``."""
        self.modern.list_changed(link, kind)

    def subscriptions_of(self, link: Link) -> list[str]:
        """The resource URIs the client subscribed to at ``link`` (replayed after a restart)."""
        return self.named.subscriptions_of(link)

    # --- requests from upstreams --------------------------------------------------------------

    async def server_request(self, link: Link, message: dict[str, Any]) -> None:
        """An upstream's request to the client (sampling, elicitation, roots): under an id of the guard's own
        (``server_requests``), to the client."""
        await self.reply(self.session.to_client(link, message))

    async def server_requests_gone(self, link: Link) -> None:
        """``link`` went away: its requests to the client are cancelled there (their answers dropped)."""
        await self.session.server_requests_gone(link)

    # --- merged lists -------------------------------------------------------------------------

    async def link_changed(self, link: Link, kind: str | None = None) -> None:
        """``link`` came up, went down, or re-listed ``kind``: rebuild the merged lists; tell the client."""
        if self.closing:
            return  # the client is gone: nothing to rebuild or announce
        if not link.ready:
            changed = self.view.remove(link.name)
        else:
            changed = set()
            if kind in (None, "tools"):
                tools = link.tools  # (still the server's when prepared off the loop: put_tools)
                changed |= await self.view.put_tools(link.name, tools, lambda: link.ready and link.tools is tools)
            if kind in (None, "prompts"):
                changed |= self.view.set_prompts(link.name, link.prompts)
            if kind in (None, "resources"):
                changed |= self.view.set_resources(link.name, link.resources, link.templates)
        self.whereabouts.remember(self.view)
        if kind is None and not link.initialized:
            await self.modern.link_changed(link)
        if not self._announced or stop_signal() is not None:
            return  # the client lists after its initialize answer; a guard stopping announces nothing (rt37 F1)
        for k in KINDS:
            if k in changed:
                await self.reply({"jsonrpc": "2.0", "method": f"notifications/{k}/list_changed"})
