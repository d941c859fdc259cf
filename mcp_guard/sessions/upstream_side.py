"""The relay's upstream half: what the upstream's messages do, the requests in flight there, the answers
when it goes away, and the replies to the client.

:class:`UpstreamSide` is the base of :class:`~mcp_guard.sessions.relay.Relay` (which adds the client
half: intake, routing, judging, forwarding). It holds the state both halves read and owns the
:class:`~mcp_guard.peer.connection.UpstreamPeer`, whose events it answers
(:class:`~mcp_guard.peer.connection.PeerEvents`; ``peer_setup`` is the relay's, as it replays the
client's backlog):

- upstream → client: responses to client requests in flight go to the client (a ``tools/list``
  result annotated with the guard's verdicts); a response to an id not in flight (never sent,
  refused, answered already, timed out) is dropped and logged; the upstream's requests to the
  client are noted, so that their answers can be dropped once that upstream is gone;
  ``notifications/tools/list_changed`` empties the schema cache; progress restarts a request's
  timeout; the guard's own listen streams' frames stay with the guard (``listings``). Output
  holding NaN or Infinity is withheld (the requests waiting for it get -32603).
- the upstream gone: every request in flight gets -32603 (:data:`~mcp_guard.wire.messages.GONE`),
  its requests to the client are cancelled towards the client, nothing is re-sent.
- a restarted upstream is told what the client told the first (handshake era: ``initialize``
  with the client's params, ``notifications/initialized``, the last ``logging/setLevel``, the
  resource subscriptions); the tool tables are emptied and the client gets ``list_changed``. That, and the
  client messages that wait for a start, are the :class:`~.replay.Replay`'s (``replay``), which this half
  tells of the peer's events (a failed start, an end) and of the answer to the session's ``initialize``.
- ``--request-timeout``: a forwarded request not answered in time is answered with -32603 and
  cancelled upstream; its late answer is dropped.
- client → upstream (the sending, for the relay's routing): every request goes upstream under an id
  of the guard's own (``peer.inflight``: the one id scheme of ``wrap`` and ``serve``), so a late
  answer can never reach a later request under the same client id (issue 25 item 5); answers get
  the client's id back (a big line as received, its id replaced in place: ``jsonrpc.with_id``).
"""

from __future__ import annotations

import contextlib
import logging
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc

from ..calls.tool_table import ToolTable
from ..peer.backoff import BACKOFF_FIRST, BACKOFF_MAX, STABLE_SECONDS
from ..peer.connection import UpstreamPeer
from ..peer.inflight import Late, timed_out_text
from ..peer.offload import OFFLOAD_MIN, keeps_place
from ..peer.upstream import Connector
from ..streams.ends import stop_signal
from ..streams.pipes import DirectLink, LineHandler, PipeLineStream
from ..wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Spliced,
    Uncarriable,
    dumps,
    error_response,
    id_key,
    loads_as_received,
    valid_id,
    with_id,
)
from ..wire.messages import GONE, stopped_text
from ..wire.meta import SUBSCRIPTION_ID_KEY
from ..wire.pieces import dumps_in_pieces
from .answer_notes import AnswerNotes
from .listings import ToolListings
from .replay import Replay

if TYPE_CHECKING:
    from .session import Session

__all__ = ["CONSUMED", "UpstreamSide", "gone_text", "never_started_text"]

log = logging.getLogger("mcp_guard")

CONSUMED: Final = object()
"""What ``_upstream_message`` returns for a message the guard took for itself (nothing is sent on)."""


Key = tuple[bool, Any]

UPSTREAM: Final = "upstream"
"""``wrap``'s one upstream, as the owner of its requests to the client (``server_requests``)."""


STOPPED_AFTER_CLIENT: Final = (
    "mcp-guard: the client closed its side before the upstream server answered, and the server did not "
    "answer within the guard's shutdown wait; it was stopped"
)
"""The -32603 text for a forwarded request still unanswered when ``wrap`` stops its upstream after the client
closed its side (the upstream did not go away: the guard ended it, see ``Relay.drain``)."""


def gone_text(cause: str | None, server: str | None = None) -> str:
    """The -32603 text for a request the upstream left unanswered when it went away, naming ``cause``
    (``streams.ends``: its exit status and where its stderr is) when the transport told it, and, in
    ``serve``, the ``server`` (its name in the config: which of several went away; docs/gateway.md)."""
    if cause is None:
        return GONE
    which = "" if server is None else f" `{server}`"
    return f"mcp-guard: the upstream server{which} went away before answering ({cause}); the request was not re-sent"


