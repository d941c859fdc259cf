"""The HTTP front's settings (:class:`HttpConfig`), its limits, and the ``--http`` address syntax."""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from ...oauth_config import OAuthSettings
from .security import host_entry_problem, parse_origin

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DISCARD_LIMIT",
    "ENDPOINT",
    "EXCHANGE_BUFFER",
    "INBOUND_BUFFER",
    "MAX_BACKLOG",
    "MAX_TOMBSTONES",
    "STOP_GRACE_SECONDS",
    "HttpConfig",
    "parse_listen_address",
]

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


class HttpConfig(BaseModel):
    """Settings of the HTTP front (see ``mcp-guard wrap --help``).

    Attributes:
        host: address to bind; loopback by default. ``0.0.0.0`` or ``::`` bind every
            interface (the ``Host`` check is then off unless ``allowed_hosts`` is given).
        port: TCP port; 0 picks a free one (the log line ``serving MCP streamable HTTP at
            …`` names it).
        allowed_hosts: ``Host`` header values accepted besides the defaults (the loopback
            names, and the bound host when it is a specific address): ``NAME`` accepts any
            port, ``NAME:PORT`` only that port. Anything else (a ``*``, a path, a bad port) is
            a ``ValueError`` naming the entry (``security.host_entry_problem``).
        allowed_origins: ``Origin`` values accepted besides ``http(s)://`` loopback origins:
            ``scheme://name`` (the scheme's default port), ``scheme://name:PORT``, or
            ``scheme://name:*`` for any port, the default one included (see
            :func:`parse_origin`); anything else, a ``*`` in the host included, is a
            ``ValueError`` naming the entry. Requests without ``Origin`` pass.
        token: when set, every request needs ``Authorization: Bearer <token>`` (else 401).
        oauth: when set, the front is an OAuth 2.1 resource server (:mod:`.oauth`): every request
            needs a bearer access token the issuer signed for ``oauth.resource`` (401/403/400
            otherwise). Not with ``token``: one ``Authorization`` header cannot carry both.
        oauth_client_secret: the introspection client's secret (``oauth.client_secret_env``'s value).
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
        header_timeout: seconds a request's headers may take to arrive in full, counted from
            the connection's start or the end of the previous response on it; a slower request
            is answered 408 and its connection closed (uvicorn's h11 server has no such limit).
        shared_upstream: one upstream process for every handshake-era session (``wrap --http
            --shared-upstream``, :mod:`.shared`) instead of one per session; ignored when the
            front serves a gateway's sessions.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535)
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    token: SecretStr | None = None
    oauth: OAuthSettings | None = None
    oauth_client_secret: SecretStr | None = None
    max_message_bytes: int = Field(default=DEFAULT_MAX_MESSAGE_BYTES, ge=1024)
    session_idle_timeout: float | None = Field(default=1800.0, gt=0)
    max_sessions: int = Field(default=100, ge=1)
    keepalive: float = Field(default=15.0, gt=0)
    body_timeout: float = Field(default=30.0, gt=0)
    header_timeout: float = Field(default=30.0, gt=0)
    shared_upstream: bool = False

    @field_validator("allowed_origins")
    @classmethod
    def _origins_are_origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            if parse_origin(entry, pattern=True) is None:
                text = entry.strip()
                stray = "*" in (text[:-2] if text.endswith(":*") else text)
                hint = " (a * stands only for the port: name each host)" if stray else ""
                raise ValueError(
                    f"{entry[:100]!r} is not an origin: expected SCHEME://HOST, SCHEME://HOST:PORT or "
                    f"SCHEME://HOST:*{hint}"
                )
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts_are_hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            problem = host_entry_problem(entry)
            if problem is not None:
                raise ValueError(f"{entry[:100]!r} is not a host: {problem}")
        return value

    @model_validator(mode="after")
    def _one_authorization(self) -> HttpConfig:
        if self.token is not None and self.oauth is not None:
            raise ValueError(
                "a shared bearer token (--http-token-env) and OAuth (--oauth-issuer, guard.auth) cannot both be "
                "required: a request has one Authorization header; give one of them"
            )
        return self


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
