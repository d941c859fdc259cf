"""The guard's OTLP encoding and its shortcuts write what the OpenTelemetry libraries write (issue 27 items 3, 5).

``CallSpanExporter`` (the library's exporter, its encoding replaced) posts those bytes and reports failures
as the library's does.

``telemetry.export.SpanEncoder`` caches the encoded pieces that repeat; its request must be the library's
(``encode_spans(spans).SerializePartialToString()``, ``opentelemetry-exporter-otlp-proto-common``) byte for byte,
for the guard's spans of every shape and for any other span (events, links with attributes, every attribute
type, several resources and scopes), cold and warm caches alike, and decode with the library's classes.
``telemetry.spans.carrier`` writes the ``traceparent``/``tracestate`` the SDK's propagator injects; the default
sampler, decided without asking it, decides as it does.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, Decision, ParentBased, Sampler, SamplingResult
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    TraceFlags,
    TraceState,
    set_span_in_context,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from mcp_guard.calls.observer import Origin
from mcp_guard.telemetry import export
from mcp_guard.telemetry.export import CallSpanExporter, SpanEncoder
from mcp_guard.telemetry.spans import CallSpan, CallSpans, SampledCall, carrier, local_context

META = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "vendor=1,b=2"}
HEADERS = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
UNSAMPLED = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"}


class Kept(SpanProcessor):
    """Every span handed over, kept in order."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)


class KeptCalls(Kept):
    """Every span and every call's record handed over (``call_ended``: a processor that takes calls whole)."""

    def call_ended(self, call: SampledCall) -> None:
        self.spans.append(call)  # type: ignore[arg-type]


def guard_spans(
    sampler: Sampler | None = None, resource: Resource | None = None, whole: bool = False
) -> list[ReadableSpan]:
    """The spans of calls of every shape ``CallSpans`` makes: forwarded or refused (with pointers), a tool
    error, calls that died, with and without trace context (``_meta``, headers, both: a link), a session, a
    string id, a server name or none, a name to escape, refusals before routing. ``whole``: a call's spans
    handed over as its record (:class:`~mcp_guard.telemetry.spans.SampledCall`), in their place."""
    provider = TracerProvider(sampler=sampler, resource=resource or Resource.create({"service.name": "t"}))
    kept = KeptCalls() if whole else Kept()
    tracer = CallSpans(provider, kept)
    for n in range(60):
        meta = (None, META, UNSAMPLED, {"traceparent": "junk"})[n % 4]
        origin = None if n % 3 == 0 else Origin("sess-1" if n % 2 else None, HEADERS if n % 5 else None)
        tool = ("add", "echo\u2028", "x" * 200)[n % 3]
        trace = tracer.call_started("s" if n % 2 else "", tool, n if n % 7 else f"id-{n}", meta, False, origin)
        refused = n % 6 == 0
        trace.judged(time.time_ns(), "validation" if refused else None, ["/a", "/…"] if refused else ())
        if refused:
            trace.ended("rejected", "validation")
            continue
        trace.forwarding()
        trace.ended(("ok", "is_error", "upstream_died", "ok")[n % 4], None)
        if n % 10 == 1:
            tracer.refused("s", "nope\x1b", n, META, origin, "unknown", -32602)
    return kept.spans


