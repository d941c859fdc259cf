"""The batch span processor of the guard's traces: the SDK's, queueing a call's spans as one entry.

:class:`CallBatchSpanProcessor` is the SDK's ``BatchSpanProcessor`` (``opentelemetry-sdk`` 1.45.2: its worker
thread, schedule delay, export timeout, queue, fork handling, flushing and shutting down, its ``OTEL_BSP_*``
variables and their defaults), with one addition: :meth:`~CallBatchSpanProcessor.call_ended` takes a sampled
call's record (:class:`~.spans.SampledCall`: its judgement's, round trip's and own spans, not made) as one
queue entry, where ``on_end`` takes one span. A call's spans then cost its thread one entry instead of three
spans made and queued (each entry asks for the process id, the SDK's check for a fork), and the export thread
encodes them from the record (``telemetry.export``), with the garbage collector walking one object a call
while it waits.

What an entry holds (one to three spans: a span handed to ``on_end`` is one, a call up to three) changes what
the sizes count: the SDK's queue and batch take ``OTEL_BSP_MAX_QUEUE_SIZE`` and
``OTEL_BSP_MAX_EXPORT_BATCH_SIZE`` divided by three (:data:`SPANS_PER_CALL`; at least one) entries, so that a
batch never holds more spans than the variable says (the specification's ``maxExportBatchSize``: "the maximum
batch size of every export"), nor the queue more than its size: the defaults, 512 and 2048 spans, batch 170
entries (510 spans of calls that were forwarded) and queue 682.

The exporter gets lists of spans as always when it is the guard's (:class:`~.export.CallSpanExporter`, which
encodes records as their spans), or any other (tests: an ``InMemorySpanExporter``): each record made into its
spans first (:meth:`~.spans.SampledCall.made_spans`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from .spans import SampledCall

__all__ = ["SPANS_PER_CALL", "CallBatchSpanProcessor"]

SPANS_PER_CALL: Final = 3
"""The most spans a call's record holds (the call's, its judgement's, its round trip's)."""


class _Spans(SpanExporter):
    """The exporter of the SDK's batches of entries (spans and records): the guard's own is given them as they
    are (it encodes a record as its spans); any other, spans only (each record's made)."""

    def __init__(self, exporter: SpanExporter) -> None:
        self.exporter = exporter
        self.takes_records = getattr(exporter, "takes_records", False) is True

    def export(self, spans: Sequence[ReadableSpan | SampledCall]) -> SpanExportResult:
        if self.takes_records:
            return self.exporter.export(spans)  # type: ignore[arg-type]
        made: list[ReadableSpan] = []
        for entry in spans:
            if type(entry) is SampledCall:
                made.extend(entry.made_spans())
            else:
                made.append(entry)  # type: ignore[arg-type]
        return self.exporter.export(made)

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)


class CallBatchSpanProcessor(BatchSpanProcessor):
    """The SDK's ``BatchSpanProcessor`` over ``exporter``, its sizes read from the ``OTEL_BSP_*`` variables (or
    its defaults) as it reads them, counted in entries (see the module), and :meth:`call_ended`.

    Raises:
        ValueError: sizes or delay the SDK refuses (not positive; a batch larger than the queue).
    """

    def __init__(self, exporter: SpanExporter) -> None:
        # (the SDK's own readings of the OTEL_BSP_* variables, its defaults and its checks: untyped)
        sdk: Any = BatchSpanProcessor
        queue, delay = sdk._default_max_queue_size(), sdk._default_schedule_delay_millis()
        batch, timeout = sdk._default_max_export_batch_size(), sdk._default_export_timeout_millis()
        sdk._validate_arguments(queue, delay, batch)
        super().__init__(
            _Spans(exporter),
            max_queue_size=max(1, queue // SPANS_PER_CALL),
            schedule_delay_millis=delay,
            max_export_batch_size=max(1, batch // SPANS_PER_CALL),
            export_timeout_millis=timeout,
        )
        self.exporter = exporter
        self.call_ended = self._batch_processor.emit
        """Queue a sampled call's record (:class:`~.spans.SampledCall`, ended), one entry: the SDK's own
        ``emit``, which ``on_end`` calls for a span (sampled, always: a call the sampler drops has no record)."""
