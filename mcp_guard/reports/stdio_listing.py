"""The stdio transport of ``check`` and ``pin``'s listings: a server's stdout read as ``wrap`` and ``serve`` read it.

``reports.listing`` lists a server with the ``mcp`` SDK's client session. Over stdio the SDK's own
transport (``mcp.client.stdio``) had its own rule for a server's stdout: a line its typed parser
refused was skipped, a line of bytes that are not UTF-8 stopped its reading, a long line had no cap.
Here the server is started as the relay starts it (``peer.upstream.spawn_upstream``: its own process
group, stderr relayed escaped and prefixed, stopped by the MCP lifecycle then its group signalled) and
every line goes through the relay's rule, :class:`~mcp_guard.peer.triage.Triage` (one place for what a
server's stdout line is):

- a line that is not JSON, nests too deeply or is longer than the cap
  (``wire.framing.DEFAULT_MAX_LINE``) is skipped and logged by size (``SkipLog``, once per kind, then
  counted); a recovered id of a request of the listing's is answered -32603 in its place, as the relay
  answers a forwarded request, so the listing fails at once rather than at the time limit;
- JSON that is no JSON-RPC message is skipped, a batch's JSON-RPC elements are taken one by one, and an
  answer that names a request but is no JSON-RPC response becomes a -32603 answering that request.

What the rule passes is handed to the session as the SDK's typed message (its parse of the line, so
numbers read as the SDK reads them; of the message the rule made, for a batch or an answer replaced); a
message the SDK cannot type is skipped and logged as the others are (once, then counted; never its text).
"""

from __future__ import annotations

import contextlib
import errno
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ..peer.requests import OwnRequests
from ..peer.triage import SkipLog, Triage, unreadable_text
from ..peer.upstream import UpstreamStartError, spawn_upstream
from ..streams.framing import MessageStream
from ..wire.framing import LineTooLong
from ..wire.jsonrpc import INTERNAL_ERROR, NO_ID, error_response, loads_upstream, recover_id, valid_id

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

__all__ = ["stdio_streams"]

log = logging.getLogger("mcp_guard")


@contextlib.asynccontextmanager
async def stdio_streams(
    command: Sequence[str], env: Mapping[str, str] | None, cwd: str | None, label: str | None
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """Start ``command`` and yield the SDK session's ``(read, write)`` streams over its stdio; the server is
    stopped on exit.

    Args:
        command: the server command and its arguments.
        env: its environment, over the guard's (``peer.spawn.start_process``).
        cwd: its working folder (None: the guard's).
        label: the server's name in ``check --config`` (its log lines start ``server NAME: ``; its
            stderr lines ``upstream NAME stderr: ``), None for ``check -- COMMAND``.

    Raises:
        OSError: the command cannot be started (``FileNotFoundError`` for a command not found).
    """
    import mcp_types as types
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError

    read_writer, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    skips = SkipLog("" if label is None else f"server {label}: ")
    triage = Triage(skips, OwnRequests())
    adapter = types.jsonrpc_message_adapter

    async def deliver(message: Any, line: bytes | str | None) -> None:
        try:
            typed = (
                adapter.validate_json(line, by_name=False)
                if line is not None
                else adapter.validate_python(message, by_name=False)
            )
        except ValidationError:
            skips.skipped(
                "messages the listing's client cannot read",
                "skipped a JSON-RPC message from the server that the listing's client cannot read",
            )
            return
        await read_writer.send(SessionMessage(typed))

    async def reader(stream: MessageStream) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):  # (the session is gone)
            await read_lines(stream)

    async def read_lines(stream: MessageStream) -> None:
        async with read_writer:
            while True:
                try:
                    line = await stream.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                except LineTooLong as exc:
                    await unreadable(exc.prefix, exc.limit)
                    continue
                try:
                    message = loads_upstream(line)
                except (ValueError, RecursionError):
                    await unreadable(line if isinstance(line, bytes) else line.encode("utf-8", "replace"), None)
                    continue
                out = triage.triage(message, line)
                if type(out) is list:
                    for one in out:
                        await deliver(one, None)
                elif out is not None:
                    await deliver(out, line if out is message else None)

    async def unreadable(line: bytes, too_long: int | None) -> None:
        # As peer.connection.UpstreamPeer.unreadable: the request whose id the text holds is answered
        # -32603 in its place (the listing's requests are the only ones a server of check answers).
        request_id = recover_id(line)
        if request_id is not NO_ID and valid_id(request_id):
            what, text = unreadable_text(too_long, line)
            log.warning("%sthe upstream's answer %s; answering an error", skips.label, what)
            await deliver(error_response(request_id, INTERNAL_ERROR, text), None)
            return
        triage.skip_unreadable(len(line), too_long)

    async def writer(stream: MessageStream) -> None:
        try:
            async with write_reader:
                async for session_message in write_reader:
                    data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stream.send(data.encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # (the server stopped reading: the session sees the connection end)

    async with contextlib.AsyncExitStack() as stack:
        try:
            upstream = await stack.enter_async_context(spawn_upstream(command, env, cwd, name=label))
        except UpstreamStartError as exc:  # (as the SDK's transport raised it: reports.listing says why)
            cause = exc.__cause__
            if isinstance(cause, OSError):
                raise cause from None
            if "not found" in str(exc):
                raise FileNotFoundError(errno.ENOENT, "command not found", command[0]) from None
            raise
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader, upstream.stream)
            tg.start_soon(writer, upstream.stream)
            try:
                yield read, write
            finally:
                tg.cancel_scope.cancel()
