"""The OTLP/HTTP span exporter, with the library's encoding made cheaper by caching what repeats.

:class:`CallSpanExporter` is the library's ``OTLPSpanExporter`` (``opentelemetry-exporter-otlp-proto-http``:
its endpoint, headers, timeout, compression, TLS and session read from the standard ``OTEL_EXPORTER_OTLP_*``
variables, its HTTP transport, its retries) whose batches are encoded by :class:`SpanEncoder` instead of the
library's ``encode_spans``. The bytes are the library's, byte for byte (tests/telemetry/test_span_encoder.py
compares them, and decodes them with the library's classes).

Why (docs/tracing.md, "Cost"): the library builds every span's protobuf message from Python keyword
arguments, a ``KeyValue`` and an ``AnyValue`` per attribute, then serializes the whole request: about 18 µs a
span, three spans a call, more than the whole goal of 15% of a judged call's CPU on the HTTP front. What a
call's spans carry is mostly the same from call to call: the span names, kinds and statuses, and the
attributes naming the server, the tool, the method, the outcome.

:class:`SpanEncoder` writes each span's serialized ``Span`` as a concatenation of serialized pieces, in the
order of their field numbers, the order protobuf's serializer writes a message's fields in (a message's
serialized fields may be written one after the other: "Encoding", protobuf.dev, "Message Structure"): the
ids, state, parent, name, kind and times (a ``Span`` of the library's classes, those fields set, serialized),
then the attributes, the links, the status and the flags, each the serialized ``Span`` holding only it, made
by the library's classes and functions and, but for the attributes unique to a call and the links, kept made.
The spans are then framed by protobuf's serializer too (``_framing``: a repeated ``bytes`` field is written as
a repeated message field is), in the ``ScopeSpans`` and ``ResourceSpans`` of their group, whose other fields
(resource, scope, schema URLs) are the library's ``encode_spans`` output, kept once per group. No message is
parsed, and the pieces that repeat are not serialized again.

Anything :class:`SpanEncoder` does not cache is encoded by the library's own functions (attribute values it
does not know, arrays, events, links), so a span of any shape comes out as the library would write it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # type: ignore[import-untyped]
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
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status
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


def _framing() -> tuple[Any, Any]:
    """Two messages of one repeated ``bytes`` field each, numbered as OTLP's repeated message fields are (1:
    ``ExportTraceServiceRequest.resource_spans``; 2: ``ResourceSpans.scope_spans`` and ``ScopeSpans.spans``).

    On the wire a ``bytes`` field and an embedded message field are written alike: the tag, the length, the
    bytes ("Encoding", protobuf.dev, "Length-Delimited Records"). So protobuf's own serializer, given the
    serialized messages as the values of such a field, writes what it writes for the messages themselves,
    without parsing them into messages first. Made with protobuf's descriptor API, in a pool of their own."""
    numbers = {
        ExportTraceServiceRequest.DESCRIPTOR.fields_by_name["resource_spans"].number,
        ResourceSpans.DESCRIPTOR.fields_by_name["scope_spans"].number,
        ScopeSpans.DESCRIPTOR.fields_by_name["spans"].number,
    }
    assert numbers == {1, 2}, numbers  # (OTLP's field numbers never change: a check, not a reading)
    pool = descriptor_pool.DescriptorPool()
    proto = descriptor_pb2.FileDescriptorProto(
        name="mcp_guard_otlp_framing.proto", package="mcp_guard", syntax="proto3"
    )
    for name, number in (("One", 1), ("Two", 2)):
        proto.message_type.add(name=name).field.add(
            name="items",
            number=number,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
        )
    pool.Add(proto)
    one, two = (message_factory.GetMessageClass(pool.FindMessageTypeByName(f"mcp_guard.{n}")) for n in ("One", "Two"))
    return one, two


_ONE, _TWO = _framing()


