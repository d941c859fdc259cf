"""``--otel`` end to end (issue 27 item 3): the real command line exports its spans over OTLP/HTTP.

A receiver on loopback (``POST /v1/traces``, protobuf ``ExportTraceServiceRequest``, as an OpenTelemetry
Collector's ``otlphttp`` receiver takes them) collects what ``wrap --otel`` (configured by the standard
``OTEL_EXPORTER_OTLP_ENDPOINT`` and ``OTEL_SERVICE_NAME`` variables) and ``serve`` (``guard.otel`` in its
config) send once the client hangs up; the tiny upstream answers each call with the ``traceparent`` it got
in ``_meta``, so the test sees the trace context pass through wrap's stdio hot path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01"
SECRET = "hunter2-secret-value"

UPSTREAM = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method = m.get("method")
    if method == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "tiny", "version": "1"}}
    elif method == "tools/list":
        r = {"tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}},
                        "required": ["x"], "additionalProperties": False}}]}
    elif method == "tools/call":
        parent = m["params"].get("_meta", {}).get("traceparent", "none")
        r = {"content": [{"type": "text", "text": parent}], "isError": False}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    sys.stdout.flush()
"""


class Receiver:
    """An OTLP/HTTP traces receiver on a free loopback port: the spans it was sent, as dicts."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.services: set[str] = set()
        self.content_types: set[str] = set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                receiver.content_types.add(self.headers.get("Content-Type", ""))
                request = ExportTraceServiceRequest.FromString(body)
                for resource_spans in request.resource_spans:
                    for attribute in resource_spans.resource.attributes:
                        if attribute.key == "service.name":
                            receiver.services.add(attribute.value.string_value)
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            receiver.spans.append(
                                {
                                    "name": span.name,
                                    "kind": span.kind,
                                    "trace_id": span.trace_id.hex(),
                                    "status": span.status.code,
                                    "attributes": {a.key: str(a.value) for a in span.attributes},
                                }
                            )
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver()
    thread = threading.Thread(target=got.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        got.server.shutdown()
        got.server.server_close()


def run_session(args: list[str], env: dict[str, str], tool: str) -> list[dict[str, Any]]:
    """Run ``mcp-guard ARGS`` on stdio: initialize, list, a traced valid call, an invalid one holding
    :data:`SECRET`; close stdin and wait for the exit (the batched spans are flushed then)."""
    requests: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": tool, "arguments": {"x": "hi"}, "_meta": {"traceparent": TRACEPARENT}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": tool, "arguments": {"x": 1, "y": SECRET}}},
    ]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_guard", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OTEL_BSP_SCHEDULE_DELAY": "50", **env},
    )
    assert process.stdin is not None and process.stdout is not None
    responses = []
    try:
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            if "id" in request:
                responses.append(json.loads(process.stdout.readline()))
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr
    assert SECRET not in stderr
    return responses


def check_spans(receiver: Receiver, responses: list[dict[str, Any]]) -> None:
    forwarded_parent = responses[2]["result"]["content"][0]["text"]
    assert forwarded_parent.startswith(f"00-{TRACE_ID}-") and forwarded_parent != TRACEPARENT
    assert responses[3]["result"]["isError"] is True
    # valid call: SERVER (kind 2), INTERNAL (1), CLIENT (3); refused: SERVER and INTERNAL
    assert sorted(s["kind"] for s in receiver.spans) == [1, 1, 2, 2, 3]
    assert len({s["trace_id"] for s in receiver.spans if s["trace_id"] == TRACE_ID}) == 1
    assert sum(s["trace_id"] == TRACE_ID for s in receiver.spans) == 3
    assert receiver.content_types == {"application/x-protobuf"}
    assert not [s for s in receiver.spans if SECRET in json.dumps(s)]


def test_wrap_otel_exports_to_the_endpoint_the_variables_name(tmp_path: Path, receiver: Receiver) -> None:
    server = tmp_path / "tiny.py"
    server.write_text(UPSTREAM)
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_SERVICE_NAME": "guard-under-test"}
    responses = run_session(["wrap", "--otel", "--", sys.executable, str(server)], env, "echo")
    check_spans(receiver, responses)
    assert receiver.services == {"guard-under-test"}


def test_serve_exports_to_the_endpoint_of_guard_otel(tmp_path: Path, receiver: Receiver) -> None:
    server = tmp_path / "tiny.py"
    server.write_text(UPSTREAM)
    config = {
        "mcpServers": {"s": {"command": sys.executable, "args": [str(server)]}},
        "guard": {"otel": {"endpoint": f"{receiver.url}/v1/traces", "serviceName": "gateway"}},
    }
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "", "OTEL_SERVICE_NAME": ""}
    responses = run_session(["serve", "--config", str(path)], env, "s__echo")
    check_spans(receiver, responses)
    assert receiver.services == {"gateway"}
