"""One span per ``tools/call``, with children for the judgement and the upstream round trip.

:class:`CallSpans` is the pipeline's :class:`~mcp_guard.calls.observer.CallTracer` over an OpenTelemetry
``Tracer`` (``opentelemetry-api``; the ``otel`` extra). The span names, kinds and attributes follow the
OpenTelemetry semantic conventions for MCP (``open-telemetry/semantic-conventions-genai`` v0.1.0,
``docs/gen-ai/mcp.md`` and ``model/mcp/spans.yaml``, status Development, read 2026-12-04; the MCP
attributes moved there from ``semantic-conventions`` 1.39):

- ``tools/call {gen_ai.tool.name}``, kind SERVER: the call as the guard received it, from its arrival to
  the guard's answer. Its parent is the caller's span when the request carries W3C trace context
  (``params._meta.traceparent`` / ``tracestate``, the convention's "Context propagation"), else a new
  trace.
- ``mcp_guard.judge {gen_ai.tool.name}``, kind INTERNAL, child: the guard's checks (the call pipeline's
  steps 1-6).
- ``tools/call {gen_ai.tool.name}``, kind CLIENT, child: the round trip to the upstream, for a call that
  was forwarded; its context is the one sent upstream in ``params._meta``, so the upstream's span (if
  it traces) is its child.

Attributes: ``mcp.method.name`` (``tools/call``), ``gen_ai.tool.name`` (the upstream's name for the
tool), ``gen_ai.operation.name`` (``execute_tool``), ``jsonrpc.request.id``, ``error.type`` (the
refusal kind, ``tool_error`` for a result with ``isError: true``, or the outcome), and the guard's own
in ``mcp_guard.*`` (no convention names them): ``mcp_guard.server`` (the upstream's name in the
config, ``""`` for ``wrap``), ``mcp_guard.outcome`` (``calls.observer.OUTCOMES``),
``mcp_guard.rejection.kind`` and ``mcp_guard.rejection.pointers`` (the findings' JSON Pointers,
with every key the schema does not declare written ``…``: ``calls.refusals.logged_pointer``). Never an
argument or result value, a token or a claim. A refused or failed call's spans have status ERROR.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, get_current_span, set_span_in_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..calls.observer import CallTrace
from ..safe_text import escape

__all__ = ["OK_OUTCOMES", "CallSpans", "trace_context"]

OK_OUTCOMES: Final = frozenset({"ok"})
"""Outcomes whose spans keep status UNSET; every other one (refused, ``is_error``, died...) is ERROR."""

MAX_NAME_CHARS: Final = 128
"""A tool or server name longer than this is cut in attributes and span names."""

_PROPAGATOR: Final = TraceContextTextMapPropagator()
"""W3C Trace Context (``traceparent``, ``tracestate``) only: a process-wide ``OTEL_PROPAGATORS`` setting
does not change what the guard reads from ``_meta`` or writes there."""


def _name(text: str) -> str:
    return escape(text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS] + "…")


def trace_context(carrier: Any) -> Context | None:
    """The caller's context from a ``_meta`` object or HTTP headers (``traceparent``, ``tracestate``: W3C
    Trace Context level 1), or ``None`` when ``carrier`` holds no valid ``traceparent`` (the span then
    starts a trace). Values that are not strings are ignored."""
    if type(carrier) is not dict:
        return None
    parent = carrier.get("traceparent")
    if type(parent) is not str:
        return None
    fields = {"traceparent": parent}
    state = carrier.get("tracestate")
    if type(state) is str:
        fields["tracestate"] = state
    context = _PROPAGATOR.extract(fields)
    if not get_current_span(context).get_span_context().is_valid:
        return None
    return context


class _Trace:
    """The spans of one call (:class:`~mcp_guard.calls.observer.CallTrace`)."""

    __slots__ = ("_call", "_client_attributes", "_inside", "_name", "_tracer", "_upstream")

    def __init__(self, tracer: Tracer, name: str, call: Span, client_attributes: dict[str, Any]) -> None:
        self._tracer = tracer
        self._name = name
        self._call = call
        self._inside = set_span_in_context(call)  # the children's parent
        self._client_attributes = client_attributes
        self._upstream: Span | None = None

    def judged(self, started_ns: int, kind: str | None, pointers: Sequence[str]) -> None:
        # (No attributes of its own but a refusal's: its parent names the call; each attribute costs a copy.)
        span = self._tracer.start_span(
            f"mcp_guard.judge {self._name}", self._inside, SpanKind.INTERNAL, start_time=started_ns
        )
        if kind is not None:
            _refused(span, kind, pointers)
            _refused(self._call, kind, pointers)
        span.end()

    def forwarding(self) -> dict[str, str]:
        span = self._upstream = self._tracer.start_span(
            f"tools/call {self._name}", self._inside, SpanKind.CLIENT, self._client_attributes
        )
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, set_span_in_context(span))
        return carrier

    def ended(self, outcome: str, kind: str | None) -> None:
        spans = (self._upstream, self._call) if self._upstream is not None else (self._call,)
        attributes = {"mcp_guard.outcome": _name(outcome)}
        failed = outcome not in OK_OUTCOMES
        if failed:
            error = kind if kind is not None else ("tool_error" if outcome == "is_error" else outcome)
            attributes["error.type"] = _name(error)
            if kind is not None:
                attributes["mcp_guard.rejection.kind"] = _name(kind)
        for span in spans:
            span.set_attributes(attributes)
            if failed:
                span.set_status(Status(StatusCode.ERROR))
            span.end()


def _refused(span: Span, kind: str, pointers: Sequence[str]) -> None:
    span.set_attribute("mcp_guard.rejection.kind", _name(kind))
    span.set_attribute("error.type", _name(kind))
    if pointers:
        span.set_attribute("mcp_guard.rejection.pointers", [_name(p) for p in pointers])
    span.set_status(Status(StatusCode.ERROR))


class CallSpans:
    """The pipeline's tracer (:class:`~mcp_guard.calls.observer.CallTracer`) over an OpenTelemetry ``Tracer``.

    Args:
        tracer: where spans are made (``TracerProvider.get_tracer("mcp-guard")``; a no-op tracer makes
            non-recording spans, and then no trace context is forwarded: ``traceparent`` of an invalid
            span is not written).
    """

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    def call_started(self, server: str, tool: str, request_id: Any, meta: Any, modern: bool) -> CallTrace:
        """Open the call's SERVER span, a child of the caller's context in ``meta`` (see the module)."""
        name = _name(tool)
        upstream = {"mcp.method.name": "tools/call", "gen_ai.tool.name": name, "mcp_guard.server": _name(server)}
        attributes = {
            **upstream,
            "gen_ai.operation.name": "execute_tool",
            "jsonrpc.request.id": _name(str(request_id)),
        }
        span = self.tracer.start_span(f"tools/call {name}", trace_context(meta), SpanKind.SERVER, attributes)
        return _Trace(self.tracer, name, span, upstream)
