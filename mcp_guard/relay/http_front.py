"""``mcp-guard wrap --http``: the guard as an MCP streamable HTTP server, endpoint ``/mcp``.

The SDK's own HTTP server validates and dispatches every request itself (unknown methods,
``null`` or string arguments never reach a handler unchanged), so it cannot front an
era-blind relay. This is an ASGI application of our own, served by uvicorn, that moves
JSON-RPC messages between HTTP requests and :class:`~mcp_guard.relay.relay.Relay` objects.
The relays do all the judging; this module only carries messages and routes answers.

Wire behaviour (MCP streamable HTTP, revisions 2025-03-26 … 2025-11-25 and 2026-07-28):

- ``POST /mcp`` carries one JSON-RPC message (a batch is refused: 400). A request is
  answered with ``application/json`` when its response is the first thing the upstream
  sends for it within :attr:`HttpConfig.keepalive` seconds, otherwise with a
  ``text/event-stream`` that carries the related notifications and server-to-client
  requests first and ends with the response (SSE comments keep a quiet stream alive).
  A notification or a response posted by the client is answered ``202 Accepted``.
- Handshake era: an ``initialize`` without ``Mcp-Session-Id`` opens a session with an
  upstream process and a relay of its own; the session id comes back in the
  ``Mcp-Session-Id`` header and is required afterwards (400 when missing, 404 when unknown
  or ended). ``GET`` opens the session's standalone SSE stream (one at a time: 409);
  ``DELETE`` ends the session and stops its upstream. A session without any request in
  flight and no GET stream for :attr:`HttpConfig.session_idle_timeout` seconds is ended
  the same way. ``MCP-Protocol-Version``, when present, must be a handshake-era version or
  the one the session negotiated (else 400).
- 2026-07-28 era (no session; the request carries its ``_meta`` envelope and the
  ``MCP-Protocol-Version`` header): every such request goes to one shared upstream process
  and relay. Ids are the clients' own and collide across clients, so the front gives each
  request a fresh upstream id (and progress token) and restores the client's on the way
  back; closing the response stream cancels the request upstream (``notifications/cancelled``).
  The shared upstream is stopped when no 2026-07-28 request has been in flight for
  :attr:`HttpConfig.session_idle_timeout` seconds, and as soon as none is in flight once it
  answered ``server/discover`` with an error other than -32022: it does not speak this era
  (an SDK client's ``mode="auto"`` probe then falls back to ``initialize`` and a session of
  its own). The next 2026-07-28 request starts it again.
  The routing headers are checked against the body as the spec requires of a server
  (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``: ``HeaderMismatch``, 400);
  ``Mcp-Param-*`` headers are not checked. ``GET``/``DELETE`` with a 2026-07-28 version
  header are 405.

Routing upstream output (never a response to the wrong request): a response goes to the
POST that carried its id, within its own session (two sessions may use the same ids; they
have separate relays). A ``notifications/progress`` goes to the request that set its
progress token. Any other message of a handshake-era session goes to the most recent open
request stream, else to the GET stream, else waits (at most :data:`MAX_BACKLOG` messages)
until one opens. In the 2026-07-28 era, a notification tagged with a ``subscriptions/listen``
request's id goes to that request; an untagged one is delivered only when exactly one
request is in flight (logs of concurrent requests cannot be told apart on the upstream's
stdio); server-to-client requests, which that era does not have, are answered -32601.

Security: the listener binds to loopback unless a host is given; ``Host`` and ``Origin``
are checked against DNS rebinding (403); an optional bearer token is compared in constant
time (401). Bodies above :attr:`HttpConfig.max_message_bytes` are refused with 413 before
they are buffered whole; an upstream message above it is replaced by a JSON-RPC error for
its request (or dropped, when it is not a response). The upstream side's line framing has
no cap of its own yet: an upstream can still make the relay buffer one huge line.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import itertools
import logging
import math
import os
import secrets
import shutil
import signal
import socket
import threading
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Final, Protocol, cast
from urllib.parse import urlsplit

import anyio
import anyio.abc
import uvicorn
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from ..core import DEFAULT_PROFILE
from .framing import LineStream
from .guard import PROTOCOL_VERSION_KEY, ToolTable
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    NO_ID,
    PARSE_ERROR,
    Uncarriable,
    dumps,
    error_response,
    id_key,
    loads_client,
    loads_upstream,
    recover_id,
    valid_id,
)
from .relay import Relay, parse_error_text
from .upstream import UpstreamStartError, stdio_connector

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ENDPOINT",
    "HttpConfig",
    "HttpFront",
    "SessionFactory",
    "SessionRunner",
    "is_loopback",
    "parse_listen_address",
    "parse_origin",
    "serve_front",
    "serve_http",
]

log = logging.getLogger("mcp_guard")

ENDPOINT: Final = "/mcp"
"""The MCP endpoint path."""

DEFAULT_MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024
"""Default cap on one message in either direction (bytes): 16 MiB messages pass with room to spare."""

MAX_BACKLOG: Final = 1000
"""Messages of a handshake-era session kept while no stream can take them (oldest dropped first)."""

MAX_TOMBSTONES: Final = 4096
"""Ids of abandoned requests remembered per session, so a late answer is dropped, never misrouted."""

EXCHANGE_BUFFER: Final = 32
"""Messages buffered per open request stream before the relay waits for the HTTP client to read."""

INBOUND_BUFFER: Final = 64
"""Client messages buffered on their way into a relay."""

DISCARD_LIMIT: Final = 64 * 1024 * 1024
"""Bytes of an oversize body read and thrown away so the client can see the 413 (beyond: connection closed)."""

STOP_GRACE_SECONDS: Final = 8.0
"""How long an ended session's relay may drain before it is cancelled (its upstream is stopped either way)."""

REQUEST_CANCELLED: Final = -32800
"""Error code answering a handshake-era request the client cancelled (as the SDK's HTTP server does)."""

METHOD_NOT_FOUND: Final = -32601

_LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "::1")

_Key = tuple[bool, Any]


