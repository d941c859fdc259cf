"""The HTTP front as an OAuth 2.1 resource server: its settings (:class:`OAuthSettings`; issue 27 item 1).

One model for both places that set it: ``wrap --http`` / ``serve --http`` (``--oauth-issuer``,
``--oauth-resource``, ``--oauth-scope``...) and serve's config file (``guard.auth``, camelCase keys).
Pure pydantic: the token verification (``mcp_guard.auth``, the ``auth`` extra) reads it; this
module imports no JOSE library, so a config that names no issuer costs nothing.

Rules (the MCP authorization spec, revision 2025-11-25, "Access Token Usage" and "Token Audience
Binding and Validation"):

- ``issuer`` is the authorization server's issuer identifier (RFC 8414 section 2): its metadata is
  fetched from ``/.well-known/oauth-authorization-server`` or its OpenID configuration, and the
  ``iss`` of every token must equal it. ``https``, or ``http`` on a loopback host (a test or a
  sidecar; OAuth 2.1 section 1.5 requires TLS elsewhere).
- ``resource`` is the guard's canonical resource URI (RFC 8707 section 2, RFC 9728 section 1): the
  ``aud`` of every token must hold it, exactly as written here (the MCP spec's canonical form:
  lowercase scheme and host, no fragment, no trailing slash unless it is significant).
- ``algorithms`` is the allow-list of JWS algorithms: never ``none``, never an HMAC one (a
  resource server holds no shared secret, and an ``HS256`` token "signed" with the issuer's public
  key is the classic key-confusion attack, RFC 8725 section 2.1).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Annotated, Final
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

__all__ = ["DEFAULT_ALGORITHMS", "OAuthSettings", "client_secret"]

DEFAULT_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
"""The asymmetric JWS algorithms accepted by default (RFC 7518 section 3.1, RFC 8037 section 3.1)."""

_REFUSED_ALGORITHMS: Final = frozenset({"none", "HS256", "HS384", "HS512"})

Scope = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[\x21\x23-\x5b\x5d-\x7e]+$")]
"""One scope token (RFC 6749 section 3.3: ``%x21 / %x23-5B / %x5D-7E``)."""

EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


def _loopback(host: str | None) -> bool:
    if host is None:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_url(value: str, what: str, *, loopback_http: bool) -> str:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        raise ValueError(f"{what} must be an http(s) URL") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(f"{what} must be an https:// URL (http:// only on a loopback host)")
    if parts.scheme == "http" and not (loopback_http and _loopback(parts.hostname)):
        raise ValueError(f"{what} must be an https:// URL (http:// only on a loopback host)")
    if parts.fragment or "#" in value:
        raise ValueError(f"{what} must have no fragment (RFC 8707 section 2)")
    return value


class OAuthSettings(BaseModel):
    """The OAuth 2.1 resource server's settings (``guard.auth``, or the ``--oauth-*`` options).

    Attributes:
        issuer: the authorization server's issuer identifier (tokens' ``iss``; its metadata is
            discovered from it, RFC 8414 section 3 and OpenID Connect Discovery section 4).
        resource: the guard's resource URI (tokens' ``aud``, RFC 8707; the ``resource`` of its
            protected resource metadata, RFC 9728 section 2), e.g. ``https://mcp.example.com/mcp``.
        scopes: scopes every request's token must hold (403 ``insufficient_scope`` otherwise);
            listed as ``scopes_supported`` in the metadata.
        authorization_servers: the issuers named in the protected resource metadata (default:
            ``issuer`` alone).
        algorithms: accepted JWS algorithms (default :data:`DEFAULT_ALGORITHMS`); ``none`` and
            ``HS*`` are refused.
        leeway_seconds: clock skew allowed on ``exp``, ``nbf`` and ``iat`` (RFC 7519 section 4.1.4).
        jwks_uri: the JWKS URL, instead of the metadata's ``jwks_uri``.
        jwks_refresh_seconds: at most one fetch of the JWKS per this many seconds when a token
            names an unknown ``kid`` (a key rotation); other unknown ``kid`` values are refused
            meanwhile.
        jwks_max_age_seconds: a JWKS older than this is fetched again before it is used.
        introspection_endpoint: the RFC 7662 endpoint for opaque (non-JWT) tokens, instead of the
            metadata's ``introspection_endpoint``; with neither, opaque tokens are refused.
        client_id, client_secret_env: the guard's credentials at the introspection endpoint
            (HTTP Basic, RFC 7662 section 2.1); the secret is read from the named variable.
        introspection_cache_seconds: how long an introspection answer is reused (never past
            the token's ``exp``); 0: every request is introspected (a revoked token is refused
            at once).
        max_token_bytes: longer bearer tokens are refused before any parsing (401).
        group_claim: the claim whose strings are the principal's groups.
        resource_name: a human-readable name in the protected resource metadata.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, strict=True)

    issuer: Annotated[str, Field(min_length=1, max_length=2000)]
    resource: Annotated[str, Field(min_length=1, max_length=2000)]
    scopes: tuple[Scope, ...] = ()
    authorization_servers: tuple[str, ...] = ()
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    leeway_seconds: Annotated[int, Field(ge=0, le=300)] = 30
    jwks_uri: str | None = None
    jwks_refresh_seconds: Annotated[float, Field(ge=0, le=3600)] = 30.0
    jwks_max_age_seconds: Annotated[float, Field(gt=0, le=86400)] = 3600.0
    introspection_endpoint: str | None = None
    client_id: Annotated[str, Field(min_length=1, max_length=500)] | None = None
    client_secret_env: EnvName | None = None
    introspection_cache_seconds: Annotated[float, Field(ge=0, le=3600)] = 60.0
    max_token_bytes: Annotated[int, Field(ge=256, le=65536)] = 16384
    group_claim: Annotated[str, Field(min_length=1, max_length=200)] = "groups"
    resource_name: Annotated[str, Field(min_length=1, max_length=200)] | None = None

    @field_validator("scopes", "authorization_servers", "algorithms", mode="before")
    @classmethod
    def _arrays(cls, value: object) -> object:
        """A JSON array (a config file's list) is taken as the tuple it stands for; nothing else is coerced."""
        return tuple(value) if type(value) is list else value

    @field_validator("issuer")
    @classmethod
    def _issuer(cls, value: str) -> str:
        _check_url(value, "the issuer", loopback_http=True)
        parts = urlsplit(value)
        if parts.query:
            raise ValueError("the issuer must have no query (RFC 8414 section 2)")
        return value

    @field_validator("resource")
    @classmethod
    def _resource(cls, value: str) -> str:
        return _check_url(value, "the resource", loopback_http=True)

    @field_validator("jwks_uri", "introspection_endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        return None if value is None else _check_url(value, "an endpoint", loopback_http=True)

    @field_validator("authorization_servers")
    @classmethod
    def _servers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            _check_url(entry, "an authorization server", loopback_http=True)
        return value

    @field_validator("algorithms")
    @classmethod
    def _algorithms(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("give at least one algorithm")
        refused = sorted(a for a in value if a in _REFUSED_ALGORITHMS or a.lower() == "none")
        if refused:
            raise ValueError(
                f"{', '.join(refused)} cannot be accepted: `none` is no signature, and an HMAC algorithm "
                "needs a shared secret a resource server does not hold (RFC 8725 section 2.1)"
            )
        known = (*DEFAULT_ALGORITHMS, "Ed25519", "Ed448")
        unknown = [f"[{i}]" for i, a in enumerate(value) if a not in known]
        if unknown:  # by position, not by value: a config may hold a secret in the wrong place
            raise ValueError(
                f"item{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                f"{'are not JWS algorithms' if len(unknown) > 1 else 'is not a JWS algorithm'} the guard knows "
                f"({', '.join(known)})"
            )
        return value

    @model_validator(mode="after")
    def _credentials(self) -> OAuthSettings:
        if (self.client_id is None) != (self.client_secret_env is None):
            raise ValueError("give both `clientId` and `clientSecretEnv` (the introspection credentials), or neither")
        return self

    @property
    def servers(self) -> tuple[str, ...]:
        """The authorization servers the protected resource metadata names (default: the issuer)."""
        return self.authorization_servers or (self.issuer,)


def client_secret(settings: OAuthSettings, environ: Mapping[str, str]) -> str | None:
    """The introspection client's secret, from the variable ``settings.client_secret_env`` names (None: none named).

    Raises:
        ValueError: the variable is not set or empty (the message names it, never a value).
    """
    name = settings.client_secret_env
    if name is None:
        return None
    value = environ.get(name, "").strip()
    if not value:
        raise ValueError(f"the environment variable {name} (the OAuth client secret) is not set or empty")
    return value
