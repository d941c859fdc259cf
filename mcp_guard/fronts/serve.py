"""``mcp-guard serve --config FILE``: the gateway on stdio, in front of every enabled server of the config.

The client talks to this process's stdin/stdout (fd 1 is diverted to stderr while the
session runs, as for ``wrap``); each enabled server is an upstream of one
:func:`~mcp_guard.sessions.gateway.serve_session`. SIGTERM, SIGHUP and SIGINT stop the guard (held by
``fronts.stop_signals`` until every upstream has stopped): every upstream's input is closed
and its process group gets SIGTERM at once, SIGKILL 1 s later; further signals meanwhile are
logged and cut none of that short.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from ..calls.pinning import LockFile
from ..config import GatewayConfig, StdioServer
from ..guarded import double_wrapped
from ..sessions.gateway import serve_session
from ..sessions.session import Session
from ..state.opening import StateError, opened_stores
from ..streams.framing import FdReceiveStream, FdSendStream, LineStream, claim_stdio
from ..wire.framing import DEFAULT_MAX_LINE
from .start_refusal import refuse_stdio_client
from .stop_signals import held_stop_signals

__all__ = ["double_wrapped_servers", "serve_http", "serve_stdio", "warn_double_wrapped"]

if TYPE_CHECKING:
    from ..calls.journal import Journal
    from ..calls.policy import Budget
    from ..calls.stores import JournalSink, SharedBudget
    from .http import HttpConfig

log = logging.getLogger("mcp_guard")


def double_wrapped_servers(config: GatewayConfig) -> list[tuple[str, str]]:
    """``(name, why)`` of each enabled stdio server that runs the guard itself (issue 13 item 3).

    ``why`` is :func:`mcp_guard.guarded.double_wrapped`'s phrase (what two guards do, what to
    write instead). ``serve`` warns with it at start (the server still starts: its calls are
    guarded, twice); ``check --config`` reports it.
    """
    found = []
    for server in config.enabled:
        why = double_wrapped(server.command, server.args) if isinstance(server, StdioServer) else None
        if why is not None:
            found.append((server.name, why))
    return found


def warn_double_wrapped(config: GatewayConfig) -> None:
    """Log one warning per :func:`double_wrapped_servers` entry, naming the server."""
    for name, why in double_wrapped_servers(config):
        log.warning("gateway: server %s %s", name, why)


async def serve_stdio(
    config: GatewayConfig,
    *,
    lock: LockFile | None = None,
    journal_path: Path | None = None,
    request_timeout: float = 30.0,
    max_message_bytes: int = DEFAULT_MAX_LINE,
    client_request_timeout: float | None = None,
    metrics_port: int | None = None,
    metrics_host: str = "127.0.0.1",
    replica: str | None = None,
) -> int:
    """Serve one client on this process's stdio until it closes its side or a signal comes.

    Args:
        config: the loaded gateway config.
        lock: the lock file in force, or ``None``.
        journal_path: where the journal is appended (``None``: no journal).
        request_timeout: seconds the guard waits for an upstream's answer to its own requests.
        max_message_bytes: the cap on one message from the client or an upstream, in bytes.
        client_request_timeout: seconds a forwarded request may wait for its answer (``None``: no limit).
        metrics_port: serve ``/metrics``, ``/health`` and ``/ready`` over HTTP on this port
            (``0``: any free one, logged), ``None``: no metrics (``prometheus_client`` is not imported).
        metrics_host: the address that listener binds (default loopback).
        replica: this process's id in a database journal's rows (``None``: ``HOST-PID``).

    Returns:
        0 (the client closed the connection, or SIGTERM or SIGHUP stopped the guard), 130 after
        SIGINT; 1 when the journal (or another store of ``mcp_guard.state``) cannot be opened or
        the metrics address cannot be bound: the client's first requests are then answered with
        the cause first (``start_refusal``).
    """
    try:
        async with opened_stores(config, journal_path=journal_path, replica=replica) as stores:
            return await _serve_stdio(
                config,
                stores.budget,
                stores.journal,
                stores.journal_label,
                lock=lock,
                request_timeout=request_timeout,
                max_message_bytes=max_message_bytes,
                client_request_timeout=client_request_timeout,
                metrics_port=metrics_port,
                metrics_host=metrics_host,
            )
    except StateError as exc:
        log.error("%s", exc)
        with claim_stdio() as (read_fd, write_fd):
            client = LineStream(FdReceiveStream(read_fd), FdSendStream(write_fd), max_line=max_message_bytes)
            try:
                await refuse_stdio_client(client, str(exc))
            finally:
                await client.aclose()
        return 1


async def _serve_stdio(
    config: GatewayConfig,
    budget: Budget | SharedBudget,
    journal: Journal | JournalSink | None,
    journal_label: str,
    *,
    lock: LockFile | None,
    request_timeout: float,
    max_message_bytes: int,
    client_request_timeout: float | None,
    metrics_port: int | None,
    metrics_host: str,
) -> int:
    names = ", ".join(s.name for s in config.enabled) or "(none)"
    warn_double_wrapped(config)
    log.info(
        "gateway: serving %s on stdio (profile %s%s%s%s)",
        names,
        config.guard.profile,
        f", lock {lock.path}" if lock is not None else ", no lock file",  # (--lock's, else the config's: red team 38)
        f", journal {journal_label}" if journal is not None else "",
        _shown_to(config),
    )
    with claim_stdio() as (read_fd, write_fd):
        client = LineStream(FdReceiveStream(read_fd), FdSendStream(write_fd), max_line=max_message_bytes)
        session = serve_session(
            client,
            config,
            lock=lock,
            journal=journal,
            budget=budget,
            request_timeout=request_timeout,
            max_message_bytes=max_message_bytes,
            client_request_timeout=client_request_timeout,
        )
        stopped = anyio.CancelScope()
        try:
            async with held_stop_signals(stopped.cancel, then_ignore=True) as signals:
                with stopped:
                    if metrics_port is None:
                        await session.run()
                    elif (failure := await _run_with_metrics(session, metrics_host, metrics_port)) is not None:
                        await refuse_stdio_client(client, failure)
                        return 1
        finally:
            await client.aclose()
    return signals.exit_status


async def _run_with_metrics(session: Session, host: str, port: int) -> str | None:
    """Run ``session`` with its metrics served at ``host:port``; why not (logged) when that cannot be bound."""
    from ..calls.metrics import Metrics
    from .http.ops import OpsApp, serve_ops

    metrics = Metrics()
    session.pipeline.observer = metrics
    async with anyio.create_task_group() as tg:
        try:
            url = await tg.start(serve_ops, OpsApp(metrics, session.unready), host, port)
        except OSError as exc:
            why = f"cannot listen on {host}:{port} for metrics: {exc.strerror or exc}"
            log.error("%s", why)
            return why
        log.info("metrics: serving /metrics, /health and /ready at %s", url)
        metrics.session_opened()
        try:
            await session.run()
        finally:
            metrics.session_closed()
            tg.cancel_scope.cancel()
    return None


async def serve_http(
    config: GatewayConfig,
    http: HttpConfig,
    *,
    lock: LockFile | None = None,
    journal_path: Path | None = None,
    request_timeout: float = 30.0,
    client_request_timeout: float | None = None,
    replica: str | None = None,
) -> int:
    """Serve the gateway over MCP streamable HTTP at ``/mcp`` (the front of ``wrap --http``).

    Each handshake-era HTTP session gets a gateway session of its own (its own upstream
    processes and links); 2026-07-28 requests share one. One journal and one budget serve them all
    (with ``guard.state`` and a database journal, every replica of the gateway shares them too:
    docs/scale-out.md).

    Args:
        config: the loaded gateway config.
        http: the HTTP front's settings (address, Host/Origin checks, token, size cap).
        lock, journal_path, request_timeout, client_request_timeout, replica: as for :func:`serve_stdio`.

    Returns:
        0 after SIGTERM or SIGHUP, 130 after SIGINT, 1 when the journal cannot be opened or
        the address cannot be bound.
    """
    try:
        async with opened_stores(config, journal_path=journal_path, replica=replica) as stores:
            return await _serve_http(
                config,
                http,
                stores.budget,
                stores.journal,
                lock=lock,
                request_timeout=request_timeout,
                client_request_timeout=client_request_timeout,
            )
    except StateError as exc:
        log.error("%s", exc)
        return 1


async def _serve_http(
    config: GatewayConfig,
    http: HttpConfig,
    budget: Budget | SharedBudget,
    journal: Journal | JournalSink | None,
    *,
    lock: LockFile | None,
    request_timeout: float,
    client_request_timeout: float | None,
) -> int:
    from ..calls.metrics import Metrics
    from .http import HttpFront, serve_front

    metrics = Metrics()

    def session(client: LineStream) -> Session:
        gateway = serve_session(
            client,
            config,
            lock=lock,
            journal=journal,
            budget=budget,
            request_timeout=request_timeout,
            max_message_bytes=http.max_message_bytes,
            client_request_timeout=client_request_timeout,
        )
        gateway.pipeline.observer = metrics
        return gateway

    front = HttpFront([], http, profile=config.guard.profile, session_factory=session, metrics=metrics)
    names = ", ".join(s.name for s in config.enabled) or "(none)"
    warn_double_wrapped(config)
    return await serve_front(
        front, f"gateway: serving {names} over HTTP (profile {config.guard.profile}{_shown_to(config)})"
    )


def _shown_to(config: GatewayConfig) -> str:
    """The banner's words for ``guard.presentFor`` (``, tools shown to gemini``), or ``""``."""
    host = config.guard.present_for
    return "" if host is None else f", tools shown to {host}"
