"""One span per ``tools/call``, with children for the judgement and the upstream round trip.

:class:`CallSpans` is the pipeline's :class:`~mcp_guard.calls.observer.CallTracer` over the OpenTelemetry SDK
(``opentelemetry-sdk``; the ``otel`` extra). The span names, kinds and attributes follow the OpenTelemetry
semantic conventions for MCP (``open-telemetry/semantic-conventions-genai`` v0.1.0, ``docs/gen-ai/mcp.md``
and ``model/mcp/spans.yaml``, status Development, read 2026-12-04; the MCP attributes moved there from
``semantic-conventions`` 1.39):

- ``tools/call {gen_ai.tool.name}``, kind SERVER: the call as the guard received it, from its arrival to
  the guard's answer. Its parent is the caller's span (see "Trace context" below), else it starts a trace.
- ``mcp_guard.judge {gen_ai.tool.name}``, kind INTERNAL, child: the guard's checks (the call pipeline's
  steps 1-6).
- ``tools/call {gen_ai.tool.name}``, kind CLIENT, child: the round trip to the upstream, for a call that
  was forwarded; its context is the one sent upstream in ``params._meta`` (and, to an HTTP upstream, in the
  ``traceparent`` header: ``peer.http_headers``), so the upstream's span (if it traces) is its child.
- ``tools/call``, kind SERVER, alone: a call refused before it could be routed (no listing has its name, it
  names none, its ``params`` are not an object, its server is down or its tools could not be listed:
  :meth:`CallSpans.refused`).

Trace context: the caller's W3C Trace Context is read with the SDK's ``TraceContextTextMapPropagator`` from
``params._meta`` (``traceparent``, ``tracestate``: the convention's "Context propagation", SEP-414) and, on
the HTTP front, from the request's ``traceparent``/``tracestate`` headers (``calls.observer.Origin``).
``_meta`` wins when both are valid, and the header's context is then a *link* of the SERVER span: the
convention says a server "SHOULD use context extracted from MCP ``params._meta`` as a parent for MCP server
span and SHOULD link current ambient context" (the HTTP request's context is the transport's: one MCP call
may take several HTTP requests, and one HTTP request may carry several calls). Without ``_meta`` context
the header's is the parent.

Attributes: ``mcp.method.name`` (``tools/call``), ``gen_ai.tool.name`` (the upstream's name for the
tool), ``gen_ai.operation.name`` (``execute_tool``), ``jsonrpc.request.id``, ``mcp.session.id`` (the
HTTP front's ``Mcp-Session-Id``, for a handshake-era request), ``error.type`` (the refusal kind,
``tool_error`` for a result with ``isError: true``, or the outcome), ``rpc.response.status_code`` (the
JSON-RPC error code of a call refused before routing), and the guard's own in ``mcp_guard.*`` (no
convention names them): ``mcp_guard.server`` (the upstream's name in the config; none under ``wrap``),
``mcp_guard.outcome`` (``calls.observer.OUTCOMES``), ``mcp_guard.rejection.kind`` and
``mcp_guard.rejection.pointers`` (the findings' JSON Pointers, with every key the schema does not declare
written ``…``: ``calls.refusals.logged_pointer``). Never an argument or result value, a token, a claim or
a header's text. A refused or failed call's spans have status ERROR.

Cost (docs/tracing.md, "Cost"): the SDK's ``Tracer.start_span`` makes a mutable, locked ``Span`` per span,
copies and checks every attribute through ``BoundedAttributes``, and asks the sampler each time: about
30 µs per span on the calling thread, three spans per call. A call's spans here are made once, when it ends,
as the SDK's own ``ReadableSpan`` (what a ``Span`` hands to its processors when it ends), with attribute
dicts made once per tool, and handed to the span processor (the ``BatchSpanProcessor``: exported on its own
thread). The sampler is asked once per call, for the SERVER span; its children follow its decision, as every
sampler the SDK offers decides for the child of a local sampled parent (``parentbased_*``; ``always_*`` and
``traceidratio`` decide on the trace id, the same for the whole call). A call the sampler drops costs no span
at all, only its context for the upstream (not sampled: flags ``00``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.sampling import Decision
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    get_current_span,
    set_span_in_context,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..calls.observer import CallTrace, Origin
from ..safe_text import escape

__all__ = ["MAX_POINTERS", "OK_OUTCOMES", "CallSpans", "trace_context"]

OK_OUTCOMES: Final = frozenset({"ok"})
"""Outcomes whose spans keep status UNSET; every other one (refused, ``is_error``, died...) is ERROR."""

MAX_NAME_CHARS: Final = 128
"""A tool or server name longer than this is cut in attributes and span names."""

MAX_POINTERS: Final = 32
"""At most this many JSON Pointers of a refusal's findings go in ``mcp_guard.rejection.pointers``."""

