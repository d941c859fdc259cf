"""Messages of the HTTP front: map keys of ids, kinds, error bodies, and a request's stream (:class:`Exchange`)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...auth.principal import Principal
from ...calls.observer import Origin
from ...wire.jsonrpc import NO_ID, Uncarriable, dumps, error_response, id_key, valid_id
from ...wire.meta import PROTOCOL_VERSION_KEY
from .config import EXCHANGE_BUFFER

__all__ = [
    "Exchange",
    "Item",
    "Key",
    "envelope_version",
    "error_bytes",
    "map_key",
    "message_kind",
    "progress_token",
    "with_upstream_id",
]

Key = tuple[bool, Any]
"""A map key of a JSON-RPC id (see :func:`map_key`)."""


def map_key(request_id: Any) -> Key | None:
    """A map key for a JSON-RPC id (``"1"`` and ``1`` differ, ``1`` and ``1.0`` do not); None if not an id."""
    return id_key(request_id) if valid_id(request_id) else None


def message_kind(message: dict[str, Any]) -> str | None:
    """``request``, ``notification``, ``response`` or None (not a JSON-RPC message)."""
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "id" in message and ("result" in message or "error" in message):
        return "response"
    return None


def envelope_version(message: dict[str, Any]) -> Any:
    """The 2026-07-28 ``_meta`` protocol version of a message, or :data:`NO_ID` when it has none."""
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and PROTOCOL_VERSION_KEY in meta:
        return meta[PROTOCOL_VERSION_KEY]
    return NO_ID


def error_bytes(request_id: Any, code: int, text: str) -> bytes:
    return dumps(error_response(request_id, code, text))


@dataclass
class Item:
    """One message for a request stream: its bytes, whether it is the response, the HTTP status for JSON."""

    data: bytes
    final: bool = False
    status: int = 200


class _Closer:
    """One end of an :class:`Exchange` (``sender`` or ``receiver``): ``close()`` is all it offers."""

    __slots__ = ("close",)

    def __init__(self, close: Callable[[], None]) -> None:
        self.close = close


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


@dataclass(eq=False)
class Exchange:
    """A POSTed request waiting for its response, or (``client_id`` unused) a session's GET stream.

    A queue of :class:`Item` from the router (``put``, ``offer``) to the HTTP side (``next``,
    or :attr:`waiter` and ``take`` for a handler that waits on several things at once). Up to
    :data:`~.config.EXCHANGE_BUFFER` messages wait before ``put`` waits for room (backpressure
    towards the upstream); the response (a final item) always finds room, so answering a request
    never waits. ``sender.close()`` ends the stream (the HTTP side gets None after what is
    queued); ``receiver.close()`` says the HTTP side is gone (``put`` and ``offer`` return False).

    Built on the asyncio loop's futures rather than an anyio memory stream: the HTTP front is
    served by uvicorn, which runs on asyncio only, and a stream pair per request with its
    checkpoints cost a good share of a call's CPU (``benchmarks/http_throughput.py``).
    """

    client_id: Any
    progress: Key | None = None
    initialize: bool = False
    discover: bool = False
    answered: bool = False
    principal: Principal | None = None  # who sent it (OAuth); the session asks (Channel.principal_of)
    origin: Origin | None = None  # its session and trace headers, while tracing (Channel.origin_of)
    sender: _Closer = field(init=False, repr=False)
    receiver: _Closer = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._items: deque[Item] = deque()
        self._ended = False  # sender closed (or the response queued): nothing more comes
        self._gone = False  # receiver closed: nothing more is taken
        # Set by the HTTP side while it waits: done once an item is queued or the stream ends.
        self.waiter: asyncio.Future[None] | None = None
        self._room: list[asyncio.Future[None]] = []  # routers waiting in put() for room
        self.sender = _Closer(self._end)
        self.receiver = _Closer(self._leave)

    @property
    def ready(self) -> bool:
        """An item is queued, or the stream ended: :meth:`take` returns without waiting for more."""
        return bool(self._items) or self._ended or self._gone

    def take(self) -> Item | None:
        """The next queued item, or None when none is queued (the stream ended, when :attr:`ready`)."""
        if not self._items:
            return None
        item = self._items.popleft()
        if self._room:
            for waiter in self._room:
                _wake(waiter)
            self._room.clear()
        return item

    def offer(self, item: Item) -> bool:
        """Queue ``item`` if there is room now (never waits); False otherwise, or when either side closed."""
        if self._gone or self._ended or (not item.final and len(self._items) >= EXCHANGE_BUFFER):
            return False
        self._items.append(item)
        if item.final:
            self.answered = True
            self._ended = True
        _wake(self.waiter)
        return True

    async def put(self, item: Item) -> bool:
        """Queue ``item``, waiting for room; False when the HTTP side is gone (or the stream already ended)."""
        while not self.offer(item):
            if self._gone or self._ended:
                return False
            waiter = asyncio.get_running_loop().create_future()
            self._room.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._room:
                    self._room.remove(waiter)
        return True

    async def next(self) -> Item | None:
        """The next item, or None when the stream ended without one."""
        while not self.ready:
            waiter = self.waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self.waiter = None
        return None if self._gone else self.take()

    def _end(self) -> None:
        self._ended = True
        _wake(self.waiter)

    def _leave(self) -> None:
        self._gone = True
        self._items.clear()
        for waiter in self._room:
            _wake(waiter)
        self._room.clear()
        _wake(self.waiter)


def progress_token(message: dict[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    return meta.get("progressToken") if type(meta) is dict else None


def with_upstream_id(message: dict[str, Any], body: bytes, upstream_id: int) -> tuple[bytes, Any]:
    """A client's request as a shared relay gets it: ``(line, token)``, the line with ``upstream_id`` as its
    ``id`` and, when it sets a progress token, as that token too; ``token`` is the client's own (None: none
    set), for the way back. Used where requests of many clients share one upstream (the 2026-07-28
    channel, ``--shared-upstream``): their ids and tokens collide.

    A message holding a number JSON cannot carry is never forwarded (the relay refuses it), so only
    its id must be the relay's: ``body`` with ``"id"`` appended (a JSON object's last duplicate key wins).
    """
    out = dict(message)
    out["id"] = upstream_id
    token = progress_token(message)
    if token is not None:
        params = message["params"]
        out["params"] = {**params, "_meta": {**params["_meta"], "progressToken": upstream_id}}
    try:
        return dumps(out), token
    except Uncarriable:
        return body.rstrip(b" \t\r\n")[:-1] + b',"id":' + str(upstream_id).encode() + b"}", token