class SpanEncoder:
    """Encodes batches of ``ReadableSpan`` (and calls' records) as the library's
    ``encode_spans(spans).SerializePartialToString()`` would, caching the serialized pieces that repeat (see the
    module). Used by one thread at a time (the batch processor's export thread)."""

    def __init__(self) -> None:
        self._heads: dict[tuple[Any, ...], bytes] = {}
        self._shapes: dict[Any, tuple[Span, bytes, bytes]] = {}
        self._attributes: dict[tuple[str, type, Any], bytes] = {}
        self._flags: dict[int, bytes] = {}
        self._groups: dict[tuple[Resource, InstrumentationScope | None], tuple[bytes, bytes, bytes, bytes]] = {}
        self._unique = Span(attributes=[KeyValue(key="")])  # (one attribute, its value set for each)

    def encode(self, spans: Sequence[ReadableSpan | SampledCall]) -> bytes:
        """The serialized ``ExportTraceServiceRequest`` of ``spans`` (grouped by resource, then scope, in the
        order they first come, as the library groups them); a call's record (:class:`~.spans.SampledCall`, from
        ``telemetry.batch``) stands for its spans (:meth:`~.spans.SampledCall.made_spans`), encoded without
        making them."""
        groups: dict[Resource, dict[InstrumentationScope | None, list[bytes]]] = {}
        last: tuple[Resource | None, InstrumentationScope | None, list[bytes]] = (None, None, [])
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
                scopes = groups.get(resource)
                if scopes is None:
                    scopes = groups[resource] = {}
                target = scopes.get(scope)  # type: ignore[assignment]
                if target is None:
                    target = scopes[scope] = []
                    self._group(span, resource, scope)
                last = (resource, scope, target)
            if call is not None:
                self._call(target, call)
            else:
                target.append(self._span(span))  # type: ignore[arg-type]
        return bytes(
            _ONE(
                items=[
                    self._resource_spans(resource, [(scope, spans) for scope, spans in scopes.items()])
                    for resource, scopes in groups.items()
                ]
            ).SerializePartialToString()
        )

    def _resource_spans(
        self, resource: Resource, scopes: list[tuple[InstrumentationScope | None, list[bytes]]]
    ) -> bytes:
        """A ``ResourceSpans``: its resource, its ``ScopeSpans`` (each: its scope, its spans, its schema URL),
        its schema URL, in field order, as the library writes them."""
        items = []
        head = tail = b""
        for scope, spans in scopes:
            head, tail, scope_head, scope_tail = self._groups[(resource, scope)]
            items.append(scope_head + _TWO(items=spans).SerializePartialToString() + scope_tail)
        framed: bytes = _TWO(items=items).SerializePartialToString()
        return head + framed + tail

    def _group(self, span: ReadableSpan | SampledCall, resource: Resource, scope: InstrumentationScope | None) -> None:
        """Encode (once) the pieces of ``span``'s group as the library's ``encode_spans`` writes them: a
        ``ResourceSpans``'s fields before and after its ``scope_spans``, a ``ScopeSpans``'s before and after
        its ``spans``."""
        key = (resource, scope)
        if key in self._groups:
            return
        if len(self._groups) >= 64:
            self._groups.clear()
        one = span.made_spans()[-1] if type(span) is SampledCall else span
        resource_spans = encode_spans([one]).resource_spans[0]  # type: ignore[list-item]
        scope_spans = resource_spans.scope_spans[0]
        del scope_spans.spans[:]
        scope_head, scope_tail = _split(scope_spans, "scope")
        resource_spans.ClearField("scope_spans")
        head, tail = _split(resource_spans, "resource")
        self._groups[key] = (head, tail, scope_head, scope_tail)

    def _call(self, target: list[bytes], call: SampledCall) -> None:
        """Add a call's spans (its record, ended) to ``target``, serialized as the library's ``_encode_span``
        would write :meth:`~.spans.SampledCall.made_spans`, in their order."""
        context = call.context
        trace_id, own_id = context.trace_id.to_bytes(16, "big"), context.span_id.to_bytes(8, "big")
        state = context.trace_state
        text = ",".join(f"{key}={value}" for key, value in state.items()) if state else ""
        server, client, judge = call.shapes
        if call.judge is not None:
            started, judged, _, pointers = call.judge
            span_id = call.judge_id.to_bytes(8, "big")
            target.append(
                self._bytes(judge, trace_id, span_id, text, own_id, _HAS_IS_REMOTE, started, judged, pointers)
            )
        if call.client is not None:
            sent = call.client
            span_id = sent[0].to_bytes(8, "big")
            target.append(self._bytes(client, trace_id, span_id, text, own_id, _HAS_IS_REMOTE, sent[1], call.end, None))
        parent = call.parent
        if parent is None:
            parent_id, flags = b"", _HAS_IS_REMOTE
        else:
            parent_id = parent.span_id.to_bytes(8, "big")
            flags = _HAS_IS_REMOTE | _IS_REMOTE if parent.is_remote else _HAS_IS_REMOTE
        own = call.own
        target.append(
            self._bytes(server, trace_id, own_id, text, parent_id, flags, call.start, call.end, own, call.links)
        )

    def _bytes(
        self,
        shape: Any,
        trace_id: bytes,
        span_id: bytes,
        state: str,
        parent_id: bytes,
        flags: int,
        start: int,
        end: int,
        own: Mapping[str, Any] | None,
        links: Sequence[Any] = (),
    ) -> bytes:
        """The serialized ``Span`` of a :class:`~.spans.CallSpan`'s fields (``shape``: its name, kind, status
        and first attributes; ``own``: its other attributes), field by field in the order the library's
        serializer writes them: ids, state, parent, name, kind and times (the library's ``Span``, serialized),
        attributes, links, status, flags (each piece serialized by the library; all but the unique attributes
        and the links cached)."""
        shaped = self._shapes.get(shape)
        if shaped is None:
            shaped = self._shape(shape)
        ids = shaped[0]
        ids.trace_id = trace_id
        ids.span_id = span_id
        ids.trace_state = state  # ("" and b"": not written, as the library leaves them out)
        ids.parent_span_id = parent_id
        ids.start_time_unix_nano = start
        ids.end_time_unix_nano = end
        pieces = [ids.SerializePartialToString(), shaped[1]]
        if own:
            cache = self._attributes
            for key, value in own.items():
                kind = type(value)
                if kind not in _CACHED_TYPES:  # (arrays...: the library's encoding, each time)
                    pieces.append(_encoded_attribute(key, value))
                elif key in UNIQUE_KEYS and kind is str:  # (the library's KeyValue, its key and value set here)
                    attribute = self._unique.attributes[0]
                    attribute.key = key
                    attribute.value.string_value = value
                    pieces.append(self._unique.SerializePartialToString())
                else:
                    cached = (key, kind, value)
                    piece = cache.get(cached)
                    if piece is None:
                        if len(cache) >= MAX_CACHED:
                            cache.clear()
                        piece = cache[cached] = _encoded_attribute(key, value)
                    pieces.append(piece)
        if links:
            pieces.append(Span(links=_encode_links(links)).SerializePartialToString())
        pieces.append(shaped[2])
        flagged = self._flags.get(flags)
        if flagged is None:
            flagged = self._flags[flags] = Span(flags=flags).SerializePartialToString()
        pieces.append(flagged)
        return b"".join(pieces)

    def _span(self, span: ReadableSpan) -> bytes:
        """The serialized ``Span`` of ``span``, as the library's ``_encode_span`` writes it."""
        if type(span) is CallSpan:  # (its own fields, as it set them: no events, nothing dropped)
            call, parent = span.call, span._parent
            state = call.trace_state
            text = ",".join(f"{key}={value}" for key, value in state.items()) if state else ""
            if parent is None:
                parent_id, flags = b"", _HAS_IS_REMOTE
            else:
                parent_id = parent.span_id.to_bytes(8, "big")
                flags = _HAS_IS_REMOTE | _IS_REMOTE if parent.is_remote else _HAS_IS_REMOTE
            trace_id, span_id = call.trace_id.to_bytes(16, "big"), span.span_id.to_bytes(8, "big")
            start, end = span._start_time or 0, span._end_time or 0
            return self._bytes(span.shape, trace_id, span_id, text, parent_id, flags, start, end, span.own, span._links)
        message = Span()
        context = span.context
        message.trace_id = context.trace_id.to_bytes(16, "big")
        message.span_id = context.span_id.to_bytes(8, "big")
        if context.trace_state:  # (the library joins its pairs, "" for none: not written)
            message.trace_state = ",".join(f"{key}={value}" for key, value in context.trace_state.items())
        parent = span.parent
        if parent is not None:
            message.parent_span_id = parent.span_id.to_bytes(8, "big")
            message.flags = _HAS_IS_REMOTE | _IS_REMOTE if parent.is_remote else _HAS_IS_REMOTE
        else:
            message.flags = _HAS_IS_REMOTE
        message.start_time_unix_nano = span.start_time or 0
        message.end_time_unix_nano = span.end_time or 0
        pieces = [self._head(span)]
        for key, value in (span.attributes or {}).items():
            kind = type(value)
            if kind in _CACHED_TYPES:
                cached = (key, kind, value)
                piece = self._attributes.get(cached)
                if piece is None:
                    if len(self._attributes) >= MAX_CACHED:
                        self._attributes.clear()
                    piece = self._attributes[cached] = _encoded_attribute(key, value)
                pieces.append(piece)
            else:
                pieces.append(_encoded_attribute(key, value))
        message.MergeFromString(b"".join(pieces))
        if span.events:
            message.events.extend(_encode_events(span.events))
        if span.links:
            message.links.extend(_encode_links(span.links))
        dropped = (span.dropped_attributes, span.dropped_events, span.dropped_links)
        if any(dropped):
            message.dropped_attributes_count, message.dropped_events_count, message.dropped_links_count = dropped
        serialized: bytes = message.SerializePartialToString()
        return serialized

    def _shape(self, shape: Any) -> tuple[Span, bytes, bytes]:
        """A :class:`~.spans.CallSpan` shape's pieces: a ``Span`` with its name and kind, whose ids and times
        are set for each span, then serialized (fields 1 to 8); its attributes (the serialized ``Span`` holding
        only them); its status (the same, holding only it)."""
        if len(self._shapes) >= MAX_CACHED:
            self._shapes.clear()
        attributes = Span(attributes=_encode_attributes(shape.attributes)).SerializePartialToString()
        status = Span()
        status.status.CopyFrom(_status(shape.status))
        named = Span(name=shape.name, kind=_SPAN_KIND_MAP[shape.kind])
        pieces = self._shapes[shape] = (named, attributes, status.SerializePartialToString())
        return pieces

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


def _split(message: Any, first: str) -> tuple[bytes, bytes]:
    """``message`` (a ``ResourceSpans`` or ``ScopeSpans`` without its repeated field) serialized as two pieces:
    its field ``first`` (field 1), and its ``schema_url`` (field 3)."""
    head, tail = type(message)(), type(message)()
    head.CopyFrom(message)
    head.ClearField("schema_url")
    tail.CopyFrom(message)
    tail.ClearField(first)
    return head.SerializePartialToString(), tail.SerializePartialToString()


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
