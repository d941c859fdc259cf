"""``mcp-guard wrap``: the guard on stdio in front of one upstream, a process or an HTTP endpoint.

The client talks to this process's stdin/stdout; the upstream is a child process on stdio
(:func:`wrap_stdio`) or a streamable HTTP endpoint (:func:`wrap_stdio_http`). Logs go to
stderr only; fd 1 is diverted to stderr while the relay runs (see ``framing.claim_stdio``).
"""

from __future__ import annotations

import logging
import shlex
import signal
from collections.abc import Mapping, Sequence

import anyio
import anyio.abc

from .framing import FdReceiveStream, FdSendStream, LineStream, claim_stdio
from .guard import ToolTable
from .http_upstream import DEFAULT_MAX_MESSAGE_BYTES, http_connector, shown_url
from .relay import Relay
from .upstream import UpstreamStartError, spawn_upstream

__all__ = ["wrap_stdio", "wrap_stdio_http"]

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


async def wrap_stdio_http(
    url: str,
    headers: Mapping[str, str] | None = None,
    *,
    profile: str = "standard",
    hide_unsupported: bool = False,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> int:
    """Relay this process's stdio to the streamable HTTP MCP endpoint ``url`` until either side closes.

    Args:
        url: the upstream's MCP endpoint (``http://`` or ``https://``).
        headers: extra HTTP headers for every request to it (values are never logged).
        profile: the schema profile.
        hide_unsupported: leave unsupported tools out of ``tools/list``.
        max_message_bytes: the cap on one message from the upstream.

    Returns:
        The process exit status: 0 when the client closed the connection, 1 when the
        upstream ended the session first.

    Raises:
        ValueError: ``url`` is not an http(s) URL.
    """
    connect = http_connector(url, headers, max_message_bytes=max_message_bytes)
    table = ToolTable(profile, hide_unsupported=hide_unsupported)
    names = ", ".join(sorted(headers or {}))
    log.info(
        "wrapping %s over streamable HTTP (profile %s%s%s)",
        shown_url(url),
        profile,
        ", unsupported tools hidden" if hide_unsupported else "",
        f"; extra headers: {names}" if names else "",
    )
    relay: Relay | None = None
    with claim_stdio() as (read_fd, write_fd):
        client = LineStream(FdReceiveStream(read_fd), FdSendStream(write_fd))
        try:
            async with connect() as upstream, anyio.create_task_group() as tg:
                relay = Relay(client, upstream, table)
                tg.start_soon(_stop_on_signals, tg.cancel_scope)
                await relay.run()
                tg.cancel_scope.cancel()
        finally:
            await client.aclose()
    if relay is not None and relay.upstream_closed and not relay.client_closed:
        log.info("the connection to the upstream ended")
        return 1
    return 0


async def _stop_on_signals(scope: anyio.CancelScope) -> None:
    """Cancel ``scope`` on SIGTERM or SIGHUP (a client stopping the guard)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
        async for signum in signals:
            log.info("received signal %d; stopping", signum)
            scope.cancel()
            return
