"""One upstream of a gateway session: its connection loop, its own requests, the requests it forwards.

A :class:`Link` makes its upstream connections through the connector seam
(``upstream.stdio_connector``, ``http_upstream.http_connector``, see :func:`connector_for`),
sets each one up (handshake with the client's ``initialize`` params, listings), restarts it
with backoff (``peer.backoff``) when it goes away, and forwards client requests under ids of
its own (``peer.requests``). It tells its owner what happens through :class:`LinkOwner`
(answers, server requests, list changes, the link coming up or going down) and never reaches
into it otherwise; :class:`~mcp_guard.gateway.session.GatewaySession` is that owner.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

import anyio

from ..peer.backoff import Backoff
from ..peer.deadlines import Deadlines
from ..peer.requests import OwnRequests, RequestFailed, list_pages
from ..relay.upstream import Connector, LineLink
from ..wire.framing import DEFAULT_MAX_LINE, LineTooLong
from ..wire.jsonrpc import (
    INTERNAL_ERROR,
    Uncarriable,
    dumps,
    error_response,
    id_key,
    loads_upstream,
    recover_id,
    valid_id,
)
from ..wire.messages import GONE, UNANSWERED_DROPPED, error_reason
from ..wire.meta import SUBSCRIPTION_ID_KEY, UNTIMED, without_guard_keys
from .catalog import KINDS
from .config import HttpServer, StdioServer
from .pipeline import Call, Pipeline

__all__ = ["Forwarded", "Link", "LinkOwner", "connector_for", "failure_reason", "unavailable"]

log = logging.getLogger("mcp_guard")

MAX_LATE: Final = 4096
"""Cancelled or timed-out requests whose late answers are still expected, kept at most per link."""

_MISSING: Final = object()


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

    def forget_client_request(self, client_id: Any) -> None:
        """Event: the client's request ``client_id`` is no longer held upstream."""

    async def link_changed(self, link: Link, kind: str | None = None) -> None:
        """Event: ``link`` came up, went down, or listed ``kind`` again."""

    def modern_list_changed(self, link: Link, kind: str) -> None:
        """Event: a 2026-07-28-era upstream said its ``kind`` list changed."""

    async def server_request(self, link: Link, message: dict[str, Any]) -> None:
        """Event: the upstream sent the client a request (sampling, elicitation, roots)."""

    async def server_requests_gone(self, link: Link) -> None:
        """Event: ``link`` went away; its requests to the client are void."""

    def session_id_of(self, link: Link, upstream_id: Any) -> Any:
        """The id under which ``link``'s request ``upstream_id`` went to the client (``None``: none)."""


def unavailable(server: str, what: str) -> str:
    """The -32603 message for a request to ``what`` (a tool, prompt, resource) of a server that is down."""
    return (
        f"mcp-guard: the server `{server}` of this {what} is not running right now (it went away or could not "
        "start; the guard keeps starting it again, with backoff); the request was not sent. Try again later."
    )


