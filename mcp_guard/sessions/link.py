"""One upstream of a gateway session: its connection loop, its own requests, the requests it forwards.

A :class:`Link` talks to its upstream through an :class:`~mcp_guard.peer.connection.UpstreamPeer`
(the one ``wrap`` uses too: connections through the connector seam, see :func:`connector_for`;
eager restarts with backoff; reading, unreadable lines, the guard's own requests). The link is
the peer's owner (:class:`~mcp_guard.peer.connection.PeerEvents`): it sets each connection up
(handshake with the client's ``initialize`` params, listings), and forwards client requests
under ids of its own (``peer.requests``). It tells its owner what happens through :class:`LinkOwner`
(answers, server requests, list changes, the link coming up or going down) and never reaches
into it otherwise; :class:`~mcp_guard.sessions.gateway.Gateway` is that owner.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from ..calls.call import Call
from ..calls.pipeline import Pipeline
from ..config import HttpServer, StdioServer
from ..peer.backoff import Backoff
from ..peer.connection import UpstreamPeer, failure_reason
from ..peer.handshake import handshake
from ..peer.inflight import timed_out_text
from ..peer.listens import OwnListens
from ..peer.requests import RequestFailed, list_pages
from ..peer.upstream import Connector, LineLink
from ..streams.ends import stop_signal
from ..streams.pipes import LineHandler, PipeLineStream
from ..wire.framing import DEFAULT_MAX_LINE
from ..wire.jsonrpc import INTERNAL_ERROR, error_response, id_key, valid_id
from ..wire.messages import stopped_text
from .client_requests import Ticket
from .freshness import KINDS
from .server_requests import ServerRequests
from .upstream_side import gone_text

__all__ = ["Forwarded", "Link", "LinkOwner", "connector_for", "failure_reason", "unavailable"]

log = logging.getLogger("mcp_guard")


FrameHandler = Callable[[str, dict[str, Any]], Awaitable[None]]
"""What a frame of one of the guard's own listen streams goes to: ``handler(method, params)``."""


class LinkOwner(Protocol):
    """What a :class:`Link` needs of the session that owns it: settings, and the events it reports.

    Settings: ``request_timeout`` (the guard's own requests), ``client_request_timeout``
    (forwarded ones; ``None``: no limit), ``relist_interval``, ``closing`` (the client has
    gone), ``init_params`` and ``log_level`` (what the client set), ``pipeline`` (journals calls).
    """

    request_timeout: float
    client_request_timeout: float | None
    relist_interval: float
    closing: bool
    init_params: Any
    log_level: Any
    pipeline: Pipeline

    def spawn(self, func: Any, *args: Any) -> None:
        """Run ``func(*args)`` in the owner's task group."""

    async def wait_for_client_era(self) -> None:
        """Until the client showed its protocol era."""

    def subscriptions_of(self, link: Link) -> list[str]:
        """The resource URIs the client subscribed to at ``link``."""

    async def reply(self, message: dict[str, Any]) -> None:
        """Event: send the client this message (a notification of the upstream's, an error)."""

    async def answer(self, link: Link, forwarded: Forwarded, response: dict[str, Any]) -> None:
        """Event: the upstream answered a forwarded request (``response`` under the upstream's id)."""

    def forget_client_request(self, client_id: Any) -> Ticket | None:
        """Event: the client's request ``client_id`` is no longer held upstream (its ticket, ``client_requests``)."""

    async def link_changed(self, link: Link, kind: str | None = None) -> None:
        """Event: ``link`` came up, went down, or listed ``kind`` again."""

    def modern_list_changed(self, link: Link, kind: str) -> None:
        """Event: a 2026-07-28-era upstream said its ``kind`` list changed."""

    async def server_request(self, link: Link, message: dict[str, Any]) -> None:
        """Event: the upstream sent the client a request (sampling, elicitation, roots)."""

    async def server_requests_gone(self, link: Link) -> None:
        """Event: ``link`` went away; its requests to the client are void."""

    @property
    def server_requests(self) -> ServerRequests[Link]:
        """The upstreams' requests to the client, under ids of the session's own."""


