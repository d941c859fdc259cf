"""``mcp-guard wrap``: the guard on stdio in front of one upstream process on stdio.

The client talks to this process's stdin/stdout; the upstream is a child process. Logs go
to stderr only; fd 1 is diverted to stderr while the relay runs (see ``framing.claim_stdio``).
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
from .upstream import UpstreamStartError, spawn_upstream

__all__ = ["wrap_stdio"]

log = logging.getLogger("mcp_guard")


async def wrap_stdio(command: Sequence[str], *, profile: str = "standard", hide_unsupported: bool = False) -> int:
    """Relay this process's stdio to ``command`` until either side closes.

    Returns:
        The process exit status: 0 when the client closed the connection, 1 when the
        upstream could not be started or went away first.
    """
    table = ToolTable(profile, hide_unsupported=hide_unsupported)
    log.info(
        "wrapping `%s` (profile %s%s)",
        shlex.join(command),
        profile,
        ", unsupported tools hidden" if hide_unsupported else "",
    )
    with claim_stdio() as (read_fd, write_fd):
        client = LineStream(FdReceiveStream(read_fd), FdSendStream(write_fd))
        try:
            async with spawn_upstream(command) as upstream, anyio.create_task_group() as tg:
                process = upstream.process
                relay = Relay(client, upstream.stream, table)

                async def on_signals() -> None:
                    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                        async for signum in signals:
                            log.info("received signal %d; stopping", signum)
                            tg.cancel_scope.cancel()
                            return

                tg.start_soon(on_signals)
                await relay.run()
                tg.cancel_scope.cancel()
        except UpstreamStartError as exc:
            log.error("%s", exc)
            return 1
        finally:
            await client.aclose()
    if relay.upstream_closed and not relay.client_closed:
        code = process.returncode
        log.info("upstream exited%s", f" with status {code}" if code is not None else "")
        return 1
    return 0