def connector_for(server: StdioServer | HttpServer, max_message_bytes: int = DEFAULT_MAX_LINE) -> Connector:
    """The relay connector of one config entry (stdio: its command, ``env`` over the guard's, ``cwd``).

    ``max_message_bytes`` caps one message from the upstream (a longer one is skipped as it
    arrives, and the request it answers gets an error).
    """
    if isinstance(server, StdioServer):
        from ..relay.upstream import stdio_connector

        return stdio_connector(
            [server.command, *server.args], server.env or None, server.cwd, max_line=max_message_bytes
        )
    from ..relay.http_upstream import http_connector

    return http_connector(server.url, server.headers, max_message_bytes=max_message_bytes)


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
    """

    def __init__(self, session: LinkOwner, name: str, connect: Connector) -> None:
        self.session = session
        self.name = name
        self.connect = connect
        self.upstream: LineLink | None = None
        self.ready = False
        self.settled = anyio.Event()
        self.tools: list[Any] | None = None
        self.prompts: list[Any] | None = None
        self.resources: list[Any] | None = None
        self.templates: list[Any] | None = None
        self.capabilities: dict[str, Any] = {}
        self.protocol_version: Any = None
        self.server_info: Any = None
        self.restarts = 0
        self.connection = 0
        self.initialized = False
        self.offers: frozenset[str] | None = None
        self._own = OwnRequests()
        self._late: dict[tuple[bool, Any], None] = {}  # cancelled or timed-out upstream ids, oldest first
        self.backoff = Backoff()
        self._pending: dict[tuple[bool, Any], Forwarded] = {}
        self._listens: dict[tuple[bool, Any], Callable[[str, dict[str, Any]], Awaitable[None]]] = {}
        self._discover_lock = anyio.Lock()
        timeout = session.client_request_timeout
        self._deadlines = Deadlines(timeout) if timeout is not None else None  # forwarded requests' timeouts
        self._sweeping = False
        self._relisting = False
        self._dirty: set[str] = set()
        self._relisted_at = -float("inf")
        self._throttled = False
        self._reading = False

    def new_id(self) -> str:
        """A fresh upstream request id of this link."""
        return self._own.new_id()

    # --- the connection loop ------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, set up, relay; on any end, clean up, wait the backoff and connect again (until cancelled)."""
        first = True
        while True:
            if not first:
                self.restarts += 1
                delay = self.backoff.wait()
                log.warning("upstream %s: restarting in %.1f s (restart %d)", self.name, delay, self.restarts)
                await anyio.sleep(delay)
            first = False
            started = anyio.current_time()
            was_ready = False
            self.connection += 1
            try:
                async with self.connect() as upstream:
                    self.upstream = upstream
                    self._reading = True
                    ended = anyio.Event()
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(self._read, upstream, ended)
                        try:
                            await self._setup()
                        except RequestFailed as exc:
                            log.error("upstream %s: could not set it up: %s", self.name, exc)
                            tg.cancel_scope.cancel()
                        else:
                            self.ready = was_ready = True
                            self.settled.set()
                            if self.initialized:
                                log.info("upstream %s: ready (%s)", self.name, self._counts())
                            else:
                                log.info("upstream %s: ready (2026-07-28 era: listed per request envelope)", self.name)
                            await self.session.link_changed(self)
                            self._relist_soon()  # changes announced while it was being listed
                            await ended.wait()
                            if not self.session.closing:
                                log.error("upstream %s: went away", self.name)
                            tg.cancel_scope.cancel()
            except Exception as exc:
                log.error("upstream %s: %s", self.name, failure_reason(exc))
            finally:
                with anyio.CancelScope(shield=True):
                    await self._down()
            self.settled.set()
            if self.session.closing:
                return
            self.backoff.ended(anyio.current_time() - started, ready=was_ready)

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
        """``initialize`` with the client's params, ``notifications/initialized``, log level, subscriptions, listings.

        Raises:
            RequestFailed: the upstream did not accept ``initialize`` or could not be listed.
        """
        result = await self.request("initialize", self.session.init_params)
        caps = result.get("capabilities")
        self.capabilities = caps if type(caps) is dict else {}
        self.protocol_version = result.get("protocolVersion")
        self.server_info = result.get("serverInfo")
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.initialized = True
        if self.session.log_level is not None and "logging" in self.capabilities:
            try:
                await self.request("logging/setLevel", self.session.log_level)
            except RequestFailed as exc:
                log.warning("upstream %s: could not set the log level: %s", self.name, exc)
        await self.list_everything()
        for uri in self.session.subscriptions_of(self):
            try:
                await self.request("resources/subscribe", {"uri": uri})
            except RequestFailed as exc:
                log.warning("upstream %s: could not restore a resource subscription: %s", self.name, exc)

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
        self._relist_soon()

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

    async def relist(self, kind: str) -> None:
        """List ``kind`` (``tools``, ``prompts``, ``resources``) again and tell the session."""
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
        """A ``subscriptions/listen`` stream of the guard's own, open until the upstream ends it.

        Every notification stamped with this request's id (``_meta`` ``subscriptionId``) goes
        to ``on_frame(method, params)`` and nowhere else. Returns the response that ended the
        stream (a result, or an error when the upstream does not offer the method), or ``None``
        when the upstream went away. Cancelling the caller cancels the stream upstream
        (``notifications/cancelled``).
        """
        request_id = self.new_id()
        key = id_key(request_id)
        own = self._own.open(request_id)
        self._listens[key] = on_frame
        try:
            await self.send({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params})
            await own.event.wait()
        except (RequestFailed, Uncarriable):
            return None
        finally:
            self._own.close(request_id)
            self._listens.pop(key, None)
            if own.response is None and self.upstream is not None:
                notice = {"requestId": request_id, "reason": "mcp-guard no longer needs this stream"}
                with anyio.CancelScope(shield=True), contextlib.suppress(RequestFailed, Uncarriable):
                    await self.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": notice})
        return own.response

    async def _down(self) -> None:
        """The connection ended: answer everything that waited on it; leave the merged lists."""
        was_ready = self.ready
        self.upstream = None
        self.ready = False
        self._dirty.clear()  # a restart lists everything anyway
        self.initialized = False
        self.offers = None
        self._own.fail_all()
        pending, self._pending = list(self._pending.values()), {}
        if self._deadlines is not None:
            self._deadlines.clear()
        for forwarded in pending:
            self.session.forget_client_request(forwarded.client_id)
            if self.session.closing:  # the client left: it gave up on what it had asked
                if forwarded.call is not None:
                    await self.session.pipeline.finish(forwarded.call, None, "cancelled")
                continue
            if forwarded.call is not None:
                await self.session.pipeline.finish(forwarded.call, None)
            await self.session.reply(error_response(forwarded.client_id, INTERNAL_ERROR, GONE))
        await self.session.server_requests_gone(self)
        self.tools = self.prompts = self.resources = self.templates = None
        if was_ready:
            await self.session.link_changed(self)

    # --- reading ------------------------------------------------------------------------------

    async def _read(self, upstream: LineLink, ended: anyio.Event) -> None:
        try:
            while True:
                try:
                    line = await upstream.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                except LineTooLong as exc:
                    await self._unreadable(exc.prefix, too_long=exc.limit)
                    continue
                try:
                    message = loads_upstream(line)  # literals keep their value, as in the relay
                except (ValueError, RecursionError):
                    await self._unreadable(line)
                    continue
                if type(message) is not dict or message.get("jsonrpc") != "2.0":
                    log.warning("upstream %s: skipped output that is not a JSON-RPC message", self.name)
                    continue
                await self._from_upstream(without_guard_keys(message))
        finally:
            # Nothing more will come: the guard's own requests (initialize, listings) fail now.
            self._reading = False
            self._own.fail_all()
            ended.set()

    async def _unreadable(self, line: bytes, *, too_long: int | None = None) -> None:
        """A line the guard cannot parse (with ``too_long``: the start of a line over that cap,
        ``--max-message-bytes``, whose rest is dropped as it comes): skipped, and the request it
        answers (its id recovered from the text) gets -32603 at once, as in the relay; the
        connection goes on."""
        request_id = recover_id(line)
        key = id_key(request_id) if valid_id(request_id) else None
        if too_long is not None:
            what = f"is longer than {too_long} bytes (--max-message-bytes)"
            text = f"mcp-guard: the upstream's answer {what}; it was dropped, not buffered"
        else:
            what = "could not be parsed (not valid JSON, or nested too deeply)"
            text = f"mcp-guard: the upstream's answer {what}; it was dropped"
        if self._own.fail(key, f"its answer {what}"):
            log.warning("upstream %s: its answer %s; the guard's request failed", self.name, what)
            return
        forwarded = self._take(key) if key is not None else None
        if forwarded is not None:
            log.warning("upstream %s: its answer %s; answering an error", self.name, what)
            await self.session.answer(self, forwarded, error_response(request_id, INTERNAL_ERROR, text))
            return
        skipped = f"longer than {too_long} bytes" if too_long is not None else f"of {len(line)} bytes that is not JSON"
        log.warning("upstream %s: skipped a line %s", self.name, skipped)

    async def _from_upstream(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if type(method) is not str:  # a response
            key = id_key(message.get("id"))
            if self._own.answer(key, message):
                return
            forwarded = self._take(key)
            if forwarded is None:
                if self._late.pop(key, _MISSING) is not _MISSING:
                    log.debug("upstream %s: dropped a late answer to a cancelled or timed-out request", self.name)
                else:
                    log.warning("upstream %s: %s", self.name, UNANSWERED_DROPPED)
                return
            await self.session.answer(self, forwarded, message)
            return
        if "id" in message:
            await self.session.server_request(self, message)
            return
        params = message.get("params")
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is dict and valid_id(meta.get(SUBSCRIPTION_ID_KEY)):
            handler = self._listens.get(id_key(meta[SUBSCRIPTION_ID_KEY]))
            if handler is not None:
                assert type(params) is dict
                await handler(method, params)
                return
        if method.endswith("/list_changed") and method.startswith("notifications/"):
            kind = method.removeprefix("notifications/").removesuffix("/list_changed")
            if kind in KINDS:
                if self.initialized:
                    self.list_changed(kind)  # during the first listing too: re-listed once ready
                else:
                    self.session.modern_list_changed(self, kind)
                return
        if method == "notifications/progress" and self._deadlines:
            self._deadlines.progressed(message.get("params"))
        if method == "notifications/cancelled":
            params = message.get("params")
            if type(params) is dict and valid_id(params.get("requestId")):
                session_id = self.session.session_id_of(self, params["requestId"])
                if session_id is None:
                    return
                message = {**message, "params": {**params, "requestId": session_id}}
        await self.session.reply(message)

    # --- writing ------------------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message upstream.

        Raises:
            RequestFailed: there is no upstream, or it went away.
            Uncarriable: the message holds a number JSON cannot carry exactly.
        """
        upstream = self.upstream
        if upstream is None:
            raise RequestFailed("the upstream server is not running")
        data = dumps(message)
        try:
            await upstream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            raise RequestFailed("the upstream server went away") from None

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        """A request of the guard's own; its ``result``.

        Raises:
            RequestFailed: an error answer, no answer within the session's request timeout,
                or the upstream gone.
        """
        request_id = self.new_id()
        own = self._own.open(request_id)
        try:
            try:
                await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            except Uncarriable:
                raise RequestFailed("the request holds a number JSON cannot carry exactly") from None
            if self._reading:
                with anyio.move_on_after(self.session.request_timeout):
                    await own.event.wait()
        finally:
            self._own.close(request_id)
        response = own.response
        if response is None:
            if own.failure is not None:
                raise RequestFailed(own.failure)
            if self.upstream is None or not self._reading:
                raise RequestFailed(f"the upstream went away before answering {method}")
            raise RequestFailed(f"no answer to {method} within {self.session.request_timeout:g} s")
        if "error" in response:
            # An error the HTTP transport wrote says what happened (HTTP 401, connection refused);
            # a server's error is named with its code and message.
            reason = error_reason(method, response["error"])
            raise RequestFailed(reason.replace("given with --header or --header-env", "in the config's `headers`"))
        result = response.get("result")
        if type(result) is not dict:
            raise RequestFailed(f"its {method} result is not an object")
        return result

    async def forward(self, message: dict[str, Any], forwarded: Forwarded) -> Any:
        """Forward a client request under a new id of this link; returns that id.

        Raises:
            RequestFailed: the upstream is not running or went away (nothing is pending then).
            Uncarriable: the message holds a number JSON cannot carry exactly.
        """
        upstream_id = self.new_id()
        key = id_key(upstream_id)
        self._pending[key] = forwarded
        if self._deadlines is not None and forwarded.method not in UNTIMED:
            self._deadlines.start(key, message.get("params"))
            if not self._sweeping:
                self._sweeping = True
                self.session.spawn(self._expire_requests)
        try:
            await self.send({**message, "id": upstream_id})
        except BaseException:
            self._take(key)
            raise
        return upstream_id

    def _take(self, key: tuple[bool, Any]) -> Forwarded | None:
        """The forwarded request ``key`` is answered or given up: no longer pending (nor timed)."""
        forwarded = self._pending.pop(key, None)
        if forwarded is not None and self._deadlines:
            self._deadlines.done(key)
        return forwarded

    async def _expire_requests(self) -> None:
        """Answer each forwarded request that outlived ``--request-timeout`` with an error, and cancel it
        upstream (``peer.deadlines``: one sweeper per link, restarted deadlines on progress)."""
        assert self._deadlines is not None
        timeout = self._deadlines.timeout
        async for key in self._deadlines.expired():
            forwarded = self._take(key)
            if forwarded is None:
                continue
            upstream_id = key[1]
            self._given_up(key)
            log.warning(
                "upstream %s: no answer to a %s within %g s; answering an error", self.name, forwarded.method, timeout
            )
            self.session.forget_client_request(forwarded.client_id)
            notice = {"requestId": upstream_id, "reason": f"mcp-guard: no answer within {timeout:g} s"}
            with contextlib.suppress(RequestFailed, Uncarriable):
                await self.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": notice})
            if forwarded.call is not None:
                await self.session.pipeline.finish(forwarded.call, None, "timed_out")
            text = (
                f"mcp-guard: the upstream server did not answer within {timeout:g} s (--request-timeout); "
                "the request was cancelled"
            )
            await self.session.reply(error_response(forwarded.client_id, INTERNAL_ERROR, text))

    async def cancelled(self, upstream_id: Any) -> None:
        """The client cancelled the forwarded request ``upstream_id``: it is no longer awaited (nor answered)."""
        forwarded = self._take(id_key(upstream_id))
        if forwarded is not None:
            self._given_up(id_key(upstream_id))
            if forwarded.call is not None:
                await self.session.pipeline.finish(forwarded.call, None, "cancelled")

    def _given_up(self, key: tuple[bool, Any]) -> None:
        """The forwarded request ``key`` was cancelled or timed out: its late answer is expected (and dropped)."""
        self._late[key] = None
        if len(self._late) > MAX_LATE:
            self._late.pop(next(iter(self._late)))

    def holds(self, upstream_id: Any) -> bool:
        """Whether the forwarded request ``upstream_id`` is still waiting for its answer."""
        return id_key(upstream_id) in self._pending


def failure_reason(exc: BaseException) -> str:
    """The first line of what ``exc`` (or, in an exception group, its first exception) says, for the log."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text[:300] or type(exc).__name__
