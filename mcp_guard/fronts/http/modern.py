"""The 2026-07-28 era: one shared channel, a fresh upstream id (and progress token) per request."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import UNSUPPORTED_PROTOCOL_VERSION

from ...wire.jsonrpc import METHOD_NOT_FOUND, dumps
from .channel import Channel
from .messages import Exchange, Item, Key, error_bytes, map_key, with_upstream_id

if TYPE_CHECKING:
    from .app import HttpFront

__all__ = ["ModernChannel"]

log = logging.getLogger("mcp_guard")


class ModernChannel(Channel):
    """The shared channel of 2026-07-28 requests: the front gives each request an id of its own upstream."""

    label = "2026-07-28 channel"

    def __init__(self, front: HttpFront) -> None:
        super().__init__(front)
        self._counter = 0
        self._tokens: dict[Key, Any] = {}

    def register(self, message: dict[str, Any], body: bytes) -> tuple[Exchange, Key, bytes]:
        """The stream for a request, its key, and the message as the relay gets it (fresh id and progress token)."""
        self._counter += 1
        upstream_id = self._counter
        exchange = Exchange(message["id"], discover=message.get("method") == "server/discover")
        data, token = with_upstream_id(message, body, upstream_id)
        if token is not None:
            exchange.progress = (False, upstream_id)
            self._tokens[exchange.progress] = token
        key = (False, upstream_id)
        self.pending[key] = exchange
        return exchange, key, data

    async def abandon(self, exchange: Exchange, upstream_key: Key) -> None:
        """The client closed the response stream: in this era that cancels the request upstream."""
        if self.pending.get(upstream_key) is not exchange:
            return
        del self.pending[upstream_key]
        self._forget_progress(exchange)
        notice = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": upstream_key[1], "reason": "the client closed the response stream"},
        }
        await self.submit(dumps(notice))

    def _forget_progress(self, exchange: Exchange) -> None:
        if exchange.progress is not None:
            self._tokens.pop(exchange.progress, None)

    def _answer_bytes(self, message: dict[str, Any], raw: bytes | None, exchange: Exchange) -> bytes:
        return dumps({**message, "id": exchange.client_id})

    def _note_discover(self, message: dict[str, Any]) -> None:
        """An error to ``server/discover`` other than -32022: the upstream does not speak this era; retire it.

        Clients then fall back to ``initialize`` (a session with an upstream of its own), so the
        shared one would only idle. -32022 (unsupported protocol version) names versions the
        server does speak: it stays.
        """
        error = message.get("error")
        code = error.get("code") if type(error) is dict else None
        if type(code) is int and code != UNSUPPORTED_PROTOCOL_VERSION:
            self.end_when_idle(
                f"the upstream answered server/discover with error {code}, so it does not speak the 2026-07-28 "
                "era; it is stopped now that no 2026-07-28 request is in flight"
            )

    def _status(self, message: dict[str, Any]) -> int:
        error = message.get("error")
        code = error.get("code") if type(error) is dict else None
        return ERROR_CODE_HTTP_STATUS.get(code, 200) if type(code) is int else 200

    async def _route_other(self, message: dict[str, Any], raw: bytes | None) -> None:
        if "id" in message:
            # Server-to-client requests do not exist in this era: answer for the client, or the upstream waits.
            log.warning("answered a server-to-client request on the 2026-07-28 channel with -32601")
            text = "Method not found: a 2026-07-28 client over HTTP takes no server-to-client requests"
            await self.submit(error_bytes(message["id"], METHOD_NOT_FOUND, text))
            return
        params = message.get("params")
        exchange: Exchange | None = None
        restored = message
        if type(params) is dict:
            meta = params.get("_meta")
            tag = map_key(meta.get(SUBSCRIPTION_ID_META_KEY)) if type(meta) is dict else None
            if tag is not None and tag in self.pending and type(meta) is dict:
                exchange = self.pending[tag]
                restored = {
                    **message,
                    "params": {**params, "_meta": {**meta, SUBSCRIPTION_ID_META_KEY: exchange.client_id}},
                }
            elif message.get("method") == "notifications/progress":
                token = map_key(params.get("progressToken"))
                if token is not None and token in self._tokens and token in self.pending:
                    exchange = self.pending[token]
                    restored = {**message, "params": {**params, "progressToken": self._tokens[token]}}
        if exchange is None and len(self.pending) == 1:
            exchange = next(iter(self.pending.values()))
        if exchange is None:
            log.debug("dropped an upstream notification that no single 2026-07-28 request can be given")
            return
        data = dumps(restored) if restored is not message or raw is None else raw
        if not self._too_big(data):
            await exchange.put(Item(data))

    def _finish(self) -> None:
        self._tokens.clear()
        super()._finish()
        self.front.registry.forget_modern(self)