class HttpConfig(BaseModel):
    """Settings of the HTTP front (see ``mcp-guard wrap --help``).

    Attributes:
        host: address to bind; loopback by default. ``0.0.0.0`` or ``::`` bind every
            interface (the ``Host`` check is then off unless ``allowed_hosts`` is given).
        port: TCP port; 0 picks a free one (the log line ``serving MCP streamable HTTP at
            …`` names it).
        allowed_hosts: ``Host`` header values accepted besides the defaults (the loopback
            names, and the bound host when it is a specific address): ``NAME`` accepts any
            port, ``NAME:PORT`` only that port.
        allowed_origins: ``Origin`` values accepted besides ``http(s)://`` loopback origins:
            ``scheme://name`` (the scheme's default port), ``scheme://name:PORT``, or
            ``scheme://name:*`` for any port, the default one included (see
            :func:`parse_origin`). Requests without ``Origin`` pass.
        token: when set, every request needs ``Authorization: Bearer <token>`` (else 401).
        max_message_bytes: largest message accepted or delivered, in bytes.
        session_idle_timeout: seconds a handshake-era session may stay without a request in
            flight or a GET stream before it is ended (and the shared 2026-07-28 upstream
            without a request in flight before it is stopped); ``None`` never.
        max_sessions: handshake-era sessions (each one an upstream process) open at once;
            more are refused with 503.
        keepalive: seconds a request's answer waits before the front commits to an SSE
            stream, and between SSE keep-alive comments.
        body_timeout: seconds a request body may take to arrive in full, counted from its
            headers; a slower one is answered 408 and its connection closed (a body trickling
            in byte by byte would otherwise hold its connection, and its memory, for ever).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535)
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    token: SecretStr | None = None
    max_message_bytes: int = Field(default=DEFAULT_MAX_MESSAGE_BYTES, ge=1024)
    session_idle_timeout: float | None = Field(default=1800.0, gt=0)
    max_sessions: int = Field(default=100, ge=1)
    keepalive: float = Field(default=15.0, gt=0)
    body_timeout: float = Field(default=30.0, gt=0)

    @field_validator("allowed_origins")
    @classmethod
    def _origins_are_origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            if parse_origin(entry, pattern=True) is None:
                raise ValueError(
                    f"{entry[:100]!r} is not an origin: expected SCHEME://HOST, SCHEME://HOST:PORT or SCHEME://HOST:*"
                )
        return value


def parse_listen_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` as given to ``--http``: ``8080`` and ``:8080`` mean ``127.0.0.1:8080``.

    An IPv6 host is written in brackets (``[::1]:8080``).

    Raises:
        ValueError: no valid port (0–65535), or an empty bracketed host.
    """
    text = text.strip()
    host, port_text = "127.0.0.1", text
    if text.startswith("["):
        end = text.find("]")
        if end < 2 or text[end + 1 : end + 2] != ":":
            raise ValueError(f"expected [IPV6]:PORT, got {text!r}")
        host, port_text = text[1:end], text[end + 2 :]
    elif ":" in text:
        name, _, port_text = text.rpartition(":")
        if name:
            host = name
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"expected [HOST:]PORT with a port from 0 to 65535, got {text!r}")
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is a loopback host: ``localhost``, 127.0.0.0/8, ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    return host in ("", "0.0.0.0", "::")


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


# --- request checks ----------------------------------------------------------------------------


class _Security:
    """``Host``/``Origin`` checks against DNS rebinding, and the bearer token."""

    def __init__(self, config: HttpConfig) -> None:
        self._hosts: list[tuple[str, str | None]] | None = []
        for name in (*_LOOPBACK_NAMES, *([] if _is_wildcard(config.host) else [config.host])):
            self._hosts.append((_host_name(name), None))
        for entry in config.allowed_hosts:
            name, port = _split_host(entry.strip().lower())
            self._hosts.append((name, port))
        if _is_wildcard(config.host) and not config.allowed_hosts:
            self._hosts = None  # any interface, no names given: the Host check cannot know the valid names
        self._origins = [pattern for o in config.allowed_origins if (pattern := parse_origin(o, pattern=True))]
        token = config.token.get_secret_value() if config.token is not None else None
        self._token = token.encode() if token else None

    @property
    def checks_host(self) -> bool:
        """False when bound to every interface without ``allowed_hosts``."""
        return self._hosts is not None

    def refusal(self, headers: Headers) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        """``(status, message, extra headers)`` when the request must be refused, else None."""
        if self._hosts is not None and not self._host_ok(headers.get("host")):
            return 403, "Forbidden: the Host header is not an allowed host (DNS rebinding protection)", []
        origin = headers.get("origin")
        if origin is not None and not self._origin_ok(origin):
            return 403, "Forbidden: the Origin header is not an allowed origin (DNS rebinding protection)", []
        if self._token is not None and not self._token_ok(headers.get("authorization")):
            return 401, "Unauthorized: a valid bearer token is required", [(b"www-authenticate", b"Bearer")]
        return None

    def _host_ok(self, host: str | None) -> bool:
        if not host:
            return False
        name, port = _split_host(host.strip().lower())
        assert self._hosts is not None
        # A Host without a port names the scheme's default one: 80, or 443 behind a TLS proxy.
        ports = (port,) if port is not None else ("80", "443")
        return any(name == n and (p is None or p in ports) for n, p in self._hosts)

    def _origin_ok(self, value: str) -> bool:
        origin = parse_origin(value)
        if origin is None:
            return False
        scheme, host, port = origin
        if scheme in ("http", "https") and host in _LOOPBACK_NAMES:
            return True
        return any(scheme == s and host == h and (p == "*" or p == port) for s, h, p in self._origins)

    def _token_ok(self, authorization: str | None) -> bool:
        assert self._token is not None
        if authorization is None:
            return False
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(value.strip().encode("utf-8", "surrogateescape"), self._token)


_DEFAULT_PORTS: Final = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def parse_origin(text: str, *, pattern: bool = False) -> tuple[str, str, int | str | None] | None:
    """``(scheme, host, port)`` of an ``Origin`` value (RFC 6454), or None when it is not one.

    Scheme and host are lowercased (an IPv6 host without brackets); a port left out is the
    scheme's default (80 for http, 443 for https), so ``http://app.test`` and
    ``http://app.test:80`` are one origin; None when the scheme has no default. With
    ``pattern`` (an ``--allowed-origin`` entry) the port may be ``*`` (any port, the default
    one included) and a trailing ``/`` is tolerated. ``null`` and values with a path, query,
    fragment or user info are not origins.
    """
    text = text.strip().lower()
    wildcard = pattern and text.endswith(":*")
    if wildcard:
        text = text[:-2]
    if pattern and text.endswith("/"):
        text = text[:-1]
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if not parts.scheme or not host or parts.path or parts.query or parts.fragment or "@" in parts.netloc:
        return None
    if wildcard:
        if port is not None:
            return None
        return parts.scheme, host, "*"
    return parts.scheme, host, port if port is not None else _DEFAULT_PORTS.get(parts.scheme)


def _host_name(name: str) -> str:
    name = name.lower()
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def _split_host(value: str) -> tuple[str, str | None]:
    """``(name, port or None)`` of a ``Host`` value or an ``--allowed-host`` entry (IPv6 in brackets)."""
    if value.startswith("["):
        end = value.find("]")
        if end > 0:
            rest = value[end + 1 :]
            return value[: end + 1], rest[1:] if rest.startswith(":") else None
        return value, None
    if value.count(":") > 1:
        return f"[{value}]", None  # a bare IPv6 address given as an allowed host
    name, sep, port = value.partition(":")
    return name, (port if sep else None)


def _accepts(headers: Headers) -> tuple[bool, bool]:
    """``(application/json, text/event-stream)`` acceptance of the ``Accept`` header, wildcards included."""
    types = {part.split(";")[0].strip().lower() for part in headers.get("accept", "").split(",")}
    wildcard = "*/*" in types
    return (
        wildcard or "application/json" in types or "application/*" in types,
        wildcard or "text/event-stream" in types or "text/*" in types,
    )


# --- messages ------------------------------------------------------------------------------------


def _id_key(request_id: Any) -> _Key | None:
    """A map key for a JSON-RPC id (``"1"`` and ``1`` differ, ``1`` and ``1.0`` do not); None if not an id."""
    return id_key(request_id) if valid_id(request_id) else None


def _kind(message: dict[str, Any]) -> str | None:
    """``request``, ``notification``, ``response`` or None (not a JSON-RPC message)."""
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "id" in message and ("result" in message or "error" in message):
        return "response"
    return None


