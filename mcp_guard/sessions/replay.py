"""What waits for ``wrap``'s upstream to start, and what a restarted upstream is told again.

- The backlog: a client message that arrives while no upstream is ready waits for the next start, in order,
  when that start is under way or at most :data:`~mcp_guard.peer.backoff.HOLD_MAX` s away (``peer.connection``
  starts one as soon as the backoff allows); a request that would wait longer is answered at once with an error
  naming the wait (a notification is dropped). When the start fails, the requests waiting for it are answered
  with an error (docs/wrap.md); a start that succeeds takes them in order (``Relay.peer_setup``).
- The handshake era's client state: the session's ``initialize`` (one: a second is refused,
  ``client_routes``), the last ``logging/setLevel`` and the resource subscriptions still held, replayed to a
  restarted upstream (``peer.handshake``), which also gets its tools listed again; the client is told
  ``notifications/tools/list_changed``. The protocol version the upstream answered the ``initialize`` with is the
  session's (:attr:`Replay.negotiated`: ``wrap``'s batch gate).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import anyio

from ..peer.backoff import HOLD_MAX
from ..peer.handshake import handshake as handshake_again
from ..streams.refusal import START_FAILURE_GRACE
from ..wire.jsonrpc import INTERNAL_ERROR, id_key
from .held_calls import drop_cancelled

if TYPE_CHECKING:
    from .upstream_side import UpstreamSide

__all__ = ["Replay"]

log = logging.getLogger("mcp_guard")


class Replay:
    """The start backlog and the replayed client state of one relay's upstream (see the module docstring).

    Args:
        side: the relay's upstream half: its session, peer and tool tables; its routing of a client message
            (``dispatch``), its answers (``answer_requests``, ``down_text``, ``client_answer``).

    Attributes:
        backlog: client messages (or batches) waiting for the next start, in the order read.
        connecting: a connection is being set up, its backlog passed on (``Relay.peer_setup``).
        init_params: the params of the session's ``initialize`` (None: none yet, or the upstream refused it).
        initialize_sent: the session's ``initialize`` was forwarded, and the upstream did not refuse it: another
            is refused (red team 37 F8).
        init_key: the id key of that ``initialize`` until it is answered.
        negotiated: the protocol version the upstream answered it with (None before that answer, or when a
            restarted upstream answered another).
    """

    def __init__(self, side: UpstreamSide) -> None:
        self.side = side
        self.session = side.session
        self.peer = side.peer
        self.listings = side.listings
        self.backlog: list[Any] = []
        self.connecting = False
        self.init_params: Any = None
        self.initialize_sent = False
        self.init_key: tuple[bool, Any] | None = None
        self.negotiated: Any = None
        self._log_level: Any = None
        self._subscriptions: dict[str, Any] = {}

    def initialize_answered(self, message: dict[str, Any]) -> None:
        """The upstream answered the session's ``initialize`` (``message``): its result says the session's protocol
        version; an error leaves the session uninitialized (the client may try again, and nothing is replayed)."""
        self.init_key = None
        result = message.get("result")
        self.negotiated = result.get("protocolVersion") if type(result) is dict else None
        if type(result) is not dict:
            self.init_params, self.initialize_sent = None, False

    def not_restarted(self, reason: str) -> str:
        """The -32603 text for the requests that waited for a start that failed (``reason``), naming the next."""
        wait = self.peer.wait
        text = (
            f"mcp-guard: the upstream server went away and could not be restarted ({reason}); the guard starts it again"
        )
        return text + (f" after {wait:.1f} s" if wait > 0 else "")

    async def restore(self) -> None:
        """Tell a restarted upstream what the client told the first (handshake era); invalidate the tools.

        Raises:
            RequestFailed: the upstream did not accept ``initialize``.
        """
        handshake = self.init_params is not None and not any(
            type(m) is dict and m.get("method") == "initialize" for m in self.backlog
        )
        if handshake:
            peer, subscriptions = self.peer, list(self._subscriptions.values())
            result = await handshake_again(
                peer.request, peer.send_own, self.init_params, log_level=self._log_level, subscriptions=subscriptions
            )
            version = result.get("protocolVersion")
            log.info("initialized the restarted upstream (protocol version %s)", str(version)[:40])
            if version != self.negotiated:
                self.negotiated = None  # (the client agreed on another: nothing that needs one version is sent)
        self.listings.restarted()
        if handshake:
            await self.session.reply({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    async def fail(self, text: str) -> None:
        """Answer every request waiting for a start with -32603 ``text`` (the start failed, or never comes)."""
        backlog, self.backlog = self.backlog, []
        for message in backlog:
            await self.side.answer_requests(message if type(message) is list else [message], INTERNAL_ERROR, text)

    async def while_down(self, message: Any) -> None:
        """A client message while no upstream is ready: hold it for the next start (``peer.connection`` starts
        one as soon as the backoff allows), answer it when that is more than :data:`HOLD_MAX` s away, or drop it."""
        if not message or type(message) not in (dict, list):
            await self.side.dispatch(message)  # answered without the upstream
            return
        elements = message if type(message) is list else [message]
        if type(message) is dict and "method" not in message:
            # The client's answer to a request of the upstream's: only the current upstream can take it.
            if self.peer.upstream is not None:
                await self.side.dispatch(message)
            else:
                self.side.client_answer(message)  # dropped (logged)
            return
        wait = self.peer.wait
        if self.peer.start_failure is not None:  # never started: not started again (``Session.run`` ends)
            # Shielded: the session's task group is cancelled at the failure (``Relay._keep_connected``), and a
            # request read just then lost its answer, the line taken from the client (fault 37 A: the
            # client waited for it until the guard exited). Bounded as ``refuse_for``'s answers are.
            with anyio.move_on_after(START_FAILURE_GRACE, shield=True):
                await self.side.answer_requests(elements, INTERNAL_ERROR, self.side.down_text())
            return
        if self.connecting or wait <= HOLD_MAX:
            cancel = type(message) is dict and message.get("method") == "notifications/cancelled"
            if cancel and self._cancel_waiting(message):
                return
            self.backlog.append(message)
            return
        if not any(type(m) is dict and "method" in m and "id" in m for m in elements):
            log.debug("dropped a client notification: the upstream is not running")
            return
        # Backing off after failed starts: an answer now beats one after up to BACKOFF_MAX seconds.
        text = (
            f"mcp-guard: the upstream server went away and failed to start, or exited soon after starting, "
            f"{self.peer.backoff.failures} time(s) in a row; the guard starts it again in {wait:.1f} s"
        )
        log.info("answered a request with an error at once: the next start of the upstream is %.1f s away", wait)
        await self.side.answer_requests(elements, INTERNAL_ERROR, text)

    def _cancel_waiting(self, message: dict[str, Any]) -> bool:
        """A cancellation of a request waiting for the upstream to start: drop both (``held_calls.drop_cancelled``)."""
        return drop_cancelled(self.backlog, message)

    def track(self, method: str, params: Any, request_id: Any = None) -> None:
        """Note what a restarted upstream must be told again (handshake era), and the id of the client's
        ``initialize`` (``request_id``), whose answer says the session's protocol version (:attr:`negotiated`)."""
        if method == "initialize":
            self.init_params = params
            self.initialize_sent = True
            self.init_key = id_key(request_id)
            self.negotiated = None
        elif method == "logging/setLevel":
            self._log_level = params
        else:
            uri = params.get("uri") if type(params) is dict else None
            key = uri if type(uri) is str else json.dumps(params, sort_keys=True, default=repr)
            if method == "resources/subscribe":
                self._subscriptions[key] = params
            else:
                self._subscriptions.pop(key, None)
