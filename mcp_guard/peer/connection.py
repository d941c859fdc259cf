"""One upstream peer: its connections, restarts, reading, the guard's own requests, and its end.

Both ``wrap`` (:class:`~mcp_guard.sessions.relay.Relay`, one upstream) and ``serve``
(:class:`~mcp_guard.sessions.link.Link`, one per configured server) talk to an upstream through
an :class:`UpstreamPeer`. It makes the connections through the connector seam (a callable
returning an async context manager that yields one line stream: ``peer.upstream``'s
``stdio_connector``, ``peer.http_upstream``'s ``http_connector``, or a test's), and does what
used to be written once per command:

- **the connection loop** (:meth:`UpstreamPeer.keep_connected`): connect, let the owner set the
  connection up, read until it ends, answer what waited on it, wait the backoff, connect again;
- **reading** (one task per connection): every line is parsed (``jsonrpc.loads_upstream``, so
  literals keep their value); output that is not a JSON-RPC message is logged and skipped;
  ``mcp-guard/`` ``_meta`` keys are removed; answers to the guard's own requests are taken out
  of the stream; the rest goes to the owner (:meth:`PeerEvents.peer_output`). A big line
  (``peer.offload``) is parsed, and prepared by the owner (:meth:`PeerEvents.peer_prepare`), in a
  worker thread while reading goes on: responses and requests read after it pass it, notifications
  keep their place behind it;
- **unreadable lines** (not JSON, nested too deeply, or longer than ``--max-message-bytes``):
  skipped; the request whose id can be recovered from the text fails (the guard's own) or is
  answered by the owner with the error text given (:meth:`PeerEvents.peer_unreadable`), so the
  real answer that may follow is dropped as an answer to an id no longer in flight;
- **the guard's own requests** (:meth:`UpstreamPeer.request`, ids from ``peer.requests``);
- **the forwarded requests in flight** (:attr:`UpstreamPeer.inflight`, ``peer.inflight``): the id
  map, their timeouts restarted by progress (:meth:`UpstreamPeer.expire_requests` answers and
  cancels the overdue), and the late answers of the given-up;
- **the end of a connection**: the guard's own requests fail at once and the owner answers the
  requests it forwarded (:meth:`PeerEvents.peer_down`, with ``inflight.clear()``), before any restart.

The restart policy: eager, with backoff
---------------------------------------
When a connection ends (or cannot be made, or set up), the peer starts the next one as soon as
``peer.backoff`` allows (0.5 s after a failed or short-lived start, doubling up to 30 s; at
once after a connection that lived :data:`~.backoff.STABLE_SECONDS`), whether or not a client
request is waiting. ``wrap`` used to start again only on the next client request, ``serve``
eagerly; eager is the one policy that serves both: a gateway must list a restarted upstream
with no client request to prompt it (its tools are back in the merged list, and the client is
told with ``list_changed``), and a ``wrap`` client's next request then finds the upstream
started and its handshake replayed instead of waiting for a start (seconds for ``npx`` servers).
What it costs, a server that keeps failing being started again, is bounded by the backoff.
Requests that arrive while the peer is down are the owner's to hold or answer
(:attr:`UpstreamPeer.wait`).

Times are ``anyio.current_time()``. Nothing here knows tools or clients; the owner is told
through :class:`PeerEvents` and never reached into.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any, Protocol

import anyio
import anyio.abc

from ..streams.ends import UpstreamStartError, end_of
from ..streams.framing import MessageStream
from ..streams.pipes import LineHandler, PipeLineStream
from ..wire.framing import LineTooLong
from ..wire.jsonrpc import (
    NO_ID,
    Uncarriable,
    dumps,
    id_key,
    loads_as_received,
    loads_upstream,
    recover_id,
    valid_id,
)
from ..wire.messages import error_reason
from ..wire.meta import without_guard_keys
from ..wire.pieces import free_in_pieces
from ..wire.repeated import collector_paused
from .backoff import BACKOFF_FIRST, BACKOFF_MAX, STABLE_SECONDS, Backoff
from .inflight import InFlight
from .offload import Ordered, keeps_place, upstream_job
from .requests import OwnRequests, RequestFailed
from .triage import SkipLog, Triage, unreadable_text

__all__ = ["Connector", "PeerEvents", "UpstreamPeer", "failure_reason"]

log = logging.getLogger("mcp_guard")

Connector = Callable[[], AbstractAsyncContextManager[MessageStream]]
"""Makes one upstream connection per call (the seam of ``peer.upstream``, whose ``Connector`` is this type)."""

Key = tuple[bool, Any]


class PeerEvents(Protocol):
    """What an :class:`UpstreamPeer` tells its owner, and the one thing it asks (``closing``)."""

    @property
    def closing(self) -> bool:
        """The owner is stopping: no connection is started again."""

    async def peer_setup(self, first: bool) -> None:
        """Set up a new connection (handshake, listings, what a restarted upstream is told again).

        Raises:
            RequestFailed: the upstream did not accept it (the connection is then ended and counted
                as a failed start).
        """

    async def peer_failed(self, reason: str, connected: bool) -> None:
        """Event: a connection could not be made (``connected`` False) or set up (``reason``, for the
        log); the next is started after the backoff (:attr:`UpstreamPeer.wait`)."""

    async def peer_output(self, message: Any) -> bool:
        """Event: a parsed upstream message (a dict, ``mcp-guard/`` keys removed) or batch (a list of
        them), not an answer to the guard's own requests. Returns whether to read on (False: the
        owner can pass nothing on any more, its client is gone)."""

    async def peer_unreadable(self, request_id: Any, text: str) -> bool:
        """Event: an unreadable line carried ``request_id`` (recovered from its text), not one of the guard's
        own: whether the owner answered a request it forwarded with ``text`` (-32603)."""

    async def peer_down(self, ended: bool) -> None:
        """Event: the connection ended (``ended``: the upstream closed it; else the guard is leaving it).
        The guard's own requests have failed; every forwarded request is the owner's to answer now."""

    def peer_prepare(self, message: Any) -> None:
        """In a worker thread, before a big message is triaged and given to :meth:`peer_output` (its
        ``mcp-guard/`` keys removed already): do what of its handling needs no state shared with the loop
        (classify a listing's schemas, check a result against its ``outputSchema``), so that its handling
        on the loop is short (``peer.offload``). Must not change what the loop reads."""

    def peer_line_handler(self, upstream: PipeLineStream) -> LineHandler | None:
        """The synchronous handler of lines read from a pipe upstream (the stdio hot path), or None.

        The handler raises ``anyio.BrokenResourceError`` when its client is gone: it comes out of
        the stream's ``receive()`` and ends the reading, as ``peer_output`` returning False does."""


class UpstreamPeer:
    """One upstream, connected again whenever it goes away (see the module docstring).

    Args:
        connect: makes one connection per call (entered and left in one task of the peer's).
        label: the log lines' prefix naming this upstream (``"upstream NAME: "``; ``""`` for ``wrap``).
        request_timeout: seconds the guard's own requests wait for their answer.
        backoff: ``(first, most)`` seconds before a start after failed or short-lived ones.
        stable_after: seconds a connection must live for its end not to count as a failure.
        drain_timeout: seconds the owner's answers to pending requests may take when the guard
            is leaving a connection (a client that stopped reading cannot hold the way out).
        client_request_timeout: seconds a forwarded request may wait for its answer (restarted
            by progress); None: no limit.

    Attributes:
        upstream: the current connection's line stream, or None while there is none.
        own: the guard's own requests in flight here, and the mint of their ids.
        inflight: the requests forwarded here and not answered yet (``peer.inflight``).
        backoff: the restart policy's state (``peer.backoff``).
        restarts: connections started after the first.
        connection: connections made (numbered from 1).
        ended: set once the current connection's reader has finished (and its end was handled).
        cause: how the last connection that ended by itself ended, as its transport tells it
            (``streams.ends``: ``"it exited with status 2; ..."``), or None (not told).
        start_failure: with ``first_must_connect``, why the first connection counts as a start that
            failed (it ended before the upstream answered any request with a result), else None.
        triager: what of the upstream's output is a JSON-RPC message (``peer.triage.Triage``);
            ``triage`` is its :meth:`~mcp_guard.peer.triage.Triage.triage` (the stdio hot path calls it).
    """

    def __init__(
        self,
        connect: Connector,
        *,
        label: str = "",
        request_timeout: float = 30.0,
        backoff: tuple[float, float] = (BACKOFF_FIRST, BACKOFF_MAX),
        stable_after: float = STABLE_SECONDS,
        drain_timeout: float = 2.0,
        client_request_timeout: float | None = None,
    ) -> None:
        self.connect = connect
        self.label = label
        self.request_timeout = request_timeout
        self.drain_timeout = drain_timeout
        self.backoff = Backoff(*backoff, stable_after=stable_after)
        self.own = OwnRequests()
        self.inflight: InFlight[Any] = InFlight(client_request_timeout, label=label, mint=self.own)
        self.upstream: MessageStream | None = None
        self.restarts = 0
        self.connection = 0
        self.ended = anyio.Event()
        self.skips = SkipLog(label)
        self._reading = False
        self._started, self._counted, self._set_up = 0.0, True, False
        self.cause: str | None = None
        self.start_failure: str | None = None
        self._must_start = False  # the current connection is wrap's first: ending unanswered is a start failure
        self._leaving: MessageStream | None = None  # a connection whose end was noted (_left), not yet handled
        self.ordered = Ordered()  # the current connection's big lines, handled off the loop in order (offload)
        self._lines_scope: anyio.CancelScope | None = None  # while the current connection's lines are read: their scope
        self.offloaded: Any = None  # the message a big line's job is giving to peer_output now
        # ... and then, when that line may go on as received (jsonrpc.loads_as_received): (line, parsed value)
        self.as_received: tuple[bytes | str, Any] | None = None
        self.triager = Triage(self.skips, self.own)  # (what of the output is a JSON-RPC message: peer.triage)
        self.triage = self.triager.triage

    @property
    def wait(self) -> float:
        """Seconds until the next start may be made (0: now, or one is under way)."""
        return self.backoff.wait()

    # --- the connection loop ----------------------------------------------------------------

    async def keep_connected(
        self,
        events: PeerEvents,
        *,
        first_must_connect: bool = False,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Connect, and connect again after each end (waiting the backoff) until ``events.closing``.

        ``task_status.started()`` is signalled once the first connection was set up (or failed to).

        With ``first_must_connect`` (``wrap``: an upstream that cannot start at all ends the guard),
        the first connection must be made, and must answer a request with a result before it ends:
        one that ends by itself first (a server that exits at once, closes its output, or answers
        ``initialize`` with an error and exits) is no start, and is not made again.

        Raises:
            whatever the connector raises, for the first connection with ``first_must_connect``.
            UpstreamStartError: with ``first_must_connect``, the first connection ended by itself
                before it answered a request (:attr:`start_failure` says why), after ``started()``.
        """
        first = True
        while True:
            if not first:
                self.restarts += 1
                delay = self.wait
                if delay > 0:
                    log.warning(
                        "%srestarting the upstream in %.1f s (restart %d; %d failed or short-lived start(s) in a row)",
                        self.label,
                        delay,
                        self.restarts,
                        self.backoff.failures,
                    )
                    await anyio.sleep(delay)
                else:
                    log.warning("%srestarting the upstream (restart %d)", self.label, self.restarts)
                if events.closing:
                    return
            self._must_start = first and first_must_connect
            try:
                await self._connection(events, first, first_must_connect, task_status if first else None)
                if self.start_failure is not None:
                    raise UpstreamStartError(self.start_failure)
            except Exception as exc:  # a transport's fault: counted; what waited on it was answered
                if first and first_must_connect:
                    raise
                await events.peer_failed(failure_reason(exc), True)
            first = False
            if events.closing:
                return

    async def _connection(
        self,
        events: PeerEvents,
        first: bool,
        must_connect: bool,
        task_status: anyio.abc.TaskStatus[None] | None,
    ) -> None:
        """One connection, from its start to its end; the backoff counts it (a failure unless it got
        ready and lived ``stable_after`` seconds)."""
        self._started, self._counted, self._set_up = anyio.current_time(), False, False
        self.triager.answered = False
        ready = False
        failure: tuple[str, bool] | None = None  # (reason, whether the connection was made)
        self.connection += 1
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    upstream = await stack.enter_async_context(self.connect())
                except Exception as exc:
                    if first and must_connect:
                        raise
                    failure = (failure_reason(exc), False)
                else:
                    self.upstream, self.ended = upstream, anyio.Event()
                    self._reading = True
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(self._read, upstream, events)
                        try:
                            await events.peer_setup(first)
                        except RequestFailed as exc:
                            failure = (str(exc), True)
                        else:
                            ready = self._set_up = self.upstream is upstream
                            if not ready:
                                failure = ("the upstream server went away while it was set up", True)
                        if task_status is not None:
                            task_status.started()
                            task_status = None
                        if ready:
                            await self.ended.wait()
                        tg.cancel_scope.cancel()
                if failure is not None:
                    self._count(False)  # before the owner answers: its answers say when the next start is
                    await events.peer_failed(*failure)
                if task_status is not None:
                    task_status.started()
        finally:
            self._count(ready)

    def _count(self, ready: bool) -> None:
        """Count the current connection's end in the backoff, once (as soon as it is known)."""
        if not self._counted:
            self._counted = True
            self.backoff.ended(anyio.current_time() - self._started, ready=ready)

    # --- reading ----------------------------------------------------------------------------

    async def _read(self, upstream: MessageStream, events: PeerEvents) -> None:
        """Read ``upstream`` until it ends; then fail the guard's own requests and tell the owner."""
        ended = False
        owner = events.peer_line_handler(upstream) if isinstance(upstream, PipeLineStream) else None
        handler = None if owner is None else partial(self._line_now, owner, events)
        if handler is not None:
            assert isinstance(upstream, PipeLineStream)
            upstream.set_line_handler(handler)
        try:
            await self._lines(upstream, events)
            ended = True
        finally:
            if handler is not None:
                assert isinstance(upstream, PipeLineStream)
                upstream.set_line_handler(None)
            with anyio.CancelScope(shield=True) as scope:
                if not ended:  # leaving: a client that does not read cannot hold the way out
                    scope.deadline = anyio.current_time() + self.drain_timeout
                await self._gone(upstream, events, ended)
            self.ended.set()

    async def _lines(self, upstream: MessageStream, events: PeerEvents) -> None:
        """Read until the end; big lines are jobs of :attr:`ordered`, all of them handled before this returns.

        The end is noted the moment it is read (:meth:`_left`: nothing more is forwarded to this
        connection), and what happens after it (:meth:`_gone`: the owner answers what is still in
        flight) waits for the jobs read before it: a big answer judged in the worker thread reaches
        the client before the end is handled, as it would had it been judged on the loop.
        """
        ordered = self.ordered = Ordered()
        async with anyio.create_task_group() as tg:
            tg.start_soon(ordered.run)
            self._lines_scope = tg.cancel_scope
            try:
                await self._read_lines(upstream, events, ordered, tg.cancel_scope)
                self._left(upstream)  # (no await since the end was read)
            finally:
                self._lines_scope = None
                ordered.close()

    def _line_now(self, owner: LineHandler, events: PeerEvents, line: bytes | str) -> bool:
        """The pipe's line handler (``pipes.LineHandler``): a big line (``offload.OFFLOAD_MIN`` or more, or a listing of
        ``offload.LISTING_MIN`` or more: ``offload.upstream_job``) is a job
        of :attr:`ordered`, as :meth:`_read_lines` would make it, but as the text the pipe decoded (declined,
        the pipe would encode it back to bytes and the job decode them again: a big answer then peaked at
        7x its size, against 2x before the offload); the rest goes to the owner's hot path. The order is
        the same: the pipe offers lines only while :meth:`_read_lines` waits in ``receive()``."""
        scope = self._lines_scope
        if scope is not None and upstream_job(line):
            self.ordered.submit(partial(self._big_line, line, events, scope))
            return True
        return owner(line)

    async def _read_lines(
        self, upstream: MessageStream, events: PeerEvents, ordered: Ordered, scope: anyio.CancelScope
    ) -> None:
        while True:
            try:
                line = await upstream.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            except LineTooLong as exc:
                await self.unreadable(exc.prefix, events, too_long=exc.limit)
                continue
            if upstream_job(line):
                ordered.submit(partial(self._big_line, line, events, scope))
                continue
            try:
                message = loads_upstream(line)
            except (ValueError, RecursionError):
                await self.unreadable(line, events)
                continue
            out = self.triage(message, line)
            if out is None:
                continue
            if ordered.busy and keeps_place(out):
                ordered.submit(partial(self._output, out, events, scope))
            elif not await events.peer_output(out):
                return

    async def _big_line(self, line: bytes | str, events: PeerEvents, scope: anyio.CancelScope) -> None:
        """One big line, parsed and prepared in the worker thread, then triaged and passed on (a job).

        The cyclic collector stays paused from the parse until the value is freed (a pass over its
        millions of objects, none in a cycle, would hold the loop for seconds: ``wire.repeated``),
        and the value is freed in the worker thread, a piece at a time (``wire.pieces``).
        """
        with collector_paused():
            try:
                message, cleaned, as_received = await self.ordered.in_thread(self._parse_big, line, events)
            except (ValueError, RecursionError):
                await self.unreadable(line if isinstance(line, bytes) else line.encode("utf-8", "replace"), events)
                return
            clean = self.triager.clean
            clean.update(map(id, cleaned if type(cleaned) is list else [cleaned]))  # (triage: already cleaned)
            try:
                out = self.triage(cleaned)
                if out is not None:
                    self.offloaded = out
                    self.as_received = (line, message) if as_received else None
                    try:
                        await self._output(out, events, scope)
                    finally:
                        self.offloaded, self.as_received = None, None
            finally:
                clean.clear()
            held = [message, cleaned, out]
            del message, cleaned, out
            await self.ordered.in_thread(free_in_pieces, held)

    @staticmethod
    def _parse_big(line: bytes | str, events: PeerEvents) -> tuple[Any, Any, bool]:
        """(In the worker thread.) The parsed line; it with the ``mcp-guard/`` ``_meta`` keys removed from
        each message (``without_guard_keys``: a walk over every object of a 26 MB result took 0.5 s, on the
        loop before), prepared by the owner when it is one message; whether the line may go on as
        received (``jsonrpc.loads_as_received``)."""
        message, as_received = loads_as_received(line, upstream=True)
        if type(message) is dict:
            cleaned: Any = without_guard_keys(message) if message.get("jsonrpc") == "2.0" else message
            events.peer_prepare(cleaned)
        elif type(message) is list:
            cleaned = [without_guard_keys(m) if type(m) is dict and m.get("jsonrpc") == "2.0" else m for m in message]
        else:
            cleaned = message
        return message, cleaned, as_received

    @staticmethod
    async def _output(out: Any, events: PeerEvents, scope: anyio.CancelScope) -> None:
        """Pass ``out`` on (a job); the owner's client gone ends the reading."""
        if not await events.peer_output(out):
            scope.cancel()

    async def unreadable(self, line: bytes, events: PeerEvents, *, too_long: int | None = None) -> None:
        """A line the guard cannot parse (with ``too_long``: the start of a line over that cap, whose rest
        is dropped as it comes): skipped; the request it answers (its id recovered from the text)
        fails (the guard's own) or is answered by the owner; the connection goes on."""
        request_id = recover_id(line)
        key = id_key(request_id) if request_id is not NO_ID and valid_id(request_id) else None
        what, text = unreadable_text(too_long, line)
        if self.own.fail(key, f"its answer {what}"):
            log.warning("%sthe upstream's answer %s; the guard's request failed", self.label, what)
            return
        if key is not None and await events.peer_unreadable(request_id, text):
            log.warning("%sthe upstream's answer %s; answering an error", self.label, what)
            return
        self.triager.skip_unreadable(len(line), too_long)

    def _left(self, upstream: MessageStream) -> None:
        """The connection ``upstream`` ended (its end read, or the guard leaving it): noted at once, with no
        await, so no message is forwarded to it from now on (a request then waits for :meth:`_gone`,
        or finds no upstream); :meth:`_gone` does the rest once the jobs read before the end are done."""
        if self.upstream is upstream:
            self.upstream = None
            self._reading = False
            self._leaving = upstream
            self._count(self._set_up)  # before any await: a request may ask how long the next start is away

    async def _gone(self, upstream: MessageStream, events: PeerEvents, ended: bool) -> None:
        """The connection ended: the guard's own requests fail, and the owner answers the rest; nothing hangs."""
        self._left(upstream)
        if self._leaving is not upstream:
            return
        self._leaving = None
        self.cause = await end_of(upstream) if ended else None  # (its exit status: a moment after its output)
        if ended and self._must_start and not self.triager.answered and not events.closing:
            how = self.cause or "it closed its connection"
            self.start_failure = f"the upstream ended before it answered any request: {how}"
        self.own.fail_all("the upstream server went away" + (f" ({self.cause})" if self.cause else ""))
        await events.peer_down(ended)

    # --- writing ----------------------------------------------------------------------------

    async def send(self, message: Any) -> None:
        """Send one message (or batch) upstream, as the guard parsed or built it.

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

    async def send_own(self, message: dict[str, Any]) -> None:
        """:meth:`send` for a message of the guard's own: a number JSON cannot carry is a :class:`RequestFailed`."""
        try:
            await self.send(message)
        except Uncarriable:
            raise RequestFailed("the request holds a number JSON cannot carry exactly") from None

    async def expire_requests(self, on_expired: Callable[[Any, Any], Awaitable[None]]) -> None:
        """Forever (run in the owner's task group, with a ``client_request_timeout``): each forwarded
        request that outlived it is given up, cancelled upstream (``notifications/cancelled``), and
        ``on_expired(upstream_id, record)`` answers it (with ``inflight.timed_out_text``)."""
        deadlines = self.inflight.deadlines
        assert deadlines is not None
        async for key in deadlines.expired():
            record = self.inflight.take(key)
            if record is None:
                continue
            self.inflight.give_up(key)
            notice = {"requestId": key[1], "reason": f"mcp-guard: no answer within {deadlines.timeout:g} s"}
            with contextlib.suppress(RequestFailed, Uncarriable):
                await self.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": notice})
            await on_expired(key[1], record)

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        """A request of the guard's own; its ``result``.

        Raises:
            RequestFailed: an error answer, no answer within ``request_timeout``, or the upstream
                gone (or not running).
        """
        request_id = self.own.new_id()
        pending = self.own.open(request_id)
        try:
            await self.send_own({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            if self._reading:
                with anyio.move_on_after(self.request_timeout):
                    await pending.event.wait()
        finally:
            self.own.close(request_id)
        response = pending.response
        if response is None:
            if pending.failure is not None:
                raise RequestFailed(pending.failure)
            if self.upstream is None or not self._reading:
                raise RequestFailed(f"the upstream went away before answering {method}")
            raise RequestFailed(f"no answer to {method} within {self.request_timeout:g} s")
        if "error" in response:
            raise RequestFailed(error_reason(method, response["error"]))
        result = response.get("result")
        if type(result) is not dict:
            raise RequestFailed(f"the upstream's {method} result is not an object")
        return result


def failure_reason(exc: BaseException) -> str:
    """The first line of what ``exc`` (or, in an exception group, its first exception) says, for the log."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text[:300] or type(exc).__name__
