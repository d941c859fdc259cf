"""The relay: moves JSON-RPC messages between the client (downstream) and the upstream server.

Every line is parsed, and every message is passed on as the JSON value the guard parsed,
re-serialized (compact, ASCII-only): the peer reads exactly what the guard read. A line
that two parsers would read differently (a lone CR, which universal-newline readers such
as the SDK's stdio server take as a line break; duplicate keys, where parsers keep
different ones; an escaped method name) therefore cannot carry a ``tools/call`` past the
guard. Fields the guard does not know, and both protocol eras, survive unchanged in value.
On the stdio hot path, a big line passed on unchanged goes as received where no reader can
misread it (``wire.jsonrpc.loads_as_received``): as exact, without a re-serialization and its copy.

Only what the guard must see is touched:

- client → upstream (``client_routes``): a ``tools/call`` request is judged first and forwarded only when
  valid (a ``tools/call`` without an id is dropped: a notification cannot be judged and
  answered); a ``tools/list`` request is noted so its response can be annotated; a
  ``notifications/cancelled`` for a call the guard still holds drops that call (and frees its id).
  A call held for the guard's own listing keeps its place: the client's later messages wait behind
  it, in order (:meth:`Relay.client_message`), but for ``ping``, notifications and the client's
  answers to the upstream's requests, which go on meanwhile (red team 37: held calls reached the
  server after calls the client sent later).
  ``initialize``, ``logging/setLevel``, ``resources/subscribe`` and ``resources/unsubscribe``
  are noted (to be replayed to a restarted upstream). A session is initialized once (MCP): a second
  ``initialize`` is answered -32600 (:data:`~mcp_guard.wire.messages.ALREADY_INITIALIZED`) and not forwarded,
  unless the upstream answered the first with an error (red team 37 F8).
- upstream → client: responses to the guard's own requests are taken out of the stream;
  ``tools/list`` results are annotated; ``notifications/tools/list_changed`` empties the
  schema cache and is forwarded. Output that is not a JSON-RPC message (not JSON, or JSON
  without ``"jsonrpc"``) is logged and skipped: stdout carries protocol messages only.

The guard issues requests of its own (a ``tools/list`` when a call names a tool it has
not seen listed; the replayed handshake after a restart) with string ids carrying a random
nonce, kept apart from the client's ids.

The 2026-07-28 era
-----------------
Each request carries its envelope (protocol version, client capabilities) and a server may
list differently per envelope: each envelope gets its own tool table. In this era
``list_changed`` reaches only ``subscriptions/listen`` streams, so a table is fresh only
while one of the guard's own listen streams (opened after the envelope's first listing,
where the upstream offers the method and acknowledges ``toolsListChanged``) is open, or
until the listing's ``ttlMs`` has passed (absent: 0, stale at once). A call that finds its
table stale is held while the guard lists again, with a listing requested after the call
arrived: a call is never judged against a schema the upstream has replaced. The listen
stream's frames are the guard's own and never reach the client. A retried ``tools/call``
(``inputResponses``/``requestState`` after an ``input_required`` result) is judged like any
other.

The upstream seam
-----------------
The relay takes an upstream *connector* (``upstream.Connector``: a callable returning an
async context manager that yields one line stream, ``upstream.LineLink``), not a stream.
Each connection is entered and left in one task of the peer's (``peer.connection``, the
upstream half of the relay is ``upstream_side``); when the upstream goes away the peer calls
the connector again. ``upstream.stdio_connector`` spawns a process;
``http_upstream.http_connector`` opens a streamable HTTP session, and gets the same fault
handling (a session the server ended is opened again, with the handshake replayed). The client side
is the session's (``session.Session``: one line stream given at construction,
:class:`~mcp_guard.streams.framing.LineStream` or any object with ``receive()`` and ``send()``); one
:class:`Relay` is the routing of one session (``wrap_session``).

The modules of the relay
------------------------
:class:`Relay` owns the session's lifecycle (its upstream's first start, the drain) and the order of the
client's messages (a call held for the guard's own listing, and what waits behind it);
``client_routes.ClientRoutes`` is what each client message becomes (refused, judged, noted, forwarded);
``hot_path.ClientHotPath`` takes the client's small lines in the pipe's reader callback when nothing needs
waiting (the stdio hot path); ``upstream_side.UpstreamSide``, the relay's base, is its upstream half: the
upstream's messages, the requests in flight there and the sending, with ``replay.Replay`` (what waits for a start,
and what a restarted upstream is told again).

Upstream faults
---------------
- When the upstream goes away (exits, crashes, closes its output), every request it was
  sent and did not answer, and every call the guard holds, is answered at once with
  JSON-RPC error -32603 saying so (no argument is echoed). Requests the upstream had sent
  the client are cancelled towards the client (``notifications/cancelled``), and the
  client's late answers to them are dropped. Nothing is ever re-sent: a ``tools/call``
  may have had effects.
- The relay keeps running, and the upstream is started again as soon as the backoff allows,
  with or without a client request waiting (``peer.connection``: one policy for ``wrap`` and
  ``serve``, and why). A connection that failed, or that ended within :data:`STABLE_SECONDS`
  of its start, makes the next start wait (0.5 s, doubling, at most 30 s); every restart is
  logged with its number. Client messages that arrive while the next start is under way or
  at most :data:`HOLD_MAX` seconds away wait for it, in order; a request that would wait
  longer is answered at once with an error naming the wait (notifications then are dropped);
  so is every call held for a listing that failed, with the listing's reason. In the
  handshake era the new upstream is initialized with the client's own ``initialize`` params
  (the answer is the guard's), gets ``notifications/initialized``, the client's last
  ``logging/setLevel`` and its resource subscriptions; the tool tables are emptied and the
  client gets ``notifications/tools/list_changed`` to re-list. In the 2026-07-28 era (no
  ``initialize`` seen) the upstream is just started again. When the start fails, the waiting
  requests are answered with an error, and the peer tries again after the backoff.
- ``client_request_timeout`` (CLI ``--request-timeout``): a forwarded request not answered
  within that many seconds (counted again from each progress notification for it) is
  answered with an error, cancelled upstream (``notifications/cancelled``), and the
  upstream's late answer is dropped. Default: none, since tools may run for minutes and MCP
  clients time out and cancel on their own. Requests that stay open by design
  (:data:`UNTIMED`: ``subscriptions/listen``, ``tasks/result``) have no timeout.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from ..calls.pipeline import WRAP_STEPS, Pipeline
from ..calls.tool_table import ToolTable
from ..peer.backoff import BACKOFF_FIRST, BACKOFF_MAX, STABLE_SECONDS
from ..peer.connection import failure_reason
from ..peer.upstream import EXIT_WAIT_SECONDS, PENDING_DRAIN_SECONDS, Connector, LineLink, UpstreamStartError
from ..streams.pipes import LineHandler
from ..streams.refusal import START_FAILURE_GRACE, answer_every_request
from ..wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    error_response,
    id_key,
    invalid_request_text,
    valid_id,
)
from ..wire.messages import BATCH_VERSION, refused_batch
from .client_requests import Ticket
from .client_routes import ClientRoutes
from .held_calls import HeldMessages, unlisted_after_client_text
from .hot_path import ClientHotPath
from .session import Session
from .upstream_side import UpstreamSide, never_started_text

if TYPE_CHECKING:
    from ..core import Compiled
    from ..peer.inflight import InFlight

__all__ = ["Relay", "wrap_session"]

log = logging.getLogger("mcp_guard")


def wrap_session(
    client: LineLink,
    connect: Connector,
    table: ToolTable,
    **options: Any,
) -> Session:
    """``wrap``'s session: ``client`` relayed to the upstream ``connect`` makes (:class:`Relay`, ``options``
    as it takes them), every call judged by ``table`` with the steps ``wrap``'s options enable (``WRAP_STEPS``)."""
    session = Session(client, Pipeline(enabled=WRAP_STEPS, client=client))
    Relay(session, connect, table, **options)
    return session


