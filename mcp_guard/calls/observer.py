"""Where a ``tools/call``'s outcome is reported: the :class:`CallObserver` seam of ``wrap`` and ``serve``.

The call pipeline (``calls.pipeline.Pipeline``) and the upstream links tell an observer how
each call ended and when an upstream restarted; :class:`~mcp_guard.calls.metrics.Metrics`
(imported only when metrics are asked for: it needs ``prometheus_client``) counts them. This
module imports nothing outside the standard library, so the stdio path stays lean.

The same shape for traces (issue 27 item 3): a :class:`CallTracer` (``mcp_guard.telemetry``, imported
only with ``--otel`` or ``guard.otel``: it needs OpenTelemetry) opens a :class:`CallTrace` per
``tools/call``; the pipeline tells it when the judgement ran, the session asks it for the trace context
to forward, and the pipeline's end of the call closes it. The tracer a process runs with is installed
once (:func:`install_tracer`, by the command), and every pipeline made after takes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Protocol

__all__ = ["OUTCOMES", "UNKNOWN_TOOL", "CallObserver", "CallTrace", "CallTracer", "install_tracer", "tracer"]

UNKNOWN_TOOL: Final = "_unknown"
"""The ``tool`` an observer is told for a call naming a tool no server listed: that name is the client's
text, not a server's (it may hold anything a model wrote), so it is never a label (trial 3 T4)."""

OUTCOMES: Final = (
    "ok",
    "is_error",
    "rejected",
    "protocol_error",
    "upstream_died",
    "timed_out",
    "cancelled",
    "output_invalid",
)
"""The outcomes of a call known today (the journal's ``result`` values, and ``output_invalid`` for
result checking); an observer takes any string, so a new outcome flows through unchanged."""


class CallObserver(Protocol):
    """What is told of calls and upstreams; every method is quick and never raises."""

    def call_ended(self, server: str, tool: str, outcome: str, kind: str | None, seconds: float | None) -> None:
        """A ``tools/call`` ended.

        Args:
            server: the gateway server's name (``""`` for ``wrap``).
            tool: the upstream's tool name, as the server listed it (untrusted text).
            outcome: one of :data:`OUTCOMES` (or a newer one).
            kind: the rejection kind (``validation``, ``unsupported_capability``, ...) when
                ``outcome`` is ``rejected``, else ``None``.
            seconds: time from the call's arrival to its end, or ``None`` when unknown.
        """

    def upstream_restarted(self, server: str) -> None:
        """An upstream connection was made again after the first (``server``: ``""`` for ``wrap``)."""


class CallTrace(Protocol):
    """The trace of one ``tools/call``, from its arrival to its end; every method is quick and never raises."""

    def judged(self, started_ns: int, kind: str | None, pointers: Sequence[str]) -> None:
        """The pipeline's checks ran from ``started_ns`` (``time.time_ns()``) until now.

        Args:
            started_ns: when the judgement began, nanoseconds since the epoch.
            kind: the rejection kind when the call was refused, else ``None``.
            pointers: the JSON Pointers of the refusal's findings, made fit for the log
                (``calls.refusals.logged_pointer``: a key the schema does not declare is ``…``).
        """

    def forwarding(self) -> dict[str, str]:
        """The call is sent upstream now: the W3C trace context of that round trip (``traceparent`` and
        maybe ``tracestate``), to put in the forwarded request's ``params._meta``."""
        ...

    def ended(self, outcome: str, kind: str | None) -> None:
        """The call ended (``outcome``: one of :data:`OUTCOMES`; ``kind`` as for :meth:`CallObserver.call_ended`)."""


class CallTracer(Protocol):
    """What opens a :class:`CallTrace` per ``tools/call`` (``mcp_guard.telemetry.CallSpans``)."""

    def call_started(self, server: str, tool: str, request_id: Any, meta: Any, modern: bool) -> CallTrace:
        """A ``tools/call`` arrived and was routed.

        Args:
            server: the gateway server's name (``""`` for ``wrap``).
            tool: the upstream's tool name, as the server listed it.
            request_id: the request's JSON-RPC id, as the session received it.
            meta: the request's ``params._meta`` (any JSON value; its ``traceparent`` and
                ``tracestate`` members are the caller's trace context), or ``None``.
            modern: a 2026-07-28-era request.
        """
        ...


_installed: list[CallTracer] = []


def install_tracer(new: CallTracer | None) -> None:
    """Make ``new`` the tracer of the pipelines made from now on (``None``: no tracing, the default)."""
    _installed.clear()
    if new is not None:
        _installed.append(new)


def tracer() -> CallTracer | None:
    """The tracer installed by :func:`install_tracer`, or ``None``."""
    return _installed[0] if _installed else None
