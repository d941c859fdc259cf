"""The 2026-07-28 era's state in a gateway session: per-envelope merged lists and listen streams.

In that era every request carries its envelope (protocol version, client capabilities), and an
upstream may list differently per envelope: an :class:`Envelope` holds the merged lists its
requests are served from, and per upstream connection a :class:`~.freshness.Listed` record of when each
listing goes stale (``ttlMs``, or a listen stream of the guard's own reporting changes). A
:class:`ClientListen` is a client's own ``subscriptions/listen`` stream, served by the session.
:func:`merged_capabilities` is the capability merge of ``initialize`` and ``server/discover``
answers (both eras). No I/O; :mod:`.session` drives them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio

from ..wire.meta import CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY, SUBSCRIPTION_ID_KEY
from .freshness import Listed
from .merged_lists import MergedLists

if TYPE_CHECKING:
    from .link import Link

__all__ = [
    "ENVELOPE_KEYS",
    "ClientListen",
    "Envelope",
    "merged_capabilities",
]

ENVELOPE_KEYS: Final = (PROTOCOL_VERSION_KEY, CLIENT_INFO_KEY, CAPABILITIES_KEY)
"""The ``_meta`` keys of a client's envelope that the guard's own 2026-07-28 requests carry (not its log level)."""


class Envelope:
    """The merged lists of one 2026-07-28 envelope (protocol version, client capabilities).

    Attributes:
        meta: the envelope keys (:data:`ENVELOPE_KEYS`) the guard's own requests for it carry.
        view: the merged lists its requests are served from.
        listed: per link name, what the view holds of that upstream.
    """

    def __init__(self, view: MergedLists, meta: dict[str, Any]) -> None:
        self.view = view
        self.meta = meta
        self.listed: dict[str, Listed] = {}

    def of(self, link: Link) -> Listed:
        """What the envelope holds of ``link``'s current connection (a fresh record for a new connection)."""
        listed = self.listed.get(link.name)
        if listed is None or listed.connection != link.connection:
            if listed is not None:
                listed.silence()
            listed = self.listed[link.name] = Listed(link.connection)
        return listed

    def ttl_ms(self, kind: str) -> int:
        """The ``ttlMs`` of a merged list: the shortest of its upstreams' (0 when none gave one)."""
        given = [x.ttl_ms[kind] for x in self.listed.values() if kind in x.ttl_ms]
        return min(given) if given else 0

    def close(self) -> None:
        """The envelope is dropped: its listen streams are cancelled."""
        for listed in self.listed.values():
            listed.silence()


@dataclass
class ClientListen:
    """A ``subscriptions/listen`` stream of the client's (2026-07-28 era), served by the session.

    Attributes:
        request_id: the client's id of the listen request (stamped on every frame).
        kinds: the list kinds whose ``list_changed`` the client asked for.
        acknowledged: the client got its ``notifications/subscriptions/acknowledged``.
        held: resource updates that came before that acknowledgement (sent right after it).
        ended: set when an upstream stream it relies on ended (the client's stream then ends).
        scope: cancelled when the client cancels the request.
    """

    request_id: Any
    kinds: set[str]
    acknowledged: bool = False
    held: list[dict[str, Any]] = field(default_factory=list)
    ended: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def stamped(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A notification for this stream: ``params._meta`` carries the client's listen id."""
        body = dict(params or {})
        meta = body.get("_meta")
        body["_meta"] = {**(meta if type(meta) is dict else {}), SUBSCRIPTION_ID_KEY: self.request_id}
        return {"jsonrpc": "2.0", "method": method, "params": body}


def merged_capabilities(upstreams: Iterable[Any]) -> dict[str, Any]:
    """The gateway's capabilities over its upstreams' (``initialize`` or ``server/discover`` answers).

    Tools always, with ``listChanged`` (the gateway's own merged list); prompts and resources
    (``listChanged``; ``subscribe`` when any upstream offers it) where any upstream has them;
    ``logging`` and ``completions`` likewise. A value that is not an object counts for nothing.
    """
    merged: dict[str, Any] = {"tools": {"listChanged": True}}
    for theirs in upstreams:
        if type(theirs) is not dict:
            continue
        if "prompts" in theirs:
            merged["prompts"] = {"listChanged": True}
        if "resources" in theirs:
            resources = merged.setdefault("resources", {"listChanged": True})
            if type(theirs["resources"]) is dict and theirs["resources"].get("subscribe"):
                resources["subscribe"] = True
        for member in ("logging", "completions"):
            if member in theirs:
                merged[member] = {}
    return merged
