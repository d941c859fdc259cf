"""``wrap --http --shared-upstream``: one upstream process (and one relay) for every handshake-era session.

Without the option each session has an upstream process of its own. With it, sessions are
views of one :class:`SharedChannel`, which speaks to the upstream as one client and keeps the
sessions apart (docs/wrap.md, "One upstream for all sessions", is the user's account):

- Ids: every request gets a fresh upstream id (an integer of the channel's), and its
  ``_meta.progressToken`` a fresh token; both are restored on the way back, as the 2026-07-28
  channel does (:mod:`.modern`). Two sessions may use the same ids at once.
- The handshake: the first session's ``initialize`` goes upstream; every later session gets
  the same result (with its own id and ``Mcp-Session-Id``), whatever protocol version or
  capabilities it asked for: the upstream negotiated once (MCP lets a client that cannot
  speak the answered version disconnect). An ``initialize`` that arrives while the first is
  in flight waits for it; when the first is refused, that session ends and the next waiting
  one's ``initialize`` goes upstream. ``notifications/initialized`` goes upstream once.
- Cancellation: a session's ``notifications/cancelled`` is forwarded with the upstream id of
  its own request (one naming no request of the session is dropped: it could name another
  session's). A session that ends (DELETE, idle) has its requests in flight cancelled
  upstream, its subscriptions released and the upstream's requests to it answered with an error.
- Server-to-client requests (sampling, elicitation, ``roots/list``, ``ping``): the stdio wire
  does not say which request caused one, so it goes to the one session that has requests in
  flight; with none in flight, to the oldest session (the *primary*, whose roots the upstream
  knows); with several in flight it is answered upstream with an error (-32603), never
  guessed: a sampling request may carry one session's data (a ``ping`` is answered ``{}``).
  A response is forwarded only from the session the request went to.
- Shared state: ``logging/setLevel`` is forwarded from any session (the last one wins, for
  every session); ``resources/subscribe`` is counted per session and URI (the first holder's
  subscribe goes upstream, the last holder's unsubscribe does; the others are answered ``{}``
  by the guard); ``notifications/resources/updated`` goes to the sessions holding that URI;
  ``notifications/roots/list_changed`` is forwarded from the primary session only.
- Notifications without a request (``list_changed``, log messages, anything else) go to
  every session; ``notifications/progress`` only to the request whose token it carries.
- Lifetime: ``DELETE`` or the idle timeout ends one session; the upstream stops when the last
  session has ended (the next ``initialize`` starts a new one). An upstream that exits is
  started again by the relay with the handshake replayed, as for one session; every session
  gets ``notifications/tools/list_changed``. When the channel ends, every session ends (404).

The relay behind the channel judges every session's calls with one tool table: each session
gets the same verdicts, refusals and pinning as with an upstream of its own.
"""

from __future__ import annotations

import logging
import secrets
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from ...wire.jsonrpc import INTERNAL_ERROR, dumps
from .channel import Channel
from .config import MAX_BACKLOG, MAX_TOMBSTONES
from .handshake import REQUEST_CANCELLED, Session
from .messages import Exchange, Item, Key, error_bytes, map_key, progress_token, with_upstream_id

if TYPE_CHECKING:
    from .app import HttpFront

__all__ = ["AnySession", "SharedChannel", "SharedSession", "SharedUpstream"]

log = logging.getLogger("mcp_guard")

IDLE_TICK: Final = 1.0
"""Seconds between the shared channel's checks for idle sessions (at most; a quarter of the timeout when shorter)."""

_NONE, _PENDING, _DONE = "none", "pending", "done"


def _result_bytes(request_id: Any, result: Any) -> bytes:
    return dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