def _envelope_version(message: dict[str, Any]) -> Any:
    """The 2026-07-28 ``_meta`` protocol version of a message, or :data:`NO_ID` when it has none."""
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and PROTOCOL_VERSION_KEY in meta:
        return meta[PROTOCOL_VERSION_KEY]
    return NO_ID


def _error_bytes(request_id: Any, code: int, text: str) -> bytes:
    return dumps(error_response(request_id, code, text))


def _sse_event(data: bytes) -> bytes:
    return b"event: message\r\ndata: " + data + b"\r\n\r\n"


_PING: Final = b": keep-alive\r\n\r\n"


async def _respond(
    send: Send,
    status: int,
    body: bytes = b"",
    headers: Iterable[tuple[bytes, bytes]] = (),
    *,
    content_type: bytes | None = b"application/json",
) -> None:
    head = [(b"content-length", str(len(body)).encode())]
    if content_type is not None and body:
        head.append((b"content-type", content_type))
    head.extend(headers)
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _refuse(
    send: Send,
    status: int,
    text: str,
    headers: Iterable[tuple[bytes, bytes]] = (),
    request_id: Any = None,
    code: int = INVALID_REQUEST,
) -> None:
    """An HTTP error whose body is a JSON-RPC error response (``id`` null unless given)."""
    await _respond(send, status, _error_bytes(request_id, code, text), headers)


@dataclass
class _Item:
    """One message for a request stream: its bytes, whether it is the response, the HTTP status for JSON."""

    data: bytes
    final: bool = False
    status: int = 200


@dataclass
class _Exchange:
    """A POSTed request waiting for its response, or (``client_id`` unused) a session's GET stream."""

    client_id: Any
    progress: _Key | None = None
    initialize: bool = False
    discover: bool = False
    answered: bool = False
    sender: MemoryObjectSendStream[_Item] = field(init=False)
    receiver: MemoryObjectReceiveStream[_Item] = field(init=False)

    def __post_init__(self) -> None:
        self.sender, self.receiver = anyio.create_memory_object_stream[_Item](EXCHANGE_BUFFER)

    async def put(self, item: _Item) -> bool:
        """Queue ``item``; False when the HTTP side is gone (or the stream already ended)."""
        try:
            await self.sender.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        if item.final:
            self.answered = True
            self.sender.close()
        return True

    def offer(self, item: _Item) -> bool:
        """Queue ``item`` if there is room now (never waits); False otherwise."""
        try:
            self.sender.send_nowait(item)
        except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        if item.final:
            self.answered = True
            self.sender.close()
        return True

    async def next(self) -> _Item | None:
        """The next item, or None when the stream ended without one."""
        try:
            return await self.receiver.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return None


class _RelayClientSide:
    """The relay's downstream side, shaped like :class:`~mcp_guard.relay.framing.LineStream`.

    ``receive()`` yields the messages the HTTP requests put in (each a whole JSON text, no
    framing, so any size passes unchanged); ``send(line)`` hands relay output to the
    front's router.
    """

    def __init__(self, deliver: Callable[[bytes], Awaitable[None]]) -> None:
        self._deliver = deliver
        self._in, self._out = anyio.create_memory_object_stream[bytes](INBOUND_BUFFER)

    async def receive(self) -> bytes:
        """The next client message; ``anyio.EndOfStream`` once the session ended."""
        try:
            return await self._out.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None

    async def send(self, line: bytes) -> None:
        """Route one message of relay output."""
        await self._deliver(line)

    async def close_send(self) -> None:
        """Nothing to close: output goes to the router."""

    async def aclose(self) -> None:
        """Close the inbound queue."""
        self._in.close()
        self._out.close()

    async def put(self, line: bytes) -> bool:
        """Give the relay one client message; False when the relay no longer reads."""
        try:
            await self._in.send(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True

    def end(self) -> None:
        """No more client messages: the relay sees EOF (the MCP way to end a session)."""
        self._in.close()

    def close(self) -> None:
        """The relay is gone: senders waiting to put a message fail at once."""
        self._in.close()
        self._out.close()


class SessionRunner(Protocol):
    """What serves one client session behind the front: a :class:`Relay`, or a gateway session.

    ``run`` relays until the client side ends; it signals ``task_status.started()`` once it
    serves (a failure before that, such as an upstream that cannot start, is raised to the
    front, which answers the ``initialize`` with an error).
    """

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve until the client side ends."""
        ...


SessionFactory = Callable[[LineStream], SessionRunner]
"""Builds the runner of one session from its in-memory client line stream."""


def _make_relay(front: HttpFront, client: _RelayClientSide) -> SessionRunner:
    """The one place the front builds what serves a session: the front's session factory, or a
    relay with its own upstream connector and tool table.

    The upstream process is started when the relay runs, and started again by the relay
    when it goes away (see ``relay``, "Upstream faults").
    """
    from .stdio import DEFAULT_GUARD_REQUEST_TIMEOUT

    if front.session_factory is not None:
        return front.session_factory(cast(LineStream, client))

    table = ToolTable(front.profile, hide_unsupported=front.hide_unsupported)
    timeout = front.request_timeout
    # The relay reads and writes through the LineStream interface only; the client side is in memory.
    return Relay(
        cast(LineStream, client),
        stdio_connector(front.command, max_line=front.config.max_message_bytes),
        table,
        request_timeout=timeout if timeout is not None else DEFAULT_GUARD_REQUEST_TIMEOUT,
        client_request_timeout=timeout,
    )


# --- channels: one relay and the HTTP requests that talk to it ---------------------------------------


class _Channel:
    """One relay (and upstream process) and the routing of its output to HTTP requests."""

    label = "channel"

    def __init__(self, front: HttpFront) -> None:
        self.front = front
        self.client = _RelayClientSide(self._deliver)
        self.pending: dict[_Key, _Exchange] = {}
        self.closed = False
        self.done = anyio.Event()
        self.scope = anyio.CancelScope()
        self.active = 0
        self.idle_scope = anyio.CancelScope(deadline=math.inf)
        self._idle_timeout = front.config.session_idle_timeout
        self._end_reason: str | None = None

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the relay until the client side ends or the upstream goes away.

        Raises:
            UpstreamStartError: before ``task_status.started()``, when the upstream cannot start.
        """
        try:
            with self.scope:
                relay = _make_relay(self.front, self.client)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._watch)
                    await relay.run(task_status=task_status)
                    tg.cancel_scope.cancel()
        finally:
            self._finish()

    # --- activity and idle timeout ---------------------------------------------------------------

    def enter(self) -> None:
        """A request (or a GET stream) is being served: the idle timer stops."""
        self.active += 1
        self.idle_scope.deadline = math.inf

    def leave(self) -> None:
        """A request (or a GET stream) is done: the idle timer restarts when none is left.

        A channel asked to end once idle (:meth:`end_when_idle`) ends now.
        """
        self.active -= 1
        if self.active == 0:
            if self._end_reason is not None:
                self.idle_scope.deadline = anyio.current_time()
            elif self._idle_timeout is not None:
                self.idle_scope.deadline = anyio.current_time() + self._idle_timeout

    def end_when_idle(self, reason: str) -> None:
        """End the channel (and stop its upstream) as soon as nothing is in flight; ``reason`` is logged."""
        if self._end_reason is None:
            self._end_reason = reason
        if self.active == 0:
            self.idle_scope.deadline = anyio.current_time()

    async def _watch(self) -> None:
        """Side task of a running channel: end it after ``session_idle_timeout`` idle seconds, or when asked."""
        if self.active == 0 and self._idle_timeout is not None and self.idle_scope.deadline == math.inf:
            self.idle_scope.deadline = anyio.current_time() + self._idle_timeout
        with self.idle_scope:
            await anyio.sleep_forever()
        if self.idle_scope.cancelled_caught:
            if self._end_reason is not None:
                log.info("%s: %s; ending it", self.label, self._end_reason)
            else:
                log.info("%s idle for %g s; ending it", self.label, self._idle_timeout)
            self._end()

    def _end(self) -> None:
        """End the channel (idle, or asked to): its upstream stops."""
        self.stop()

    def stop(self) -> None:
        """End the channel: the relay gets EOF and drains; after :data:`STOP_GRACE_SECONDS` it is cancelled."""
        if not self.closed:
            self.closed = True
            log.debug("%s ending", self.label)
        self.client.end()
        self.scope.deadline = min(self.scope.deadline, anyio.current_time() + STOP_GRACE_SECONDS)

    def _finish(self) -> None:
        """The relay is gone: every open request stream ends (its handler answers an error)."""
        self.closed = True
        self.client.close()
        for exchange in self.pending.values():
            exchange.sender.close()
        self.pending.clear()
        self.done.set()

    async def submit(self, data: bytes) -> bool:
        """Give the relay one client message; False when the channel has ended."""
        if self.closed:
            return False
        return await self.client.put(data)

    # --- routing relay output -------------------------------------------------------------------

    async def _deliver(self, line: bytes) -> None:
        try:
            message = loads_upstream(line)
        except (ValueError, RecursionError):  # the relay writes JSON only; defensive
            log.warning("dropped relay output that is not JSON (%d bytes)", len(line))
            return
        if type(message) is list:
            for element in message:
                if type(element) is dict:
                    await self._route(element, None)
        elif type(message) is dict:
            await self._route(message, line)

    async def _route(self, message: dict[str, Any], raw: bytes | None) -> None:
        if "method" in message:
            await self._route_other(message, raw)
            return
        if "id" not in message:
            return
        key = _id_key(message["id"])
        exchange = self.pending.pop(key, None) if key is not None else None
        if exchange is None:
            self._unmatched(key)
            return
        if exchange.progress is not None:
            self._forget_progress(exchange)
        data = self._answer_bytes(message, raw, exchange)
        if len(data) > self.front.config.max_message_bytes:
            log.warning(
                "an answer of %d bytes exceeds the message limit of %d bytes; answering an error instead",
                len(data),
                self.front.config.max_message_bytes,
            )
            text = (
                f"mcp-guard: the upstream's answer ({len(data)} bytes) exceeds the HTTP front's message limit of "
                f"{self.front.config.max_message_bytes} bytes (--max-message-bytes)"
            )
            data = _error_bytes(exchange.client_id, INTERNAL_ERROR, text)
            message = {"error": {"code": INTERNAL_ERROR}}
        status = self._status(message)
        if exchange.initialize:
            self._note_initialize(message)
        if exchange.discover:
            self._note_discover(message)
        if not await exchange.put(_Item(data, final=True, status=status)):
            log.debug("the client of a request went away before its answer arrived; answer dropped")

    def _answer_bytes(self, message: dict[str, Any], raw: bytes | None, exchange: _Exchange) -> bytes:
        return raw if raw is not None else dumps(message)

    def _status(self, message: dict[str, Any]) -> int:
        return 200

    def _note_initialize(self, message: dict[str, Any]) -> None:
        """The response to ``initialize`` went by (handshake sessions note the negotiated version)."""

    def _note_discover(self, message: dict[str, Any]) -> None:
        """The response to ``server/discover`` went by (the 2026-07-28 channel judges the upstream's era)."""

    def _forget_progress(self, exchange: _Exchange) -> None:
        """The request of ``exchange`` is answered: its progress token is no longer routed."""

    def _unmatched(self, key: _Key | None) -> None:
        log.warning("dropped an upstream response whose id matches no request in flight")

    async def _route_other(self, message: dict[str, Any], raw: bytes | None) -> None:
        raise NotImplementedError

    def _too_big(self, data: bytes) -> bool:
        if len(data) <= self.front.config.max_message_bytes:
            return False
        log.warning(
            "dropped an upstream message of %d bytes: it exceeds the message limit of %d bytes",
            len(data),
            self.front.config.max_message_bytes,
        )
        return True


