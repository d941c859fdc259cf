"""What verifying a bearer token comes to: a :class:`~.principal.Principal`, or a :class:`Refusal` naming the check.

Pure: no I/O, no JOSE. :func:`principal_from_claims` reads the claims of a verified JWT (RFC 9068
section 2.2) or of an introspection answer (RFC 7662 section 2.2), which share their names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from .principal import Principal

__all__ = ["MALFORMED", "Refusal", "principal_from_claims", "scopes_of", "strings_of"]


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request the resource server refuses, and why.

    Attributes:
        status: the HTTP status: 400 (a malformed ``Authorization`` header, RFC 6750 section 3.1),
            401 (no token, or a token that fails a check), 403 (a valid token without a required
            scope), 503 (the authorization server's keys or introspection cannot be had).
        error: the RFC 6750 section 3.1 error code (``invalid_request``, ``invalid_token``,
            ``insufficient_scope``), or None (no token was given; 503).
        check: which check failed, for the log line (``signature``, ``issuer``, ``audience``,
            ``expired``, ...); never a token's or a claim's value.
        description: the ``error_description``: the check in words, never a value.
    """

    status: int
    error: str | None
    check: str
    description: str


MALFORMED: Final = Refusal(
    400, "invalid_request", "header", "the Authorization header is not `Bearer` and one token (RFC 6750 section 2.1)"
)
"""The refusal of an ``Authorization`` header that does not parse as ``Bearer <token68>``."""


def strings_of(value: Any) -> frozenset[str]:
    """The strings of a claim that is a string or an array of strings (others are ignored)."""
    if type(value) is str:
        return frozenset((value,))
    if type(value) is list:
        return frozenset(v for v in value if type(v) is str)
    return frozenset()


def scopes_of(claims: dict[str, Any]) -> frozenset[str]:
    """The granted scopes: ``scope`` split on spaces (RFC 9068 section 2.2.3, RFC 7662), else ``scp`` (an array)."""
    scope = claims.get("scope")
    if type(scope) is str:
        return frozenset(scope.split())
    return strings_of(claims.get("scp"))


def principal_from_claims(claims: dict[str, Any], issuer: str, group_claim: str) -> Principal | None:
    """The principal verified claims name, or None when they name no subject.

    ``sub`` is the subject; a token without one (some client-credentials tokens) names its
    ``client_id`` instead. ``client_id`` falls back to ``azp`` (OpenID Connect Core section 2).
    """
    client_id = claims.get("client_id")
    if type(client_id) is not str:
        client_id = claims.get("azp")
    if type(client_id) is not str:
        client_id = None
    subject = claims.get("sub")
    if type(subject) is not str or not subject:
        subject = client_id
    if not subject:
        return None
    return Principal(
        subject=subject,
        issuer=issuer,
        client_id=client_id,
        scopes=scopes_of(claims),
        groups=strings_of(claims.get(group_claim)),
    )