def never_started_text(reason: str, exits: bool = True) -> str:
    """The -32603 text for a request to ``wrap``'s upstream when it cannot be started at all (``reason``:
    ``UpstreamStartError``'s text); then the guard exits with status 1 (``exits``; docs/wrap.md), or
    (``wrap --http``) the session ends."""
    then = "mcp-guard exits" if exits else "the session ends"
    return f"mcp-guard: the upstream server could not be started ({reason}); {then}"


class UpstreamSide:
    """The upstream half of one relayed client connection (see the module docstring).

    Args:
        session: the client's session (``session.Session``: its requests, its replies, its task group).
        connect: makes one upstream connection per call (``upstream.Connector``).
        table: the tool table (profile, hiding, cache).
        request_timeout, client_request_timeout, drain_timeout, backoff, stable_after: as
            :class:`~mcp_guard.sessions.relay.Relay` says.

    Attributes:
        peer: the upstream peer (``peer.connection``).
        listings: the tool tables per protocol-era envelope, the guard's own listings and listen streams.
        ready: the upstream is connected and restored: client messages go straight through.
        replay: the client messages waiting for a start, and what a restarted upstream is told again
            (:class:`~.replay.Replay`).
        client_closed: the client has closed its side (or stopped reading).
        exits: a start failure of the first connection ends the guard (``wrap``: "mcp-guard exits"), not
            only this session (``wrap --http`` sets it False).
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
        self.session = session
        self.client = session.client
        self.connect = connect
        self.table = table
        self.request_timeout = request_timeout
        self.client_request_timeout = client_request_timeout
        self.drain_timeout = drain_timeout
        self.peer = UpstreamPeer(
            connect,
            request_timeout=request_timeout,
            backoff=backoff,
            stable_after=stable_after,
            drain_timeout=drain_timeout,
            client_request_timeout=client_request_timeout,
        )
        self._stopping = False  # the guard is ending the upstream (``Relay.closing``)
        self.exits = exits  # a start failure ends the guard (``wrap``), not only this session (``wrap --http``)
        # The session's (client_requests, server_requests, log_counts): the one upstream owns what it was sent.
        self.requests = session.requests
        self.server_requests = session.server_requests
        self.counted = session.counted
        self.listings = ToolListings(table, self.peer.own, self.peer.request, self.peer.send_own)
        # Client requests in flight upstream are the peer's (peer.inflight: upstream id key -> the client's
        # id); what the guard does with their answers (annotate, judge, tell the observer) is noted here.
        upstream_of = self.peer.inflight.upstream_of
        self.notes = AnswerNotes(lambda key: upstream_of(key) is not None)
        # Connection state: ready = connected and restored, client messages go straight through; what waits for
        # a start, and what a restarted upstream is told again, is the replay's.
        self.ready = False
        self.replay = Replay(self)

    @property
    def negotiated(self) -> Any:
        """The protocol version of the session (``Replay.negotiated``): what the upstream answered the client's
        ``initialize`` with; None before that answer, or once a restarted upstream answered another."""
        return self.replay.negotiated

    @property
    def restarts(self) -> int:
        """How many times a new upstream connection was started after the first."""
        return self.peer.restarts

    # --- the peer's events (``peer_setup`` is the relay's) --------------------------------------

    async def peer_failed(self, reason: str, connected: bool) -> None:
        """A connection could not be made or set up: the requests waiting for it are answered."""
        log.error("could not restart the upstream: %s", reason)
        self.replay.connecting = False
        await self.replay.fail(self.replay.not_restarted(reason))

    def down_text(self) -> str:
        """The -32603 text for a request that finds no upstream: it could not be started at all (``wrap``
        then exits), or it went away (:data:`~mcp_guard.wire.messages.GONE`)."""
        failure = self.peer.start_failure
        return gone_text(self.peer.cause) if failure is None else never_started_text(failure, self.exits)

    async def peer_down(self, ended: bool) -> None:
        """The connection ended (``peer.connection``): everything waiting on it is answered now; nothing hangs."""
        self.ready = False
        inflight = self.peer.inflight.clear()
        stop = None if ended else stop_signal()  # the guard itself was stopped: neither side ended it (rt37 F1)
        self.notes.gone([id_key(request_id) for request_id in inflight], "upstream_died" if stop is None else "stopped")
        cause, failure = self.peer.cause, self.peer.start_failure
        if ended and not self.session.client_closed and not self.replay.connecting and failure is None:
            # (a restart that ends while it is set up is logged by peer_failed; a failed first start by the command)
            log.warning(
                "the upstream went away (%s)%s; starting it again",
                cause or "it exited, crashed or closed its output",
                f"; answering {len(inflight)} pending request(s) with an error" if inflight else "",
            )
        if failure is not None:
            text = never_started_text(failure, self.exits)
            await self.replay.fail(text)
        elif stop is not None:
            text = stopped_text(stop)
        elif self.session.client_closed and not ended:
            text = STOPPED_AFTER_CLIENT
        else:
            text = gone_text(cause)
        for request_id in inflight:
            with contextlib.suppress(Exception):
                await self.session.reply(error_response(request_id, INTERNAL_ERROR, text))
        with contextlib.suppress(Exception):
            await self.session.server_requests_gone(UPSTREAM)

    def peer_line_handler(self, upstream: PipeLineStream) -> LineHandler | None:
        """The hot path for a pipe upstream when the client side is a ``pipes.DirectLink`` (``peer.connection``)."""
        client = self.client
        return partial(self._upstream_line_now, client) if isinstance(client, DirectLink) else None

    async def peer_output(self, message: Any) -> bool:
        """A parsed upstream message or batch, triaged (``peer.connection``): routed, and sent to the client.

        Returns whether to read on (False: the client can no longer be written to).
        """
        out = self._upstream_out(message)
        if out is CONSUMED:
            return True
        peer = self.peer
        try:  # a big message is written in the worker thread, in pieces that let the loop run (peer.offload)
            data: bytes | str | Spliced = (
                dumps(out) if message is not peer.offloaded else await self._offloaded_data(out)
            )
        except Uncarriable:
            for answer in self._uncarriable_answers(out):
                await self.session.reply(answer)
            return True
        client = self.client
        try:
            if isinstance(data, bytes):
                await client.send(data)
            elif isinstance(client, DirectLink):
                await client.send(data)  # (text: encoded a slice at a time as it is written)
            else:
                await client.send(str(data).encode("utf-8"))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.client_gone()
            return False
        return True

    async def _offloaded_data(self, out: Any) -> bytes | str | Spliced:
        """The line of ``out``, made of the big upstream line the peer is passing on (``peer.offload``): the
        line itself when ``out`` is it as received (``loads_as_received``; a line the pipe gave as its text
        stays text), or it with the client's id back (``with_id``: a ``Spliced`` text, no copy); else
        ``dumps`` in pieces, in the worker thread, so the loop runs meanwhile.

        Raises:
            Uncarriable: as ``dumps``.
        """
        peer = self.peer
        if peer.as_received is not None:
            line, message = peer.as_received
            if out is message:
                return line
            if type(message) is dict and _only_id_differs(out, message):
                spliced = with_id(line, message["id"], out["id"])
                if spliced is not None:
                    return spliced
        return await peer.ordered.in_thread(dumps_in_pieces, out)

    def _upstream_line_now(self, client: DirectLink, line: bytes | str) -> bool:
        """The hot path for one upstream line, run by the upstream's pipe stream in its reader callback.

        Takes every line that parses while the client's pipe has no output queued, just as
        :meth:`peer_output` would, writing without waiting; declines (False, having done
        nothing) the rest. The client gone is raised as ``anyio.BrokenResourceError`` (out of the
        peer's ``receive()``), which ends the reading as :meth:`peer_output` would.
        """
        if not client.idle or len(line) >= OFFLOAD_MIN:  # (a big line is the peer's job: peer.connection)
            return False
        try:
            message, as_received = loads_as_received(line, upstream=True)
        except (ValueError, RecursionError):
            return False
        if keeps_place(message) and self.peer.ordered.busy:
            return False
        out = self._upstream_out(self.peer.triage(message, line))
        if out is CONSUMED:
            return True
        data: bytes | str | Spliced | None
        try:  # a big line the guard passes on unchanged (but its id) goes as received, when safe (loads_as_received)
            if as_received and out is not message and _only_id_differs(out, message):
                data = with_id(line, message["id"], out["id"]) or dumps(out)
            else:
                data = line if as_received and out is message else dumps(out)
        except Uncarriable:
            for answer in self._uncarriable_answers(out):
                self.reply_now(client, answer)
            return True
        try:
            client.send_nowait(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.client_gone()
            raise anyio.BrokenResourceError from None
        return True

    def _upstream_out(self, message: Any) -> Any:
        """What one upstream message (or batch), triaged by the peer (``UpstreamPeer.triage``: None for nothing of
        the owner's), becomes: the object to send the client, or :data:`CONSUMED` (nothing to send)."""
        if type(message) is dict:
            return self._upstream_message(message)
        if type(message) is list:
            return self._upstream_batch(message)
        return CONSUMED

    def peer_prepare(self, message: dict[str, Any]) -> None:
        """(In the worker thread, ``peer.connection``.) A listing answered to the client has its schemas
        classified here, into its table's prepared schemas (``ToolTable.prepare``): annotating it on the
        loop then only looks them up. A call's result is checked here (``Pipeline.prepare_output``)."""
        result = message.get("result")
        if "method" in message or type(result) is not dict or not valid_id(message.get("id")):
            return
        client_id = self.peer.inflight.pending.get(id_key(message["id"]))  # (reads: the loop owns the maps)
        if client_id is not None and self.notes.any:
            self.notes.prepare(client_id, message, result)

    async def peer_unreadable(self, request_id: Any, text: str) -> bool:
        """An unreadable upstream line carried ``request_id`` (``peer.connection``): a forwarded request is
        answered with ``text``; its real answer, should it follow, is dropped (no longer in flight)."""
        client_id = self.peer.inflight.take(id_key(request_id))
        if client_id is None:
            return False
        self.notes.forget(id_key(client_id))
        await self.session.reply(error_response(client_id, INTERNAL_ERROR, text))
        return True

    # --- the client's answers and listings (the upstream's own requests; what its answers need) ------

    async def dispatch(self, message: Any) -> None:
        """Route one client message (or batch) now: the relay's (``Relay.dispatch``)."""
        raise NotImplementedError

    def client_answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The client's answer to a request of the upstream's, as it goes upstream (under the upstream's own id),
        or None: dropped (``Session.client_answer``); an answer without a valid id goes on as it is."""
        if not valid_id(message.get("id")):
            return message if self.peer.upstream is not None else None
        found = self.session.client_answer(message)
        return None if found is None else found[1]

    def note_list(self, message: dict[str, Any]) -> None:
        """A ``tools/list`` request about to be forwarded: its answer is annotated by its envelope's table."""
        params = message.get("params")
        cursor = params.get("cursor") if type(params) is dict else None
        self.notes.note_list(message["id"], self.listings.table_for(params), cursor)

    async def _forwarded_data(self, message: Any, outgoing: Any) -> bytes | str | Spliced:
        """The line forwarding ``message`` upstream as ``outgoing`` (it, or it under the guard's upstream id):
        ``dumps``; for a big client line passed on unchanged but its id, the line as received with the id
        replaced (when safe: ``loads_as_received``, ``with_id``; a line received as its text stays text, a
        ``Spliced`` one when its id is replaced: no copy); for another big one, ``dumps`` in pieces in the
        worker thread (``wire.pieces``), so the loop runs meanwhile.

        Raises:
            Uncarriable: as ``dumps``.
        """
        received = self.session.received
        if received is None or message is not received[0]:
            return dumps(outgoing)
        line = received[1]
        if line is not None and outgoing is message:
            return line
        if line is not None and type(message) is dict and _only_id_differs(outgoing, message):
            spliced = with_id(line, message["id"], outgoing["id"])
            if spliced is not None:
                return spliced
        return await self.session.intake.in_thread(dumps_in_pieces, outgoing)

    def _uncarriable_answers(self, out: Any) -> list[dict[str, Any]]:
        """Upstream output holding NaN or Infinity (not JSON) is withheld: the errors for requests waiting for it."""
        answers = []
        for m in out if type(out) is list else [out]:
            if type(m) is dict and "method" not in m and "id" in m and valid_id(m["id"]):
                text = "mcp-guard: the upstream's answer holds a number JSON cannot carry (NaN or Infinity); withheld"
                answers.append(error_response(m["id"], INTERNAL_ERROR, text))
        self.counted.log(
            logging.WARNING, "withheld upstream output holding a number JSON cannot carry (NaN or Infinity)"
        )
        return answers

    def _upstream_message(self, message: dict[str, Any]) -> Any:
        """What to send the client for one upstream message (triaged by the peer: JSON-RPC, the
        ``mcp-guard/`` ``_meta`` keys removed, not an answer to the guard's own): :data:`CONSUMED`
        (nothing), the message, or a new object.
        """
        if "method" not in message:
            if "id" not in message:
                return message
            record = self.peer.inflight.match(id_key(message["id"]))
            if record is None:
                # Not a client request in flight: an answer to an id the upstream was never sent, to a
                # call the guard refused, answered already (by the upstream, or by the guard for a line
                # it could not read), or timed out never reaches the client (dropped and logged). A late
                # answer to a request the client cancelled is passed on (unless the client reused its
                # id), annotated if a listing.
                return CONSUMED
            if type(record) is Late:  # (the client may send a new request under that id meanwhile)
                client_id = record.record
                if client_id in self.requests:
                    return CONSUMED  # dropped: it would answer the new request (peer.inflight drops it once sent)
            else:
                client_id = record
                self.requests.close(client_id)
                replay = self.replay
                if replay.init_key is not None and id_key(client_id) == replay.init_key:
                    replay.initialize_answered(message)
            message = {**message, "id": client_id}  # the client's id again
            return self.notes.answer(id_key(client_id), message) if self.notes.any else message
        method = message["method"]
        if "id" not in message:
            params = message.get("params")
            meta = params.get("_meta") if type(params) is dict else None
            if type(meta) is dict and SUBSCRIPTION_ID_KEY in meta:  # a frame of a listen stream (2026-07-28)
                if self.listings.listens and self.listings.listen_frame(message):
                    return CONSUMED  # the guard's own
                return self._client_frame(message, meta)
        if method == "notifications/tools/list_changed":
            self.counted.log(
                logging.INFO, "upstream tools changed; schemas will be listed again before the next judgement"
            )
            self.listings.invalidate()
        elif "id" in message:
            if valid_id(message["id"]):  # a request to the client: under an id of the guard's (server_requests)
                return self.server_requests.to_client(UPSTREAM, message)
        elif method == "notifications/progress":
            self.peer.inflight.progressed(message.get("params"))
        elif method == "notifications/cancelled":
            notice = self.server_requests.cancellation(UPSTREAM, message)
            return CONSUMED if notice is None else notice  # (None: it names no request of the upstream's)
        return message

    def _client_frame(self, message: dict[str, Any], meta: dict[str, Any]) -> Any:
        """A frame of a client's ``subscriptions/listen`` stream (2026-07-28: a notification whose ``_meta``
        ``subscriptionId`` is the listen request's id), stamped by the upstream with the upstream id the
        guard gave that request: stamped again with the client's id, which the client matches it by
        (red team 34: the guard's id reached the client, whose stream never saw its acknowledgement).
        A frame naming no stream of the client's in flight (cancelled, answered, never opened) is dropped."""
        subscription = meta[SUBSCRIPTION_ID_KEY]
        client_id = self.peer.inflight.pending.get(id_key(subscription)) if valid_id(subscription) else None
        if client_id is None:
            self.counted.log(logging.INFO, "dropped a listen stream frame naming no stream of the client's")
            return CONSUMED
        params = message["params"]
        return {**message, "params": {**params, "_meta": {**meta, SUBSCRIPTION_ID_KEY: client_id}}}

    def _upstream_batch(self, batch: list[dict[str, Any]]) -> Any:
        kept = [m for m in (self._upstream_message(m) for m in batch) if m is not CONSUMED]
        return kept or CONSUMED

    async def _timed_out(self, _upstream_id: Any, request_id: Any) -> None:
        """A forwarded request (the client's ``request_id``) outlived ``client_request_timeout``
        (``UpstreamPeer.expire_requests`` gave it up and cancelled it upstream): answered with an error."""
        self.notes.ended(id_key(request_id), "timed_out")
        self.notes.forget(id_key(request_id))
        log.warning(
            "the upstream did not answer a request within %g s; answering it with an error and cancelling it",
            self.client_request_timeout,
        )
        assert self.client_request_timeout is not None
        await self.session.reply(
            error_response(request_id, INTERNAL_ERROR, timed_out_text(self.client_request_timeout))
        )

    # --- client → upstream: the requests forwarded under the guard's own ids --------------------

    async def forward(self, message: Any) -> None:
        """Forward a message (or batch) as the guard parsed it, each request under an upstream id of the
        guard's own (``peer.inflight``); requests it cannot deliver are answered."""
        elements = message if type(message) is list else [message]
        outgoing, started = self._upstream_ids(elements)
        try:
            data = await self._forwarded_data(message, outgoing if type(message) is list else outgoing[0])
        except Uncarriable:
            self.counted.log(logging.WARNING, "refused to forward a message holding a number JSON cannot carry exactly")
            text = (
                "Invalid params: the request holds a number JSON cannot carry exactly (NaN, Infinity, beyond "
                "the double range, or more digits than a double holds); it was not forwarded"
            )
            await self.answer_requests(elements, INVALID_PARAMS, text)
            return
        upstream = self.peer.upstream
        if upstream is None:
            log.warning("could not forward to the upstream: it is not running")
            with anyio.move_on_after(1.0):  # it is ending: its cause is told in a moment (streams.ends)
                await self.peer.ended.wait()
            await self.answer_requests(elements, INTERNAL_ERROR, self.down_text())
            return
        self._mark_inflight(started)
        done = self.peer.ended
        try:
            if isinstance(data, bytes):
                await upstream.send(data)
            elif isinstance(upstream, PipeLineStream):
                await upstream.send(data)  # (text: encoded a slice at a time as the pipe takes it)
            else:
                await upstream.send(str(data).encode("utf-8"))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            log.warning("could not forward to the upstream: it went away")
            with anyio.move_on_after(1.0):  # its end, told in a moment, answers them with its cause
                await done.wait()
            for answer in self.undelivered(elements):
                await self.session.reply(answer)

    def _upstream_ids(self, elements: list[Any]) -> tuple[list[Any], list[tuple[str, dict[str, Any]]]]:
        """``elements`` as they go upstream, each request under a fresh id of the guard's own; and the
        requests with their upstream ids, for :meth:`_mark_inflight`."""
        new_id = self.peer.inflight.new_id
        outgoing: list[Any] = []
        started: list[tuple[str, dict[str, Any]]] = []
        for m in elements:
            if type(m) is dict and "id" in m and "method" in m and valid_id(m["id"]):
                upstream_id = new_id()
                started.append((upstream_id, m))
                m = {**m, "id": upstream_id}
            outgoing.append(m)
        return outgoing, started

    def _mark_inflight(self, started: list[tuple[str, dict[str, Any]]]) -> None:
        """The requests of ``started`` (upstream id, the client's request) are in flight (:meth:`start_request`)."""
        for upstream_id, m in started:
            self.start_request(upstream_id, m)

    def start_request(self, upstream_id: str, request: dict[str, Any]) -> None:
        """The client's ``request`` is in flight (and timed) under ``upstream_id`` (``peer.inflight``), sent to the
        upstream (``client_requests``), before it is sent: should the upstream go away meanwhile, it is answered."""
        client_id = request["id"]
        self.peer.inflight.start(
            id_key(upstream_id), client_id, request["method"], request.get("params"), client=id_key(client_id)
        )
        self.requests.sent(client_id, UPSTREAM)

    def undelivered(self, elements: list[Any]) -> list[dict[str, Any]]:
        """The errors answering the requests among ``elements``, which could not be sent (no longer in flight)."""
        answers = []
        inflight = self.peer.inflight
        for m in elements:
            if type(m) is dict and "id" in m and "method" in m:
                if not valid_id(m["id"]):
                    answers.append(error_response(None, INTERNAL_ERROR, GONE))
                    continue
                upstream_key = inflight.upstream_of(id_key(m["id"]))
                if upstream_key is not None and inflight.take(upstream_key) is not None:
                    self.notes.forget(id_key(m["id"]))
                    answers.append(error_response(m["id"], INTERNAL_ERROR, GONE))
        return answers

    async def answer_requests(self, messages: list[Any], code: int, text: str) -> None:
        for m in messages:
            if type(m) is dict and "id" in m and "method" in m:
                await self.session.reply(error_response(m["id"] if valid_id(m["id"]) else None, code, text))

    def reply_now(self, client: DirectLink, message: dict[str, Any]) -> None:
        """``Session.reply`` without waiting (the line is queued when the client's pipe is full)."""
        if not self.session.goes_out(message):
            return
        try:
            client.send_nowait(dumps(message))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.client_gone()

    def client_gone(self) -> None:
        """The client can no longer be written to (it went away): stop; the upstream is stopped on the way out."""
        if not self.session.client_closed:
            log.info("the client stopped reading; stopping")
        self.session.client_closed = True
        self._stopping = True
        if self.session.tg is not None:
            self.session.tg.cancel_scope.cancel()


def _only_id_differs(out: Any, message: dict[str, Any]) -> bool:
    """Whether ``out`` is ``message`` with another ``id`` and nothing else changed (an answer, its client id back)."""
    if type(out) is not dict or out.keys() != message.keys():
        return False
    for key, value in message.items():  # (a loop, not all() of a generator: every answer on the hot path)
        if out[key] is not value and key != "id":
            return False
    return True