class _Session(_Channel):
    """A handshake-era session: opened by ``initialize``, one upstream process, ids as the client sent them."""

    def __init__(self, front: HttpFront, session_id: str) -> None:
        super().__init__(front)
        self.session_id = session_id
        self.label = f"session {session_id[:8]}…"
        self.header = [(b"mcp-session-id", session_id.encode())]
        self.negotiated: str | None = None
        self.get_stream: _Exchange | None = None
        self.backlog: deque[bytes] = deque()
        self.tombstones: OrderedDict[_Key, None] = OrderedDict()
        self.progress: dict[_Key, _Exchange] = {}

    def _end(self) -> None:
        self.front.end_session(self)

    # --- requests --------------------------------------------------------------------------------

    def register(self, message: dict[str, Any]) -> _Exchange | None:
        """The stream for a request; None when its id is in flight or was abandoned in this session."""
        key = _id_key(message["id"])
        assert key is not None
        if key in self.pending or key in self.tombstones:
            return None
        exchange = _Exchange(message["id"], initialize=message.get("method") == "initialize")
        token = _progress_token(message)
        if token is not None:
            exchange.progress = _id_key(token)
            if exchange.progress is not None:
                self.progress.setdefault(exchange.progress, exchange)
        self.pending[key] = exchange
        return exchange

    def abandon(self, exchange: _Exchange) -> None:
        """The HTTP request went away unanswered; a late answer will be dropped (not a cancellation)."""
        key = _id_key(exchange.client_id)
        if key is not None and self.pending.get(key) is exchange:
            del self.pending[key]
            self._forget_progress(exchange)
            self._tombstone(key)
        if exchange.initialize and not exchange.answered:
            log.info("%s: the initialize request went away unanswered; ending the session", self.label)
            self.front.end_session(self)

    async def cancelled(self, message: dict[str, Any]) -> None:
        """A client's ``notifications/cancelled``: the request's stream ends with -32800 now."""
        params = message.get("params")
        key = _id_key(params.get("requestId")) if type(params) is dict else None
        exchange = self.pending.pop(key, None) if key is not None else None
        if exchange is None:
            return
        assert key is not None
        self._forget_progress(exchange)
        self._tombstone(key)
        data = _error_bytes(exchange.client_id, REQUEST_CANCELLED, "Request cancelled")
        if not exchange.offer(_Item(data, final=True)):
            exchange.sender.close()  # its stream is full: the handler ends it with a generic error

    def _tombstone(self, key: _Key) -> None:
        self.tombstones[key] = None
        while len(self.tombstones) > MAX_TOMBSTONES:
            self.tombstones.popitem(last=False)

    def _unmatched(self, key: _Key | None) -> None:
        if key is not None and key in self.tombstones:
            del self.tombstones[key]
            log.debug("%s: dropped a late answer to an abandoned or cancelled request", self.label)
        else:
            super()._unmatched(key)

    def _forget_progress(self, exchange: _Exchange) -> None:
        if exchange.progress is not None and self.progress.get(exchange.progress) is exchange:
            del self.progress[exchange.progress]

    def _note_initialize(self, message: dict[str, Any]) -> None:
        result = message.get("result")
        if type(result) is not dict:
            # Refused (by the upstream or the guard): no session was opened. The error goes out
            # without the session id (the header list is the one this answer is sent with), the
            # id answers 404 from now on, and the upstream stops.
            log.info("%s: initialize was answered with an error; ending the session", self.label)
            self.header.clear()
            self.front.end_session(self)
            return
        version = result.get("protocolVersion")
        if type(version) is str:
            self.negotiated = version

    def version_ok(self, header: str | None) -> bool:
        """Whether an ``MCP-Protocol-Version`` header is acceptable in this session."""
        return header is None or header in HANDSHAKE_PROTOCOL_VERSIONS or header == self.negotiated

    # --- everything but responses -------------------------------------------------------------------

    async def _route_other(self, message: dict[str, Any], raw: bytes | None) -> None:
        data = raw if raw is not None else dumps(message)
        if self._too_big(data):
            return
        if message.get("method") == "notifications/progress":
            params = message.get("params")
            key = _id_key(params.get("progressToken")) if type(params) is dict else None
            exchange = self.progress.get(key) if key is not None else None
            if exchange is not None and await exchange.put(_Item(data)):
                return
        for exchange in list(itertools.islice(reversed(self.pending.values()), 4)):
            if await exchange.put(_Item(data)):
                return
        if self.get_stream is not None and await self.get_stream.put(_Item(data)):
            return
        self.backlog.append(data)
        if len(self.backlog) > MAX_BACKLOG:
            self.backlog.popleft()
            log.warning("%s: no stream open for server messages; dropped the oldest waiting one", self.label)

    def flush_backlog(self, exchange: _Exchange) -> None:
        """Give a new request stream the messages that waited for a stream, as many as fit now."""
        while self.backlog and exchange.offer(_Item(self.backlog[0])):
            self.backlog.popleft()

    def _finish(self) -> None:
        if self.get_stream is not None:
            self.get_stream.sender.close()
        self.progress.clear()
        super()._finish()
        self.front.forget_session(self)


