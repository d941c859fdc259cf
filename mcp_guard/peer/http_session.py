"""One streamable HTTP upstream connection's state and its receive side, shared by its POSTs and event streams.

:class:`UpstreamSession` holds what the two halves of the transport share: the endpoint, the
handshake-era session (``Mcp-Session-Id``, the protocol version) and the 2026-07-28 era's
version and ``Mcp-Param-*`` maps, the exchanges in flight by request id, the inbox the relay
reads, and the flags of the end (``send_closed``, ``gone``, ``closed``). Its methods are the
receive side (:meth:`~UpstreamSession.deliver`: a message from the upstream, whichever
stream brought it, with the requests it answers noted) and the end (:meth:`~UpstreamSession.drain`,
:meth:`~UpstreamSession.session_gone`). The POST exchanges are :mod:`.http_posts`, the event
streams (``GET``, SSE, resumption) :mod:`.http_events`; :mod:`.http_upstream` puts them
together as :class:`~.http_upstream.HttpUpstream`, the relay's line stream.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
import httpx2

from ..wire.jsonrpc import NO_ID, id_key, loads_upstream, recover_id, valid_id
from .http_endpoint import Endpoint
from .http_faults import SESSION_ENDED, FaultLog, describe, shown_url, too_large
from .http_headers import HeaderMaps, learn_header_maps, safe_value, stream_headers

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "Exchange", "Labelled", "UpstreamSession", "method_label", "request_ids"]

log = logging.getLogger("mcp_guard")

DEFAULT_MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024
"""Largest incoming message (JSON body or one SSE event), in bytes: twice the 16 MiB every transport must carry."""

_INBOX: Final = 16  # messages; senders (the streams being read) wait beyond that


def method_label(method: Any) -> str:
    """A message's method for a log line (at most 64 characters), or ``"a response"``."""
    if type(method) is not str:
        return "a response"
    return method[:64] + ("…" if len(method) > 64 else "")


