"""The client's requests between intake and answer, by the client's id: one object for ``wrap`` and ``serve``.

Every request the client sends under a valid id (a string or an integer, ``wire.jsonrpc.valid_id``) is
*open* from the moment the session admits it until its answer goes out, and in one of three states:

- **waiting**: admitted and not sent upstream yet (being judged, held while the guard lists the tools,
  waiting for an upstream to start, or answered by the guard itself);
- **sent**: forwarded to an upstream, its *owner* (``wrap``: its one upstream; ``serve``: a ``Link``), which
  holds it in its ``peer.inflight`` under an upstream id of the guard's own (``InFlight.upstream_of``: kept
  there only);
- **withdrawn**: the client cancelled it while it was waiting: it is closed at once (its id is free for the
  client's next request, docs/wrap.md), never sent, and never answered (MCP, cancellation: "receivers ...
  SHOULD NOT send a response for the cancelled request").

Each admission is a :class:`Ticket` of its own (the state of a waiting request): whoever holds a request
while it waits (a call held for the guard's own listing, a gateway request task) keeps its ticket and asks
:meth:`ClientRequests.holds` before it sends or answers it, since the id alone may by then name a later
request the client sent under it (red team 37: a cancelled held call kept its id "in flight", and the new
request under it was refused).

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

__all__ = ["NOT_OPEN", "WAITING", "ClientRequests", "Ticket"]

O = TypeVar("O")  # noqa: E741 (the owner of a sent request: wrap's upstream name, serve's Link)
Key = tuple[bool, Any]

WAITING: Final = "waiting"
"""What :meth:`ClientRequests.withdraw` returns for a request not sent yet: it is withdrawn (never sent)."""

NOT_OPEN: Final = "not open"
"""What :meth:`ClientRequests.withdraw` returns for an id no open request has (answered, or never sent)."""


class Ticket:
    """One admission of a request while it waits (its state in :class:`ClientRequests`): a token no later request
    under the same id shares, so the one holding it can tell whether the request is still the open one."""

    __slots__ = ()


class ClientRequests(Generic[O]):
    """The client's open requests, by the key of their id (``wire.jsonrpc.id_key``: ``1`` and ``"1"`` differ).

    Each open request maps to its state: its :class:`Ticket` while waiting, or the owner it was sent to (see the
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

    def admit(self, request_id: Any) -> Ticket | None:
        """Open the request ``request_id`` (waiting): its ticket; None when a request under that id is open already:
        the new one is refused, its refusal goes out under that id and does not close the open one (:meth:`close`)."""
        key = id_key(request_id)
        if key in self._open:
            self._owed[key] = self._owed.get(key, 0) + 1
            return None
        ticket = self._open[key] = Ticket()
        return ticket

    def ticket(self, request_id: Any) -> Ticket | None:
        """The ticket of the request ``request_id`` while it waits (None: not open, or sent)."""
        state = self._open.get(id_key(request_id))
        return state if type(state) is Ticket else None

    def holds(self, request_id: Any, ticket: Ticket) -> bool:
        """Whether the admission ``ticket`` is still the waiting request ``request_id``: False once the client
        withdrew it (or it was answered), even when a later request of the client's has that id now."""
        return self._open.get(id_key(request_id)) is ticket

    def sent(self, request_id: Any, owner: O, ticket: Ticket | None = None) -> bool:
        """The request ``request_id`` (the admission ``ticket``, when the caller holds it) went to ``owner``. False
        when it is no longer open and waiting (the client withdrew it meanwhile: the caller cancels it at ``owner``;
        or another request has its id now)."""
        key = id_key(request_id)
        state = self._open.get(key)
        if type(state) is not Ticket or (ticket is not None and state is not ticket):
            return False
        self._open[key] = owner
        return True

    def unsent(self, request_id: Any) -> Ticket | None:
        """The request ``request_id`` is no longer held upstream (its answer, or the guard's, is going out):
        a cancellation from now on withdraws it (its answer is dropped: :meth:`close` with the ticket returned)
        instead of cancelling it upstream. None: it is not open."""
        key = id_key(request_id)
        if key not in self._open:
            return None
        ticket = self._open[key] = Ticket()
        return ticket

    def withdraw(self, request_id: Any) -> Any:
        """The client cancelled ``request_id``: :data:`NOT_OPEN` (nothing to do), :data:`WAITING` (it is now
        withdrawn: closed, never sent, its answer dropped; whoever holds it learns it from :meth:`holds`), or the
        owner it was sent to (it is closed: the caller cancels it there, under its upstream id). Either way the
        id is free for the client's next request at once."""
        key = id_key(request_id)
        state = self._open.pop(key, _MISSING)
        if state is _MISSING:
            return NOT_OPEN
        return WAITING if type(state) is Ticket else state

    def close(self, request_id: Any, ticket: Ticket | None = None) -> bool:
        """An answer to ``request_id`` is going out: the request is closed. With ``ticket`` (the answer is that
        admission's), False when that admission is no longer open (the client withdrew it: the answer is dropped).
        An id no open request has is answered (True): the guard's own error for an id it could not admit, or a
        late answer the owner passes on. The refusal of a second request under an open request's id
        (:meth:`admit`) leaves that request open."""
        key = id_key(request_id)
        if ticket is not None:  # (never a refusal's: those carry none)
            if self._open.get(key) is not ticket:
                return False
            del self._open[key]
            return True
        if self._owed:
            owed = self._owed.get(key)
            if owed is not None:
                if owed > 1:
                    self._owed[key] = owed - 1
                else:
                    del self._owed[key]
                return True
        self._open.pop(key, None)
        return True

    def waiting(self) -> list[Any]:
        """The ids (the client's, as sent) of the open requests not sent upstream: what the guard itself must answer
        when it stops."""
        return [key[1] for key, state in self._open.items() if type(state) is Ticket]

    def open_ids(self) -> list[Any]:
        """The ids of every open request (waiting or sent), as the client sent them."""
        return [key[1] for key in self._open]


_MISSING: Final = object()
