"""uvicorn's HTTP/1.1 protocols for the front, with a deadline and a size cap on each request's headers.

uvicorn offers two HTTP/1.1 parsers: httptools (llhttp, in C) and h11 (pure Python). httptools
costs a fraction of h11's CPU per request (``benchmarks/http_throughput.py``), so the front uses
it where it is installed (``httptools`` is a dependency of mcp-guard on CPython) and h11
otherwise (:func:`header_deadline_protocol`).

Neither bounds a request's headers in time: uvicorn's keep-alive timer stops at a connection's
first byte, so a client sending its headers a byte a second would hold the connection for
ever, and enough such clients every descriptor. Neither bounds them in size either: httptools
(llhttp) buffers a header line of any length, and h11 bounds only a head still incomplete in its
buffer (16 KiB), so a whole head of any size that arrives in one read passes. So both protocols
here put a deadline on each request head (``HttpConfig.header_timeout``): it runs from the
connection's start, and again from the end of each response (the next request on a
kept-alive connection), until the whole request head is in; when it passes first, the client
gets a 408 and the connection is closed (logged at warning, without the client's bytes). Both
also cap the head (request line, headers and the blank line) at :data:`MAX_HEAD_BYTES`: a
longer one, whole or still arriving, is answered 431 and the connection closed, before the app
sees it (its size is counted from the parsed request line and headers, each header as
``name: value`` and CRLF: whitespace the parser drops is not counted), and logged once, by the
guard, without the request's bytes (uvicorn's own line for it is left out: :class:`_UvicornLog`).
The body has its own deadline in the ASGI app (``HttpConfig.body_timeout``).

httptools gives the app a request target's path only; a target that is not a path (absolute
form, ``http://app.test/mcp``) is handed on whole in the scope's ``extensions``
(:data:`.security.REQUEST_TARGET_KEY`), for the app judges its authority as the Host (h11 hands
the whole target on as ``raw_path`` already).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ...errors import GuardError
from .fast import ticker
from .security import REQUEST_TARGET_KEY

__all__ = ["MAX_HEAD_BYTES", "HeadHeld", "head_bytes", "header_deadline_protocol", "httptools_available"]

log = logging.getLogger("mcp_guard")

MAX_HEAD_BYTES: Final = 16 * 1024
"""The cap on one request's head (request line, headers, blank line), in bytes (docs/http-front.md, 16 KiB)."""

_REQUEST_LINE_EXTRA: Final = len(b"  HTTP/1.1\r\n\r\n")
"""The bytes of a head besides its method, target and header lines: two spaces, the version, two CRLFs."""

_HEADERS_TIMED_OUT: Final = (
    "Request Timeout: the request headers did not arrive within {limit:g} s; the connection is closed\n"
)
_HEAD_TOO_LARGE: Final = (
    f"Request Header Fields Too Large: a request head (request line and headers) may hold up to "
    f"{MAX_HEAD_BYTES // 1024} KiB ({MAX_HEAD_BYTES} bytes); the connection is closed\n"
)


class _HeadTooLarge(GuardError):
    """Raised in a parser's callback to stop parsing a request whose head is over :data:`MAX_HEAD_BYTES`."""


def head_bytes(method: bytes, target: bytes, headers: Iterable[tuple[bytes, bytes]]) -> int:
    """The size in bytes of a request head with these parts: ``METHOD SP target SP HTTP/1.1 CRLF``, a
    ``name: value CRLF`` per header and the blank line's CRLF (whitespace a parser dropped is not counted)."""
    size = len(method) + len(target) + _REQUEST_LINE_EXTRA
    for name, value in headers:
        size += len(name) + len(value) + 4
    return size


def _head_too_large(transport: asyncio.BaseTransport) -> None:
    log.warning("closed a connection whose request head exceeds %d bytes", MAX_HEAD_BYTES)
    _close_with(transport, b"431 Request Header Fields Too Large", _HEAD_TOO_LARGE)


def _close_with(transport: asyncio.BaseTransport, status: bytes, text: str) -> None:
    """Write a whole plain-text response with ``Connection: close`` on ``transport``, then close it."""
    body = text.encode("ascii")
    assert isinstance(transport, asyncio.WriteTransport)
    transport.write(
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
        + f"content-length: {len(body)}\r\n\r\n".encode("ascii")
        + body
    )
    transport.close()