class Relay(UpstreamSide):
    """``wrap``'s routing of a :class:`~.session.Session`: one upstream, reconnected when it goes away.

    Args:
        session: the client's session; the relay attaches itself to it as its routing.
        connect: makes one upstream connection per call (see ``upstream.Connector``); the
            first is made by :meth:`start`, later ones by the peer after the upstream went away.
        table: the tool table (profile, hiding, cache).
        request_timeout: seconds the guard waits for the upstream to answer one of its own
            requests (listing, the replayed handshake).
        client_request_timeout: seconds a forwarded client request may wait for its answer
            (restarted by each progress notification for it); None: no limit.
        drain_timeout: seconds held calls may take to be decided after the client hung up; the
            upstream then gets at most ``upstream.EXIT_WAIT_SECONDS`` to exit, and is stopped.
        backoff: ``(first, most)`` seconds to wait before a restart after failures.
        stable_after: seconds after which a connection that ends is not a failure.
        exits: an upstream that cannot start at all ends the guard ("mcp-guard exits": ``wrap`` on stdio), not
            only this session (False: ``wrap --http``, one session per client).

    Attributes:
        upstream: the current upstream connection, or None while there is none.
        restarts: how many times a new connection was started after the first.
        start_failure: the error ``Session.run`` raises after ``started()`` (the first connection ended
            before the upstream answered a request), or None.
        held: a call held for the guard's own listing, and the client's messages behind it (``held_calls``).
        routes: what each client message becomes (:class:`~.client_routes.ClientRoutes`).
        hot: the stdio hot path for the client's small lines (:meth:`.ClientHotPath.line`).
    """

    def __init__(
        self,
        session: Session,
        connect: Connector,
        table: ToolTable,
        *,
        request_timeout: float = 30.0,
        client_request_timeout: float | None = None,
        drain_timeout: float = 2.0,
        backoff: tuple[float, float] = (BACKOFF_FIRST, BACKOFF_MAX),
        stable_after: float = STABLE_SECONDS,
        exits: bool = True,
    ) -> None:
        super().__init__(
            session,
            connect,
            table,
            request_timeout=request_timeout,
            client_request_timeout=client_request_timeout,
            drain_timeout=drain_timeout,
            backoff=backoff,
            stable_after=stable_after,
            exits=exits,
        )
        self.pipeline = session.pipeline
        self.start_failure: UpstreamStartError | None = None  # the first connection ended unanswered
        self.held = HeldMessages()  # a call held for the guard's own listing, and the client's messages behind it
        self.routes = ClientRoutes(self)
        self.hot: LineHandler | None = ClientHotPath(self).line
        session.writer.gone = self.client_gone  # (a client that stopped reading ends the relay)
        session.attach(self)

    @property
    def upstream(self) -> LineLink | None:
        """The current upstream connection, or None while there is none."""
        return self.peer.upstream

    @property
    def closing(self) -> bool:
        """The guard is stopping the upstream (the client has gone and what it asked is decided, or it stopped
        reading): the upstream is not started again, and its end is not a start failure
        (``peer.connection.PeerEvents``). While the requests the client sent before it closed are still
        waiting for a first start, an upstream that ends by itself is one that could not start (red team
        33: it was blamed on the client, and ``wrap`` exited 0)."""
        return self._stopping

    def unready(self) -> list[str]:
        """``["upstream"]`` until the upstream is connected (and, handshake era, initialized), else ``[]``."""
        return [] if self.ready and self.peer.upstream is not None else ["upstream"]

    def inflight_of(self, owner: Any) -> InFlight[Any]:
        """The requests in flight at the one upstream (``owner`` is :data:`~.upstream_side.UPSTREAM`)."""
        return self.peer.inflight

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Make the first upstream connection (``Session.run``); the peer keeps connecting it in ``tg``.

        The upstream going away does not end the session: the peer connects again. After the client hung up,
        calls the guard still holds are decided, the upstream's input is closed and it answers what it holds
        (its answers still reach the client while it can read), see :meth:`drain`.

        Raises:
            UpstreamStartError (or whatever the connector raises): the first connection could not be made.
        """
        self.listings.spawn = tg.start_soon
        await tg.start(self._keep_connected)
        if self.client_request_timeout is not None:
            tg.start_soon(self.peer.expire_requests, self._timed_out)

    async def _keep_connected(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """The peer's connection loop; a first connection that ends before it answered a request (after
        ``started()``) ends the session, as one that cannot be made does (``peer.connection``)."""
        try:
            await self.peer.keep_connected(self, first_must_connect=True, task_status=task_status)
        except UpstreamStartError as exc:
            if self.peer.start_failure is None:
                raise  # not started: ``start``'s ``tg.start`` raises it
            self.start_failure = exc
            assert self.session.tg is not None
            self.session.tg.cancel_scope.cancel()

    async def refuse_for(self, failure: Exception) -> None:
        """The upstream could not be started at all: until the client closes, or is silent for
        :data:`~mcp_guard.streams.refusal.START_FAILURE_GRACE` seconds (counted again from each line it
        sends; at most ``START_FAILURE_BOUND``), every client request (its ``initialize`` first) is
        answered with -32603 naming the cause, so the client shows why instead of "connection closed"
        (issue 13 item 3; ``streams.refusal``); then ``Session.run`` raises ``failure`` (``wrap`` exits 1)."""
        await answer_every_request(
            self.client, never_started_text(failure_reason(failure), self.exits), START_FAILURE_GRACE
        )

    async def drain(self) -> None:
        """The client closed: decide the calls the guard holds, within :data:`~.upstream.PENDING_DRAIN_SECONDS`
        (at most ``client_request_timeout``, at least ``drain_timeout``); a call still held for the guard's own
        listing then, and what waits behind it, is answered saying so (``held_calls.unlisted_after_client_text``:
        red team 37, it was told the upstream went away, once the guard had closed its input). Then close the
        upstream's input and give it :data:`~.upstream.EXIT_WAIT_SECONDS` to answer what it holds and exit;
        then ``Session.run`` ends (the connection is left cancelled: a process still running gets SIGTERM at
        once, see ``upstream``)."""
        # Calls held for a listing of the guard's own, and messages waiting for a start under way, are
        # requests the upstream is about to take: as for forwarded ones (below, trial T4), a slow server
        # (an `npx` start, a loaded machine) still answers them; drain_timeout alone once answered one with
        # an error instead, for a client that pipes its requests and closes (`echo ... | mcp-guard wrap`).
        pending = min(PENDING_DRAIN_SECONDS, self.client_request_timeout or PENDING_DRAIN_SECONDS)
        waited = max(self.drain_timeout, pending)
        with anyio.move_on_after(waited):
            # (backlog: a first start, red team 33)
            while self.requests.waiting() or self.replay.connecting or self.replay.backlog or self.held.holding:
                await anyio.sleep(0.01)
        self._stopping = True
        if self.held.holding:  # the upstream never answered the guard's listing: it did not go away, the guard ends it
            await self._fail_held(unlisted_after_client_text(waited))
        await self.replay.fail("mcp-guard: the upstream server is not running (the client closed the connection)")
        upstream = self.peer.upstream
        if upstream is not None:
            done = self.peer.ended
            # As with a client that closes a server's input directly, what it asked before closing is still
            # answered: a server that reads its input late (a slow start) answers, then exits. So the wait is
            # longer while forwarded requests are unanswered (PENDING_DRAIN_SECONDS), trial T4.
            wait = min(EXIT_WAIT_SECONDS, self.drain_timeout)
            if len(self.peer.inflight):
                wait = max(wait, min(PENDING_DRAIN_SECONDS, self.client_request_timeout or PENDING_DRAIN_SECONDS))
            with anyio.move_on_after(wait):
                await upstream.close_send()
                await done.wait()

    # --- upstream connections (the rest of the peer's events: upstream_side) --------------------

    async def peer_setup(self, first: bool) -> None:
        """A new connection (``peer.connection``): a restarted one is told what the first was (handshake
        era); then what the client sent meanwhile is passed on, in order, and messages go straight.

        Raises:
            RequestFailed: the restarted upstream did not accept ``initialize``.
        """
        upstream = self.peer.upstream
        self.replay.connecting = True
        if not first:
            if self.pipeline.observer is not None:
                self.pipeline.observer.upstream_restarted("")
            await self.replay.restore()
            log.info("upstream restarted (restart %d)", self.restarts)
        while self.replay.backlog and self.peer.upstream is upstream:
            if self.held.holding:  # behind a held call now: ahead of what the client sent after them (_hold releases)
                self.held.put_first(self.replay.backlog)
                self.replay.backlog.clear()
                break
            await self.dispatch(self.replay.backlog.pop(0))
        if self.peer.upstream is upstream:
            self.replay.connecting = False
            self.ready = True

    # --- client → upstream ------------------------------------------------------------------

    async def client_message(self, message: Any) -> None:
        """One parsed client message (or batch), in the order read (after the big lines before it, when it
        must keep its place: ``peer.offload``). While the upstream's end is read but not yet handled (its
        answers judged off the loop still go out first: ``UpstreamPeer._lines``), it waits as when down.

        While a call is held for the guard's own listing, the messages after it wait behind it, in order
        (:meth:`_hold` releases them): a stdio server takes its requests in the order it reads them, so a
        client that sends ``create`` then ``write`` gets them there in that order, as without the guard (red
        team 37). What cannot change the order of the client's requests goes on at once: ``ping``, notifications
        (a cancellation of a request waiting behind drops both; of the held call, withdraws it), and the client's
        answers to the upstream's requests (the server may need them before it answers the listing):
        ``held_calls``."""
        if self.held.holding and self.held.takes(message):
            return
        if type(message) is list and message and not self._batches():
            await self.session.reply(refused_batch(message))
        elif not self.ready or self.peer.upstream is None:
            await self.replay.while_down(message)
        elif type(message) is dict and not self.routes.needs_listing(message):
            await self._act(*self.routes.route_now(message))  # (no listing needed: routed as the hot path routes)
        else:
            await self.dispatch(message)

    def _batches(self) -> bool:
        """Whether the client may send JSON-RPC batches: only protocol 2025-03-26 has them (2025-06-18 removed
        them, and the 2026-07-28 era has none), so only a session whose ``initialize`` the upstream answered with
        that version (``UpstreamSide.negotiated``; a restarted upstream that answered another ends it). Red team
        35: an SDK server of a later version ignored a forwarded batch, and its calls hung; red team 37: the
        version the client *asked* was read, and a server that answered 2025-06-18 was sent batches all the same."""
        return bool(self.replay.negotiated == BATCH_VERSION)

    def compiled_for(self, params: dict[str, Any]) -> Compiled | None:
        """The schema a call would be judged by now (its table's entry for the name), or None."""
        entry = self.table_for(params).get(params["name"])
        return None if entry is None else entry.compiled

    async def dispatch(self, message: Any) -> None:
        if type(message) is dict:
            refusal = self.routes.refused_at_intake(message)
            if refusal is not None:
                await self.session.reply(refusal)
            elif self.routes.needs_listing(message):
                # Decided once the guard has listed the tools (waiting: client_requests); the client's later
                # messages wait behind it (client_message), and _hold releases them in order.
                assert self.session.tg is not None
                self.held.holding = True
                self.session.tg.start_soon(self._hold, message, self.requests.ticket(message["id"]))
            else:
                await self._act(*await self.routes.route_admitted(message))
        elif type(message) is list and message:
            await self._client_batch(message)
        else:
            await self.session.reply(error_response(None, INVALID_REQUEST, invalid_request_text(message)))

    async def _hold(self, message: dict[str, Any], ticket: Ticket | None) -> None:
        """The task of a call held for the guard's own listing (admitted as ``ticket``): decide it, then release the
        client's messages that waited behind it, in order (:meth:`_in_order`), until none is left."""
        waiting = self.held.waiting
        try:
            await self._decide_held(message, ticket)
            while waiting:
                await self._in_order(waiting.popleft())
        finally:
            self.held.holding = False

    async def _decide_held(self, message: dict[str, Any], ticket: Ticket | None) -> None:
        """Judge the held call ``message`` once the guard listed the tools, and forward or answer it; unless the
        client withdrew that admission meanwhile (its id may be a new request's by now: ``client_requests``)."""
        forward, reply = await self.routes.route_call(message)
        if ticket is None or not self.requests.holds(message["id"], ticket):
            self.notes.forget(id_key(message["id"]))  # (notes the judgement made: its admission is gone)
            return  # the client cancelled it while the guard was listing: neither sent nor answered
        await self._act(forward, reply)

    async def _in_order(self, message: Any) -> None:
        """A client message released from behind a held call (:meth:`_hold`): as :meth:`client_message` takes it,
        but a call that needs a listing of the guard's own is decided here, before the next one."""
        if type(message) is list and message and not self._batches():
            await self.session.reply(refused_batch(message))
        elif not self.ready or self.peer.upstream is None:
            await self.replay.while_down(message)
        elif type(message) is dict:
            refusal = self.routes.refused_at_intake(message)
            if refusal is not None:
                await self.session.reply(refusal)
            elif self.routes.needs_listing(message):
                await self._decide_held(message, self.requests.ticket(message["id"]))
            else:
                await self._act(*await self.routes.route_admitted(message))
        else:
            await self.dispatch(message)

    async def _fail_held(self, text: str) -> None:
        """The drain gave up on the held call: it, and every request behind it, is answered with ``text``."""
        for request_id in self.requests.waiting():
            await self.session.reply(error_response(request_id, INTERNAL_ERROR, text))
        for message in self.held.take_all():
            await self.answer_requests(message if type(message) is list else [message], INTERNAL_ERROR, text)

    async def _client_batch(self, batch: list[Any]) -> None:
        """A JSON-RPC batch (protocol 2025-03-26): each element routed; forwards and replies grouped. A request the
        batch itself cancels after it (``[call 7, cancel 7, call 7]``) is not forwarded: its admission is gone
        by the end (red team 37: it went upstream, and its answer reached the client, cancelled)."""
        forwards: list[tuple[Any, Ticket | None]] = []
        replies: list[Any] = []
        for element in batch:
            if type(element) is not dict:
                replies.append(error_response(None, INVALID_REQUEST, invalid_request_text([element])))
                continue
            forward, reply = await self.routes.route(element)
            if forward is not None:
                request = "method" in forward and "id" in forward and valid_id(forward["id"])
                forwards.append((forward, self.requests.ticket(forward["id"]) if request else None))
            if reply is not None:
                replies.append(reply)
        kept = [m for m, ticket in forwards if ticket is None or self.requests.holds(m["id"], ticket)]
        await self._act(kept or None, replies or None)

    async def _act(self, forward: Any, reply: Any) -> None:
        if forward is not None:
            await self.forward(forward)
        if reply is not None:
            await self.session.reply(reply)

    # --- sending ---------------------------------------------------------------------------

    # --- the guard's own requests -----------------------------------------------------------

    def table_for(self, params: Any) -> ToolTable:
        """The tool table for a request's protocol-era envelope (see :meth:`.listings.ToolListings.table_for`)."""
        return self.listings.table_for(params)

    async def refresh(self, meta: dict[str, Any] | None, table: ToolTable, *, not_before: float) -> None:
        """List the upstream's tools into ``table`` (see :meth:`.listings.ToolListings.refresh`).

        Raises:
            ListingFailed: the listing could not be completed.
        """
        await self.listings.refresh(meta, table, not_before=not_before)

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        """Send a request of the guard's own upstream; return its ``result`` (``peer.connection``).

        Raises:
            RequestFailed: an error response, no answer within ``request_timeout``, the
                upstream gone (or not running).
        """
        return await self.peer.request(method, params)
