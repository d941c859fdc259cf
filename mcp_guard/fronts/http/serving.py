"""Serving the HTTP front: binding the address, uvicorn, the stop signals (:func:`serve_http`, :func:`serve_front`).

uvicorn parses HTTP with the protocol :func:`~.parsers.header_deadline_protocol` gives: httptools
where installed (a dependency of mcp-guard on CPython), else h11, each with a deadline and a
size cap on every request's headers (see :mod:`.parsers`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import anyio
import uvicorn

from ...calls.outputs import DEFAULT_OUTPUTS
from ...core import DEFAULT_PROFILE
from ...safe_text import escape
from ..heap import settle_heap
from ..stop_signals import held_stop_signals
from .app import HttpFront
from .config import ENDPOINT, STOP_GRACE_SECONDS, HttpConfig
from .parsers import header_deadline_protocol
from .security import is_loopback

if TYPE_CHECKING:
    from ...hosts.tables import HostProfile

__all__ = ["header_deadline_protocol", "serve_front", "serve_http"]

log = logging.getLogger("mcp_guard")


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening-ready socket bound to ``host:port`` (``OSError`` when it cannot be bound)."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server without signal handlers of its own: :func:`serve_front` holds the stop signals.

    (uvicorn would catch them only while it serves, and raise the caught signal again once it
    has stopped; the guard holds them until every upstream has stopped too, and returns an
    exit status instead, as ``wrap`` on stdio does.)
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Nothing: the signals are held around the server (``stop_signals``)."""
        yield

    def stop(self) -> None:
        """The first stop signal: stop serving (the front then ends its sessions and their upstreams).

        Further ones change nothing (uvicorn's own handler would take a second SIGINT as "exit
        now", which skips the application's end, where the front waits for its upstreams to
        stop); the wait for open connections is bounded by ``timeout_graceful_shutdown``.
        """
        self.should_exit = True


def _configure_uvicorn_logging() -> None:
    ours = logging.getLogger("mcp_guard")
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi"):
        logger = logging.getLogger(name)
        logger.handlers[:] = list(ours.handlers)
        logger.setLevel(max(ours.getEffectiveLevel(), logging.WARNING))
        logger.propagate = False


async def serve_http(
    command: Sequence[str],
    config: HttpConfig,
    *,
    profile: str = DEFAULT_PROFILE,
    hide_unsupported: bool = False,
    outputs: str = DEFAULT_OUTPUTS,
    request_timeout: float | None = None,
    host: HostProfile | None = None,
) -> int:
    """Serve the MCP streamable HTTP transport at ``/mcp`` until SIGINT or SIGTERM (``host``: the model host
    every ``tools/list`` is shown to, ``--present-for``; see ``HttpFront``).

    Every session's upstream is stopped before this returns.

    Returns:
        0 after SIGTERM or SIGHUP, 130 after SIGINT, 1 when the upstream command is not found
        or the address cannot be bound.
    """
    if not command:
        log.error("no upstream command given")
        return 1
    if os.sep not in command[0] and shutil.which(command[0]) is None:
        log.error("upstream command not found: %s", command[0])
        return 1
    front = HttpFront(
        command,
        config,
        profile=profile,
        hide_unsupported=hide_unsupported,
        outputs=outputs,
        request_timeout=request_timeout,
        host=host,
    )
    return await serve_front(front, f"wrapping `{' '.join(command)}` over HTTP (profile {profile}, outputs {outputs})")


async def serve_front(front: HttpFront, banner: str) -> int:
    """Bind ``front.config``'s address and serve ``front`` until SIGINT or SIGTERM; log ``banner`` first.

    Returns:
        0 after SIGTERM or SIGHUP, 130 after SIGINT, 1 when the address cannot be bound.
    """
    config = front.config
    host, port = config.host, config.port
    if not is_loopback(host):
        log.warning(
            "listening on %s, which is not a loopback address: anyone who can reach it can use the upstream%s",
            host or "every interface",
            "" if config.token or config.oauth else " (consider --oauth-issuer or --http-token-env)",
        )
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", host, port, exc.strerror or exc)
        return 1
    bound_port = sock.getsockname()[1]
    front.address = f"http://{_url_host(host)}:{bound_port}{ENDPOINT}"
    if not front.security.checks_host:
        log.warning("the Host header is not checked (bound to every interface; name hosts with --allowed-host)")
    if config.token is not None:
        log.info("every request needs the bearer token")
    if config.oauth is not None:
        log.info(
            "every request needs an OAuth access token from %s for %s (metadata: %s)",
            escape(config.oauth.issuer),
            escape(config.oauth.resource),
            front.oauth.metadata_url if front.oauth is not None else "",
        )
    _configure_uvicorn_logging()
    server = _Server(
        uvicorn.Config(
            front,
            interface="asgi3",
            lifespan="on",
            log_config=None,
            access_log=False,
            ws="none",
            http=header_deadline_protocol(config.header_timeout),
            proxy_headers=False,
            timeout_graceful_shutdown=int(STOP_GRACE_SECONDS + 5),
        )
    )
    front.server = server
    log.info("%s", banner)
    settle_heap()  # (the start-up heap out of every later full collection: fronts.heap)
    async with held_stop_signals(server.stop, then_ignore=True) as signals:
        try:
            await server.serve(sockets=[sock])
        finally:
            sock.close()
            with anyio.CancelScope(shield=True):
                await front.registry.shutdown()  # (bounded; done at the lifespan's end already, unless serving failed)
    return signals.exit_status