class Labelled(logging.LoggerAdapter):  # type: ignore[type-arg]
    """``log`` with ``label`` before every message (``"upstream NAME: "``; ``""`` in ``wrap``)."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"{self.extra['label']}{msg}" if self.extra else msg, kwargs

    def __init__(self, logger: logging.Logger, label: str) -> None:
        super().__init__(logger, {"label": label} if label else {})


@dataclass(eq=False)
class Exchange:
    """One POST carrying requests (or the standalone event stream, ``listener``), and its state."""

    ids: dict[tuple[bool, Any], Any]
    """Requests not answered yet: key → id as sent."""
    method: Any = None
    modern: bool = False
    initialize: bool = False
    absorb_tools: bool = False
    listener: bool = False
    with_session: bool = False
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    cancelled: bool = False
    failure: str | None = None
    status_failed: bool = False
    """``failure`` is an HTTP error status, logged once per status (``FaultLog``) rather than per request."""
    last_event_id: str | None = None
    retry: float | None = None


def request_ids(message: Any) -> dict[tuple[bool, Any], Any]:
    """The requests (with a valid id) in a message or batch: key → id."""
    ids: dict[tuple[bool, Any], Any] = {}
    for m in message if type(message) is list else [message]:
        if type(m) is dict and "method" in m and "id" in m and valid_id(m["id"]):
            ids[id_key(m["id"])] = m["id"]
    return ids


class UpstreamSession:
    """The state of one connection to a streamable HTTP endpoint, and its receive side.

    Args:
        client: the connection's HTTP client (``http_endpoint.new_client``; its owner closes it).
        url: the endpoint, an ``http(s)`` URL already checked.
        task_group: where the POSTs and event streams run.
        max_message_bytes: the cap on one incoming message, in bytes.
        label: the prefix of its log lines (``"upstream NAME: "`` in ``serve``).
        faults: where failures are counted, to be logged once per kind (``http_faults.FaultLog``).

    Attributes:
        url: the endpoint; ``shown``: it as logs show it (``http_faults.shown_url``).
        max_message_bytes: the cap on one incoming message.
        session_id: the handshake-era session, once the server assigned one (never logged).
        protocol_version: the handshake-era protocol version the server chose, once known.
        modern_version: the 2026-07-28 era version of the last request that carried an envelope.
        initializing: set once the ``initialize`` in flight brought its answer (or failed).
        exchanges: the POSTs in flight, by the key of each request they carry.
        active: POSTs of requests running; ``order``: held while a notification or response is POSTed.
        param_maps: the ``Mcp-Param-*`` header maps learned from ``tools/list`` results.
        listening, listen_scope: the standalone event stream was started; the scope that ends it.
        send_closed, draining, gone, closed: nothing more is sent; the receive side ends once no
            request is in flight; the server ended the session; everything stopped.
        inbox_in, inbox: the receive side (what :meth:`deliver` pushes, what the relay reads).
    """

    def __init__(
        self,
        client: httpx2.AsyncClient,
        url: str,
        task_group: anyio.abc.TaskGroup,
        *,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        label: str = "",
        faults: FaultLog | None = None,
    ) -> None:
        self.url = url
        self.faults = faults if faults is not None else FaultLog()
        self.log = Labelled(log, label)  # serve: every line names its server ("upstream NAME: ")
        self.max_message_bytes = max_message_bytes
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.endpoint = Endpoint(client, url)
        self.shown = shown_url(url)
        self.tg = task_group
        self.inbox_in, self.inbox = anyio.create_memory_object_stream[bytes](_INBOX)
        self.modern_version: str | None = None
        self.initializing: anyio.Event | None = None
        self.exchanges: dict[tuple[bool, Any], Exchange] = {}
        self.active = 0
        self.order = anyio.Lock()
        self.param_maps: HeaderMaps = {}
        self.listening = False
        self.listen_scope = anyio.CancelScope()
        self.send_closed = False
        self.draining = False
        self.gone = False
        self.closed = False

    # --- receiving ----------------------------------------------------------------------------

    async def deliver(self, data: bytes) -> None:
        """Push one incoming message (or batch) to the receive side; note the requests it answers."""
        try:
            message: Any = loads_upstream(data)
        except (ValueError, RecursionError):
            # Passed on all the same: the relay answers the request it names, if it can find the id.
            request_id = recover_id(data)
            if request_id is not NO_ID and request_id is not None:
                self.answered(id_key(request_id), None)
            await self.push(data)
            return
        for m in message if type(message) is list else [message]:
            if type(m) is dict and "method" not in m and "id" in m and valid_id(m["id"]):
                self.answered(id_key(m["id"]), m)
        await self.push(data)

    def answered(self, key: tuple[bool, Any], response: dict[str, Any] | None) -> None:
        exchange = self.exchanges.pop(key, None)
        if exchange is None:
            return
        exchange.ids.pop(key, None)
        if response is None:
            return
        result = response.get("result")
        if type(result) is not dict:
            return
        if exchange.initialize:
            version = result.get("protocolVersion")
            if safe_value(version):
                self.protocol_version = version
                self.log.info(
                    "upstream %s speaks protocol %s%s",
                    self.shown,
                    version,
                    " in a session" if self.session_id is not None else "",
                )
            if self.initializing is not None:
                self.initializing.set()
        elif exchange.absorb_tools:
            learn_header_maps(result, self.param_maps)

    async def push(self, data: bytes) -> None:
        try:
            await self.inbox_in.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.log.debug("dropped a message from the upstream: the stream has ended")

    # --- the end of the stream ----------------------------------------------------------------

    def drain(self) -> None:
        """End the receive side once no request is in flight (after close_send or the session's end)."""
        self.draining = True
        if self.active == 0:
            self.listen_scope.cancel()
            self.inbox_in.close()

    def session_gone(self) -> None:
        """The upstream answered 404 for the session: it ended. Everything in flight is answered, then the end."""
        if self.gone:
            return
        self.gone = True
        self.session_id = None
        self.log.warning(
            "the upstream %s ended the session (HTTP 404 for its session id); the connection to it is over",
            self.shown,
        )
        text = SESSION_ENDED
        for exchange in list(self.exchanges.values()):
            if exchange.failure is None:
                exchange.failure = text
            exchange.scope.cancel()
        self.drain()

    # --- HTTP ---------------------------------------------------------------------------------

    def stream_headers(self, last_event_id: str | None) -> dict[str, str]:
        return stream_headers(self.session_id, self.protocol_version, last_event_id)

    def describe(self, exc: httpx2.HTTPError) -> str:
        return describe(exc, self.shown, self.max_message_bytes)

    def too_large(self) -> str:
        return too_large(self.max_message_bytes)
