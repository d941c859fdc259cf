"""One session (``wrap``'s with its upstream process, or ``serve``'s) behind the HTTP front, and the routing of its
output to HTTP requests."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc

from ...auth.principal import Principal
from ...calls.observer import Origin
from ...calls.tool_table import ToolTable
from ...peer.upstream import UpstreamStartError, stdio_connector
from ...sessions.relay import wrap_session
from ...sessions.session import Session
from ...streams.framing import LineStream
from ...wire.jsonrpc import INTERNAL_ERROR, dumps, loads_upstream
from .config import STOP_GRACE_SECONDS
from .direct import DirectClientSide
from .messages import Exchange, Item, Key, error_bytes, map_key

if TYPE_CHECKING:
    from .app import HttpFront

__all__ = ["Channel", "SessionFactory"]

log = logging.getLogger("mcp_guard")


SessionFactory = Callable[[LineStream], Session]
"""Builds one session (``sessions.session.Session``: ``serve``'s) from its in-memory client line stream."""


def _make_session(front: HttpFront, client: DirectClientSide) -> Session:
    """The one place the front builds the session of one client: the front's session factory (``serve``), or
    ``wrap``'s, relayed to an upstream of its own with its own tool table.

    The upstream process is started when the relay runs, and started again by the relay
    when it goes away (see ``sessions.relay``, "Upstream faults").
    """
    from ..stdio import DEFAULT_GUARD_REQUEST_TIMEOUT

    if front.session_factory is not None:
        return front.session_factory(cast(LineStream, client))

    table = ToolTable(front.profile, hide_unsupported=front.hide_unsupported, outputs=front.outputs, host=front.host)
    timeout = front.request_timeout
    # The relay reads and writes through the LineStream interface only; the client side is in memory.
    session = wrap_session(
        cast(LineStream, client),
        stdio_connector(front.command, max_line=front.config.max_message_bytes),
        table,
        request_timeout=timeout if timeout is not None else DEFAULT_GUARD_REQUEST_TIMEOUT,
        client_request_timeout=timeout,
        exits=False,  # an upstream that cannot start ends the session, not the front
    )
    session.pipeline.observer = front.metrics
    return session


# --- channels: one relay and the HTTP requests that talk to it ---------------------------------------


class Channel:
    """One relay (and upstream process) and the routing of its output to HTTP requests."""

    label = "channel"

    def __init__(self, front: HttpFront) -> None:
        self.front = front
        self.client = DirectClientSide(self._deliver, self._deliver_now, self.principal_of, self.origin_of)
        self.pending: dict[Key, Exchange] = {}
        self.closed = False
        self.done = anyio.Event()
        self.scope = anyio.CancelScope()
        self.active = 0
        self.idle_scope = anyio.CancelScope(deadline=math.inf)
        self._idle_timeout = front.config.session_idle_timeout
        self._end_reason: str | None = None
        self._idle_since = 0.0  # time.monotonic() when the last request ended (while none is active)
        self.runner: Session | None = None

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the relay until the client side ends or the upstream goes away.

        Raises:
            UpstreamStartError: before ``task_status.started()``, when the upstream cannot start.
        """
        try:
            with self.scope:
                session = self.runner = _make_session(self.front, self.client)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._watch)
                    tg.start_soon(self.client.run)
                    try:
                        await session.run(task_status=task_status)
                    except UpstreamStartError as exc:
                        if session.routing.start_failure is not exc:
                            raise  # before started(): the front answers the request that opened it
                        log.error("%s: %s", self.label, exc)  # after: its requests were answered with it
                    tg.cancel_scope.cancel()
        finally:
            self._finish()

    def unready(self) -> list[str]:
        """The names of this channel's upstreams not connected and initialized (``upstream`` for a relay's)."""
        if self.closed:
            return []
        if self.runner is None:
            return ["upstream"]
        return self.runner.unready()

    # --- activity and idle timeout ---------------------------------------------------------------

    # The idle timer is lazy: a request's enter and leave touch no timer (moving a cancel scope's
    # deadline reschedules a loop timer, twice per request). ``leave`` notes when the channel went
    # idle, and arms the deadline only when none is set; when it passes, ``_watch`` ends the
    # channel if it has been idle the whole timeout since, else sets it again for the rest.

    def enter(self) -> None:
        """A request (or a GET stream) is being served: the channel is not idle."""
        self.active += 1

    def leave(self) -> None:
        """A request (or a GET stream) is done: the idle time counts from the last one to end.

        A channel asked to end once idle (:meth:`end_when_idle`) ends now.
        """
        self.active -= 1
        if self.active == 0:
            if self._end_reason is not None:
                self.idle_scope.deadline = anyio.current_time()
            elif self._idle_timeout is not None:
                self._idle_since = time.monotonic()
                if self.idle_scope.deadline == math.inf:
                    self.idle_scope.deadline = anyio.current_time() + self._idle_timeout

    def end_when_idle(self, reason: str) -> None:
        """End the channel (and stop its upstream) as soon as nothing is in flight; ``reason`` is logged."""
        if self._end_reason is None:
            self._end_reason = reason
        if self.active == 0:
            self.idle_scope.deadline = anyio.current_time()

    async def _watch(self) -> None:
        """Side task of a running channel: end it after ``session_idle_timeout`` idle seconds, or when asked."""
        timeout = self._idle_timeout
        if self.active == 0:
            self._idle_since = time.monotonic()
        while True:
            if self.active == 0 and timeout is not None and self.idle_scope.deadline == math.inf:
                rest = self._idle_since + timeout - time.monotonic()
                self.idle_scope.deadline = anyio.current_time() + max(rest, 0.0)
            with self.idle_scope:
                await anyio.sleep_forever()
            if self.active == 0:
                if self._end_reason is not None:
                    log.info("%s: %s; ending it", self.label, self._end_reason)
                    break
                if timeout is not None and time.monotonic() - self._idle_since >= timeout:
                    log.info("%s idle for %g s; ending it", self.label, timeout)
                    break
            self.idle_scope = anyio.CancelScope(deadline=math.inf)  # busy, or idle for less than the timeout
        self._end()

    def _end(self) -> None:
        """End the channel (idle, or asked to): its upstream stops."""
        self.stop()

    def stop(self, *, now: bool = False) -> None:
        """End the channel: the relay gets EOF and drains; after :data:`STOP_GRACE_SECONDS` it is cancelled.

        ``now`` (the guard is stopping on a signal: ``Registry.shutdown``): cancelled at once, as the stdio front's
        relay is, so its upstream's input is closed and the upstream gets SIGTERM at once (docs/wrap.md, "stop
        signals"; red team 37 F9: a busy upstream ran on for the 10 s of a client close's drain, longer than
        ``docker stop`` waits, and its calls were answered as if the client had closed)."""
        if not self.closed:
            self.closed = True
            log.debug("%s ending", self.label)
        self.client.end()
        if now:
            self.scope.cancel()
        else:
            self.scope.deadline = min(self.scope.deadline, anyio.current_time() + STOP_GRACE_SECONDS)

    def _finish(self) -> None:
        """The relay is gone: every open request stream ends (its handler answers an error)."""
        self.closed = True
        self.client.close()
        for exchange in self.pending.values():
            exchange.sender.close()
        self.pending.clear()
        self.done.set()

    def principal_of(self, request_id: Any) -> Principal | None:
        """Who sent the request in flight under ``request_id`` (the id the relay sees), as its token said (OAuth).

        The front notes it on the request's :class:`Exchange` before the relay gets the request
        (``auth.principal.Callers``: the session asks when it builds a ``tools/call``'s ``Call``).
        """
        key = map_key(request_id)
        exchange = self.pending.get(key) if key is not None else None
        return exchange.principal if exchange is not None else None

    def origin_of(self, request_id: Any) -> Origin | None:
        """Where the request in flight under ``request_id`` (the id the relay sees) came from: its session and its
        HTTP trace context headers, as the front noted them on its :class:`Exchange` while tracing
        (``calls.observer.Origins``); None for a request no longer in flight."""
        key = map_key(request_id)
        exchange = self.pending.get(key) if key is not None else None
        return exchange.origin if exchange is not None else None

    async def submit(self, data: bytes) -> bool:
        """Give the relay one client message; False when the channel has ended."""
        if self.closed:
            return False
        return await self.client.put(data)

    # --- routing relay output -------------------------------------------------------------------

    async def _deliver(self, line: bytes) -> None:
        try:
            message = loads_upstream(line)
        except (ValueError, RecursionError):  # the relay writes JSON only; defensive
            log.warning("dropped relay output that is not JSON (%d bytes)", len(line))
            return
        if type(message) is list:
            for element in message:
                if type(element) is dict:
                    await self._route(element, None)
        elif type(message) is dict:
            await self._route(message, line)

    def _deliver_now(self, line: bytes) -> bool:
        """Route one message of relay output if that needs no waiting: a response (its stream has room).

        False, having done nothing, for anything else (it goes to :meth:`_deliver`, in order).
        """
        try:
            message = loads_upstream(line)
        except (ValueError, RecursionError):
            return False
        if type(message) is not dict or "method" in message:
            return False
        self._respond(message, line)
        return True

    async def _route(self, message: dict[str, Any], raw: bytes | None) -> None:
        if "method" in message:
            await self._route_other(message, raw)
            return
        self._respond(message, raw)

    def _respond(self, message: dict[str, Any], raw: bytes | None) -> None:
        """Give a response to the stream of the request with its id (the final item always finds room)."""
        if "id" not in message:
            return
        key = map_key(message["id"])
        exchange = self.pending.pop(key, None) if key is not None else None
        if exchange is None:
            self._unmatched(key)
            return
        if exchange.progress is not None:
            self._forget_progress(exchange)
        data = self._answer_bytes(message, raw, exchange)
        if len(data) > self.front.config.max_message_bytes:
            log.warning(
                "an answer of %d bytes exceeds the message limit of %d bytes; answering an error instead",
                len(data),
                self.front.config.max_message_bytes,
            )
            text = (
                f"mcp-guard: the upstream's answer ({len(data)} bytes) exceeds the HTTP front's message limit of "
                f"{self.front.config.max_message_bytes} bytes (--max-message-bytes)"
            )
            data = error_bytes(exchange.client_id, INTERNAL_ERROR, text)
            message = {"error": {"code": INTERNAL_ERROR}}
        status = self._status(message)
        if exchange.initialize:
            self._note_initialize(message)
        if exchange.discover:
            self._note_discover(message)
        if not exchange.offer(Item(data, final=True, status=status)):
            log.debug("the client of a request went away before its answer arrived; answer dropped")

    def _answer_bytes(self, message: dict[str, Any], raw: bytes | None, exchange: Exchange) -> bytes:
        return raw if raw is not None else dumps(message)

    def _status(self, message: dict[str, Any]) -> int:
        return 200

    def _note_initialize(self, message: dict[str, Any]) -> None:
        """The response to ``initialize`` went by (handshake sessions note the negotiated version)."""

    def _note_discover(self, message: dict[str, Any]) -> None:
        """The response to ``server/discover`` went by (the 2026-07-28 channel judges the upstream's era)."""

    def _forget_progress(self, exchange: Exchange) -> None:
        """The request of ``exchange`` is answered: its progress token is no longer routed."""

    def _unmatched(self, key: Key | None) -> None:
        log.warning("dropped an upstream response whose id matches no request in flight")

    async def _route_other(self, message: dict[str, Any], raw: bytes | None) -> None:
        raise NotImplementedError

    def _too_big(self, data: bytes) -> bool:
        if len(data) <= self.front.config.max_message_bytes:
            return False
        log.warning(
            "dropped an upstream message of %d bytes: it exceeds the message limit of %d bytes",
            len(data),
            self.front.config.max_message_bytes,
        )
        return True
