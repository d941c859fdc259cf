"""``mcp-guard serve --config FILE`` end to end: the gateway process driven by a raw JSON-RPC client.

The upstreams are real processes at once: ``mcp-server-time`` (PyPI, from the test extras),
the Sigma fixture server, and ``faulty_server.py`` (crashes, hangs and sends sampling
requests on demand, and records every line it receives), plus a server whose command does
not exist. What is proven: namespacing across servers, a name collision withheld, policy
deny/hide answered as unknown tools, the size limit, the schema check, the budget, journal
records (intent and outcome; a refused call has an outcome only; a call in flight when the
guard is SIGKILLed has an intent only), pinning (``pinned_schema_changed``), a server-to-client
request mapped to a new id and its answer mapped back, one upstream crashing while the
others keep serving (and it comes back), ``check --config``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from mcp_guard.calls.pinning import tool_digest
from tests.e2e import npm_peers

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
SIGMA = ROOT / "fixtures" / "sigma" / "server.py"
FAULTY = ROOT / "tests" / "e2e" / "faulty_server.py"
HAS_TIME = importlib.util.find_spec("mcp_server_time") is not None
needs_time = pytest.mark.skipif(not HAS_TIME, reason="mcp-server-time is not installed (pip install -e '.[test]')")

READ_TIMEOUT = 60.0  # a hang guard, not a timing assertion: generous for a loaded CI machine
"""Hang guard for one answer (upstreams start in parallel; the guard's own limits are 30 s)."""

INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"sampling": {}, "roots": {"listChanged": True}},
    "clientInfo": {"name": "gateway-test", "version": "1"},
}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "gateway-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Client:
    """A running ``mcp-guard serve`` and a raw JSON-RPC client on its stdio."""

    def __init__(self, process: Process) -> None:
        assert process.stdout is not None
        self.process = process
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self._counter = 0

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")

    async def read(self) -> dict[str, Any]:
        with anyio.fail_after(READ_TIMEOUT):
            line = await self._stdout.receive_until(b"\n", 1 << 26)
        message = json.loads(line)
        assert type(message) is dict
        return message

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; return its response (notifications and server requests meanwhile are kept)."""
        self._counter += 1
        request_id = self._counter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        while True:
            got = await self.read()
            if "method" not in got and got.get("id") == request_id:
                return got
            (self.server_requests if "id" in got else self.notifications).append(got)

    async def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request("tools/call", params)

    async def initialize(self) -> dict[str, Any]:
        response = await self.request("initialize", INIT)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    async def tool_names(self) -> list[str]:
        names: list[str] = []
        cursor = None
        for _ in range(100):
            response = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            names += [t["name"] for t in response["result"]["tools"]]
            cursor = response["result"].get("nextCursor")
            if cursor is None:
                return names
        raise AssertionError("the tools/list cursors do not end")


@asynccontextmanager
async def serve(config: Path, *extra: str) -> AsyncIterator[Client]:
    command = [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config), *extra]
    stderr = config.parent / "guard.stderr"
    with stderr.open("wb") as err:
        process = await anyio.open_process(command, stderr=err, cwd=ROOT)
        try:
            yield Client(process)
        finally:
            if process.returncode is None:
                assert process.stdin is not None
                await process.stdin.aclose()
                with anyio.move_on_after(15):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()


def write_config(path: Path, servers: dict[str, Any], guard: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers, "guard": {"profile": "standard", **guard}}))
    return path


def faulty(record: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FAULTY)], "env": {"RECORD_FILE": str(record)}}


def journal_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def rejection_kind(response: dict[str, Any]) -> str:
    result = response["result"]
    assert result["isError"] is True
    kind = result["_meta"]["mcp-guard/rejection"]["kind"]
    assert type(kind) is str
    return kind


@needs_time
async def test_gateway_end_to_end(tmp_path: Path) -> None:
    record = tmp_path / "faulty.record"
    journal = tmp_path / "calls.jsonl"
    servers = {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
        "sigma": {"command": sys.executable, "args": [str(SIGMA)]},
        "faulty": faulty(record),
        # Both map to dup_x__echo, ...: every tool of both is withheld.
        "dup.x": faulty(tmp_path / "dup1.record"),
        "dup_x": faulty(tmp_path / "dup2.record"),
        "broken": {"command": str(tmp_path / "no-such-server")},
    }
    guard = {
        "journal": str(journal),
        # convert_time's outputSchema uses $defs, which `standard` cannot enforce: enforce would refuse its calls.
        "outputs": "report",
        "pageSize": 7,
        "deny": ["sigma/write"],
        "servers": {
            "sigma": {"hide": ["bash"]},
            "faulty": {"tools": {"echo": {"maxArgumentBytes": 64}}},
            "time": {"tools": {"get_current_time": {"callsPerMinute": 2}}},
        },
    }
    config = write_config(tmp_path / "gw.json", servers, guard)
    async with serve(config) as client:
        init = await client.initialize()
        assert init["result"]["capabilities"]["tools"] == {"listChanged": True}
        assert init["result"]["protocolVersion"] == "2025-06-18"

        names = await client.tool_names()
        assert {"time__get_current_time", "time__convert_time", "sigma__read", "faulty__echo"} <= set(names)
        assert "sigma__write" not in names and "sigma__bash" not in names  # denied, hidden
        assert not [n for n in names if n.startswith("dup")]  # the collision: withheld, both sides
        assert len(names) == len(set(names))

        # Denied and hidden tools are unknown tools.
        for name in ("sigma__write", "sigma__bash", "dup_x__echo", "nope__nothing"):
            response = await client.call(name, {})
            assert response["error"]["code"] == -32602, name

        # Size first, then the schema, then the budget.
        assert rejection_kind(await client.call("faulty__echo", {"blob": "x" * 100})) == "too_large"
        assert rejection_kind(await client.call("time__get_current_time", {})) == "validation"
        for _ in range(2):
            ok = await client.call("time__get_current_time", {"timezone": "UTC"})
            assert ok["result"].get("isError") is not True
            assert "UTC" in ok["result"]["content"][0]["text"]
        assert rejection_kind(await client.call("time__get_current_time", {"timezone": "UTC"})) == "budget_exceeded"
        echoed = await client.call("faulty__echo", {})
        assert echoed["result"]["content"][0]["text"] == "ok"

        # A server-to-client request gets a gateway id; the client's answer reaches the upstream under its own.
        sampled = await client.call("faulty__sample", {})
        assert sampled["result"]["content"][0]["text"] == "ok"
        with anyio.fail_after(READ_TIMEOUT):
            while not client.server_requests:
                client.server_requests.append(await client.read())
        sampling = client.server_requests.pop()
        assert sampling["method"] == "sampling/createMessage"
        assert sampling["id"] != "server-req-1"
        answer = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
        await client.send({"jsonrpc": "2.0", "id": sampling["id"], "result": answer})
        await client.request("ping")

        def answered_upstream() -> bool:
            lines = [json.loads(x) for x in record.read_text().splitlines() if x.startswith('{"')]
            return any(m.get("id") == "server-req-1" and "result" in m for m in lines)

        with anyio.fail_after(READ_TIMEOUT):
            while not answered_upstream():
                await anyio.sleep(0.05)

        # One upstream crashes mid-call: the call is answered at once, the others keep serving.
        crashed = await client.call("faulty__crash", {})
        assert crashed["error"]["code"] == -32603
        converted = await client.call(
            "time__convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC"}
        )
        assert converted["result"].get("isError") is not True
        listed = await client.call("sigma__ls", {"path": "."})
        assert "result" in listed
        # ... and the crashed one comes back (restart with backoff), announced by list_changed.
        with anyio.fail_after(READ_TIMEOUT):
            while True:
                again = await client.call("faulty__echo", {})
                if "result" in again:
                    break
                await anyio.sleep(0.2)
        assert again["result"]["content"][0]["text"] == "ok"
        assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in client.notifications

    records = journal_records(journal)
    by_id: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_id.setdefault(r["call_id"], []).append(r)
        assert "arguments" not in r
    outcomes = [r for r in records if r["event"] == "outcome"]
    rejected = {(r["tool"], r.get("kind")) for r in outcomes if r["result"] == "rejected"}
    assert {("echo", "too_large"), ("get_current_time", "validation"), ("get_current_time", "budget_exceeded")} <= (
        rejected
    )
    assert ("write", "policy_denied") in rejected  # the denied call is journaled too
    for r in outcomes:
        if r["result"] == "rejected":
            assert [x["event"] for x in by_id[r["call_id"]]] == ["outcome"]
        else:
            assert [x["event"] for x in by_id[r["call_id"]]] == ["intent", "outcome"]
    died = [r for r in outcomes if r["tool"] == "crash"]
    assert [r["result"] for r in died] == ["upstream_died"]
    intent = next(r for r in records if r["event"] == "intent" and r["tool"] == "get_current_time")
    assert intent["server"] == "time" and intent["arguments_bytes"] == len('{"timezone":"UTC"}')
    assert len(intent["arguments_sha256"]) == 64


async def test_pinning_and_a_call_in_flight_when_the_guard_is_killed(tmp_path: Path) -> None:
    journal = tmp_path / "calls.jsonl"
    config = write_config(
        tmp_path / "gw.json",
        {"faulty": faulty(tmp_path / "rec"), "sigma": {"command": sys.executable, "args": [str(SIGMA)]}},
        {"journal": str(journal)},
    )
    pinned = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "pin", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert pinned.returncode == 0, pinned.stderr
    lock_path = tmp_path / "gw.json.lock"
    lock = json.loads(lock_path.read_text())
    assert "faulty/echo" in lock["tools"] and "sigma/read" in lock["tools"]
    pinned_echo = lock["tools"]["faulty/echo"]["definition"]
    pinned_echo["description"] = "The echo tool, as pinned."  # the server "changed" echo since it was pinned
    lock["tools"]["faulty/echo"]["digest"] = tool_digest(pinned_echo)
    lock_path.write_text(json.dumps(lock))

    async with serve(config) as client:
        await client.initialize()
        names = await client.tool_names()
        assert "faulty__echo" in names  # listed (with its pinned definition), but refused
        assert rejection_kind(await client.call("faulty__echo", {})) == "pinned_schema_changed"
        assert "result" in await client.call("sigma__ls", {"path": "."})  # pinned and unchanged

        request = {"jsonrpc": "2.0", "id": "in-flight", "method": "tools/call"}
        await client.send({**request, "params": {"name": "faulty__hang", "arguments": {}}})
        with anyio.fail_after(READ_TIMEOUT):
            while not any(r["tool"] == "hang" for r in journal_records(journal)):
                await anyio.sleep(0.05)
        os.kill(client.process.pid, signal.SIGKILL)
        await client.process.wait()

    records = journal_records(journal)
    hang = [r for r in records if r["tool"] == "hang"]
    assert [r["event"] for r in hang] == ["intent"]  # visible after the crash: an intent without an outcome
    summary = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "journal", str(journal), "--json"], capture_output=True, text=True
    )
    tools = {(t["server"], t["tool"]): t for t in json.loads(summary.stdout)["tools"]}
    assert tools[("faulty", "hang")]["unfinished"] == [hang[0]["call_id"]]
    assert tools[("faulty", "echo")]["rejections"] == {"pinned_schema_changed": 1}


async def test_modern_era_tools(tmp_path: Path) -> None:
    """2026-07-28 requests without a handshake: the merged list for the envelope, and a routed call."""
    config = write_config(
        tmp_path / "gw.json",
        {"sigma": {"command": sys.executable, "args": [str(SIGMA)]}},
        {"deny": ["sigma/write"]},
    )
    async with serve(config) as client:
        listed = await client.request("tools/list", {"_meta": MODERN_META})
        names = [t["name"] for t in listed["result"]["tools"]]
        assert "sigma__read" in names and "sigma__write" not in names
        assert listed["result"]["resultType"] == "complete"
        called = await client.call("sigma__ls", {"path": "."})
        assert called["error"]["code"] == -32603  # no envelope, no handshake: not initialized
        assert "has not sent initialize" in called["error"]["message"]
        params = {"name": "sigma__ls", "arguments": {"path": "."}, "_meta": MODERN_META}
        response = await client.request("tools/call", params)
        assert response["result"].get("isError") is not True
        refused = await client.request("tools/call", {**params, "arguments": {"path": 3}})
        assert rejection_kind(refused) == "validation"
        assert refused["result"]["resultType"] == "complete"


def test_check_config_reports_every_upstream(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "gw.json",
        {"sigma": {"command": sys.executable, "args": [str(SIGMA)]}, "gone": {"command": str(tmp_path / "nope")}},
        {},
    )
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "check", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = done.stdout
    assert done.returncode == 2  # an upstream that cannot be reached, as for check -- COMMAND
    assert "sigma: reachable" in out and "gone: NOT reachable" in out
    assert "read → sigma__read" in out


async def test_prompts_and_resources_routed_to_server_everything(tmp_path: Path) -> None:
    """server-everything and mcp-server-time (and Sigma) at once: tools of all, prompts and resources routed."""
    reason = npm_peers.missing(npm_peers.SERVER_EVERYTHING)
    if reason is not None:
        pytest.skip(reason)
    if not HAS_TIME:
        pytest.skip("mcp-server-time is not installed (pip install -e '.[test]')")
    argv = npm_peers.command(npm_peers.SERVER_EVERYTHING)
    config = write_config(
        tmp_path / "gw.json",
        {
            "everything": {"command": argv[0], "args": argv[1:]},
            "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
            "sigma": {"command": sys.executable, "args": [str(SIGMA)]},
        },
        {},
    )
    async with serve(config) as client:
        await client.initialize()
        names = await client.tool_names()
        assert "everything__echo" in names and "sigma__read" in names and "time__get_current_time" in names
        now = await client.call("time__get_current_time", {"timezone": "UTC"})
        assert now["result"].get("isError") is not True and "UTC" in json.dumps(now["result"]["content"])
        summed = await client.call("everything__get-sum", {"a": 2, "b": "3"})
        assert rejection_kind(summed) == "validation"  # checked before it reaches server-everything
        echoed = await client.call("everything__echo", {"message": "hello"})
        assert "hello" in json.dumps(echoed["result"]["content"])
        prompts = (await client.request("prompts/list"))["result"]["prompts"]
        simple = next(p for p in prompts if p["name"].startswith("everything__") and not p.get("arguments"))
        assert simple["_meta"]["mcp-guard/origin"]["server"] == "everything"
        got = await client.request("prompts/get", {"name": simple["name"]})
        assert got["result"]["messages"]
        resources = (await client.request("resources/list"))["result"]["resources"]
        assert resources
        read = await client.request("resources/read", {"uri": resources[0]["uri"]})
        assert read["result"]["contents"][0]["uri"] == resources[0]["uri"]
        unknown = await client.request("resources/read", {"uri": "nowhere://x"})
        assert unknown["error"]["code"] == -32602


async def test_serve_over_streamable_http(tmp_path: Path) -> None:
    """``serve --http``: the gateway behind the same front as ``wrap --http``; each SDK client session
    gets its own gateway session (its own upstreams), tools namespaced and checked, calls journaled."""
    from mcp import Client

    from tests.e2e.http_guard import guard_process

    journal = tmp_path / "journal.jsonl"
    config = write_config(
        tmp_path / "gw.json",
        {"sigma": {"command": sys.executable, "args": [str(SIGMA)]}},
        {"deny": ["sigma/write"], "journal": str(journal)},
    )
    stderr_path = tmp_path / "serve-stderr.log"
    argv = [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config), "--http", "127.0.0.1:0"]
    async with guard_process(argv, stderr_path) as (process, url):
        with anyio.fail_after(60):
            for _session in range(2):
                async with Client(url, mode="legacy") as client:
                    listed = await client.list_tools()
                    names = {tool.name for tool in listed.tools}
                    assert "sigma__read" in names and "sigma__write" not in names
                    done = await client.call_tool("sigma__ls", {"path": "."})
                    assert not done.is_error
                    refused = await client.call_tool("sigma__ls", {"path": 3})
                    assert refused.is_error
                    assert (refused.meta or {})["mcp-guard/rejection"]["kind"] == "validation"
    assert process.returncode == 0, stderr_path.read_text()
    records = journal_records(journal)
    intents = [r for r in records if r["event"] == "intent"]
    assert len(intents) == 2 and all(r["server"] == "sigma" and r["tool"] == "ls" for r in intents)
    assert sum(r["event"] == "outcome" and r["result"] == "rejected" for r in records) == 2


async def test_upstream_number_literals_pass_digit_for_digit_and_are_never_read_rounded(tmp_path: Path) -> None:
    """As in the relay: a literal no double holds reaches the client as written (not rounded, and
    ``1e400`` not turned into an error), and a schema holding one is not supported."""
    raw = tmp_path / "tools-raw.json"
    raw.write_text(
        '[{"name":"low","inputSchema":{"type":"object","properties":{"x":{"type":"number",'
        '"minimum":1.00000000000000000001}}}},'
        '{"name":"literal_result","inputSchema":{"type":"object"}}]'
    )
    forging = ROOT / "tests" / "e2e" / "forging_server.py"
    server = {"command": sys.executable, "args": [str(forging)], "env": {"TOOLS_RAW_FILE": str(raw)}}
    config = write_config(tmp_path / "gw.json", {"lit": server}, {})
    async with serve(config) as client:
        await client.initialize()

        async def raw_answer(request_id: str, method: str, params: dict[str, Any]) -> bytes:
            await client.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            with anyio.fail_after(READ_TIMEOUT):
                while True:
                    line = await client._stdout.receive_until(b"\n", 1 << 26)
                    if json.loads(line).get("id") == request_id:
                        return line

        listed = await raw_answer("list", "tools/list", {})
        assert b'"minimum":1.00000000000000000001' in listed
        verdicts = {
            t["name"]: t["_meta"]["mcp-guard/schema"]["supported"] for t in json.loads(listed)["result"]["tools"]
        }
        assert verdicts["lit__low"] is False and verdicts["lit__literal_result"] is True
        refused = json.loads(await raw_answer("low", "tools/call", {"name": "lit__low", "arguments": {"x": 1}}))
        assert refused["result"]["isError"] is True  # never judged by a rounded minimum
        answer = await raw_answer("lit", "tools/call", {"name": "lit__literal_result", "arguments": {}})
        assert b'"c":1e400' in answer and b'"e":1.00000000000000000001' in answer and b'"d":-0.0' in answer
        exact = json.loads(answer, parse_float=Decimal)["result"]["structuredContent"]["f"]
        assert exact == Decimal("-9223372036854775808")  # the upstream's value, not repr's -9.223372036854776e+18


async def test_an_upstream_answer_the_guard_cannot_read_is_an_error_for_its_request(tmp_path: Path) -> None:
    """An answer nested deeper than the parser goes (or NaN, which is not JSON) is answered -32603 for its
    request, never left pending; the upstream keeps serving."""
    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("deep_result", "nan_result", "echo")]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    forging = ROOT / "tests" / "e2e" / "forging_server.py"
    server = {"command": sys.executable, "args": [str(forging)], "env": {"TOOLS_FILE": str(tmp_path / "tools.json")}}
    config = write_config(tmp_path / "gw.json", {"f": server}, {"journal": str(tmp_path / "calls.jsonl")})
    async with serve(config) as client:
        await client.initialize()
        deep = await client.call("f__deep_result", {})
        assert deep["error"]["code"] == -32603
        # Why, never the line (trial: invalid UTF-8 used to read "not valid JSON, or nested too deeply").
        assert deep["error"]["message"] == (
            "mcp-guard: the upstream's answer nests deeper than the guard parses; it was dropped"
        )
        nan = await client.call("f__nan_result", {})
        assert nan["error"]["code"] == -32603 and "NaN or Infinity" in nan["error"]["message"]
        assert (await client.call("f__echo", {}))["result"]["content"][0]["text"] == "ok"
    outcomes = [r["result"] for r in journal_records(tmp_path / "calls.jsonl") if r["event"] == "outcome"]
    assert outcomes == ["protocol_error", "protocol_error", "ok"]


class MemoryClient:
    """The client side of an in-process gateway session: lines in, lines out."""

    def __init__(self) -> None:
        self.inbound, self._inbound = anyio.create_memory_object_stream[bytes](100)
        self._outbound, self.outbound = anyio.create_memory_object_stream[bytes](100)

    async def receive(self) -> bytes:
        return await self._inbound.receive()

    async def send(self, data: bytes) -> None:
        await self._outbound.send(data)

    async def request(self, request_id: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        await self.inbound.send(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
        )
        with anyio.fail_after(READ_TIMEOUT):
            while True:
                message = json.loads(await self.outbound.receive())
                if message.get("id") == request_id and "method" not in message:
                    assert type(message) is dict
                    return message


async def test_an_upstream_answer_over_the_line_cap_is_an_error_for_its_request(tmp_path: Path) -> None:
    """A line longer than the upstream pipe's cap fails its request (-32603) and nothing else: the
    connection is kept (it used to end, and with it every request the upstream held)."""
    from mcp_guard.config import load_config
    from mcp_guard.peer.upstream import stdio_connector
    from mcp_guard.sessions.gateway import serve_session

    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("big_result", "echo")]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    forging = ROOT / "tests" / "e2e" / "forging_server.py"
    config = load_config(write_config(tmp_path / "gw.json", {"f": {"command": "unused"}}, {}), environ={})
    connector = stdio_connector(
        [sys.executable, str(forging)], {"TOOLS_FILE": str(tmp_path / "tools.json")}, max_line=100_000
    )
    client = MemoryClient()
    session = serve_session(client, config, connectors={"f": connector})  # type: ignore[arg-type]
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        await client.request("init", "initialize", INIT)
        big = await client.request("big", "tools/call", {"name": "f__big_result", "arguments": {}})
        assert big["error"]["code"] == -32603 and "longer than 100000 bytes" in big["error"]["message"]
        echoed = await client.request("echo", "tools/call", {"name": "f__echo", "arguments": {}})
        assert echoed["result"]["content"][0]["text"] == "ok"
        assert session.routing.links[0].restarts == 0
        client.inbound.close()


async def test_the_start_log_names_the_lock_file_in_force(tmp_path: Path) -> None:
    """Red team 38 F2: ``serve --lock PATH`` logged the config's default (``gw.json.lock``) while PATH was the
    lock enforced: an operator reviewing "the lock in use" reviewed another file."""
    config = write_config(tmp_path / "gw.json", {"sigma": {"command": sys.executable, "args": [str(SIGMA)]}}, {})
    chosen = tmp_path / "chosen.lock"
    pinned = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "pin", "--config", str(config), "--lock", str(chosen)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert pinned.returncode == 0, pinned.stderr
    (tmp_path / "gw.json.lock").write_text(chosen.read_text())  # the default exists too: not the one in force
    async with serve(config, "--lock", str(chosen)) as client:
        await client.initialize()
    log = (tmp_path / "guard.stderr").read_text()
    assert f", lock {chosen}" in log and "gw.json.lock" not in log, log


def test_check_config_judges_the_pins_against_the_lock_given(tmp_path: Path) -> None:
    """Red team 38 F2: a lock given only on serve's command line could not be checked (check had no --lock)."""
    config = write_config(tmp_path / "gw.json", {"sigma": {"command": sys.executable, "args": [str(SIGMA)]}}, {})
    chosen, empty = tmp_path / "chosen.lock", tmp_path / "empty.lock"
    command = [sys.executable, "-m", "mcp_guard"]
    pinned = subprocess.run([*command, "pin", "--config", str(config), "--lock", str(chosen)], capture_output=True)
    assert pinned.returncode == 0, pinned.stderr
    empty.write_text(json.dumps({"version": 2, "tools": {}}))

    def check(*extra: str) -> subprocess.CompletedProcess[str]:
        run = [*command, "check", "--config", str(config), *extra]
        return subprocess.run(run, capture_output=True, text=True, timeout=60)

    assert "not pinned" not in check("--lock", str(chosen)).stdout
    assert "not pinned" in check("--lock", str(empty)).stdout
    missing = check("--lock", str(tmp_path / "missing.lock"))
    assert missing.returncode == 2 and "no such lock file" in missing.stderr
    assert check("--lock", str(chosen), "--fail-on", "never").returncode == 0