def unavailable(server: str, what: str, failure: str | None = None) -> str:
    """The -32603 message for a request to ``what`` (a tool, prompt, resource) of a server that is down;
    ``failure``: why its last start failed (``Link.failure``: the guard's own text), when it did."""
    why = f"its last start failed: {failure}" if failure else "it went away or could not start"
    return (
        f"mcp-guard: the server `{server}` of this {what} is not running right now ({why}; the guard keeps "
        "starting it again, with backoff); the request was not sent. Try again later."
    )


def connector_for(server: StdioServer | HttpServer, max_message_bytes: int = DEFAULT_MAX_LINE) -> Connector:
    """The relay connector of one config entry (stdio: its command, ``env`` over the guard's, ``cwd``).

    ``max_message_bytes`` caps one message from the upstream (a longer one is skipped as it
    arrives, and the request it answers gets an error).
    """
    if isinstance(server, StdioServer):
        from ..peer.upstream import stdio_connector

        return stdio_connector(
            [server.command, *server.args],
            server.env or None,
            server.cwd,
            max_line=max_message_bytes,
            name=server.name,
        )
    from ..peer.http_upstream import http_connector

    return http_connector(
        server.url, server.headers, max_message_bytes=max_message_bytes, label=f"upstream {server.name}: "
    )


@dataclass
class Forwarded:
    """A client request a link forwarded: the client's id, its method, and the call (``tools/call``)."""

    client_id: Any
    method: str
    call: Call | None = None
    modern: bool = False  # a 2026-07-28 request: its result needs ``resultType``, whoever answers


