"""Every ``tools/call`` the guard answers has a span (issue 27 item 3), refusals before routing included.

A call naming a tool no listing has (``unknown``), naming none or with ``params`` that are not an object
(``invalid``) is answered -32602 before it is routed: one SERVER span ``tools/call``, status ERROR, its kind
and code, inside the caller's trace. A call to a tool the operator denied is routed and refused by the
pipeline's first step (``policy_denied``): the call's span and its judgement's. No argument value in any.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcp_guard.config import parse_config
from mcp_guard.sessions.gateway import serve_session
from tests.harness import TIMEOUT, Client, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
META = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
SECRET = "sk-live-0123456789abcdef"


def only(spans: InMemorySpanExporter) -> ReadableSpan:
    (span,) = spans.get_finished_spans()
    return span


@pytest.mark.parametrize("command", ["wrap", "serve"])
@pytest.mark.parametrize(
    ("params", "kind", "tool"),
    [
        ({"name": "no_such_tool", "arguments": {"x": SECRET}, "_meta": META}, "unknown", "no_such_tool"),
        ({"arguments": {"x": SECRET}, "_meta": META}, "invalid", None),
        ({"name": 7, "_meta": META}, "invalid", None),
        ([SECRET], "invalid", None),
    ],
    ids=["unknown-tool", "no-name", "name-not-a-string", "params-not-an-object"],
)
async def test_a_call_refused_before_routing_has_its_span(
    command: str, params: Any, kind: str, tool: str | None, spans: InMemorySpanExporter
) -> None:
    upstream = ScriptedUpstream()
    async with running_guard(command, upstream) as client:
        answer = await client.request("tools/call", params, "call-1")
    assert answer["error"]["code"] == -32602 and upstream.calls() == []
    span = only(spans)
    assert span.name == "tools/call" and span.kind == SpanKind.SERVER
    assert span.status.status_code == StatusCode.ERROR
    expected = {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "jsonrpc.request.id": "call-1",
        "mcp_guard.outcome": "rejected",
        "error.type": kind,
        "mcp_guard.rejection.kind": kind,
        "rpc.response.status_code": "-32602",
    }
    if tool is not None:
        expected["gen_ai.tool.name"] = tool
    assert dict(span.attributes or {}) == expected
    if type(params) is dict:  # the caller's trace context was in _meta: the span sits in its trace
        assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT_ID
        assert span.context is not None and format(span.context.trace_id, "032x") == TRACE_ID
    assert SECRET not in repr(span.to_json())


async def test_a_call_to_a_denied_tool_has_its_span_and_its_judgements(spans: InMemorySpanExporter) -> None:
    data = {"mcpServers": {"s": {"command": "unused"}}, "guard": {"servers": {"s": {"deny": ["echo"]}}}}
    config = parse_config(json.dumps(data), environ={})
    upstream = ScriptedUpstream()
    client = Client()
    guard = serve_session(client.guard_link, config, connectors={"s": upstream.connect}, drain_timeout=0.2)
    with anyio.fail_after(TIMEOUT):  # (a hang guard: the session ends once the client closed its side)
        async with anyio.create_task_group() as tg:
            tg.start_soon(guard.run)
            await client.initialize()
            answer = await client.request("tools/call", {"name": name("serve", "echo"), "arguments": {"text": SECRET}})
            await client.link.close_send()
    assert answer["error"]["code"] == -32602 and upstream.calls() == []  # answered as an unknown tool would be
    finished = spans.get_finished_spans()
    assert sorted(s.kind.name for s in finished) == ["INTERNAL", "SERVER"]
    for span in finished:
        assert span.status.status_code == StatusCode.ERROR
        assert span.attributes is not None and span.attributes["mcp_guard.rejection.kind"] == "policy_denied"
        assert SECRET not in repr(span.to_json())


class Unlistable(ScriptedUpstream):
    """A server whose ``tools/list`` fails: the guard cannot list the tools to judge a call by."""

    async def handle(self, link: Any, message: dict[str, Any]) -> bool:
        if message["method"] == "tools/list":
            error = {"code": -32603, "message": "no tools today"}
            await self.send(link, {"jsonrpc": "2.0", "id": message["id"], "error": error})
            return True
        return await super().handle(link, message)


async def test_a_call_answered_because_the_tools_could_not_be_listed_has_its_span(spans: InMemorySpanExporter) -> None:
    upstream = Unlistable()
    async with running_guard("wrap", upstream) as client:
        answer = await client.request("tools/call", {"name": "echo", "arguments": {"text": SECRET}, "_meta": META})
    assert answer["error"]["code"] == -32603 and upstream.calls() == []
    span = only(spans)
    assert span.status.status_code == StatusCode.ERROR and span.parent is not None
    assert span.attributes is not None
    assert span.attributes["error.type"] == "listing_failed" and span.attributes["rpc.response.status_code"] == "-32603"
    assert span.attributes["gen_ai.tool.name"] == "echo"


SEARCH = {
    "name": "search",
    "inputSchema": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "filters": {"type": "object"}},
        "required": ["query"],
    },
}


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_calls_a_hosts_mapping_refuses_have_their_spans(command: str, spans: InMemorySpanExporter) -> None:
    """``guard.presentFor``: a name the host was not shown (-32602) and arguments that cannot be mapped back
    (a tool error, ``validation``, no JSON-RPC error code) are answered before routing."""
    upstream = ScriptedUpstream([SEARCH])
    async with running_guard(command, upstream, host="openai-strict") as client:
        await client.request("tools/list")
        bad = await client.call(name(command, "search"), {"query": "q", "filters": "{" + SECRET})
        unknown = await client.call(name(command, "nope"), {})
    assert bad["result"]["isError"] is True and unknown["error"]["code"] == -32602 and upstream.calls() == []
    mapped_back, not_shown = [s.attributes or {} for s in spans.get_finished_spans()]
    assert mapped_back["error.type"] == "validation" and "rpc.response.status_code" not in mapped_back
    assert not_shown["error.type"] == "unknown" and not_shown["rpc.response.status_code"] == "-32602"
    assert not [s for s in spans.get_finished_spans() if SECRET in repr(s.to_json())]
