"""The HTTP front as an OAuth 2.1 resource server (issue 27 item 1; the MCP authorization spec, 2025-11-25).

:class:`ResourceServer` is what the front asks of every request when ``HttpConfig.oauth`` is set:

- ``GET /.well-known/oauth-protected-resource``, and the form with the resource's path appended
  (``/.well-known/oauth-protected-resource/mcp``, RFC 9728 section 3.1), serve the protected
  resource metadata (RFC 9728 section 2): ``resource``, ``authorization_servers``,
  ``scopes_supported``, ``bearer_methods_supported: ["header"]``. No token is needed for it
  (the client reads it to learn where to get one); the Host and Origin checks still apply.
- Every other request (``/mcp`` in both eras, ``/health``, ``/ready``, ``/metrics``) needs a
  bearer token the :class:`~mcp_guard.auth.verifier.TokenVerifier` accepts, checked before any
  session work. Refused: 401 with ``WWW-Authenticate: Bearer resource_metadata="..."`` (and
  ``error="invalid_token"`` when a token was given, RFC 6750 section 3.1), 403 with
  ``error="insufficient_scope"`` and the ``scope`` needed, 400 ``invalid_request`` for a
  malformed ``Authorization`` header, 503 when the issuer's keys or introspection cannot be
  had. The body is a JSON-RPC error, as for the front's other refusals.
- The log line of a refusal names the check that failed (``signature``, ``audience``...),
  never the token or a claim (refusals of one kind are counted, ``log_counts``).
- The token stays here: the session gets the request's body only, never its headers, so no
  client token can reach an upstream (the MCP spec forbids token passthrough); an upstream's
  credentials are the config's (``--header-env``, ``headers``).
- A handshake-era session belongs to the principal whose token opened it (issuer, subject,
  client id, as the SDK's session manager compares them): a request with another principal's
  token is answered 404, as if the session did not exist.

The verifier (and so joserfc) is imported when a front with OAuth is built, never otherwise.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit, urlunsplit

from starlette.types import Send

from ...auth.principal import Principal
from ...auth.verdicts import Refusal
from ...log_counts import LogCounts
from ...oauth_config import OAuthSettings
from ...wire.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST
from .fast import respond
from .messages import error_bytes

if TYPE_CHECKING:
    from ...auth.verifier import TokenVerifier

__all__ = ["METADATA_PATH", "Owner", "ResourceServer", "owner_of"]

log = logging.getLogger("mcp_guard")

METADATA_PATH: Final = "/.well-known/oauth-protected-resource"
"""RFC 9728 section 3: the well-known path of the protected resource metadata."""

Owner = tuple[str, str, str | None]
"""Who a handshake-era session belongs to: (issuer, subject, client id)."""


def owner_of(principal: Principal | None) -> Owner | None:
    """The owner key of a session opened by ``principal`` (None without OAuth)."""
    return None if principal is None else (principal.issuer, principal.subject, principal.client_id)


def metadata_url(resource: str) -> str:
    """The protected resource metadata's URL for ``resource`` (RFC 9728 section 3.1: the well-known
    path inserted between the host and the resource's path)."""
    parts = urlsplit(resource)
    path = parts.path if parts.path != "/" else ""
    return urlunsplit((parts.scheme, parts.netloc, METADATA_PATH + path, "", ""))


class ResourceServer:
    """The front's OAuth 2.1 resource server: the metadata document, the bearer check, the challenges.

    Args:
        settings: ``HttpConfig.oauth``.
        client_secret: the introspection client's secret, or None.
        verifier: the token verifier (default: a :class:`~mcp_guard.auth.verifier.TokenVerifier` of
            ``settings``; tests give their own HTTP client through one).
    """

    def __init__(
        self, settings: OAuthSettings, client_secret: str | None = None, *, verifier: TokenVerifier | None = None
    ) -> None:
        if verifier is None:
            from ...auth.verifier import TokenVerifier

            verifier = TokenVerifier(settings, client_secret=client_secret)
        self.verifier = verifier
        self.settings = settings
        self.metadata_url = metadata_url(settings.resource)
        suffix = urlsplit(self.metadata_url).path
        self.paths = frozenset({METADATA_PATH, suffix})
        document: dict[str, object] = {
            "resource": settings.resource,
            "authorization_servers": list(settings.servers),
            "bearer_methods_supported": ["header"],
        }
        if settings.scopes:
            document["scopes_supported"] = list(settings.scopes)
        if settings.resource_name is not None:
            document["resource_name"] = settings.resource_name
        self.document = json.dumps(document).encode()
        self.counted = LogCounts()

    async def check(self, authorization: str | None) -> Principal | Refusal:
        """The principal of a request's ``Authorization`` value, or the refusal to answer (logged here)."""
        verdict = await self.verifier.verify_header(authorization)
        if isinstance(verdict, Refusal):
            level = logging.INFO if verdict.error is None and verdict.status == 401 else logging.WARNING
            # One count per check (the check names are the verifier's own words, never a value).
            text = f"oauth: refused a request (HTTP {verdict.status}): the {verdict.check} check failed"
            self.counted.log(level, text)
        return verdict

    def challenge(self, refusal: Refusal) -> list[tuple[bytes, bytes]]:
        """The ``WWW-Authenticate`` header of a refusal (RFC 6750 section 3, RFC 9728 section 5.1); none for a 503."""
        if refusal.status == 503:
            return []
        parts: list[str] = []
        if refusal.error is not None:
            parts.append(f'error="{refusal.error}"')
            parts.append(f'error_description="{_quotable(refusal.description)}"')
        if self.settings.scopes and refusal.error in (None, "insufficient_scope"):
            parts.append(f'scope="{" ".join(self.settings.scopes)}"')
        parts.append(f'resource_metadata="{self.metadata_url}"')
        return [(b"www-authenticate", ("Bearer " + ", ".join(parts)).encode("ascii", "replace"))]

    async def refuse(self, send: Send, refusal: Refusal) -> None:
        """Answer a refused request: its status, the challenge, a JSON-RPC error body naming the check."""
        code = INTERNAL_ERROR if refusal.status == 503 else INVALID_REQUEST
        reason = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable"}
        text = f"{reason.get(refusal.status, 'Refused')}: {refusal.description}"
        await respond(send, refusal.status, error_bytes(None, code, text), self.challenge(refusal))

    async def serve_metadata(self, send: Send, method: str) -> None:
        """Answer a request for the protected resource metadata (GET or HEAD; CORS open: it is public)."""
        if method not in ("GET", "HEAD"):
            await respond(
                send, 405, b"Method Not Allowed", [(b"allow", b"GET, HEAD")], content_type=b"text/plain; charset=utf-8"
            )
            return
        headers = [(b"access-control-allow-origin", b"*"), (b"cache-control", b"public, max-age=3600")]
        await respond(send, 200, self.document if method == "GET" else b"", headers)


def _quotable(text: str) -> str:
    """``text`` as an RFC 6750 ``error_description`` may hold it (``%x20-21 / %x23-5B / %x5D-7E``)."""
    return "".join(c if " " <= c <= "~" and c not in '"\\' else "?" for c in text)
