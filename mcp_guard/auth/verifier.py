"""Bearer access tokens verified: JWTs against the issuer's JWKS, opaque tokens by introspection (issue 27 item 1).

:class:`TokenVerifier` turns an ``Authorization`` header into a
:class:`~.principal.Principal` or a :class:`~.verdicts.Refusal`, in this order:

1. The header (RFC 6750 section 2.1): absent, or another scheme: 401 without an error code
   (section 3.1: the client gave no bearer token); longer than ``max_token_bytes``: 401
   ``invalid_token`` before anything is parsed; not ``Bearer <b64token>``: 400 ``invalid_request``.
2. A JWT (three base64url segments) is verified with joserfc: its header's ``alg`` must be in
   the allow-list (never ``none``, never HMAC: :mod:`mcp_guard.oauth_config`), its ``kid`` must
   name a key of the issuer's JWKS (:class:`~.keys.KeyRing`: fetched again, bounded, on an
   unknown ``kid``), the signature must verify with that key (whose type must suit the
   algorithm), then the claims (RFC 9068 section 4, RFC 7519 section 4.1): ``iss`` equal to
   the issuer, ``aud`` holding the resource URI (RFC 8707; the MCP spec's audience binding),
   ``exp`` present and not past, ``nbf`` and ``iat`` not in the future, each with
   ``leeway_seconds``; ``sub`` (or ``client_id``) present.
3. Any other token is introspected (:mod:`.introspection`, RFC 7662) when an endpoint is known,
   else refused.
4. Scopes: every scope of the settings must be granted, else 403 ``insufficient_scope``.

A verified JWT's principal is kept (:data:`MAX_CACHED` tokens, until its ``exp`` and at most
:data:`CACHE_SECONDS`, forgotten when the JWKS changes), so a client that sends the same token
on every request pays the signature check once. The failed check is what the refusal names
(``Refusal.check``); the front logs it. No token, key or claim value is ever in a refusal.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Final

import anyio
import httpx2
from joserfc.errors import ClaimError, ExpiredTokenError, JoseError
from joserfc.jws import JWSRegistry, extract_compact, validate_compact
from joserfc.jwt import JWTClaimsRegistry

from ..oauth_config import OAuthSettings
from .documents import FETCH_TIMEOUT, AuthServerError, Metadata, discover
from .introspection import Introspector
from .keys import KeyRing
from .principal import Principal
from .verdicts import MALFORMED, Refusal, principal_from_claims

__all__ = ["CACHE_SECONDS", "MAX_CACHED", "TokenVerifier"]

MAX_CACHED: Final = 10_000
"""Verified JWTs remembered (the oldest half is forgotten when full)."""

CACHE_SECONDS: Final = 300.0
"""Longest a verified JWT's principal is reused without checking it again (seconds)."""

METADATA_RETRY_SECONDS: Final = 5.0
"""After a failed metadata discovery, requests are answered 503 for this long before it is tried again."""

_BEARER: Final = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +([A-Za-z0-9\-._~+/]+=*) *")
_JWS_SHAPE: Final = re.compile(r"[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*")

_CLAIM_CHECKS: Final = {"iss": "issuer", "aud": "audience", "exp": "expiry", "nbf": "not before", "iat": "issued at"}


def _refused(check: str, description: str, status: int = 401) -> Refusal:
    return Refusal(status, "invalid_token", check, description)


