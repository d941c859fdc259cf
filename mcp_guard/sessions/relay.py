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

- client → upstream: a ``tools/call`` request is judged first and forwarded only when
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

The stdio hot path
------------------
When the upstream is a pipe stream and the client side a ``pipes.DirectLink`` (a
``pipes.PipeLineStream``: ``wrap`` with a stdio upstream, on asyncio; or the HTTP front's
in-memory side, ``fronts.http.direct``), a line that arrives while the reading task waits is
handled in the stream's reader callback (:meth:`Relay._client_line_now`,
:meth:`Relay._upstream_line_now`): parsed, routed and judged by the same code as below, and
written without waiting, in one pass of the event loop. A line that needs waiting (the
guard's own listing, a restart, a pipe with output queued) or that is not one plain message
(a batch, a parse error) is declined before anything is done and takes the async path, in
order. See ``pipes`` for why this steps below anyio.

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
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc

from ..calls.pipeline import LISTING_FAILED, WRAP_STEPS, Pipeline, Route, tool_name
from ..calls.policy import ToolPolicy
from ..calls.tool_table import ToolEntry, ToolTable
from ..peer.backoff import BACKOFF_FIRST, BACKOFF_MAX, STABLE_SECONDS
from ..peer.connection import failure_reason
from ..peer.offload import OFFLOAD_MIN, keeps_place
from ..peer.requests import ListingFailed
from ..peer.upstream import EXIT_WAIT_SECONDS, PENDING_DRAIN_SECONDS, Connector, LineLink, UpstreamStartError
from ..streams.pipes import DirectLink, LineHandler, PipeLineStream
from ..streams.refusal import START_FAILURE_GRACE, answer_every_request
from ..wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    Spliced,
    Uncarriable,
    dumps,
    error_response,
    forwarded_line,
    id_key,
    invalid_request_text,
    loads_as_received,
    valid_id,
)
from ..wire.messages import ALREADY_INITIALIZED, BATCH_VERSION, refused_batch
from ..wire.meta import era_meta
from .client_lines import big_line
from .client_requests import Ticket
from .held_calls import HeldMessages, unlisted_after_client_text
from .session import Session
from .upstream_side import UpstreamSide, never_started_text

if TYPE_CHECKING:
    from ..core import Compiled
    from ..peer.inflight import InFlight

__all__ = ["Relay", "wrap_session"]

log = logging.getLogger("mcp_guard")

MAX_ROUTES: Final = 100_000
"""Routes to listed tools kept (all of them, unless a server lists more, then made again as needed)."""

_MISSING: Final = object()

