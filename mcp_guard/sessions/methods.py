"""What ``serve``'s session does with each client request, by its method (one table, read by the session).

- :data:`LIST_METHODS`: the lists it answers from the merged lists, and the member of each result;
- :data:`ROUTED_METHODS`: the other requests it answers or routes by name or URI; one of these (or a
  list method) without an id is dropped, never sent to every upstream (a notification cannot be judged,
  routed or answered: red team 32 saw an id-less ``tools/call`` run at every server);
- :data:`BEFORE_INITIALIZE`: those it serves before ``initialize`` without a 2026-07-28 envelope.

Every other request is answered -32601; every other notification goes to every running upstream.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BEFORE_INITIALIZE", "LIST_METHODS", "ROUTED_METHODS"]

LIST_METHODS: Final = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
"""List methods -> the member of their result."""

ROUTED_METHODS: Final = frozenset(
    {"initialize", "ping", "server/discover", "tools/call", "prompts/get", "completion/complete", "logging/setLevel"}
    | {"resources/read", "resources/subscribe", "resources/unsubscribe", "subscriptions/listen"}
)
"""Requests the session answers itself or routes by name or URI (besides :data:`LIST_METHODS`)."""

BEFORE_INITIALIZE: Final = frozenset({"ping", "server/discover", "logging/setLevel"})
"""Requests the gateway serves before ``initialize`` without a 2026-07-28 envelope."""
