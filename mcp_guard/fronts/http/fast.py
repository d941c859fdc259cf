"""The HTTP front's hot path: answering a POSTed request from its :class:`~.messages.Exchange`.

A request's answer is a JSON body when its response is the first thing the upstream sends for
it within the keep-alive window, else an SSE stream that carries what comes first and ends with
the response (see the package docstring). While the answer is awaited, the client going away
(``http.disconnect``) must be noticed, so that the caller can abandon the request.

The generic way is an anyio task group per request, with a task reading ``receive()`` and a
cancel scope per wait. That machinery cost a good share of a call's CPU
(``benchmarks/http_throughput.py``), so this module waits on the asyncio loop directly: one
future that the router completes when it queues an item (:attr:`Exchange.waiter`), the
``receive()`` of the disconnect watch (a plain asyncio task), and a timer for the keep-alive
window, whichever comes first. A response the relay already gave (a refusal it decided while
the POST was handed over) is answered without any of it, and the watch starts only once an
answer has been awaited for :data:`WATCH_AFTER` seconds. This steps below anyio, as
``streams.pipes`` does for stdio, and is sound for the same reason: the front is served by uvicorn,
which runs on asyncio only.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Final, Literal

from starlette.types import Receive, Send

from .messages import Exchange, Item

__all__ = ["Ticker", "answer", "respond", "sse_event", "ticker"]

PING: Final = b": keep-alive\r\n\r\n"
"""An SSE comment: keeps a quiet stream (and the proxies between) from timing out."""

_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


def sse_event(data: bytes) -> bytes:
    """One SSE ``message`` event carrying one JSON-RPC message."""
    return b"event: message\r\ndata: " + data + b"\r\n\r\n"


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    headers: Iterable[tuple[bytes, bytes]] = (),
    *,
    content_type: bytes | None = b"application/json",
) -> None:
    """A whole HTTP response: ``status``, ``Content-Length``, ``Content-Type`` (when there is a body), ``headers``."""
    head = [(b"content-length", str(len(body)).encode())]
    if content_type is not None and body:
        head.append((b"content-type", content_type))
    head.extend(headers)
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _disconnect(receive: Receive) -> None:
    """Return once the client went away (``http.disconnect``)."""
    while (await receive())["type"] != "http.disconnect":
        pass


class _Quiet(Enum):
    QUIET = "quiet"


QUIET: Final = _Quiet.QUIET
"""What :meth:`_Wait.next` returns when the keep-alive window passed (or the client went away) first."""


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


WATCH_AFTER: Final = 0.05
"""Seconds an answer is awaited before the disconnect watch starts (most answers come sooner, and need none).

(At least: the watch starts at the first tick of the loop's :class:`Ticker` after that, within
:data:`TICK` more seconds.)"""

TICK: Final = WATCH_AFTER
"""Seconds between the ticks of a :class:`Ticker` (while it holds a deadline)."""


class Ticker:
    """Coarse deadlines for the front's requests on one asyncio loop: one loop timer per :data:`TICK` seconds.

    Most of a request's deadlines (its body's, the start of its disconnect watch) never pass:
    the request is done within milliseconds. A loop timer each would be scheduled and cancelled
    per request (a heap push, a cancel, a handle); here a deadline is an entry in a dict, and
    one timer runs while any is held, calling each ``fire()`` at its first tick at or after
    ``due`` (loop time), so up to :data:`TICK` seconds late. Get the loop's own with :func:`ticker`.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._due: dict[object, tuple[float, Callable[[], object]]] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, key: object, due: float, fire: Callable[[], object]) -> None:
        """Call ``fire()`` once loop time ``due`` has passed, unless :meth:`discard` comes first (one per ``key``)."""
        self._due[key] = (due, fire)
        if self._timer is None:
            self._timer = self._loop.call_later(TICK, self._tick)

    def discard(self, key: object) -> None:
        """Drop ``key``'s deadline (nothing when it has none, or it fired)."""
        self._due.pop(key, None)

    def _tick(self) -> None:
        now = self._loop.time()
        due = [key for key, (when, _fire) in self._due.items() if when <= now]
        for key in due:
            entry = self._due.pop(key, None)
            if entry is not None:
                entry[1]()
        self._timer = self._loop.call_later(TICK, self._tick) if self._due else None


_TICKERS: Final[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Ticker]] = weakref.WeakKeyDictionary()


