"""Opaque access tokens checked by token introspection (RFC 7662), answers cached within the token's life.

:class:`Introspector` POSTs ``token`` and ``token_type_hint=access_token`` to the introspection
endpoint (the configured one, or the issuer's metadata's), authenticated with the guard's client
credentials (HTTP Basic, RFC 7662 section 2.1). The answer must say ``"active": true``; its
``iss``, when present, must be the issuer; its ``aud`` must hold the resource URI (the MCP spec's
audience binding: an answer without ``aud`` is refused); ``exp`` and ``nbf``, when present, are
checked with the leeway. An answer is reused for at most ``introspection_cache_seconds`` and
never past the token's ``exp`` (RFC 7662 section 4: a cache trades the revocation's reach for
load); with 0 every request is introspected, and a revoked token is refused at once. A refusal
is reused the same way (garbage tokens do not each cost a round trip).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeGuard

import httpx2

from ..oauth_config import OAuthSettings
from .documents import fetch_json
from .principal import Principal
from .verdicts import Refusal, principal_from_claims, strings_of

__all__ = ["MAX_CACHED_ANSWERS", "Introspector"]

MAX_CACHED_ANSWERS: Final = 10_000
"""Introspection answers remembered (the oldest half is forgotten when full)."""


def _number(value: Any) -> TypeGuard[int | float]:
    """A JSON number (RFC 7519 NumericDate), not a boolean, not NaN."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _refused(check: str, description: str) -> Refusal:
    return Refusal(401, "invalid_token", check, description)


class Introspector:
    """RFC 7662 introspection of opaque tokens for one resource server.

    Args:
        client: the HTTP client.
        settings: the resource server's settings.
        credentials: ``(client_id, client_secret)`` for HTTP Basic, or None.
        endpoint: gives the endpoint URL, or None when there is none (opaque tokens are then refused).

    Attributes:
        calls: introspection requests made (tests read it).
    """

    def __init__(
        self,
        client: httpx2.AsyncClient,
        settings: OAuthSettings,
        credentials: tuple[str, str] | None,
        endpoint: Callable[[], Awaitable[str | None]],
    ) -> None:
        self._client = client
        self._settings = settings
        self._credentials = credentials
        self._endpoint = endpoint
        self._answers: dict[str, tuple[Principal | Refusal, float]] = {}  # token -> (verdict, until)
        self.calls = 0

    async def verify(self, token: str) -> Principal | Refusal:
        """The principal an active token names, or why it is refused (scopes are the caller's check).

        Raises:
            AuthServerError: the endpoint could not be asked, or its answer is not JSON.
        """
        cached = self._answers.get(token)
        now = time.time()
        if cached is not None and cached[1] > now:
            return cached[0]
        endpoint = await self._endpoint()
        if endpoint is None:
            return _refused("format", "the token is not a JWT, and the guard has no introspection endpoint")
        self.calls += 1
        form = {"token": token, "token_type_hint": "access_token"}
        answer = await fetch_json(self._client, endpoint, form=form, auth=self._credentials)
        verdict, exp = self._judge(answer, time.time())
        limit = self._settings.introspection_cache_seconds
        if limit > 0:
            until = min(now + limit, exp) if exp is not None else now + limit
            self._remember(token, verdict, until)
        return verdict

    def _judge(self, answer: dict[str, Any], now: float) -> tuple[Principal | Refusal, float | None]:
        if answer.get("active") is not True:
            return _refused("inactive", "the token is not active (expired, revoked or unknown)"), None
        leeway = self._settings.leeway_seconds
        raw_exp = answer.get("exp")
        exp = float(raw_exp) if _number(raw_exp) else None
        if exp is not None and exp <= now - leeway:
            return _refused("expired", "the token has expired"), None
        nbf = answer.get("nbf")
        if _number(nbf) and nbf > now + leeway:
            return _refused("not before", "the token is not valid yet"), None
        issuer = answer.get("iss")
        if issuer is not None and issuer != self._settings.issuer:
            return _refused("issuer", "the token's issuer claim is not accepted"), None
        if self._settings.resource not in strings_of(answer.get("aud")):
            return _refused("audience", "the token's audience claim is missing or not accepted"), None
        principal = principal_from_claims(answer, self._settings.issuer, self._settings.group_claim)
        if principal is None:
            return _refused("subject", "the token names no subject (sub or client_id)"), None
        return principal, exp

    def _remember(self, token: str, verdict: Principal | Refusal, until: float) -> None:
        if len(self._answers) >= MAX_CACHED_ANSWERS:
            now = time.time()
            for old in [t for t, (_, u) in self._answers.items() if u <= now]:
                del self._answers[old]
            if len(self._answers) >= MAX_CACHED_ANSWERS:
                for old in list(self._answers)[: MAX_CACHED_ANSWERS // 2]:
                    del self._answers[old]
        self._answers[token] = (verdict, until)
