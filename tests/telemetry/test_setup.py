"""Turning tracing on and off (``telemetry.setup``), and the sampler's say (issue 27 item 3).

``start_tracing`` installs the tracer and mirrors trace context into HTTP upstream headers; ``stop_tracing``
undoes both and exports what is batched; ``OTEL_SDK_DISABLED=true`` traces nothing. A call the sampler drops
makes no span, yet the upstream still gets the trace context (not sampled: flags ``00``), in the caller's
trace, so the server's sampling follows the guard's decision (the flags as the SDK's own non-recording span has them).
"""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_guard.calls import observer
from mcp_guard.peer import http_headers
from mcp_guard.telemetry.setup import start_tracing, stop_tracing
from tests.harness import ScriptedUpstream, running_guard

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


def tracing_on() -> tuple[bool, bool]:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": {"traceparent": TRACEPARENT}}}
    headers, _, _ = http_headers.post_headers(
        message, session_id=None, protocol_version=None, modern_version=None, header_maps={}
    )
    return observer.tracer() is not None, "traceparent" in headers


async def test_start_and_stop_turn_the_tracer_and_the_trace_headers_on_and_off() -> None:
    exporter = InMemorySpanExporter()
    provider = start_tracing(exporter=exporter)
    try:
        assert tracing_on() == (True, True)
        async with running_guard("wrap", ScriptedUpstream()) as client:
            await client.call("echo", {"text": "hi"})
    finally:
        stop_tracing(provider)
    assert tracing_on() == (False, False)
    assert len(exporter.get_finished_spans()) == 3  # batched, exported when tracing stopped
    (span,) = [s for s in exporter.get_finished_spans() if s.kind.name == "SERVER"]
    assert span.resource.attributes["service.name"] == "mcp-guard"


async def test_otel_sdk_disabled_traces_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    provider = start_tracing(exporter=InMemorySpanExporter())
    try:
        assert tracing_on() == (False, False)
    finally:
        stop_tracing(provider)


@pytest.mark.parametrize("meta", [{"traceparent": TRACEPARENT}, None], ids=["callers-trace", "new-trace"])
async def test_a_call_the_sampler_drops_makes_no_span_and_passes_an_unsampled_context(
    monkeypatch: pytest.MonkeyPatch, meta: dict[str, str] | None
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    exporter = InMemorySpanExporter()
    provider = start_tracing(exporter=exporter)
    upstream = ScriptedUpstream()
    try:
        async with running_guard("wrap", upstream) as client:
            params = {"name": "echo", "arguments": {"text": "hi"}, **({"_meta": meta} if meta else {})}
            answer = await client.request("tools/call", params)
            assert answer["result"]["content"][0]["text"] == "echo ok"
    finally:
        stop_tracing(provider)
    assert exporter.get_finished_spans() == ()
    (forwarded,) = upstream.calls()
    version, trace_id, span_id, flags = forwarded["params"]["_meta"]["traceparent"].split("-")
    assert version == "00" and span_id != "0" * 16
    assert int(flags, 16) & 1 == 0  # not sampled (a new trace's id is also flagged random: W3C level 2, 0x02)
    assert (trace_id == TRACE_ID) is (meta is not None)
