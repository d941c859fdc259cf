"""The guard's Prometheus metrics (:class:`Metrics`), in a registry of its own.

Import this module only when metrics are asked for (``/metrics`` on the HTTP front,
``--metrics-port``): it imports ``prometheus_client``, which the stdio path does without.

Metric families (text exposition format 0.0.4, ``prometheus_client.generate_latest``):

- ``mcp_guard_calls_total{server,tool,outcome}``: ``tools/call`` requests by how they ended
  (:data:`~.observer.OUTCOMES`; a rejected call also counts in the next family).
- ``mcp_guard_refusals_total{server,kind}``: rejected calls by rejection kind.
- ``mcp_guard_upstream_restarts_total{server}``: upstream connections made after the first.
- ``mcp_guard_sessions``: client sessions open now (stdio: 1 while the client is connected).
- ``mcp_guard_call_duration_seconds{server,outcome}``: a histogram of the time from a call's
  arrival to its end.

``server`` is the gateway's server name (``""`` for ``wrap``). Label values are never argument,
result or header values. Tool names come from servers, so at most :data:`MAX_TOOL_LABELS`
distinct ``tool`` values are kept per process; later ones are counted under
:data:`OTHER_TOOL`. A call naming a tool no server listed is counted under
``observer.UNKNOWN_TOOL`` (``_unknown``): the name is the client's, and made-up names must not
fill the cap. Rejection kinds and outcomes are the guard's own words (capped all the same).
Label values are escaped as log lines are (``safe_text.escape``: ESC, bidi overrides);
``prometheus_client`` escapes backslash, double quote and newline itself.
"""

from __future__ import annotations

import threading
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from ..safe_text import escape

__all__ = ["CONTENT_TYPE", "MAX_TOOL_LABELS", "OTHER_TOOL", "Metrics"]

MAX_TOOL_LABELS: Final = 500
"""Distinct ``tool`` label values kept per process (bounded cardinality)."""
MAX_WORD_LABELS: Final = 64
"""Distinct ``outcome`` or ``kind`` values kept per process."""
OTHER_TOOL: Final = "_other"
"""The label value that stands for every value beyond a cap."""
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
"""The ``Content-Type`` of :meth:`Metrics.render`'s output."""
MAX_LABEL_CHARS: Final = 128
"""A longer tool or server name is counted under :data:`OTHER_TOOL`."""

MAX_CACHED_LABELS: Final = 4096
"""Label combinations of ended calls whose metric children :meth:`Metrics.call_ended` keeps at hand."""

LATENCY_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Histogram bucket bounds, seconds."""


class _Capped:
    """Label values admitted up to a cap, escaped (``safe_text.escape``: a scrape read on a terminal
    gets no control character or bidi override); later new values become :data:`OTHER_TOOL`."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.seen: dict[str, str] = {}
        self.lock = threading.Lock()

    def __call__(self, value: str) -> str:
        label = self.seen.get(value)
        if label is not None:
            return label
        with self.lock:
            if len(value) > MAX_LABEL_CHARS or len(self.seen) >= self.cap:
                return OTHER_TOOL
            label = self.seen[value] = escape(value)
            return label


class Metrics:
    """The guard's metrics: a :class:`~.observer.CallObserver` over a per-process ``CollectorRegistry``.

    Args:
        max_tools: the cap on distinct ``tool`` label values (default :data:`MAX_TOOL_LABELS`).

    Attributes:
        registry: the ``prometheus_client.CollectorRegistry`` (not the global ``REGISTRY``: one
            per guard, and tests make several).
    """

    def __init__(self, *, max_tools: int = MAX_TOOL_LABELS) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._tool = _Capped(max_tools)
        self._server = _Capped(max_tools)
        self._word = _Capped(MAX_WORD_LABELS)
        self._ended: dict[tuple[str, str, str, str | None], tuple[Any, Any, Any]] = {}
        self.calls = Counter(
            "mcp_guard_calls",
            "tools/call requests by how they ended",
            ("server", "tool", "outcome"),
            registry=self.registry,
        )
        self.refusals = Counter(
            "mcp_guard_refusals", "rejected tools/call requests by kind", ("server", "kind"), registry=self.registry
        )
        self.restarts = Counter(
            "mcp_guard_upstream_restarts",
            "upstream connections made after the first",
            ("server",),
            registry=self.registry,
        )
        self.sessions = Gauge("mcp_guard_sessions", "client sessions open now", registry=self.registry)
        self.latency = Histogram(
            "mcp_guard_call_duration_seconds",
            "time from a tools/call's arrival to its end",
            ("server", "outcome"),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )

    def call_ended(self, server: str, tool: str, outcome: str, kind: str | None, seconds: float | None) -> None:
        """Count one ended call (see :meth:`.observer.CallObserver.call_ended`)."""
        key = (server, tool, outcome, kind)
        children = self._ended.get(key)
        if children is None:
            # ``labels()`` takes a lock and checks the values on every call: its children are kept (a
            # raw value always maps to the same capped one), up to a bound of their own.
            server, outcome = self._server(server), self._word(outcome)
            children = (
                self.calls.labels(server, self._tool(tool), outcome),
                self.refusals.labels(server, self._word(kind)) if kind is not None else None,
                self.latency.labels(server, outcome),
            )
            if len(self._ended) < MAX_CACHED_LABELS:
                self._ended[key] = children
        calls, refusals, latency = children
        calls.inc()
        if refusals is not None:
            refusals.inc()
        if seconds is not None:
            latency.observe(max(seconds, 0.0))

    def upstream_restarted(self, server: str) -> None:
        """Count one upstream restart."""
        self.restarts.labels(self._server(server)).inc()

    def session_opened(self) -> None:
        """A client session opened."""
        self.sessions.inc()

    def session_closed(self) -> None:
        """A client session ended."""
        self.sessions.dec()

    def render(self) -> bytes:
        """The registry in the Prometheus text format (UTF-8; ``Content-Type`` :data:`CONTENT_TYPE`)."""
        return generate_latest(self.registry)
