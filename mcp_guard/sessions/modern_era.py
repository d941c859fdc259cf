"""The gateway's 2026-07-28 era: listings per envelope, listen streams, ``server/discover``.

:class:`ModernEra` is a part of :class:`~mcp_guard.sessions.gateway.Gateway` (``Gateway.modern``; the gateway
holds the handshake era and the routing), reading the gateway's links, settings and merged lists through it.
In this era there is no handshake: every request
carries its envelope (protocol version, client capabilities) in ``_meta``, and is served from
the merged lists that envelope sees:

- tools, prompts, resources and resource templates are listed per envelope (at most
  :data:`~mcp_guard.wire.meta.MAX_ENVELOPES` kept, least recently used dropped), and listed again before
  use once a listing's ``ttlMs`` has passed (absent: at once), unless a ``subscriptions/listen``
  stream of the guard's own at that upstream (opened after the first listing, for the kinds the
  upstream acknowledges) says when it changed. A call is never judged against a schema the
  upstream has replaced. Each upstream is listed on its own: a request naming a tool, prompt or
  resource its envelope routes to a running upstream waits for that upstream's listing alone, so a
  slow or hung one delays only the requests that need its list;
- the client's own ``subscriptions/listen`` is answered by the session: ``list_changed`` for the
  merged lists, and each URI of ``resourceSubscriptions`` subscribed at the upstream that serves
  it (a listen stream per upstream, whose ``resources/updated`` frames reach the client's stream
  under its id). When such an upstream stream ends, the client's stream ends too (its result),
  so the client listens again;
- ``server/discover`` goes to every upstream and the answers are merged.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectSendStream

from ..peer.requests import RequestFailed, list_pages
from ..wire.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    error_response,
    id_key,
)
from ..wire.meta import (
    MAX_ENVELOPES,
    SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
    envelope_key,
)
from .envelopes import (
    ENVELOPE_KEYS,
    ClientListen,
    Envelope,
    merged_capabilities,
)
from .freshness import (
    ACKNOWLEDGED,
    KINDS,
    LISTEN_FLAGS,
    FailedBefore,
    Listed,
    frames_heard,
    keep_listening,
    list_unless_current,
)
from .link import Link, failure_reason
from .merged_lists import MergedLists

if TYPE_CHECKING:
    from .gateway import Gateway

__all__ = ["ModernEra", "gateway_info", "gateway_instructions"]

log = logging.getLogger("mcp_guard")

"""JSON-RPC: the method does not exist (or is not offered)."""


def gateway_info() -> dict[str, str]:
    """The gateway's own ``serverInfo``: ``{"name": "mcp-guard-gateway", "version": <the package's>}``."""
    from .. import __version__

    return {"name": "mcp-guard-gateway", "version": __version__}


def gateway_instructions(links: list[Link]) -> str:
    """The gateway's ``instructions`` at ``initialize``: which servers it fronts and how their names read."""
    names = ", ".join(link.name for link in links)
    return (
        f"mcp-guard gateway in front of: {names}. Tools and prompts are named SERVER__NAME; "
        "calls whose arguments do not match a tool's input schema are refused with an explanation."
    )


