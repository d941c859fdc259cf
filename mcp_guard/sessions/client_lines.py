"""``serve``'s client lines: read in order, each parsed to a message; a big one off the event loop.

No message waits behind another's judgement (issue 25 items 1 and 4), in ``serve`` as in ``wrap``
(``sessions.relay``): a line of :data:`~mcp_guard.peer.offload.OFFLOAD_MIN` bytes or more is a
job of an :class:`~mcp_guard.peer.offload.Ordered` queue, parsed in the worker thread, and a
``tools/call``'s arguments checked there too against the schema the call would be judged by now
(``calls.refusals.prejudge``: the pipeline's schema step then takes that report instead of
checking on the loop). A response or a request read after a pending job goes ahead of it; a
notification keeps its place behind it (``peer.offload.keeps_place``), and so does the end of
the client's stream: :func:`read_client_lines` returns once every job has run.

Lines that do not parse, or that are too long, are answered here (``-32700``, ``-32600``), as
before; what parses is handed to the session's :meth:`ClientSide.client_message`.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, Protocol

import anyio
import anyio.from_thread

from ..calls.refusals import prejudge
from ..core.compiler import Compiled
from ..log_counts import LogCounts
from ..peer.offload import OFFLOAD_MIN, Ordered, keeps_place
from ..peer.upstream import LineLink
from ..wire.framing import LineTooLong
from ..wire.jsonrpc import INVALID_REQUEST, PARSE_ERROR, error_response, loads_client, recover_id, valid_id
from ..wire.messages import parse_error_text, too_long_text, unparsable_reason

__all__ = ["ClientSide", "read_client_lines"]


class ClientSide(Protocol):
    """What :func:`read_client_lines` needs of the session it reads for."""

    client: LineLink
    counted: LogCounts

    async def reply(self, message: dict[str, Any]) -> None:
        """Send one message to the client."""

    async def client_message(self, message: Any) -> None:
        """Handle one parsed client message, in the order read."""

    def compiled_for(self, params: dict[str, Any]) -> Compiled | None:
        """The schema a ``tools/call`` with ``params`` would be judged by now, or None."""


async def read_client_lines(session: ClientSide) -> None:
    """Read the session's client until its stream ends; big lines are jobs of a queue of their own,
    all of them run before this returns.

    Raises nothing of the client's doing: an unparsable or over-long line is answered and skipped.
    """
    intake = Ordered()
    async with anyio.create_task_group() as tg:
        tg.start_soon(intake.run)
        try:
            await _read(session, intake)
        finally:
            intake.close()


async def _read(session: ClientSide, intake: Ordered) -> None:
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
            intake.submit(partial(_big_line, session, intake, line))
            continue
        try:
            message = loads_client(line)
        except (ValueError, RecursionError) as exc:
            await _unparsable(session, line, exc)
            continue
        if intake.busy and keeps_place(message):
            intake.submit(partial(session.client_message, message))
        else:
            await session.client_message(message)


async def _big_line(session: ClientSide, intake: Ordered, line: bytes) -> None:
    """A big client line (a job): parsed, and a call's arguments checked, in the worker thread; then
    handled as any other message, after those before it that keep their place."""
    try:
        message = await intake.in_thread(_parse_judged, session, line)
    except (ValueError, RecursionError) as exc:
        await _unparsable(session, line, exc)
        return
    await session.client_message(message)


def _parse_judged(session: ClientSide, line: bytes) -> Any:
    """(In the worker thread.) The parsed line; a call's arguments checked (``prejudge``)."""
    message = loads_client(line)
    params = message.get("params") if type(message) is dict and message.get("method") == "tools/call" else None
    if type(params) is dict and type(params.get("name")) is str and type(params.get("arguments")) is dict:
        compiled = anyio.from_thread.run_sync(session.compiled_for, params)
        if compiled is not None:
            prejudge(compiled, params["arguments"])
    return message


async def _unparsable(session: ClientSide, line: bytes, exc: ValueError | RecursionError) -> None:
    """A client line that does not parse: -32700, for its id when the text shows one."""
    found = recover_id(line)
    request_id = found if valid_id(found) else None
    session.counted.log(
        logging.WARNING, "answered a client line that does not parse with -32700: it %s", unparsable_reason(exc)
    )
    await session.reply(error_response(request_id, PARSE_ERROR, parse_error_text(exc, "line")))
