"""The requests upstreams send the client (sampling, elicitation, ``roots/list``, ``ping``), for ``wrap`` and
``serve`` alike: each goes to the client under an id of the guard's own.

One object, one rule for both commands (issue 23 item 1): the client's answer goes back to the upstream that
asked, under that upstream's own id. An id of the guard's (``peer.requests.IdMint``: a random nonce) is never
the id of another request by chance, so:

- ``serve``: two upstreams may use the same id at once (each has its own numbering);
- ``wrap``: an upstream started again after it went away numbers its requests afresh; the client's late
  answer to a request of the gone upstream can never reach the new one's request under the same id (it is
  dropped, as the client's answer to any request whose upstream went away).

An upstream's ``notifications/cancelled`` for its request names the guard's id to the client
(:meth:`ServerRequests.cancelled`); an upstream that goes away has its requests cancelled towards the
client (:meth:`ServerRequests.gone`: the ids to name) and their late answers dropped.
"""

from __future__ import annotations

from typing import Any, Final, Generic, TypeVar

from ..peer.requests import IdMint
from ..wire.jsonrpc import id_key, valid_id

__all__ = ["MAX_GONE", "ServerRequests"]

MAX_GONE: Final = 10_000
"""Ids of requests whose upstream went away kept (their late answers dropped quietly); beyond, the oldest go."""

Owner = TypeVar("Owner")

Key = tuple[bool, Any]


class ServerRequests(Generic[Owner]):
    """The upstreams' requests to the client, not answered yet, by the id the client was given.

    ``Owner`` is what tells the upstreams apart (``serve``: its ``Link``; ``wrap``: the peer's connection number).
    """

    def __init__(self) -> None:
        self._ids = IdMint()
        self._pending: dict[Key, tuple[Owner, Any]] = {}  # the client's id key -> (the upstream, its own id)
        self._gone: dict[Key, None] = {}  # ids of requests whose upstream went away (insertion-ordered)

    def __len__(self) -> int:
        return len(self._pending)

    def to_client(self, owner: Owner, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` (a request of ``owner``'s, with a valid id) as it goes to the client: under a fresh id."""
        client_id = self._ids.new_id()
        self._pending[id_key(client_id)] = (owner, message["id"])
        return {**message, "id": client_id}

    def answered(self, message: dict[str, Any]) -> tuple[Owner, dict[str, Any]] | None:
        """The client's answer ``message``: ``(the upstream that asked, the answer under its id)``, or None
        (an answer to no pending request: to one of an upstream that went away, or to an id never given)."""
        request_id = message.get("id")
        if not valid_id(request_id):
            return None
        found = self._pending.pop(id_key(request_id), None)
        if found is None:
            return None
        owner, upstream_id = found
        return owner, {**message, "id": upstream_id}

    def was_gone(self, message: dict[str, Any]) -> bool:
        """Whether the client's answer ``message`` (not pending) answers a request of an upstream that went away."""
        request_id = message.get("id")
        return valid_id(request_id) and self._gone.pop(id_key(request_id), False) is None

    def withdrawn(self, request_id: Any) -> tuple[Owner, Any] | None:
        """The client cancelled the request it knows as ``request_id`` (``notifications/cancelled``):
        ``(the upstream that asked, its own id)`` to tell it, or None (no such request is pending)."""
        return self._pending.pop(id_key(request_id), None) if valid_id(request_id) else None

    def cancelled(self, owner: Owner, upstream_id: Any) -> Any:
        """``owner`` cancelled its request ``upstream_id``: the id the client knows it by (no longer
        pending), or None (no such request is pending)."""
        for key, (who, theirs) in self._pending.items():
            if who == owner and id_key(theirs) == id_key(upstream_id):
                del self._pending[key]
                return key[1]
        return None

    def cancellation(self, owner: Owner, message: dict[str, Any]) -> dict[str, Any] | None:
        """``owner``'s ``notifications/cancelled`` as it goes to the client: naming the request by the id the
        client knows it by (no longer pending); None when it names no request of ``owner``'s that the client
        holds (dropped). A notice without a valid ``requestId`` goes on as it is."""
        params = message.get("params")
        if type(params) is not dict or not valid_id(params.get("requestId")):
            return message
        client_id = self.cancelled(owner, params["requestId"])
        return None if client_id is None else {**message, "params": {**params, "requestId": client_id}}

    def gone(self, owner: Owner) -> list[Any]:
        """``owner`` went away: the ids the client knows its pending requests by (to cancel them there); their
        answers are dropped from now on."""
        ids = [key for key, (who, _theirs) in self._pending.items() if who == owner]
        for key in ids:
            del self._pending[key]
            self._gone[key] = None
        while len(self._gone) > MAX_GONE:
            del self._gone[next(iter(self._gone))]
        return [key[1] for key in ids]
