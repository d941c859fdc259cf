"""The session: one MCP client (downstream) connection, for ``wrap`` and ``serve`` alike.

Both commands run this one class (issue 23). What a client connection is, whatever stands behind it,
is the session's:

- the client's lines (``client_lines``: big ones parsed and judged off the loop, in order; the stdio hot
  path of small ones, where the routing offers one), from the first to the drain after the client closed;
- the client's requests from intake to answer (``client_requests``): admission (an invalid id, or the id
  of a request still open, is refused with -32600: every request gets exactly one answer, its own), the
  answer that closes each, the answer dropped for a request the client cancelled;
- the client's cancellations (:meth:`Session.withdraw`): a request not sent yet is never sent, a sent one
  is given up under the upstream id of the guard's own it went under, an upstream's own request the
  client gives up is cancelled at that upstream under its own id;
- the upstreams' requests to the client, under ids of the guard's own (``server_requests``), and the
  client's answers to them (:meth:`Session.client_answer`);
- the call pipeline (``calls.pipeline``: the checks of every ``tools/call``, their journal and
  observer), and who sent each request (``auth.principal.Callers``: the HTTP front, OAuth);
- everything the guard itself writes to the client (:meth:`Session.reply`: one writer, a big message made
  off the loop, in order, ``client_writer``).

What stands behind it is its *routing*, chosen at construction (:class:`Routing`):

- ``wrap`` (``relay.Relay``): one upstream, tool names unchanged, everything it does not judge relayed
  byte-faithfully under request ids of the guard's own; the ``initialize`` forwarded and replayed on restart;
- ``serve`` (``gateway.Gateway``): every enabled server of a config, the lists merged and answered by the
  guard, calls routed by name or URI.

The routing decides what a client message means (forwarded, answered, judged first) and keeps the
upstreams; the session keeps the client. Both sit in this folder, one layer (``sessions``).
"""

from __future__ import annotations

import contextlib
import logging
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc

from ..auth.principal import Callers
from ..calls.call import Call
from ..calls.recording import new_call_id
from ..log_counts import LogCounts
from ..peer.offload import Ordered
from ..streams.ends import stop_signal
from ..wire.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, error_response, id_key, invalid_request_text, valid_id
from ..wire.messages import DUPLICATE_ID, stopped_text
from ..wire.meta import PROTOCOL_VERSION_KEY
from .client_lines import read_client_lines
from .client_requests import NOT_OPEN, WAITING, ClientRequests, Ticket
from .client_writer import ClientWriter
from .server_requests import ServerRequests

if TYPE_CHECKING:
    from ..auth.principal import Principal
    from ..calls.call import Route
    from ..calls.pipeline import Pipeline
    from ..core import Compiled
    from ..hosts.listing import ShownTool
    from ..peer.inflight import InFlight
    from ..peer.upstream import LineLink
    from ..streams.pipes import LineHandler

__all__ = ["Routing", "Session", "Withdrawal"]

log = logging.getLogger("mcp_guard")

Key = tuple[bool, Any]

_SERVING: ContextVar[tuple[Any, Key, Ticket] | None] = ContextVar("mcp_guard_serving", default=None)
"""In a task that serves one client request (``serve``'s request tasks: :meth:`Session.serving`): ``(that task's id,
the request's id key, its admission)``. Tasks it starts inherit the value, hence the task's id."""


class Routing(Protocol):
    """What stands behind a :class:`Session`: ``relay.Relay`` (``wrap``) or ``gateway.Gateway`` (``serve``).

    Attributes:
        hot: the stdio hot path's handler of small client lines (``streams.pipes.LineHandler``), or None.
        start_failure: the error :meth:`Session.run` raises once the routing's upstream turned out unable to
            start after :meth:`start` returned, or None.
    """

    @property
    def hot(self) -> LineHandler | None:
        """The stdio hot path's handler of small client lines, or None."""

    @property
    def start_failure(self) -> Exception | None:
        """The error :meth:`Session.run` raises once the upstream turned out unable to start, or None."""

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Start what the routing runs in the session's task group (``wrap``: its upstream's first connection).

        Raises:
            Exception: the routing cannot serve (``wrap``: ``UpstreamStartError``): :meth:`Session.run` raises it.
        """

    async def client_message(self, message: Any) -> None:
        """One parsed client message (or batch), in the order read."""

    def compiled_for(self, params: dict[str, Any]) -> Compiled | None:
        """The schema a ``tools/call`` with ``params`` would be judged by now, or None."""

    async def drain(self) -> None:
        """The client closed its side: answer, bounded, what it asked; stop the upstreams."""

    async def refuse_for(self, failure: Exception) -> None:
        """The routing could not start: answer the client's requests with ``failure`` for a moment."""

    def unready(self) -> list[str]:
        """The names of the upstreams not connected and initialized now (``/ready``)."""

    def inflight_of(self, owner: Any) -> InFlight[Any]:
        """The requests in flight at ``owner`` (an upstream a client request was sent to: ``client_requests``)."""