MAX_ROUTES: Final = 4096
"""Tools whose span names and attribute dicts are kept made (more: all are made again, as needed)."""

_PROPAGATOR: Final = TraceContextTextMapPropagator()
"""W3C Trace Context (``traceparent``, ``tracestate``) only: a process-wide ``OTEL_PROPAGATORS`` setting
does not change what the guard reads from ``_meta`` or the headers, or writes in ``_meta``."""

_ERROR: Final = Status(StatusCode.ERROR)
_UNSET: Final = Status(StatusCode.UNSET)


def _name(text: str) -> str:
    return escape(text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS] + "…")


def trace_context(carrier: Any) -> Context | None:
    """The caller's context from a ``_meta`` object or HTTP headers (``traceparent``, ``tracestate``: W3C
    Trace Context level 1, read by the SDK's propagator), or ``None`` when ``carrier`` holds no valid
    ``traceparent`` (the span then starts a trace). Values that are not strings are ignored."""
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


def _parent(meta: Any, origin: Origin | None) -> tuple[Context | None, tuple[Link, ...]]:
    """The SERVER span's parent and links (see the module: ``_meta`` wins, the header's context is linked)."""
    context = trace_context(meta)
    if origin is None or origin.traceparent is None:
        return context, ()
    headers = {"traceparent": origin.traceparent}
    if origin.tracestate is not None:
        headers["tracestate"] = origin.tracestate
    transport = trace_context(headers)
    if transport is None:
        return context, ()
    if context is None:
        return transport, ()
    linked = get_current_span(transport).get_span_context()
    if linked == get_current_span(context).get_span_context():
        return context, ()
    return context, (Link(linked),)


def _request_id(request_id: Any) -> str:
    return str(request_id) if type(request_id) is int else _name(str(request_id))


class _Route:
    """What every span of one tool's calls shares: names and the constant attributes (made once per tool)."""

    __slots__ = ("client", "client_name", "judge_name", "server", "server_name")

    def __init__(self, server: str, tool: str) -> None:
        name = _name(tool)
        self.client: dict[str, Any] = {"mcp.method.name": "tools/call", "gen_ai.tool.name": name}
        if server:  # (wrap has one server and no names: no attribute, rather than one always "")
            self.client["mcp_guard.server"] = _name(server)
        self.server: dict[str, Any] = {**self.client, "gen_ai.operation.name": "execute_tool"}
        self.server_name = self.client_name = f"tools/call {name}"
        self.judge_name = f"mcp_guard.judge {name}"


def _ending(outcome: str, kind: str | None) -> tuple[dict[str, Any], Status]:
    """The attributes and status every span of a call that ended with ``outcome`` (and ``kind``) gets."""
    attributes: dict[str, Any] = {"mcp_guard.outcome": _name(outcome)}
    if outcome in OK_OUTCOMES:
        return attributes, _UNSET
    error = kind if kind is not None else ("tool_error" if outcome == "is_error" else outcome)
    attributes["error.type"] = _name(error)
    if kind is not None:
        attributes["mcp_guard.rejection.kind"] = _name(kind)
    return attributes, _ERROR


def _refusal(kind: str, pointers: Sequence[str]) -> dict[str, Any]:
    attributes: dict[str, Any] = {"mcp_guard.rejection.kind": _name(kind), "error.type": _name(kind)}
    if pointers:
        attributes["mcp_guard.rejection.pointers"] = [_name(p) for p in pointers[:MAX_POINTERS]]
    return attributes


