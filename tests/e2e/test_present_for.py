"""``wrap --present-for`` and ``serve --present-for`` end to end (issue 24, item 3): real processes, the
recording upstream (``recording_server.py``, which records every line it gets, byte for byte), its tools
listed a page at a time. What reaches the upstream is read back from its record: calls with ``null``s for
optional fields reach it without them, and invalid calls never reach it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.cli import PRESENT_FOR_CHOICES
from mcp_guard.hosts import HOST_NAMES, check_schema, host_profile

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
RECORDING_SERVER = HERE / "recording_server.py"
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
TOOLS = [
    {
        "name": "search",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": 20, "pattern": "^[a-z]+$"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "filters": {"type": "object"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {"name": "fs.read", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
]


def run(args: list[str], messages: list[dict[str, Any]], tmp_path: Path) -> tuple[dict[Any, Any], list[Any]]:
    """Run ``mcp-guard ARGS`` with ``messages`` on its stdin (then closed): ``(answers by id, the upstream's
    received tools/call params)``."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    record = tmp_path / "record.jsonl"
    env = {"TOOLS_FILE": str(tools), "RECORD_FILE": str(record), "PAGE_SIZE": "1", "PATH": "/usr/bin:/bin"}
    if args[0] == "serve":
        config = tmp_path / "config.json"
        server = {"command": sys.executable, "args": [str(RECORDING_SERVER)], "env": env}
        config.write_text(json.dumps({"mcpServers": {"rec": server}}), encoding="utf-8")
        command = [sys.executable, "-m", "mcp_guard", *args, "--config", str(config)]
    else:
        command = [sys.executable, "-m", "mcp_guard", *args, "--", sys.executable, str(RECORDING_SERVER)]
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}]
    lines.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    stdin = "".join(json.dumps(m) + "\n" for m in lines + messages)
    done = subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=60, env={**env, "PYTHONPATH": ""}
    )
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    received = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    return answers, [m["params"] for m in received if m.get("method") == "tools/call"]


def listing(cursor: str | None, request_id: int) -> dict[str, Any]:
    params = {} if cursor is None else {"cursor": cursor}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params}


def call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def test_wrap_present_for_openai_strict(tmp_path: Path) -> None:
    calls = [
        call(10, "search", {"query": "abc", "limit": None, "filters": None}),  # optional fields: absent
        call(11, "search", {"query": "abc", "limit": 2, "filters": '{"k": "v"}'}),  # JSON text: parsed back
        call(12, "search", {"query": "a" * 21, "limit": None, "filters": None}),  # maxLength: not shown, enforced
        call(13, "search", {"query": "abc", "limit": 99, "filters": None}),  # maximum: shown, enforced
        call(14, "search", {"query": "abc", "limit": None, "filters": "[1"}),  # not JSON text
        call(15, "fs_read", {"path": "/p"}),  # the shown name
        call(16, "fs.read", {"path": "/p"}),  # the server's name was never shown
    ]
    answers, received = run(["wrap", "--present-for", "openai-strict"], [listing(None, 1), *calls], tmp_path)
    page = answers[1]["result"]
    assert [t["name"] for t in page["tools"]] == ["search"] and "nextCursor" in page  # the upstream's pages
    shown = page["tools"][0]["inputSchema"]
    assert not check_schema(shown, host_profile("openai-strict"))
    assert received == [
        {"name": "search", "arguments": {"query": "abc"}},
        {"name": "search", "arguments": {"query": "abc", "limit": 2, "filters": {"k": "v"}}},
        {"name": "fs.read", "arguments": {"path": "/p"}},
    ]
    assert "(maxLength; not in the schema your model was shown)" in answers[12]["result"]["content"][0]["text"]
    assert "not in the schema" not in answers[13]["result"]["content"][0]["text"]
    assert answers[14]["result"]["_meta"]["mcp-guard/rejection"]["issues"][0]["instance_path"] == "/filters"
    assert answers[16]["error"]["code"] == -32602


def test_wrap_present_for_gemini(tmp_path: Path) -> None:
    calls = [
        call(10, "search", {"query": "abc"}),
        call(11, "search", {"query": "abc", "limit": None}),  # no reshaping for gemini: a null is a null
        call(12, "search", {"query": "abc", "extra": 1}),  # additionalProperties: not shown, enforced
        call(13, "fs.read", {"path": "/p"}),  # a valid gemini name: shown as it is
    ]
    messages = [listing(None, 1), listing("rec-page-1", 2), *calls]  # (the recording server's cursors)
    answers, received = run(["wrap", "--present-for", "gemini"], messages, tmp_path)
    profile = host_profile("gemini")
    tools = [t for i in (1, 2) for t in answers[i]["result"]["tools"]]
    assert [t["name"] for t in tools] == ["search", "fs.read"]
    assert all(not check_schema(t["inputSchema"], profile) for t in tools)
    assert received == [
        {"name": "search", "arguments": {"query": "abc"}},
        {"name": "fs.read", "arguments": {"path": "/p"}},
    ]
    assert answers[11]["result"]["isError"] is True
    assert (
        "(additionalProperties: false; not in the schema your model was shown)"
        in (answers[12]["result"]["content"][0]["text"])
    )


def test_serve_present_for_overrides_the_config(tmp_path: Path) -> None:
    calls = [call(10, "rec__search", {"query": "abc", "limit": None, "filters": None}), call(11, "rec__search", {})]
    answers, received = run(["serve", "--present-for", "openai-strict"], [listing(None, 1), *calls], tmp_path)
    (tool,) = [t for t in answers[1]["result"]["tools"] if t["name"] == "rec__search"]
    assert tool["_meta"]["mcp-guard/schema"]["host"]["host"].startswith("openai-strict@")
    assert received == [{"name": "search", "arguments": {"query": "abc"}}]
    assert answers[11]["result"]["isError"] is True


@pytest.mark.parametrize("command", ["wrap", "serve"])
def test_an_unknown_host_is_a_usage_error(command: str, tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"mcpServers": {}}', encoding="utf-8")
    tail = ["--", "true"] if command == "wrap" else ["--config", str(config)]
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", command, "--present-for", "gpt-9", *tail],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "gpt-9" in done.stderr and "openai-strict" in done.stderr
    assert done.stdout == ""


def test_the_help_names_every_host() -> None:
    assert PRESENT_FOR_CHOICES.split("|") == list(HOST_NAMES)
