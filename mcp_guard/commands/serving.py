"""``mcp-guard serve``: its config, lock, journal and tracing read, then the gateway run (``fronts.serve``).

Every reason ``serve`` on stdio cannot start (the config is wrong, ``--present-for`` names no
host, the lock file cannot be read, the journal or another store cannot be opened, tracing is
asked for without its extra, the metrics address cannot be bound) is said on stderr, and the
client's first requests are answered with a -32603 error naming it before the guard exits
(``fronts.start_refusal``), as ``wrap`` does when its upstream cannot start; over HTTP
(``--http``) there is no client yet and the guard exits at once. The exit statuses are
:func:`run_serve`'s.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .gateway import DEFAULT_TIMEOUT
from .tracing import MISSING_EXTRA, tracing

if TYPE_CHECKING:
    from ..calls.pinning import LockFile
    from ..config import GatewayConfig
    from ..fronts.http import HttpConfig
    from ..oauth_config import OAuthSettings

__all__ = ["run_serve"]

log = logging.getLogger("mcp_guard")


def _cannot_start(status: int, cause: str, *, stdio: bool) -> int:
    """Say ``cause`` on stderr; on stdio answer the client's first requests with it (``start_refusal``); ``status``."""
    print(f"mcp-guard: {cause}", file=sys.stderr)
    if stdio:
        from ..fronts.start_refusal import refuse_stdio_client_now

        refuse_stdio_client_now(cause)
    return status


def run_serve(
    config_path: str,
    *,
    lock: str | None = None,
    journal: str | None = None,
    request_timeout: float | None = None,
    http: HttpConfig | None = None,
    max_message_bytes: int | None = None,
    metrics_port: int | None = None,
    metrics_host: str = "127.0.0.1",
    replica: str | None = None,
    otel: bool = False,
    present_for: str | None = None,
) -> int:
    """``mcp-guard serve``: the gateway on stdio until the client closes its side (or, with
    ``http``, over streamable HTTP until SIGINT/SIGTERM). ``max_message_bytes`` caps one message
    from the client or an upstream on stdio (``None``: 32 MiB); with ``http`` the front's setting applies.
    ``request_timeout`` (``--request-timeout``, as for ``wrap``) bounds every forwarded request and
    the guard's own; ``None``: forwarded requests have no limit, the guard's own 30 s.
    ``metrics_port``/``metrics_host`` (stdio only): where ``/metrics``, ``/health`` and ``/ready`` are served.
    ``replica``: this process's id in a database journal (``None``: ``HOST-PID``).
    ``otel`` (``--otel``) or ``guard.otel``: OpenTelemetry traces of every ``tools/call`` (``commands.tracing``).
    ``present_for`` (``--present-for``) overrides ``guard.presentFor`` (a name not in ``hosts.HOST_NAMES``: 2).

    Returns:
        0 the client closed (or a signal stopped the guard); 1 the lock file is unreadable or
        the journal cannot be opened; 2 the config is wrong. On stdio, a start that fails answers
        the client's first requests with the cause first (see the module docstring).
    """
    from ..calls.pinning import LockError, LockFile
    from ..config import ConfigError, load_config

    stdio = http is None
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        return _cannot_start(2, str(exc), stdio=stdio)
    if present_for is not None:
        from ..hosts.tables import HOST_NAMES

        if present_for not in HOST_NAMES:
            return _cannot_start(
                2, f"--present-for: unknown host {present_for!r} ({'|'.join(HOST_NAMES)})", stdio=stdio
            )
        guard = config.guard.model_copy(update={"present_for": present_for})
        config = config.model_copy(update={"guard": guard})
    lock_path = Path(lock).expanduser() if lock is not None else config.lock_path
    try:
        lock_file = LockFile.read_optional(lock_path)
    except LockError as exc:
        return _cannot_start(1, str(exc), stdio=stdio)
    if lock is not None and lock_file is None:
        return _cannot_start(1, f"{lock}: no such lock file", stdio=stdio)
    journal_path = Path(journal).expanduser() if journal is not None else config.journal_path
    own_timeout = request_timeout if request_timeout is not None else DEFAULT_TIMEOUT
    if config.guard.auth is not None:
        if http is None:
            log.warning(
                "guard.auth applies to serve --http only: on stdio the client is the process that started the guard"
            )
        else:
            http = _with_auth(http, config.guard.auth)
            if http is None:
                return 2
    from ..allocator import one_arena

    one_arena()  # a big message freed in a worker thread is reused by the next (peak memory: allocator)
    with tracing(otel, config.guard.otel) as traced:
        if not traced:  # (said on stderr by tracing)
            if stdio:
                from ..fronts.start_refusal import refuse_stdio_client_now

                refuse_stdio_client_now(MISSING_EXTRA.removeprefix("mcp-guard: "))
            return 2
        return _run_serve(
            config,
            http,
            lock_file,
            journal_path,
            own_timeout,
            request_timeout,
            max_message_bytes,
            (metrics_port, metrics_host),
            replica,
        )


def _run_serve(
    config: GatewayConfig,
    http: HttpConfig | None,
    lock_file: LockFile | None,
    journal_path: Path | None,
    own_timeout: float,
    request_timeout: float | None,
    max_message_bytes: int | None,
    metrics: tuple[int | None, str],
    replica: str | None,
) -> int:
    """:func:`run_serve` once its config, lock and journal are read: the gateway until it ends."""
    import anyio

    from ..fronts.serve import serve_http, serve_stdio

    metrics_port, metrics_host = metrics
    try:
        if http is not None:
            front = http
            return anyio.run(
                lambda: serve_http(
                    config,
                    front,
                    lock=lock_file,
                    journal_path=journal_path,
                    request_timeout=own_timeout,
                    client_request_timeout=request_timeout,
                    replica=replica,
                )
            )
        from ..wire.framing import DEFAULT_MAX_LINE

        cap = max_message_bytes or DEFAULT_MAX_LINE
        return anyio.run(
            lambda: serve_stdio(
                config,
                lock=lock_file,
                journal_path=journal_path,
                request_timeout=own_timeout,
                client_request_timeout=request_timeout,
                max_message_bytes=cap,
                metrics_port=metrics_port,
                metrics_host=metrics_host,
                replica=replica,
            )
        )
    except KeyboardInterrupt:
        return 130


def _with_auth(http: HttpConfig, auth: OAuthSettings) -> HttpConfig | None:
    """``http`` with the config's ``guard.auth``; None (the problem printed) when it cannot be combined."""
    from pydantic import SecretStr, ValidationError

    from ..fronts.http import HttpConfig
    from ..oauth_config import client_secret

    if http.oauth is not None:
        print(
            "mcp-guard: OAuth is set both by --oauth-issuer and by guard.auth in the config: give one", file=sys.stderr
        )
        return None
    try:
        secret = client_secret(auth, os.environ)
        return HttpConfig.model_validate(
            {**dict(http), "oauth": auth, "oauth_client_secret": SecretStr(secret) if secret is not None else None}
        )
    except ValidationError as exc:
        problems = "; ".join(str(e["ctx"]["error"]) if "error" in e.get("ctx", {}) else e["msg"] for e in exc.errors())
        print(f"mcp-guard: guard.auth: {problems}", file=sys.stderr)
    except ValueError as exc:
        print(f"mcp-guard: guard.auth.clientSecretEnv: {exc}", file=sys.stderr)
    return None
