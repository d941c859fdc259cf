"""The guard's own ``subscriptions/listen`` streams at one upstream (MCP 2026-07-28), for ``wrap`` and ``serve``.

In the 2026-07-28 era an upstream tells of changes (``notifications/tools/list_changed``, resource updates)
only on listen streams: a ``subscriptions/listen`` request that stays open, each of whose notifications
(*frames*) carries the request's id in ``_meta`` ``io.modelcontextprotocol/subscriptionId``. The guard keeps
streams of its own (``wrap``: one per envelope's tool table, ``sessions.listings``; ``serve``: one per envelope
and upstream, and one per client stream's resource subscriptions, ``sessions.modern_era``). A stream's
request goes under an id of the guard's own requests (``requests.OwnRequests``), its frames go to the
stream's handler and nowhere else (never to the client), and a stream the guard gives up is cancelled at
the upstream (``notifications/cancelled``), so an upstream never holds streams nobody reads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import anyio

from ..wire.jsonrpc import Uncarriable, id_key, valid_id
from ..wire.meta import SUBSCRIPTION_ID_KEY
from .requests import OwnRequests, RequestFailed

__all__ = ["OwnListens"]

H = TypeVar("H")


class OwnListens(Generic[H]):
    """The guard's open listen streams at one upstream, each with its handler (of the owner's type ``H``).

    Args:
        own: the guard's own requests at that upstream (a stream is one, open until it ends).
        send: sends one message of the guard's own upstream (raises ``RequestFailed``: no upstream, or
            it went away; ``Uncarriable``).
    """

    def __init__(self, own: OwnRequests, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self._own = own
        self._send = send
        self._handlers: dict[tuple[bool, Any], H] = {}

    def __len__(self) -> int:
        return len(self._handlers)

    async def listen(self, params: dict[str, Any], handler: H) -> dict[str, Any] | None:
        """Open a stream with ``params`` (its ``_meta`` envelope and ``notifications`` filter), its frames going to
        ``handler`` (:meth:`handler_of`), until the upstream ends it; returns the response that ended it (a
        result, or an error when the upstream does not offer the method), or ``None`` when the upstream went
        away or could not be sent it. Cancelling the caller cancels the stream at the upstream."""
        request_id = self._own.new_id()
        key = id_key(request_id)
        pending = self._own.open(request_id)
        self._handlers[key] = handler
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params})
            await pending.event.wait()
        except (RequestFailed, Uncarriable):
            return None
        finally:
            self._own.close(request_id)
            self._handlers.pop(key, None)
            if not pending.event.is_set():  # given up by the guard (not ended by the upstream, nor gone)
                notice = {"requestId": request_id, "reason": "mcp-guard no longer needs this stream"}
                with anyio.CancelScope(shield=True), contextlib.suppress(RequestFailed, Uncarriable):
                    await self._send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": notice})
        return pending.response

    def handler_of(self, message: dict[str, Any]) -> tuple[H, str, dict[str, Any]] | None:
        """A frame of one of these streams (a notification stamped with its id): ``(handler, method, params)``;
        ``None`` for any other message."""
        params = message.get("params")
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is not dict:
            return None
        subscription = meta.get(SUBSCRIPTION_ID_KEY)
        if not valid_id(subscription):
            return None
        handler = self._handlers.get(id_key(subscription))
        method = message.get("method")
        if handler is None or type(method) is not str or "id" in message:
            return None
        assert type(params) is dict
        return handler, method, params
