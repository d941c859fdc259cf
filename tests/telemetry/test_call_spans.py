"""Spans of ``tools/call`` through ``wrap`` and ``serve`` (issue 27 item 3), read with the SDK's in-memory exporter.

One SERVER span per call, a child of the caller's ``params._meta.traceparent``; an INTERNAL child for the
judgement and a CLIENT child for the upstream round trip, whose context reaches the upstream in the
forwarded request's ``_meta``; status ERROR and the refusal's kind and pointers on a refused call; no
argument value anywhere in the spans; no ``_meta`` added when tracing is off.
"""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from tests.harness import ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

COMMANDS = ["wrap", "serve"]
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
SECRET = "sk-live-0123456789abcdef"


def by_kind(finished: tuple[ReadableSpan, ...], kind: SpanKind) -> ReadableSpan:
    (span,) = [s for s in finished if s.kind == kind]
    return span


def call_params(command: str, arguments: Any, meta: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name(command, "echo"), "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return params


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_forwarded_call_is_one_server_span_inside_the_callers_trace(
    command: str, spans: InMemorySpanExporter
) -> None:
    upstream = ScriptedUpstream()
    meta = {"traceparent": TRACEPARENT, "tracestate": "vendor=1", "progressToken": 7}
    async with running_guard(command, upstream) as client:
        answer = await client.request("tools/call", call_params(command, {"text": "hi"}, meta))
    assert answer["result"]["content"][0]["text"] == "echo ok"
    finished = spans.get_finished_spans()
    assert len(finished) == 3
    server = by_kind(finished, SpanKind.SERVER)
    judge = by_kind(finished, SpanKind.INTERNAL)
    client_span = by_kind(finished, SpanKind.CLIENT)
    assert server.context is not None and server.parent is not None
    assert format(server.context.trace_id, "032x") == TRACE_ID
    assert format(server.parent.span_id, "016x") == PARENT_ID
    assert server.context.trace_state.get("vendor") == "1"
    for child in (judge, client_span):
        assert child.parent is not None and child.parent.span_id == server.context.span_id
    assert server.name == "tools/call echo" and client_span.name == "tools/call echo"
    assert dict(server.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "jsonrpc.request.id": "2",
        "mcp_guard.outcome": "ok",
        **({"mcp_guard.server": "s"} if command == "serve" else {}),  # (wrap names no server)
    }
    assert server.status.status_code == StatusCode.UNSET
    # The upstream got the CLIENT span's context, and every other member of _meta as the client sent it.
    (forwarded,) = upstream.calls()
    sent = forwarded["params"]["_meta"]
    assert client_span.context is not None
    assert sent["traceparent"] == f"00-{TRACE_ID}-{client_span.context.span_id:016x}-01"
    assert sent["tracestate"] == "vendor=1" and sent["progressToken"] == 7


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_refused_call_has_error_status_its_kind_and_pointers_and_no_value(
    command: str, spans: InMemorySpanExporter
) -> None:
    upstream = ScriptedUpstream()
    async with running_guard(command, upstream) as client:
        arguments = {"text": {"token": SECRET}, SECRET: SECRET}
        answer = await client.request("tools/call", call_params(command, arguments, {"traceparent": TRACEPARENT}))
    assert answer["result"]["isError"] is True
    assert upstream.calls() == []
    finished = spans.get_finished_spans()
    assert sorted(s.kind.name for s in finished) == ["INTERNAL", "SERVER"]  # never forwarded: no CLIENT span
    server = by_kind(finished, SpanKind.SERVER)
    judge = by_kind(finished, SpanKind.INTERNAL)
    for span in (server, judge):
        attributes = span.attributes or {}
        assert span.status.status_code == StatusCode.ERROR
        assert attributes["error.type"] == "validation"
        assert attributes["mcp_guard.rejection.kind"] == "validation"
        # The undeclared key (the client's data) is withheld as the log withholds it.
        assert sorted(attributes["mcp_guard.rejection.pointers"]) == ["/text", "/…"]  # type: ignore[arg-type]
    assert server.attributes is not None and server.attributes["mcp_guard.outcome"] == "rejected"
    everything = [repr(s.to_json()) for s in finished]
    assert not [text for text in everything if SECRET in text or "sk-live" in text]


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_call_without_trace_context_starts_a_trace_and_a_tool_error_is_an_error(
    command: str, spans: InMemorySpanExporter
) -> None:
    async def tool_error(upstream: ScriptedUpstream, link: Any, message: dict[str, Any]) -> None:
        result = {"content": [{"type": "text", "text": SECRET}], "isError": True}
        await upstream.send(link, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    upstream = ScriptedUpstream(on_call=tool_error)
    async with running_guard(command, upstream) as client:
        await client.call(name(command, "echo"), {"text": SECRET})
    finished = spans.get_finished_spans()
    server = by_kind(finished, SpanKind.SERVER)
    client_span = by_kind(finished, SpanKind.CLIENT)
    assert server.parent is None
    (forwarded,) = upstream.calls()
    assert set(forwarded["params"]["_meta"]) == {"traceparent"}  # the guard's round trip: its trace begins here
    for span in (server, client_span):
        assert span.status.status_code == StatusCode.ERROR
        assert span.attributes is not None
        assert span.attributes["error.type"] == "tool_error" and span.attributes["mcp_guard.outcome"] == "is_error"
    assert not [s for s in finished if SECRET in repr(s.to_json())]


@pytest.mark.parametrize("command", COMMANDS)
async def test_without_a_tracer_nothing_is_added_to_the_request(command: str) -> None:
    upstream = ScriptedUpstream()
    async with running_guard(command, upstream) as client:
        await client.call(name(command, "echo"), {"text": "hi"})
        await client.request("tools/call", call_params(command, {"text": "hi"}, {"traceparent": TRACEPARENT}))
    first, second = upstream.calls()
    assert "_meta" not in first["params"]
    assert second["params"]["_meta"] == {"traceparent": TRACEPARENT}


@pytest.mark.parametrize("meta", [{"traceparent": "00-zz-00-01"}, {"traceparent": 5}, "not an object"])
async def test_a_bad_trace_context_starts_a_new_trace(meta: Any, spans: InMemorySpanExporter) -> None:
    upstream = ScriptedUpstream()
    async with running_guard("wrap", upstream) as client:
        await client.request("tools/call", call_params("wrap", {"text": "hi"}, meta))
    server = by_kind(spans.get_finished_spans(), SpanKind.SERVER)
    assert server.parent is None
    (forwarded,) = upstream.calls()
    if type(meta) is dict:
        assert forwarded["params"]["_meta"]["traceparent"].startswith("00-")
    else:
        assert forwarded["params"]["_meta"] == meta  # not an object: relayed as it came


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


async def test_a_2026_07_28_call_keeps_its_envelope_and_gets_the_trace_context(spans: InMemorySpanExporter) -> None:
    """``wrap`` only: the harness's scripted upstream speaks the handshake era, which ``serve`` does not offer
    a 2026-07-28 client (``tests/fronts/test_serve_modern.py`` runs real servers for that)."""
    command = "wrap"
    upstream = ScriptedUpstream()
    meta = {**MODERN_META, "traceparent": TRACEPARENT}
    async with running_guard(command, upstream, initialize=False) as client:
        await client.request("tools/list", {"_meta": MODERN_META})
        answer = await client.request("tools/call", call_params(command, {"text": "hi"}, meta))
    assert answer["result"]["content"][0]["text"] == "echo ok"
    server = by_kind(spans.get_finished_spans(), SpanKind.SERVER)
    client_span = by_kind(spans.get_finished_spans(), SpanKind.CLIENT)
    assert server.parent is not None and format(server.parent.span_id, "016x") == PARENT_ID
    (forwarded,) = upstream.calls()
    sent = forwarded["params"]["_meta"]
    assert client_span.context is not None
    assert sent["traceparent"] == f"00-{TRACE_ID}-{client_span.context.span_id:016x}-01"
    assert {k: v for k, v in sent.items() if k != "traceparent"} == MODERN_META  # the envelope as the client sent it
