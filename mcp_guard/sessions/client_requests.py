"""The client's requests between intake and answer, by the client's id: one object for ``wrap`` and ``serve``.

Every request the client sends under a valid id (a string or an integer, ``wire.jsonrpc.valid_id``) is
*open* from the moment the session admits it until its answer goes out, and in one of three states:

- **waiting**: admitted and not sent upstream yet (being judged, held while the guard lists the tools,
  waiting for an upstream to start, or answered by the guard itself);
- **sent**: forwarded to an upstream, its *owner* (``wrap``: its one upstream; ``serve``: a ``Link``), which
  holds it in its ``peer.inflight`` under an upstream id of the guard's own (``InFlight.upstream_of``: kept
  there only);
- **withdrawn**: the client cancelled it while it was waiting: it is never sent, and never answered
  (MCP, cancellation: "receivers ... SHOULD NOT send a response for the cancelled request").

A second request under the id of an open one is refused (``wire.messages.DUPLICATE_ID``): the two
answers could not be told apart (JSON-RPC 2.0 section 4: the id "MUST" be echoed). The cancellation
of a sent request frees its id at once: the upstream's late answer then names an upstream id no
later request has (``peer.inflight``), so it cannot reach a request the client sent afterwards.

The drain of both commands (the client closed its side) waits, bounded, until nothing is open
(:meth:`ClientRequests.__len__`), and answers with an error what still is (:meth:`ClientRequests.waiting`
and the upstreams' own records).
"""

from __future__ import annotations

from typing import Any, Final, Generic, TypeVar

from ..wire.jsonrpc import id_key

__all__ = ["NOT_OPEN", "WAITING", "ClientRequests"]

O = TypeVar("O")  # noqa: E741 (the owner of a sent request: wrap's upstream name, serve's Link)
Key = tuple[bool, Any]

WAITING: Final = "waiting"
"""What :meth:`ClientRequests.withdraw` returns for a request not sent yet: it is withdrawn (never sent)."""

NOT_OPEN: Final = "not open"
"""What :meth:`ClientRequests.withdraw` returns for an id no open request has (answered, or never sent)."""

_WAITING: Final = object()
_WITHDRAWN: Final = object()


class ClientRequests(Generic[O]):
    """The client's open requests, by the key of their id (``wire.jsonrpc.id_key``: ``1`` and ``"1"`` differ).

    Each open request maps to its state: waiting, withdrawn, or the owner it was sent to (see the
    module docstring). Not thread-safe: the event loop owns it.
    """

    __slots__ = ("_open", "_owed")

    def __init__(self) -> None:
        self._open: dict[Key, Any] = {}
        self._owed: dict[Key, int] = {}  # refusals owed under the id of an open request (admit)

    def __len__(self) -> int:
        return len(self._open)

    def __contains__(self, request_id: Any) -> bool:
        return id_key(request_id) in self._open

    def admit(self, request_id: Any) -> bool:
        """Open the request ``request_id`` (waiting); False when a request under that id is open already: the new
        one is refused, its refusal goes out under that id and does not close the open one (:meth:`close`)."""
        key = id_key(request_id)
        if key in self._open:
            self._owed[key] = self._owed.get(key, 0) + 1
            return False
        self._open[key] = _WAITING
        return True

    def withdrawn(self, request_id: Any) -> bool:
        """Whether the client cancelled the request ``request_id`` before it was sent (it is not to be sent)."""
        return self._open.get(id_key(request_id)) is _WITHDRAWN

    def sent(self, request_id: Any, owner: O) -> bool:
        """The request ``request_id`` went to ``owner``. False when the client withdrew it meanwhile (it is
        closed now; the caller cancels it at ``owner``), or when it is no longer open."""
        key = id_key(request_id)
        state = self._open.get(key)
        if state is not _WAITING:
            if state is _WITHDRAWN:
                del self._open[key]
            return False
        self._open[key] = owner
        return True

    def unsent(self, request_id: Any) -> None:
        """The request ``request_id`` is no longer held upstream (its answer, or the guard's, is going out):
        a cancellation from now on withdraws it (its answer is dropped) instead of cancelling it upstream."""
        key = id_key(request_id)
        if key in self._open and self._open[key] is not _WITHDRAWN:
            self._open[key] = _WAITING

    def withdraw(self, request_id: Any) -> Any:
        """The client cancelled ``request_id``: :data:`NOT_OPEN` (nothing to do), :data:`WAITING` (it is now
        withdrawn: never sent, its answer dropped), or the owner it was sent to (it is closed: the caller
        cancels it there, under its upstream id)."""
        key = id_key(request_id)
        state = self._open.get(key, _MISSING)
        if state is _MISSING or state is _WITHDRAWN:
            return NOT_OPEN
        if state is _WAITING:
            self._open[key] = _WITHDRAWN
            return WAITING
        del self._open[key]
        return state

    def close(self, request_id: Any) -> bool:
        """An answer to ``request_id`` is going out: the request is closed. False when the client withdrew it
        (the answer is dropped). An id no open request has is answered (True): the guard's own error for an
        id it could not admit, or a late answer the owner passes on. The refusal of a second request under an
        open request's id (:meth:`admit`) leaves that request open."""
        key = id_key(request_id)
        if self._owed:
            owed = self._owed.get(key)
            if owed is not None:
                if owed > 1:
                    self._owed[key] = owed - 1
                else:
                    del self._owed[key]
                return True
        state = self._open.pop(key, None)
        return state is not _WITHDRAWN

    def waiting(self) -> list[Any]:
        """The ids (the client's, as sent) of the open requests not sent upstream: what the guard itself must answer
        when it stops (a withdrawn one is not answered, and is not listed)."""
        return [key[1] for key, state in self._open.items() if state is _WAITING]

    def open_ids(self) -> list[Any]:
        """The ids of every open request not withdrawn (waiting or sent), as the client sent them."""
        return [key[1] for key, state in self._open.items() if state is not _WITHDRAWN]


_MISSING: Final = object()
