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
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

__all__ = [
    "OUTCOMES",
    "UNKNOWN_TOOL",
    "CallObserver",
    "CallTrace",
    "CallTracer",
    "Origin",
    "Origins",
    "install_tracer",
    "tracer",
]

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
    "stopped",
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


@dataclass(frozen=True, slots=True)
class Origin:
    """What the transport knows of one request, for its trace: the HTTP front's (``wrap --http``, ``serve --http``).

    Attributes:
        session_id: the ``Mcp-Session-Id`` the request came with (a handshake-era session), else None (stdio,
            2026-07-28 requests: no session).
        traceparent: the request's HTTP ``traceparent`` header (W3C Trace Context), as sent (None: absent).
        tracestate: its HTTP ``tracestate`` header, as sent (None: absent).

    The header values are the client's text: only the tracer's W3C propagator reads them, and only the trace
    context they carry reaches a span (never the text itself).
    """

    session_id: str | None = None
    traceparent: str | None = None
    tracestate: str | None = None


@runtime_checkable
class Origins(Protocol):
    """A session's client side that knows where each request came from: the HTTP front's (``Origin``).

    The front notes the :class:`Origin` of a request as it passes it on (by the id the session sees), only
    while a tracer is installed; the session gives its client side to its pipeline (``Pipeline(client=...)``),
    which asks only for a traced call. A client side without it (stdio) has no origin to give.
    """

    def origin_of(self, request_id: Any) -> Origin | None:
        """The origin of the request in flight under ``request_id`` (as the session sees it), or None."""
        ...


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

    def call_started(
        self, server: str, tool: str, request_id: Any, meta: Any, modern: bool, origin: Origin | None = None
    ) -> CallTrace:
        """A ``tools/call`` arrived and was routed.

        Args:
            server: the gateway server's name (``""`` for ``wrap``).
            tool: the upstream's tool name, as the server listed it.
            request_id: the request's JSON-RPC id, as the session received it.
            meta: the request's ``params._meta`` (any JSON value; its ``traceparent`` and
                ``tracestate`` members are the caller's trace context), or ``None``.
            modern: a 2026-07-28-era request.
            origin: what the HTTP front knows of the request (its session, its HTTP trace context
                headers), or None (stdio).
        """
        ...

    def refused(
        self,
        server: str,
        name: str | None,
        request_id: Any,
        meta: Any,
        origin: Origin | None,
        kind: str,
        code: int | None,
    ) -> None:
        """A ``tools/call`` was refused before it could be routed (so no :meth:`call_started`): its one span.

        Args:
            server: where the name would have gone (``""`` when unknown, and for ``wrap``).
            name: the tool name the client called (its own text: no listing has it), None when it named none.
            request_id, meta, origin: as for :meth:`call_started`.
            kind: the refusal kind (``unknown``: no listing has the name; ``invalid``: no tool name, or
                ``params`` not an object; ``server_unavailable``: its server is down; ``listing_failed``:
                its server's tools could not be listed to judge it by).
            code: the JSON-RPC error code answered (-32602, -32603), or None for a tool error result
                (``isError``: ``guard.presentFor``'s arguments that cannot be mapped back, kind ``validation``).
        """


_installed: list[CallTracer] = []


def install_tracer(new: CallTracer | None) -> None:
    """Make ``new`` the tracer of the pipelines made from now on (``None``: no tracing, the default)."""
    _installed.clear()
    if new is not None:
        _installed.append(new)


def tracer() -> CallTracer | None:
    """The tracer installed by :func:`install_tracer`, or ``None``."""
    return _installed[0] if _installed else None
