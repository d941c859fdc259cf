"""``mcp-guard wrap``: the guard on stdio in front of one upstream, a process or an HTTP endpoint.

The client talks to this process's stdin/stdout; the upstream is a child process on stdio
(:func:`wrap_stdio`) or a streamable HTTP endpoint (:func:`wrap_stdio_http`), connected
again when it goes away (see ``sessions.relay``). Logs go to stderr only; fd 1 is diverted to stderr
while the relay runs (see ``framing.claim_stdio``). SIGTERM, SIGHUP and SIGINT stop the guard
at once: the upstream's input is closed and a process that has not exited
``upstream.STOP_EXIT_SECONDS`` (0.1 s) later gets SIGTERM with its group (``upstream.KILL_GRACE_SECONDS``
before SIGKILL); an HTTP session is deleted. A request left open is answered that the guard was stopped. The
signals are held (``stop_signals``) until the upstream has stopped: further ones meanwhile are
logged and cut none of that short.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc

from ..calls.outputs import DEFAULT_OUTPUTS
from ..calls.tool_table import ToolTable
from ..core import DEFAULT_PROFILE
from ..peer.spawn import StartedProcess
from ..peer.upstream import Connector, UpstreamStartError, stdio_connector
from ..sessions.relay import wrap_session
from ..streams.framing import claim_stdio
from ..streams.pipes import pipe_line_stream
from ..wire.framing import DEFAULT_MAX_LINE
from .heap import settle_heap
from .stop_signals import held_stop_signals

if TYPE_CHECKING:
    from ..hosts.tables import HostProfile

__all__ = ["DEFAULT_GUARD_REQUEST_TIMEOUT", "wrap_stdio", "wrap_stdio_http"]

SETTLE_AFTER_SECONDS: Final = 1.0
"""When the stdio front settles its heap (``fronts.heap``), after its start: past the handshake, which it
would delay (the relay runs on asyncio: ``pipes`` reads with the loop's readers)."""

log = logging.getLogger("mcp_guard")

DEFAULT_GUARD_REQUEST_TIMEOUT = 30.0
"""Seconds the guard waits for answers to its own requests when ``request_timeout`` is not given."""


async def wrap_stdio(
    command: Sequence[str],
    *,
    profile: str = DEFAULT_PROFILE,
    hide_unsupported: bool = False,
    outputs: str = DEFAULT_OUTPUTS,
    request_timeout: float | None = None,
    max_message_bytes: int = DEFAULT_MAX_LINE,
    started: StartedProcess | UpstreamStartError | None = None,
    host: HostProfile | None = None,
) -> int:
    """Relay this process's stdio to ``command`` until the client closes its side or a signal comes.

    Args:
        command: the upstream server's executable and arguments.
        profile: one of ``core.PROFILES``; default ``core.DEFAULT_PROFILE``.
        hide_unsupported: leave unsupported tools out of ``tools/list``.
        outputs: ``enforce``, ``report`` or ``off``: what is done with tool results (``calls.outputs``).
        request_timeout: seconds a forwarded client request may wait for the upstream's
            answer (None: no limit); also the limit for the guard's own requests (default
            :data:`DEFAULT_GUARD_REQUEST_TIMEOUT`).
        max_message_bytes: the cap on one message in either direction; a longer one is
            answered with an error and dropped as it arrives, never buffered.
        started: the first upstream process, started already from ``command``
            (``spawn.start_early``: the CLI starts it before the event loop runs, so the server
            starts up while the guard loads), or the error that start raised; None: it is
            started here.
        host: the model host every ``tools/list`` is shown to (``--present-for``; ``calls.presenting``),
            or None: listings relayed as the upstream gives them (annotated).

    Returns:
        The process exit status: 0 when the client closed the connection (or SIGTERM or
        SIGHUP stopped the guard), 130 after SIGINT, 1 when the upstream could not be started
        at all.
    """
    table = ToolTable(profile, hide_unsupported=hide_unsupported, outputs=outputs, host=host)
    log.info(
        "wrapping `%s` (profile %s%s%s%s%s)",
        shlex.join(command),
        profile,
        ", unsupported tools hidden" if hide_unsupported else "",
        f", outputs {outputs}",
        f", tools shown to {host.name}" if host is not None else "",
        f", request timeout {request_timeout:g} s" if request_timeout is not None else "",
    )
    connect = stdio_connector(command, max_line=max_message_bytes, started=started)
    return await _relay_stdio(connect, table, request_timeout, max_message_bytes)


async def _relay_stdio(
    connect: Connector, table: ToolTable, request_timeout: float | None, max_line: int = DEFAULT_MAX_LINE
) -> int:
    """Relay this process's stdio to the upstream ``connect`` makes, until the client closes or a signal comes."""
    with claim_stdio() as (read_fd, write_fd):
        client = pipe_line_stream(read_fd, write_fd, max_line=max_line)
        session = wrap_session(
            client,
            connect,
            table,
            request_timeout=request_timeout if request_timeout is not None else DEFAULT_GUARD_REQUEST_TIMEOUT,
            client_request_timeout=request_timeout,
        )
        stopped = anyio.CancelScope()
        # The start-up heap out of every later full collection (fronts.heap), once the client's first exchange
        # is done: settled before the first line, its collection (~6 ms) delayed the initialize answer.
        asyncio.get_running_loop().call_later(SETTLE_AFTER_SECONDS, settle_heap)
        try:
            async with held_stop_signals(stopped.cancel, then_ignore=True) as signals:
                with stopped:
                    await session.run()
        except UpstreamStartError as exc:
            log.error("%s", exc)
            return 1
        finally:
            await client.aclose()
    return signals.exit_status


async def wrap_stdio_http(
    url: str,
    headers: Mapping[str, str] | None = None,
    *,
    profile: str = DEFAULT_PROFILE,
    hide_unsupported: bool = False,
    outputs: str = DEFAULT_OUTPUTS,
    max_message_bytes: int = DEFAULT_MAX_LINE,
    request_timeout: float | None = None,
    host: HostProfile | None = None,
) -> int:
    """Relay this process's stdio to the streamable HTTP MCP endpoint ``url`` until either side closes.

    Args:
        url: the upstream's MCP endpoint (``http://`` or ``https://``).
        headers: extra HTTP headers for every request to it (values are never logged).
        profile: the schema profile.
        hide_unsupported: leave unsupported tools out of ``tools/list``.
        outputs: ``enforce``, ``report`` or ``off``: what is done with tool results (``calls.outputs``).
        max_message_bytes: the cap on one message from the upstream.
        request_timeout: as for :func:`wrap_stdio`.
        host: as for :func:`wrap_stdio`.

    Returns:
        The process exit status: 0 when the client closed the connection (or SIGTERM or
        SIGHUP stopped the guard), 130 after SIGINT, 1 when the first connection could not
        be made. A session the
        server ends later is opened again on the next request (see ``sessions.relay``).

    Raises:
        ValueError: ``url`` is not an http(s) URL.
    """
    from ..peer.http_upstream import http_connector, shown_url  # httpx2 and the SDK: loaded for this path only

    connect = http_connector(url, headers, max_message_bytes=max_message_bytes)
    table = ToolTable(profile, hide_unsupported=hide_unsupported, outputs=outputs, host=host)
    names = ", ".join(sorted(headers or {}))
    log.info(
        "wrapping %s over streamable HTTP (profile %s%s%s%s%s)",
        shown_url(url),
        profile,
        ", unsupported tools hidden" if hide_unsupported else "",
        f", outputs {outputs}",
        f", tools shown to {host.name}" if host is not None else "",
        f"; extra headers: {names}" if names else "",
    )
    return await _relay_stdio(connect, table, request_timeout, max_message_bytes)