class _Unsampled:
    """The trace of a call the sampler dropped: no span, only the context for the upstream (not sampled)."""

    __slots__ = ("_context", "_spans")

    def __init__(self, spans: CallSpans, context: SpanContext) -> None:
        self._spans, self._context = spans, context  # (the call's own context: its flags say not sampled)

    def judged(self, started_ns: int, kind: str | None, pointers: Sequence[str]) -> None:
        return None

    def forwarding(self) -> dict[str, str]:
        context = self._spans.child(self._context)
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, set_span_in_context(NonRecordingSpan(context)))
        return carrier

    def ended(self, outcome: str, kind: str | None) -> None:
        return None


class _Trace:
    """The spans of one sampled call (:class:`~mcp_guard.calls.observer.CallTrace`), made when it ends."""

    __slots__ = ("_attributes", "_client", "_context", "_judge", "_links", "_parent", "_route", "_spans", "_start")

    def __init__(
        self,
        spans: CallSpans,
        route: _Route,
        context: SpanContext,
        parent: SpanContext | None,
        links: tuple[Link, ...],
        attributes: dict[str, Any],
    ) -> None:
        self._spans = spans
        self._route = route
        self._context = context
        self._parent = parent
        self._links = links
        self._attributes = attributes
        self._start = time.time_ns()
        self._judge: tuple[int, int, dict[str, Any] | None] | None = None
        self._client: tuple[SpanContext, int] | None = None

    def judged(self, started_ns: int, kind: str | None, pointers: Sequence[str]) -> None:
        refusal = _refusal(kind, pointers) if kind is not None else None
        self._judge = (started_ns, time.time_ns(), refusal)
        if refusal is not None:
            self._attributes.update(refusal)

    def forwarding(self) -> dict[str, str]:
        own = self._context
        context = SpanContext(own.trace_id, self._spans.ids.generate_span_id(), False, own.trace_flags, own.trace_state)
        self._client = (context, time.time_ns())
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, set_span_in_context(NonRecordingSpan(context)))
        return carrier

    def ended(self, outcome: str, kind: str | None) -> None:
        end = time.time_ns()
        ending, status = _ending(outcome, kind)
        spans, route, own = self._spans, self._route, self._context
        emit, resource, scope = spans.processor.on_end, spans.resource, spans.scope
        if self._judge is not None:
            started, judged, refusal = self._judge
            emit(
                ReadableSpan(
                    route.judge_name,
                    spans.child(own),
                    own,
                    resource,
                    refusal or {},
                    kind=SpanKind.INTERNAL,
                    status=_ERROR if refusal is not None else _UNSET,
                    start_time=started,
                    end_time=judged,
                    instrumentation_scope=scope,
                )
            )
        if self._client is not None:
            context, sent = self._client
            emit(
                ReadableSpan(
                    route.client_name,
                    context,
                    own,
                    resource,
                    {**route.client, **ending},
                    kind=SpanKind.CLIENT,
                    status=status,
                    start_time=sent,
                    end_time=end,
                    instrumentation_scope=scope,
                )
            )
        self._attributes.update(ending)
        emit(
            ReadableSpan(
                route.server_name,
                own,
                self._parent,
                resource,
                self._attributes,
                links=self._links,
                kind=SpanKind.SERVER,
                status=status,
                start_time=self._start,
                end_time=end,
                instrumentation_scope=scope,
            )
        )