class TokenVerifier:
    """Verifies bearer tokens for one resource server (see the module's docstring for the checks).

    Args:
        settings: the resource server's settings.
        client_secret: the introspection client's secret (read from ``client_secret_env`` by the caller).
        client: the HTTP client for the metadata, the JWKS and introspection (default: a new one,
            closed by :meth:`aclose`).

    Attributes:
        keys: the issuer's :class:`~.keys.KeyRing`.
    """

    def __init__(
        self, settings: OAuthSettings, *, client_secret: str | None = None, client: httpx2.AsyncClient | None = None
    ) -> None:
        self.settings = settings
        self._own_client = client is None
        self._client = client if client is not None else httpx2.AsyncClient(timeout=FETCH_TIMEOUT)
        self._metadata: Metadata | None = None
        self._metadata_failed = -float("inf")
        self._discovering = anyio.Lock()
        self.keys = KeyRing(self._client, settings, self._jwks_uri)
        self._registry = JWSRegistry(algorithms=list(settings.algorithms))
        self._algorithms = frozenset(settings.algorithms)
        self._claims = JWTClaimsRegistry(
            leeway=settings.leeway_seconds,
            iss={"essential": True, "value": settings.issuer},
            aud={"essential": True, "value": settings.resource},
            exp={"essential": True},
        )
        self._required = frozenset(settings.scopes)
        self._verified: dict[str, tuple[Principal, float, int]] = {}  # token -> (principal, until, key generation)
        credentials = None
        if settings.client_id is not None and client_secret is not None:
            credentials = (settings.client_id, client_secret)
        self.introspector = Introspector(self._client, settings, credentials, self._introspection_endpoint)

    async def aclose(self) -> None:
        """Close the HTTP client when it is the verifier's own."""
        if self._own_client:
            await self._client.aclose()

    # --- the endpoints, from the settings or the metadata ----------------------------------------

    async def metadata(self) -> Metadata:
        """The issuer's metadata, discovered once (a failure is retried after :data:`METADATA_RETRY_SECONDS`).

        Raises:
            AuthServerError: no metadata could be had.
        """
        if self._metadata is None:
            async with self._discovering:  # concurrent first requests share one discovery
                if self._metadata is None:
                    if time.monotonic() - self._metadata_failed < METADATA_RETRY_SECONDS:
                        raise AuthServerError("the authorization server's metadata could not be fetched a moment ago")
                    try:
                        self._metadata = await discover(self._client, self.settings.issuer)
                    except AuthServerError:
                        self._metadata_failed = time.monotonic()
                        raise
        return self._metadata

    async def _jwks_uri(self) -> str:
        if self.settings.jwks_uri is not None:
            return self.settings.jwks_uri
        uri = (await self.metadata()).jwks_uri
        if uri is None:
            raise AuthServerError("the authorization server's metadata names no jwks_uri")
        return uri

    async def _introspection_endpoint(self) -> str | None:
        if self.settings.introspection_endpoint is not None:
            return self.settings.introspection_endpoint
        if self.settings.client_id is None:
            return None  # no credentials to introspect with
        return (await self.metadata()).introspection_endpoint

    # --- verification ---------------------------------------------------------------------------

    async def verify_header(self, authorization: str | None) -> Principal | Refusal:
        """The principal of a request's ``Authorization`` header value, or why it is refused."""
        if authorization is None:
            return Refusal(401, None, "no token", "a bearer token is required")
        if len(authorization) > self.settings.max_token_bytes + 16:
            return _refused("size", f"the token is longer than {self.settings.max_token_bytes} bytes")
        scheme = authorization.lstrip(" \t")[:7].lower()
        if scheme != "bearer " and scheme != "bearer":
            return Refusal(401, None, "scheme", "the Authorization header is not a bearer token")
        match = _BEARER.fullmatch(authorization.strip(" \t"))
        if match is None:
            return MALFORMED
        return await self.verify(match.group(1))

    async def verify(self, token: str) -> Principal | Refusal:
        """The principal of a bearer token, or why it is refused (scopes included).

        Never raises for a bad token; an unreachable authorization server is a 503 refusal.
        """
        if len(token) > self.settings.max_token_bytes:
            return _refused("size", f"the token is longer than {self.settings.max_token_bytes} bytes")
        cached = self._verified.get(token)
        if cached is not None and cached[1] > time.time() and cached[2] == self.keys.generation:
            verdict: Principal | Refusal = cached[0]
        else:
            try:
                if _JWS_SHAPE.fullmatch(token):
                    verdict = await self._verify_jwt(token)
                else:
                    verdict = await self.introspector.verify(token)
            except AuthServerError as exc:
                return Refusal(503, None, "authorization server", f"the token cannot be checked now ({exc})")
        if isinstance(verdict, Refusal):
            return verdict
        if not self._required <= verdict.scopes:
            return Refusal(403, "insufficient_scope", "scope", "the token lacks a required scope")
        return verdict

    async def _verify_jwt(self, token: str) -> Principal | Refusal:
        try:
            signed = extract_compact(token.encode("ascii"), registry=self._registry)
        except (JoseError, ValueError, TypeError):
            return _refused("format", "the token is not a well-formed JWS")
        header = signed.headers()
        alg = header.get("alg")
        if type(alg) is not str or alg not in self._algorithms:
            return _refused("algorithm", "the token's signing algorithm is not accepted")
        kid = header.get("kid")
        if kid is not None and type(kid) is not str:
            return _refused("key id", "the token's kid is not a string")
        generation = self.keys.generation
        key = await self.keys.key_for(kid)
        if key is None:
            return _refused("key id", "the token names no key of the issuer's JWKS")
        try:
            valid = validate_compact(signed, key, registry=self._registry)
        except (JoseError, ValueError, TypeError):
            valid = False
        if not valid:
            return _refused("signature", "the token's signature does not verify")
        try:
            claims: Any = json.loads(signed.payload)
        except (ValueError, RecursionError):
            return _refused("format", "the token's claims are not JSON")
        if type(claims) is not dict:
            return _refused("format", "the token's claims are not a JSON object")
        try:
            self._claims.validate(claims)
        except ExpiredTokenError:
            return _refused("expired", "the token has expired")
        except ClaimError as exc:
            check = _CLAIM_CHECKS.get(exc.claim.split(",")[0], "claims")
            return _refused(check, f"the token's {check} claim is missing or not accepted")
        except (JoseError, ValueError, TypeError):
            return _refused("claims", "the token's claims are not accepted")
        principal = principal_from_claims(claims, self.settings.issuer, self.settings.group_claim)
        if principal is None:
            return _refused("subject", "the token names no subject (sub or client_id)")
        self._remember(token, principal, claims.get("exp"), generation)
        return principal

    def _remember(self, token: str, principal: Principal, exp: Any, generation: int) -> None:
        if len(self._verified) >= MAX_CACHED:
            now = time.time()
            for old in [t for t, (_, until, _) in self._verified.items() if until <= now]:
                del self._verified[old]
            if len(self._verified) >= MAX_CACHED:
                for old in list(self._verified)[: MAX_CACHED // 2]:
                    del self._verified[old]
        until = min(float(exp), time.time() + CACHE_SECONDS)
        self._verified[token] = (principal, until, generation)