class SharedSession:
    """One handshake-era session on the shared upstream: an ``Mcp-Session-Id``, its requests and streams.

    The same interface as :class:`~.handshake.Session` as the front uses it (``register``,
    ``forward``, ``cancelled``, ``abandon``, ``enter``/``leave``, ``stop``, the GET stream and
    backlog); the upstream side is the :class:`SharedChannel`'s.
    """

    def __init__(self, channel: SharedChannel, session_id: str) -> None:
        self.channel = channel
        self.session_id = session_id
        self.label = f"session {session_id[:8]}… (shared upstream)"
        self.header = [(b"mcp-session-id", session_id.encode())]
        self.negotiated: str | None = None
        self.get_stream: Exchange | None = None
        self.backlog: deque[bytes] = deque()
        self.closed = False
        self.pending: dict[Key, tuple[Exchange, Key]] = {}  # client key -> (stream, upstream key)
        self.active = 0
        self.idle_since = anyio.current_time()

    # --- what the front calls ------------------------------------------------------------------

    def register(self, message: dict[str, Any]) -> Exchange | None:
        """The stream for a request; None when its id is in flight in this session (a fresh upstream id is taken)."""
        return self.channel.register(self, message)

    async def forward(self, message: dict[str, Any], body: bytes) -> bool:
        """Pass one client message on (rewritten, answered by the guard, or dropped); False once the session ended."""
        if self.closed:
            return False
        return await self.channel.forward(self, message, body)

    async def cancelled(self, message: dict[str, Any]) -> None:
        """A client's ``notifications/cancelled``: its stream ends with -32800; the upstream is told its own id."""
        self.channel.cancel(self, message)

    async def cancel_in_flight(self, reason: str) -> None:
        """The client ends the session (``DELETE``): every request in flight but ``initialize`` is answered
        -32800 and cancelled upstream with ``reason`` (``Session.cancel_in_flight``)."""
        for exchange, _key in list(self.pending.values()):
            params = {"requestId": exchange.client_id, "reason": reason}
            self.channel.cancel(self, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    def abandon(self, exchange: Exchange) -> None:
        """The HTTP request went away unanswered; a late answer is dropped (not a cancellation)."""
        self.channel.abandon(self, exchange)
        if exchange.initialize and not exchange.answered:
            log.info("%s: the initialize request went away unanswered; ending the session", self.label)
            self.channel.front.registry.end_session(self)

    def enter(self) -> None:
        """A request (or the GET stream) is being served: the session is not idle."""
        self.active += 1

    def leave(self) -> None:
        """A request (or the GET stream) is done: the idle time counts from the last one."""
        self.active -= 1
        if self.active == 0:
            self.idle_since = anyio.current_time()

    def stop(self) -> None:
        """End the session (the front has dropped it): the shared upstream runs on for the others."""
        if not self.closed:
            self.closed = True
            self.channel.release(self)

    def version_ok(self, header: str | None) -> bool:
        """Whether an ``MCP-Protocol-Version`` header is acceptable in this session."""
        return header is None or header in HANDSHAKE_PROTOCOL_VERSIONS or header == self.negotiated

    def flush_backlog(self, exchange: Exchange) -> None:
        """Give a new request stream the messages that waited for a stream, as many as fit now."""
        while self.backlog and exchange.offer(Item(self.backlog[0])):
            self.backlog.popleft()

    # --- what the channel calls ----------------------------------------------------------------

    def deliver(self, data: bytes) -> None:
        """A message outside a request's answer: the newest open request stream, the GET stream, or the backlog.

        Never waits: one session that does not read its streams cannot hold up the others.
        """
        for exchange, _key in list(reversed(self.pending.values()))[:4]:
            if exchange.offer(Item(data)):
                return
        if self.get_stream is not None and self.get_stream.offer(Item(data)):
            return
        self.backlog.append(data)
        if len(self.backlog) > MAX_BACKLOG:
            self.backlog.popleft()
            log.warning("%s: no stream open for server messages; dropped the oldest waiting one", self.label)

    def close_streams(self) -> None:
        """The session is gone: its open streams end (their handlers answer an error)."""
        for exchange, _key in self.pending.values():
            exchange.sender.close()
        self.pending.clear()
        if self.get_stream is not None:
            self.get_stream.sender.close()
        self.backlog.clear()


AnySession = Session | SharedSession
"""A handshake-era session of the front: an upstream of its own, or a view of the shared one."""


class SharedChannel(Channel):
    """The one relay (and upstream process) behind every session of ``--shared-upstream``."""

    label = "shared upstream"

    def __init__(self, front: HttpFront) -> None:
        super().__init__(front)
        self._idle_timeout = None  # the channel ends with its last session, not on a timer of its own
        self.sessions: list[SharedSession] = []  # oldest first; sessions[0] is the primary
        self.negotiated: str | None = None
        self._counter = 0
        self._owners: dict[Key, tuple[SharedSession, Key]] = {}  # upstream key -> (session, client key)
        self._tokens: dict[Key, Any] = {}  # upstream progress token -> the client's
        self._asked: dict[Key, SharedSession] = {}  # the upstream's requests -> the session they went to
        self._holders: dict[str, set[SharedSession]] = {}  # subscribed URI -> sessions holding it
        self._subscribing: dict[Key, tuple[SharedSession, str]] = {}
        self._own: set[Key] = set()  # the guard's own requests (unsubscribe for an ended session)
        self._dropped: OrderedDict[Key, None] = OrderedDict()
        self._init_state = _NONE
        self._init_key: Key | None = None
        self._init_session: SharedSession | None = None
        self._init_result: Any = None
        self._init_changed = anyio.Event()
        self._initialized_sent = False
        self._outbox: deque[bytes] = deque()
        self._outbox_ready = anyio.Event()

    # --- sessions ---------------------------------------------------------------------------------

    def attach(self, session: SharedSession) -> None:
        """A new session on this upstream (called before its ``initialize`` is forwarded)."""
        self.sessions.append(session)

    def release(self, session: SharedSession) -> None:
        """A session ended: cancel its requests upstream, release its subscriptions, answer what asked it.

        The channel (and its upstream) stops when no session is left.
        """
        for exchange, upstream_key in list(session.pending.values()):
            self._drop(upstream_key, exchange)
            exchange.sender.close()  # its handler answers that the session ended
            if not exchange.initialize:  # MCP: initialize is never cancelled
                self._cancel_upstream(upstream_key, "the session ended")
        session.close_streams()
        for key, asked in list(self._asked.items()):
            if asked is session:
                del self._asked[key]
                self._post(error_bytes(key[1], INTERNAL_ERROR, "mcp-guard: the client session this was sent to ended"))
        for uri, holders in list(self._holders.items()):
            if session in holders:
                holders.discard(session)
                if not holders:
                    del self._holders[uri]
                    self._own_request("resources/unsubscribe", {"uri": uri})
        if session in self.sessions:
            self.sessions.remove(session)
        if self._init_session is session:
            self._init_session = None
        if not self.sessions and not self.closed:
            log.info("%s: the last session ended; stopping the upstream", self.label)
            self.stop()

    # --- client messages --------------------------------------------------------------------------

    def register(self, session: SharedSession, message: dict[str, Any]) -> Exchange | None:
        """The stream for a session's request, under a fresh upstream id; None when the client's id is in flight."""
        client_key = map_key(message["id"])
        assert client_key is not None
        if client_key in session.pending:
            return None
        self._counter += 1
        upstream_key = (False, self._counter)
        exchange = Exchange(message["id"], initialize=message.get("method") == "initialize")
        if progress_token(message) is not None:
            exchange.progress = upstream_key
        self.pending[upstream_key] = exchange
        self._owners[upstream_key] = (session, client_key)
        session.pending[client_key] = (exchange, upstream_key)
        return exchange

    async def forward(self, session: SharedSession, message: dict[str, Any], body: bytes) -> bool:
        """One client message of ``session``: rewritten and submitted, answered here, or dropped.

        False when the channel no longer takes messages.
        """
        method = message.get("method")
        if "id" not in message:  # a notification
            if method == "notifications/cancelled":
                return not self.closed  # done by cancel(): never forwarded as the client wrote it
            if method == "notifications/initialized":
                if self._initialized_sent or self._init_state != _DONE:
                    return not self.closed
                self._initialized_sent = True
            elif method == "notifications/roots/list_changed" and (
                not self.sessions or session is not self.sessions[0]
            ):
                log.debug("%s: dropped roots/list_changed: the upstream asks the primary session only", session.label)
                return not self.closed
            return await self.submit(body)
        if method is None:  # a response to the upstream's request
            key = map_key(message["id"])
            if key is not None and self._asked.get(key) is session:
                del self._asked[key]
                return await self.submit(body)
            log.debug("%s: dropped a response to no request the upstream sent this session", session.label)
            return not self.closed
        client_key = map_key(message["id"])
        entry = session.pending.get(client_key) if client_key is not None else None
        if entry is None:  # cancelled or abandoned before it was forwarded
            return not self.closed
        exchange, upstream_key = entry
        if method == "initialize":
            return await self._initialize(session, message, body, exchange, upstream_key)
        params = message.get("params")
        uri = params.get("uri") if type(params) is dict else None
        if method == "resources/subscribe" and type(uri) is str:
            holders = self._holders.setdefault(uri, set())
            first = not holders
            holders.add(session)
            if not first:
                return self._answer_here(session, exchange, upstream_key, {})
            self._subscribing[upstream_key] = (session, uri)
        elif method == "resources/unsubscribe" and type(uri) is str:
            holders = self._holders.get(uri, set())
            if session not in holders or len(holders) > 1:
                holders.discard(session)
                return self._answer_here(session, exchange, upstream_key, {})
            del self._holders[uri]
        return await self.submit(self._rewritten(message, body, upstream_key))

    def _rewritten(self, message: dict[str, Any], body: bytes, upstream_key: Key) -> bytes:
        """The request with its upstream id (and upstream progress token, noted for the way back)."""
        data, token = with_upstream_id(message, body, upstream_key[1])
        if token is not None:
            self._tokens[upstream_key] = token
        return data

    async def _initialize(
        self, session: SharedSession, message: dict[str, Any], body: bytes, exchange: Exchange, upstream_key: Key
    ) -> bool:
        """The first ``initialize`` goes upstream; later ones wait for its result and get it."""
        while self._init_state == _PENDING and not self.closed:
            await self._init_changed.wait()
        if self.closed or session.closed:
            return False
        if self._init_state == _DONE:
            params = message.get("params")
            asked = params.get("protocolVersion") if type(params) is dict else None
            if asked != self.negotiated:
                log.info(
                    "%s: initialize asked for another protocol version; answered with the shared upstream's",
                    session.label,
                )
            session.negotiated = self.negotiated
            return self._answer_here(session, exchange, upstream_key, self._init_result)
        self._init_state = _PENDING
        self._init_key = upstream_key
        self._init_session = session
        return await self.submit(self._rewritten(message, body, upstream_key))

    def _answer_here(self, session: SharedSession, exchange: Exchange, upstream_key: Key, result: Any) -> bool:
        """Answer a request of ``session`` without the upstream."""
        self.pending.pop(upstream_key, None)
        owner = self._owners.pop(upstream_key, None)
        if owner is not None:
            session.pending.pop(owner[1], None)
        exchange.offer(Item(_result_bytes(exchange.client_id, result), final=True))
        return not self.closed

    def cancel(self, session: SharedSession, message: dict[str, Any]) -> None:
        """A session's ``notifications/cancelled``: answered -32800 now; the upstream is told its own id."""
        params = message.get("params")
        client_key = map_key(params.get("requestId")) if type(params) is dict else None
        entry = session.pending.get(client_key) if client_key is not None else None
        if entry is None:
            return
        exchange, upstream_key = entry
        if exchange.initialize:
            return  # MCP: initialize is never cancelled
        self._drop(upstream_key, exchange)
        reason = params.get("reason") if type(params) is dict else None
        self._cancel_upstream(upstream_key, reason if type(reason) is str else None)
        data = error_bytes(exchange.client_id, REQUEST_CANCELLED, "Request cancelled")
        if not exchange.offer(Item(data, final=True)):
            exchange.sender.close()  # its stream is full: the handler ends it with a generic error

    def abandon(self, session: SharedSession, exchange: Exchange) -> None:
        """The HTTP request of ``exchange`` went away unanswered: a late answer is dropped."""
        client_key = map_key(exchange.client_id)
        entry = session.pending.get(client_key) if client_key is not None else None
        if entry is not None and entry[0] is exchange:
            self._drop(entry[1], exchange)

    def _drop(self, upstream_key: Key, exchange: Exchange) -> None:
        """Forget a request of a session; its late answer is dropped quietly."""
        owner = self._owners.pop(upstream_key, None)
        if owner is not None:
            owner[0].pending.pop(owner[1], None)
        if self.pending.get(upstream_key) is exchange:
            del self.pending[upstream_key]
        self._tokens.pop(upstream_key, None)
        self._dropped[upstream_key] = None
        while len(self._dropped) > MAX_TOMBSTONES:
            self._dropped.popitem(last=False)

    def _cancel_upstream(self, upstream_key: Key, reason: str | None) -> None:
        params: dict[str, Any] = {"requestId": upstream_key[1]}
        if reason is not None:
            params["reason"] = reason
        self._post(dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}))

    def _own_request(self, method: str, params: dict[str, Any]) -> None:
        if self.closed:
            return
        self._counter += 1
        key = (False, self._counter)
        self._own.add(key)
        self._post(dumps({"jsonrpc": "2.0", "id": self._counter, "method": method, "params": params}))

    def _post(self, data: bytes) -> None:
        """Send a message of the guard's upstream soon (from code that may not wait)."""
        if not self.closed:
            self._outbox.append(data)
            self._outbox_ready.set()

    # --- side tasks -------------------------------------------------------------------------------

    async def _watch(self) -> None:
        """Side tasks of the running channel: the guard's own messages, and the sessions' idle timeout."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._send_outbox)
            await self._end_idle_sessions()

    async def _send_outbox(self) -> None:
        while True:
            await self._outbox_ready.wait()
            self._outbox_ready = anyio.Event()
            while self._outbox:
                if not await self.submit(self._outbox.popleft()):
                    return

    async def _end_idle_sessions(self) -> None:
        timeout = self.front.config.session_idle_timeout
        if timeout is None:
            await anyio.sleep_forever()
            return
        while True:
            await anyio.sleep(min(IDLE_TICK, timeout / 4))
            now = anyio.current_time()
            for session in list(self.sessions):
                if session.active == 0 and now - session.idle_since >= timeout:
                    log.info("%s idle for %g s; ending it", session.label, timeout)
                    self.front.registry.end_session(session)

    # --- upstream output ------------------------------------------------------------------------

    def _respond(self, message: dict[str, Any], raw: bytes | None) -> None:
        """A response of the upstream (``Channel._respond``, on the async path and the hot path alike):
        the guard's own requests' answers are dropped, the first ``initialize``'s kept for later
        sessions, a refused ``resources/subscribe`` releases its holder, and the rest goes to the
        session whose request it answers."""
        initialize = False
        if "id" in message:
            key = map_key(message["id"])
            if key is not None and key in self._own:
                self._own.discard(key)
                return
            initialize = key is not None and key == self._init_key
            if initialize and type(message.get("result")) is not dict and self._init_session is not None:
                self._init_session.header.clear()  # refused: the error goes out without the session id
            subscribing = self._subscribing.pop(key, None) if key is not None else None
            if subscribing is not None and "error" in message:
                holders = self._holders.get(subscribing[1])
                if holders is not None:
                    holders.discard(subscribing[0])
                    if not holders:
                        del self._holders[subscribing[1]]
            owner = self._owners.pop(key, None) if key is not None else None
            if owner is not None:
                owner[0].pending.pop(owner[1], None)
        super()._respond(message, raw)
        if initialize:
            self._initialize_answered(message)

    def _initialize_answered(self, message: dict[str, Any]) -> None:
        """The upstream answered the first ``initialize``: keep the result for later sessions, or let the next try."""
        self._init_key = None
        session, self._init_session = self._init_session, None
        result = message.get("result")
        if type(result) is dict:
            self._init_state = _DONE
            self._init_result = result
            version = result.get("protocolVersion")
            self.negotiated = version if type(version) is str else None
            if session is not None:
                session.negotiated = self.negotiated
        else:
            self._init_state = _NONE
            if session is not None:
                # Refused: that session was never opened (its answer went out without the session id).
                log.info("%s: initialize was answered with an error; ending the session", session.label)
                self.front.registry.end_session(session)
        self._init_changed.set()
        self._init_changed = anyio.Event()

    def _answer_bytes(self, message: dict[str, Any], raw: bytes | None, exchange: Exchange) -> bytes:
        return dumps({**message, "id": exchange.client_id})

    def _forget_progress(self, exchange: Exchange) -> None:
        if exchange.progress is not None:
            self._tokens.pop(exchange.progress, None)

    def _unmatched(self, key: Key | None) -> None:
        if key is not None and key in self._dropped:
            del self._dropped[key]
            log.debug("%s: dropped a late answer to an abandoned or cancelled request", self.label)
        elif key is None or key != self._init_key:  # an initialize whose session went away still counts
            super()._unmatched(key)

    async def _route_other(self, message: dict[str, Any], raw: bytes | None) -> None:
        method = message.get("method")
        params = message.get("params")
        if "id" in message:
            await self._server_request(message, raw)
            return
        if method == "notifications/progress" and type(params) is dict:
            key = map_key(params.get("progressToken"))
            exchange = self.pending.get(key) if key is not None and key in self._tokens else None
            if exchange is None or key is None:
                log.debug("%s: dropped progress for no request in flight", self.label)
                return
            data = dumps({**message, "params": {**params, "progressToken": self._tokens[key]}})
            if not self._too_big(data) and not exchange.offer(Item(data)):
                log.debug("%s: dropped progress for a request stream that is not read", self.label)
            return
        data = raw if raw is not None else dumps(message)
        if self._too_big(data):
            return
        if method == "notifications/cancelled" and type(params) is dict:
            key = map_key(params.get("requestId"))
            target = self._asked.pop(key, None) if key is not None else None
            if target is not None:
                target.deliver(data)
            return
        if method == "notifications/resources/updated" and type(params) is dict:
            uri = params.get("uri")
            targets = list(self._holders.get(uri, ())) if type(uri) is str else []
        else:
            targets = list(self.sessions)
        for session in targets:
            session.deliver(data)

    async def _server_request(self, message: dict[str, Any], raw: bytes | None) -> None:
        """A server-to-client request: to the one session it can belong to, else answered here."""
        key = map_key(message["id"])
        busy = [session for session in self.sessions if session.pending]
        target = busy[0] if len(busy) == 1 else self.sessions[0] if not busy and self.sessions else None
        if target is None or key is None:
            if message.get("method") == "ping":
                await self.submit(_result_bytes(message["id"], {}))
                return
            log.warning(
                "%s: answered a server-to-client request with an error: %s",
                self.label,
                "several sessions have requests in flight" if busy else "no session is open",
            )
            text = (
                "mcp-guard --shared-upstream: cannot tell which client session this request belongs to "
                "(several have requests in flight)"
            )
            await self.submit(error_bytes(message["id"], INTERNAL_ERROR, text))
            return
        data = raw if raw is not None else dumps(message)
        if self._too_big(data):
            return
        self._asked[key] = target
        target.deliver(data)

    def stop(self, *, now: bool = False) -> None:
        """End the channel (``Channel.stop``); the guard's own messages still waiting (the last session's
        cancellations, its unsubscriptions, errors for what the upstream asked it) go to the relay first, in order."""
        while self._outbox and self.client.put_nowait(self._outbox.popleft()):
            pass
        super().stop(now=now)

    def _finish(self) -> None:
        self._init_changed.set()
        for session in list(self.sessions):
            session.closed = True
            self.front.registry.forget_session(session)
            session.close_streams()
        self.sessions.clear()
        self._owners.clear()
        self._tokens.clear()
        self._asked.clear()
        self._holders.clear()
        self._outbox.clear()
        super()._finish()


class SharedUpstream:
    """The front's handle on the shared channel: started with the first session, again after it ended."""

    def __init__(self, front: HttpFront) -> None:
        self.front = front
        self.channel: SharedChannel | None = None
        self._lock = anyio.Lock()

    async def open_session(self, start: Callable[[Channel], Awaitable[None]]) -> SharedSession:
        """A new session on the shared upstream; ``start`` runs a new channel when none is running.

        Raises:
            UpstreamStartError: the upstream command cannot be started.
        """
        async with self._lock:
            channel = self.channel
            if channel is None or channel.closed:
                channel = SharedChannel(self.front)
                await start(channel)
                self.channel = channel
                log.info("%s started", channel.label)
            session = SharedSession(channel, secrets.token_hex(16))
            channel.attach(session)
            return session