class CallSpans:
    """The pipeline's tracer (:class:`~mcp_guard.calls.observer.CallTracer`) over the OpenTelemetry SDK.

    Args:
        provider: the guard's ``TracerProvider``: its sampler (``OTEL_TRACES_SAMPLER``), id generator and
            resource (``service.name``...) are the spans'.
        processor: where finished spans go (``on_end`` only: the SDK's batch and simple processors do
            nothing on start): the provider's ``BatchSpanProcessor`` (tests: a ``SimpleSpanProcessor``
            over an in-memory exporter). Add it to ``provider`` too, so that flushing and shutting down
            the provider reach it.
    """

    def __init__(self, provider: TracerProvider, processor: SpanProcessor) -> None:
        self.processor = processor
        self.sampler = provider.sampler
        self.ids = provider.id_generator
        self.resource = provider.resource
        self.scope = InstrumentationScope("mcp-guard")
        self._routes: dict[tuple[str, str], _Route] = {}

    def _route(self, server: str, tool: str) -> _Route:
        route = self._routes.get((server, tool))
        if route is None:
            if len(self._routes) >= MAX_ROUTES:
                self._routes.clear()
            route = self._routes[(server, tool)] = _Route(server, tool)
        return route

    def child(self, parent: SpanContext) -> SpanContext:
        """A new span's context in ``parent``'s trace, with its flags and state (a child that follows it)."""
        return SpanContext(parent.trace_id, self.ids.generate_span_id(), False, parent.trace_flags, parent.trace_state)

    def _root(
        self, name: str, attributes: dict[str, Any], meta: Any, origin: Origin | None
    ) -> tuple[SpanContext, SpanContext | None, tuple[Link, ...], bool]:
        """The SERVER span's context, its parent's, its links and whether it is sampled (the sampler asked once,
        as ``Tracer.start_span`` asks it: ``opentelemetry.sdk.trace``, 1.45)."""
        context, links = _parent(meta, origin)
        parent = get_current_span(context).get_span_context() if context is not None else None
        if parent is None:
            trace_id = self.ids.generate_trace_id()
            random = self.ids.is_trace_id_random()
        else:
            trace_id = parent.trace_id
            random = parent.trace_flags.random_trace_id
        result = self.sampler.should_sample(context, trace_id, name, SpanKind.SERVER, attributes, links)
        sampled = result.decision is Decision.RECORD_AND_SAMPLE
        flags = TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT
        if random:
            flags |= TraceFlags.RANDOM_TRACE_ID
        own = SpanContext(trace_id, self.ids.generate_span_id(), False, TraceFlags(flags), result.trace_state)
        if result.attributes:
            attributes.update(result.attributes)
        return own, parent, links, sampled

    def call_started(
        self, server: str, tool: str, request_id: Any, meta: Any, modern: bool, origin: Origin | None = None
    ) -> CallTrace:
        """Open the call's trace: the SERVER span's context, a child of the caller's (see the module)."""
        route = self._route(server, tool)
        attributes = {**route.server, "jsonrpc.request.id": _request_id(request_id)}
        if origin is not None and origin.session_id is not None:
            attributes["mcp.session.id"] = origin.session_id
        own, parent, links, recorded = self._root(route.server_name, attributes, meta, origin)
        if not recorded:
            return _Unsampled(self, own)
        return _Trace(self, route, own, parent, links, attributes)

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
        """The one span of a call refused before routing (``calls.observer.CallTracer.refused``): named
        ``tools/call`` (the name is the client's text, not a listed tool's: it goes in ``gen_ai.tool.name``,
        escaped and cut as the log line's), status ERROR."""
        attributes: dict[str, Any] = {
            "mcp.method.name": "tools/call",
            "gen_ai.operation.name": "execute_tool",
            "jsonrpc.request.id": _request_id(request_id),
        }
        if server:
            attributes["mcp_guard.server"] = _name(server)
        if name is not None:
            attributes["gen_ai.tool.name"] = escape(name[:64] + ("…" if len(name) > 64 else ""))
        if origin is not None and origin.session_id is not None:
            attributes["mcp.session.id"] = origin.session_id
        own, parent, links, recorded = self._root("tools/call", attributes, meta, origin)
        if not recorded:
            return
        now = time.time_ns()
        attributes.update(
            {"mcp_guard.outcome": "rejected", "error.type": _name(kind), "mcp_guard.rejection.kind": _name(kind)}
        )
        if code is not None:
            attributes["rpc.response.status_code"] = str(code)
        span = ReadableSpan(
            "tools/call",
            own,
            parent,
            self.resource,
            attributes,
            links=links,
            kind=SpanKind.SERVER,
            status=_ERROR,
            start_time=now,
            end_time=now,
            instrumentation_scope=self.scope,
        )
        self.processor.on_end(span)
