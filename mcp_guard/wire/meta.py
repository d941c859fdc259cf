"""``_meta`` keys and the 2026-07-28 era's request envelope; no I/O.

The ``mcp-guard/`` keys belong to the guard: an upstream's are removed from every message
(:func:`without_guard_keys`), so a tool result cannot pose as a refusal. A 2026-07-28 request
carries its envelope in ``params._meta`` (``io.modelcontextprotocol/protocolVersion``,
``/clientInfo``, ``/clientCapabilities``); a handshake-era request does not.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "ENVELOPE_PREFIX",
    "META_PREFIX",
    "PROTOCOL_VERSION_KEY",
    "REJECTION_KEY",
    "SCHEMA_KEY",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
    "UNTIMED",
    "era_meta",
    "is_modern",
    "without_guard_keys",
]

META_PREFIX: Final = "mcp-guard/"
"""``_meta`` keys starting so are the guard's own."""
SCHEMA_KEY: Final = "mcp-guard/schema"
"""A listed tool's verdict: ``{"supported": bool, "issues": [...]}``."""
REJECTION_KEY: Final = "mcp-guard/rejection"
"""A refused call's result: ``{"kind", "tool", "issues"}``."""

ENVELOPE_PREFIX: Final = "io.modelcontextprotocol/"
"""The 2026-07-28 era's envelope keys in a request's ``_meta`` start so."""
PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
"""Where a 2026-07-28 ``server/discover`` result carries the server's identity (``_meta``)."""
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"
"""The ``_meta`` key that stamps every frame of a ``subscriptions/listen`` stream with the listen request's id."""

UNTIMED: Final = frozenset({"subscriptions/listen", "tasks/result"})
"""Requests that stay open by design (a 2026-07-28 listen stream; a task's result): no client request timeout."""


def is_modern(params: Any) -> bool:
    """Whether a request belongs to the 2026-07-28 era: its ``_meta`` names its protocol version."""
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and PROTOCOL_VERSION_KEY in meta


def era_meta(params: Any) -> dict[str, Any] | None:
    """The protocol-era envelope of a request (2026-07-28: its ``io.modelcontextprotocol/*`` ``_meta`` keys),
    or None when it has none."""
    if type(params) is not dict or type(params.get("_meta")) is not dict:
        return None
    meta = {k: v for k, v in params["_meta"].items() if type(k) is str and k.startswith(ENVELOPE_PREFIX)}
    return meta or None


def without_guard_keys(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with ``mcp-guard/`` keys removed from ``result._meta`` and ``params._meta`` (copied only if any)."""
    for member in ("result", "params"):
        body = message.get(member)
        if type(body) is dict and type(body.get("_meta")) is dict:
            meta = body["_meta"]
            if any(type(k) is str and k.startswith(META_PREFIX) for k in meta):
                cleaned = {k: v for k, v in meta.items() if not (type(k) is str and k.startswith(META_PREFIX))}
                message = {**message, member: {**body, "_meta": cleaned}}
    return message
