"""wrap's tool tables and the guard's own listings of them (both protocol eras).

The handshake era has one table (:attr:`ToolListings.table`), emptied on
``notifications/tools/list_changed``. In the 2026-07-28 era each request's envelope (protocol
version, client capabilities) gets a table of its own (at most :data:`MAX_ENVELOPES`), fresh
while one of the guard's own ``subscriptions/listen`` streams reports its changes, or until its
listing's ``ttlMs`` has passed: each table's :class:`~.freshness.Listed` record, as ``serve``
keeps per envelope and upstream. :meth:`ToolListings.refresh` lists every page (one listing per
table at a time; a listing a change overtook is made again); a listen stream is opened after an
envelope's first listing. The relay owns one :class:`ToolListings` and gives it the means to
send requests of the guard's own; nothing here reads or writes a line.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ..calls.tool_table import ToolTable
from ..log_counts import LogCounts
from ..peer.listens import OwnListens
from ..peer.requests import OwnRequests, list_pages
from ..wire.meta import MAX_ENVELOPES, PROTOCOL_VERSION_KEY, envelope_key
from .freshness import Listed, frames_heard, keep_listening, list_unless_current

__all__ = ["ToolListings"]

log = logging.getLogger("mcp_guard")


class ToolListings:
    """The relay's tool tables, per protocol-era envelope, and the guard's own listings and listen streams.

    Args:
        table: the handshake era's table (profile and hiding are copied to the others).
        own: the guard's own requests at the upstream (a listen stream is one).
        request: sends a request of the guard's own and returns its ``result`` (raises ``RequestFailed``).
        send_own: sends a message of the guard's own (raises ``RequestFailed``).

    Attributes:
        tables: envelope key → table (``""``: the handshake era's).
        listens: the guard's open listen streams (``peer.listens``), each with its table.
        spawn: starts a task (the session's task group); ``None`` until the session runs (``Relay.start``).
    """

    def __init__(
        self,
        table: ToolTable,
        own: OwnRequests,
        request: Callable[[str, Any], Awaitable[dict[str, Any]]],
        send_own: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> None:
        self.table = table
        self._request = request
        self.tables: dict[str, ToolTable] = {"": table}
        self.listens: OwnListens[Callable[[str, dict[str, Any]], None]] = OwnListens(own, send_own)  # (frames_heard)
        self.spawn: Callable[..., Any] | None = None
        self._last_envelope: tuple[Any, ToolTable] = (None, table)
        # id(table) -> when its listing goes stale, and its listen stream (for the tables in ``tables`` only).
        self._listed: dict[int, Listed] = {id(table): Listed()}
        self._counted = LogCounts()

    def invalidate(self) -> None:
        """``notifications/tools/list_changed``: every table is listed again before its next judgement (a listing
        under way is made again: :func:`.freshness.renew`)."""
        for table in self.tables.values():
            table.invalidate()
            self._listed[id(table)].changed("tools")

    def restarted(self) -> None:
        """A new upstream: every table is emptied and stale, and gets a listen stream of its own again."""
        self.invalidate()
        for listed in self._listed.values():
            listed.silence()  # (the gone upstream's stream: ended already)
            listed.listening.clear()
            listed.listen_scope = None

    def fresh(self, table: ToolTable) -> bool:
        """A 2026-07-28-era table may be judged against without listing again: a listen stream reports
        changes, or its listing's ``ttlMs`` has not passed (:meth:`.freshness.Listed.fresh`)."""
        return self._listed[id(table)].fresh("tools", anyio.current_time())

    def table_for(self, params: Any) -> ToolTable:
        """The tool table for a request's protocol-era envelope.

        Handshake-era requests share :attr:`table`. In the 2026-07-28 era each request
        declares its own protocol version and client capabilities, and a server may list
        different tools (or schemas) for different capabilities; each envelope gets its
        own table, so a call is judged against the list its own envelope sees. At most
        :data:`MAX_ENVELOPES` such tables are kept (least recently used goes first).
        """
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is not dict or PROTOCOL_VERSION_KEY not in meta:
            return self.table
        if meta is self._last_envelope[0]:  # the same message asks again (routing looks up more than once)
            return self._last_envelope[1]
        key = envelope_key(meta)
        table = self.tables.pop(key, None)
        if table is None:
            base = self.table
            table = ToolTable(
                base.profile, hide_unsupported=base.hide_unsupported, outputs=base.outputs, host=base.host
            )
            self._listed[id(table)] = Listed()
            if len(self.tables) > MAX_ENVELOPES:
                oldest = next(k for k in self.tables if k != "")
                # Its listen stream ends too (red team 34: 200 envelopes held 200 streams).
                self._listed.pop(id(self.tables.pop(oldest))).silence()
        self.tables[key] = table
        self._last_envelope = (meta, table)  # holds the dict, so its identity cannot be reused meanwhile
        return table

    async def refresh(self, meta: dict[str, Any] | None, table: ToolTable, *, not_before: float) -> None:
        """List every page of the upstream's tools into ``table``, for a call that arrived at ``not_before``
        (``anyio.current_time()``), unless a listing requested since then is in (one listing per table at a
        time: :func:`.freshness.list_unless_current`, as ``serve``'s envelopes).

        Args:
            meta: ``_meta`` to put on each ``tools/list`` request: the protocol-era
                envelope of the client call that needed the listing (2026-07-28 era
                requests carry their protocol version and client capabilities there).
            table: the table to fill.
            not_before: a listing requested before this does not do (a call that arrived then
                must be judged against a listing requested after it); one already under way is
                waited for, and its failure is the call's.

        Raises:
            ListingFailed: the listing could not be completed.
        """
        listed = self._listed[id(table)]

        async def fetch() -> tuple[list[Any], float | None]:
            return await list_pages(self._request, "tools/list", "tools", meta)

        async def put(tools: list[Any], mark: int) -> None:
            table.replace(tools)

        await list_unless_current(listed, "tools", not_before, fetch, put)
        if meta and table is not self.table and listed.listen_scope is None and self.spawn is not None:
            listed.listen_scope = anyio.CancelScope()
            self.spawn(self._listen, table, listed, meta)

    async def _listen(self, table: ToolTable, listed: Listed, meta: dict[str, Any]) -> None:
        """Keep a ``subscriptions/listen`` stream of the guard's own for ``table``'s envelope (``freshness``).

        While the upstream honours ``toolsListChanged`` on it, the listings requested after its
        acknowledgement need no ``ttlMs`` (:class:`~.freshness.Listed`): each
        ``notifications/tools/list_changed`` on the stream empties the table. An upstream that
        does not offer the method (an error), a stream that ends, or an upstream that goes away
        leaves the table to its ``ttlMs`` again. Frames on the stream (stamped with the guard's
        request id) are the guard's and never reach the client (:meth:`listen_frame`).
        """

        def changed(kind: str) -> None:
            self._counted.log(
                logging.INFO,
                "upstream tools changed (listen stream); schemas will be listed again before the next judgement",
            )
            table.invalidate()

        heard = frames_heard(listed, changed, "upstream: ")
        await keep_listening(listed, lambda params: self.listens.listen(params, heard), meta, ("tools",), "upstream: ")

    def listen_frame(self, message: dict[str, Any]) -> bool:
        """Whether ``message`` is a notification on one of the guard's own listen streams (then handled here)."""
        found = self.listens.handler_of(message)
        if found is None:
            return False
        heard, method, params = found
        heard(method, params)
        return True
