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
as :class:`CallSpan`, the SDK's own ``ReadableSpan`` (what a ``Span`` hands to its processors when it ends)
whose name, kind, status and constant attributes are a :class:`_Shape` made once per tool and ending, shared by
every call's spans (its attributes are the shape's, then the call's own: the request id, the session, a
refusal's pointers), and handed to the span processor (the ``BatchSpanProcessor``: exported on its own thread,
where ``telemetry.export`` encodes each shape once). The sampler is asked once per call, for the SERVER span
(the SDK's default, ``parentbased_always_on``, is decided here as it decides: a root is sampled, a child follows
its parent's flag); its children follow its decision, as every sampler the SDK offers decides for the child of
a local sampled parent (``parentbased_*``; ``always_*`` and ``traceidratio`` decide on the trace id, the same
for the whole call). A call the sampler drops costs no span at all, only its context for the upstream (not
sampled: flags ``00``). The context sent upstream is written as the SDK's propagator writes it (:func:`carrier`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.sampling import DEFAULT_ON, Decision
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    Link,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    get_current_span,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.trace.span import DEFAULT_TRACE_STATE, TraceState

from ..calls.observer import CallTrace, Origin
from ..safe_text import escape

__all__ = ["MAX_POINTERS", "OK_OUTCOMES", "CallSpan", "CallSpans", "carrier", "trace_context"]

OK_OUTCOMES: Final = frozenset({"ok"})
"""Outcomes whose spans keep status UNSET; every other one (refused, ``is_error``, died...) is ERROR."""

MAX_NAME_CHARS: Final = 128
"""A tool or server name longer than this is cut in attributes and span names."""

MAX_POINTERS: Final = 32
"""At most this many JSON Pointers of a refusal's findings go in ``mcp_guard.rejection.pointers``."""

MAX_ROUTES: Final = 4096
"""Tools whose span names and shapes are kept made (more: all are made again, as needed)."""

MAX_SHAPES: Final = 256
"""Shapes kept per tool (one per ending: outcome and refusal kind, both from the guard's own short lists)."""

_PROPAGATOR: Final = TraceContextTextMapPropagator()
"""W3C Trace Context (``traceparent``, ``tracestate``) only: a process-wide ``OTEL_PROPAGATORS`` setting
does not change what the guard reads from ``_meta`` or the headers, or writes in ``_meta``."""

_ROOT: Final = Context()
"""The context a call without trace context is sampled in: none (a root), whatever the ambient context holds."""

_MISSING: Final = object()
"""An attribute the span does not have yet (what a sampler returns beyond the attributes it was given)."""

_ERROR: Final = Status(StatusCode.ERROR)
_UNSET: Final = Status(StatusCode.UNSET)
_NO_LINKS: Final[tuple[Link, ...]] = ()


_HEX: Final = tuple(f"{value:02x}" for value in range(256))
"""A byte's two lower-case hex digits, by its value (the trace flags')."""

_TRACE_ID_MAX: Final = 2**128 - 1
_SPAN_ID_MAX: Final = 2**64 - 1

_FLAGS: Final[dict[int, TraceFlags]] = {}
"""The ``TraceFlags`` made so far, by value (one object each, shared by the spans that have them)."""


def _flags(value: int) -> TraceFlags:
    flags = _FLAGS.get(value)
    if flags is None:
        flags = _FLAGS[value] = TraceFlags(value)
    return flags


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


def local_context(trace_id: int, span_id: int, flags: TraceFlags, state: TraceState | None) -> SpanContext:
    """``SpanContext(trace_id, span_id, False, flags, state)``, made as its ``__new__`` makes it (the tuple of
    those fields, the empty ``TraceState`` for none, and whether both ids are in range: ``opentelemetry-api``
    1.45, ``trace/span.py``; tests/telemetry/test_span_encoder.py compares them) in a fifth of its time: four
    a call."""
    valid = 0 < trace_id <= _TRACE_ID_MAX and 0 < span_id <= _SPAN_ID_MAX
    fields = (trace_id, span_id, False, flags, state if state is not None else DEFAULT_TRACE_STATE, valid)
    return tuple.__new__(SpanContext, fields)


def carrier(context: SpanContext) -> dict[str, str]:
    """``context`` as W3C Trace Context fields (``traceparent``, and ``tracestate`` when it has one): what the
    SDK's ``TraceContextTextMapPropagator.inject`` writes for it (1.45: version ``00``, the ids in lower-case
    hex, the flags' byte; tests/telemetry/test_span_encoder.py compares them), without making a ``Context`` and
    a ``NonRecordingSpan`` to hand it over."""
    return _carrier(context.trace_id, context.span_id, context.trace_flags, context.trace_state)


def _carrier(trace_id: int, span_id: int, flags: int, state: TraceState | None) -> dict[str, str]:
    """:func:`carrier` of a context with these fields (none made for it)."""
    fields = {
        "traceparent": f"00-{trace_id.to_bytes(16, 'big').hex()}-{span_id.to_bytes(8, 'big').hex()}-{_HEX[flags]}"
    }
    if state:
        fields["tracestate"] = state.to_header()
    return fields


def _parent(meta: Any, origin: Origin | None) -> tuple[Context | None, tuple[Link, ...]]:
    """The SERVER span's parent and links (see the module: ``_meta`` wins, the header's context is linked)."""
    context = trace_context(meta) if meta is not None else None
    if origin is None or origin.traceparent is None:
        return context, _NO_LINKS
    headers = {"traceparent": origin.traceparent}
    if origin.tracestate is not None:
        headers["tracestate"] = origin.tracestate
    transport = trace_context(headers)
    if transport is None:
        return context, _NO_LINKS
    if context is None:
        return transport, _NO_LINKS
    linked = get_current_span(transport).get_span_context()
    if linked == get_current_span(context).get_span_context():
        return context, _NO_LINKS
    return context, (Link(linked),)


def _request_id(request_id: Any) -> str:
    return str(request_id) if type(request_id) is int else _name(str(request_id))


class _Shape:
    """What the spans of one role (the call, its judgement, its round trip), one tool and one ending share:
    the name, the kind, the status and the constant attributes (never changed once made)."""

    __slots__ = ("attributes", "kind", "name", "status")

    def __init__(self, name: str, kind: SpanKind, status: Status, attributes: Mapping[str, Any]) -> None:
        self.name = name
        self.kind = kind
        self.status = status
        self.attributes = attributes


class CallSpan(ReadableSpan):
    """A finished span of a call: the SDK's ``ReadableSpan`` (what processors and exporters take), made at once
    from its :class:`_Shape` and what is its own. Its attributes are the shape's, then its own (``own``: keys
    the shape does not have); ``telemetry.export`` encodes the shape's once. No events; links only on a SERVER
    span whose caller sent trace context both in ``_meta`` and in the HTTP headers.

    Few objects are kept per span while it waits in the batch processor's queue (the garbage collector walks
    every one of them, and more of them promoted to its oldest generation make it walk the whole heap more
    often): the call's context is the SERVER span's ``SpanContext``, shared by its three spans; a child keeps
    only its span id (its context is made when asked for), and its parent is that shared context.

    Args:
        shape: the span's name, kind, status and constant attributes.
        call: the SERVER span's context (the call's: trace id, flags, state).
        span_id: this span's id (``call.span_id`` for the SERVER span).
        parent: the parent's context (for a child: ``call``; for the SERVER span, the caller's or None).
        own: the attributes that are this span's only (none of the shape's keys).
        start, end: nanoseconds since the epoch.
    """

    __slots__ = ("call", "made", "own", "shape", "span_id")
    _events: Sequence[Event] = ()
    _links: Sequence[Link] = _NO_LINKS
    _instrumentation_info = None

    def __init__(
        self,
        shape: _Shape,
        call: SpanContext,
        span_id: int,
        parent: SpanContext | None,
        own: Mapping[str, Any],
        start: int,
        end: int,
        resource: Resource,
        scope: InstrumentationScope,
        links: Sequence[Link] = _NO_LINKS,
    ) -> None:
        # (ReadableSpan.__init__'s fields, set as it sets them, but _context and _attributes: properties below;
        # _events, _instrumentation_info and, mostly, _links: the class's)
        self._name = shape.name
        self._kind = shape.kind
        self._instrumentation_scope = scope
        self._parent = parent
        self._start_time = start
        self._end_time = end
        if links:
            self._links = links
        self._resource = resource
        self._status = shape.status
        self.shape = shape
        self.call = call
        self.span_id = span_id
        self.own = own
        self.made: SpanContext | None = None  # (a child's context while it is handed over: see emit)

    @property
    def _context(self) -> SpanContext:  # type: ignore[override]  # (read by ReadableSpan.context...)
        call = self.call
        if self.span_id == call.span_id:
            return call
        made = self.made
        if made is not None:
            return made
        return local_context(call.trace_id, self.span_id, call.trace_flags, call.trace_state)

    @property
    def _attributes(self) -> Mapping[str, Any]:  # type: ignore[override]  # (read by ReadableSpan.attributes...)
        own = self.own
        return {**self.shape.attributes, **own} if own else self.shape.attributes


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


def _pointers(pointers: Sequence[str]) -> dict[str, Any]:
    """A refusal's own attribute: its findings' JSON Pointers (none: nothing)."""
    if not pointers:
        return {}
    return {"mcp_guard.rejection.pointers": [_name(p) for p in pointers[:MAX_POINTERS]]}


class _Route:
    """What every span of one tool's calls shares: names and the constant attributes (made once per tool),
    and the shapes of its spans (made once per ending)."""

    __slots__ = ("client", "client_name", "judge_name", "server", "server_name", "shapes")

    def __init__(self, server: str, tool: str) -> None:
        name = _name(tool)
        self.client: dict[str, Any] = {"mcp.method.name": "tools/call", "gen_ai.tool.name": name}
        if server:  # (wrap has one server and no names: no attribute, rather than one always "")
            self.client["mcp_guard.server"] = _name(server)
        self.server: dict[str, Any] = {**self.client, "gen_ai.operation.name": "execute_tool"}
        self.server_name = self.client_name = f"tools/call {name}"
        self.judge_name = f"mcp_guard.judge {name}"
        self.shapes: dict[tuple[str, str | None], tuple[_Shape, _Shape]] = {}

    def ending(self, outcome: str, kind: str | None) -> tuple[_Shape, _Shape]:
        """The SERVER and CLIENT spans' shapes of a call that ended with ``outcome`` (and ``kind``)."""
        key = (outcome, kind)
        shapes = self.shapes.get(key)
        if shapes is None:
            if len(self.shapes) >= MAX_SHAPES:
                self.shapes.clear()
            ending, status = _ending(outcome, kind)
            server = _Shape(self.server_name, SpanKind.SERVER, status, {**self.server, **ending})
            client = _Shape(self.client_name, SpanKind.CLIENT, status, {**self.client, **ending})
            shapes = self.shapes[key] = (server, client)
        return shapes

    def judged(self, kind: str | None) -> _Shape:
        """The judgement span's shape: passed (``kind`` None), or refused with ``kind``."""
        key = ("", kind)  # (no outcome is "": kept apart from ending()'s)
        shapes = self.shapes.get(key)
        if shapes is None:
            if len(self.shapes) >= MAX_SHAPES:
                self.shapes.clear()
            if kind is None:
                shape = _Shape(self.judge_name, SpanKind.INTERNAL, _UNSET, {})
            else:
                refusal = {"mcp_guard.rejection.kind": _name(kind), "error.type": _name(kind)}
                shape = _Shape(self.judge_name, SpanKind.INTERNAL, _ERROR, refusal)
            shapes = self.shapes[key] = (shape, shape)
        return shapes[0]


class _Unsampled:
    """The trace of a call the sampler dropped: no span, only the context for the upstream (not sampled)."""

    __slots__ = ("_context", "_spans")

    def __init__(self, spans: CallSpans, context: SpanContext) -> None:
        self._spans, self._context = spans, context  # (the call's own context: its flags say not sampled)

    def judged(self, started_ns: int, kind: str | None, pointers: Sequence[str]) -> None:
        return None

    def forwarding(self) -> dict[str, str]:
        context = self._context
        span_id = self._spans.ids.generate_span_id()
        return _carrier(context.trace_id, span_id, context.trace_flags, context.trace_state)

    def ended(self, outcome: str, kind: str | None) -> None:
        return None


class SampledCall:
    """One sampled call's trace (:class:`~mcp_guard.calls.observer.CallTrace`) and, once it has ended, the record
    of its spans: what they share (the call's context, its tool's shapes) and what is theirs (ids, times, the
    call's own attributes), no span made yet.

    A processor that takes whole calls (one with ``call_ended``: ``telemetry.batch.CallBatchSpanProcessor``, the
    one tracing installs) is handed the record itself, one entry a call in its queue, and ``telemetry.export``
    encodes it as its spans; any other processor is handed the spans (:meth:`made_spans`), one by one.

    Fields (read by ``telemetry.export`` once the call has ended): ``context``, the SERVER span's (the call's)
    ``SpanContext``; ``parent``, its parent's (the caller's) or None; ``links``; ``own``, the SERVER span's own
    attributes; ``start`` and ``end``, the call's (nanoseconds since the epoch); ``judge``, the judgement's
    ``(start, end, refusal kind or None, its own attributes)`` or None, and ``judge_id``, its span id;
    ``client``, the round trip's ``(span id, start)`` or None (it ends with the call); ``shapes``, the SERVER,
    CLIENT and judgement spans' :class:`_Shape` (set when the call ends); ``spans``, the tracer (resource, scope).
    """

    __slots__ = (
        "client",
        "context",
        "end",
        "extra",
        "judge",
        "judge_id",
        "links",
        "own",
        "parent",
        "route",
        "shapes",
        "spans",
        "start",
    )

    def __init__(
        self,
        spans: CallSpans,
        route: _Route,
        context: SpanContext,
        parent: SpanContext | None,
        links: tuple[Link, ...],
        own: dict[str, Any],
        extra: Mapping[str, Any] | None,
    ) -> None:
        self.spans = spans
        self.route = route
        self.context = context
        self.parent = parent
        self.links = links
        self.own = own
        self.extra = extra  # (what a sampler added to the SERVER span's attributes: rare)
        self.start = time.time_ns()
        self.judge: tuple[int, int, str | None, dict[str, Any]] | None = None
        self.client: tuple[int, int] | None = None

    def judged(self, started_ns: int, kind: str | None, pointers: Sequence[str]) -> None:
        own = _pointers(pointers) if kind is not None else {}
        self.judge = (started_ns, time.time_ns(), kind, own)
        if own:
            self.own.update(own)

    def forwarding(self) -> dict[str, str]:
        context = self.context
        span_id = self.spans.ids.generate_span_id()
        self.client = (span_id, time.time_ns())
        return _carrier(context.trace_id, span_id, context.trace_flags, context.trace_state)

    def ended(self, outcome: str, kind: str | None) -> None:
        self.end = time.time_ns()
        spans, route = self.spans, self.route
        server, client = route.ending(outcome, kind)
        judge = server  # (unused: no judgement)
        if self.judge is not None:
            judge = route.judged(self.judge[2])
            self.judge_id = spans.ids.generate_span_id()
        if self.extra:  # (a sampler's attributes win, and may name the shape's: a shape of their own)
            whole = {**server.attributes, **self.own, **self.extra}
            server, self.own = _Shape(server.name, server.kind, server.status, whole), {}
        self.shapes = (server, client, judge)
        if spans.take_call is not None:
            spans.take_call(self)
            return
        emit = spans.processor.on_end
        call = self.context
        for span in self.made_spans():
            if span.span_id == call.span_id:
                emit(span)
            else:  # (a child's context ready while it is asked for, twice by the SDK's processors, then dropped:
                # the span waits in a batch without it)
                span.made = local_context(call.trace_id, span.span_id, call.trace_flags, call.trace_state)
                emit(span)
                span.made = None

    def made_spans(self) -> list[CallSpan]:
        """The call's spans, as the SDK's processors and exporters take them (once it has ended): the
        judgement's, the round trip's, then the call's (the order they end in)."""
        spans, call, made = self.spans, self.context, []
        resource, scope = spans.resource, spans.scope
        server, client, judge = self.shapes
        if self.judge is not None:
            started, judged, _, pointers = self.judge
            made.append(CallSpan(judge, call, self.judge_id, call, pointers, started, judged, resource, scope))
        if self.client is not None:
            span_id, sent = self.client
            made.append(CallSpan(client, call, span_id, call, {}, sent, self.end, resource, scope))
        made.append(
            CallSpan(
                server, call, call.span_id, self.parent, self.own, self.start, self.end, resource, scope, self.links
            )
        )
        return made


class CallSpans:
    """The pipeline's tracer (:class:`~mcp_guard.calls.observer.CallTracer`) over the OpenTelemetry SDK.

    Args:
        provider: the guard's ``TracerProvider``: its sampler (``OTEL_TRACES_SAMPLER``), id generator and
            resource (``service.name``...) are the spans'.
        processor: where finished spans go (``on_end`` only: the SDK's batch and simple processors do
            nothing on start): the provider's ``telemetry.batch.CallBatchSpanProcessor``, which also takes a
            sampled call whole (its ``call_ended``: :class:`SampledCall`, one queue entry a call), or any other
            (tests: a ``SimpleSpanProcessor`` over an in-memory exporter), handed the spans one by one. Add it to
            ``provider`` too, so that flushing and shutting down the provider reach it.
    """

    def __init__(self, provider: TracerProvider, processor: SpanProcessor) -> None:
        self.processor = processor
        self.take_call: Callable[[SampledCall], None] | None = getattr(processor, "call_ended", None)
        self.sampler = provider.sampler
        self.ids = provider.id_generator
        self.resource = provider.resource
        self.scope = InstrumentationScope("mcp-guard")
        self._routes: dict[tuple[str, str], _Route] = {}
        self._default = self.sampler is DEFAULT_ON  # (parentbased_always_on, decided in _root as it decides)

    def _route(self, server: str, tool: str) -> _Route:
        route = self._routes.get((server, tool))
        if route is None:
            if len(self._routes) >= MAX_ROUTES:
                self._routes.clear()
            route = self._routes[(server, tool)] = _Route(server, tool)
        return route

    def _root(
        self, name: str, attributes: Mapping[str, Any], meta: Any, origin: Origin | None
    ) -> tuple[SpanContext, SpanContext | None, tuple[Link, ...], bool, Mapping[str, Any] | None]:
        """The SERVER span's context, its parent's, its links, whether it is sampled and the attributes the
        sampler added (the sampler asked once, as ``Tracer.start_span`` asks it: ``opentelemetry.sdk.trace``,
        1.45; ``attributes``: the span's so far, for the sampler)."""
        context, links = _parent(meta, origin)
        parent = get_current_span(context).get_span_context() if context is not None else None
        if parent is None:
            trace_id = self.ids.generate_trace_id()
            random = self.ids.is_trace_id_random()
        else:
            trace_id = parent.trace_id
            random = parent.trace_flags.random_trace_id
        added: Mapping[str, Any] | None = None
        if self._default:  # ParentBased(ALWAYS_ON): a root sampled; a child as its parent, in its state
            sampled = parent is None or parent.trace_flags.sampled
            state = parent.trace_state if parent is not None else None
        else:
            result = self.sampler.should_sample(
                context if context is not None else _ROOT, trace_id, name, SpanKind.SERVER, attributes, links
            )
            sampled = result.decision is Decision.RECORD_AND_SAMPLE
            state = result.trace_state
            added = {k: v for k, v in result.attributes.items() if attributes.get(k, _MISSING) != v} or None
        flags = TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT
        if random:
            flags |= TraceFlags.RANDOM_TRACE_ID
        own = local_context(trace_id, self.ids.generate_span_id(), _flags(flags), state)
        return own, parent, links, sampled, added

    def call_started(
        self, server: str, tool: str, request_id: Any, meta: Any, modern: bool, origin: Origin | None = None
    ) -> CallTrace:
        """Open the call's trace: the SERVER span's context, a child of the caller's (see the module)."""
        route = self._route(server, tool)
        own: dict[str, Any] = {"jsonrpc.request.id": _request_id(request_id)}
        if origin is not None and origin.session_id is not None:
            own["mcp.session.id"] = origin.session_id
        attributes = own if self._default else {**route.server, **own}
        context, parent, links, recorded, added = self._root(route.server_name, attributes, meta, origin)
        if not recorded:
            return _Unsampled(self, context)
        return SampledCall(self, route, context, parent, links, own, added)

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
        own, parent, links, recorded, added = self._root("tools/call", attributes, meta, origin)
        if not recorded:
            return
        now = time.time_ns()
        if added:
            attributes.update(added)
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
