"""The caller a verified access token names (issue 27, item 2).

Pure: no I/O, no JOSE. The HTTP front builds a :class:`Principal` from a token it has verified
(signature, ``iss``, ``aud``, ``exp``/``nbf``: RFC 9068 §4, RFC 8707) and hands it with each
request to the session; the call pipeline's policy, budgets and journal read it. The token
itself never travels past the front.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Callers", "Principal"]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who sent a request, as a verified access token says.

    Attributes:
        subject: the token's ``sub`` claim (RFC 9068 §2.2: the resource owner, or the client
            itself for a client-credentials grant).
        issuer: the token's ``iss`` claim (the authorization server's issuer identifier).
        client_id: the ``client_id`` claim (RFC 9068 §2.2), else ``azp`` (OpenID Connect Core
            §2), else None.
        scopes: the granted scopes (the ``scope`` claim split on spaces, RFC 9068 §2.2.3).
        groups: the values of the group claim the config names (``groups`` by default), as
            strings; empty when the token has none.

    Values are the token's, so they are the caller's: log them only through
    :func:`mcp_guard.safe_text.escape`, and never the token.
    """

    subject: str
    issuer: str
    client_id: str | None = None
    scopes: frozenset[str] = field(default_factory=frozenset)
    groups: frozenset[str] = field(default_factory=frozenset)


@runtime_checkable
class Callers(Protocol):
    """A session's client side that knows who sent each request: the HTTP front's, with OAuth (issue 27).

    The one way a principal travels from the front to a session: the front notes it with each
    request it passes on (by the id the session sees), and the session asks when it builds the
    ``Call`` of a ``tools/call`` (``calls.pipeline.Call.principal``). A client side without it
    (stdio) has no principal to give.
    """

    def principal_of(self, request_id: Any) -> Principal | None:
        """Who sent the request with this JSON-RPC id (as the session sees it); None when no token named anyone."""
        ...