class Link:
    """One upstream of a gateway session, connected again whenever it goes away.

    Attributes:
        name: the server's name in the config.
        ready: connected, initialized (handshake era) and listed.
        settled: set once the first start attempt finished (well or not).
        tools, prompts, resources, templates: the upstream's complete listings (handshake
            era; ``None`` when the upstream is down or does not offer the feature).
        capabilities, protocol_version, server_info: from its ``initialize`` answer.
        offers: 2026-07-28 era: the list kinds its ``server/discover`` answer offers
            (``{"tools"}`` when it answered with an error; ``None`` before it was asked on
            this connection).
        restarts: connections made after the first.
        connection: counts the connections made (2026-07-28 listings belong to one).
        failed_starts: starts that failed (could not connect, or could not be set up), counted from the first: a
            request that waits for a start is answered when that start fails (``Whereabouts.restarted``).
    """

    def __init__(self, session: LinkOwner, name: str, connect: Connector) -> None:
        self.session = session
        self.name = name
        self.connect = connect
        self.peer = UpstreamPeer(
            connect,
            label=f"upstream {name}: ",
            request_timeout=session.request_timeout,
            client_request_timeout=session.client_request_timeout,
        )
        self.ready = False
        self.failure: str | None = None  # why its last start failed (said in "not running" answers), or None
        self.failed_starts = 0
        self.settled = anyio.Event()
        self.tools: list[Any] | None = None
        self.prompts: list[Any] | None = None
        self.resources: list[Any] | None = None
        self.templates: list[Any] | None = None
        self.capabilities: dict[str, Any] = {}
        self.protocol_version: Any = None
        self.server_info: Any = None
        self.initialized = False
        self.offers: frozenset[str] | None = None
        # The guard's own listen streams here (2026-07-28), each with its frames' handler (peer.listens).
        self.listens: OwnListens[Callable[[str, dict[str, Any]], Awaitable[None]]] = OwnListens(
            self.peer.own, self.send
        )
        self._discover_lock = anyio.Lock()
        self._sweeping = False  # the peer expires forwarded requests (--request-timeout), started on first use
        self._relisting = False
        self._dirty: set[str] = set()
        self._relisted_at = -float("inf")
        self._throttled = False
        # notifications/tools/list_changed seen, and how many of them the merged tools listing
        # reflects (it was requested after them); set and renewed when a listing is merged.
        self._tools_changes = 0
        self._tools_listed_changes = 0
        self._tools_relisted = anyio.Event()

    @property
    def upstream(self) -> LineLink | None:
        """The current upstream connection, or None while there is none."""
        return self.peer.upstream

    @property
    def restarts(self) -> int:
        """Connections made after the first."""
        return self.peer.restarts

    @property
    def connection(self) -> int:
        """Connections made so far (2026-07-28 listings belong to one)."""
        return self.peer.connection

    @property
    def backoff(self) -> Backoff:
        """The restart policy's state (``peer.backoff``)."""
        return self.peer.backoff

    @property
    def closing(self) -> bool:
        """The client has gone: no connection is started again (``peer.connection.PeerEvents``)."""
        return self.session.closing

    def new_id(self) -> str:
        """A fresh upstream request id of this link."""
        return self.peer.own.new_id()

    # --- the connection loop ------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, set up, relay; on any end, clean up, wait the backoff and connect again (until the
        client has gone): the peer's loop (``peer.connection``), with this link as its owner."""
        await self.peer.keep_connected(self)

    async def peer_setup(self, first: bool) -> None:
        """A new connection (``peer.connection``): handshake and listings; then the link is ready.

        Raises:
            RequestFailed: the upstream did not accept ``initialize`` or could not be listed.
        """
        seen = self._tools_changes
        if not first and self.session.pipeline.observer is not None:
            self.session.pipeline.observer.upstream_restarted(self.name)
        await self._setup()
        self.ready = True
        self.failure = None
        self.settled.set()
        if self.initialized:
            log.info("upstream %s: ready (%s)", self.name, self._counts())
        else:
            log.info("upstream %s: ready (2026-07-28 era: listed per request envelope)", self.name)
        await self.session.link_changed(self)
        self._tools_listed(seen)
        self._relist_soon()  # changes announced while it was being listed

    async def peer_failed(self, reason: str, connected: bool) -> None:
        """A connection could not be made or set up (``peer.connection``): logged; the peer starts the next."""
        if connected:
            log.error("upstream %s: could not set it up: %s", self.name, reason)
        else:
            log.error("upstream %s: %s", self.name, reason)
        self.failure = reason
        self.failed_starts += 1
        self.settled.set()

    def peer_line_handler(self, upstream: PipeLineStream) -> LineHandler | None:
        """No hot path for a gateway's upstreams (``peer.connection``)."""
        return None

    def peer_prepare(self, message: Any) -> None:
        """(In the worker thread, ``peer.connection``.) A forwarded call's result is checked against its
        ``outputSchema`` here (``Pipeline.prepare_output``); the gateway classifies its own listings."""
        if "method" not in message and valid_id(message.get("id")):
            forwarded = self.peer.inflight.pending.get(id_key(message["id"]))  # (reads: the loop owns the map)
            if isinstance(forwarded, Forwarded):
                Pipeline.prepare_output(forwarded.call, message)

    def _counts(self) -> str:
        parts = [f"{len(self.tools or [])} tool(s)"]
        if self.prompts is not None:
            parts.append(f"{len(self.prompts)} prompt(s)")
        if self.resources is not None:
            parts.append(f"{len(self.resources)} resource(s)")
        return ", ".join(parts)

    async def _setup(self) -> None:
        """Handshake (when the client did one) and the listings."""
        self.initialized = False
        self.offers = None
        if self.session.init_params is not None:
            await self.handshake()
        else:
            await self.session.wait_for_client_era()
            if self.session.init_params is not None:
                await self.handshake()
            else:
                self.tools = self.prompts = self.resources = self.templates = None

    async def handshake(self) -> None:
        """``initialize`` with the client's params, ``notifications/initialized``, log level, subscriptions
        (``peer.handshake``), then the listings.

        Raises:
            RequestFailed: the upstream did not accept ``initialize`` or could not be listed.
        """
        session = self.session
        subscriptions = [{"uri": uri} for uri in session.subscriptions_of(self)]
        result = await handshake(
            self.request,
            self.send,
            session.init_params,
            log_level=session.log_level,
            subscriptions=subscriptions,
            label=f"upstream {self.name}",
        )
        caps = result.get("capabilities")
        self.capabilities = caps if type(caps) is dict else {}
        self.protocol_version = result.get("protocolVersion")
        self.server_info = result.get("serverInfo")
        self.initialized = True
        await self.list_everything()

    async def list_everything(self) -> None:
        """List tools, prompts, resources and resource templates (each as the capabilities say)."""
        caps = self.capabilities
        self.tools = await self.list_all("tools/list", "tools") if "tools" in caps else []
        self.prompts = await self._optional("prompts/list", "prompts") if "prompts" in caps else None
        if "resources" in caps:
            self.resources = await self._optional("resources/list", "resources")
            self.templates = await self._optional("resources/templates/list", "resourceTemplates")
        else:
            self.resources = self.templates = None

    async def _optional(self, method: str, member: str) -> list[Any]:
        try:
            return await self.list_all(method, member)
        except RequestFailed as exc:
            log.warning("upstream %s: %s failed (%s); offering none", self.name, method, exc)
            return []

    async def list_all(self, method: str, member: str, meta: dict[str, Any] | None = None) -> list[Any]:
        """Every page of a list method (``tools/list``, ...): the items of ``member`` (``relay.list_pages``).

        Raises:
            RequestFailed: an error, no answer, a page without the list, or a cursor loop.
        """
        items, _ttl = await list_pages(self.request, method, member, meta, failure=RequestFailed)
        return items

    def list_changed(self, kind: str) -> None:
        """``notifications/{kind}/list_changed``: note it; one task per link re-lists what was noted.

        Notifications are coalesced: at most one listing is under way per link, and the kinds
        noted meanwhile are listed after it, once, no sooner than ``relist_interval`` seconds
        after the previous round (an upstream announcing a change after every listing cannot
        keep the guard listing).
        """
        self._dirty.add(kind)
        if kind == "tools":
            self._tools_changes += 1  # a call from now on waits for a listing requested after this
        self._relist_soon()

    def _tools_listed(self, seen: int | None) -> None:
        """A tools listing requested when ``seen`` changes had been announced is merged (None: none was, the
        listing failed or the link went down): calls waiting for one look again."""
        if seen is not None and seen > self._tools_listed_changes:
            self._tools_listed_changes = seen
        relisted, self._tools_relisted = self._tools_relisted, anyio.Event()
        relisted.set()

    @property
    def tools_stale(self) -> bool:
        """Whether the upstream announced a tools change the merged listing does not reflect yet."""
        return self._tools_listed_changes < self._tools_changes

    async def tools_current(self) -> bool:
        """Wait until the merged tools listing was requested after every ``list_changed`` seen so far (trial
        F8: a call is judged against the new schemas, never the replaced ones), at most the session's
        request timeout. Returns whether it is (or the link is down: its tools are not listed at all)."""
        needed = self._tools_changes
        with anyio.move_on_after(self.session.request_timeout):
            while self._tools_listed_changes < needed and self.ready:
                await self._tools_relisted.wait()
        return self._tools_listed_changes >= needed or not self.ready

    def _relist_soon(self) -> None:
        if self._dirty and self.ready and not self._relisting:
            self._relisting = True
            self.session.spawn(self._relist_noted)

    async def _relist_noted(self) -> None:
        try:
            while self._dirty and self.ready and self.initialized:
                wait = self._relisted_at + self.session.relist_interval - anyio.current_time()
                if wait > 0:
                    if not self._throttled:
                        self._throttled = True
                        log.warning(
                            "upstream %s: announces list changes faster than the guard re-lists (once per %g s); "
                            "changes are coalesced",
                            self.name,
                            self.session.relist_interval,
                        )
                    await anyio.sleep(wait)
                kinds, self._dirty = self._dirty, set()
                self._relisted_at = anyio.current_time()
                for kind in ("tools", "prompts", "resources"):
                    if kind in kinds and self.ready:
                        await self.relist(kind)
        finally:
            self._relisting = False
            self._tools_listed(None)  # (waiting calls look again: a listing failed, or the link went down)

    async def relist(self, kind: str) -> None:
        """List ``kind`` (``tools``, ``prompts``, ``resources``) again and tell the session."""
        seen = self._tools_changes
        try:
            if kind == "tools":
                self.tools = await self.list_all("tools/list", "tools")
            elif kind == "prompts":
                self.prompts = await self._optional("prompts/list", "prompts")
            else:
                self.resources = await self._optional("resources/list", "resources")
                self.templates = await self._optional("resources/templates/list", "resourceTemplates")
        except RequestFailed as exc:
            log.error("upstream %s: could not list its %s again: %s", self.name, kind, exc)
            return
        await self.session.link_changed(self, kind)
        if kind == "tools":
            self._tools_listed(seen)  # (after the session merged it: a waiting call is judged by the new schemas)

    async def discover(self, meta: dict[str, Any]) -> frozenset[str]:
        """The list kinds this upstream offers in the 2026-07-28 era (its ``server/discover``
        capabilities, asked once per connection with the envelope ``meta``); ``{"tools"}``
        when it answers with an error or not at all."""
        async with self._discover_lock:
            if self.offers is None:
                try:
                    self.note_discovered(await self.request("server/discover", {"_meta": meta}))
                except RequestFailed as exc:
                    log.info("upstream %s: no server/discover answer (%s); listing its tools alone", self.name, exc)
                    self.offers = frozenset({"tools"})
            return self.offers if self.offers is not None else frozenset({"tools"})

    def note_discovered(self, result: dict[str, Any]) -> None:
        """Keep what a ``server/discover`` answer of this connection offers (the first one counts)."""
        if self.offers is None:
            caps = result.get("capabilities")
            self.offers = frozenset(k for k in KINDS if type(caps) is dict and k in caps)

    async def listen(
        self, params: dict[str, Any], on_frame: Callable[[str, dict[str, Any]], Awaitable[None]]
    ) -> dict[str, Any] | None:
        """A ``subscriptions/listen`` stream of the guard's own, open until the upstream ends it
        (``peer.listens.OwnListens.listen``): every notification stamped with this stream's id goes to
        ``on_frame(method, params)`` and nowhere else. Returns the response that ended the stream, or
        ``None`` when the upstream went away; cancelling the caller cancels the stream upstream."""
        return await self.listens.listen(params, on_frame)

    async def peer_down(self, ended: bool) -> None:
        """The connection ended (``peer.connection``): answer everything that waited on it; leave the merged lists."""
        was_ready = self.ready
        if ended and was_ready and not self.session.closing:
            log.error("upstream %s: went away", self.name)
        self.ready = False
        self._dirty.clear()  # a restart lists everything anyway
        self._tools_listed(None)  # (its tools leave the lists: a waiting call finds the server down)
        self.initialized = False
        self.offers = None
        pending: list[Forwarded] = self.peer.inflight.clear()
        stop = None if ended else stop_signal()  # the guard itself was stopped: neither side ended it (rt37 F1)
        for forwarded in pending:
            self.session.forget_client_request(forwarded.client_id)
            if self.session.closing and stop is None:  # the client left: it gave up on what it had asked
                if forwarded.call is not None:
                    await self.session.pipeline.finish(forwarded.call, None, "cancelled")
                continue
            if forwarded.call is not None:
                await self.session.pipeline.finish(forwarded.call, None, None if stop is None else "stopped")
            # (how it ended, when the transport told it: F-stop 31; or the guard's own stop: rt37 F1)
            text = gone_text(self.peer.cause, self.name) if stop is None else stopped_text(stop, self.name)
            await self.session.reply(error_response(forwarded.client_id, INTERNAL_ERROR, text))
        await self.session.server_requests_gone(self)
        self.tools = self.prompts = self.resources = self.templates = None
        self.settled.set()
        if was_ready:
            await self.session.link_changed(self)

    # --- reading ------------------------------------------------------------------------------

    async def peer_unreadable(self, request_id: Any, text: str) -> bool:
        """An unreadable line carried ``request_id`` (``peer.connection``): the forwarded request is answered
        with ``text`` (its real answer, should it follow, is dropped: no longer pending)."""
        forwarded: Forwarded | None = self.peer.inflight.take(id_key(request_id))
        if forwarded is None:
            return False
        await self.session.answer(self, forwarded, error_response(request_id, INTERNAL_ERROR, text))
        return True

    async def peer_output(self, message: Any) -> bool:
        """Upstream output (``peer.connection``: JSON-RPC, ``mcp-guard/`` keys removed, not the guard's own
        answers): each message of a batch as one. Always reads on (the session copes with its client gone)."""
        for one in message if type(message) is list else [message]:
            await self._from_upstream(one)
        return True

    async def _from_upstream(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if type(method) is not str:  # a response
            forwarded = self.peer.inflight.match(id_key(message.get("id")))
            if not isinstance(forwarded, Forwarded):  # a late answer, or one to an id not in flight: dropped (logged)
                return
            await self.session.answer(self, forwarded, message)
            return
        if "id" in message:
            await self.session.server_request(self, message)
            return
        if self.listens:
            found = self.listens.handler_of(message)
            if found is not None:  # a frame of a stream of the guard's own
                handler, _method, frame = found
                await handler(method, frame)
                return
        if method.endswith("/list_changed") and method.startswith("notifications/"):
            kind = method.removeprefix("notifications/").removesuffix("/list_changed")
            if kind in KINDS:
                if self.initialized:
                    self.list_changed(kind)  # during the first listing too: re-listed once ready
                else:
                    self.session.modern_list_changed(self, kind)
                return
        if method == "notifications/progress":
            self.peer.inflight.progressed(message.get("params"))
        if method == "notifications/cancelled":
            notice = self.session.server_requests.cancellation(self, message)
            if notice is None:
                return  # it names no request of this upstream's that the client holds
            message = notice
        await self.session.reply(message)

    # --- writing ------------------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message upstream (``peer.connection``).

        Raises:
            RequestFailed: there is no upstream, or it went away.
            Uncarriable: the message holds a number JSON cannot carry exactly.
        """
        await self.peer.send(message)

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        """A request of the guard's own; its ``result`` (``peer.connection``).

        Raises:
            RequestFailed: an error answer, no answer within the session's request timeout,
                or the upstream gone.
        """
        try:
            return await self.peer.request(method, params)
        except RequestFailed as exc:
            # An error the HTTP transport wrote names the CLI's flags; a gateway's are its config's.
            text = str(exc)
            named = text.replace("given with --header or --header-env", "in the config's `headers`")
            if named == text:
                raise
            raise RequestFailed(named) from None

    async def forward(self, message: dict[str, Any], forwarded: Forwarded) -> Any:
        """Forward a client request under a new id of this link; returns that id.

        Raises:
            RequestFailed: the upstream is not running or went away (nothing is pending then).
            Uncarriable: the message holds a number JSON cannot carry exactly.
        """
        inflight = self.peer.inflight
        upstream_id = inflight.new_id()
        key = id_key(upstream_id)
        inflight.start(key, forwarded, forwarded.method, message.get("params"), client=id_key(forwarded.client_id))
        if inflight.deadlines is not None and not self._sweeping:
            self._sweeping = True
            self.session.spawn(self.peer.expire_requests, self._timed_out)
        try:
            await self.send({**message, "id": upstream_id})
        except BaseException:
            inflight.take(key)
            raise
        return upstream_id

    async def _timed_out(self, upstream_id: Any, forwarded: Forwarded) -> None:
        """A forwarded request outlived ``--request-timeout`` (``UpstreamPeer.expire_requests`` gave it up and
        cancelled it upstream): journaled ``timed_out`` and answered with an error."""
        timeout = self.session.client_request_timeout
        assert timeout is not None
        log.warning(
            "upstream %s: no answer to a %s within %g s; answering an error", self.name, forwarded.method, timeout
        )
        self.session.forget_client_request(forwarded.client_id)
        if forwarded.call is not None:
            await self.session.pipeline.finish(forwarded.call, None, "timed_out")
        await self.session.reply(error_response(forwarded.client_id, INTERNAL_ERROR, timed_out_text(timeout)))

    async def cancelled(self, upstream_id: Any) -> None:
        """The client cancelled the forwarded request ``upstream_id``: it is no longer awaited (nor answered)."""
        forwarded: Forwarded | None = self.peer.inflight.take(id_key(upstream_id))
        if forwarded is not None:
            self.peer.inflight.give_up(id_key(upstream_id))
            if forwarded.call is not None:
                await self.session.pipeline.finish(forwarded.call, None, "cancelled")

    def holds(self, upstream_id: Any) -> bool:
        """Whether the forwarded request ``upstream_id`` is still waiting for its answer."""
        return id_key(upstream_id) in self.peer.inflight
