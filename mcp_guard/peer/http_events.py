"""The event streams of a streamable HTTP upstream: SSE answers, their resumption, the standalone ``GET`` stream.

After the MCP specification's "Streamable HTTP" (2025-03-26 … 2025-11-25, the handshake era):

- :meth:`EventStreams.read_events` delivers the ``message`` events of an SSE stream (a POST's
  answer, or the standalone stream) until it ends or every request it carries is answered,
  noting the last event id and the server's ``retry``.
- :meth:`EventStreams.resume`: a request's stream that ended unanswered is reopened with
  ``GET`` and ``Last-Event-ID`` (after ``retry``, at most :data:`MAX_RETRY_SECONDS`) when the
  server numbered its events; :data:`RESUME_ATTEMPTS` failures in a row without progress give
  it up (the request is answered with an error).
- :meth:`EventStreams.listen`: once ``notifications/initialized`` was accepted, the standalone
  ``GET`` stream is opened (``405``: the server offers none) and reopened when it drops;
  :data:`LISTEN_ATTEMPTS` failures in a row give it up (logged).

Not in the 2026-07-28 era (no session, no ``GET`` stream, no resumption). The connection's
state and receive side are :mod:`.http_session`'s; the POSTs are :mod:`.http_posts`.
"""

from __future__ import annotations

from typing import Final

import anyio
import httpx2

from .http_endpoint import media_type
from .http_faults import SESSION_ENDED, status_text
from .http_headers import SESSION_HEADER
from .http_session import Exchange, UpstreamSession

__all__ = ["DEFAULT_RETRY_SECONDS", "LISTEN_ATTEMPTS", "MAX_RETRY_SECONDS", "RESUME_ATTEMPTS", "EventStreams"]

DEFAULT_RETRY_SECONDS: Final = 1.0
"""Wait before reopening an event stream when the server named no ``retry``."""

MAX_RETRY_SECONDS: Final = 30.0
"""The longest ``retry`` a server may impose before a stream is reopened."""

RESUME_ATTEMPTS: Final = 3
"""Failed attempts in a row after which a request's broken event stream is given up (the request is answered)."""

LISTEN_ATTEMPTS: Final = 3
"""Failed attempts in a row after which the standalone ``GET`` event stream is given up (logged)."""


class EventStreams:
    """The event streams of one connection (``session``: its state and receive side)."""

    def __init__(self, session: UpstreamSession) -> None:
        self.session = session

    async def read_events(self, response: httpx2.Response, exchange: Exchange) -> None:
        """Deliver the ``message`` events of an event stream until it ends or ``exchange`` is answered.

        Raises:
            httpx2.SSEError: an event larger than the cap, or not an event stream.
        """
        source = httpx2.EventSource(response, max_event_size=self.session.max_message_bytes + 16)
        async for event in source:
            if event.id:
                exchange.last_event_id = event.id
            if event.retry is not None:
                exchange.retry = min(max(event.retry, 0) / 1000, MAX_RETRY_SECONDS)
            if event.event != "message" or not event.data:
                continue  # a priming event (an id, no data), or an event type MCP does not define
            await self.session.deliver(event.data.encode("utf-8"))
            if not exchange.listener and not exchange.ids:
                return

    async def resume(self, exchange: Exchange) -> None:
        """Reopen a request's event stream that ended unanswered (handshake era, numbered events only)."""
        failures = 0
        while (
            exchange.ids
            and exchange.last_event_id is not None
            and not (exchange.modern or exchange.cancelled or self.session.closed)
        ):
            await anyio.sleep(exchange.retry if exchange.retry is not None else DEFAULT_RETRY_SECONDS)
            headers = self.session.stream_headers(exchange.last_event_id)
            seen = exchange.last_event_id
            try:
                async with self.session.endpoint.request("GET", headers) as response:
                    status = response.status_code
                    if status == 404 and SESSION_HEADER in headers:
                        self.session.session_gone()
                        exchange.failure = SESSION_ENDED
                        return
                    if status != 200 or media_type(response) != "text/event-stream":
                        exchange.failure = (
                            f"mcp-guard: the upstream's response stream broke and it refused to resume it "
                            f"(HTTP {status_text(status)})"
                        )
                        return
                    await self.read_events(response, exchange)
            except httpx2.SSEError:
                raise
            except httpx2.ConnectError as exc:
                exchange.failure = self.session.describe(exc)  # the server is gone: nothing to resume
                return
            except httpx2.HTTPError as exc:
                self.session.log.debug("resuming a response stream failed: %s", type(exc).__name__)
            failures = 0 if exchange.last_event_id != seen else failures + 1
            if failures >= RESUME_ATTEMPTS:
                exchange.failure = "mcp-guard: the upstream's response stream broke and could not be resumed"
                return

    # --- the standalone event stream (handshake era) -------------------------------------------

    def start_listening(self) -> None:
        """Open the standalone ``GET`` stream in a task of its own (once ``notifications/initialized`` was
        accepted; handshake era only, once, and not after ``close_send``)."""
        if self.session.listening or self.session.protocol_version is None or self.session.send_closed:
            return
        self.session.listening = True
        self.session.tg.start_soon(self._listen)

    async def _listen(self) -> None:
        """Read the standalone ``GET`` event stream until closed; reopen it (``Last-Event-ID``) when it drops."""
        stream = Exchange(ids={}, listener=True)
        failures = 0
        with self.session.listen_scope:
            while not (self.session.send_closed or self.session.gone or self.session.closed):
                headers = self.session.stream_headers(stream.last_event_id)
                try:
                    async with self.session.endpoint.request("GET", headers) as response:
                        status = response.status_code
                        if status == 405:
                            self.session.log.debug("the upstream offers no standalone event stream (HTTP 405)")
                            return
                        if status == 404 and SESSION_HEADER in headers:
                            self.session.session_gone()
                            return
                        if status != 200 or media_type(response) != "text/event-stream":
                            self.session.log.info(
                                "the upstream refused the standalone event stream (HTTP %s)", status_text(status)
                            )
                            return
                        failures = 0
                        await self.read_events(response, stream)
                except httpx2.SSEError as exc:
                    failures += 1
                    if "limit" in str(exc):
                        self.session.log.warning(
                            "skipped the upstream's event stream: %s",
                            self.session.too_large().removeprefix("mcp-guard: "),
                        )
                        stream.last_event_id = None  # resuming would replay the same event
                except httpx2.HTTPError as exc:
                    failures += 1
                    self.session.log.debug("the upstream's standalone event stream broke: %s", type(exc).__name__)
                if failures >= LISTEN_ATTEMPTS:
                    self.session.log.warning(
                        "lost the upstream's standalone event stream; server notifications may be missed"
                    )
                    return
                await anyio.sleep(stream.retry if stream.retry is not None else DEFAULT_RETRY_SECONDS)
