"""The client's lines, for ``wrap`` and ``serve`` alike: read in order, each parsed to a message; a big one
off the event loop.

One intake for both commands (issue 23): no message waits behind another's judgement (issue 25 items 1
and 4). A line of :data:`~mcp_guard.peer.offload.OFFLOAD_MIN` bytes or more is a job of the session's
:class:`~mcp_guard.peer.offload.Ordered` queue (``session.intake``), parsed in the worker thread, and a
``tools/call``'s arguments checked there too against the schema the call would be judged by now
(``calls.refusals.prejudge``: the pipeline's schema step then takes that report instead of checking on
the loop). A response or a request read after a pending job goes ahead of it; a notification keeps its
place behind it (``peer.offload.keeps_place``), and so does the end of the client's stream:
:func:`read_client_lines` returns once every job has run.

While a big line is handled, ``session.received`` is ``(its value, the line)`` when the line may go on as
received (``wire.jsonrpc.loads_as_received``: ``wrap`` forwards it without a re-serialization and its copy),
``(its value, None)`` otherwise; the value is then freed in pieces in the worker thread
(``wire.pieces.free_in_pieces``), with the cyclic collector paused meanwhile (``wire.repeated``).

Lines that do not parse, or that are too long, are answered here (``-32700``, ``-32600``, with the id the
text shows, when it shows a valid one); what parses is handed to :meth:`ClientSide.client_message`.

The stdio hot path (``wrap``, ``sessions.relay``): where the client side is a ``pipes.DirectLink``, the
session's line handler is installed for the time of the reading (``pipes``: the pipe offers it lines only
while :func:`read_client_lines` waits in ``receive()``, so every line before one it takes is handled or is a
job already); a big line it takes is made a job with :func:`big_line`, as the reader would make it.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from ..calls.refusals import prejudge
from ..log_counts import LogCounts
from ..peer.offload import OFFLOAD_MIN, Ordered, keeps_place
from ..peer.upstream import LineLink
from ..streams.pipes import DirectLink, LineHandler
from ..wire.framing import LineTooLong
from ..wire.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    error_response,
    loads_as_received,
    loads_client,
    recover_id,
    valid_id,
)
from ..wire.messages import parse_error_text, too_long_text, unparsable_reason
from ..wire.pieces import free_in_pieces
from ..wire.repeated import collector_paused

if TYPE_CHECKING:  # (the compiler is loaded with the first schema, not with the stdio path: test_lean_imports)
    from ..core.compiler import Compiled

__all__ = ["ClientSide", "big_line", "read_client_lines"]


class ClientSide(Protocol):
    """What :func:`read_client_lines` needs of the session it reads for.

    Attributes:
        client: the client's line stream (``receive()``, ``send(line)``).
        counted: the session's bounded per-message log lines.
        intake: the queue of big lines' jobs (run by :func:`read_client_lines`).
        received: while a big line is handled, ``(its value, the line or None)`` (see the module docstring).
    """

    client: LineLink
    counted: LogCounts
    intake: Ordered
    received: tuple[Any, bytes | str | None] | None

    async def reply(self, message: dict[str, Any]) -> None:
        """Send one message to the client."""

    async def client_message(self, message: Any) -> None:
        """Handle one parsed client message (or batch), in the order read."""

    def compiled_for(self, params: dict[str, Any]) -> Compiled | None:
        """The schema a ``tools/call`` with ``params`` would be judged by now, or None."""


async def read_client_lines(session: ClientSide, hot: LineHandler | None = None) -> None:
    """Read the session's client until its stream ends; big lines are jobs of ``session.intake``, all of
    them run before this returns (the intake is closed then). ``hot``: the session's line handler for a
    ``DirectLink`` client (the hot path), installed while reading.

    Raises nothing of the client's doing: an unparsable or over-long line is answered and skipped.
    """
    client = session.client
    direct = hot is not None and isinstance(client, DirectLink)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.intake.run)
        try:
            if direct:
                assert isinstance(client, DirectLink)
                client.set_line_handler(hot)
            try:
                await _read(session)
            finally:
                if direct:
                    assert isinstance(client, DirectLink)
                    client.set_line_handler(None)
        finally:
            session.intake.close()


async def _read(session: ClientSide) -> None:
    intake = session.intake
    while True:
        try:
            line = await session.client.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        except LineTooLong as exc:
            found = recover_id(exc.prefix)
            session.counted.log(logging.WARNING, "refused a message from the client longer than %d bytes", exc.limit)
            text = too_long_text(exc.limit)
            await session.reply(error_response(found if valid_id(found) else None, INVALID_REQUEST, text))
            continue
        if len(line) >= OFFLOAD_MIN:
            intake.submit(partial(big_line, session, line))
            continue
        try:
            message = loads_client(line)
        except (ValueError, RecursionError) as exc:
            await unparsable(session, line, exc)
            continue
        if intake.busy and keeps_place(message):
            intake.submit(partial(session.client_message, message))
        else:
            await session.client_message(message)


async def big_line(session: ClientSide, line: bytes | str) -> None:
    """A big client line (a job of ``session.intake``): parsed, and a call's arguments checked, in the worker
    thread; then handled as any other message, after those before it that keep their place. From the hot
    path it is the text the pipe decoded (``pipes.LineHandler``): no bytes copy of it is made (issue 14)."""
    intake = session.intake
    with collector_paused():  # (until the value is freed, in pieces: as the peer's big lines, peer.connection)
        try:
            message, as_received = await intake.in_thread(_parse_judged, session, line)
        except (ValueError, RecursionError) as exc:
            await unparsable(session, line if isinstance(line, bytes) else line.encode("utf-8", "replace"), exc)
            return
        session.received = (message, line if as_received else None)
        try:
            await session.client_message(message)
        finally:
            session.received = None
        held = [message]
        del message
        await intake.in_thread(free_in_pieces, held)


def _parse_judged(session: ClientSide, line: bytes | str) -> tuple[Any, bool]:
    """(In the worker thread.) The parsed line (``loads_as_received``); a call's arguments checked (``prejudge``)."""
    message, as_received = loads_as_received(line)
    params = message.get("params") if type(message) is dict and message.get("method") == "tools/call" else None
    if type(params) is dict and type(params.get("name")) is str and type(params.get("arguments")) is dict:
        import anyio.from_thread  # here: ~75 KiB of every idle guard for the big calls only (issue 23, idle RSS)

        compiled = anyio.from_thread.run_sync(session.compiled_for, params)
        if compiled is not None:
            prejudge(compiled, params["arguments"])
    return message, as_received


async def unparsable(session: ClientSide, line: bytes, exc: ValueError | RecursionError) -> None:
    """A client line that does not parse: -32700, for its id when the text shows a valid one."""
    found = recover_id(line)
    request_id = found if valid_id(found) else None
    session.counted.log(
        logging.WARNING, "answered a client line that does not parse with -32700: it %s", unparsable_reason(exc)
    )
    await session.reply(error_response(request_id, PARSE_ERROR, parse_error_text(exc, "line")))