_TRACKED: Final = frozenset({"initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})


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
        hot: the stdio hot path for the client's small lines (:meth:`_client_line_now`).
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
        self._routes: dict[str, tuple[ToolEntry, Route]] = {}
        self.start_failure: UpstreamStartError | None = None  # the first connection ended unanswered
        self.held = HeldMessages()  # a call held for the guard's own listing, and the client's messages behind it
        self.hot: LineHandler | None = self._client_line_now
        session.writer.gone = self._client_gone  # (a client that stopped reading ends the relay)
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
        return [] if self._ready and self.peer.upstream is not None else ["upstream"]

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
            while self.requests.waiting() or self._connecting or self._backlog or self.held.holding:
                await anyio.sleep(0.01)
        self._stopping = True
        if self.held.holding:  # the upstream never answered the guard's listing: it did not go away, the guard ends it
            await self._fail_held(unlisted_after_client_text(waited))
        await self._fail_backlog("mcp-guard: the upstream server is not running (the client closed the connection)")
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
        self._connecting = True
        if not first:
            if self.pipeline.observer is not None:
                self.pipeline.observer.upstream_restarted("")
            await self._restore()
            log.info("upstream restarted (restart %d)", self.restarts)
        while self._backlog and self.peer.upstream is upstream:
            if self.held.holding:  # behind a held call now: ahead of what the client sent after them (_hold releases)
                self.held.put_first(self._backlog)
                self._backlog.clear()
                break
            await self._dispatch(self._backlog.pop(0))
        if self.peer.upstream is upstream:
            self._connecting = False
            self._ready = True

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
        elif not self._ready or self.peer.upstream is None:
            await self._while_down(message)
        elif type(message) is dict and not self._needs_listing(message):
            await self._act(*self._route_now(message))  # (no listing needed: routed as the hot path routes)
        else:
            await self._dispatch(message)

    def _batches(self) -> bool:
        """Whether the client may send JSON-RPC batches: only protocol 2025-03-26 has them (2025-06-18 removed
        them, and the 2026-07-28 era has none), so only a session whose ``initialize`` the upstream answered with
        that version (``UpstreamSide.negotiated``; a restarted upstream that answered another ends it). Red team
        35: an SDK server of a later version ignored a forwarded batch, and its calls hung; red team 37: the
        version the client *asked* was read, and a server that answered 2025-06-18 was sent batches all the same."""
        return bool(self.negotiated == BATCH_VERSION)

    def compiled_for(self, params: dict[str, Any]) -> Compiled | None:
        """The schema a call would be judged by now (its table's entry for the name), or None."""
        entry = self.table_for(params).get(params["name"])
        return None if entry is None else entry.compiled

    def _client_line_now(self, line: bytes | str) -> bool:
        """The hot path for one client line, run by the client's pipe stream in its reader callback (``pipes``).

        Takes what needs no waiting: a message (not a batch) while the upstream is ready, the
        upstream's pipe and the client side (a ``DirectLink``) have no output queued, and no
        listing of the guard's own is needed. It is routed and forwarded (or answered) just as
        :func:`.client_lines.read_client_lines` would, writing without waiting. Anything else is declined (False)
        before anything is done, and :func:`.client_lines.read_client_lines` takes it as usual, in order. A big
        line comes as its text (``pipes.LineHandler``) and, when safe, goes on as that text
        (``loads_as_received``).

        A big line (:data:`~mcp_guard.peer.offload.OFFLOAD_MIN` or more) is made a job of :attr:`Session.intake`
        here, as :func:`.client_lines.read_client_lines` would make it, but as the text the pipe decoded: declined, the
        pipe would encode it back to bytes and the job decode them again (a big call then peaked at 5x
        its size, against 2x before the offload). The order is the same: the pipe offers lines only
        while :func:`.client_lines.read_client_lines` waits in ``receive()``, so every line before this one is
        handled or is a job already.
        """
        if len(line) >= OFFLOAD_MIN:
            self.session.intake.submit(partial(big_line, self.session, line))
            return True
        upstream = self.peer.upstream
        client = self.client
        if not (
            self._ready
            and not self.held.holding
            and isinstance(upstream, PipeLineStream)
            and upstream.idle
            and isinstance(client, DirectLink)
            and client.idle
        ):
            return False
        try:
            message, as_received = loads_as_received(line)
        except (ValueError, RecursionError):
            return False
        if type(message) is not dict:
            return False
        if "id" in message and message.get("method") == "tools/call":
            return self._call_now(line, message, as_received, upstream, client)
        if self._needs_listing(message) or (self.session.intake.busy and keeps_place(message)):
            return False
        # What is forwarded is the line as received when safe, else the message as parsed, serialized (a request
        # under an upstream id of the guard's own, made now: unused when it is not forwarded).
        upstream_id = self.peer.inflight.new_id() if "id" in message and "method" in message else None
        try:
            data = forwarded_line(line, message, as_received, upstream_id)
        except Uncarriable:
            return False
        forward, reply = self._route_now(message)
        if forward is not None:
            if forward is not message:  # a cancellation, naming the request's upstream id
                data = dumps(forward)
            elif upstream_id is not None:
                self._started(upstream_id, message)
            self._send_now(upstream, data, forward)
        if reply is not None:
            self._reply_now(client, reply)
        return True

    def _call_now(
        self,
        line: bytes | str,
        message: dict[str, Any],
        as_received: bool,
        upstream: PipeLineStream,
        client: DirectLink,
    ) -> bool:
        """:meth:`_client_line_now` for a ``tools/call`` with an id (``message``, parsed from ``line``): declined
        (False, nothing done) when its table needs a listing of the guard's own; else admitted, judged and
        forwarded under an upstream id of the guard's own, or answered (True). The one table lookup serves both
        (:meth:`_listing_needed`, :meth:`_call_verdict`). A call is serialized once judged, once: mapped back
        (--present-for) or traced, what goes is its forward."""
        table = self.listings.table_for(message.get("params"))
        if self._listing_needed(message, table):
            return False
        refusal = self.session.admit(message)
        if refusal is not None:
            self._reply_now(client, refusal)
            return True
        if self.notes.any:  # notes of an earlier request under this id (given up)
            self.notes.forget(id_key(message["id"]))
        forward, reply = self._call_verdict(message, table)
        if forward is None:
            self._reply_now(client, reply)
            return True
        upstream_id = self.peer.inflight.new_id()
        try:
            if forward is message:
                data = forwarded_line(line, message, as_received, upstream_id)
            else:
                data = dumps({**forward, "id": upstream_id})
        except Uncarriable:  # judged already: _forward refuses it, saying why (as when declined)
            self.session.intake.submit(partial(self._forward, forward))
            return True
        self._started(upstream_id, forward)
        self._send_now(upstream, data, forward)
        return True

    def _send_now(self, upstream: PipeLineStream, data: bytes | str | Spliced, forward: Any) -> None:
        """Write ``data`` (forwarding ``forward``) to the upstream's pipe without waiting (:meth:`_send_failed`)."""
        try:
            upstream.send_nowait(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._send_failed([forward])

    def _send_failed(self, elements: list[Any]) -> None:
        """The hot path could not write ``elements`` (in flight already): as :meth:`_forward` does, the end of the
        upstream, told in a moment, answers them with its cause (a start failure: issue 13 item 3); what it
        has not answered within a second is answered then (``_undelivered``)."""
        log.warning("could not forward to the upstream: it went away")
        if self.session.tg is not None:
            self.session.tg.start_soon(self._undelivered_after, elements, self.peer.ended)

    async def _undelivered_after(self, elements: list[Any], done: anyio.Event) -> None:
        with anyio.move_on_after(1.0):
            await done.wait()
        for answer in self._undelivered(elements):
            await self.session.reply(answer)

    async def _dispatch(self, message: Any) -> None:
        if type(message) is dict:
            refusal = self._refused_at_intake(message)
            if refusal is not None:
                await self.session.reply(refusal)
            elif self._needs_listing(message):
                # Decided once the guard has listed the tools (waiting: client_requests); the client's later
                # messages wait behind it (client_message), and _hold releases them in order.
                assert self.session.tg is not None
                self.held.holding = True
                self.session.tg.start_soon(self._hold, message, self.requests.ticket(message["id"]))
            else:
                await self._act(*await self._route_admitted(message))
        elif type(message) is list and message:
            await self._client_batch(message)
        else:
            await self.session.reply(error_response(None, INVALID_REQUEST, invalid_request_text(message)))

    def _needs_listing(self, message: dict[str, Any]) -> bool:
        """A tools/call whose table is not a complete listing (:meth:`_listing_needed`)."""
        if message.get("method") != "tools/call" or "id" not in message:
            return False
        return self._listing_needed(message, self.listings.table_for(message.get("params")))

    def _listing_needed(self, message: dict[str, Any], table: ToolTable) -> bool:
        """Whether the tools/call ``message`` (with an id), judged against ``table`` (its envelope's), waits for a
        listing of the guard's own: a call is judged only against every page (red team 33: a client that listed
        the first page alone had a name another page lists again judged by the first page's schema, not refused
        as listed twice), so the guard lists every page itself first."""
        if table is not self.table and valid_id(message["id"]) and not self.listings.fresh(table):
            return True  # 2026-07-28 era: the listing's ttlMs has passed and no listen stream tells of changes
        if table.complete:
            return False
        params = message.get("params")
        name = params.get("name") if type(params) is dict else None
        return type(name) is str and valid_id(message["id"])

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
        forward, reply = await self._route_call(message)
        if ticket is None or not self.requests.holds(message["id"], ticket):
            self.notes.forget(id_key(message["id"]))  # (notes the judgement made: its admission is gone)
            return  # the client cancelled it while the guard was listing: neither sent nor answered
        await self._act(forward, reply)

    async def _in_order(self, message: Any) -> None:
        """A client message released from behind a held call (:meth:`_hold`): as :meth:`client_message` takes it,
        but a call that needs a listing of the guard's own is decided here, before the next one."""
        if type(message) is list and message and not self._batches():
            await self.session.reply(refused_batch(message))
        elif not self._ready or self.peer.upstream is None:
            await self._while_down(message)
        elif type(message) is dict:
            refusal = self._refused_at_intake(message)
            if refusal is not None:
                await self.session.reply(refusal)
            elif self._needs_listing(message):
                await self._decide_held(message, self.requests.ticket(message["id"]))
            else:
                await self._act(*await self._route_admitted(message))
        else:
            await self._dispatch(message)

    async def _fail_held(self, text: str) -> None:
        """The drain gave up on the held call: it, and every request behind it, is answered with ``text``."""
        for request_id in self.requests.waiting():
            await self.session.reply(error_response(request_id, INTERNAL_ERROR, text))
        for message in self.held.take_all():
            await self._answer_requests(message if type(message) is list else [message], INTERNAL_ERROR, text)

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
            forward, reply = await self._route(element)
            if forward is not None:
                request = "method" in forward and "id" in forward and valid_id(forward["id"])
                forwards.append((forward, self.requests.ticket(forward["id"]) if request else None))
            if reply is not None:
                replies.append(reply)
        kept = [m for m, ticket in forwards if ticket is None or self.requests.holds(m["id"], ticket)]
        await self._act(kept or None, replies or None)

    async def _route(self, message: dict[str, Any]) -> tuple[Any, Any]:
        """What to do with one client message: ``(to forward or None, reply or None)``.

        A ``tools/call`` is judged here (after the guard's own listing when it needs one).
        """
        refusal = self._refused_at_intake(message)
        if refusal is not None:
            return None, refusal
        return await self._route_admitted(message)

    async def _route_admitted(self, message: dict[str, Any]) -> tuple[Any, Any]:
        """:meth:`_route` for a message past :meth:`_refused_at_intake`."""
        if "id" in message and message.get("method") == "tools/call":
            return await self._route_call(message)
        return self._admitted_now(message)

    def _refused_at_intake(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The error answering a client request that cannot be relayed as it is, or None.

        A request whose id is not a string or an integer (its answer could not be told apart),
        or whose id is that of a request still open (in flight, or held: ``client_requests``; one
        answer could not be told from the other) is refused with -32600 and not forwarded: every
        request gets exactly one answer, its own. Any other request is admitted (open from now on).
        """
        if "id" not in message or message.get("method") is None:
            return None
        refusal = self.session.admit(message)
        if refusal is not None:
            return refusal
        if self.notes.any:  # notes of an earlier request under this id (given up)
            self.notes.forget(id_key(message["id"]))
        return None

    def _route_now(self, message: dict[str, Any]) -> tuple[Any, Any]:
        """:meth:`_route` for a message that needs no listing of the guard's own (see :meth:`_needs_listing`).

        What is forwarded is always ``message`` itself, as parsed.
        """
        if "id" in message and message.get("method") is not None:
            refusal = self._refused_at_intake(message)
            if refusal is not None:
                return None, refusal
        return self._admitted_now(message)

    def _admitted_now(self, message: dict[str, Any]) -> tuple[Any, Any]:
        """:meth:`_route_now` for a message past :meth:`_refused_at_intake`."""
        method = message.get("method")
        if method == "tools/call":
            if "id" not in message:
                self.counted.log(
                    logging.WARNING, "dropped a tools/call without an id: a notification cannot be judged and answered"
                )
                return None, None
            return self._call_verdict(message, self.table_for(message.get("params")))
        if "id" in message and method == "tools/list":
            self._note_list(message)
        elif method == "notifications/cancelled":
            return self._cancelled(message), None
        elif method is None:
            return self._client_answer(message), None  # (under the upstream's own id: server_requests)
        elif type(method) is str and method in _TRACKED and "id" in message:
            if method == "initialize" and self._initialize_sent:  # (red team 37 F8: it was forwarded, and replayed)
                self.counted.log(logging.WARNING, "refused a second initialize: the session has one already")
                return None, error_response(message["id"], INVALID_REQUEST, ALREADY_INITIALIZED)
            self._track(method, message.get("params"), message["id"])
        return message, None

    async def _route_call(self, message: dict[str, Any]) -> tuple[Any, Any]:
        params = message.get("params")
        table = self.table_for(params)
        if valid_id(message["id"]) and message.get("jsonrpc") == "2.0" and self._needs_listing(message):
            try:
                await self.refresh(era_meta(params), table, not_before=anyio.current_time())
            except ListingFailed as exc:
                self.pipeline.trace_unrouted(LISTING_FAILED, INTERNAL_ERROR, (message["id"], params))
                text = f"mcp-guard could not list the upstream's tools: {exc}"
                return None, error_response(message["id"], INTERNAL_ERROR, text)
        return self._call_verdict(message, table)

    def _call_verdict(self, message: dict[str, Any], table: ToolTable) -> tuple[Any, Any]:
        """A ``tools/call`` (with an id) judged against ``table``: ``(message, None)`` or ``(None, answer)``.

        The prelude and the pipeline's entry are the gateway's (``Pipeline.unlisted``, ``Pipeline.check``):
        one text and one log line per refusal for both commands."""
        request_id = message["id"]
        if not valid_id(request_id) or message.get("jsonrpc") != "2.0":
            text = "Invalid Request: a tools/call needs jsonrpc 2.0 and a string or integer id"
            return None, error_response(request_id if valid_id(request_id) else None, INVALID_REQUEST, text)
        params = message.get("params")
        name = tool_name(params)
        shown = None
        if name is not None and table.presented is not None:  # --present-for: mapped back first
            mapped = table.presented.map_call(self.pipeline, message)
            if isinstance(mapped, dict):
                return None, mapped
            message, tool = mapped
            params, shown, name = message["params"], tool, tool.name
        entry = table.get(name) if name is not None else None
        if entry is None:
            return None, self.session.unlisted(message, name)
        call = self.session.call_of(message, self._route_to(entry, table), shown, "")
        rejection = self.pipeline.check(call)
        if rejection is not None:
            return None, rejection.response(request_id)
        message = self.session.forwarded(message, call)  # (traced: its _meta carries the round trip's context)
        if self.pipeline.observer is not None or call.trace is not None:  # its outcome told (metrics, traces)
            self.notes.observe(request_id, partial(self.pipeline.observe, call, kind=None))
        if entry.output is not None:  # its result is judged (Pipeline.judge_output)
            self.notes.note_call(request_id, call)
        return message, None

    def _route_to(self, entry: ToolEntry, table: ToolTable) -> Route:
        """The pipeline's route to a listed tool (made once per listing of it): no renaming, no server
        name, and the one rule ``wrap``'s options set (``--hide-unsupported``: ``unsupported: hide``)."""
        cached = self._routes.get(entry.name)
        if cached is not None and cached[0] is entry and cached[1].policy.unsupported == table.unsupported:
            return cached[1]
        policy = ToolPolicy("allow", "", table.unsupported, None, None)
        route = Route(entry.name, "", entry.name, entry.compiled, policy, output=entry.output, outputs=table.outputs)
        if len(self._routes) > MAX_ROUTES:
            self._routes.clear()
        self._routes[entry.name] = (entry, route)
        return route

    def _cancelled(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """A client's cancellation: what to forward (the notice naming the request's upstream id), or None.

        A call the guard holds is dropped (neither sent nor answered); a request in flight is given
        up: the upstream may still answer it, and that late answer is passed on under the client's id
        (MCP clients drop it; the HTTP front frees the id with it) unless the client has sent another
        request under that id meanwhile (``peer.inflight``). A cancellation of a request the upstream
        sent the client goes to the upstream under that request's own id (``server_requests``). A
        cancellation naming no request in flight is dropped: the upstream was never sent such an id.
        """
        params = message.get("params")
        if type(params) is not dict or not valid_id(params.get("requestId")):
            return message
        withdrawal = self.session.withdraw(message)
        if withdrawal is None:
            return None
        if withdrawal.given_up is not None:
            # Sent: in flight under an upstream id of the guard's own. A cancelled tools/list stays noted: a late
            # answer must still be annotated (and cleaned).
            inflight, key = self.peer.inflight, id_key(params["requestId"])
            inflight.give_up(withdrawal.given_up, late=inflight.take(withdrawal.given_up), client=key)
            self.notes.ended(key, "cancelled")
        return withdrawal.notice

    async def _act(self, forward: Any, reply: Any) -> None:
        if forward is not None:
            await self._forward(forward)
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
