"""The guard's batch span processor (``telemetry.batch``, issue 27 item 5): the SDK's, a call's spans one entry.

A sampled call's spans go in the SDK's queue as one entry (its record); the guard's exporter gets the records
(it encodes them as their spans: tests/telemetry/test_span_encoder.py), any other exporter their spans, in the
order they ended. The ``OTEL_BSP_*`` sizes are read as the SDK reads them and counted in entries of up to three
spans, so that no batch holds more spans than ``OTEL_BSP_MAX_EXPORT_BATCH_SIZE`` says.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_guard.telemetry.batch import CallBatchSpanProcessor
from mcp_guard.telemetry.export import CallSpanExporter
from mcp_guard.telemetry.spans import CallSpans, SampledCall


def calls(processor: CallBatchSpanProcessor, count: int) -> None:
    """``count`` forwarded calls, then one refused before routing (one span, handed to ``on_end``)."""
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = CallSpans(provider, processor)
    assert tracer.take_call is not None
    for n in range(count):
        trace = tracer.call_started("s", "add", n, None, False, None)
        trace.judged(time.time_ns(), None, ())
        trace.forwarding()
        trace.ended("ok", None)
    tracer.refused("s", "nope", count, None, None, "unknown", -32602)


def sizes(processor: CallBatchSpanProcessor) -> tuple[int, int]:
    batch: Any = processor._batch_processor
    return batch._max_export_batch_size, batch._max_queue_size


def test_the_sizes_are_the_variables_in_entries_of_up_to_three_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    processor = CallBatchSpanProcessor(InMemorySpanExporter())
    try:
        assert sizes(processor) == (512 // 3, 2048 // 3)  # (the SDK's defaults: 512 spans a batch, 2048 queued)
    finally:
        processor.shutdown()
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2")
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "30")
    processor = CallBatchSpanProcessor(InMemorySpanExporter())
    try:
        assert sizes(processor) == (1, 10)  # (at least one entry)
    finally:
        processor.shutdown()
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "31")
    with pytest.raises(ValueError, match="less than or equal to max_queue_size"):  # (the SDK's check, in spans)
        CallBatchSpanProcessor(InMemorySpanExporter())


def test_another_exporter_gets_each_calls_spans_in_the_order_they_ended() -> None:
    exporter = InMemorySpanExporter()
    processor = CallBatchSpanProcessor(exporter)
    calls(processor, 5)
    processor.shutdown()  # (what is queued exported)
    spans = exporter.get_finished_spans()
    kinds = [s.kind for s in spans]
    assert kinds == [SpanKind.INTERNAL, SpanKind.CLIENT, SpanKind.SERVER] * 5 + [SpanKind.SERVER]
    for judge, client, server in zip(spans[0:15:3], spans[1:15:3], spans[2:15:3], strict=True):
        assert judge.parent == client.parent == server.context
        assert judge.context.trace_id == client.context.trace_id == server.context.trace_id
    assert spans[-1].name == "tools/call" and spans[-1].attributes is not None


class Entries(CallSpanExporter):
    """The guard's exporter, keeping what it is given instead of posting it."""

    def __init__(self) -> None:
        super().__init__(endpoint="http://127.0.0.1:9/v1/traces")
        self.batches: list[list[Any]] = []

    def export(self, spans: Sequence[ReadableSpan | SampledCall]) -> SpanExportResult:
        self.batches.append(list(spans))
        self.encoder.encode(spans)
        return SpanExportResult.SUCCESS


def test_the_guards_exporter_gets_the_records_in_batches_of_at_most_the_batch_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "9")
    exporter = Entries()
    processor = CallBatchSpanProcessor(exporter)
    calls(processor, 7)
    processor.shutdown()
    entries = [entry for batch in exporter.batches for entry in batch]
    assert [type(e) for e in entries] == [SampledCall] * 7 + [ReadableSpan]
    assert all(len(batch) <= 3 for batch in exporter.batches)  # (9 spans: 3 calls of 3)
