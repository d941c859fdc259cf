"""The in-memory tracer of the telemetry tests: ``CallSpans`` over the SDK's ``InMemorySpanExporter``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_guard.calls.observer import install_tracer
from mcp_guard.peer.http_headers import propagate_trace_context
from mcp_guard.telemetry.spans import CallSpans


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Every span of the test's calls, exported at once as each ends (and the HTTP upstream's trace headers
    on, as ``start_tracing`` turns them on)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    processor = SimpleSpanProcessor(exporter)
    provider.add_span_processor(processor)
    install_tracer(CallSpans(provider, processor))
    propagate_trace_context(True)
    try:
        yield exporter
    finally:
        install_tracer(None)
        propagate_trace_context(False)
        provider.shutdown()