@dataclass(frozen=True, slots=True)
class Withdrawal:
    """A client's cancellation as it goes upstream (:meth:`Session.withdraw`).

    Attributes:
        owner: the upstream it goes to (``wrap``: ``upstream_side.UPSTREAM``; ``serve``: the ``Link``).
        notice: the ``notifications/cancelled``, naming the request by the id that upstream knows it by.
        given_up: the upstream key (``wire.jsonrpc.id_key``) of the client's request given up, for the routing
            to stop awaiting its answer; None when the client gives up a request of the upstream's own.
    """

    owner: Any
    notice: dict[str, Any]
    given_up: Key | None


class Session:
    """One client connection, served by its :class:`Routing` (see the module docstring).

    Args:
        client: the client's line stream: ``receive()`` raises ``anyio.EndOfStream`` at its end; ``send(line)``.
        pipeline: the checks and records of every ``tools/call`` (``wrap``: ``WRAP_STEPS``; ``serve``: all).

    Attributes:
        requests: the client's open requests, by id (``client_requests``); a sent one's owner is an upstream.
        server_requests: the upstreams' requests to the client, under ids of the guard's own.
        callers: who sent each request (the HTTP front with OAuth: ``auth.principal.Callers``), or None.
        counted: per-message log lines the client or an upstream can trigger at will, bounded.
        intake: the client's big lines, parsed and judged off the loop, in order (``peer.offload``).
        received: while a big client line is handled, ``(its value, the line or None)`` (``client_lines``).
        writer: writes the guard's own messages to the client (``client_writer``).
        tg: the session's task group while :meth:`run` runs.
        client_closed: the client closed its side (or stopped reading).
    """

    def __init__(self, client: LineLink, pipeline: Pipeline) -> None:
        self.client = client
        self.pipeline = pipeline
        self.requests: ClientRequests[Any] = ClientRequests()
        self.server_requests: ServerRequests[Any] = ServerRequests()
        self.callers = client if isinstance(client, Callers) else None
        self.counted = LogCounts()
        self.intake = Ordered()
        self.received: tuple[Any, bytes | str | None] | None = None
        self.writer = ClientWriter(client, log)
        self.tg: anyio.abc.TaskGroup | None = None
        self.client_closed = False

    routing: Routing
    """What stands behind the session (set once, by the routing's constructor: :meth:`attach`)."""

    def attach(self, routing: Routing) -> None:
        """Make ``routing`` the session's (once, from the routing's constructor)."""
        assert not hasattr(self, "routing"), "a session has one routing"
        self.routing = routing

    # --- running ------------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve the client until it closes its side; then drain (the routing answers what is open, bounded,
        and stops its upstreams).

        ``task_status.started()`` is signalled once the routing started (for ``TaskGroup.start``: a first
        connection that fails then raises in the starter: the HTTP front answers the ``initialize`` with it).

        Raises:
            UpstreamStartError (or whatever ``wrap``'s connector raises): the upstream could not be started;
                the client's requests were answered with the cause for a moment first (``Routing.refuse_for``).
        """
        routing = self.routing
        failure: Exception | None = None
        try:
            async with anyio.create_task_group() as tg:
                self.tg = tg
                try:
                    await routing.start(tg)
                except Exception as exc:
                    failure = exc
                    tg.cancel_scope.cancel()
                else:
                    task_status.started()
                    await read_client_lines(self, routing.hot)  # (big lines off the loop, all done before the drain)
                    self.client_closed = True
                    await routing.drain()
                    tg.cancel_scope.cancel()
        finally:
            await self._answer_stopped()
        failure = failure or routing.start_failure
        if failure is not None:
            await routing.refuse_for(failure)
            raise failure

    async def _answer_stopped(self) -> None:
        """The guard was stopped by a signal (``streams.ends.stop_signal``): every request of the client's still
        open (held for a listing, waiting for a start: those forwarded were answered as their upstream was left)
        is answered that it was, within a second, instead of never (red team 37 F1)."""
        stop = stop_signal()
        if stop is None or not self.requests.open_ids():
            return
        held = {id_key(request_id) for request_id in self.requests.waiting()}
        with anyio.CancelScope(shield=True) as scope:
            scope.deadline = anyio.current_time() + 1.0  # (a client that does not read cannot hold the way out)
            for request_id in self.requests.open_ids():
                text = stopped_text(stop, forwarded=id_key(request_id) not in held)
                with contextlib.suppress(Exception):
                    await self.reply(error_response(request_id, INTERNAL_ERROR, text))

    def spawn(self, func: Any, *args: Any) -> None:
        """Run ``func(*args)`` in the session's task group (while :meth:`run` runs), serving no client request
        (:meth:`serving`), whichever task spawns it: an upstream's connection started by a request's task
        outlives that request."""
        assert self.tg is not None
        self.tg.start_soon(_unserved, func, *args)

    def unready(self) -> list[str]:
        """The names of the upstreams not connected and initialized now (``/ready``; ``wrap``: ``["upstream"]``)."""
        return self.routing.unready()

    # --- the client's lines (client_lines.ClientSide) -------------------------------------------

    async def client_message(self, message: Any) -> None:
        """One parsed client message (or batch), in the order read: the routing's."""
        await self.routing.client_message(message)

    def compiled_for(self, params: dict[str, Any]) -> Compiled | None:
        """The schema a ``tools/call`` with ``params`` would be judged by now, or None (``client_lines``)."""
        return self.routing.compiled_for(params)

    def admit(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Admit the client's request ``message`` (it has an ``id``): None, it is open from now on; or the -32600
        error answering it (not admitted).

        JSON-RPC 2.0 section 4: an id is a string or a number (MCP: not null; the guard takes integers only,
        ``wire.jsonrpc.valid_id``); the id of a request still open is refused (``wire.messages.DUPLICATE_ID``):
        the two answers could not be told apart. The refusal does not close the open request of that id.
        """
        request_id = message["id"]
        if not valid_id(request_id):
            return error_response(None, INVALID_REQUEST, invalid_request_text(message))
        if not self.requests.admit(request_id):
            self.counted.log(logging.WARNING, "refused a client request whose id is that of a request still in flight")
            return error_response(request_id, INVALID_REQUEST, DUPLICATE_ID)
        return None

    def serving(self, request_id: Any, ticket: Ticket | None) -> None:
        """The current task serves the client's request ``request_id``, admitted as ``ticket`` (taken when it was
        admitted, before the task started): its answers go out, and it is sent, only while that admission is
        open (:meth:`served`). The client may cancel it meanwhile and send a new request under its id (red
        team 37): the new one is another admission, and this task's answer never reaches it."""
        if ticket is not None:
            _SERVING.set((anyio.get_current_task().id, id_key(request_id), ticket))

    def served(self, request_id: Any) -> Ticket | None:
        """The admission of ``request_id`` the current task serves (:meth:`serving`), or None."""
        serving = _SERVING.get()
        if serving is None or serving[1] != id_key(request_id) or serving[0] != anyio.get_current_task().id:
            return None
        return serving[2]

    def holds(self, request_id: Any) -> bool:
        """Whether the client's request ``request_id`` is still open and waiting: in a task serving it
        (:meth:`serving`), that admission, not a later request under its id (``client_requests``)."""
        ticket = self.served(request_id)
        if ticket is not None:
            return self.requests.holds(request_id, ticket)
        return self.requests.ticket(request_id) is not None

    def principal_of(self, request_id: Any) -> Principal | None:
        """Who sent the request ``request_id`` (OAuth, the HTTP front), or None."""
        return self.callers.principal_of(request_id) if self.callers is not None else None

    # --- the tools/call prelude (both routings) --------------------------------------------------

    def unlisted(self, message: dict[str, Any], name: str | None, server: str = "") -> dict[str, Any]:
        """The answer to the ``tools/call`` ``message`` (a valid id) naming no tool (``name`` None) or one no listing
        has: -32602, as a hidden tool is answered (``Pipeline.unlisted``: logged, counted under ``server``, traced)."""
        request_id = message["id"]
        return self.pipeline.unlisted(name, server, request=(request_id, message.get("params"))).response(request_id)

    def call_of(self, message: dict[str, Any], route: Route, shown: ShownTool | None, call_id: str | None) -> Call:
        """The ``Call`` of the ``tools/call`` ``message`` (a valid id, ``params`` an object) routed by ``route``:
        its arguments (absent: ``{}``), era, caller (:meth:`principal_of`) and the tool as the model host was shown
        it (``--present-for``, or None); its trace opened (``Pipeline.traced``). ``call_id``: the journal's
        (None: a new one; ``wrap`` keeps no journal: ``""``). Judge it with ``Pipeline.check`` (``serve``:
        ``Pipeline.admit``, which journals too)."""
        request_id, params = message["id"], message["params"]
        callers = self.callers  # (inline: the stdio hot path makes every call here)
        principal = None if callers is None else callers.principal_of(request_id)
        meta = params.get("_meta")
        modern = type(meta) is dict and PROTOCOL_VERSION_KEY in meta  # (wire.meta.is_modern)
        call_id = new_call_id() if call_id is None else call_id
        call = Call(route, params.get("arguments", {}), modern, call_id, principal=principal, shown=shown)
        pipeline = self.pipeline
        if pipeline.tracer is not None:
            pipeline.traced(call, request_id, params)
        return call

    def forwarded(self, message: dict[str, Any], call: Call) -> dict[str, Any]:
        """The admitted ``tools/call`` ``message`` as it goes upstream: ``message`` itself when nothing changes
        (``wrap`` relays it as it came), else a copy naming the tool by the upstream's own name (``serve``'s
        routes) and carrying the upstream round trip's trace context in ``_meta`` (``Pipeline.forwarded_params``)."""
        params = message["params"]
        tool = call.route.tool
        if call.trace is None and tool == params.get("name"):
            return message  # (the common call of wrap: as it came)
        out = self.pipeline.forwarded_params(call, params)
        if tool != params.get("name"):
            out = {**out, "name": tool}
        return message if out is params else {**message, "params": out}

    # --- to the client --------------------------------------------------------------------------

    def goes_out(self, message: dict[str, Any], ticket: Ticket | None = None) -> bool:
        """Whether a message of the guard's own goes to the client: an answer closes its request
        (``client_requests``) and is dropped when the client withdrew that request (MCP, cancellation: a
        cancelled request is not answered); anything else goes. ``ticket``: the admission it answers (default:
        the one the current task serves, :meth:`serving`); its answer is dropped once that admission is not
        open, even when a later request has its id."""
        if "method" in message:
            return True
        request_id = message.get("id")
        if ticket is None and _SERVING.get() is not None:
            ticket = self.served(request_id)
        if self.requests.close(request_id, ticket):
            return True
        log.debug("dropped the answer to a request the client cancelled")
        return False

    async def reply(self, message: dict[str, Any] | list[dict[str, Any]]) -> None:
        """Send the client a message of the guard's own (or a batch's answers: :meth:`goes_out` for each).

        A message JSON cannot carry becomes an error, or is dropped (``ClientWriter.write``).
        """
        if isinstance(message, list):
            kept = [m for m in message if self.goes_out(m)]
            if not kept:
                return
            await self.writer.write(kept)
        elif self.goes_out(message):
            await self.writer.write(message)

    # --- the upstreams' requests and the client's cancellations ---------------------------------

    def client_answer(self, message: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None:
        """The client's answer to an upstream's request: ``(that upstream, the answer under its own id)``;
        or None: dropped (logged), when it answers a request of an upstream that went away, or no request the
        client was sent (``server_requests``)."""
        found = self.server_requests.answered(message)
        if found is not None:
            return found
        if self.server_requests.was_gone(message):
            log.info("dropped the client's answer to a request of an upstream that went away")
        else:
            self.counted.log(logging.INFO, "dropped a client answer to no request an upstream sent")
        return None

    def to_client(self, owner: Any, message: dict[str, Any]) -> dict[str, Any]:
        """An upstream's request to the client (sampling, elicitation, roots) under an id of the guard's own."""
        return self.server_requests.to_client(owner, message)

    async def server_requests_gone(self, owner: Any) -> None:
        """The upstream ``owner`` went away: its requests to the client are cancelled there (MCP
        ``notifications/cancelled``); the client's late answers to them are dropped."""
        for client_id in self.server_requests.gone(owner):
            notice = {"requestId": client_id, "reason": "mcp-guard: the upstream server went away"}
            await self.reply({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": notice})

    def withdraw(self, message: dict[str, Any]) -> Withdrawal | None:
        """The client's ``notifications/cancelled`` naming a valid ``requestId``: what goes upstream, or None.

        A request not sent yet is withdrawn (never sent, never answered: ``client_requests``); a sent one is
        named by the upstream id of the guard's own it went under (its late answer then names an id no later
        request has: ``peer.inflight``); the client giving up an upstream's own request names it by that
        upstream's id (``server_requests``). A cancellation naming nothing open is dropped (None).
        """
        params = message["params"]
        request_id = params["requestId"]
        state = self.requests.withdraw(request_id)
        if state is WAITING:
            return None  # (judged, held for a listing, or waiting for a start: it will not be sent)
        if state is NOT_OPEN:
            withdrawn = self.server_requests.withdrawn(request_id)
            if withdrawn is None:
                log.debug("dropped a cancellation naming no request in flight")
                return None
            owner, upstream_id = withdrawn
            return Withdrawal(owner, {**message, "params": {**params, "requestId": upstream_id}}, None)
        upstream_key = self.routing.inflight_of(state).upstream_of(id_key(request_id))
        if upstream_key is None:
            return None  # answered meanwhile (its answer closes it before it goes out)
        return Withdrawal(state, {**message, "params": {**params, "requestId": upstream_key[1]}}, upstream_key)


async def _unserved(func: Any, *args: Any) -> None:
    """``func(*args)`` in a task that serves no client request (:meth:`Session.spawn`)."""
    _SERVING.set(None)
    await func(*args)
