"""The two fixture servers, each run as a real subprocess.

``fixtures/sigma/server.py`` is an SDK low-level server; ``tests/e2e/recording_server.py`` is a
raw JSON-RPC server. These tests pin what the other tests rely on: the tools they list, that
neither validates arguments, and what the recording server records and answers.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, ClientSession, MCPError, StdioServerParameters, stdio_client
from pydantic import TypeAdapter

from mcp_guard.core import PROFILES, classify

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
SIGMA = ROOT / "fixtures" / "sigma"
FIXTURE_SERVER = SIGMA / "server.py"
RECORDING_SERVER = Path(__file__).resolve().parent / "recording_server.py"

SIGMA_NAMES = [
    "AskUserQuestion",
    "bash",
    "edit",
    "glob",
    "grep",
    "ls",
    "read",
    "todo",
    "url_fetch",
    "write",
]
EXTRA_NAMES = ["add", "broken_tool", "fetch_page", "lookup_user", "resize_image"]
TIMEOUT = 20.0


def tool_files(folder: Path) -> list[dict[str, Any]]:
    """Return the tool objects of the ``*.json`` files of ``folder``, sorted by file name."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


SIGMA_TOOLS = tool_files(SIGMA)
ALL_TOOLS = SIGMA_TOOLS + tool_files(SIGMA / "extra")


def wire_tool(tool: types.Tool) -> dict[str, Any]:
    """Return ``tool`` as the JSON a tool file holds."""
    return tool.model_dump(by_alias=True, mode="json", exclude_none=True)


def text_of(result: types.CallToolResult) -> str:
    """Return the text of a result made of one text content."""
    assert len(result.content) == 1
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


# ---------------------------------------------------------------------------------------------
# The tool files themselves


def test_tool_files_follow_the_sigma_table() -> None:
    """The ten Sigma files use only the agreed keywords and carry descriptions where due."""
    assert [t["name"] for t in SIGMA_TOOLS] == SIGMA_NAMES
    assert [t["name"] for t in tool_files(SIGMA / "extra")] == EXTRA_NAMES
    allowed = {"type", "properties", "required", "description", "enum", "minimum", "items", "oneOf"}

    def keywords(schema: dict[str, Any]) -> set[str]:
        found = set(schema)
        for sub in schema.get("properties", {}).values():
            found |= keywords(sub)
        if "items" in schema:
            found |= keywords(schema["items"])
        for sub in schema.get("oneOf", []):
            found |= keywords(sub)
        return found

    for tool in SIGMA_TOOLS:
        assert set(tool) == {"name", "description", "inputSchema"}
        schema = tool["inputSchema"]
        assert list(schema) == ["type", "properties", "required"]
        assert schema["type"] == "object"
        assert keywords(schema) <= allowed, tool["name"]
        for name, prop in schema["properties"].items():
            assert isinstance(prop.get("description"), str), (tool["name"], name)
    ls = next(t for t in SIGMA_TOOLS if t["name"] == "ls")
    assert ls["inputSchema"]["required"] == []


# ---------------------------------------------------------------------------------------------
# fixtures/sigma/server.py over the SDK client


def fixture_params(*args: str, server: Path = FIXTURE_SERVER) -> StdioServerParameters:
    """Return the parameters that launch the fixture server with ``args``."""
    return StdioServerParameters(command=sys.executable, args=[str(server), *args])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("only_sigma", [False, True])
async def test_fixture_server_lists_the_files(mode: Literal["legacy", "auto"], only_sigma: bool) -> None:
    """15 tools (10 with --only-sigma), each equal to its file, in both protocol eras."""
    args = ["--only-sigma"] if only_sigma else []
    with anyio.fail_after(TIMEOUT):
        async with Client(fixture_params(*args), mode=mode) as client:
            if mode == "legacy":
                assert client.protocol_version == "2025-11-25"
            else:
                assert client.protocol_version == "2026-07-28"
            listed = await client.list_tools()
    expected = SIGMA_TOOLS if only_sigma else ALL_TOOLS
    assert len(listed.tools) == (10 if only_sigma else 15)
    assert listed.next_cursor is None
    assert [wire_tool(t) for t in listed.tools] == expected


