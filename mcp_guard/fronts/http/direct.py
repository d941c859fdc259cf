"""The relay's client side behind the HTTP front, in memory, on the relay's synchronous hot path.

A relay reads client messages and writes its output through a line stream. Behind the front
that stream is in memory (:class:`DirectClientSide`): the HTTP requests put client messages in,
and the relay's output goes to the front's router (``Channel``). It is a
:class:`~mcp_guard.streams.pipes.DirectLink`, so the relay drives it the way ``wrap`` on stdio
drives its pipes (``streams.pipes``, "The stdio hot path"):

- a client message put while the relay waits in ``receive()``, with nothing queued before it,
  is offered to the relay's line handler at once, in the POST handler's own step: the relay
  parses, judges and forwards it (or answers it) without a pass of the event loop or a task
  switch; one the handler declines (it needs the guard's own listing, a restart, ...) is queued
  for ``receive()``, in order, as is every message while earlier ones are queued;
- relay output written with ``send_nowait`` (the relay's hot path, in the upstream's reader
  callback) is routed at once when the router can do so without waiting (a response: its
  request's stream always has room for it), else queued, in order, for :meth:`run`, which
  routes it with the router's async path; ``idle`` is False while output is queued, so the
  relay's handlers decline every line meanwhile (backpressure, as on stdio).

The memory stream pair and the task switch per message this replaces cost a good share of a
call's CPU over HTTP (``benchmarks/http_throughput.py``). The front runs on asyncio (uvicorn),
so the waits are asyncio futures, as in ``streams.pipes``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ...auth.principal import Principal
from ...calls.observer import Origin
from ...streams.pipes import DirectLink, LineHandler
from ...wire.jsonrpc import Spliced
from .config import INBOUND_BUFFER

__all__ = ["DirectClientSide"]


def _wake(waiters: list[asyncio.Future[None]]) -> None:
    for waiter in waiters:
        if not waiter.done():
            waiter.set_result(None)
    waiters.clear()


async def _wait(waiters: list[asyncio.Future[None]]) -> None:
    waiter = asyncio.get_running_loop().create_future()
    waiters.append(waiter)
    try:
        await waiter
    finally:
        with contextlib.suppress(ValueError):
            waiters.remove(waiter)


class DirectClientSide(DirectLink):
    """A relay's downstream side in memory, shaped like :class:`~mcp_guard.streams.framing.LineStream`.

    Args:
        deliver: routes one message of relay output, waiting as the router must (its async path).
        deliver_now: routes one message of relay output if that needs no waiting (True), else
            does nothing (False: it goes to ``deliver``, in order).
        principal_of: who sent a request in flight, by the id the session sees (the front's
            ``Channel.principal_of``); makes this side an ``auth.principal.Callers``.
        origin_of: where a request in flight came from (its session, its HTTP trace context headers), by
            the id the session sees (``Channel.origin_of``); makes this side a ``calls.observer.Origins``.

    ``receive()`` yields the messages :meth:`put` gave (each a whole JSON text, no framing, so
    any size passes unchanged) that the line handler did not take; ``send(line)`` and
    ``send_nowait(line)`` hand relay output to the router. :meth:`run` must run (in the
    channel's task group) for queued output to be routed.
    """

    def __init__(
        self,
        deliver: Callable[[bytes], Awaitable[None]],
        deliver_now: Callable[[bytes], bool],
        principal_of: Callable[[Any], Principal | None] | None = None,
        origin_of: Callable[[Any], Origin | None] | None = None,
    ) -> None:
        self._principal_of = principal_of
        self._origin_of = origin_of
        self._deliver = deliver
        self._deliver_now = deliver_now
        self._handler: LineHandler | None = None
        self._inbound: deque[bytes] = deque()
        self._failure: BaseException | None = None  # raised by the handler; raised next by receive()
        self._receiving: list[asyncio.Future[None]] = []  # the relay, waiting in receive()
        self._room: list[asyncio.Future[None]] = []  # putters waiting for room in the inbound queue
        self._ended = False  # no more client messages: receive() ends once the queue is empty
        self._closed = False  # the relay is gone
        self._outbound: deque[bytes] = deque()
        self._output: list[asyncio.Future[None]] = []  # run(), waiting for output
        self._drained: list[asyncio.Future[None]] = []  # senders waiting until the queued output is routed

    # --- client -> relay ------------------------------------------------------------------------

    def principal_of(self, request_id: Any) -> Principal | None:
        """Who sent the request with this id, as the front's OAuth check said (``auth.principal.Callers``)."""
        return self._principal_of(request_id) if self._principal_of is not None else None

    def origin_of(self, request_id: Any) -> Origin | None:
        """Where the request with this id came from, as the front noted it (``calls.observer.Origins``)."""
        return self._origin_of(request_id) if self._origin_of is not None else None

    def set_line_handler(self, handler: LineHandler | None) -> None:
        """Offer client messages to ``handler`` as they are put, while the relay waits (None: stop offering)."""
        self._handler = handler

    async def receive(self) -> bytes:
        """The next client message the line handler did not take; ``anyio.EndOfStream`` once the session ended."""
        while not self._inbound:
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure
            if self._ended or self._closed:
                raise anyio.EndOfStream
            await _wait(self._receiving)
        line = self._inbound.popleft()
        _wake(self._room)
        return line

    async def put(self, line: bytes) -> bool:
        """Give the relay one client message; False when the relay no longer reads.

        Taken by the line handler at once when the relay waits with nothing queued; queued
        otherwise (waiting while :data:`~.config.INBOUND_BUFFER` messages are).
        """
        while True:
            if self._ended or self._closed:
                return False
            if not self._inbound and self._receiving and self._handler is not None and self._failure is None:
                try:
                    if self._handler(line):
                        return True
                except Exception as exc:  # raised to the relay, as a pipe stream's handler failure is
                    self._failure = exc
                    _wake(self._receiving)
                    return True
            if len(self._inbound) < INBOUND_BUFFER:
                self._inbound.append(line)
                _wake(self._receiving)
                return True
            await _wait(self._room)

    def end(self) -> None:
        """No more client messages: the relay sees EOF once it has read those queued (the MCP way to end a session)."""
        self._ended = True
        _wake(self._receiving)
        _wake(self._room)

    def close(self) -> None:
        """The relay is gone: putters fail at once, queued messages and output are dropped."""
        self._ended = self._closed = True
        self._inbound.clear()
        self._outbound.clear()
        _wake(self._receiving)
        _wake(self._room)
        _wake(self._output)
        _wake(self._drained)

    # --- relay -> router ------------------------------------------------------------------------

    @property
    def idle(self) -> bool:
        """No relay output is queued: a line sent now is routed at once when it can be."""
        return not self._outbound

    def send_nowait(self, line: bytes | str | Spliced) -> None:
        """Route one message of relay output now if that needs no waiting, else queue it for :meth:`run`.

        A ``str`` (a big upstream line passed on as received, ``pipes.LineHandler``) is encoded
        first: the router carries bytes.

        Raises:
            anyio.ClosedResourceError: the channel is gone.
        """
        if self._closed:
            raise anyio.ClosedResourceError
        if isinstance(line, Spliced):
            line = str(line)
        if isinstance(line, str):
            line = line.encode("utf-8")
        if not self._outbound and self._deliver_now(line):
            return
        self._outbound.append(line)
        _wake(self._output)

    async def send(self, line: bytes | str | Spliced) -> None:
        """Route one message of relay output (a ``str`` or ``Spliced``: encoded, as :meth:`send_nowait`
        says), after any queued before it; return once it is routed."""
        self.send_nowait(line)
        while self._outbound and not self._closed:
            await _wait(self._drained)

    async def run(self) -> None:
        """Route queued relay output in order, with the router's async path; runs until cancelled."""
        while True:
            while not self._outbound:
                await _wait(self._output)
            await self._deliver(self._outbound[0])
            if self._outbound:  # (emptied by close() meanwhile)
                self._outbound.popleft()
            if not self._outbound:
                _wake(self._drained)

    async def close_send(self) -> None:
        """Nothing to close: output goes to the router."""

    async def aclose(self) -> None:
        """The relay is done with this side."""
        self.close()
