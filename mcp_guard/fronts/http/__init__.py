"""``mcp-guard wrap --http``: the guard as an MCP streamable HTTP server, endpoint ``/mcp``.

The SDK's own HTTP server validates and dispatches every request itself (unknown methods,
``null`` or string arguments never reach a handler unchanged), so it cannot front an
era-blind relay. This is an ASGI application of our own, served by uvicorn, that moves
JSON-RPC messages between HTTP requests and :class:`~mcp_guard.sessions.relay.Relay` objects.
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
  or ended); an ``initialize`` carrying a session's id is refused (400, -32600: a session is
  initialized once). ``GET`` opens the session's standalone SSE stream (one at a time: 409);
  ``DELETE`` cancels the session's requests in flight (-32800 to the client,
  ``notifications/cancelled`` upstream), ends the session and stops its upstream. A session without any request in
  flight and no GET stream for :attr:`HttpConfig.session_idle_timeout` seconds is ended
  the same way. ``MCP-Protocol-Version``, when present, must be a handshake-era version or
  the one the session negotiated (else 400). With ``HttpConfig.shared_upstream``
  (``wrap --http --shared-upstream``) every session is a view of one upstream process and
  relay instead, with ids rewritten per session (:mod:`.shared` says what is shared and how).
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

The package, by concern: :mod:`.config` (the options and limits), :mod:`.security` (``Host``,
``Origin`` and the bearer token), :mod:`.messages` (request streams and message helpers),
:mod:`.channel` (one relay and the routing of its output), :mod:`.direct` (the relay's in-memory
client side, on the relay's synchronous hot path), :mod:`.handshake` (handshake-era sessions,
``Mcp-Session-Id``), :mod:`.shared` (those sessions on one shared upstream), :mod:`.modern` (the
shared 2026-07-28 channel), :mod:`.app` (the ASGI application: routing, bodies, responses),
:mod:`.registry` (what the application holds open: its sessions and channels, their start and end),
:mod:`.fast` (answering a request: JSON or SSE), :mod:`.parsers` (uvicorn's HTTP parsers with
header deadlines) and :mod:`.serving` (uvicorn, signals).

The hot path: a POSTed message is handed to its relay synchronously (judged and forwarded, or
refused, in the POST handler's own step), the upstream's response is judged and routed to the
request's stream in the upstream pipe's reader callback, and a JSON answer needs no task group
or memory stream per request (see :mod:`.direct` and :mod:`.fast`).
"""

from __future__ import annotations

from .app import HttpFront
from .channel import SessionFactory
from .config import DEFAULT_MAX_MESSAGE_BYTES, ENDPOINT, HttpConfig, parse_listen_address
from .security import is_loopback, parse_origin
from .serving import serve_front, serve_http

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ENDPOINT",
    "HttpConfig",
    "HttpFront",
    "SessionFactory",
    "is_loopback",
    "parse_listen_address",
    "parse_origin",
    "serve_front",
    "serve_http",
]
