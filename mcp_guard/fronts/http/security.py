"""``Host``/``Origin`` checks against DNS rebinding, and the bearer token (403 and 401 before anything else)."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .config import HttpConfig

__all__ = ["Security", "is_loopback", "parse_origin"]

_LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is a loopback host: ``localhost``, 127.0.0.0/8, ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_MAX_KEPT_VERDICTS: Final = 256
"""Distinct ``Host`` values whose verdicts a :class:`Security` keeps (later ones are judged each time)."""


def _is_wildcard(host: str) -> bool:
    return host in ("", "0.0.0.0", "::")


class Security:
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
        self._host_verdicts: dict[str, bool] = {}  # Host value -> _judge_host's verdict

    @property
    def checks_host(self) -> bool:
        """False when bound to every interface without ``allowed_hosts``."""
        return self._hosts is not None

    def refusal(self, headers: Mapping[str, str]) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        """``(status, message, extra headers)`` when the request must be refused, else None.

        ``headers``: by lowercase name, the first value of each (``app.request_headers``).
        """
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
        known = self._host_verdicts.get(host)
        if known is None:
            known = self._judge_host(host)
            if len(self._host_verdicts) < _MAX_KEPT_VERDICTS:  # (a client's Host is the same on every request)
                self._host_verdicts[host] = known
        return known

    def _judge_host(self, host: str) -> bool:
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