BEYOND_NAMES = ["create_event", "outline", "send_payment", "ship_order"]
BEYOND_KEYWORDS = {
    "create_event": {"nullable"},
    "outline": {"$dynamicAnchor", "$dynamicRef"},
    "send_payment": {"discriminator"},
    "ship_order": {"$ref"},
}
"""The keyword that puts each ``beyond/`` tool outside the extended profile (what the demo shows)."""


async def test_fixture_server_beyond_lists_the_tools_no_profile_supports() -> None:
    """``--beyond``: the 15 tools, then the four of ``beyond/``, each equal to its file."""
    beyond = tool_files(SIGMA / "beyond")
    assert [t["name"] for t in beyond] == BEYOND_NAMES
    with anyio.fail_after(TIMEOUT):
        async with Client(fixture_params("--beyond")) as client:
            listed = await client.list_tools()
    assert [wire_tool(t) for t in listed.tools] == ALL_TOOLS + beyond


@pytest.mark.parametrize("profile", PROFILES)
def test_beyond_tools_are_unsupported_under_every_profile(profile: str) -> None:
    for tool in tool_files(SIGMA / "beyond"):
        report = classify(tool["inputSchema"], profile=profile)
        assert not report.ok and {i.kind for i in report.issues} == {"unsupported_capability"}, tool["name"]
        if profile == "extended":  # exactly the reason the tool is there for, nothing else
            assert {i.keyword for i in report.issues} == BEYOND_KEYWORDS[tool["name"]], tool["name"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_fixture_server_calls(mode: Literal["legacy", "auto"]) -> None:
    """``add`` sums; other tools echo, with no validation at all; an unknown tool is -32602."""
    with anyio.fail_after(TIMEOUT):
        async with Client(fixture_params(), mode=mode) as client:
            added = await client.call_tool("add", {"a": 40, "b": 2})
            assert text_of(added) == "42"
            assert not added.is_error
            # Wrong type, missing required key, unknown key: the fixture server takes it all.
            echoed = await client.call_tool("read", {"path": 5, "extra": [1, "x"]})
            assert text_of(echoed) == 'read ran with arguments: {"path":5,"extra":[1,"x"]}'
            broken = await client.call_tool("broken_tool", {})
            assert text_of(broken) == "broken_tool ran with arguments: {}"
            bad_add = await client.call_tool("add", {"a": "1", "b": 2})
            assert bad_add.is_error
            with pytest.raises(MCPError) as excinfo:
                await client.call_tool("no_such_tool", {})
            assert excinfo.value.error.code == -32602


async def test_fixture_server_works_from_a_copy(tmp_path: Path) -> None:
    """Copied elsewhere (as into a wheel), the server still finds its tool files."""
    copy = tmp_path / "mcp_guard" / "_fixtures" / "sigma"
    shutil.copytree(SIGMA, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with anyio.fail_after(TIMEOUT):
        async with Client(fixture_params(server=copy / "server.py"), mode="legacy") as client:
            listed = await client.list_tools()
    assert [wire_tool(t) for t in listed.tools] == ALL_TOOLS


# ---------------------------------------------------------------------------------------------
# Raw conversations: the bytes on the wire


class RawPeer:
    """A JSON-RPC peer on a subprocess's stdin/stdout, line by line."""

    def __init__(self, process: Process) -> None:
        """Wrap a started process whose stdin and stdout are pipes."""
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)
        self.received: list[bytes] = []

    async def send_line(self, line: bytes) -> None:
        """Send one raw line (a newline is added)."""
        await self.stdin.send(line + b"\n")

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message as compact JSON."""
        await self.send_line(json.dumps(message, separators=(",", ":")).encode())

    async def receive(self) -> dict[str, Any]:
        """Receive the next message."""
        line = await self.stdout.receive_until(b"\n", 1 << 26)
        self.received.append(line)
        message: dict[str, Any] = json.loads(line)
        assert message.get("jsonrpc") == "2.0"
        return message

    async def request(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request; return its response and the messages that came before it."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        before: list[dict[str, Any]] = []
        while True:
            answer = await self.receive()
            if answer.get("id") == request_id and "method" not in answer:
                return answer, before
            before.append(answer)


@asynccontextmanager
async def raw_peer(script: Path, *args: str, env: dict[str, str] | None = None) -> AsyncIterator[RawPeer]:
    """Run ``script`` and yield a raw peer on it; stdin is closed and the process reaped on exit."""
    process = await anyio.open_process(
        [sys.executable, str(script), *args],
        env={**os.environ, **(env or {})},
        stderr=None,
    )
    async with process:
        peer = RawPeer(process)
        try:
            yield peer
        finally:
            await peer.stdin.aclose()
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw-test", "version": "0"},
}


async def test_fixture_server_stdout_is_protocol_only() -> None:
    """Every stdout line of the fixture server is a JSON-RPC message; schemas go out as written."""
    with anyio.fail_after(TIMEOUT):
        async with raw_peer(FIXTURE_SERVER) as peer:
            init, _ = await peer.request(1, "initialize", INIT)
            assert init["result"]["protocolVersion"] == "2025-06-18"
            await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            listed, before = await peer.request(2, "tools/list")
            assert before == []
            assert listed["result"]["tools"] == ALL_TOOLS
            called, _ = await peer.request(3, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
            assert called["result"]["content"] == [{"type": "text", "text": "3"}]
            # If the peer's stdout carried anything but protocol lines, receive() would have failed.
    assert len(peer.received) == 3


# ---------------------------------------------------------------------------------------------
# tests/e2e/recording_server.py


def recorded(path: Path) -> list[dict[str, Any]]:
    """Return the messages of a record file."""
    return [json.loads(line) for line in path.read_bytes().splitlines()]


@pytest.mark.parametrize("with_trigger", [False, True])
async def test_recording_server_paginates_and_records(tmp_path: Path, with_trigger: bool) -> None:
    """PAGE_SIZE=4 pages the whole list; every line the client sent is in RECORD_FILE."""
    record = tmp_path / "record.jsonl"
    env = {"RECORD_FILE": str(record), "PAGE_SIZE": "4"}
    if with_trigger:
        env["WITH_TRIGGER"] = "1"
    params = StdioServerParameters(command=sys.executable, args=[str(RECORDING_SERVER)], env=env)
    raw_result = TypeAdapter(dict[str, Any])
    with anyio.fail_after(TIMEOUT):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.capabilities.tools is not None and init.capabilities.tools.list_changed is True
            tools: list[types.Tool] = []
            pages = 0
            cursor: str | None = None
            while True:
                page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
                pages += 1
                assert len(page.tools) <= 4
                tools += page.tools
                cursor = page.next_cursor
                if cursor is None:
                    break
            # The raw result, as a relay sees it. send_request accepts a TypeAdapter at runtime,
            # though its type variable is bound to BaseModel.
            result = await session.send_request(  # type: ignore[type-var]
                types.CallToolRequest(params=types.CallToolRequestParams(name="read", arguments={"path": 7})),
                raw_result,
            )
    expected = ALL_TOOLS + ([{"name": "trigger_list_changed"}] if with_trigger else [])
    assert len(tools) == len(expected) == (16 if with_trigger else 15)
    assert pages == 4
    got = [wire_tool(t) for t in tools]
    assert got[: len(ALL_TOOLS)] == ALL_TOOLS
    if with_trigger:
        assert got[-1]["name"] == "trigger_list_changed"
        assert got[-1]["inputSchema"] == {"type": "object"}
    assert result == {"content": [{"type": "text", "text": "ok"}], "isError": False, "x-extra": 1}

    lines = recorded(record)
    methods = [m.get("method") for m in lines]
    assert methods == ["initialize", "notifications/initialized", *["tools/list"] * 4, "tools/call"]
    assert lines[-1]["params"]["arguments"] == {"path": 7}
    cursors = [m.get("params", {}).get("cursor") for m in lines if m.get("method") == "tools/list"]
    assert cursors[0] is None
    assert all(isinstance(c, str) for c in cursors[1:])


async def test_recording_server_auto_mode_falls_back_to_handshake(tmp_path: Path) -> None:
    """``mcp.Client`` in auto mode probes server/discover, gets -32601, then does the handshake."""
    record = tmp_path / "record.jsonl"
    params = StdioServerParameters(
        command=sys.executable, args=[str(RECORDING_SERVER)], env={"RECORD_FILE": str(record)}
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params) as client:
            assert client.protocol_version == "2025-11-25"
            listed = await client.list_tools()
            called = await client.call_tool("ls", {})
    assert len(listed.tools) == 15
    assert text_of(called) == "ok"
    methods = [m.get("method") for m in recorded(record)]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


async def test_recording_server_records_bytes_exactly(tmp_path: Path) -> None:
    """Odd spacing, escapes, raw UTF-8 and a 2 MB line are recorded byte for byte."""
    record = tmp_path / "record.jsonl"
    big = "x" * (2 * 1024 * 1024)
    lines = [
        b'{ "jsonrpc" : "2.0", "id" : 1, "method" : "initialize",  "params" : {"protocolVersion": "1999-01-01"} }\t',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":"s-2","method":"ping","params":{"_meta":{"k":"é\\u00e9"}}}'.encode(),
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write","arguments":{"content":"'
        + big.encode()
        + b'","n":1e400,"big":123456789012345678901234567890}}}',
        b'{"jsonrpc":"2.0","id":4,"method":"resources/list"}',
        b"not json",
    ]
    with anyio.fail_after(TIMEOUT):
        async with raw_peer(RECORDING_SERVER, env={"RECORD_FILE": str(record)}) as peer:
            for line in lines:
                await peer.send_line(line)
            answers = [await peer.receive() for _ in range(5)]
    assert record.read_bytes() == b"".join(line + b"\n" for line in lines)
    init, ping, call, unknown, parse_error = answers
    assert init["id"] == 1
    assert init["result"]["protocolVersion"] == "2025-11-25"
    assert init["result"]["capabilities"] == {"tools": {"listChanged": True}}
    assert ping == {"jsonrpc": "2.0", "id": "s-2", "result": {}}
    assert call["id"] == 3 and call["result"]["x-extra"] == 1
    assert unknown["id"] == 4 and unknown["error"]["code"] == -32601
    assert parse_error["id"] is None and parse_error["error"]["code"] == -32700


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_recording_server_echoes_known_versions(version: str) -> None:
    """A known handshake version is echoed."""
    with anyio.fail_after(TIMEOUT):
        async with raw_peer(RECORDING_SERVER) as peer:
            init, _ = await peer.request(1, "initialize", {**INIT, "protocolVersion": version})
    assert init["result"]["protocolVersion"] == version


async def test_recording_server_list_changed_and_tools_files(tmp_path: Path) -> None:
    """TOOLS_FILE replaces the fixtures; the trigger notifies first, then switches to TOOLS_FILE_2."""
    first = [{"name": "one", "inputSchema": {"type": "object"}}]
    second = [
        {"name": "two", "inputSchema": {"type": "object"}, "x-unknown": True},
        {"name": "three", "inputSchema": {"type": "object", "properties": {}}},
    ]
    (tmp_path / "first.json").write_text(json.dumps(first))
    (tmp_path / "second.json").write_text(json.dumps(second))
    env = {
        "TOOLS_FILE": str(tmp_path / "first.json"),
        "TOOLS_FILE_2": str(tmp_path / "second.json"),
        "WITH_TRIGGER": "1",
    }
    trigger = {
        "name": "trigger_list_changed",
        "description": "Sends notifications/tools/list_changed, then switches to the second tool set.",
        "inputSchema": {"type": "object"},
    }
    with anyio.fail_after(TIMEOUT):
        async with raw_peer(RECORDING_SERVER, env=env) as peer:
            await peer.request(1, "initialize", INIT)
            await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            listed, _ = await peer.request(2, "tools/list")
            assert listed["result"] == {"tools": [*first, trigger]}
            called, before = await peer.request(3, "tools/call", {"name": "trigger_list_changed"})
            assert before == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]
            assert called["result"]["content"] == [{"type": "text", "text": "ok"}]
            relisted, _ = await peer.request(4, "tools/list")
            assert relisted["result"] == {"tools": [*second, trigger]}
            bad_cursor, _ = await peer.request(5, "tools/list", {"cursor": "nonsense"})
            assert bad_cursor["error"]["code"] == -32602
