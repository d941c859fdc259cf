"""The upstream over streamable HTTP: one MCP server at a URL, as the relay's message stream.

:func:`open_http_upstream` yields an :class:`HttpUpstream`, which has the line-stream
interface the relay uses for a stdio upstream (``receive``, ``send``, ``close_send``,
``aclose``; see ``framing.MessageStream``). It is era-blind and lossless like the rest of
the relay: messages go out as the bytes the relay serialized and come in as the bytes the
server sent (one message, or one batch, per item). The SDK's transport is not used: it
passes every message through typed models, which drop unknown fields and turn requests
with odd ids into notifications. HTTP is spoken with ``httpx2``, which comes with ``mcp``
(its server-sent-events parser included).

The transport, after the MCP specification's "Streamable HTTP" (2025-03-26 … 2025-11-25
for the handshake era, 2026-07-28 for the other):

- Each outgoing message is one POST (``Accept: application/json, text/event-stream``).
  A POST carrying a request runs in its own task, so a slow tool never holds up other
  requests. Notifications and responses are POSTed in the order they are sent, each
  after the previous one was accepted (``202``), as the SDK's own client does.
- The answer to a request is ``application/json`` (one message or a batch) or an SSE
  stream whose ``message`` events (notifications, server-to-client requests, then the
  response) are delivered in order. The stream is left once every request it carries is
  answered.
- Handshake era: the ``Mcp-Session-Id`` of the ``initialize`` response, and
  ``MCP-Protocol-Version`` from the ``initialize`` result, go on every later request.
  Once ``notifications/initialized`` is accepted, the standalone ``GET`` event stream is
  opened (``405`` means the server offers none) and reopened with ``Last-Event-ID`` when
  it drops. A request's SSE stream that ends before the response is resumed the same
  way (``GET`` with ``Last-Event-ID``, after the server's ``retry`` delay) when the
  server numbered its events; otherwise the request gets an error. The session is
  ``DELETE``d on close.
- 2026-07-28 era (a request whose ``params._meta`` carries
  ``io.modelcontextprotocol/protocolVersion``): that version is the request's
  ``MCP-Protocol-Version``; ``Mcp-Method``, ``Mcp-Name`` and the ``Mcp-Param-*`` headers
  of tools whose ``inputSchema`` carries ``x-mcp-header`` (learned from the
  ``tools/list`` results that pass by) are mirrored from the body, with the SDK's own
  helpers (``mcp.shared.inbound``). No session, no ``GET`` stream, no resumption.
  A ``notifications/cancelled`` for such a request aborts its POST (closing the
  response stream is the cancellation on this wire) and is not POSTed.

Failures never leave a request unanswered and never hang the relay:

- An HTTP error status on a request's POST is passed on as the server's JSON-RPC error
  when the body is one (the 2026-07-28 era answers ``404``/``400`` with such bodies);
  otherwise the request is answered with a JSON-RPC error ``-32603`` naming the status
  (``mcp-guard: the upstream answered HTTP 401 Unauthorized …``). Either way the status is logged
  once, with what it means, then counted (``http_faults.FaultLog``), not once per request. Connection failures,
  a ``202`` for a request, a stream that ends unanswered, an answer larger than the cap
  are answered the same way. Header values never appear in messages or logs.
- ``404`` on a request that carried the session id means the upstream ended the session
  (it restarted, or expired the session). The session cannot be resumed without a new
  ``initialize``, which only the client's side can give: the failing request is
  answered, the other requests in flight are answered, and then the receive side ends
  (``anyio.EndOfStream``), the relay's signal that the upstream is gone. A reconnecting
  relay opens a new upstream, and so a new session.

Sizes and time: one incoming message (a JSON body or one SSE event) may be at most
``max_message_bytes`` (default :data:`DEFAULT_MAX_MESSAGE_BYTES`); a larger one is not
buffered, and the request it answers gets an error. There is no read timeout (tools may
run for hours, and event streams idle): request timeouts are the relay's business.
Connecting may take :data:`CONNECT_TIMEOUT` seconds, one write :data:`WRITE_TIMEOUT`.
The HTTP mechanics (the client, one request and its redirects, a body under a cap) are in
:mod:`.http_endpoint`: redirects are followed only for ``307``/``308`` within the URL's origin
(scheme, host and port), so neither a body nor a header reaches another host.

The modules, by concern: this one puts a connection together (:class:`HttpUpstream`, the
stream interface, the session's end) and makes connections (:func:`open_http_upstream`,
:func:`http_connector`, which reaches the endpoint first: one that cannot be reached raises
``UpstreamStartError``, as a command that cannot start does); :mod:`.http_session` holds a
connection's state and its receive side; :mod:`.http_posts` the POST exchanges;
:mod:`.http_events` the event streams (SSE answers, their resumption, the standalone ``GET``
stream). The headers of each request (the user's, and the MCP headers of both eras) are built in
:mod:`.http_headers`; the texts of failures, and the reading of an HTTP error's body, are in
:mod:`.http_faults` (``parse_headers``, ``check_url``, ``shown_url`` and ``connect_failure``
are re-exported here, the names the commands use). Every body from the upstream is read with
the guard's upstream decoder (``wire.jsonrpc.loads_upstream``), error bodies included.

Not done: JSON-RPC batches are POSTed as they are (servers since 2025-06-18 refuse
them; each request of a refused batch is then answered with the error); the
``Mcp-Param-*`` header map is one per tool name (the last ``tools/list`` in the
2026-07-28 era that named the tool); an ``x-mcp-header`` annotation the SDK finds invalid
mirrors nothing, and the tool is passed on (the specification lets clients on other
transports, such as the guard's stdio client, ignore those annotations).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final

import anyio
import anyio.abc
import httpx2

from ..streams.ends import UpstreamStartError
from ..wire.jsonrpc import loads_upstream
from .http_endpoint import CONNECT_TIMEOUT, UNREACHABLE, WRITE_TIMEOUT, Endpoint, new_client
from .http_events import EventStreams
from .http_faults import FaultLog, check_url, connect_failure, describe, shown_url, status_text
from .http_headers import SESSION_HEADER, VERSION_HEADER, parse_headers, safe_value
from .http_posts import Posts
from .http_session import DEFAULT_MAX_MESSAGE_BYTES, Labelled, UpstreamSession, request_ids

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "WRITE_TIMEOUT",
    "HttpUpstream",
    "check_url",
    "connect_failure",
    "http_connector",
    "open_http_upstream",
    "parse_headers",
    "reach_endpoint",
    "shown_url",
]

log = logging.getLogger("mcp_guard")

INITIALIZE_WAIT: Final = 60.0
"""Seconds a message waits for the answer to the ``initialize`` in flight to begin (it brings the session id)."""

CLOSE_TIMEOUT: Final = 5.0
"""Seconds the session's ``DELETE`` may take on close."""