def other_spans() -> list[ReadableSpan]:
    """Spans of the SDK's own tracer, of shapes the guard never makes: events, links with attributes, attribute
    values of every type (an unencodable one the library logs and drops), two resources and scopes."""
    exporter = InMemorySpanExporter()
    for service in ("one", "two"):
        provider = TracerProvider(resource=Resource.create({"service.name": service, "n": 3}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        for scope in ("a", "b"):
            tracer = provider.get_tracer(scope, "1.0", schema_url="https://example.com/s")
            linked = SpanContext(0xABC, 0xDEF, True, TraceFlags(1), TraceState([("k", "v")]))
            with tracer.start_as_current_span(
                "op",
                kind=SpanKind.PRODUCER,
                links=[Link(linked, {"why": "because", "n": 2})],
                attributes={"s": "v", "b": True, "i": 7, "f": 1.5, "nf": -0.0, "l": ["x", "y"], "li": [1, 2]},
            ) as span:
                span.add_event("e", {"k": 1})
                span.set_attribute("bytes", b"\x00\x01")
                span.set_status(2, "broken")
    return list(exporter.get_finished_spans())


def same_as_the_library(spans: list[ReadableSpan], encoder: SpanEncoder | None = None) -> None:
    encoder = encoder or SpanEncoder()
    expected = encode_spans(spans)
    for _ in range(2):  # cold caches, then warm
        ours = encoder.encode(spans)
        assert ours == expected.SerializePartialToString()
        assert ExportTraceServiceRequest.FromString(ours) == expected


def test_the_guards_spans_encode_as_the_library_encodes_them() -> None:
    spans = guard_spans()
    assert {type(s) for s in spans} == {CallSpan, ReadableSpan}  # (the refusals before routing: plain spans)
    assert {s.kind for s in spans} == {SpanKind.SERVER, SpanKind.INTERNAL, SpanKind.CLIENT}
    same_as_the_library(spans)
    same_as_the_library(spans[:1])
    same_as_the_library([])


def made(entries: list[Any]) -> list[ReadableSpan]:
    """The spans of ``entries`` (a call's record: its spans, as ``telemetry.batch`` makes them for an exporter)."""
    return [span for entry in entries for span in (entry.made_spans() if type(entry) is SampledCall else [entry])]


def test_a_calls_record_encodes_as_the_library_encodes_its_spans() -> None:
    entries: list[Any] = guard_spans(whole=True)
    assert {type(e) for e in entries} == {SampledCall, ReadableSpan}
    spans = made(entries)
    assert {type(s) for s in spans} == {CallSpan, ReadableSpan}
    encoder = SpanEncoder()
    for _ in range(2):  # cold caches, then warm
        expected = encode_spans(spans)
        assert encoder.encode(entries) == expected.SerializePartialToString()
        assert encoder.encode(entries[:1]) == encode_spans(made(entries[:1])).SerializePartialToString()
    mixed = other_spans() + entries + other_spans()[:1]
    assert encoder.encode(mixed) == encode_spans(made(mixed)).SerializePartialToString()
    with_sampler: list[Any] = guard_spans(Adding(), whole=True)
    assert encoder.encode(with_sampler) == encode_spans(made(with_sampler)).SerializePartialToString()


def test_a_calls_record_makes_the_spans_a_span_processor_is_handed() -> None:
    """Handed whole or span by span, a call's spans are the same (ids and times aside), in the same order."""

    def shown(spans: list[ReadableSpan]) -> list[Any]:
        return [
            (s.name, s.kind, s.status.status_code, dict(s.attributes or {}), s.parent is None, len(s.links))
            for s in spans
        ]

    by_span, whole = guard_spans(), made(guard_spans(whole=True))
    assert shown(by_span) == shown(whole)
    for span in whole:
        if span.kind is not SpanKind.SERVER:  # (a child: in its call's trace, its parent the call's span)
            assert span.parent is not None and span.context.trace_id == span.parent.trace_id
            assert span.context.span_id != span.parent.span_id and span.context.is_valid


def test_any_other_span_encodes_as_the_library_encodes_it() -> None:
    spans = other_spans()
    assert len({s.resource for s in spans}) == 2
    same_as_the_library(spans)
    same_as_the_library(spans + guard_spans() + spans[:2])


def test_full_caches_start_again_and_still_encode_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "MAX_CACHED", 3)
    encoder = SpanEncoder()
    same_as_the_library(guard_spans(), encoder)
    same_as_the_library(other_spans(), encoder)


class Adding(Sampler):
    """Samples every span and adds attributes, one of them a name the guard's spans have."""

    def should_sample(self, parent_context: Any, trace_id: int, name: str, *args: Any, **kwargs: Any) -> Any:
        return SamplingResult(Decision.RECORD_AND_SAMPLE, {"sampled.by": "adding", "gen_ai.tool.name": "other"})

    def get_description(self) -> str:
        return "Adding"


def test_a_samplers_attributes_are_the_spans_and_encode_as_the_library_encodes_them() -> None:
    spans = guard_spans(Adding())
    servers = [s for s in spans if s.kind is SpanKind.SERVER]
    assert servers and all(s.attributes is not None and s.attributes["sampled.by"] == "adding" for s in servers)
    assert all(s.attributes is not None and s.attributes["gen_ai.tool.name"] == "other" for s in servers)
    same_as_the_library(spans)


@pytest.mark.parametrize(
    ("meta", "header"),
    [(None, None), (META, None), (UNSAMPLED, None), ({"traceparent": "junk"}, None), (None, HEADERS)],
    ids=["root", "sampled", "unsampled", "junk", "header"],
)
def test_the_default_sampler_decided_here_decides_as_the_sdks(meta: Any, header: str | None) -> None:
    results = []
    for sampler in (None, ParentBased(ALWAYS_ON)):  # (None: the provider's default, DEFAULT_ON)
        kept = Kept()
        tracer = CallSpans(TracerProvider(sampler=sampler), kept)
        assert tracer._default is (sampler is None)
        trace = tracer.call_started("", "add", 1, meta, False, Origin(None, header))
        upstream = trace.forwarding()
        trace.ended("ok", None)
        _, trace_id, _, flags = upstream["traceparent"].split("-")
        in_callers_trace = trace_id in (META["traceparent"][3:35], HEADERS[3:35])
        results.append((flags, upstream.get("tracestate"), len(kept.spans), in_callers_trace))
    assert results[0] == results[1]
    assert results[0][3] is (header is not None or meta in (META, UNSAMPLED))


@pytest.mark.parametrize(
    "context",
    [
        SpanContext(0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331, False, TraceFlags(1)),
        SpanContext(1, 2, False, TraceFlags(0)),
        SpanContext(2**128 - 1, 2**64 - 1, False, TraceFlags(3), TraceState([("a", "1"), ("b", "x=y")])),
    ],
)
def test_the_context_sent_upstream_is_what_the_sdks_propagator_writes(context: SpanContext) -> None:
    injected: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(injected, set_span_in_context(NonRecordingSpan(context), Context()))
    assert carrier(context) == injected


@pytest.mark.parametrize(
    ("trace_id", "span_id", "flags", "state"),
    [
        (0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331, 1, None),
        (1, 2**64 - 1, 3, TraceState([("a", "1")])),
        (2**128 - 1, 1, 0, None),
        (0, 5, 1, None),  # (not valid: as the SDK's own says)
        (5, 0, 1, None),
        (2**128, 5, 1, None),
    ],
)
def test_a_local_context_is_the_sdks_span_context(trace_id: int, span_id: int, flags: int, state: Any) -> None:
    made = local_context(trace_id, span_id, TraceFlags(flags), state)
    sdks = SpanContext(trace_id, span_id, False, TraceFlags(flags), state)
    assert type(made) is SpanContext and made == sdks and made.is_valid is sdks.is_valid
    assert made.trace_state == sdks.trace_state and made.is_remote is False


class Collector:
    """A loopback OTLP/HTTP receiver answering every POST with ``status``; the bodies it got."""

    def __init__(self, status: int) -> None:
        self.bodies: list[bytes] = []
        got = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                got.bodies.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.mark.parametrize("status", [200, 400])
def test_the_exporter_posts_what_the_library_encodes_and_says_how_it_went(status: int) -> None:
    collector = Collector(status)
    try:
        exporter = CallSpanExporter(endpoint=collector.url, timeout=5)
        spans = guard_spans()
        result = exporter.export(spans)
        assert result is (SpanExportResult.SUCCESS if status == 200 else SpanExportResult.FAILURE)
        assert collector.bodies == [encode_spans(spans).SerializePartialToString()]
        exporter.shutdown()
        assert exporter.export(spans) is SpanExportResult.FAILURE  # (shut down: nothing sent)
        assert len(collector.bodies) == 1
    finally:
        collector.server.shutdown()
        collector.server.server_close()


def test_a_batch_over_the_request_size_limit_is_dropped_unsent() -> None:
    collector = Collector(200)
    try:
        exporter = CallSpanExporter(endpoint=collector.url, max_request_size=100)
        assert exporter.export(guard_spans()) is SpanExportResult.FAILURE
        assert collector.bodies == []
    finally:
        collector.server.shutdown()
        collector.server.server_close()
