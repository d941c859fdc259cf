"""The requests a peer forwarded and that are not answered yet: the id map, their timeouts, late answers.

One :class:`InFlight` per upstream (``UpstreamPeer.inflight``) is the one id scheme of ``wrap``
and ``serve``: every request forwarded upstream goes there under an id of the guard's own
(:meth:`InFlight.new_id`, ``mcp-guard-<nonce>-<n>`` from the peer's ``IdMint``, never reused), and
the map gives back the owner's record of it (the client's id for ``wrap``; a
``sessions.link.Forwarded`` for ``serve``) when its answer comes. So a late answer (to a request
timed out or cancelled) names an id no later request has: it cannot reach a request the client
sent afterwards under the same id of its own (issue 25 item 5). The map also knows which upstream
id holds a client's id (:meth:`InFlight.upstream_of`), times the requests (``--request-timeout``,
restarted by progress: :class:`~.deadlines.Deadlines`), remembers the ones given up so that their
late answers are told from answers to ids never sent, and gives every record back when the
upstream goes away, for the owner to answer. An answer to an id that is neither in flight nor
given up (never sent, a call the guard refused, answered already) is dropped and logged: the
client sees exactly one answer per request, its own (issue 12).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from ..log_counts import LogCounts
from ..wire.messages import UNANSWERED_DROPPED
from ..wire.meta import UNTIMED
from .deadlines import Deadlines
from .requests import IdMint

__all__ = ["MAX_LATE", "InFlight", "Late", "timed_out_text"]

log = logging.getLogger("mcp_guard")

MAX_LATE: Final = 4096
"""Given-up requests whose late answers are still expected, kept at most (the oldest are forgotten: their
late answers are then dropped as answers to ids not in flight, never misrouted, as no id is reused)."""

T = TypeVar("T")
Key = tuple[bool, Any]


@dataclass(frozen=True)
class Late(Generic[T]):
    """What :meth:`InFlight.match` returns for the late answer to a request given up with a ``late`` record."""

    record: T


def timed_out_text(timeout: float) -> str:
    """The -32603 text answering a forwarded request that outlived ``timeout`` seconds (``--request-timeout``)."""
    return (
        f"mcp-guard: the upstream server did not answer within {timeout:g} s (--request-timeout); "
        "the request was cancelled"
    )


class InFlight(Generic[T]):
    """Forwarded requests in flight at one upstream, by the upstream id the guard gave each.

    Args:
        timeout: seconds a forwarded request may wait for its answer (restarted by each progress
            notification for it); None: no limit, ``deadlines`` is None.
        label: the log lines' prefix naming the upstream.
        mint: where upstream ids come from (the peer's, shared with the guard's own requests);
            None: a mint of its own.

    Attributes:
        pending: upstream id key → the owner's record.
        deadlines: the requests' timeouts, or None.
    """

    def __init__(self, timeout: float | None, *, label: str = "", mint: IdMint | None = None) -> None:
        self.pending: dict[Key, T] = {}
        self.deadlines = Deadlines(timeout) if timeout is not None else None
        self.label = label
        self.new_id = (mint or IdMint()).new_id
        """A fresh upstream id (a string no peer chose and no other request of this guard has)."""
        self._counted = LogCounts(label)
        self._upstream: dict[Key, Key] = {}  # client id key -> the upstream id key it is in flight under
        self._client: dict[Key, Key] = {}  # ... and back
        self._late: dict[Key, Any] = {}  # given up, oldest first -> the record its late answer goes with, or _DROP
        self._late_client: dict[Key, Key] = {}  # client id key -> upstream key of its given-up request (late passed)

    def __contains__(self, key: Key) -> bool:
        return key in self.pending

    def __len__(self) -> int:
        return len(self.pending)

    def start(self, key: Key, record: T, method: Any, params: Any, *, client: Key | None = None) -> None:
        """The request ``key`` (an upstream id from :meth:`new_id`) goes upstream now (noted before it is
        sent: should the upstream go away meanwhile, it is answered); ``client``: the key of the id the
        client sent it under (see :meth:`upstream_of`; a late answer passed on for an earlier request of
        that client id is dropped from now on). Timed unless ``method`` stays open by design (``UNTIMED``)."""
        self.pending[key] = record
        if client is not None:
            self._upstream[client] = key
            self._client[key] = client
            if self._late_client:
                earlier = self._late_client.pop(client, None)
                if earlier is not None and earlier in self._late:
                    self._late[earlier] = _DROP  # the client reused the id: the late answer is no longer its
        deadlines = self.deadlines
        if deadlines is not None and (type(method) is not str or method not in UNTIMED):
            deadlines.start(key, params)

    def upstream_of(self, client: Key) -> Key | None:
        """The upstream id key under which the client's request ``client`` (its id's key) is in flight, or None."""
        return self._upstream.get(client)

    def take(self, key: Key) -> T | None:
        """The request ``key`` is answered or given up: its record (None: not in flight), no longer timed."""
        record = self.pending.pop(key, None)
        if record is not None:
            if self._client:
                client = self._client.pop(key, None)
                if client is not None and self._upstream.get(client) == key:
                    del self._upstream[client]
            if self.deadlines is not None:
                self.deadlines.done(key)
        return record

    def give_up(self, key: Key, *, late: T | None = None, client: Key | None = None) -> None:
        """The request ``key`` (taken) was cancelled or timed out: its late answer is expected, and dropped;
        with ``late``, matched to that record (:class:`Late`) instead, until the client sends another
        request under its id ``client``."""
        self._late[key] = _DROP if late is None else late
        if late is not None and client is not None:
            self._late_client[client] = key
        if len(self._late) > MAX_LATE:
            self._late.pop(next(iter(self._late)))
            if len(self._late_client) > MAX_LATE:
                self._late_client.pop(next(iter(self._late_client)))

    def match(self, key: Key) -> T | Late[T] | None:
        """The upstream answered ``key``: the request's record (taken), :class:`Late` (a request given up
        with a ``late`` record), or None (a late answer dropped, or an answer to an id not in flight,
        dropped and logged)."""
        record = self.take(key)
        if record is not None:
            return record
        late = self._late.pop(key, _MISSING)
        if late is _MISSING:
            self._counted.log(logging.WARNING, UNANSWERED_DROPPED.replace("%", "%%"))
            return None
        if late is not _DROP:
            return Late(late)
        self._counted.log(
            logging.INFO, "dropped the upstream's late answer to a request that had timed out or been cancelled"
        )
        return None

    def progressed(self, params: Any) -> None:
        """A ``notifications/progress`` (its ``params``): the request it belongs to gets its whole timeout again."""
        if self.deadlines is not None:
            self.deadlines.progressed(params)

    def clear(self) -> list[T]:
        """The upstream went away: every record, for the owner to answer; nothing is in flight or late."""
        records = list(self.pending.values())
        self.pending.clear()
        self._upstream.clear()
        self._client.clear()
        self._late.clear()
        self._late_client.clear()
        if self.deadlines is not None:
            self.deadlines.clear()
        return records


_DROP: Final = object()
_MISSING: Final = object()
