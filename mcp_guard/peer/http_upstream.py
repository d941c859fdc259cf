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
  (``mcp-guard: the upstream answered HTTP 401 Unauthorized …``). Connection failures,
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

The headers of each request (the user's, and the MCP headers of both eras) are built in
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
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
import httpx2

from ..streams.ends import UpstreamStartError
from ..wire.jsonrpc import (
    INTERNAL_ERROR,
    NO_ID,
    Uncarriable,
    dumps,
    error_response,
    id_key,
    loads_upstream,
    recover_id,
    valid_id,
)
from .http_endpoint import (
    CONNECT_TIMEOUT,
    UNREACHABLE,
    WRITE_TIMEOUT,
    Endpoint,
    MessageTooLarge,
    media_type,
    new_client,
)
from .http_faults import (
    BROKE,
    ERROR_BODY_BYTES,
    SESSION_ENDED,
    FaultLog,
    check_url,
    connect_failure,
    describe,
    error_body_answer,
    shown_url,
    status_failure,
    status_meaning,
    status_text,
    too_large,
)
from .http_headers import (
    SESSION_HEADER,
    VERSION_HEADER,
    HeaderMaps,
    learn_header_maps,
    parse_headers,
    post_headers,
    safe_value,
    stream_headers,
)

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
    "shown_url",
]

log = logging.getLogger("mcp_guard")

DEFAULT_MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024
"""Largest incoming message (JSON body or one SSE event), in bytes: twice the 16 MiB every transport must carry."""


DEFAULT_RETRY_SECONDS: Final = 1.0
"""Wait before reopening an event stream when the server named no ``retry``."""

MAX_RETRY_SECONDS: Final = 30.0
"""The longest ``retry`` a server may impose before a stream is reopened."""

RESUME_ATTEMPTS: Final = 3
"""Failed attempts in a row after which a request's broken event stream is given up (the request is answered)."""

LISTEN_ATTEMPTS: Final = 3
"""Failed attempts in a row after which the standalone ``GET`` event stream is given up (logged)."""

INITIALIZE_WAIT: Final = 60.0
"""Seconds a message waits for the answer to the ``initialize`` in flight to begin (it brings the session id)."""

CLOSE_TIMEOUT: Final = 5.0
"""Seconds the session's ``DELETE`` may take on close."""


_INBOX: Final = 16  # messages; senders (the streams being read) wait beyond that


def _label(method: Any) -> str:
    if type(method) is not str:
        return "a response"
    return method[:64] + ("…" if len(method) > 64 else "")