class HttpUpstream(UpstreamSession):
    """An MCP server at a streamable HTTP endpoint, as a stream of JSON-RPC messages.

    Made by :func:`open_http_upstream` (the arguments are :class:`~.http_session.UpstreamSession`'s).
    The interface is the relay's upstream stream (``framing.MessageStream``):

    - ``receive()``: the next message (or batch) from the upstream, as the JSON bytes the
      server sent; ``anyio.EndOfStream`` once the stream has ended (after
      :meth:`close_send` and the last answer, after the session ended, after
      :meth:`aclose`).
    - ``send(line)``: one JSON-RPC message (or batch) as JSON bytes, without a newline.
      Returns at once for a request (its POST runs in a task of its own), and once the
      server accepted it for a notification or response. Raises
      ``anyio.ClosedResourceError`` after :meth:`close_send`, and
      ``anyio.BrokenResourceError`` after the upstream ended the session.

    Attributes:
        url: the endpoint.
        max_message_bytes: the cap on one incoming message.
        session_id: the handshake-era session, once the server assigned one (never logged).
        protocol_version: the handshake-era protocol version the server chose, once known.
        streams: its event streams (:mod:`.http_events`); posts: its POSTs (:mod:`.http_posts`).
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
        super().__init__(client, url, task_group, max_message_bytes=max_message_bytes, label=label, faults=faults)
        self.streams = EventStreams(self)
        self.posts = Posts(self, self.streams)

    # --- the stream interface -----------------------------------------------------------------

    async def receive(self) -> bytes:
        """The next message (or batch) from the upstream, as JSON bytes.

        Raises:
            anyio.EndOfStream: the stream has ended.
        """
        try:
            return await self.inbox.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None

    async def send(self, line: bytes) -> None:
        """POST one message (or batch) to the upstream; see the class docstring.

        Raises:
            anyio.ClosedResourceError: after :meth:`close_send` or :meth:`aclose`.
            anyio.BrokenResourceError: the upstream ended the session.
        """
        if self.send_closed or self.closed:
            raise anyio.ClosedResourceError
        if self.gone:
            raise anyio.BrokenResourceError
        try:
            message: Any = loads_upstream(line)
        except (ValueError, RecursionError):
            message = None
        initializing = self.initializing
        if initializing is not None and not initializing.is_set():
            with anyio.move_on_after(INITIALIZE_WAIT):
                await initializing.wait()
        ids = request_ids(message)
        if ids:
            self.posts.start(message, ids, line)
            return
        if type(message) is dict and message.get("method") == "notifications/cancelled" and self.posts.cancel(message):
            return
        async with self.order:
            await self.posts.post_other(message, line)

    async def close_send(self) -> None:
        """No more messages will be sent; the receive side ends once every request in flight is answered."""
        self.send_closed = True
        self.listen_scope.cancel()
        self.drain()

    async def aclose(self) -> None:
        """Stop everything: requests in flight are abandoned, the receive side ends. Idempotent."""
        self.closed = True
        self.send_closed = True
        self.listen_scope.cancel()
        for exchange in list(self.exchanges.values()):
            exchange.scope.cancel()
        self.inbox_in.close()

    # --- the end of the stream ----------------------------------------------------------------

    async def shutdown(self) -> None:
        """End the session (``DELETE``, at most :data:`CLOSE_TIMEOUT` seconds), then :meth:`aclose`."""
        session = self.session_id
        await self.aclose()
        if session is None or self.gone:
            return
        headers = {SESSION_HEADER: session}
        if self.protocol_version is not None and safe_value(self.protocol_version):
            headers[VERSION_HEADER] = self.protocol_version
        with anyio.move_on_after(CLOSE_TIMEOUT):
            try:
                async with self.endpoint.request("DELETE", headers) as response:
                    if response.status_code == 405:
                        self.log.debug("the upstream does not let clients end sessions (HTTP 405)")
                    elif not 200 <= response.status_code < 300:
                        self.log.debug("ending the upstream session: HTTP %s", status_text(response.status_code))
            except httpx2.HTTPError as exc:
                self.log.debug("ending the upstream session failed: %s", type(exc).__name__)


@contextlib.asynccontextmanager
async def open_http_upstream(
    url: str,
    headers: Mapping[str, str] | None = None,
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    connect_timeout: float = CONNECT_TIMEOUT,
    label: str = "",
    reach: bool = False,
    faults: FaultLog | None = None,
) -> AsyncIterator[HttpUpstream]:
    """Connect to the streamable HTTP MCP endpoint ``url``; end its session on exit.

    With ``reach`` (the connector's connections), the endpoint is reached first
    (``http_endpoint.Endpoint.reach``: one ``OPTIONS`` request, any HTTP answer will do), and an
    endpoint that cannot be reached at all raises :class:`UpstreamStartError` here, as a command
    that cannot be started does (``wrap`` then exits with status 1). Without it nothing is sent
    until the first message: an unreachable upstream shows as a JSON-RPC error for the first
    request.

    Args:
        url: the MCP endpoint, ``http://`` or ``https://`` (``HTTP_PROXY`` and friends
            apply as usual for httpx).
        headers: extra headers for every HTTP request (e.g. ``Authorization``); see
            :func:`parse_headers`. Their values are never logged.
        max_message_bytes: the cap on one incoming message, in bytes.
        connect_timeout: seconds to establish a connection.
        label: the prefix of its log lines (``"upstream NAME: "`` in ``serve``).
        reach: reach the endpoint before anything else is sent (see above).
        faults: where the failures of its requests are counted, to be logged once per kind
            (a connector's connections share one); None: a new one.

    Raises:
        ValueError: ``url`` is not an http(s) URL, or ``max_message_bytes`` is not positive.
        UpstreamStartError: with ``reach``, no connection to the endpoint could be made (the
            reason: ``cannot reach the upstream at URL: connection refused``).
    """
    check_url(url)
    if max_message_bytes <= 0:
        raise ValueError("max_message_bytes must be positive")
    async with new_client(headers, connect_timeout) as client:
        if reach:
            await reach_endpoint(Endpoint(client, url), Labelled(log, label))
        async with anyio.create_task_group() as tg:
            upstream = HttpUpstream(client, url, tg, max_message_bytes=max_message_bytes, label=label, faults=faults)
            try:
                yield upstream
            finally:
                with anyio.CancelScope(shield=True):
                    await upstream.shutdown()
                tg.cancel_scope.cancel()


async def reach_endpoint(endpoint: Endpoint, logger: Labelled) -> None:
    """Reach ``endpoint`` (``Endpoint.reach``), or raise why it cannot be reached.

    Raises:
        UpstreamStartError: no connection could be made; its text names the URL as
            :func:`shown_url` shows it and the reason (``connection refused``, ``the host name could
            not be resolved (...)``, ``the TLS handshake failed (...)``, ``the connection timed out``).
    """
    shown = shown_url(endpoint.url)
    try:
        status = await endpoint.reach()
    except UNREACHABLE as exc:
        raise UpstreamStartError(describe(exc, shown, 0).removeprefix("mcp-guard: ")) from None
    logger.debug("reached the upstream at %s (OPTIONS: %s)", shown, "no answer" if status is None else status)


def http_connector(
    url: str,
    headers: Mapping[str, str] | None = None,
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    label: str = "",
) -> Callable[[], contextlib.AbstractAsyncContextManager[HttpUpstream]]:
    """A factory of upstream connections to ``url``: each call opens a new one (a new session).
    ``label`` starts its log lines (``"upstream NAME: "`` in ``serve``). Entering a connection
    reaches the endpoint first (:func:`open_http_upstream` with ``reach``): one that cannot be
    reached raises :class:`UpstreamStartError` there, as the stdio connector does for a command
    that cannot start (``peer.connection``: ``wrap``'s first connection then ends the guard with
    status 1; a later one, or ``serve``'s, is tried again after the backoff).

    For a relay that reconnects: ``async with connector() as upstream: ...``.

    Raises:
        ValueError: ``url`` is not an http(s) URL.
    """
    check_url(url)
    options = dict(headers or {})
    faults = FaultLog()

    def connect() -> contextlib.AbstractAsyncContextManager[HttpUpstream]:
        return open_http_upstream(
            url, options, max_message_bytes=max_message_bytes, label=label, reach=True, faults=faults
        )

    return connect
