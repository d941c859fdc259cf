"""The authorization server's documents: its metadata (RFC 8414, OpenID Connect Discovery) and JSON fetches.

Every document is fetched with :func:`fetch_json`: a GET (or a form POST) with a deadline, the
body read in chunks and given up past a size cap (a JWKS or metadata document of megabytes is
not a key set, it is an attack or a mistake), parsed as a JSON object. Redirects are not
followed: the issuer's metadata and keys come from the URLs the metadata names.

Metadata discovery (:func:`metadata_urls`, :func:`discover`), as the MCP authorization spec
(revision 2025-11-25, "Authorization Server Metadata Discovery") has clients do it, in order:
for an issuer with a path (``https://as.example/tenant``),
``/.well-known/oauth-authorization-server/tenant``, ``/.well-known/openid-configuration/tenant``,
``/tenant/.well-known/openid-configuration``; for one without,
``/.well-known/oauth-authorization-server`` then ``/.well-known/openid-configuration``. The first
document that parses is used; its ``issuer`` must equal the configured one (RFC 8414 section 3.3:
else an attacker's metadata could name its own keys).

Errors (:class:`AuthServerError`) name the URL and what went wrong, never a body or a token.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urlsplit, urlunsplit

import httpx2

from ..errors import GuardError
from ..safe_text import escape

__all__ = ["MAX_DOCUMENT_BYTES", "AuthServerError", "Metadata", "discover", "fetch_json", "metadata_urls"]

MAX_DOCUMENT_BYTES: Final = 256 * 1024
"""Largest metadata, JWKS or introspection document read (bytes); a larger one is an error."""

FETCH_TIMEOUT: Final = 5.0
"""Seconds one fetch may take, connection included."""


class AuthServerError(GuardError):
    """The authorization server's metadata, keys or introspection answer cannot be had (a 503, not a 401)."""


async def fetch_json(
    client: httpx2.AsyncClient,
    url: str,
    *,
    form: dict[str, str] | None = None,
    auth: tuple[str, str] | None = None,
    cap: int = MAX_DOCUMENT_BYTES,
) -> dict[str, Any]:
    """GET ``url`` (POST ``form`` when given, with HTTP Basic ``auth``) and parse the body as a JSON object.

    Raises:
        AuthServerError: no answer within :data:`FETCH_TIMEOUT`, a status other than 200, a body
            over ``cap`` bytes, or a body that is not a JSON object.
    """
    where = escape(url[:200])
    try:
        if form is None:
            request = client.build_request("GET", url, headers={"accept": "application/json"})
        else:
            request = client.build_request("POST", url, data=form, headers={"accept": "application/json"})
        # RFC 6749 section 2.3.1: the client id and secret are form-urlencoded before HTTP Basic.
        basic = None if auth is None else httpx2.BasicAuth(quote(auth[0], safe=""), quote(auth[1], safe=""))
        response = await client.send(request, stream=True, auth=basic, follow_redirects=False)
        try:
            if response.status_code != 200:
                raise AuthServerError(f"{where} answered HTTP {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > cap:
                    raise AuthServerError(f"{where} sent more than {cap} bytes")
        finally:
            await response.aclose()
    except httpx2.HTTPError as exc:
        raise AuthServerError(f"{where} could not be fetched ({type(exc).__name__})") from None
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        raise AuthServerError(f"{where} sent a body that is not JSON") from None
    if type(document) is not dict:
        raise AuthServerError(f"{where} sent JSON that is not an object")
    return document


@dataclass(frozen=True)
class Metadata:
    """What the guard reads of the authorization server's metadata (RFC 8414 section 2).

    Attributes:
        issuer: the ``issuer`` (equal to the configured one).
        jwks_uri: the ``jwks_uri``, or None when it names none.
        introspection_endpoint: the ``introspection_endpoint`` (RFC 7662), or None.
    """

    issuer: str
    jwks_uri: str | None
    introspection_endpoint: str | None


def metadata_urls(issuer: str) -> list[str]:
    """The URLs tried for ``issuer``'s metadata, in order (the module's docstring says which and why)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(new_path: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, new_path, "", ""))

    if path:
        return [
            at(f"/.well-known/oauth-authorization-server{path}"),
            at(f"/.well-known/openid-configuration{path}"),
            at(f"{path}/.well-known/openid-configuration"),
        ]
    return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]


def _url_or_none(document: dict[str, Any], key: str) -> str | None:
    value = document.get(key)
    if type(value) is not str:
        return None
    scheme = urlsplit(value).scheme
    return value if scheme in ("https", "http") else None


async def discover(client: httpx2.AsyncClient, issuer: str) -> Metadata:
    """Fetch and check ``issuer``'s metadata from the first of :func:`metadata_urls` that answers with it.

    Raises:
        AuthServerError: none of the URLs gave a metadata document, or its ``issuer`` is not ``issuer``.
    """
    problems: list[str] = []
    for url in metadata_urls(issuer):
        try:
            document = await fetch_json(client, url)
        except AuthServerError as exc:
            problems.append(str(exc))
            continue
        if document.get("issuer") != issuer:
            raise AuthServerError(
                f"the metadata at {escape(url[:200])} names another issuer than the configured one (RFC 8414 "
                "section 3.3)"
            )
        return Metadata(issuer, _url_or_none(document, "jwks_uri"), _url_or_none(document, "introspection_endpoint"))
    raise AuthServerError("no authorization server metadata found: " + "; ".join(problems))
