"""The POSTs of a streamable HTTP upstream: one per outgoing message, and the answers they bring.

After the MCP specification's "Streamable HTTP" (both eras):

- Each outgoing message is one POST (``Accept: application/json, text/event-stream``) with the
  headers of its era (:mod:`.http_headers`). A POST carrying a request runs in its own task
  (:meth:`Posts.start`), so a slow tool never holds up other requests. Notifications and
  responses are POSTed in the order they are sent, each after the previous one was accepted
  (:meth:`Posts.post_other`, ``202``).
- The answer to a request is ``application/json`` (one message or a batch) or an SSE stream
  (:mod:`.http_events`, resumed there when it breaks). The ``initialize`` answer brings the
  handshake era's session id.
- A 2026-07-28 era ``notifications/cancelled`` aborts its request's POST and is not POSTed
  (:meth:`Posts.cancel`).
- An HTTP error status passes the server's JSON-RPC error on when the body is one; otherwise
  the request is answered with ``-32603`` naming the status (:func:`.http_faults.status_failure`).
  Either way the status is logged once, with what it means (:func:`.http_faults.status_meaning`),
  then counted (:class:`.http_faults.FaultLog`); other failures are logged once per kind.
  ``404`` for the session id ends the session (``UpstreamSession.session_gone``).

The connection's state and receive side are :mod:`.http_session`'s.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import httpx2

from ..wire.jsonrpc import INTERNAL_ERROR, Uncarriable, dumps, error_response, id_key, valid_id
from .http_endpoint import MessageTooLarge, media_type
from .http_events import EventStreams
from .http_faults import (
    BROKE,
    ERROR_BODY_BYTES,
    SESSION_ENDED,
    error_body_answer,
    status_failure,
    status_meaning,
    status_text,
)
from .http_headers import SESSION_HEADER, post_headers, safe_value
from .http_session import Exchange, UpstreamSession, method_label

__all__ = ["Posts"]


class Posts:
    """The POSTs of one connection (``session``: its state and receive side; ``streams``: its event streams)."""

    def __init__(self, session: UpstreamSession, streams: EventStreams) -> None:
        self.session = session
        self.streams = streams

    def _headers(self, message: Any) -> tuple[dict[str, str], bool]:
        """The MCP headers of a POST carrying ``message``, and whether it is a 2026-07-28 era request."""
        headers, modern, envelope_version = post_headers(
            message,
            session_id=self.session.session_id,
            protocol_version=self.session.protocol_version,
            modern_version=self.session.modern_version,
            header_maps=self.session.param_maps,
        )
        if envelope_version is not None:
            self.session.modern_version = envelope_version
        return headers, modern

    def start(self, message: Any, ids: dict[tuple[bool, Any], Any], line: bytes) -> None:
        """POST ``line`` (``message`` parsed, carrying the requests ``ids``: key → id) in a task of its own;
        each request is answered, by the server or with an error (:meth:`_run_exchange`)."""
        headers, modern = self._headers(message)
        method = message.get("method") if type(message) is dict else "a batch"
        exchange = Exchange(
            ids=ids,
            method=method,
            modern=modern,
            initialize=method == "initialize",
            with_session=SESSION_HEADER in headers,
        )
        exchange.absorb_tools = exchange.modern and method == "tools/list"
        if exchange.initialize:
            self.session.initializing = anyio.Event()
            self.session.param_maps.clear()
        for key in ids:
            self.session.exchanges[key] = exchange
        self.session.active += 1
        self.session.tg.start_soon(self._run_exchange, exchange, line, headers)

    def cancel(self, message: dict[str, Any]) -> bool:
        """A client's ``notifications/cancelled``: True when it is not to be POSTed.

        In the 2026-07-28 era, closing the request's response stream is the cancellation
        on HTTP; in the handshake era the notification is the signal and is POSTed.
        """
        params = message.get("params")
        request_id = params.get("requestId") if type(params) is dict else None
        exchange = self.session.exchanges.get(id_key(request_id)) if valid_id(request_id) else None
        if exchange is not None:
            exchange.cancelled = True  # no error for it when its stream ends unanswered
            if exchange.modern:
                exchange.scope.cancel()
                return True
            return False
        return self.session.protocol_version is None and self.session.modern_version is not None

    async def post_other(self, message: Any, line: bytes) -> None:
        """POST a notification or response; the server accepts it (202) or says why not (logged)."""
        headers, _modern = self._headers(message)
        method = message.get("method") if type(message) is dict else None
        label = method_label(method)
        try:
            async with self.session.endpoint.request("POST", headers, line) as response:
                status = response.status_code
                if 200 <= status < 300:
                    if method == "notifications/initialized":
                        self.streams.start_listening()
                    return
                if status == 404 and SESSION_HEADER in headers:
                    self.session.session_gone()
                    return
                self._status_fault(status)
                self.session.log.debug("the upstream refused %s (HTTP %s)", label, status_text(status))
        except httpx2.HTTPError as exc:
            self.session.log.warning("could not deliver %s to the upstream: %s", label, self.session.describe(exc))

    # --- one request's exchange ---------------------------------------------------------------

    async def _run_exchange(self, exchange: Exchange, body: bytes, headers: dict[str, str]) -> None:
        try:
            with exchange.scope:
                try:
                    await self._exchange(exchange, body, headers)
                except MessageTooLarge:
                    exchange.failure = self.session.too_large()
                except httpx2.HTTPError as exc:
                    exchange.failure = self.session.describe(exc)
        finally:
            for key in list(exchange.ids):
                if self.session.exchanges.get(key) is exchange:
                    del self.session.exchanges[key]
            if exchange.initialize and self.session.initializing is not None:
                self.session.initializing.set()
            if exchange.ids and not exchange.cancelled and not self.session.closed:
                text = exchange.failure or "mcp-guard: the upstream closed the response stream before answering"
                why = text.removeprefix("mcp-guard: ")
                if exchange.status_failed:  # (its status was logged once: _status_fault)
                    self.session.log.debug("the upstream did not answer %s: %s", method_label(exchange.method), why)
                else:
                    self.session.faults.note(
                        self.session.log, why, f"the upstream did not answer {method_label(exchange.method)}: {why}"
                    )
                for request_id in exchange.ids.values():
                    await self.session.push(dumps(error_response(request_id, INTERNAL_ERROR, text)))
            self.session.active -= 1
            if self.session.draining:
                self.session.drain()

    async def _exchange(self, exchange: Exchange, body: bytes, headers: dict[str, str]) -> None:
        async with self.session.endpoint.request("POST", headers, body) as response:
            status = response.status_code
            if exchange.initialize:
                session = response.headers.get(SESSION_HEADER)
                if 200 <= status < 300 and session is not None and safe_value(session) and session:
                    self.session.session_id = session
                if self.session.initializing is not None:
                    # The session id is known: messages sent meanwhile may go (a server that asks the
                    # client something before its initialize result needs the client's answer).
                    self.session.initializing.set()
            if status == 202:
                exchange.failure = "mcp-guard: the upstream accepted the request (HTTP 202) but sent no response"
                return
            if not 200 <= status < 300:
                await self._http_error(exchange, response)
                return
            media = media_type(response)
            if media == "application/json":
                await self.session.deliver(
                    await self.session.endpoint.read_body(response, self.session.max_message_bytes)
                )
                return
            if media != "text/event-stream":
                exchange.failure = f"mcp-guard: the upstream answered with the unexpected content type {media[:60]!r}"
                return
            try:
                await self.streams.read_events(response, exchange)
            except httpx2.SSEError:
                raise
            except httpx2.HTTPError as exc:
                self.session.log.debug("a response stream from the upstream broke: %s", type(exc).__name__)
                exchange.failure = BROKE
        await self.streams.resume(exchange)

    async def _http_error(self, exchange: Exchange, response: httpx2.Response) -> None:
        """An error status for a request: the server's JSON-RPC error when it sent one, else ours."""
        status = response.status_code
        if status == 404 and exchange.with_session:
            self.session.session_gone()
            exchange.failure = SESSION_ENDED
            return
        error = None
        if media_type(response) == "application/json":
            with contextlib.suppress(MessageTooLarge, httpx2.HTTPError):
                error = error_body_answer(
                    await self.session.endpoint.read_body(response, ERROR_BODY_BYTES), exchange.ids
                )
        self._status_fault(status, error is not None)
        if error is not None:
            with contextlib.suppress(Uncarriable):
                await self.session.deliver(dumps(error))
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
            f"the upstream at {self.session.shown} answered HTTP {shown_status}{passed}"
            f"{': ' + meaning if meaning else ''} (each status is logged once, then counted)"
        )
        self.session.faults.note(
            self.session.log, f"HTTP {shown_status}{' with a JSON-RPC error' if rpc_error else ''}", first
        )
