"""The gateway's messages to its client, written as JSON lines; a big one in a worker thread, in order.

No message waits behind another's judgement (issue 25 items 1 and 4): ``serve`` answered a
``tools/list`` of one schema of 1,000,000 properties by writing the whole page as JSON on the event
loop (1.2 s on an idle core), and every ``ping`` of the session waited. A message of more than
:data:`BIG_NODES` JSON values is written by ``wire.pieces.dumps_in_pieces`` in a worker thread (the
encoder is called for bounded pieces, so the interpreter lock passes to the loop between them).

The order is ``peer.offload``'s: a response or a request may pass a big message being written (JSON-RPC
lets them come in any order), a notification (or a batch) keeps its place behind it
(:func:`~mcp_guard.peer.offload.keeps_place`): it may be about what came before (``list_changed``
after a listing, a progress notification before its result).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Final, Protocol

import anyio
import anyio.to_thread

from ..peer.offload import keeps_place
from ..wire.jsonrpc import INTERNAL_ERROR, Uncarriable, dumps, error_response
from ..wire.pieces import count_nodes, dumps_in_pieces
from ..wire.repeated import collector_paused

__all__ = ["BIG_NODES", "ClientWriter", "MessageSink"]

BIG_NODES: Final = 4096
"""JSON values past which a message is written in the worker thread (about 64 KiB of JSON, as
``peer.offload.OFFLOAD_MIN``; counting them costs at most this many steps)."""


class MessageSink(Protocol):
    """Where the client's lines go (``peer.upstream.LineLink``'s sending half)."""

    async def send(self, item: bytes, /) -> None:
        """Send one line (the framing adds its end)."""


class ClientWriter:
    """Writes the gateway's messages to the client: one line at a time, a big one made off the loop.

    Args:
        client: the client's side; a line it can no longer take (closed, broken) is dropped.
        log: the owner's logger (a message dropped is logged there).

    Attributes:
        gone: called (once per line) when the client can no longer take a line, or None (``wrap``: the client
            that stopped reading ends the relay).
    """

    def __init__(self, client: MessageSink, log: logging.Logger) -> None:
        self.client = client
        self._log = log
        self._send_lock = anyio.Lock()
        self._order = anyio.Lock()  # held while a big message is written; a notification then waits for it
        self._big = 0  # big messages written or waiting to be
        self._limiter = anyio.CapacityLimiter(1)
        self.gone: Callable[[], None] | None = None

    @contextlib.asynccontextmanager
    async def turn(self, message: Any) -> AsyncIterator[bool]:
        """Hold ``message``'s place while it is made and sent; yields whether it is big (then
        :meth:`encode` makes it in the worker thread). A big message, and a notification while one
        is under way, go one after another in the order they came (``anyio.Lock`` is fair)."""
        big = count_nodes(message, BIG_NODES) > BIG_NODES
        if not big and not (self._big and keeps_place(message)):
            yield False
            return
        self._big += big
        try:
            async with self._order:
                yield big
        finally:
            self._big -= big

    async def encode(self, message: Any, big: bool) -> bytes:
        """``dumps(message)``; when ``big``, made in the worker thread.

        Raises:
            Uncarriable: as ``dumps`` (a number JSON cannot carry exactly, too deep).
        """
        if not big:
            return dumps(message)
        return await anyio.to_thread.run_sync(_dumps_paused, message, limiter=self._limiter)

    async def write(self, message: dict[str, Any] | list[dict[str, Any]]) -> None:
        """Send one message (or a batch's answers); one JSON cannot carry becomes a -32603 error when it is an
        answer, or is dropped (a notification, a request, a batch), and is logged (without its values)."""
        async with self.turn(message) as big:
            try:
                data = await self.encode(message, big)
            except Uncarriable:
                self._log.warning("dropped a message holding a number JSON cannot carry exactly")
                if type(message) is not dict or "id" not in message or "method" in message:
                    return
                data = dumps(error_response(message["id"], INTERNAL_ERROR, "mcp-guard: the answer was not JSON"))
            await self.send(data)

    async def send(self, data: bytes) -> None:
        """Send one line already made (dropped when the client's side is closed or broken)."""
        async with self._send_lock:
            try:
                await self.client.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                if self.gone is not None:
                    self.gone()


def _dumps_paused(message: Any) -> bytes:
    """(In the worker thread.) ``dumps_in_pieces`` with the cyclic collector paused: the gateway keeps its
    catalog's listings, and each full collection while the pieces are made walked all of them (0.3-0.4 s
    for a schema of 1,000,000 properties, eight times while its page was written)."""
    with collector_paused():
        return dumps_in_pieces(message)
