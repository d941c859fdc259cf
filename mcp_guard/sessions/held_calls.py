"""The client's messages behind a call ``wrap`` holds for its own listing of the tools: kept in the client's order.

A ``tools/call`` whose tool table is not a complete listing waits while the guard lists every page itself
(``client_routes.ClientRoutes.needs_listing``). A stdio server takes its requests in the order it reads them, and a bare
relay keeps that order, so what the client sends after a held call waits behind it, in order, and is released
once the call is decided (``relay.Relay._hold``; red team 37: held calls reached the server after calls the
client sent later, ``0 1 7 8 9 2 3 4 5 6``). What cannot change the order of the client's requests among
themselves goes on meanwhile (:func:`keeps_order`), since the server may need it before it answers the guard's
listing:

- ``ping`` (answered by the server whenever it reads it; it orders nothing);
- notifications. ``notifications/cancelled`` of a request waiting here drops both (:meth:`HeldMessages.cancel`);
  of the held call itself, it is withdrawn and its id free at once (``client_requests``);
- the client's answers to the upstream's own requests (a server may ask the client something, ``roots/list``,
  before it answers).

Messages waiting here are not admitted yet (``client_requests``): their ids are checked when they are released,
in order, as they would have been on arrival after the call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import MutableSequence
from typing import Any

from ..wire.jsonrpc import id_key, valid_id

__all__ = ["HeldMessages", "keeps_order", "unlisted_after_client_text"]


def keeps_order(message: Any) -> bool:
    """Whether a client message (or batch) waits behind a held call: a request but ``ping``, or a batch."""
    return type(message) is not dict or ("id" in message and "method" in message and message["method"] != "ping")


def unlisted_after_client_text(waited: float) -> str:
    """The -32603 text for a call ``wrap`` held for its own listing of the tools, and for the requests behind it,
    when the client closed its side and the upstream had not answered that listing ``waited`` seconds later: the
    guard stops the upstream (it did not go away by itself, red team 37), and none of them was sent."""
    return (
        "mcp-guard: the client closed its side before the guard could list the upstream's tools (the server did "
        f"not answer the guard's tools/list within {waited:g} s after that); the request was not sent, and the server "
        "was stopped"
    )


def drop_cancelled(waiting: MutableSequence[Any], cancellation: dict[str, Any]) -> bool:
    """Drop from ``waiting`` (messages not yet sent, in order) the request the ``notifications/cancelled``
    ``cancellation`` names: True when one was there (neither is sent then). One rule for the calls held behind a
    listing (:class:`HeldMessages`) and the requests waiting for the upstream's start (``upstream_side``)."""
    params = cancellation.get("params")
    if type(params) is not dict or not valid_id(params.get("requestId")):
        return False
    key = id_key(params["requestId"])
    for index, message in enumerate(waiting):
        request = type(message) is dict and "method" in message and valid_id(message.get("id"))
        if request and id_key(message["id"]) == key:
            del waiting[index]
            return True
    return False


class HeldMessages:
    """A held call's state and the client's messages behind it (see the module docstring).

    Attributes:
        holding: a call is held for a listing of the guard's own (its task decides it, then releases the rest).
        waiting: the client's messages behind it, in order, each a message or a batch as parsed.
    """

    __slots__ = ("holding", "waiting")

    def __init__(self) -> None:
        self.holding = False
        self.waiting: deque[Any] = deque()

    def takes(self, message: Any) -> bool:
        """While a call is held: whether ``message`` stays here (it waits behind the call, or it cancels a request
        waiting here, and both are dropped). Always False while no call is held."""
        if not self.holding:
            return False
        if keeps_order(message):
            self.waiting.append(message)
            return True
        return self.cancel(message)

    def cancel(self, message: Any) -> bool:
        """A cancellation of a request waiting here (not admitted, never sent): that request is dropped (True)."""
        if type(message) is not dict or message.get("method") != "notifications/cancelled":
            return False
        return drop_cancelled(self.waiting, message)

    def put_first(self, messages: list[Any]) -> None:
        """``messages`` (older than any waiting here: a restart's backlog) wait ahead of the rest, in their order."""
        self.waiting.extendleft(reversed(messages))

    def take_all(self) -> list[Any]:
        """Every message waiting here, in order; none is left."""
        taken = list(self.waiting)
        self.waiting.clear()
        return taken