def ticker(loop: asyncio.AbstractEventLoop) -> Ticker:
    """The :class:`Ticker` of ``loop`` (made at first use)."""
    found = _TICKERS.get(loop)
    if found is None:
        found = _TICKERS[loop] = Ticker(loop)
    return found


class _Wait:
    """The waits of one request's answer: the next item, the client gone, or the keep-alive window over.

    The disconnect watch (a task reading ``receive()``) starts only once an answer has been awaited
    for :data:`WATCH_AFTER` seconds: a client that went away sooner is noticed then (its
    ``receive()`` returns ``http.disconnect`` at once), and a request answered sooner costs no task.
    """

    def __init__(self, receive: Receive, exchange: Exchange, keepalive: float) -> None:
        self._loop = loop = asyncio.get_running_loop()
        self._ticker = ticker(loop)
        self._receive = receive
        self._exchange = exchange
        self._keepalive = keepalive
        self._watch: asyncio.Task[None] | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0  # (loop time) the end of the current wait's keep-alive window

    @property
    def disconnected(self) -> bool:
        """The client went away (the watch saw ``http.disconnect``)."""
        return self._watch is not None and self._watch.done()

    def _start_watch(self) -> None:
        """Start the disconnect watch, and the current wait's timer for the rest of its keep-alive window."""
        waiter = self._waiter
        if waiter is None or waiter.done() or self._watch is not None:  # (the wait ended meanwhile)
            return
        self._watch = self._loop.create_task(_disconnect(self._receive))
        self._watch.add_done_callback(self._watched)
        self._timer = self._loop.call_at(self._deadline, _wake, waiter)

    def _watched(self, _task: object) -> None:
        if self._waiter is not None:
            _wake(self._waiter)

    async def next(self) -> Item | Literal[_Quiet.QUIET] | None:
        """The next item; None when the stream ended; :data:`QUIET` when the window passed or the client went away."""
        exchange = self._exchange
        if not exchange.ready:
            if self.disconnected:
                return QUIET
            waiter = self._waiter = exchange.waiter = self._loop.create_future()
            now = self._loop.time()
            self._deadline = now + self._keepalive
            if self._watch is None and self._keepalive > WATCH_AFTER:  # no timer until the watch starts
                self._ticker.add(self, now + WATCH_AFTER, self._start_watch)
            elif self._watch is None:
                self._start_watch()
            else:
                self._timer = self._loop.call_at(self._deadline, _wake, waiter)
            try:
                await waiter
            finally:
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
                else:
                    self._ticker.discard(self)
                self._waiter = exchange.waiter = None
            if self.disconnected or not exchange.ready:
                return QUIET
        return exchange.take()

    def close(self) -> None:
        """Stop watching for the client going away."""
        if self._watch is not None:
            self._watch.cancel()


async def answer(
    receive: Receive,
    send: Send,
    exchange: Exchange,
    headers: list[tuple[bytes, bytes]],
    keepalive: float,
    ended: Callable[[Exchange], bytes],
) -> bool:
    """Answer a POSTed request from ``exchange``; True once the response went out.

    JSON (with the item's status) when the response comes first within ``keepalive`` seconds,
    else a ``text/event-stream`` (status 200) with every item, an SSE comment per quiet
    ``keepalive`` seconds, and the response last. ``ended(exchange)`` is the error body sent
    when the stream ends without a response. Returns False when the client went away first
    (the caller abandons the request). ``headers`` go on the response (``Mcp-Session-Id``).
    """
    wait = _Wait(receive, exchange, keepalive)
    try:
        first = await wait.next()
        if wait.disconnected:
            return False
        if first is None or (first is not QUIET and first.final):
            if first is None:
                first = Item(ended(exchange), final=True)
            await respond(send, first.status, first.data, headers)
            return True
        await send({"type": "http.response.start", "status": 200, "headers": [*_SSE_HEADERS, *headers]})
        item = first if first is not QUIET else await wait.next()
        while True:
            if item is QUIET:
                if wait.disconnected:
                    return False
                await send({"type": "http.response.body", "body": PING, "more_body": True})
            else:
                if item is None:
                    item = Item(ended(exchange), final=True)
                await send({"type": "http.response.body", "body": sse_event(item.data), "more_body": True})
                if item.final:
                    break
            item = await wait.next()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return True
    finally:
        wait.close()