def _headers_too_slow(transport: asyncio.BaseTransport, limit: float) -> None:
    log.warning("closed a connection whose request headers did not arrive within %g s", limit)
    _close_with(transport, b"408 Request Timeout", _HEADERS_TIMED_OUT.format(limit=limit))


class _UvicornLog:
    """uvicorn's logger (``uvicorn.error``) as one connection's protocol sees it, without uvicorn's own line
    for a request head the guard refuses as too large: uvicorn logs "Invalid HTTP request received." for
    every request its parser refuses, the guard's cap among them, before it answers (with the guard's
    431); the guard's line (:func:`_head_too_large`: no request bytes) is then the only one. Every other
    line, and every other method, is uvicorn's logger's own."""

    __slots__ = ("_logger", "_too_large")

    def __init__(self, logger: logging.Logger, too_large: Callable[[], bool]) -> None:
        self._logger = logger
        self._too_large = too_large

    def warning(self, msg: object, *args: Any, **kwargs: Any) -> None:
        """uvicorn's warning, unless the request being refused is a head over the cap."""
        if not self._too_large():
            self._logger.warning(msg, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


class _HeadCapped(h11.Connection):
    """h11's server connection that refuses a whole request head over :data:`MAX_HEAD_BYTES` too (h11
    itself refuses only an incomplete one that long); ``too_large`` tells either refusal from others."""

    too_large = False

    def next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        """h11's next event; raises ``h11.RemoteProtocolError`` for a head over the cap (``too_large`` set)."""
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            self.too_large = exc.error_status_hint == 431  # h11's "Receive buffer too long"
            raise
        if type(event) is h11.Request and head_bytes(event.method, event.target, event.headers) > MAX_HEAD_BYTES:
            self.too_large = True
            raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        return event


class _HeaderDeadline(H11Protocol):
    """uvicorn's h11 protocol, with a deadline and a size cap on each request's head (see the module docstring)."""

    header_timeout: float = 30.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.conn = _HeadCapped(h11.SERVER, MAX_HEAD_BYTES)
        self.logger = _UvicornLog(self.logger, lambda: getattr(self.conn, "too_large", False))  # type: ignore[assignment]
        self._arm_header_deadline()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's 400 for a request h11 refuses; a 431 for a head over the cap."""
        conn = self.conn
        if isinstance(conn, _HeadCapped) and conn.too_large:
            _head_too_large(self.transport)
        else:
            super().send_400_response(msg)

    def handle_events(self) -> None:
        super().handle_events()
        if self._header_timer is not None and self.conn.their_state is not h11.IDLE:
            self._header_timer.cancel()  # the request head is in: the body has its own deadline
            self._header_timer = None

    def on_response_complete(self) -> None:
        self._arm_header_deadline()  # first: a pipelined request read below disarms it
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

    def _arm_header_deadline(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        _headers_too_slow(self.transport, self.header_timeout)


_JOIN_LIMIT: Final = 64 * 1024
"""A held response head is joined to a body part of up to this many bytes (a longer one is written after it)."""


class HeadHeld:
    """One response's transport that holds the response head until the body's first write: one write (and
    one ``send``) per whole response, where uvicorn writes the head and the body each on their own.

    Held: the head of a response with a ``Content-Length`` (whose body follows at once, in the
    front's ``fast.respond``); never a ``100 Continue`` nor a chunked head (an SSE stream's head
    goes out at once, before its first event). The head is written with the first body part,
    before a ``close()``, and when the response is complete (a ``HEAD`` request writes no body).
    Everything else is the transport's own.
    """

    __slots__ = ("_head", "_held", "_transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._head: bytes | None = None
        self._held = False

    def write(self, data: bytes) -> None:
        """Write ``data``, after the held head; or hold ``data`` when it is a response head to hold."""
        head = self._head
        if head is not None:
            self._head = None
            if len(data) <= _JOIN_LIMIT:
                self._transport.write(head + data)
                return
            self._transport.write(head)
        elif (
            not self._held
            and data.startswith(b"HTTP/1.1 ")
            and data[9:10] != b"1"
            and b"\r\ncontent-length: " in data
            and b"\r\ntransfer-encoding: " not in data
        ):
            self._held = True
            self._head = data
            return
        self._transport.write(data)

    def flush(self) -> None:
        """Write the held head (if any)."""
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head)

    def close(self) -> None:
        """Write the held head, then close the transport."""
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> object:
        return getattr(self._transport, name)


def _httptools_protocol(header_timeout: float) -> type[asyncio.Protocol] | None:
    """uvicorn's httptools protocol with the deadline and the size cap, or None when httptools is not installed."""
    try:
        import httptools  # noqa: F401  (uvicorn's module imports it too; this names the cause)
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return None

    class HeaderDeadline(HttpToolsProtocol):
        """uvicorn's httptools protocol, with a deadline and a size cap on each request's head.

        The deadline is the loop's :class:`~.fast.Ticker`'s (armed and disarmed once per request,
        so no loop timer each time), so it passes up to :data:`~.fast.TICK` seconds late.
        """

        _armed = False  # the head deadline is set (from the connection's start or a response's end)
        _head_bytes = 0  # bytes received since the current request head began (while it is not whole)
        _too_large = False  # the current request's whole head is over the cap (on_headers_complete)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.logger = _UvicornLog(self.logger, lambda: self._too_large)  # type: ignore[assignment]
            self._ticks = ticker(self.loop)
            self._arm()

        def data_received(self, data: bytes) -> None:
            waiting = self._armed
            super().data_received(data)
            if waiting and self._armed and not self.transport.is_closing():
                # The head is still not whole after this chunk (on_headers_complete disarms the timer).
                self._head_bytes += len(data)
                if self._head_bytes > MAX_HEAD_BYTES:  # an incomplete head, already too large
                    self._disarm()
                    _head_too_large(self.transport)

        def send_400_response(self, msg: str) -> None:
            """uvicorn's 400 for a request llhttp refuses; a 431 for a whole head over the cap."""
            if self._too_large:
                _head_too_large(self.transport)
            else:
                super().send_400_response(msg)

        def on_headers_complete(self) -> None:
            self._disarm()  # the request head is in: the body has its own deadline
            if head_bytes(self.parser.get_method(), self.url, self.headers) > MAX_HEAD_BYTES:
                self._too_large = True  # (uvicorn answers the parser's error with send_400_response)
                raise _HeadTooLarge
            if not self.url.startswith(b"/"):  # absolute form: the app judges its authority (security.py)
                self.scope.setdefault("extensions", {})[REQUEST_TARGET_KEY] = bytes(self.url)  # type: ignore[assignment]
            before = self.cycle
            super().on_headers_complete()
            cycle = self.cycle
            if cycle is not None and cycle is not before:  # (an upgrade request makes none)
                held = HeadHeld(self.transport)
                cycle.transport = held  # type: ignore[assignment]
                done = cycle.on_response

                def on_response() -> None:
                    held.flush()
                    done()

                cycle.on_response = on_response

        def on_response_complete(self) -> None:
            if not self.pipeline:  # a pipelined request's head is in already
                self._arm()
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._head_bytes = 0
            self._armed = True
            self._ticks.add(self, self.loop.time() + header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._armed:
                self._armed = False
                self._ticks.discard(self)

        def _too_slow(self) -> None:
            self._armed = False
            if not self.transport.is_closing():
                _headers_too_slow(self.transport, header_timeout)

    return HeaderDeadline


def httptools_available() -> bool:
    """Whether httptools can be imported (the front then parses HTTP with it)."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return False
    return True


def header_deadline_protocol(header_timeout: float, *, parser: str = "auto") -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol class with a deadline of ``header_timeout`` seconds on each request's headers.

    For ``uvicorn.Config(http=...)``. ``parser``: ``auto`` (httptools when installed, else h11),
    ``httptools`` or ``h11``. A request whose head is not complete in time is answered
    ``408 Request Timeout`` and its connection closed; see the module docstring.

    Raises:
        ValueError: ``parser`` is ``httptools`` and httptools is not installed, or unknown.
    """
    if parser not in ("auto", "httptools", "h11"):
        raise ValueError(f"unknown HTTP parser {parser!r}")
    if parser != "h11":
        protocol = _httptools_protocol(header_timeout)
        if protocol is not None:
            return protocol
        if parser == "httptools":
            raise ValueError("httptools is not installed")

    class HeaderDeadline(_HeaderDeadline):
        pass

    HeaderDeadline.header_timeout = header_timeout
    return HeaderDeadline