class _Labelled(logging.LoggerAdapter):  # type: ignore[type-arg]
    """``log`` with ``label`` before every message (``"upstream NAME: "``; ``""`` in ``wrap``)."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"{self.extra['label']}{msg}" if self.extra else msg, kwargs

    def __init__(self, logger: logging.Logger, label: str) -> None:
        super().__init__(logger, {"label": label} if label else {})


@dataclass(eq=False)
class _Exchange:
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


class HttpUpstream:
    """An MCP server at a streamable HTTP endpoint, as a stream of JSON-RPC messages.

    Made by :func:`open_http_upstream`. The interface is the relay's upstream stream
    (``framing.MessageStream``):

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
        self._log = _Labelled(log, label)  # serve: every line names its server ("upstream NAME: ")
        self.max_message_bytes = max_message_bytes
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._endpoint = Endpoint(client, url)
        self._shown = shown_url(url)
        self._tg = task_group
        self._inbox_in, self._inbox = anyio.create_memory_object_stream[bytes](_INBOX)
        self._modern_version: str | None = None
        self._initializing: anyio.Event | None = None
        self._exchanges: dict[tuple[bool, Any], _Exchange] = {}
        self._active = 0
        self._order = anyio.Lock()
        self._param_maps: HeaderMaps = {}
        self._listening = False
        self._listen_scope = anyio.CancelScope()
        self._send_closed = False
        self._draining = False
        self._gone = False
        self._closed = False

    # --- the stream interface -----------------------------------------------------------------

    async def receive(self) -> bytes:
        """The next message (or batch) from the upstream, as JSON bytes.

        Raises:
            anyio.EndOfStream: the stream has ended.
        """
        try:
            return await self._inbox.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None

    async def send(self, line: bytes) -> None:
        """POST one message (or batch) to the upstream; see the class docstring.

        Raises:
            anyio.ClosedResourceError: after :meth:`close_send` or :meth:`aclose`.
            anyio.BrokenResourceError: the upstream ended the session.
        """
        if self._send_closed or self._closed:
            raise anyio.ClosedResourceError
        if self._gone:
            raise anyio.BrokenResourceError
        try:
            message: Any = loads_upstream(line)
        except (ValueError, RecursionError):
            message = None
        initializing = self._initializing
        if initializing is not None and not initializing.is_set():
            with anyio.move_on_after(INITIALIZE_WAIT):
                await initializing.wait()
        ids = _request_ids(message)
        if ids:
            self._start_exchange(message, ids, line)
            return
        if type(message) is dict and message.get("method") == "notifications/cancelled" and self._cancel(message):
            return
        async with self._order:
            await self._post_other(message, line)

    async def close_send(self) -> None:
        """No more messages will be sent; the receive side ends once every request in flight is answered."""
        self._send_closed = True
        self._listen_scope.cancel()
        self._drain()

    async def aclose(self) -> None:
        """Stop everything: requests in flight are abandoned, the receive side ends. Idempotent."""
        self._closed = True
        self._send_closed = True
        self._listen_scope.cancel()
        for exchange in list(self._exchanges.values()):
            exchange.scope.cancel()
        self._inbox_in.close()

    # --- sending ------------------------------------------------------------------------------

    def _headers(self, message: Any) -> tuple[dict[str, str], bool]:
        """The MCP headers of a POST carrying ``message``, and whether it is a 2026-07-28 era request."""
        headers, modern, envelope_version = post_headers(
            message,
            session_id=self.session_id,
            protocol_version=self.protocol_version,
            modern_version=self._modern_version,
            header_maps=self._param_maps,
        )
        if envelope_version is not None:
            self._modern_version = envelope_version
        return headers, modern

    def _start_exchange(self, message: Any, ids: dict[tuple[bool, Any], Any], line: bytes) -> None:
        headers, modern = self._headers(message)
        method = message.get("method") if type(message) is dict else "a batch"
        exchange = _Exchange(
            ids=ids,
            method=method,
            modern=modern,
            initialize=method == "initialize",
            with_session=SESSION_HEADER in headers,
        )
        exchange.absorb_tools = exchange.modern and method == "tools/list"
        if exchange.initialize:
            self._initializing = anyio.Event()
            self._param_maps.clear()
        for key in ids:
            self._exchanges[key] = exchange
        self._active += 1
        self._tg.start_soon(self._run_exchange, exchange, line, headers)

    def _cancel(self, message: dict[str, Any]) -> bool:
        """A client's ``notifications/cancelled``: True when it is not to be POSTed.

        In the 2026-07-28 era, closing the request's response stream is the cancellation
        on HTTP; in the handshake era the notification is the signal and is POSTed.
        """
        params = message.get("params")
        request_id = params.get("requestId") if type(params) is dict else None
        exchange = self._exchanges.get(id_key(request_id)) if valid_id(request_id) else None
        if exchange is not None:
            exchange.cancelled = True  # no error for it when its stream ends unanswered
            if exchange.modern:
                exchange.scope.cancel()
                return True
            return False
        return self.protocol_version is None and self._modern_version is not None

    async def _post_other(self, message: Any, line: bytes) -> None:
        """POST a notification or response; the server accepts it (202) or says why not (logged)."""
        headers, _modern = self._headers(message)
        method = message.get("method") if type(message) is dict else None
        label = _label(method)
        try:
            async with self._endpoint.request("POST", headers, line) as response:
                status = response.status_code
                if 200 <= status < 300:
                    if method == "notifications/initialized":
                        self._start_listening()
                    return
                if status == 404 and SESSION_HEADER in headers:
                    self._session_gone()
                    return
                self._status_fault(status)
                self._log.debug("the upstream refused %s (HTTP %s)", label, status_text(status))
        except httpx2.HTTPError as exc:
            self._log.warning("could not deliver %s to the upstream: %s", label, self._describe(exc))

    # --- one request's exchange ---------------------------------------------------------------

    async def _run_exchange(self, exchange: _Exchange, body: bytes, headers: dict[str, str]) -> None:
        try:
            with exchange.scope:
                try:
                    await self._exchange(exchange, body, headers)
                except MessageTooLarge:
                    exchange.failure = self._too_large()
                except httpx2.HTTPError as exc:
                    exchange.failure = self._describe(exc)
        finally:
            for key in list(exchange.ids):
                if self._exchanges.get(key) is exchange:
                    del self._exchanges[key]
            if exchange.initialize and self._initializing is not None:
                self._initializing.set()
            if exchange.ids and not exchange.cancelled and not self._closed:
                text = exchange.failure or "mcp-guard: the upstream closed the response stream before answering"
                why = text.removeprefix("mcp-guard: ")
                if exchange.status_failed:  # (its status was logged once: _status_fault)
                    self._log.debug("the upstream did not answer %s: %s", _label(exchange.method), why)
                else:
                    self.faults.note(self._log, why, f"the upstream did not answer {_label(exchange.method)}: {why}")
                for request_id in exchange.ids.values():
                    await self._push(dumps(error_response(request_id, INTERNAL_ERROR, text)))
            self._active -= 1
            if self._draining:
                self._drain()

    async def _exchange(self, exchange: _Exchange, body: bytes, headers: dict[str, str]) -> None:
        async with self._endpoint.request("POST", headers, body) as response:
            status = response.status_code
            if exchange.initialize:
                session = response.headers.get(SESSION_HEADER)
                if 200 <= status < 300 and session is not None and safe_value(session) and session:
                    self.session_id = session
                if self._initializing is not None:
                    # The session id is known: messages sent meanwhile may go (a server that asks the
                    # client something before its initialize result needs the client's answer).
                    self._initializing.set()
            if status == 202:
                exchange.failure = "mcp-guard: the upstream accepted the request (HTTP 202) but sent no response"
                return
            if not 200 <= status < 300:
                await self._http_error(exchange, response)
                return
            media = media_type(response)
            if media == "application/json":
                await self._deliver(await self._endpoint.read_body(response, self.max_message_bytes))
                return
            if media != "text/event-stream":
                exchange.failure = f"mcp-guard: the upstream answered with the unexpected content type {media[:60]!r}"
                return
            try:
                await self._read_events(response, exchange)
            except httpx2.SSEError:
                raise
            except httpx2.HTTPError as exc:
                self._log.debug("a response stream from the upstream broke: %s", type(exc).__name__)
                exchange.failure = BROKE
        await self._resume(exchange)

    async def _resume(self, exchange: _Exchange) -> None:
        """Reopen a request's event stream that ended unanswered (handshake era, numbered events only)."""
        failures = 0
        while (
            exchange.ids
            and exchange.last_event_id is not None
            and not (exchange.modern or exchange.cancelled or self._closed)
        ):
            await anyio.sleep(exchange.retry if exchange.retry is not None else DEFAULT_RETRY_SECONDS)
            headers = self._stream_headers(exchange.last_event_id)
            seen = exchange.last_event_id
            try:
                async with self._endpoint.request("GET", headers) as response:
                    status = response.status_code
                    if status == 404 and SESSION_HEADER in headers:
                        self._session_gone()
                        exchange.failure = SESSION_ENDED
                        return
                    if status != 200 or media_type(response) != "text/event-stream":
                        exchange.failure = (
                            f"mcp-guard: the upstream's response stream broke and it refused to resume it "
                            f"(HTTP {status_text(status)})"
                        )
                        return
                    await self._read_events(response, exchange)
            except httpx2.SSEError:
                raise
            except httpx2.ConnectError as exc:
                exchange.failure = self._describe(exc)  # the server is gone: nothing to resume
                return
            except httpx2.HTTPError as exc:
                self._log.debug("resuming a response stream failed: %s", type(exc).__name__)
            failures = 0 if exchange.last_event_id != seen else failures + 1
            if failures >= RESUME_ATTEMPTS:
                exchange.failure = "mcp-guard: the upstream's response stream broke and could not be resumed"
                return

    async def _http_error(self, exchange: _Exchange, response: httpx2.Response) -> None:
        """An error status for a request: the server's JSON-RPC error when it sent one, else ours."""
        status = response.status_code
        if status == 404 and exchange.with_session:
            self._session_gone()
            exchange.failure = SESSION_ENDED
            return
        error = None
        if media_type(response) == "application/json":
            with contextlib.suppress(MessageTooLarge, httpx2.HTTPError):
                error = error_body_answer(await self._endpoint.read_body(response, ERROR_BODY_BYTES), exchange.ids)
        self._status_fault(status, error is not None)
        if error is not None:
            with contextlib.suppress(Uncarriable):
                await self._deliver(dumps(error))
            if not exchange.ids:
                return
        exchange.failure = status_failure(status)
        exchange.status_failed = True

    def _status_fault(self, status: int, rpc_error: bool = False) -> None:
        """An HTTP error status from the endpoint: logged once per status (and per whether its body was
        a JSON-RPC error), with what it means (``http_faults.status_meaning``), then counted."""
        shown_status = status_text(status)
        meaning = status_meaning(status, rpc_error)
        passed = " with a JSON-RPC error, passed on to the client" if rpc_error else ""
        first = (
            f"the upstream at {self._shown} answered HTTP {shown_status}{passed}"
            f"{': ' + meaning if meaning else ''} (each status is logged once, then counted)"
        )
        self.faults.note(self._log, f"HTTP {shown_status}{' with a JSON-RPC error' if rpc_error else ''}", first)

    # --- the standalone event stream (handshake era) -------------------------------------------

    def _start_listening(self) -> None:
        if self._listening or self.protocol_version is None or self._send_closed:
            return
        self._listening = True
        self._tg.start_soon(self._listen)

    async def _listen(self) -> None:
        """Read the standalone ``GET`` event stream until closed; reopen it (``Last-Event-ID``) when it drops."""
        stream = _Exchange(ids={}, listener=True)
        failures = 0
        with self._listen_scope:
            while not (self._send_closed or self._gone or self._closed):
                headers = self._stream_headers(stream.last_event_id)
                try:
                    async with self._endpoint.request("GET", headers) as response:
                        status = response.status_code
                        if status == 405:
                            self._log.debug("the upstream offers no standalone event stream (HTTP 405)")
                            return
                        if status == 404 and SESSION_HEADER in headers:
                            self._session_gone()
                            return
                        if status != 200 or media_type(response) != "text/event-stream":
                            self._log.info(
                                "the upstream refused the standalone event stream (HTTP %s)", status_text(status)
                            )
                            return
                        failures = 0
                        await self._read_events(response, stream)
                except httpx2.SSEError as exc:
                    failures += 1
                    if "limit" in str(exc):
                        self._log.warning(
                            "skipped the upstream's event stream: %s", self._too_large().removeprefix("mcp-guard: ")
                        )
                        stream.last_event_id = None  # resuming would replay the same event
                except httpx2.HTTPError as exc:
                    failures += 1
                    self._log.debug("the upstream's standalone event stream broke: %s", type(exc).__name__)
                if failures >= LISTEN_ATTEMPTS:
                    self._log.warning("lost the upstream's standalone event stream; server notifications may be missed")
                    return
                await anyio.sleep(stream.retry if stream.retry is not None else DEFAULT_RETRY_SECONDS)

    # --- receiving ----------------------------------------------------------------------------

    async def _read_events(self, response: httpx2.Response, exchange: _Exchange) -> None:
        """Deliver the ``message`` events of an event stream until it ends or ``exchange`` is answered.

        Raises:
            httpx2.SSEError: an event larger than the cap, or not an event stream.
        """
        source = httpx2.EventSource(response, max_event_size=self.max_message_bytes + 16)
        async for event in source:
            if event.id:
                exchange.last_event_id = event.id
            if event.retry is not None:
                exchange.retry = min(max(event.retry, 0) / 1000, MAX_RETRY_SECONDS)
            if event.event != "message" or not event.data:
                continue  # a priming event (an id, no data), or an event type MCP does not define
            await self._deliver(event.data.encode("utf-8"))
            if not exchange.listener and not exchange.ids:
                return

    async def _deliver(self, data: bytes) -> None:
        """Push one incoming message (or batch) to the receive side; note the requests it answers."""
        try:
            message: Any = loads_upstream(data)
        except (ValueError, RecursionError):
            # Passed on all the same: the relay answers the request it names, if it can find the id.
            request_id = recover_id(data)
            if request_id is not NO_ID and request_id is not None:
                self._answered(id_key(request_id), None)
            await self._push(data)
            return
        for m in message if type(message) is list else [message]:
            if type(m) is dict and "method" not in m and "id" in m and valid_id(m["id"]):
                self._answered(id_key(m["id"]), m)
        await self._push(data)

    def _answered(self, key: tuple[bool, Any], response: dict[str, Any] | None) -> None:
        exchange = self._exchanges.pop(key, None)
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
                self._log.info(
                    "upstream %s speaks protocol %s%s",
                    self._shown,
                    version,
                    " in a session" if self.session_id is not None else "",
                )
            if self._initializing is not None:
                self._initializing.set()
        elif exchange.absorb_tools:
            learn_header_maps(result, self._param_maps)

    async def _push(self, data: bytes) -> None:
        try:
            await self._inbox_in.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._log.debug("dropped a message from the upstream: the stream has ended")

    # --- the end of the stream ----------------------------------------------------------------

    def _drain(self) -> None:
        """End the receive side once no request is in flight (after close_send or the session's end)."""
        self._draining = True
        if self._active == 0:
            self._listen_scope.cancel()
            self._inbox_in.close()

    def _session_gone(self) -> None:
        """The upstream answered 404 for the session: it ended. Everything in flight is answered, then the end."""
        if self._gone:
            return
        self._gone = True
        self.session_id = None
        self._log.warning(
            "the upstream %s ended the session (HTTP 404 for its session id); the connection to it is over",
            self._shown,
        )
        text = SESSION_ENDED
        for exchange in list(self._exchanges.values()):
            if exchange.failure is None:
                exchange.failure = text
            exchange.scope.cancel()
        self._drain()

    async def shutdown(self) -> None:
        """End the session (``DELETE``, at most :data:`CLOSE_TIMEOUT` seconds), then :meth:`aclose`."""
        session = self.session_id
        await self.aclose()
        if session is None or self._gone:
            return
        headers = {SESSION_HEADER: session}
        if self.protocol_version is not None and safe_value(self.protocol_version):
            headers[VERSION_HEADER] = self.protocol_version
        with anyio.move_on_after(CLOSE_TIMEOUT):
            try:
                async with self._endpoint.request("DELETE", headers) as response:
                    if response.status_code == 405:
                        self._log.debug("the upstream does not let clients end sessions (HTTP 405)")
                    elif not 200 <= response.status_code < 300:
                        self._log.debug("ending the upstream session: HTTP %s", status_text(response.status_code))
            except httpx2.HTTPError as exc:
                self._log.debug("ending the upstream session failed: %s", type(exc).__name__)

    # --- HTTP ---------------------------------------------------------------------------------

    def _stream_headers(self, last_event_id: str | None) -> dict[str, str]:
        return stream_headers(self.session_id, self.protocol_version, last_event_id)

    def _describe(self, exc: httpx2.HTTPError) -> str:
        return describe(exc, self._shown, self.max_message_bytes)

    def _too_large(self) -> str:
        return too_large(self.max_message_bytes)


def _request_ids(message: Any) -> dict[tuple[bool, Any], Any]:
    """The requests (with a valid id) in a message or batch: key → id."""
    ids: dict[tuple[bool, Any], Any] = {}
    for m in message if type(message) is list else [message]:
        if type(m) is dict and "method" in m and "id" in m and valid_id(m["id"]):
            ids[id_key(m["id"])] = m["id"]
    return ids


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
            await reach_endpoint(Endpoint(client, url), _Labelled(log, label))
        async with anyio.create_task_group() as tg:
            upstream = HttpUpstream(client, url, tg, max_message_bytes=max_message_bytes, label=label, faults=faults)
            try:
                yield upstream
            finally:
                with anyio.CancelScope(shield=True):
                    await upstream.shutdown()
                tg.cancel_scope.cancel()


async def reach_endpoint(endpoint: Endpoint, logger: _Labelled) -> None:
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
