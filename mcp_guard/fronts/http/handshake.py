"""Handshake-era sessions: opened by ``initialize``, named by ``Mcp-Session-Id``, one upstream each."""

from __future__ import annotations

import itertools
import logging
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Any, Final

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from ...auth.principal import Principal
from ...wire.jsonrpc import dumps
from .channel import Channel
from .config import MAX_BACKLOG, MAX_TOMBSTONES
from .messages import Exchange, Item, Key, error_bytes, map_key, progress_token

if TYPE_CHECKING:
    from .app import HttpFront

__all__ = ["REQUEST_CANCELLED", "Session"]

log = logging.getLogger("mcp_guard")

REQUEST_CANCELLED: Final = -32800
"""Error code answering a handshake-era request the client cancelled (as the SDK's HTTP server does)."""


class Session(Channel):
    """A handshake-era session: opened by ``initialize``, one upstream process, ids as the client sent them."""

    def __init__(self, front: HttpFront, session_id: str) -> None:
        super().__init__(front)
        self.session_id = session_id
        self.label = f"session {session_id[:8]}…"
        self.header = [(b"mcp-session-id", session_id.encode())]
        self.negotiated: str | None = None
        self.get_stream: Exchange | None = None
        self.backlog: deque[bytes] = deque()
        # Ids of abandoned or cancelled requests, with who sent them (OAuth): a call the relay still
        # judges after its HTTP request went away is judged as its sender's (principal_of).
        self.tombstones: OrderedDict[Key, Principal | None] = OrderedDict()
        self.progress: dict[Key, Exchange] = {}

    def _end(self) -> None:
        self.front.registry.end_session(self)

    # --- requests --------------------------------------------------------------------------------

    def register(self, message: dict[str, Any]) -> Exchange | None:
        """The stream for a request; None when its id is in flight or was abandoned in this session."""
        key = map_key(message["id"])
        assert key is not None
        if key in self.pending or key in self.tombstones:
            return None
        exchange = Exchange(message["id"], initialize=message.get("method") == "initialize")
        token = progress_token(message)
        if token is not None:
            exchange.progress = map_key(token)
            if exchange.progress is not None:
                self.progress.setdefault(exchange.progress, exchange)
        self.pending[key] = exchange
        return exchange

    async def forward(self, message: dict[str, Any], body: bytes) -> bool:
        """Pass one client message (``body``, as posted) to this session's relay; False once the session ended."""
        return await self.submit(body)

    def abandon(self, exchange: Exchange) -> None:
        """The HTTP request went away unanswered; a late answer will be dropped (not a cancellation)."""
        key = map_key(exchange.client_id)
        if key is not None and self.pending.get(key) is exchange:
            del self.pending[key]
            self._forget_progress(exchange)
            self._tombstone(key, exchange.principal)
        if exchange.initialize and not exchange.answered:
            log.info("%s: the initialize request went away unanswered; ending the session", self.label)
            self.front.registry.end_session(self)

    async def cancelled(self, message: dict[str, Any]) -> None:
        """A client's ``notifications/cancelled``: the request's stream ends with -32800 now."""
        params = message.get("params")
        key = map_key(params.get("requestId")) if type(params) is dict else None
        exchange = self.pending.pop(key, None) if key is not None else None
        if exchange is None:
            return
        assert key is not None
        self._forget_progress(exchange)
        self._tombstone(key, exchange.principal)
        data = error_bytes(exchange.client_id, REQUEST_CANCELLED, "Request cancelled")
        if not exchange.offer(Item(data, final=True)):
            exchange.sender.close()  # its stream is full: the handler ends it with a generic error

    async def cancel_in_flight(self, reason: str) -> None:
        """The client ends the session (``DELETE``): cancel every request in flight but ``initialize``.

        Each is answered -32800 now (as :meth:`cancelled`), and the relay gets the client's
        ``notifications/cancelled`` for it (with ``reason``) before the session's end: the upstream
        is told (MCP cancellation) and a ``tools/call`` is journaled ``cancelled``, not left to finish
        while the upstream is being stopped. MCP: ``initialize`` is never cancelled.
        """
        for exchange in [e for e in self.pending.values() if not e.initialize]:
            params = {"requestId": exchange.client_id, "reason": reason}
            notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
            await self.cancelled(notice)
            if not await self.forward(notice, dumps(notice)):
                return  # the relay is gone: nothing left to tell

    def principal_of(self, request_id: Any) -> Principal | None:
        """As ``Channel.principal_of``, and for a request abandoned or cancelled (its tombstone keeps it)."""
        key = map_key(request_id)
        exchange = self.pending.get(key) if key is not None else None
        if exchange is not None:
            return exchange.principal
        return self.tombstones.get(key) if key is not None else None

    def _tombstone(self, key: Key, principal: Principal | None = None) -> None:
        self.tombstones[key] = principal
        while len(self.tombstones) > MAX_TOMBSTONES:
            self.tombstones.popitem(last=False)

    def _unmatched(self, key: Key | None) -> None:
        if key is not None and key in self.tombstones:
            del self.tombstones[key]
            log.debug("%s: dropped a late answer to an abandoned or cancelled request", self.label)
        else:
            super()._unmatched(key)

    def _forget_progress(self, exchange: Exchange) -> None:
        if exchange.progress is not None and self.progress.get(exchange.progress) is exchange:
            del self.progress[exchange.progress]

    def _note_initialize(self, message: dict[str, Any]) -> None:
        result = message.get("result")
        if type(result) is not dict:
            # Refused (by the upstream or the guard): no session was opened. The error goes out
            # without the session id (the header list is the one this answer is sent with), the
            # id answers 404 from now on, and the upstream stops.
            log.info("%s: initialize was answered with an error; ending the session", self.label)
            self.header.clear()
            self.front.registry.end_session(self)
            return
        version = result.get("protocolVersion")
        if type(version) is str:
            self.negotiated = version

    def version_ok(self, header: str | None) -> bool:
        """Whether an ``MCP-Protocol-Version`` header is acceptable in this session."""
        return header is None or header in HANDSHAKE_PROTOCOL_VERSIONS or header == self.negotiated

    # --- everything but responses -------------------------------------------------------------------

    async def _route_other(self, message: dict[str, Any], raw: bytes | None) -> None:
        data = raw if raw is not None else dumps(message)
        if self._too_big(data):
            return
        if message.get("method") == "notifications/progress":
            params = message.get("params")
            key = map_key(params.get("progressToken")) if type(params) is dict else None
            exchange = self.progress.get(key) if key is not None else None
            if exchange is not None and await exchange.put(Item(data)):
                return
        for exchange in list(itertools.islice(reversed(self.pending.values()), 4)):
            if await exchange.put(Item(data)):
                return
        if self.get_stream is not None and await self.get_stream.put(Item(data)):
            return
        self.backlog.append(data)
        if len(self.backlog) > MAX_BACKLOG:
            self.backlog.popleft()
            log.warning("%s: no stream open for server messages; dropped the oldest waiting one", self.label)

    def flush_backlog(self, exchange: Exchange) -> None:
        """Give a new request stream the messages that waited for a stream, as many as fit now."""
        while self.backlog and exchange.offer(Item(self.backlog[0])):
            self.backlog.popleft()

    def _finish(self) -> None:
        if self.get_stream is not None:
            self.get_stream.sender.close()
        self.progress.clear()
        super()._finish()
        self.front.registry.forget_session(self)
