"""``wrap`` over a real SDK server (``MCPServer``, pydantic models as results: ``outputSchema`` and
``structuredContent``), both protocol eras, every ``--outputs`` mode, over stdio (issue 15)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SERVER = Path(__file__).with_name("structured_server.py")
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "structured-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def session(profile: str, outputs: str, era: str, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Run ``wrap`` over the server, make ``calls`` in ``era``, return their results (or error responses)."""
    argv = [sys.executable, "-m", "mcp_guard", "wrap", "--profile", profile, "--outputs", outputs, "--"]
    proc = subprocess.Popen(
        [*argv, sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(message: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        while True:
            answer = json.loads(proc.stdout.readline())
            if answer.get("id") == message["id"]:
                return answer

    try:
        if era == "handshake":
            init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        out = []
        for i, (tool, arguments) in enumerate(calls, 1):
            params: dict[str, Any] = {"name": tool, "arguments": arguments}
            if era == "modern":
                params["_meta"] = MODERN
            answer = ask({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
            out.append(answer.get("result", answer))
        return out
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)


ERAS = pytest.mark.parametrize("era", ["handshake", "modern"])
CALLS = [("forecast", {"city": "Oslo"}), ("reading", {}), ("fail", {})]


@ERAS
def test_enforce_passes_conforming_models_and_refuses_an_unenforceable_output_schema(era: str) -> None:
    forecast, reading, fail = session("standard", "enforce", era, CALLS)
    assert forecast["structuredContent"] == {"city": "Oslo", "temperature": 21.5, "sunny": True}
    assert reading["isError"] is True  # standard cannot enforce the nested model's $ref/$defs
    rejection = reading["_meta"]["mcp-guard/rejection"]
    assert rejection["kind"] == "unsupported_capability" and rejection["schema"] == "outputSchema"
    assert fail["isError"] is True and "mcp-guard/rejection" not in fail.get("_meta", {})  # never checked


@ERAS
def test_extended_enforces_the_nested_model(era: str) -> None:
    _forecast, reading, _fail = session("extended", "enforce", era, CALLS)
    assert reading["structuredContent"] == {"place": {"name": "x"}, "value": 3}


@ERAS
def test_report_notes_instead_of_refusing(era: str) -> None:
    forecast, reading, _fail = session("standard", "report", era, CALLS)
    assert forecast["_meta"]["mcp-guard/output"] == {"checked": True, "valid": True, "issues": []}
    assert reading["structuredContent"] == {"place": {"name": "x"}, "value": 3}
    assert reading["_meta"]["mcp-guard/output"]["checked"] is False
