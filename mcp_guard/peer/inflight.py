"""The requests a peer forwarded and that are not answered yet: the id map, their timeouts, late answers.

One :class:`InFlight` per upstream (``UpstreamPeer.inflight``) maps the id each forwarded request
has upstream (``jsonrpc.id_key``) to the owner's record of it: the client's id for ``wrap``,
which forwards under the client's ids; a ``sessions.link.Forwarded`` for ``serve``, which
forwards under ids of its own. It times them (``--request-timeout``, restarted by progress:
:class:`~.deadlines.Deadlines`), remembers the ones given up (cancelled by the client, or
timed out) so that their late answers are told from answers to ids never sent, and gives every
record back when the upstream goes away, for the owner to answer. An answer to an id that is
neither in flight nor given up (never sent, a call the guard refused, answered already) is
dropped and logged: the client sees exactly one answer per request, its own (issue 12).
"""

from __future__ import annotations

import logging
from typing import Any, Final, Generic, TypeVar

from ..log_counts import LogCounts
from ..wire.messages import UNANSWERED_DROPPED
from ..wire.meta import UNTIMED
from .deadlines import Deadlines

__all__ = ["LATE", "MAX_LATE", "InFlight", "timed_out_text"]

log = logging.getLogger("mcp_guard")

MAX_LATE: Final = 4096
"""Given-up requests whose late answers are still expected, kept at most (the oldest are forgotten)."""

LATE: Final = object()
"""What :meth:`InFlight.match` returns for the late answer to a request given up with ``pass_late``."""

T = TypeVar("T")
Key = tuple[bool, Any]


def timed_out_text(timeout: float) -> str:
    """The -32603 text answering a forwarded request that outlived ``timeout`` seconds (``--request-timeout``)."""
    return (
        f"mcp-guard: the upstream server did not answer within {timeout:g} s (--request-timeout); "
        "the request was cancelled"
    )


class InFlight(Generic[T]):
    """Forwarded requests in flight at one upstream.

    Args:
        timeout: seconds a forwarded request may wait for its answer (restarted by each progress
            notification for it); None: no limit, ``deadlines`` is None.
        label: the log lines' prefix naming the upstream.

    Attributes:
        pending: upstream id key → the owner's record.
        deadlines: the requests' timeouts, or None.
    """

    def __init__(self, timeout: float | None, *, label: str = "") -> None:
        self.pending: dict[Key, T] = {}
        self.deadlines = Deadlines(timeout) if timeout is not None else None
        self.label = label
        self._counted = LogCounts(label)
        self._late: dict[Key, bool] = {}  # given up, oldest first -> whether its late answer goes on

    def __contains__(self, key: Key) -> bool:
        return key in self.pending

    def __len__(self) -> int:
        return len(self.pending)

    def start(self, key: Key, record: T, method: Any, params: Any) -> None:
        """The request ``key`` goes upstream now (noted before it is sent: should the upstream go away
        meanwhile, it is answered); it is timed unless ``method`` stays open by design (``UNTIMED``)."""
        self.pending[key] = record
        if self._late:
            self._late.pop(key, None)
        deadlines = self.deadlines
        if deadlines is not None and (type(method) is not str or method not in UNTIMED):
            deadlines.start(key, params)

    def take(self, key: Key) -> T | None:
        """The request ``key`` is answered or given up: its record (None: not in flight), no longer timed."""
        record = self.pending.pop(key, None)
        if record is not None and self.deadlines is not None:
            self.deadlines.done(key)
        return record

    def give_up(self, key: Key, *, pass_late: bool = False) -> None:
        """The request ``key`` was cancelled or timed out: its late answer is expected, and dropped
        (``pass_late``: passed on, see :meth:`match`)."""
        self._late[key] = pass_late
        if len(self._late) > MAX_LATE:
            self._late.pop(next(iter(self._late)))

    def match(self, key: Key) -> Any:
        """The upstream answered ``key``: the request's record (taken), :data:`LATE` (a request given up
        with ``pass_late``), or None (a late answer dropped, or an answer to an id not in flight,
        dropped and logged)."""
        record = self.take(key)
        if record is not None:
            return record
        late = self._late.pop(key, None)
        if late is None:
            self._counted.log(logging.WARNING, UNANSWERED_DROPPED.replace("%", "%%"))
            return None
        if late:
            return LATE
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
        self._late.clear()
        if self.deadlines is not None:
            self.deadlines.clear()
        return records
