"""OpenTelemetry traces of ``tools/call`` (issue 27 item 3; docs/tracing.md): the ``otel`` extra's room.

- :mod:`.spans`: :class:`~.spans.CallSpans`, the pipeline's :class:`~mcp_guard.calls.observer.CallTracer`
  over an OpenTelemetry ``Tracer``: one SERVER span per call, children for the judgement and the
  upstream round trip.
- :mod:`.batch`: :class:`~.batch.CallBatchSpanProcessor`, the SDK's batch span processor, a sampled call's
  spans one entry of its queue (:class:`~.spans.SampledCall`, encoded as its spans by the exporter).
- :mod:`.export`: :class:`~.export.CallSpanExporter`, the library's OTLP/HTTP exporter whose batches are
  encoded with the pieces that repeat (span shapes, attributes, resource and scope) encoded once.
- :mod:`.setup`: :func:`~.setup.start_tracing`, the SDK's provider and the OTLP/HTTP exporter (the
  standard ``OTEL_*`` variables), installed for the process.

Nothing here is imported unless tracing is turned on (``--otel``, ``guard.otel``): ``wrap`` on stdio
stays lean (tests/fronts/test_lean_imports.py). This package imports nothing of its own.
"""