class _ModernChannel(_Channel):
    """The shared channel of 2026-07-28 requests: the front gives each request an id of its own upstream."""

    label = "2026-07-28 channel"

    def __init__(self, front: HttpFront) -> None:
        super().__init__(front)
        self._counter = 0
        self._tokens: dict[_Key, Any] = {}

    def register(self, message: dict[str, Any], body: bytes) -> tuple[_Exchange, _Key, bytes]:
        """The stream for a request, its key, and the message as the relay gets it (fresh id and progress token)."""
        self._counter += 1
        upstream_id = self._counter
        exchange = _Exchange(message["id"], discover=message.get("method") == "server/discover")
        out = dict(message)
        out["id"] = upstream_id
        token = _progress_token(message)
        if token is not None:
            params = message["params"]
            out["params"] = {**params, "_meta": {**params["_meta"], "progressToken": upstream_id}}
            exchange.progress = (False, upstream_id)
            self._tokens[exchange.progress] = token
        try:
            data = dumps(out)
        except Uncarriable:
            # The relay refuses any message holding a number JSON cannot carry, so this one is never
            # forwarded: only its id must be the relay's. A JSON object's last duplicate key wins.
            data = body.rstrip(b" \t\r\n")[:-1] + b',"id":' + str(upstream_id).encode() + b"}"
        key = (False, upstream_id)
        self.pending[key] = exchange
        return exchange, key, data

    async def abandon(self, exchange: _Exchange, upstream_key: _Key) -> None:
        """The client closed the response stream: in this era that cancels the request upstream."""
        if self.pending.get(upstream_key) is not exchange:
            return
        del self.pending[upstream_key]
        self._forget_progress(exchange)
        notice = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": upstream_key[1], "reason": "the client closed the response stream"},
        }
        await self.submit(dumps(notice))

    def _forget_progress(self, exchange: _Exchange) -> None:
        if exchange.progress is not None:
            self._tokens.pop(exchange.progress, None)

    def _answer_bytes(self, message: dict[str, Any], raw: bytes | None, exchange: _Exchange) -> bytes:
        return dumps({**message, "id": exchange.client_id})

    def _note_discover(self, message: dict[str, Any]) -> None:
        """An error to ``server/discover`` other than -32022: the upstream does not speak this era; retire it.

        Clients then fall back to ``initialize`` (a session with an upstream of its own), so the
        shared one would only idle. -32022 (unsupported protocol version) names versions the
        server does speak: it stays.
        """
        error = message.get("error")
        code = error.get("code") if type(error) is dict else None
        if type(code) is int and code != UNSUPPORTED_PROTOCOL_VERSION:
            self.end_when_idle(
                f"the upstream answered server/discover with error {code}, so it does not speak the 2026-07-28 "
                "era; it is stopped now that no 2026-07-28 request is in flight"
            )

    def _status(self, message: dict[str, Any]) -> int:
        error = message.get("error")
        code = error.get("code") if type(error) is dict else None
        return ERROR_CODE_HTTP_STATUS.get(code, 200) if type(code) is int else 200

    async def _route_other(self, message: dict[str, Any], raw: bytes | None) -> None:
        if "id" in message:
            # Server-to-client requests do not exist in this era: answer for the client, or the upstream waits.
            log.warning("answered a server-to-client request on the 2026-07-28 channel with -32601")
            text = "Method not found: a 2026-07-28 client over HTTP takes no server-to-client requests"
            await self.submit(_error_bytes(message["id"], METHOD_NOT_FOUND, text))
            return
        params = message.get("params")
        exchange: _Exchange | None = None
        restored = message
        if type(params) is dict:
            meta = params.get("_meta")
            tag = _id_key(meta.get(SUBSCRIPTION_ID_META_KEY)) if type(meta) is dict else None
            if tag is not None and tag in self.pending and type(meta) is dict:
                exchange = self.pending[tag]
                restored = {
                    **message,
                    "params": {**params, "_meta": {**meta, SUBSCRIPTION_ID_META_KEY: exchange.client_id}},
                }
            elif message.get("method") == "notifications/progress":
                token = _id_key(params.get("progressToken"))
                if token is not None and token in self._tokens and token in self.pending:
                    exchange = self.pending[token]
                    restored = {**message, "params": {**params, "progressToken": self._tokens[token]}}
        if exchange is None and len(self.pending) == 1:
            exchange = next(iter(self.pending.values()))
        if exchange is None:
            log.debug("dropped an upstream notification that no single 2026-07-28 request can be given")
            return
        data = dumps(restored) if restored is not message or raw is None else raw
        if not self._too_big(data):
            await exchange.put(_Item(data))

    def _finish(self) -> None:
        self._tokens.clear()
        super()._finish()
        self.front.forget_modern(self)


