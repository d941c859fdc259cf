"""The stdio hot path of ``wrap``'s client lines: routed, judged and written in the pipe's reader callback.

When the upstream is a pipe stream and the client side a ``pipes.DirectLink`` (a ``pipes.PipeLineStream``:
``wrap`` with a stdio upstream, on asyncio; or the HTTP front's in-memory side, ``fronts.http.direct``), a line
that arrives while the reading task waits is handled in the stream's reader callback
(:meth:`ClientHotPath.line`; the upstream's lines: ``UpstreamSide.peer_line_handler``): parsed, routed and judged
by the same code as the async path (:class:`~.client_routes.ClientRoutes`), and written without waiting, in one
pass of the event loop. A line that needs waiting (the guard's own listing, a restart, a pipe with output queued,
a call held and the messages behind it) or that is not one plain message (a batch, a parse error) is declined
before anything is done and takes the async path (``client_lines.read_client_lines``), in order. See ``pipes``
for why this steps below anyio.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from ..peer.offload import OFFLOAD_MIN, keeps_place
from ..streams.pipes import DirectLink, PipeLineStream
from ..wire.jsonrpc import Spliced, Uncarriable, dumps, forwarded_line, id_key, loads_as_received
from .client_lines import big_line

if TYPE_CHECKING:
    from .relay import Relay

__all__ = ["ClientHotPath"]

log = logging.getLogger("mcp_guard")


class ClientHotPath:
    """The hot path of one relay's client lines (see the module docstring); :meth:`line` is the relay's ``hot``.

    Args:
        relay: the relay whose lines it takes: its state (``ready``, ``held``), its routing (``routes``), and
            its sending (``start_request``, ``reply_now``, ``forward``).
    """

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.session = relay.session
        self.client = relay.client
        self.peer = relay.peer
        self.held = relay.held
        self.listings = relay.listings
        self.notes = relay.notes
        self.routes = relay.routes

    def line(self, line: bytes | str) -> bool:
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
            self.relay.ready
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
        if self.routes.needs_listing(message) or (self.session.intake.busy and keeps_place(message)):
            return False
        # What is forwarded is the line as received when safe, else the message as parsed, serialized (a request
        # under an upstream id of the guard's own, made now: unused when it is not forwarded).
        upstream_id = self.peer.inflight.new_id() if "id" in message and "method" in message else None
        try:
            data = forwarded_line(line, message, as_received, upstream_id)
        except Uncarriable:
            return False
        forward, reply = self.routes.route_now(message)
        if forward is not None:
            if forward is not message:  # a cancellation, naming the request's upstream id
                data = dumps(forward)
            elif upstream_id is not None:
                self.relay.start_request(upstream_id, message)
            self._send_now(upstream, data, forward)
        if reply is not None:
            self.relay.reply_now(client, reply)
        return True

    def _call_now(
        self,
        line: bytes | str,
        message: dict[str, Any],
        as_received: bool,
        upstream: PipeLineStream,
        client: DirectLink,
    ) -> bool:
        """:meth:`line` for a ``tools/call`` with an id (``message``, parsed from ``line``): declined
        (False, nothing done) when its table needs a listing of the guard's own; else admitted, judged and
        forwarded under an upstream id of the guard's own, or answered (True). The one table lookup serves both
        (:meth:`.ClientRoutes.listing_needed`, :meth:`.ClientRoutes.call_verdict`). A call is serialized once
        judged, once: mapped back (--present-for) or traced, what goes is its forward."""
        table = self.listings.table_for(message.get("params"))
        if self.routes.listing_needed(message, table):
            return False
        refusal = self.session.admit(message)
        if refusal is not None:
            self.relay.reply_now(client, refusal)
            return True
        if self.notes.any:  # notes of an earlier request under this id (given up)
            self.notes.forget(id_key(message["id"]))
        forward, reply = self.routes.call_verdict(message, table)
        if forward is None:
            self.relay.reply_now(client, reply)
            return True
        upstream_id = self.peer.inflight.new_id()
        try:
            if forward is message:
                data = forwarded_line(line, message, as_received, upstream_id)
            else:
                data = dumps({**forward, "id": upstream_id})
        except Uncarriable:  # judged already: forward refuses it, saying why (as when declined)
            self.session.intake.submit(partial(self.relay.forward, forward))
            return True
        self.relay.start_request(upstream_id, forward)
        self._send_now(upstream, data, forward)
        return True

    def _send_now(self, upstream: PipeLineStream, data: bytes | str | Spliced, forward: Any) -> None:
        """Write ``data`` (forwarding ``forward``) to the upstream's pipe without waiting (:meth:`_send_failed`)."""
        try:
            upstream.send_nowait(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._send_failed([forward])

    def _send_failed(self, elements: list[Any]) -> None:
        """The hot path could not write ``elements`` (in flight already): as ``UpstreamSide.forward`` does, the end
        of the upstream, told in a moment, answers them with its cause (a start failure: issue 13 item 3); what
        it has not answered within a second is answered then (``UpstreamSide.undelivered``)."""
        log.warning("could not forward to the upstream: it went away")
        if self.session.tg is not None:
            self.session.tg.start_soon(self._undelivered_after, elements, self.peer.ended)

    async def _undelivered_after(self, elements: list[Any], done: anyio.Event) -> None:
        with anyio.move_on_after(1.0):
            await done.wait()
        for answer in self.relay.undelivered(elements):
            await self.session.reply(answer)
