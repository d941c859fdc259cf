"""A test authorization server on loopback: RFC 8414 metadata, a JWKS, RFC 7662 introspection, a token endpoint.

The standard library's ``ThreadingHTTPServer`` in a daemon thread, on a free port of 127.0.0.1.
Tokens are signed with joserfc (the guard's own JOSE library, its signing side). What it serves:

- ``/.well-known/oauth-authorization-server``: ``issuer``, ``jwks_uri``, ``introspection_endpoint``,
  ``token_endpoint``, ``grant_types_supported: ["client_credentials"]`` and the auth methods.
- ``/jwks``: the public keys of :attr:`Issuer.keys` (a list: rotate by appending or replacing).
- ``/introspect``: POST ``token=...``; HTTP Basic must be ``guard:guard-secret`` (else 401); the
  answer is :attr:`Issuer.opaque`'s entry for the token (``{"active": false}`` when absent).
- ``/token``: the client-credentials grant for ``agent:agent-secret`` (``client_secret_post`` or
  ``client_secret_basic``): a JWT for the ``resource`` asked (RFC 8707), scopes as asked.

Every request's path is counted in :attr:`Issuer.hits` (when it arrives); ``/jwks`` answers only
while :attr:`Issuer.jwks_gate` is set (a test holds a fetch in flight by clearing it).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

INTROSPECTION_CLIENT = ("guard", "guard-secret")
AGENT_CLIENT = ("agent", "agent-secret")


@dataclass
class Issuer:
    """The running test authorization server."""

    url: str
    keys: list[RSAKey | ECKey] = field(default_factory=list)
    opaque: dict[str, dict[str, Any]] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    token_resources: list[str | None] = field(default_factory=list)
    jwks_padding: int = 0  # bytes of filler in the JWKS document (a document over the guard's cap)
    metadata_issuer: str | None = None  # the metadata's issuer, when it must not be this one
    jwks_gate: threading.Event = field(default_factory=threading.Event)  # /jwks answers once it is set

    @property
    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 document."""
        return {
            "issuer": self.metadata_issuer or self.url,
            "jwks_uri": f"{self.url}/jwks",
            "introspection_endpoint": f"{self.url}/introspect",
            "token_endpoint": f"{self.url}/token",
            "authorization_endpoint": f"{self.url}/authorize",
            "response_types_supported": ["code"],
            "grant_types_supported": ["client_credentials", "authorization_code"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
        }

    def token(self, resource: str, *, key: RSAKey | ECKey | None = None, **claims: Any) -> str:
        """A JWT signed with ``key`` (default: the first of :attr:`keys`), ``alg`` to suit it.

        Claims default to ``iss`` this issuer, ``aud`` ``resource``, ``sub`` ``alice``, ``client_id``
        ``agent``, ``scope`` ``mcp:tools``, ``exp`` in an hour; a claim given as None is left out.
        """
        key = key or self.keys[0]
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.url,
            "aud": resource,
            "sub": "alice",
            "client_id": "agent",
            "scope": "mcp:tools",
            "iat": now,
            "exp": now + 3600,
            **claims,
        }
        body = {k: v for k, v in body.items() if v is not None}
        alg = "ES256" if isinstance(key, ECKey) else "RS256"
        return jwt.encode({"alg": alg, "kid": key.kid, "typ": "at+jwt"}, body, key)


def rsa_key() -> RSAKey:
    """A new RSA key (2048 bits) with a kid."""
    key = RSAKey.generate_key(2048, auto_kid=True)
    return key


def _handler(issuer: Issuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _json(self, status: int, document: Any) -> None:
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("content-length") or 0)
            return {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}

        def _basic(self) -> tuple[str, str] | None:
            value = self.headers.get("authorization") or ""
            if not value.lower().startswith("basic "):
                return None
            user, _, password = base64.b64decode(value[6:]).decode().partition(":")
            return user, password

        def do_GET(self) -> None:
            issuer.hits[self.path] += 1
            if self.path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
                self._json(200, issuer.metadata)
            elif self.path == "/jwks":
                issuer.jwks_gate.wait(30)
                document: dict[str, Any] = {"keys": [k.as_dict(private=False) for k in issuer.keys]}
                if issuer.jwks_padding:
                    document["filler"] = "x" * issuer.jwks_padding
                self._json(200, document)
            else:
                self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            issuer.hits[self.path] += 1
            form = self._form()
            if self.path == "/introspect":
                if self._basic() != INTROSPECTION_CLIENT:
                    self._json(401, {"error": "invalid_client"})
                    return
                self._json(200, issuer.opaque.get(form.get("token", ""), {"active": False}))
            elif self.path == "/token":
                client = self._basic() or (form.get("client_id", ""), form.get("client_secret", ""))
                if client != AGENT_CLIENT or form.get("grant_type") != "client_credentials":
                    self._json(401, {"error": "invalid_client"})
                    return
                resource = form.get("resource")
                issuer.token_resources.append(resource)
                scope = form.get("scope") or "mcp:tools"
                token = issuer.token(resource or "", sub="agent-service", scope=scope)
                self._json(200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": scope})
            else:
                self._json(404, {"error": "not_found"})

    return Handler


@contextmanager
def running_issuer() -> Iterator[Issuer]:
    """Serve a test authorization server on a free loopback port until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    issuer = Issuer(f"http://127.0.0.1:{server.server_address[1]}", keys=[rsa_key()])
    issuer.jwks_gate.set()
    server.RequestHandlerClass = _handler(issuer)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
