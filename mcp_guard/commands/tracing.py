"""``--otel`` for ``wrap`` and ``serve``: the option, and tracing turned on around a command's run.

Tracing is the ``otel`` extra (``pip install 'mcp-guard[otel]'``; ``mcp_guard.telemetry``), imported only
here and only when it is asked for (``--otel``, or ``guard.otel`` in serve's config): ``wrap`` on stdio
without it loads no OpenTelemetry (tests/fronts/test_lean_imports.py).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..otel_config import OtelSettings

__all__ = ["MISSING_EXTRA", "add_otel_option", "tracing"]

log = logging.getLogger("mcp_guard")

MISSING_EXTRA = "mcp-guard: --otel (guard.otel) needs the otel extra: pip install 'mcp-guard[otel]'"


def add_otel_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--otel`` to ``parser`` (``wrap``, ``serve``)."""
    parser.add_argument(
        "--otel",
        action="store_true",
        help="send OpenTelemetry traces of every tools/call over OTLP/HTTP (the otel extra), configured by the "
        "standard OTEL_EXPORTER_OTLP_* and OTEL_SERVICE_NAME variables (default http://localhost:4318); trace "
        "context is read from and passed on in params._meta (docs/tracing.md)",
    )


@contextlib.contextmanager
def tracing(on: bool, settings: OtelSettings | None = None) -> Iterator[bool]:
    """Trace the calls of the run inside (when ``on``, or ``settings`` is enabled); yields False when tracing
    was asked for but the ``otel`` extra is not installed (said on stderr: the command then exits 2). The
    spans still batched are exported when the run ends."""
    if settings is not None and settings.enabled:
        on = True
    if not on:
        yield True
        return
    try:
        from ..telemetry.setup import start_tracing, stop_tracing
    except ImportError:
        print(MISSING_EXTRA, file=sys.stderr)
        yield False
        return
    provider = start_tracing(settings)
    log.info("tracing: every tools/call is traced (OpenTelemetry, OTLP/HTTP)")
    try:
        yield True
    finally:
        stop_tracing(provider)
