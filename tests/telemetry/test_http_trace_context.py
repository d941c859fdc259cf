"""W3C trace context over the HTTP front and to an HTTP upstream (issue 27 item 3), with the in-memory exporter.

On ``wrap --http`` and ``serve --http`` (the front in process, behind httpx's ASGI transport, as
``tests/auth/test_front.py`` drives it), in both eras: a ``traceparent``/``tracestate`` request header is the
parent of the call's SERVER span when ``params._meta`` carries none; when both do, ``_meta`` is the parent and
the header's context a link (the MCP semantic conventions); ``mcp.session.id`` is the handshake-era session's
id and absent in the 2026-07-28 era. An HTTP upstream gets the CLIENT span's context as its ``traceparent``
header (and in ``_meta``). No header's text but the trace context reaches a span.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_guard.config import GatewayConfig, parse_config
from mcp_guard.fronts.http import HttpConfig
from tests.auth.test_front import ACCEPT, ENVELOPE, INIT, MODERN, RECORDING, body, call, front, post
from tests.e2e.test_http_upstream import http_server

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
HEADER_PARENT = "00f067aa0ba902b7"
META_TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
META_PARENT = "b7ad6b7169203331"
SECRET = "sk-live-0123456789abcdef"


def traced(parent: str = HEADER_PARENT, trace_id: str = TRACE_ID) -> dict[str, str]:
    return {"traceparent": f"00-{trace_id}-{parent}-01", "tracestate": "vendor=1"}


def servers(finished: tuple[ReadableSpan, ...]) -> list[ReadableSpan]:
    return [s for s in finished if s.kind == SpanKind.SERVER]


async def open_session(client: httpx.AsyncClient) -> dict[str, str]:
    answer = await post(client, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}, ACCEPT)
    assert answer.status_code == 200, answer.text
    headers = {**ACCEPT, "mcp-session-id": answer.headers["mcp-session-id"]}
    await post(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


def modern(name: str) -> dict[str, str]:
    return {**ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}


def gateway(url: str | None = None) -> GatewayConfig:
    server = {"url": url} if url else {"command": sys.executable, "args": [str(RECORDING)]}
    return parse_config(json.dumps({"mcpServers": {"r": server}, "guard": {"profile": "standard"}}))


def assert_child_of(span: ReadableSpan, trace_id: str, parent: str) -> None:
    assert span.context is not None and span.parent is not None
    assert format(span.context.trace_id, "032x") == trace_id
    assert format(span.parent.span_id, "016x") == parent


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_the_http_traceparent_header_is_the_parent_and_meta_wins_with_a_link(
    command: str, spans: InMemorySpanExporter
) -> None:
    tool = "bash" if command == "wrap" else "r__bash"
    async with front(HttpConfig(), gateway() if command == "serve" else None) as client:
        session = await open_session(client)
        for request_id in (2, 3):  # (the first is held while the tools are listed, the second on the hot path)
            answer = await post(client, call(request_id, tool, {"command": "ls"}), {**session, **traced()})
            assert answer.status_code == 200 and body(answer)["result"]["isError"] is False, answer.text
        meta = {"traceparent": f"00-{META_TRACE_ID}-{META_PARENT}-01"}
        answer = await post(client, call(4, tool, {"command": "ls"}, meta), {**session, **traced()})
        assert answer.status_code == 200, answer.text
        answer = await post(client, call(5, tool, {"command": "ls"}, ENVELOPE), {**modern(tool), **traced("1" * 16)})
        assert answer.status_code == 200 and "result" in body(answer), answer.text
        planted = {**session, **traced(), "x-api-key": SECRET}
        answer = await post(client, call(6, tool, {"command": SECRET}), planted)
        assert answer.status_code == 200, answer.text
    first, second, both, modern_era, _planted = servers(spans.get_finished_spans())
    for span in (first, second):
        assert_child_of(span, TRACE_ID, HEADER_PARENT)
        assert span.context is not None and span.context.trace_state.get("vendor") == "1"
        assert span.attributes is not None and span.attributes["mcp.session.id"] == session["mcp-session-id"]
        assert span.links == ()
    assert_child_of(both, META_TRACE_ID, META_PARENT)  # _meta wins...
    (link,) = both.links  # ...and the transport's context is linked
    assert format(link.context.trace_id, "032x") == TRACE_ID and format(link.context.span_id, "016x") == HEADER_PARENT
    assert_child_of(modern_era, TRACE_ID, "1" * 16)
    assert modern_era.attributes is not None and "mcp.session.id" not in modern_era.attributes  # no session
    assert not [s for s in spans.get_finished_spans() if SECRET in repr(s.to_json())]  # no value, no other header


@pytest.mark.parametrize("header", ["00-zz-00-01", f"00-{TRACE_ID}-{'0' * 16}-01", SECRET])
async def test_a_bad_traceparent_header_starts_a_trace_and_is_never_recorded(
    header: str, spans: InMemorySpanExporter
) -> None:
    async with front(HttpConfig()) as client:
        session = await open_session(client)
        answer = await post(client, call(2, "bash", {"command": "ls"}), {**session, "traceparent": header})
        assert answer.status_code == 200, answer.text
    (server,) = servers(spans.get_finished_spans())
    assert server.parent is None and server.links == ()
    assert header not in repr(server.to_json())


def test_the_front_notes_a_requests_origin_only_while_tracing(spans: InMemorySpanExporter) -> None:
    from mcp_guard.calls.observer import Origin, install_tracer
    from mcp_guard.fronts.http.app import request_origin

    headers = {**ACCEPT, **traced(), "x-api-key": SECRET}
    assert request_origin(headers, "abc") == Origin("abc", f"00-{TRACE_ID}-{HEADER_PARENT}-01", "vendor=1")
    install_tracer(None)
    assert request_origin(headers, "abc") is None


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
async def test_an_http_upstream_gets_the_round_trips_context_as_its_traceparent_header(
    era: str, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    """serve over the SDK's streamable HTTP server (``tests/e2e/http_server.py`` records each request's trace
    headers)."""
    with http_server(tmp_path) as upstream:
        async with front(HttpConfig(), gateway(upstream.url)) as client:
            if era == "handshake":
                session = await open_session(client)
                answer = await post(client, call(2, "r__add", {"a": 1, "b": 2}), {**session, **traced()})
            else:
                answer = await post(
                    client, call(2, "r__add", {"a": 1, "b": 2}, ENVELOPE), {**modern("r__add"), **traced()}
                )
            assert answer.status_code == 200 and "result" in body(answer), answer.text
        records = upstream.records()
    (client_span,) = [s for s in spans.get_finished_spans() if s.kind == SpanKind.CLIENT]
    assert client_span.context is not None
    carried = [r["headers"] for r in records if "traceparent" in r.get("headers", {})]
    assert carried == [
        {**carried[0], "traceparent": f"00-{TRACE_ID}-{client_span.context.span_id:016x}-01", "tracestate": "vendor=1"}
    ]


def test_trace_headers_are_mirrored_only_while_tracing() -> None:
    from mcp_guard.peer.http_headers import post_headers, propagate_trace_context

    message: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "x", "_meta": {"traceparent": f"00-{TRACE_ID}-{HEADER_PARENT}-01", "tracestate": "a\nb"}},
    }

    def headers() -> dict[str, str]:
        return post_headers(message, session_id=None, protocol_version=None, modern_version=None, header_maps={})[0]

    assert "traceparent" not in headers()
    propagate_trace_context(True)
    try:
        sent = headers()
    finally:
        propagate_trace_context(False)
    assert sent["traceparent"] == f"00-{TRACE_ID}-{HEADER_PARENT}-01"
    assert "tracestate" not in sent  # not a field value the guard sends (a control character): left out
