"""The OTLP/HTTP span exporter, with the library's encoding made cheaper by caching what repeats.

:class:`CallSpanExporter` is the library's ``OTLPSpanExporter`` (``opentelemetry-exporter-otlp-proto-http``:
its endpoint, headers, timeout, compression, TLS and session read from the standard ``OTEL_EXPORTER_OTLP_*``
variables, its HTTP transport, its retries) whose batches are encoded by :class:`SpanEncoder` instead of the
library's ``encode_spans``. The request is the same message, the library's generated classes
(``opentelemetry-proto``) serialize it, and the bytes are the same (tests/telemetry/test_span_encoder.py
decodes both and compares them).

Why (docs/tracing.md, "Cost"): the library builds every span's protobuf message from Python keyword
arguments, a ``KeyValue`` and an ``AnyValue`` per attribute: about 18 µs a span, three spans a call, more than
the whole goal of 15% of a judged call's CPU on the HTTP front. What a call's spans carry is mostly the same
from call to call: the span names, kinds and statuses, and the attributes naming the server, the tool, the
method, the outcome. :class:`SpanEncoder` keeps each of those encoded once by the library, as the serialized
``Span`` message holding only it, and makes a span's message by parsing the concatenation of its pieces into
a new ``Span`` of the request (the protobuf encoding's rule: a message parsed from concatenated serialized
messages is their merge, repeated fields appended in order; "Encoding", protobuf.dev, "Last One Wins"), its
ids and times set as fields. The resource and the instrumentation scope are encoded once per batch group, by
the library's ``encode_spans``.

Anything :class:`SpanEncoder` does not cache is encoded by the library's own functions (attribute values it
does not know, arrays, events, links), so a span of any shape comes out as the library would write it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from opentelemetry.exporter.otlp.proto.common._internal import _encode_attributes
from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import (
    _SPAN_KIND_MAP,
    _encode_events,
    _encode_links,
)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http._common import RequestPayloadTooLargeError, _is_request_too_large
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span, Status
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.semconv.attributes.http_attributes import HTTP_RESPONSE_STATUS_CODE

from .spans import CallSpan, SampledCall

__all__ = ["CallSpanExporter", "SpanEncoder"]

_log = logging.getLogger("opentelemetry.exporter.otlp.proto.http.trace_exporter")

MAX_CACHED: Final = 4096
"""Pieces kept encoded (each cache); more, and the cache starts again empty (a call's own pieces come back)."""

UNIQUE_KEYS: Final = frozenset({"jsonrpc.request.id"})
"""Attributes whose values differ from call to call: never cached (a string value's ``KeyValue`` is made here,
as the library's ``_encode_key_value`` makes it, and added to the span: three times faster than asking it)."""

_CACHED_TYPES: Final = frozenset({str, bool, int})
"""Attribute values cached by value (one ``AnyValue`` each; ``True`` and ``1`` kept apart in the cache's key by
their type). Not ``float``: ``0.0 == -0.0``, and ``nan`` is never found again."""

_HAS_IS_REMOTE: Final = 0x100  # SpanFlags.SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
_IS_REMOTE: Final = 0x200  # SpanFlags.SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK


class SpanEncoder:
    """Encodes batches of ``ReadableSpan`` as the library's ``encode_spans(spans).SerializePartialToString()``
    would, caching the serialized pieces that repeat (see the module). Used by one thread at a time (the batch
    processor's export thread)."""

    def __init__(self) -> None:
        self._heads: dict[tuple[Any, ...], bytes] = {}
        self._shapes: dict[Any, bytes] = {}
        self._attributes: dict[tuple[str, type, Any], bytes] = {}
        self._groups: dict[tuple[Resource, InstrumentationScope | None], tuple[Any, Any]] = {}

    def encode(self, spans: Sequence[ReadableSpan | SampledCall]) -> bytes:
        """The serialized ``ExportTraceServiceRequest`` of ``spans`` (grouped by resource, then scope, in the
        order they first come, as the library groups them); a call's record (:class:`~.spans.SampledCall`, from
        ``telemetry.batch``) stands for its spans (:meth:`~.spans.SampledCall.made_spans`), encoded without
        making them."""
        request = ExportTraceServiceRequest()
        by_resource: dict[Resource, tuple[ResourceSpans, dict[InstrumentationScope | None, Any]]] = {}
        last: tuple[Resource | None, InstrumentationScope | None, Any] = (None, None, None)
        for span in spans:
            scope: InstrumentationScope | None
            call = span if type(span) is SampledCall else None
            if call is not None:
                resource, scope = call.spans.resource, call.spans.scope
            else:
                assert isinstance(span, ReadableSpan)
                resource, scope = span.resource, span.instrumentation_scope or None
            if resource is last[0] and scope is last[1]:
                target = last[2]
            else:
                target = self._target(request, by_resource, span, resource, scope)
                last = (resource, scope, target)
            if call is not None:
                self._call(target.add, call)
            else:
                self._span(target.add(), span)  # type: ignore[arg-type]
        serialized: bytes = request.SerializePartialToString()
        return serialized

    def _target(
        self,
        request: ExportTraceServiceRequest,
        by_resource: dict[Resource, tuple[ResourceSpans, dict[InstrumentationScope | None, Any]]],
        span: ReadableSpan | SampledCall,
        resource: Resource,
        scope: InstrumentationScope | None,
    ) -> Any:
        """The repeated ``spans`` field of the request's ``ScopeSpans`` for ``resource`` and ``scope``, added
        (with the resource and scope encoded by the library, once) when the batch has none yet."""
        group = by_resource.get(resource)
        if group is None:
            encoded_resource, _ = self._group(span, resource, scope)
            added = request.resource_spans.add(resource=encoded_resource, schema_url=resource.schema_url)
            group = by_resource[resource] = (added, {})
        resource_spans, scopes = group
        target = scopes.get(scope)
        if target is None:
            _, encoded_scope = self._group(span, resource, scope)
            schema = scope.schema_url if scope else None
            target = scopes[scope] = resource_spans.scope_spans.add(scope=encoded_scope, schema_url=schema).spans
        return target

    def _group(
        self, span: ReadableSpan | SampledCall, resource: Resource, scope: InstrumentationScope | None
    ) -> tuple[Any, Any]:
        """The ``Resource`` and ``InstrumentationScope`` messages of ``span``'s group, as the library's
        ``encode_spans`` writes them (asked once per group)."""
        key = (resource, scope)
        found = self._groups.get(key)
        if found is None:
            if len(self._groups) >= 64:
                self._groups.clear()
            one = span.made_spans()[-1] if type(span) is SampledCall else span
            resource_spans = encode_spans([one]).resource_spans[0]  # type: ignore[list-item]
            found = self._groups[key] = (resource_spans.resource, resource_spans.scope_spans[0].scope)
        return found

    def _call(self, add: Any, call: SampledCall) -> None:
        """Add a call's spans (its record, ended) to the spans of a ``ScopeSpans`` (``add``: its ``add``), as
        the library's ``_encode_span`` would write :meth:`~.spans.SampledCall.made_spans`, in their order."""
        context = call.context
        trace_id, own_id = context.trace_id.to_bytes(16, "big"), context.span_id.to_bytes(8, "big")
        state = context.trace_state
        text = ",".join(f"{key}={value}" for key, value in state.items()) if state else ""
        server, client, judge = call.shapes
        if call.judge is not None:
            started, judged, _, pointers = call.judge
            span_id = call.judge_id.to_bytes(8, "big")
            self._fill(
                add(), [self._piece(judge)], trace_id, span_id, text, own_id, _HAS_IS_REMOTE, started, judged, pointers
            )
        if call.client is not None:
            sent = call.client
            span_id = sent[0].to_bytes(8, "big")
            self._fill(
                add(), [self._piece(client)], trace_id, span_id, text, own_id, _HAS_IS_REMOTE, sent[1], call.end, None
            )
        parent = call.parent
        if parent is None:
            parent_id, flags = None, _HAS_IS_REMOTE
        else:
            parent_id = parent.span_id.to_bytes(8, "big")
            flags = _HAS_IS_REMOTE | _IS_REMOTE if parent.is_remote else _HAS_IS_REMOTE
        message = add()
        self._fill(
            message, [self._piece(server)], trace_id, own_id, text, parent_id, flags, call.start, call.end, call.own
        )
        if call.links:
            message.links.extend(_encode_links(call.links))

    def _piece(self, shape: Any) -> bytes:
        piece = self._shapes.get(shape)
        return piece if piece is not None else self._shape(shape)

    def _span(self, message: Span, span: ReadableSpan) -> None:
        """Fill ``message`` (new, empty) with ``span``, as the library's ``_encode_span`` would."""
        if type(span) is CallSpan:  # (its own fields, as it set them: no events, nothing dropped)
            call = span.call
            trace_id, span_id, state, parent = call.trace_id, span.span_id, call.trace_state, span._parent
            pieces = [self._piece(span.shape)]
            attributes: Mapping[str, Any] | None = span.own
            start, end = span._start_time, span._end_time
            events: Sequence[Any] = ()
            links, dropped = span._links, None
        else:
            context = span.context
            trace_id, span_id, state, parent = context.trace_id, context.span_id, context.trace_state, span.parent
            pieces = [self._head(span)]
            attributes = span.attributes
            start, end = span.start_time, span.end_time
            events, links = span.events, span.links
            dropped = (span.dropped_attributes, span.dropped_events, span.dropped_links)
        # (the library joins the state's pairs, "" for none: not written)
        text = ",".join(f"{key}={value}" for key, value in state.items()) if state else ""
        if parent is not None:
            parent_id: bytes | None = parent.span_id.to_bytes(8, "big")
            flags = _HAS_IS_REMOTE | _IS_REMOTE if parent.is_remote else _HAS_IS_REMOTE
        else:
            parent_id, flags = None, _HAS_IS_REMOTE
        self._fill(
            message,
            pieces,
            trace_id.to_bytes(16, "big"),
            span_id.to_bytes(8, "big"),
            text,
            parent_id,
            flags,
            start or 0,
            end or 0,
            attributes,
        )
        if events:
            message.events.extend(_encode_events(events))
        if links:
            message.links.extend(_encode_links(links))
        if dropped is not None and any(dropped):
            message.dropped_attributes_count, message.dropped_events_count, message.dropped_links_count = dropped

    def _fill(
        self,
        message: Span,
        pieces: list[bytes],
        trace_id: bytes,
        span_id: bytes,
        state: str,
        parent_id: bytes | None,
        flags: int,
        start: int,
        end: int,
        attributes: Mapping[str, Any] | None,
    ) -> None:
        """Set ``message``'s ids, state, flags and times, then merge ``pieces`` (its name, kind, status and
        first attributes, serialized) and ``attributes`` (each value's piece cached, but the unique ones')."""
        message.trace_id = trace_id
        message.span_id = span_id
        if state:
            message.trace_state = state
        if parent_id is not None:
            message.parent_span_id = parent_id
        message.flags = flags
        message.start_time_unix_nano = start
        message.end_time_unix_nano = end
        if attributes:
            cache = self._attributes
            for key, value in attributes.items():
                kind = type(value)
                if kind not in _CACHED_TYPES:  # (arrays...: the library's encoding, each time)
                    pieces.append(_encoded_attribute(key, value))
                elif key in UNIQUE_KEYS and kind is str:  # (the library's KeyValue, made here: it comes next)
                    message.MergeFromString(b"".join(pieces))
                    pieces = []
                    added = message.attributes.add()
                    added.key = key
                    added.value.string_value = value
                else:
                    cached = (key, kind, value)
                    piece = cache.get(cached)
                    if piece is None:
                        if len(cache) >= MAX_CACHED:
                            cache.clear()
                        piece = cache[cached] = _encoded_attribute(key, value)
                    pieces.append(piece)
        if pieces:
            message.MergeFromString(b"".join(pieces) if len(pieces) > 1 else pieces[0])

    def _shape(self, shape: Any) -> bytes:
        """The serialized ``Span`` holding a :class:`~.spans.CallSpan`'s shape: its name, kind, status and the
        shape's attributes (one per shape, the spans' own attributes coming after them)."""
        piece = self._shapes.get(shape)
        if piece is None:
            if len(self._shapes) >= MAX_CACHED:
                self._shapes.clear()
            status = shape.status
            encoded = Span(
                name=shape.name, kind=_SPAN_KIND_MAP[shape.kind], attributes=_encode_attributes(shape.attributes)
            )
            encoded.status.CopyFrom(_status(status))
            piece = self._shapes[shape] = encoded.SerializePartialToString()
        return piece

    def _head(self, span: ReadableSpan) -> bytes:
        """The serialized ``Span`` holding only ``span``'s name, kind and status (one per distinct three)."""
        status = span.status
        key = (
            (span.name, span.kind, status.status_code, status.description)
            if status is not None
            else (span.name, span.kind)
        )
        head = self._heads.get(key)
        if head is None:
            if len(self._heads) >= MAX_CACHED:
                self._heads.clear()
            encoded = Span(name=span.name, kind=_SPAN_KIND_MAP[span.kind])
            if status is not None:  # (the library writes a status, empty for UNSET, whenever the span has one)
                encoded.status.CopyFrom(_status(status))
            head = self._heads[key] = encoded.SerializePartialToString()
        return head


def _count(spans: Sequence[ReadableSpan | SampledCall]) -> int:
    """How many spans ``spans`` holds (a call's record: its spans)."""
    return sum(
        (span.judge is not None) + (span.client is not None) + 1 if type(span) is SampledCall else 1 for span in spans
    )


def _status(status: Any) -> Status:
    """A span's ``Status`` message, as the library's ``_encode_status`` makes it."""
    return Status(code=status.status_code.value, message=status.description)


def _encoded_attribute(key: str, value: Any) -> bytes:
    """The serialized ``Span`` holding only the attribute ``key``: ``value``, as the library encodes it (a
    value it cannot encode is logged by it and left out: empty bytes)."""
    encoded: bytes = Span(attributes=_encode_attributes({key: value})).SerializePartialToString()
    return encoded


class CallSpanExporter(OTLPSpanExporter):
    """The library's OTLP/HTTP exporter (same arguments, same ``OTEL_EXPORTER_OTLP_*`` variables, transport
    and error handling), encoding with :class:`SpanEncoder`. ``export`` is the library's (1.45.2), its one
    ``encode_spans(spans).SerializePartialToString()`` replaced."""

    takes_records: Final = True
    """Batches may hold calls' records (``telemetry.batch``): encoded as their spans."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.encoder = SpanEncoder()

    def export(self, spans: Sequence[ReadableSpan | SampledCall]) -> SpanExportResult:
        if self._shutdown:
            _log.warning("Exporter already shutdown, ignoring batch")
            return SpanExportResult.FAILURE
        with self._metrics.export_operation(_count(spans)) as result:
            try:
                serialized = self.encoder.encode(spans)
            except Exception as error:
                _log.error("Failed to encode span batch: %s", error)
                result.error = error
                return SpanExportResult.FAILURE
            if _is_request_too_large(serialized, self._max_request_size):
                _log.warning(
                    "Dropping span batch: serialized size %d bytes exceeds max_request_size %d bytes.",
                    len(serialized),
                    self._max_request_size,
                )
                result.error = RequestPayloadTooLargeError(
                    f"Serialized span request size {len(serialized)} bytes exceeds max_request_size "
                    f"{self._max_request_size} bytes."
                )
                return SpanExportResult.FAILURE
            exported = self._client.export(serialized)
            if not exported.success:
                result.error = exported.error
                code = exported.status_code
                result.error_attrs = {HTTP_RESPONSE_STATUS_CODE: code} if code is not None else None
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS
