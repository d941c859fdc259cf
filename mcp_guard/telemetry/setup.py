"""Turning tracing on for the process: the SDK's ``TracerProvider`` and the OTLP/HTTP exporter.

:func:`start_tracing` builds a provider of the guard's own (``opentelemetry-sdk``; the process-wide
default provider is left alone, so the mcp SDK's own instrumentation stays a no-op), its spans batched (the
SDK's ``BatchSpanProcessor``, a call's spans one entry: :class:`~.batch.CallBatchSpanProcessor`) to an
``OTLPSpanExporter`` (``opentelemetry-exporter-otlp-proto-http``, protobuf over HTTP, the collector's port 4318;
:class:`~.export.CallSpanExporter`, its encoding made cheaper), and installs :class:`~.spans.CallSpans` over it
as the pipelines' tracer (``calls.observer.install_tracer``).

The standard variables are read by the SDK itself (OpenTelemetry specification, "Environment Variable
Specification" and "OTLP Exporter Configuration", read 2026-12-04): ``OTEL_EXPORTER_OTLP_ENDPOINT``
(``/v1/traces`` appended) or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (as is), ``OTEL_EXPORTER_OTLP_HEADERS``,
``OTEL_EXPORTER_OTLP_TIMEOUT``, ``OTEL_EXPORTER_OTLP_COMPRESSION``, ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_BSP_*`` (the batch processor) and ``OTEL_TRACES_SAMPLER``. What
``guard.otel`` sets (an endpoint, a service name) applies only where the variable is not set.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter

from ..calls.observer import install_tracer
from ..peer.http_headers import propagate_trace_context
from .batch import CallBatchSpanProcessor
from .spans import CallSpans

if TYPE_CHECKING:
    from ..otel_config import OtelSettings

__all__ = ["DEFAULT_SERVICE_NAME", "start_tracing", "stop_tracing"]

DEFAULT_SERVICE_NAME: Final = "mcp-guard"
"""``service.name`` when neither ``OTEL_SERVICE_NAME`` nor ``guard.otel.serviceName`` names one."""

_ENDPOINT_VARIABLES: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


class _Resource(Resource):
    """A ``Resource`` whose hash is computed once: the OTLP encoder groups every span by its resource, and
    ``Resource.__hash__`` serializes the attributes to JSON on each call (7 µs of a span's 23 µs of encoding,
    ``opentelemetry-exporter-otlp-proto-common`` 1.45.2). A resource never changes once made."""

    def __init__(self, resource: Resource) -> None:
        super().__init__(resource.attributes, resource.schema_url)
        self._hash = super().__hash__()

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return other is self or super().__eq__(other)


def start_tracing(settings: OtelSettings | None = None, exporter: SpanExporter | None = None) -> TracerProvider:
    """Trace every ``tools/call`` of the pipelines made from now on; returns the provider (flush it at exit:
    :func:`stop_tracing`).

    Args:
        settings: ``guard.otel`` (or ``None``: the variables and the defaults only).
        exporter: where spans go (default: :class:`~.export.CallSpanExporter`, the library's ``OTLPSpanExporter``
            configured by the variables; tests give an ``InMemorySpanExporter``).
    """
    service = os.environ.get("OTEL_SERVICE_NAME") or (settings.service_name if settings else None)
    resource = _Resource(Resource.create({SERVICE_NAME: service or DEFAULT_SERVICE_NAME}))
    provider = TracerProvider(resource=resource)
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return provider  # (the SDK's switch: its tracers trace nothing; neither does the guard)
    if exporter is None:
        from .export import CallSpanExporter

        endpoint = None
        if settings is not None and settings.endpoint and not any(os.environ.get(v) for v in _ENDPOINT_VARIABLES):
            endpoint = settings.endpoint
        exporter = CallSpanExporter(endpoint=endpoint)
    processor = CallBatchSpanProcessor(exporter)
    provider.add_span_processor(processor)
    install_tracer(CallSpans(provider, processor))
    propagate_trace_context(True)
    return provider


def stop_tracing(provider: TracerProvider) -> None:
    """Stop tracing: no tracer for new pipelines, the spans still batched exported (bounded by the batch
    processor's export timeout, ``OTEL_BSP_EXPORT_TIMEOUT``), the provider shut down."""
    install_tracer(None)
    propagate_trace_context(False)
    provider.shutdown()