def _progress_token(message: dict[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    return meta.get("progressToken") if type(meta) is dict else None


# --- the ASGI application ----------------------------------------------------------------------------


class HttpFront:
    """The ASGI application: endpoint ``/mcp``, sessions, the shared 2026-07-28 channel.

    Args:
        command: the upstream command; one process per handshake-era session, one shared by
            2026-07-28 requests.
        config: the front's settings.
        profile: the schema profile, one of ``core.PROFILES`` (default ``core.DEFAULT_PROFILE``).
        hide_unsupported: leave unsupported tools out of ``tools/list``.
        request_timeout: as for ``stdio.wrap_stdio`` (None: no limit on forwarded requests).
        session_factory: builds what serves one client session instead of a :class:`Relay`
            over ``command`` (the gateway's sessions); ``command`` is then unused.

    Call it as an ASGI 3 application (``http`` and ``lifespan`` scopes). Channels run in the
    task group the lifespan opens; :meth:`shutdown` ends them all (their upstreams stop).
    """

    def __init__(
        self,
        command: Sequence[str],
        config: HttpConfig,
        *,
        profile: str = DEFAULT_PROFILE,
        hide_unsupported: bool = False,
        request_timeout: float | None = None,
        session_factory: SessionFactory | None = None,
    ) -> None:
        self.command = list(command)
        self.config = config
        self.profile = profile
        self.hide_unsupported = hide_unsupported
        self.request_timeout = request_timeout
        self.session_factory = session_factory
        self.security = _Security(config)
        self.server: uvicorn.Server | None = None
        self.address = ""
        self._sessions: dict[str, _Session] = {}
        self._opening = 0  # sessions whose upstream is starting: they count against max_sessions
        self._modern: _ModernChannel | None = None
        self._modern_lock = anyio.Lock()
        self._channels: set[_Channel] = set()
        self._tg: anyio.abc.TaskGroup | None = None
        self._closing = False

    # --- lifecycle --------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI 3 entry point."""
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._watch_server)
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            await self.shutdown()
            tg.cancel_scope.cancel()
        await send({"type": "lifespan.shutdown.complete"})

    async def _watch_server(self) -> None:
        """Log readiness; on a shutdown signal end the sessions first, so open streams close."""
        server = self.server
        if server is None:
            return
        while not server.started and not server.should_exit:
            await anyio.sleep(0.05)
        if server.started:
            log.info("serving MCP streamable HTTP at %s", self.address)
        while not server.should_exit:
            await anyio.sleep(0.1)
        await self.shutdown()

    async def shutdown(self) -> None:
        """End every session and the shared channel; wait (bounded) until their upstreams stopped."""
        if not self._closing:
            self._closing = True
            if self._sessions:
                log.info("stopping %d session(s)", len(self._sessions))
        for channel in list(self._channels):
            channel.stop()
        with anyio.move_on_after(STOP_GRACE_SECONDS + 5):
            for channel in list(self._channels):
                await channel.done.wait()

    def end_session(self, session: _Session) -> None:
        """End a session now: its id answers 404 from here on; its upstream stops."""
        self.forget_session(session)
        session.stop()

    def forget_session(self, session: _Session) -> None:
        """Drop a session from the registry (it ended)."""
        if self._sessions.get(session.session_id) is session:
            del self._sessions[session.session_id]
            log.info("%s ended", session.label)

    def forget_modern(self, channel: _ModernChannel) -> None:
        """Drop the shared channel (its upstream went away); the next 2026-07-28 request starts another."""
        if self._modern is channel:
            self._modern = None

    async def _start(self, channel: _Channel) -> None:
        """Run ``channel`` in the front's task group once its upstream is up.

        Raises:
            UpstreamStartError: the upstream command cannot be started.
        """
        assert self._tg is not None
        self._channels.add(channel)

        async def run(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            try:
                await channel.run(task_status=task_status)
            finally:
                self._channels.discard(channel)

        await self._tg.start(run)

    # --- HTTP -------------------------------------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] != ENDPOINT:
            await _respond(send, 404, b"Not Found", content_type=b"text/plain; charset=utf-8")
            return
        headers = Headers(scope=scope)
        refusal = self.security.refusal(headers)
        if refusal is not None:
            status, text, extra = refusal
            log.warning("refused an HTTP request: %s", text.split(":")[0].lower())
            await _refuse(send, status, text, extra)
            return
        if self._closing or self._tg is None:
            await _refuse(send, 503, "Service Unavailable: the guard is shutting down", code=INTERNAL_ERROR)
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, headers)
        elif method == "GET":
            await self._get(receive, send, headers)
        elif method == "DELETE":
            await self._delete(send, headers)
        else:
            await _refuse(send, 405, "Method Not Allowed", [(b"allow", b"GET, POST, DELETE")])

    async def _read_body(self, receive: Receive, headers: Headers) -> bytes | None:
        """The request body, or None when it exceeds the cap.

        The rest of an oversize body is read and thrown away (up to :data:`DISCARD_LIMIT`
        bytes, never kept), so that a client still sending it gets to read the 413.

        Raises:
            _Disconnected: the client went away.
            _BodyTimeout: the body did not arrive in full within ``config.body_timeout`` seconds.
        """
        cap = self.config.max_message_bytes
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap + DISCARD_LIMIT:
            return None
        body = bytearray()
        discarded = 0
        with anyio.move_on_after(self.config.body_timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Disconnected
                chunk = message.get("body", b"")
                if discarded or len(body) + len(chunk) > cap:
                    discarded += len(chunk)
                    body.clear()
                    if discarded > DISCARD_LIMIT:
                        return None
                else:
                    body += chunk
                if not message.get("more_body", False):
                    return None if discarded else bytes(body)
        raise _BodyTimeout

    async def _post(self, scope: Scope, receive: Receive, send: Send, headers: Headers) -> None:
        has_json, has_sse = _accepts(headers)
        if not (has_json and has_sse):
            text = "Not Acceptable: the client must accept both application/json and text/event-stream"
            await _refuse(send, 406, text)
            return
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            await _refuse(send, 415, "Unsupported Media Type: Content-Type must be application/json")
            return
        try:
            body = await self._read_body(receive, headers)
        except _Disconnected:
            return
        except _BodyTimeout:
            limit = self.config.body_timeout
            log.warning("refused a request whose body did not arrive within %g s (--http-body-timeout)", limit)
            text = f"Request Timeout: the request body did not arrive within {limit:g} s (--http-body-timeout)"
            await _refuse(send, 408, text, [(b"connection", b"close")])
            return
        if body is None:
            cap = self.config.max_message_bytes
            log.warning("refused a request body larger than the message limit of %d bytes", cap)
            text = f"Payload Too Large: the guard accepts messages of up to {cap} bytes (--max-message-bytes)"
            await _refuse(send, 413, text, [(b"connection", b"close")])
            return
        try:
            message = loads_client(body)
        except (ValueError, RecursionError) as exc:
            request_id = recover_id(body)
            text = parse_error_text(exc, "body")
            await _refuse(send, 400, text, request_id=None if request_id is NO_ID else request_id, code=PARSE_ERROR)
            return
        if type(message) is list:
            await _refuse(send, 400, "Invalid Request: JSON-RPC batches are not supported over streamable HTTP")
            return
        kind = _kind(message) if type(message) is dict else None
        if kind is None:
            await _refuse(send, 400, "Invalid Request: the body is not a JSON-RPC message")
            return
        if kind == "request" and not valid_id(message["id"]):
            await _refuse(send, 400, "Invalid Request: a request id must be a string or an integer")
            return
        version = headers.get("mcp-protocol-version")
        session_id = headers.get("mcp-session-id")
        if version in MODERN_PROTOCOL_VERSIONS:
            await self._post_modern(scope, receive, send, headers, message, kind, body)
        elif session_id is None:
            if kind == "request" and message["method"] == "initialize":
                await self._initialize(receive, send, message, body)
            elif kind != "response" and _envelope_version(message) is not NO_ID:
                await self._post_modern(scope, receive, send, headers, message, kind, body)
            else:
                await _refuse(send, 400, "Bad Request: Missing session ID (Mcp-Session-Id)")
        else:
            session = self._sessions.get(session_id)
            if session is None or session.closed:
                await _refuse(send, 404, "Not Found: unknown or ended session")
            elif not session.version_ok(version):
                await _refuse(send, 400, "Bad Request: unsupported MCP-Protocol-Version header", session.header)
            else:
                await self._post_session(receive, send, session, message, kind, body)

    async def _initialize(self, receive: Receive, send: Send, message: dict[str, Any], body: bytes) -> None:
        """Open a session for ``initialize``: nothing is started for a refused one.

        The slot is taken (``_opening``) in the same step as the ``--max-sessions`` check, before
        the first ``await``, so concurrent ``initialize`` requests never open more sessions than
        the cap; it is given back when the upstream cannot start.
        """
        if type(message.get("params")) is not dict:
            text = "Invalid params: initialize needs params (an object)"
            await _refuse(send, 400, text, request_id=message["id"], code=INVALID_PARAMS)
            return
        if len(self._sessions) + self._opening >= self.config.max_sessions:
            log.warning(
                "refused a new session: %d sessions are open or opening (--max-sessions)",
                len(self._sessions) + self._opening,
            )
            text = "Service Unavailable: too many open sessions"
            await _refuse(send, 503, text, request_id=message["id"], code=INTERNAL_ERROR)
            return
        self._opening += 1
        try:
            session = _Session(self, secrets.token_hex(16))
            try:
                await self._start(session)
            except UpstreamStartError as exc:
                log.error("%s", exc)
                text = f"mcp-guard could not start the upstream server: {exc}"
                await _refuse(send, 500, text, request_id=message["id"], code=INTERNAL_ERROR)
                return
            self._sessions[session.session_id] = session
        finally:
            self._opening -= 1
        log.info("%s started", session.label)
        await self._post_session(receive, send, session, message, "request", body)

    async def _post_session(
        self, receive: Receive, send: Send, session: _Session, message: dict[str, Any], kind: str, body: bytes
    ) -> None:
        if kind != "request":
            if message.get("method") == "notifications/cancelled":
                await session.cancelled(message)
            if not await session.submit(body):
                await _refuse(send, 404, "Not Found: unknown or ended session")
                return
            await _respond(send, 202, headers=session.header)
            return
        exchange = session.register(message)
        if exchange is None:
            text = (
                "Conflict: this id is in use by a request in flight, or was used by an abandoned one, in this session"
            )
            await _refuse(send, 409, text, session.header, request_id=message["id"])
            return
        session.enter()
        try:
            session.flush_backlog(exchange)
            if not await session.submit(body):
                session.abandon(exchange)
                await _refuse(send, 404, "Not Found: unknown or ended session")
                return
            answered = await self._answer(receive, send, exchange, session.header)
            if not answered:
                session.abandon(exchange)
        finally:
            exchange.receiver.close()
            session.leave()

    async def _post_modern(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        message: dict[str, Any],
        kind: str,
        body: bytes,
    ) -> None:
        if kind == "response":
            await _refuse(send, 400, "Invalid Request: a 2026-07-28 client posts no JSON-RPC responses")
            return
        if kind == "notification":
            # This era defines no client notifications over HTTP; a posted cancellation names a client-chosen
            # id that may be another client's, so it is dropped. Others pass on (era-blind).
            channel = self._modern
            if message.get("method") != "notifications/cancelled" and channel is not None:
                await channel.submit(body)
            await _respond(send, 202)
            return
        rejection = _header_rejection(message, scope["headers"], headers)
        if rejection is not None:
            status = ERROR_CODE_HTTP_STATUS.get(rejection.code, 400)
            await _refuse(send, status, rejection.message, request_id=message["id"], code=rejection.code)
            return
        try:
            channel = await self._modern_channel()
        except UpstreamStartError as exc:
            log.error("%s", exc)
            text = f"mcp-guard could not start the upstream server: {exc}"
            await _refuse(send, 500, text, request_id=message["id"], code=INTERNAL_ERROR)
            return
        exchange, key, data = channel.register(message, body)
        try:
            if not await channel.submit(data):
                channel.pending.pop(key, None)
                text = "Service Unavailable: the upstream went away; send the request again"
                await _refuse(send, 503, text, request_id=message["id"], code=INTERNAL_ERROR)
                return
            if not await self._answer(receive, send, exchange, []):
                with anyio.CancelScope(shield=True):
                    await channel.abandon(exchange, key)
        finally:
            exchange.receiver.close()
            channel.leave()

    async def _modern_channel(self) -> _ModernChannel:
        """The shared channel, started when there is none (or it ended); counted active for the caller.

        The caller calls ``leave()`` once its request is done.
        """
        async with self._modern_lock:
            if self._modern is None or self._modern.closed:
                channel = _ModernChannel(self)
                await self._start(channel)
                self._modern = channel
                log.info("2026-07-28 requests: shared upstream started")
            self._modern.enter()
            return self._modern

    async def _answer(
        self, receive: Receive, send: Send, exchange: _Exchange, headers: list[tuple[bytes, bytes]]
    ) -> bool:
        """Answer a POSTed request from its stream; True once the response went out.

        JSON when the response comes first within the keep-alive window, else an SSE stream.
        Returns False when the client disconnected first (the caller abandons the request).
        """
        keepalive = self.config.keepalive
        done = False
        async with anyio.create_task_group() as tg:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(watch_disconnect)
            first: _Item | None = None
            with anyio.move_on_after(keepalive) as waiting:
                first = await exchange.next()
            if not waiting.cancelled_caught and (first is None or first.final):
                if first is None:
                    first = _Item(_ended(exchange), final=True)
                await _respond(send, first.status, first.data, headers)
                done = True
                tg.cancel_scope.cancel()
                return done
            sse = [
                (b"content-type", b"text/event-stream"),
                (b"cache-control", b"no-cache, no-transform"),
                (b"x-accel-buffering", b"no"),
                *headers,
            ]
            await send({"type": "http.response.start", "status": 200, "headers": sse})
            item = first
            while True:
                if item is not None:
                    await send({"type": "http.response.body", "body": _sse_event(item.data), "more_body": True})
                    if item.final:
                        break
                with anyio.move_on_after(keepalive) as waiting:
                    item = await exchange.next()
                if waiting.cancelled_caught:
                    await send({"type": "http.response.body", "body": _PING, "more_body": True})
                elif item is None:
                    item = _Item(_ended(exchange), final=True)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            done = True
            tg.cancel_scope.cancel()
        return done

    async def _get(self, receive: Receive, send: Send, headers: Headers) -> None:
        if headers.get("mcp-protocol-version") in MODERN_PROTOCOL_VERSIONS:
            await _refuse(send, 405, "Method Not Allowed: the 2026-07-28 era has no GET stream", [(b"allow", b"POST")])
            return
        if not _accepts(headers)[1]:
            await _refuse(send, 406, "Not Acceptable: the client must accept text/event-stream")
            return
        session = self._session_of(headers)
        if isinstance(session, str):
            await _refuse(send, 400 if session == "missing" else 404, _SESSION_TEXT[session])
            return
        if not session.version_ok(headers.get("mcp-protocol-version")):
            await _refuse(send, 400, "Bad Request: unsupported MCP-Protocol-Version header", session.header)
            return
        if session.get_stream is not None:
            await _refuse(send, 409, "Conflict: only one GET stream per session", session.header)
            return
        stream = _Exchange(None)
        session.get_stream = stream
        session.enter()
        try:
            sse = [
                (b"content-type", b"text/event-stream"),
                (b"cache-control", b"no-cache, no-transform"),
                (b"x-accel-buffering", b"no"),
                *session.header,
            ]
            await send({"type": "http.response.start", "status": 200, "headers": sse})
            async with anyio.create_task_group() as tg:

                async def watch_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tg.cancel_scope.cancel()

                tg.start_soon(watch_disconnect)
                while session.backlog:  # older than anything routed to this stream
                    data = session.backlog.popleft()
                    await send({"type": "http.response.body", "body": _sse_event(data), "more_body": True})
                while True:
                    with anyio.move_on_after(self.config.keepalive) as waiting:
                        item = await stream.next()
                    if waiting.cancelled_caught:
                        await send({"type": "http.response.body", "body": _PING, "more_body": True})
                    elif item is None:
                        break
                    else:
                        await send({"type": "http.response.body", "body": _sse_event(item.data), "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                tg.cancel_scope.cancel()
        finally:
            stream.receiver.close()
            if session.get_stream is stream:
                session.get_stream = None
            session.leave()

    async def _delete(self, send: Send, headers: Headers) -> None:
        if headers.get("mcp-protocol-version") in MODERN_PROTOCOL_VERSIONS:
            await _refuse(send, 405, "Method Not Allowed: the 2026-07-28 era has no sessions", [(b"allow", b"POST")])
            return
        session = self._session_of(headers)
        if isinstance(session, str):
            await _refuse(send, 400 if session == "missing" else 404, _SESSION_TEXT[session])
            return
        self.end_session(session)
        await _respond(send, 200, headers=session.header)

    def _session_of(self, headers: Headers) -> _Session | str:
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            return "missing"
        session = self._sessions.get(session_id)
        if session is None or session.closed:
            return "unknown"
        return session


_SESSION_TEXT: Final = {
    "missing": "Bad Request: Missing session ID (Mcp-Session-Id)",
    "unknown": "Not Found: unknown or ended session",
}


class _Disconnected(Exception):
    """The client went away while its request body was read."""


class _BodyTimeout(Exception):
    """The request body did not arrive in full within the front's ``body_timeout``."""


def _ended(exchange: _Exchange) -> bytes:
    text = "mcp-guard: the session ended (or its upstream went away) before the request was answered"
    return _error_bytes(exchange.client_id, INTERNAL_ERROR, text)


def _header_rejection(
    message: dict[str, Any], raw_headers: Iterable[tuple[bytes, bytes]], headers: Headers
) -> InboundLadderRejection | None:
    """The spec's header checks for a 2026-07-28 request (the SDK's ladder, any protocol version).

    Which versions are supported is the upstream's call (it answers -32022); the front only
    checks that the routing headers agree with the body and appear once.
    """
    duplicated = find_duplicated_routing_header((k.decode("latin-1"), v.decode("latin-1")) for k, v in raw_headers)
    if duplicated is not None:
        return InboundLadderRejection(code=HEADER_MISMATCH, message=f"{duplicated} header appears more than once")
    version = _envelope_version(message)
    supported = (version,) if type(version) is str else ()
    verdict = classify_inbound_request(message, headers=dict(headers.items()), supported_modern_versions=supported)
    return verdict if isinstance(verdict, InboundLadderRejection) else None


# --- serving -------------------------------------------------------------------------------------------


def _bind(host: str, port: int) -> socket.socket:
    """A listening-ready socket bound to ``host:port`` (``OSError`` when it cannot be bound)."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server, stopping on SIGINT, SIGTERM or SIGHUP without re-raising the signal afterwards.

    (uvicorn raises the caught signal again once it has stopped; the guard returns an exit
    status instead, as ``wrap`` on stdio does.)
    """

    caught: int | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Route the stop signals to :meth:`handle_exit` while serving (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Note the signal and ask uvicorn to stop (a second SIGINT forces it)."""
        if self.caught is None:
            self.caught = sig
            log.info("received signal %d; stopping", sig)
        super().handle_exit(sig, frame)


def _configure_uvicorn_logging() -> None:
    ours = logging.getLogger("mcp_guard")
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi"):
        logger = logging.getLogger(name)
        logger.handlers[:] = list(ours.handlers)
        logger.setLevel(max(ours.getEffectiveLevel(), logging.WARNING))
        logger.propagate = False


async def serve_http(
    command: Sequence[str],
    config: HttpConfig,
    *,
    profile: str = DEFAULT_PROFILE,
    hide_unsupported: bool = False,
    request_timeout: float | None = None,
) -> int:
    """Serve the MCP streamable HTTP transport at ``/mcp`` until SIGINT or SIGTERM.

    Every session's upstream is stopped before this returns.

    Returns:
        0 after SIGTERM or SIGHUP, 130 after SIGINT, 1 when the upstream command is not found
        or the address cannot be bound.
    """
    if not command:
        log.error("no upstream command given")
        return 1
    if os.sep not in command[0] and shutil.which(command[0]) is None:
        log.error("upstream command not found: %s", command[0])
        return 1
    front = HttpFront(
        command, config, profile=profile, hide_unsupported=hide_unsupported, request_timeout=request_timeout
    )
    return await serve_front(front, f"wrapping `{' '.join(command)}` over HTTP (profile {profile})")


async def serve_front(front: HttpFront, banner: str) -> int:
    """Bind ``front.config``'s address and serve ``front`` until SIGINT or SIGTERM; log ``banner`` first.

    Returns:
        0 after SIGTERM or SIGHUP, 130 after SIGINT, 1 when the address cannot be bound.
    """
    config = front.config
    host, port = config.host, config.port
    if not is_loopback(host):
        log.warning(
            "listening on %s, which is not a loopback address: anyone who can reach it can use the upstream%s",
            host or "every interface",
            "" if config.token is not None else " (consider --http-token-env)",
        )
    try:
        sock = _bind(host, port)
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", host, port, exc.strerror or exc)
        return 1
    bound_port = sock.getsockname()[1]
    front.address = f"http://{_url_host(host)}:{bound_port}{ENDPOINT}"
    if not front.security.checks_host:
        log.warning("the Host header is not checked (bound to every interface; name hosts with --allowed-host)")
    if config.token is not None:
        log.info("every request needs the bearer token")
    _configure_uvicorn_logging()
    server = _Server(
        uvicorn.Config(
            front,
            interface="asgi3",
            lifespan="on",
            log_config=None,
            access_log=False,
            ws="none",
            http="h11",
            proxy_headers=False,
            timeout_graceful_shutdown=int(STOP_GRACE_SECONDS + 5),
        )
    )
    front.server = server
    log.info("%s", banner)
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
    return 130 if server.caught == signal.SIGINT else 0