class ModernEra:
    """The 2026-07-28 era of a gateway (see the module docstring).

    Args:
        gateway: the gateway it is a part of (its links, config, lock, cursors, request timeout, the client's
            requests, the names' whereabouts; its replies and task group).

    Attributes:
        listens: the client's open ``subscriptions/listen`` streams, by the key of their id (``id_key``).
    """

    ServerOf: TypeAlias = Callable[[MergedLists], str | None]
    """The server a view routes a request's one tool, prompt or resource to (None: none)."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._envelopes: dict[str, Envelope] = {}
        self.listens: dict[tuple[bool, Any], ClientListen] = {}

    def _envelope_of(self, params: dict[str, Any]) -> Envelope:
        """The envelope of a 2026-07-28 request (made on first use; the least recently used of more
        than :data:`MAX_ENVELOPES` is dropped)."""
        meta = params["_meta"]
        era = {k: meta[k] for k in ENVELOPE_KEYS if k in meta}
        key = envelope_key(era)
        envelope = self._envelopes.pop(key, None)
        if envelope is None:
            if len(self._envelopes) >= MAX_ENVELOPES:
                self._envelopes.pop(next(iter(self._envelopes))).close()
            envelope = Envelope(MergedLists(self.gateway.config, self.gateway.lock, self.gateway.cursors), era)
        self._envelopes[key] = envelope
        return envelope

    async def view(self, params: dict[str, Any], kinds: set[str]) -> Envelope:
        """The envelope of a 2026-07-28 request, its lists of ``kinds`` fresh at every running upstream."""
        envelope = self._envelope_of(params)
        await self._refresh(envelope, kinds)
        return envelope

    async def routed(self, params: dict[str, Any], kind: str, server_of: ServerOf) -> Envelope:
        """The envelope of a 2026-07-28 request naming one tool, prompt or resource of ``kind``,
        fresh where that name is concerned (``server_of``: the server a view routes it to, or None).

        A name that routes to a running server is served once that server's listing of ``kind`` is
        fresh; the other servers' listings are not waited for (a slow or hung one delays only the
        requests that need its list: docs/gateway.md, "the others are not affected"). A name that
        routes nowhere, or no longer routes there, waits for every server's listing until one that is
        fresh routes it (or all are in). Either way the name is judged by a fresh listing of its own server.
        """
        since = anyio.current_time()
        envelope = self._envelope_of(params)
        await self.gateway.settled()
        server = server_of(envelope.view)
        link = self.gateway.by_name.get(server) if server is not None else None
        if link is not None and link.ready:
            await self._refresh(envelope, {kind}, [link], since=since)
            if server_of(envelope.view) == server:
                return envelope
        await self._refresh(envelope, {kind}, since=since, enough=lambda done: server_of(envelope.view) in done)
        return envelope

    async def _refresh(
        self,
        envelope: Envelope,
        kinds: set[str],
        links: list[Link] | None = None,
        *,
        since: float | None = None,
        enough: Callable[[set[str]], bool] | None = None,
    ) -> None:
        """List again, at each running upstream of ``links`` (default: every one), each of ``kinds``
        whose listing is stale in ``envelope`` (concurrently, each upstream in a task of the session's);
        tell the client's listen streams what changed.

        One listing of an upstream's kind at a time (:meth:`.freshness.Listed.lock`), per upstream, so a
        hung one holds up only the requests waiting for its list. A request that waited for another's
        listing takes its outcome: a fresh listing, or one that failed after ``since``
        (``anyio.current_time()``; default: now), which is not tried again for it. With ``enough``
        (given the names of the upstreams whose listing is in), returns once it holds; the listings
        still under way go on and tell the listen streams themselves.

        A listing that fails leaves that upstream's list of that kind out of the merged one
        (logged): nothing is served from a listing the guard could not renew.
        """
        since = anyio.current_time() if since is None else since
        await self.gateway.settled()
        changed: set[str] = set()
        for link in self.gateway.links:
            if not link.ready and link.name in envelope.listed:
                del envelope.listed[link.name]
                changed |= envelope.view.remove(link.name)
        targets = [link for link in (self.gateway.links if links is None else links) if link.ready]
        send, receive = anyio.create_memory_object_stream[tuple[str, set[str]]](max(len(targets), 1))
        for link in targets:
            self.gateway.spawn(self._refresh_link, envelope, link, kinds, since, send)
        done: set[str] = set()
        with receive:
            while len(done) < len(targets) and not (enough is not None and enough(done)):
                name, got = await receive.receive()
                done.add(name)
                changed |= got
        self.gateway.whereabouts.remember(envelope.view)
        if changed:
            await self._notify_listens(changed)

    async def _refresh_link(
        self,
        envelope: Envelope,
        link: Link,
        kinds: set[str],
        since: float,
        report: MemoryObjectSendStream[tuple[str, set[str]]],
    ) -> None:
        """One upstream's part of :meth:`_refresh`: its stale listings of ``kinds`` made, the kinds
        that changed sent on ``report``; when nobody waits for them any more, told to the listen streams."""
        changed: set[str] = set()
        try:
            changed = await self._list_link(envelope, link, kinds, since)
        except Exception as exc:  # a listing in a task of the session's must not end the session
            log.error("upstream %s: could not list it: %s", link.name, failure_reason(exc))
        try:
            report.send_nowait((link.name, changed))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.gateway.whereabouts.remember(envelope.view)
            if changed:
                await self._notify_listens(changed)

    async def _list_link(self, envelope: Envelope, link: Link, kinds: set[str], since: float) -> set[str]:
        """List at ``link`` each of ``kinds`` that is stale in ``envelope`` (one listing of a kind at a
        time; see :meth:`_refresh` for ``since``); open the guard's listen stream there after the first.
        Returns the kinds whose merged list changed."""
        offers = await link.discover(envelope.meta)
        changed: set[str] = set()
        for kind in sorted(kinds):
            if kind not in offers:
                changed |= self._put(envelope.view, link.name, kind, None)
                continue
            if not link.ready:
                break
            try:
                changed |= await self._list_kind(envelope, link, envelope.of(link), kind, since)
            except FailedBefore:
                continue  # the listing this request waited for failed (logged, and its list left out, then)
            except RequestFailed as exc:
                log.error("upstream %s: could not list its %s: %s", link.name, kind, exc)
                changed |= self._put(envelope.view, link.name, kind, None)
        now = envelope.of(link) if link.ready else None
        if now is not None and now.listen_scope is None and now.expires:
            now.listen_scope = anyio.CancelScope()
            self.gateway.spawn(self._keep_listening, envelope, link, now, offers)
        return changed

    @staticmethod
    def _put(view: MergedLists, server: str, kind: str, listing: Any) -> set[str]:
        """Put one upstream's listing of ``kind`` (``None``: none; resources: ``(resources, templates)``)."""
        if kind == "tools":
            return view.set_tools(server, listing)
        if kind == "prompts":
            return view.set_prompts(server, listing)
        resources, templates = listing if listing is not None else (None, None)
        return view.set_resources(server, resources, templates)

    async def _list_kind(self, envelope: Envelope, link: Link, listed: Listed, kind: str, since: float) -> set[str]:
        """List ``kind`` at ``link`` for ``envelope`` for a request that arrived at ``since``, unless a listing
        that serves it is in (one at a time; again when a change overtook it: :func:`.freshness.list_unless_current`).
        Returns the kinds whose merged list changed.

        Raises:
            FailedBefore: the listing made for it meanwhile failed.
            RequestFailed: the listing failed, or kept being overtaken by changes.
        """
        meta = envelope.meta

        async def fetch() -> tuple[Any, float | None]:
            if kind != "resources":
                return await list_pages(link.request, f"{kind}/list", kind, meta, failure=RequestFailed)
            resources, ttl = await list_pages(link.request, "resources/list", "resources", meta, failure=RequestFailed)
            try:
                templates, ttl2 = await list_pages(
                    link.request, "resources/templates/list", "resourceTemplates", meta, failure=RequestFailed
                )
            except RequestFailed as exc:
                log.debug("upstream %s: no resource templates (%s)", link.name, exc)
                templates, ttl2 = [], None
            return (resources, templates), min((t for t in (ttl, ttl2) if t is not None), default=None)

        async def put(listing: Any, mark: int) -> set[str]:
            if kind != "tools":
                return self._put(envelope.view, link.name, kind, listing)
            # A big listing is classified in the worker thread (MergedLists.put_tools: issue 25 item 1).
            return await envelope.view.put_tools(link.name, listing, partial(_still, link, listed, mark))

        return await list_unless_current(listed, kind, since, fetch, put) or set()

    async def _keep_listening(self, envelope: Envelope, link: Link, listed: Listed, offers: frozenset[str]) -> None:
        """The guard's own ``subscriptions/listen`` stream at ``link`` for ``envelope`` (``freshness``): keeps its
        lists fresh without ``ttlMs`` for the kinds the upstream acknowledges; each change makes the
        gateway list that kind again (and tell the client's listen streams)."""
        label = f"upstream {link.name}: "
        heard = frames_heard(listed, lambda kind: self.gateway.spawn(self._refresh_quietly, envelope, {kind}), label)

        async def frame(method: str, params: dict[str, Any]) -> None:
            heard(method, params)

        await keep_listening(listed, lambda params: link.listen(params, frame), envelope.meta, offers, label)

    async def _refresh_quietly(self, envelope: Envelope, kinds: set[str]) -> None:
        """A refresh nobody waits for (after a change the upstream reported); failures are logged."""
        if envelope in self._envelopes.values():
            try:
                await self._refresh(envelope, kinds)
            except Exception as exc:  # a background listing must not end the session
                log.error("could not list again after an upstream change: %s", failure_reason(exc))

    def list_changed(self, link: Link, kind: str) -> None:
        """A ``list_changed`` outside any listen stream (2026-07-28 era): every envelope lists ``kind`` again."""
        for envelope in list(self._envelopes.values()):
            listed = envelope.listed.get(link.name)
            if listed is not None and listed.connection == link.connection:
                listed.changed(kind)
                self.gateway.spawn(self._refresh_quietly, envelope, {kind})

    async def link_changed(self, link: Link) -> None:
        """A 2026-07-28-era upstream came up or went down: every envelope's lists follow."""
        if link.ready:
            for envelope in list(self._envelopes.values()):
                self.gateway.spawn(self._refresh_quietly, envelope, set(KINDS))
            return
        changed: set[str] = set()
        for envelope in list(self._envelopes.values()):
            if envelope.listed.pop(link.name, None) is not None:
                changed |= envelope.view.remove(link.name)
        if changed:
            await self._notify_listens(changed)

    async def _notify_listens(self, kinds: set[str]) -> None:
        """``list_changed`` of each of ``kinds`` on every client listen stream that asked for it."""
        for listen in list(self.listens.values()):
            for kind in KINDS:
                if kind in kinds and kind in listen.kinds:
                    await self._deliver(listen, listen.stamped(f"notifications/{kind}/list_changed"))

    async def _deliver(self, listen: ClientListen, message: dict[str, Any]) -> None:
        """A frame for a client's listen stream; before its acknowledgement (the stream's first frame)
        a resource update is held, a ``list_changed`` dropped (the client lists after the acknowledgement)."""
        if listen.scope.cancel_called:
            return  # the client cancelled the stream: nothing more goes out on it
        if listen.acknowledged:
            await self.gateway.reply(message)
        elif message["method"] == "notifications/resources/updated":
            listen.held.append(message)

    async def listen(self, message: dict[str, Any]) -> None:
        """The client's ``subscriptions/listen``: acknowledged by the session, open until the client
        cancels it (no answer then) or an upstream stream it relies on ends (answered with its result).

        Honoured: the ``list_changed`` flags (for the merged lists), and each URI of
        ``resourceSubscriptions`` that the URI table routes to a running upstream whose own listen
        stream acknowledged it. The upstreams' listen streams are opened together, so the
        acknowledgement waits for the slowest of them (at most the request timeout), not for their sum.
        """
        request_id = message["id"]
        params = message["params"]
        wanted = params.get("notifications")
        if type(wanted) is not dict:
            text = "Invalid params: subscriptions/listen needs a `notifications` object"
            await self.gateway.reply(error_response(request_id, INVALID_PARAMS, text))
            return
        key = id_key(request_id)
        if not self.gateway.session.holds(request_id):  # cancelled before it was opened: never opened, never answered
            return
        if key in self.listens:
            text = "Invalid Request: a listen stream with this id is already open"
            await self.gateway.reply(error_response(request_id, INVALID_REQUEST, text))
            return
        listen = ClientListen(request_id, {k for k, flag in LISTEN_FLAGS.items() if wanted.get(flag) is True})
        self.listens[key] = listen  # from now on the client can cancel it
        graceful = False
        try:
            with listen.scope:
                envelope = await self.view(params, set(KINDS))
                uris = wanted.get("resourceSubscriptions")
                groups: dict[str, list[str]] = {}
                for uri in dict.fromkeys(u for u in (uris if type(uris) is list else []) if type(u) is str):
                    route = envelope.view.resources.route(uri)
                    if route.server is not None and self.gateway.by_name[route.server].ready:
                        groups.setdefault(route.server, []).append(uri)
                async with anyio.create_task_group() as tg:
                    started: dict[str, list[str]] = {}

                    async def start(server: str, asked: list[str]) -> None:
                        link = self.gateway.by_name[server]
                        started[server] = await tg.start(self._resource_listen, link, listen, asked, envelope.meta)

                    async with anyio.create_task_group() as starting:  # (all at once: one slow upstream delays none)
                        for server, server_uris in groups.items():
                            starting.start_soon(start, server, server_uris)
                    honored_uris = [uri for server in groups for uri in started[server]]
                    honored: dict[str, Any] = {LISTEN_FLAGS[k]: True for k in KINDS if k in listen.kinds}
                    if honored_uris:
                        honored["resourceSubscriptions"] = honored_uris
                    await self.gateway.reply(listen.stamped(ACKNOWLEDGED, {"notifications": honored}))
                    listen.acknowledged = True
                    held, listen.held = listen.held, []
                    for frame in held:
                        await self.gateway.reply(frame)
                    await listen.ended.wait()
                    graceful = True
                    tg.cancel_scope.cancel()
        finally:
            self.listens.pop(key, None)
        if graceful:
            result = {"_meta": {SUBSCRIPTION_ID_KEY: request_id}, "resultType": "complete"}
            await self.gateway.reply({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def _resource_listen(
        self,
        link: Link,
        listen: ClientListen,
        uris: list[str],
        meta: dict[str, Any],
        *,
        task_status: anyio.abc.TaskStatus[list[str]] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """A listen stream at ``link`` for the client's ``uris`` there; reports (``task_status``) the URIs
        the upstream acknowledged (none when it did not within the request timeout), then passes its
        ``resources/updated`` frames to the client's stream until it ends."""
        honored: list[str] = []
        acknowledged = anyio.Event()
        finished = False

        async def frame(method: str, params: dict[str, Any]) -> None:
            if method == ACKNOWLEDGED:
                notifications = params.get("notifications")
                got = notifications.get("resourceSubscriptions") if type(notifications) is dict else None
                honored[:] = [u for u in uris if type(got) is list and u in got]
                acknowledged.set()
            elif method == "notifications/resources/updated":
                await self._deliver(listen, listen.stamped(method, params))

        async def stream() -> None:
            nonlocal finished
            await link.listen({"_meta": meta, "notifications": {"resourceSubscriptions": uris}}, frame)
            finished = True
            acknowledged.set()
            if listen.acknowledged:
                listen.ended.set()  # the client listens again, and is subscribed anew

        async with anyio.create_task_group() as tg:
            tg.start_soon(stream)
            with anyio.move_on_after(self.gateway.request_timeout):
                await acknowledged.wait()
            if finished or not honored:
                honored.clear()  # an upstream stream that already ended honours nothing
                tg.cancel_scope.cancel()
            task_status.started(list(honored))

    async def discover(self, message: dict[str, Any]) -> None:
        """``server/discover``: every running upstream asked; versions intersected, capabilities merged.

        When no upstream answers it (handshake-era servers answer -32601), neither does the gateway,
        so the client falls back to ``initialize``.
        """
        await self.gateway.settled()
        request_id = message["id"]
        params = message.get("params")
        answers: list[dict[str, Any]] = []
        for link in self.gateway.links:
            if link.ready and not link.initialized:
                with contextlib.suppress(RequestFailed):
                    answer = await link.request("server/discover", params)
                    link.note_discovered(answer)
                    answers.append(answer)
        if not answers:
            text = "Method not found: no upstream server speaks the 2026-07-28 protocol era; use initialize"
            await self.gateway.reply(error_response(request_id, METHOD_NOT_FOUND, text))
            return
        versions: list[Any] | None = None
        for answer in answers:
            theirs = [v for v in answer.get("supportedVersions") or [] if type(v) is str]
            versions = theirs if versions is None else [v for v in versions if v in theirs]
        capabilities = merged_capabilities(answer.get("capabilities") for answer in answers)
        result: dict[str, Any] = {
            "supportedVersions": versions or [],
            "capabilities": capabilities,
            "serverInfo": gateway_info(),
            "_meta": {SERVER_INFO_KEY: gateway_info()},
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
        }
        await self.gateway.reply({"jsonrpc": "2.0", "id": request_id, "result": result})


def _still(link: Link, listed: Listed, mark: int) -> bool:
    """Whether a tool listing made at ``mark`` (``Listed.changes``) is still ``link``'s latest (put_tools' still)."""
    return link.ready and listed.changes["tools"] == mark
