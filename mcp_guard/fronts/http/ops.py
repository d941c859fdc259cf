"""The operator's endpoints: ``GET /health``, ``GET /ready``, ``GET /metrics`` (:func:`ops_answer`, :class:`OpsApp`).

- ``/health``: 200 ``{"status": "up"}`` while the process serves.
- ``/ready``: 200 ``{"ready": true}`` when the upstreams that serve any client are connected and
  initialized (on stdio, every upstream; on the HTTP front, those of the shared 2026-07-28 channel:
  ``Registry.unready``); 503 ``{"ready": false, "not_ready": [names]}`` otherwise (names escaped by
  ``safe_text.escape``; nothing else of the servers' configs).
- ``/metrics``: the Prometheus text format (:mod:`mcp_guard.calls.metrics`), 404 without metrics.

The HTTP front answers them beside ``/mcp`` (behind the same Host, Origin and bearer-token checks);
:class:`OpsApp` serves them alone for ``serve --metrics-port`` (the metrics listener binds to
loopback unless ``--metrics-host`` says otherwise, and checks nothing else).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc
import uvicorn
from starlette.types import Receive, Scope, Send

from ...safe_text import escape

if TYPE_CHECKING:
    from ...calls.metrics import Metrics

__all__ = ["OPS_PATHS", "OpsApp", "ops_answer", "send_answer", "serve_ops"]

OPS_PATHS: Final = frozenset({"/health", "/ready", "/metrics"})
"""The operator's paths (``GET`` only)."""

Unready = Callable[[], list[str]]
"""The names of the upstreams that are not connected and initialized now (``[]``: ready)."""


def ops_answer(path: str, metrics: Metrics | None, unready: Unready) -> tuple[int, bytes, bytes]:
    """``(status, body, content type)`` of a ``GET`` of one of :data:`OPS_PATHS`."""
    if path == "/health":
        return 200, b'{"status":"up"}', b"application/json"
    if path == "/ready":
        names = unready()
        if not names:
            return 200, b'{"ready":true}', b"application/json"
        body = json.dumps({"ready": False, "not_ready": [escape(n) for n in names]}).encode()
        return 503, body, b"application/json"
    if metrics is None:
        return 404, b"Not Found: metrics are off", b"text/plain; charset=utf-8"
    from ...calls.metrics import CONTENT_TYPE

    return 200, metrics.render(), CONTENT_TYPE.encode()


async def send_answer(
    send: Send, status: int, body: bytes, content_type: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    """Send one whole HTTP response (ASGI); ``extra`` headers after the content headers."""
    head = [(b"content-length", str(len(body)).encode()), (b"content-type", content_type), *extra]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class OpsApp:
    """An ASGI app of the operator's endpoints alone (``serve --metrics-port``).

    Args:
        metrics: the guard's metrics.
        unready: see :data:`Unready`.
    """

    def __init__(self, metrics: Metrics, unready: Unready) -> None:
        self.metrics = metrics
        self.unready = unready

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI 3 entry point (``http`` scopes; a ``lifespan`` scope is acknowledged)."""
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        if scope["path"] not in OPS_PATHS:
            await send_answer(send, 404, b"Not Found", b"text/plain; charset=utf-8")
        elif scope["method"] not in ("GET", "HEAD"):
            await send_answer(
                send, 405, b"Method Not Allowed", b"text/plain; charset=utf-8", ((b"allow", b"GET, HEAD"),)
            )
        else:
            await send_answer(send, *ops_answer(scope["path"], self.metrics, self.unready))


class _QuietServer(uvicorn.Server):
    """uvicorn without signal handlers of its own: the guard holds the stop signals (``stop_signals``)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Nothing: the guard's own handlers stay."""
        yield


async def serve_ops(
    app: OpsApp, host: str, port: int, *, task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Serve ``app`` at ``host:port`` until cancelled; ``task_status.started`` gets its ``http://`` address.

    Raises:
        OSError: the address cannot be bound (before ``started``).
    """
    from .serving import bind_socket  # (serving imports app, which imports this module)

    sock = bind_socket(host, port)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="off", log_config=None, access_log=False, ws="none", proxy_headers=False)
    server = _QuietServer(config)
    url = f"http://{f'[{host}]' if ':' in host else host}:{bound}"
    done = anyio.Event()

    async def run() -> None:
        try:
            with anyio.CancelScope(shield=True):  # stopped by should_exit, so that it closes its listener
                await server.serve([sock])
        finally:
            done.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            while not server.started and not done.is_set():
                await anyio.sleep(0.01)
            task_status.started(url)
            try:
                await done.wait()
            finally:
                server.should_exit = True
    finally:
        sock.close()
