"""``mcp-guard wrap``: the guard on stdio in front of an upstream process on stdio.

The client talks to this process's stdin/stdout; the upstream is a child process, started
again when it goes away (see ``relay``). Logs go to stderr only; fd 1 is diverted to stderr
while the relay runs (see ``framing.claim_stdio``). SIGTERM and SIGHUP stop the guard like
the client closing its side: the upstream's stdin is closed, then its process group is
terminated if it does not exit.
"""

from __future__ import annotations

import logging
import shlex
import signal
from collections.abc import Sequence

import anyio

from .framing import FdReceiveStream, FdSendStream, LineStream, claim_stdio
from .guard import ToolTable
from .relay import Relay
from .upstream import UpstreamStartError, stdio_connector

__all__ = ["DEFAULT_GUARD_REQUEST_TIMEOUT", "wrap_stdio"]

log = logging.getLogger("mcp_guard")

DEFAULT_GUARD_REQUEST_TIMEOUT = 30.0
"""Seconds the guard waits for answers to its own requests when ``request_timeout`` is not given."""


async def wrap_stdio(
    command: Sequence[str],
    *,
    profile: str = "standard",
    hide_unsupported: bool = False,
    request_timeout: float | None = None,
) -> int:
    """Relay this process's stdio to ``command`` until the client closes its side or a signal comes.

    Args:
        command: the upstream server's executable and arguments.
        profile: ``"standard"`` or ``"strict"``.
        hide_unsupported: leave unsupported tools out of ``tools/list``.
        request_timeout: seconds a forwarded client request may wait for the upstream's
            answer (None: no limit); also the limit for the guard's own requests (default
            :data:`DEFAULT_GUARD_REQUEST_TIMEOUT`).

    Returns:
        The process exit status: 0 when the client closed the connection (or a signal
        stopped the guard), 1 when the upstream could not be started at all.
    """
    table = ToolTable(profile, hide_unsupported=hide_unsupported)
    log.info(
        "wrapping `%s` (profile %s%s%s)",
        shlex.join(command),
        profile,
        ", unsupported tools hidden" if hide_unsupported else "",
        f", request timeout {request_timeout:g} s" if request_timeout is not None else "",
    )
    with claim_stdio() as (read_fd, write_fd):
        client = LineStream(FdReceiveStream(read_fd), FdSendStream(write_fd))
        relay = Relay(
            client,
            stdio_connector(command),
            table,
            request_timeout=request_timeout if request_timeout is not None else DEFAULT_GUARD_REQUEST_TIMEOUT,
            client_request_timeout=request_timeout,
        )
        try:
            async with anyio.create_task_group() as tg:

                async def on_signals() -> None:
                    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                        async for signum in signals:
                            log.info("received signal %d; stopping", signum)
                            tg.cancel_scope.cancel()
                            return

                tg.start_soon(on_signals)
                try:
                    await relay.run()
                except UpstreamStartError as exc:
                    log.error("%s", exc)
                    return 1
                finally:
                    tg.cancel_scope.cancel()
        finally:
            await client.aclose()
    return 0
