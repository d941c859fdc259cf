"""The issuer's signing keys: its JWKS (RFC 7517 section 5), fetched, cached, refreshed on an unknown ``kid``.

:class:`KeyRing` holds the last JWKS fetched (at most :data:`~.documents.MAX_DOCUMENT_BYTES`
bytes). A token whose ``kid`` is not in it makes the ring fetch the JWKS again (the issuer
rotated its keys), but at most once per ``jwks_refresh_seconds``: a flood of tokens with made-up
``kid`` values costs one fetch per interval, not one per token. Concurrent requests that need a
fetch share it. A JWKS older than ``jwks_max_age_seconds`` is fetched again before it is used
(a retired key stops being accepted); when that fetch fails the keys held are kept, and an issuer
that cannot be reached is asked again after at most :data:`RETRY_SECONDS`, never once per
request. Keys of type ``oct`` (shared secrets) and keys whose ``use`` is not ``sig`` are left
out: a resource server verifies with public keys only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio
import httpx2
from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry, Key

from ..oauth_config import OAuthSettings
from .documents import AuthServerError, fetch_json

__all__ = ["KeyRing"]

log = logging.getLogger("mcp_guard")

_PUBLIC_TYPES = frozenset({"RSA", "EC", "OKP"})

RETRY_SECONDS: Final = 5.0
"""After a failed fetch, how long a ring with no keys (or a stale set) waits before it asks again (at most)."""


class KeyRing:
    """The issuer's signature keys, by ``kid``.

    Args:
        client: the HTTP client fetches go through.
        settings: the resource server's settings (refresh interval, maximum age).
        jwks_uri: gives the JWKS URL (the configured one, or the metadata's); may raise
            :class:`~.documents.AuthServerError`.

    Attributes:
        generation: counts the fetches that changed the key set (a verdict cache keyed on it
            forgets verdicts made with keys that may be gone).
        fetches: how many times the JWKS was fetched (tests and the benchmark read it).
    """

    def __init__(
        self, client: httpx2.AsyncClient, settings: OAuthSettings, jwks_uri: Callable[[], Awaitable[str]]
    ) -> None:
        self._client = client
        self._settings = settings
        self._jwks_uri = jwks_uri
        self._keys: dict[str | None, Key] = {}
        self._fetched_at = -float("inf")  # time.monotonic() of the last fetch that succeeded
        self._tried_at = -float("inf")  # ... of the last fetch tried
        self._lock = anyio.Lock()
        self.generation = 0
        self.fetches = 0

    async def key_for(self, kid: str | None) -> Key | None:
        """The key a token names by ``kid`` (None with a one-key set), or None when the issuer has no such key.

        Raises:
            AuthServerError: the JWKS could not be fetched and none usable is held.
        """
        if self._lock.locked():  # a fetch is under way: what it brings may be the key this token needs
            async with self._lock:
                pass
        now = time.monotonic()
        stale = not self._keys or now - self._fetched_at > self._settings.jwks_max_age_seconds
        if stale and now - self._tried_at >= min(self._settings.jwks_refresh_seconds, RETRY_SECONDS):
            await self._refresh(stale_before=now)  # (an issuer that is down is asked again after RETRY_SECONDS)
        if not self._keys:
            raise AuthServerError("the issuer's JWKS could not be fetched a moment ago")
        key = self._find(kid)
        if key is None and time.monotonic() - self._tried_at >= self._settings.jwks_refresh_seconds:
            await self._refresh(stale_before=time.monotonic())
            key = self._find(kid)
        return key

    def _find(self, kid: str | None) -> Key | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _refresh(self, *, stale_before: float) -> None:
        async with self._lock:
            if self._tried_at >= stale_before:
                return  # another request fetched it meanwhile
            self._tried_at = time.monotonic()
            self.fetches += 1
            try:
                document = await fetch_json(self._client, await self._jwks_uri())
            except AuthServerError:
                if not self._keys:
                    raise
                log.warning("oauth: the JWKS could not be fetched again; the keys held are kept")
                return
            keys = _import(document.get("keys"))
            if not keys:
                if not self._keys:
                    raise AuthServerError("the JWKS holds no usable signature key")
                log.warning("oauth: the JWKS fetched holds no usable signature key; the keys held are kept")
                return
            if set(keys) != set(self._keys):
                self.generation += 1
                log.info("oauth: the JWKS holds %d signature key(s)", len(keys))
            self._keys = keys
            self._fetched_at = time.monotonic()


def _import(entries: Any) -> dict[str | None, Key]:
    """The public signature keys of a JWKS's ``keys`` array, by ``kid`` (keys that do not import are skipped)."""
    keys: dict[str | None, Key] = {}
    if type(entries) is not list:
        return keys
    for entry in entries[:100]:
        if type(entry) is not dict or entry.get("kty") not in _PUBLIC_TYPES or entry.get("use", "sig") != "sig":
            continue
        kid = entry.get("kid")
        if kid is not None and type(kid) is not str:
            continue
        try:
            key = JWKRegistry.import_key(entry)
        except (JoseError, ValueError, TypeError):
            continue
        keys.setdefault(kid, key)
    return keys
