"""The guard in front of a streamable HTTP upstream: ``mcp-guard wrap --upstream-url URL``.

The upstream is ``http_server.py``: the SDK's own streamable HTTP transport serving the
Sigma fixture tools (plus test tools) from a uvicorn subprocess on a free loopback port,
which records every HTTP request it gets (method, MCP headers, whether ``Authorization``
came, body size). The guard runs as a subprocess on stdio, driven by the SDK's client and
by raw JSON-RPC lines; :mod:`mcp_guard.peer.http_upstream` is also driven directly where
the guard's own checks would get in the way (``x-mcp-header`` tools are unsupported by the
guard's schema subset, so their calls never reach the upstream through it).
"""

from __future__ import annotations

import json
import os
import select
import ssl
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, MCPError, StdioServerParameters

from mcp_guard.peer.http_upstream import (
    HttpUpstream,
    connect_failure,
    open_http_upstream,
    parse_headers,
    shown_url,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HERE = Path(__file__).resolve().parent
SERVER = HERE / "http_server.py"
TIMEOUT = 30.0
"""Seconds a whole conversation may take (a hang guard, never a measurement)."""

SCHEMA_KEY = "mcp-guard/schema"
REJECTION_KEY = "mcp-guard/rejection"
TOKEN = "s3cret-T0KEN-for-tests"
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "0"}}
MiB = 1024 * 1024


# ---------------------------------------------------------------------------------------------
# The upstream server


@dataclass
class Upstream:
    """A running ``http_server.py``."""

    url: str
    record_path: Path
    process: subprocess.Popen[bytes]

    def records(self) -> list[dict[str, Any]]:
        """Every HTTP request the server got, in the order they arrived (``status`` None while unfinished)."""
        if not self.record_path.exists():
            return []
        entries: dict[int, dict[str, Any]] = {}
        for line in self.record_path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            entries.setdefault(entry["seq"], {"status": None, "body_bytes": None}).update(entry)
        return [entries[seq] for seq in sorted(entries)]


@contextmanager
def http_server(tmp_path: Path, *args: str) -> Iterator[Upstream]:
    """Start ``http_server.py ARGS`` and yield it; it is stopped on exit."""
    record = tmp_path / f"record-{len(list(tmp_path.glob('record-*')))}.jsonl"
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--record", str(record), *args], stdout=subprocess.PIPE, stderr=None
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
        assert ready, "the HTTP fixture server did not start"
        port = json.loads(process.stdout.readline())["port"]
        yield Upstream(f"http://127.0.0.1:{port}/mcp", record, process)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def sse_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    """One SSE-answering server (with resumable streams) for the tests that need nothing special."""
    with http_server(tmp_path_factory.mktemp("sse"), "--event-store") as upstream:
        yield upstream


@pytest.fixture(scope="module")
def json_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    """One server answering every request as ``application/json``."""
    with http_server(tmp_path_factory.mktemp("json"), "--json-response") as upstream:
        yield upstream


def free_url() -> str:
    """A loopback URL nothing listens on (the port was bound, then closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"


# ---------------------------------------------------------------------------------------------
# The guard


def guard_args(url: str, *extra: str) -> list[str]:
    """The guard's command line for ``url``."""
    return ["-m", "mcp_guard", "wrap", "--profile", "standard", "--upstream-url", url, *extra]


def guard_params(url: str, *extra: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """The SDK's stdio parameters that start the guard in front of ``url``."""
    return StdioServerParameters(
        command=sys.executable,
        args=guard_args(url, *extra),
        env={**os.environ, **(env or {})},
        cwd=str(HERE.parents[1]),
    )


class RawGuard:
    """A running guard and a raw JSON-RPC client on its stdio."""

    def __init__(self, process: Process, stderr: Path) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stderr_path = stderr
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self.backlog: list[dict[str, Any]] = []

    async def send(self, message: Any) -> None:
        """Send one message as compact JSON."""
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        """The next message from the guard."""
        line = await self._stdout.receive_until(b"\n", 1 << 27)
        message: dict[str, Any] = json.loads(line)
        return message

    async def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; return its response (other messages go to ``backlog``)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.response(request_id)

    async def response(self, request_id: Any) -> dict[str, Any]:
        """The response to ``request_id``; other messages go to ``backlog``."""
        while True:
            answer = await self.receive()
            if answer.get("id") == request_id and "method" not in answer:
                return answer
            self.backlog.append(answer)

    async def initialize(self) -> dict[str, Any]:
        """The handshake; returns the ``initialize`` result."""
        init = await self.request(0, "initialize", INIT)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result: dict[str, Any] = init["result"]
        return result

    async def close_stdin(self) -> None:
        """Hang up: EOF on the guard's stdin."""
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    def stderr(self) -> str:
        """What the guard wrote on stderr so far."""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


@asynccontextmanager
async def raw_guard(
    tmp_path: Path, url: str, *extra: str, env: dict[str, str] | None = None
) -> AsyncIterator[RawGuard]:
    """Start the guard in front of ``url``; its stdin is closed and the process reaped on exit."""
    stderr = tmp_path / f"guard-stderr-{len(list(tmp_path.glob('guard-stderr-*')))}.txt"
    with stderr.open("wb") as err:
        process = await anyio.open_process(
            [sys.executable, *guard_args(url, *extra)],
            env={**os.environ, **(env or {})},
            stderr=err,
            cwd=str(HERE.parents[1]),
        )
    async with process:
        guard = RawGuard(process, stderr)
        try:
            yield guard
        finally:
            assert process.stdin is not None
            with suppress(anyio.ClosedResourceError):
                await process.stdin.aclose()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def connect_error(params: StdioServerParameters, mode: Literal["legacy", "auto"]) -> MCPError:
    """The error that stops the SDK client from connecting (it may come wrapped in exception groups)."""
    try:
        async with Client(params, mode=mode):
            pass
    except BaseException as exc:  # unwrapped below; re-raised when it is not an MCPError
        leaf: BaseException = exc
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, MCPError):
            return leaf
        raise
    raise AssertionError("the client connected")


def text_of(result: types.CallToolResult) -> str:
    """The text of a result made of one text content."""
    assert len(result.content) == 1
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def without_annotation(tool: types.Tool) -> dict[str, Any]:
    """A listed tool as wire JSON, without the guard's ``_meta`` key (and ``_meta`` if that was all)."""
    wire = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
    meta = {k: v for k, v in (wire.get("_meta") or {}).items() if k != SCHEMA_KEY}
    wire.pop("_meta", None)
    if meta:
        wire["_meta"] = meta
    return wire


# ---------------------------------------------------------------------------------------------
# Through the guard, with the SDK client


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("answers", ["sse", "json"])
async def test_listing_equals_direct_listing_plus_annotation(
    mode: Literal["legacy", "auto"], answers: str, sse_server: Upstream, json_server: Upstream
) -> None:
    """``tools/list`` through the guard is the direct listing, each tool with the guard's verdict added."""
    upstream = sse_server if answers == "sse" else json_server
    with anyio.fail_after(TIMEOUT):
        async with Client(upstream.url, mode=mode) as direct:
            expected = (await direct.list_tools()).tools
        async with Client(guard_params(upstream.url), mode=mode) as client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else MODERN)
            listed = (await client.list_tools()).tools
    assert len(listed) == len(expected) == 23
    assert [without_annotation(t) for t in listed] == [
        t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in expected
    ]
    verdicts = {t.name: (t.meta or {})[SCHEMA_KEY]["supported"] for t in listed}
    assert verdicts["read"] is True and verdicts["add"] is True and verdicts["progress"] is True
    assert verdicts["fetch_page"] is False and verdicts["region"] is False


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("answers", ["sse", "json"])
async def test_calls_forwarded_refused_and_unknown(
    mode: Literal["legacy", "auto"], answers: str, sse_server: Upstream, json_server: Upstream
) -> None:
    """A valid call is answered by the upstream; invalid and unsupported calls are refused by the guard."""
    upstream = sse_server if answers == "sse" else json_server
    with anyio.fail_after(TIMEOUT):
        async with Client(guard_params(upstream.url), mode=mode) as client:
            added = await client.call_tool("add", {"a": 40, "b": 2})
            invalid = await client.call_tool("read", {"path": 5})
            unsupported = await client.call_tool("fetch_page", {"url": "http://example.com"})
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("no_such_tool", {})
    assert text_of(added) == "42" and not added.is_error
    assert invalid.is_error and (invalid.meta or {})[REJECTION_KEY]["kind"] == "validation"
    assert unsupported.is_error and (unsupported.meta or {})[REJECTION_KEY]["kind"] == "unsupported_capability"
    assert unknown.value.error.code == -32602


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_progress_is_relayed(mode: Literal["legacy", "auto"], sse_server: Upstream) -> None:
    """Progress notifications on a request's event stream reach the client, in order, before the result."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(TIMEOUT):
        async with Client(guard_params(sse_server.url), mode=mode) as client:
            result = await client.call_tool("progress", {"steps": 3}, progress_callback=on_progress)
    assert text_of(result) == "done after 3 steps"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_broken_response_stream_is_resumed(sse_server: Upstream) -> None:
    """Handshake era: the upstream closes a request's stream early; the guard resumes it with Last-Event-ID."""
    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    before = len(sse_server.records())
    with anyio.fail_after(TIMEOUT):
        async with Client(guard_params(sse_server.url), mode="legacy") as client:
            result = await client.call_tool("break_stream", {}, progress_callback=on_progress)
    assert text_of(result) == "answered after the break"
    assert seen == ["before the break", "after the break"]
    resumed = [r for r in sse_server.records()[before:] if "last-event-id" in r["headers"]]
    assert len(resumed) >= 1 and resumed[0]["method"] == "GET"


async def test_elicitation_reaches_the_client_and_its_answer_the_upstream(sse_server: Upstream) -> None:
    """Handshake era: a server-to-client request on the event stream, and the client's response POSTed back."""
    asked: list[str] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"colour": "blue"})

    with anyio.fail_after(TIMEOUT):
        async with Client(guard_params(sse_server.url), mode="legacy", elicitation_callback=on_elicit) as client:
            result = await client.call_tool("ask", {})
    assert asked == ["Pick a colour"]
    assert text_of(result) == 'accept: {"colour": "blue"}'


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_requests_run_concurrently(mode: Literal["legacy", "auto"], sse_server: Upstream) -> None:
    """A request held by the upstream does not hold up the next one (which releases it)."""
    with anyio.fail_after(TIMEOUT):
        async with Client(guard_params(sse_server.url), mode=mode) as client:
            results: dict[str, str] = {}

            async def call(name: str) -> None:
                results[name] = text_of(await client.call_tool(name, {}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "hold")
                await anyio.sleep(0.2)  # not needed for correctness: only makes `hold` likely to go first
                tg.start_soon(call, "release")
    assert results == {"hold": "released", "release": "ok"}


# ---------------------------------------------------------------------------------------------
# Through the guard, with raw JSON-RPC lines


async def test_handshake_era_headers_session_and_standalone_stream(tmp_path: Path) -> None:
    """The session id and protocol version go on every later request; the GET stream delivers list_changed."""
    with http_server(tmp_path) as upstream:
        with anyio.fail_after(TIMEOUT):
            async with raw_guard(tmp_path, upstream.url) as guard:
                init = await guard.initialize()
                assert init["protocolVersion"] == "2025-11-25"
                listed = await guard.request(1, "tools/list")
                assert len(listed["result"]["tools"]) == 23
                called = await guard.request(2, "tools/call", {"name": "notify", "arguments": {}})
                assert called["result"]["content"] == [{"type": "text", "text": "notified"}]
                while {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} not in guard.backlog:
                    guard.backlog.append(await guard.receive())
            assert guard.process.returncode == 0
        reached, *records = upstream.records()
    assert reached["method"] == "OPTIONS"  # the guard reaching the endpoint, before anything else
    posts = [r for r in records if r["method"] == "POST"]
    assert "mcp-session-id" not in posts[0]["headers"] and "mcp-protocol-version" not in posts[0]["headers"]
    session = posts[1]["headers"]["mcp-session-id"]
    assert all(r["headers"].get("mcp-session-id") == session for r in records[1:])
    assert all(r["headers"].get("mcp-protocol-version") == "2025-11-25" for r in records[1:])
    assert [r["method"] for r in records].count("GET") >= 1
    assert records[-1]["method"] == "DELETE" and records[-1]["status"] == 200


async def test_modern_era_requests_carry_their_envelope_headers(tmp_path: Path) -> None:
    """2026-07-28 requests: MCP-Protocol-Version from the envelope, Mcp-Method, Mcp-Name; no session."""
    with http_server(tmp_path) as upstream:
        with anyio.fail_after(TIMEOUT):
            async with raw_guard(tmp_path, upstream.url) as guard:
                discovered = await guard.request("d", "server/discover", {"_meta": ENVELOPE})
                assert MODERN in discovered["result"]["supportedVersions"]
                listed = await guard.request("l", "tools/list", {"_meta": ENVELOPE})
                assert len(listed["result"]["tools"]) == 23
                called = await guard.request(
                    "c", "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": ENVELOPE}
                )
                assert called["result"]["content"] == [{"type": "text", "text": "5"}]
                unknown = await guard.request("u", "no/such/method", {"_meta": ENVELOPE})
        reached, *records = upstream.records()
    assert reached["method"] == "OPTIONS" and "mcp-method" not in reached["headers"]
    # The upstream's 404 carries a JSON-RPC error (method not found): passed on as the server sent it.
    assert unknown["error"]["code"] == -32601 and not unknown["error"]["message"].startswith("mcp-guard")
    # The guard's own requests of this era (a fresh listing before judging, its listen stream) come between.
    by_method = {r["headers"]["mcp-method"]: r for r in records}
    assert by_method["no/such/method"]["status"] == 404
    assert all(r["method"] == "POST" for r in records)
    assert all(r["headers"]["mcp-protocol-version"] == MODERN for r in records)
    assert all("mcp-session-id" not in r["headers"] for r in records)
    client_methods = [m for m in (r["headers"]["mcp-method"] for r in records) if m != "subscriptions/listen"]
    assert client_methods[:2] == ["server/discover", "tools/list"]
    assert client_methods[-2:] == ["tools/call", "no/such/method"]
    assert set(client_methods[2:-2]) <= {"tools/list"}
    assert by_method["tools/call"]["headers"]["mcp-name"] == "add"


async def test_answers_in_flight_when_the_client_hangs_up_still_arrive(sse_server: Upstream, tmp_path: Path) -> None:
    """Requests piped in, then EOF: the answers still arrive, then the guard ends the session and exits (0)."""
    before = len(sse_server.records())
    with anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, sse_server.url) as guard:
            await guard.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
            await guard.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await guard.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            await guard.send(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
                }
            )
            await guard.close_stdin()
            assert len((await guard.response(2))["result"]["tools"]) == 23
            assert (await guard.response(3))["result"]["content"][0]["text"] == "3"
            assert await guard.process.wait() == 0
    assert [r["method"] for r in sse_server.records()[before:]][-1] == "DELETE"


@pytest.mark.parametrize("answers", ["sse", "json"])
async def test_sixteen_mebibytes_pass_both_ways(
    answers: str, sse_server: Upstream, json_server: Upstream, tmp_path: Path
) -> None:
    """A 16 MiB argument reaches the upstream, and its 16 MiB echo reaches the client."""
    upstream = sse_server if answers == "sse" else json_server
    content = "x" * (16 * MiB)
    with anyio.fail_after(TIMEOUT * 2):
        async with raw_guard(tmp_path, upstream.url) as guard:
            await guard.initialize()
            called = await guard.request(
                1, "tools/call", {"name": "write", "arguments": {"path": "/big", "content": content}}
            )
    text = called["result"]["content"][0]["text"]
    assert text == 'write ran with arguments: {"path":"/big","content":"' + content + '"}'
    assert max(r["body_bytes"] for r in upstream.records()) > 16 * MiB


# ---------------------------------------------------------------------------------------------
# Headers and failures


async def test_authorization_from_the_environment(tmp_path: Path) -> None:
    """``--header-env Authorization=VAR`` reaches the upstream; the token is never logged."""
    with http_server(tmp_path, "--bearer", TOKEN) as upstream:
        env = {"UPSTREAM_AUTH": f"Bearer {TOKEN}"}
        with anyio.fail_after(TIMEOUT):
            params = guard_params(
                upstream.url, "--header-env", "Authorization=UPSTREAM_AUTH", "--log-level", "debug", env=env
            )
            async with Client(params, mode="legacy") as client:
                result = await client.call_tool("add", {"a": 1, "b": 2})
            async with raw_guard(
                tmp_path, upstream.url, "--header-env", "Authorization=UPSTREAM_AUTH", "--log-level", "debug", env=env
            ) as guard:
                await guard.initialize()
                assert (await guard.request(1, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}}))["result"][
                    "content"
                ][0]["text"] == "4"
            stderr = guard.stderr()
        records = upstream.records()
    assert text_of(result) == "3"
    assert records and all(r["authorization"] and r["status"] != 401 for r in records)
    assert "Authorization" in stderr  # the header's name is logged ...
    assert TOKEN not in stderr  # ... never its value


@pytest.mark.parametrize(
    "flags",
    [
        ["--header", f"Authorization=Bearer {TOKEN}"],
        ["--header", f"Authorization: Bearer {TOKEN}"],
        ["--header-env", "Authorization=UPSTREAM_AUTH"],
        ["--header-env", "Authorization: UPSTREAM_AUTH"],
    ],
    ids=["header-equals", "header-colon", "header-env-equals", "header-env-colon"],
)
def test_wrap_and_check_take_the_same_header_syntax(tmp_path: Path, flags: list[str]) -> None:
    """``wrap`` and ``check`` share one parser: NAME=VALUE and 'NAME: VALUE', ``--header-env`` for both."""
    env = {"UPSTREAM_AUTH": f"Bearer {TOKEN}"}
    with http_server(tmp_path, "--bearer", TOKEN) as upstream:
        checked = run_cli(
            "check",
            "--profile",
            "standard",
            "--json",
            "--fail-on",
            "never",
            "--upstream-url",
            upstream.url,
            *flags,
            env=env,
        )
        assert checked.returncode == 0, checked.stderr
        assert len(json.loads(checked.stdout)["tools"]) == 23
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
        wrapped = subprocess.run(
            [sys.executable, *guard_args(upstream.url, *flags)],
            input=json.dumps(init) + "\n",
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env={**os.environ, **env},
            cwd=str(HERE.parents[1]),
            check=False,
        )
        answer = json.loads(wrapped.stdout.splitlines()[0])
        assert answer["result"]["serverInfo"], answer
        records = upstream.records()
    assert records and all(r["status"] != 401 for r in records)
    assert TOKEN not in checked.stderr + checked.stdout + wrapped.stderr


async def test_missing_authorization_is_a_clear_error(tmp_path: Path) -> None:
    """A 401 answers the request with a JSON-RPC error naming the status; the guard goes on running, and
    says on stderr, once (not per request), what the status means (red team 36, finding 7)."""
    with http_server(tmp_path, "--bearer", TOKEN) as upstream, anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, upstream.url, "--header", "Authorization=Bearer wrong") as guard:
            init = await guard.request(0, "initialize", INIT)
            again = await guard.request(1, "ping")
            third = await guard.request(2, "ping")
        refused = await connect_error(guard_params(upstream.url), "auto")
    assert "HTTP 401" in str(refused)
    assert init["error"]["code"] == -32603
    assert "HTTP 401 Unauthorized" in init["error"]["message"]
    assert "--header" in init["error"]["message"]
    assert "401" in again["error"]["message"] and "401" in third["error"]["message"]
    said = [line for line in guard.stderr().splitlines() if "HTTP 401" in line]
    assert said == [
        f"mcp-guard WARNING: the upstream at {upstream.url} answered HTTP 401 Unauthorized: the server wants "
        "credentials it did not get, or did not accept: give them with --header or --header-env (docs/wrap.md, "
        '"A remote server") (each status is logged once, then counted)',
        "mcp-guard WARNING: the upstream's failures so far: HTTP 401 Unauthorized, 2 times (counted again at 4)",
    ]
    assert "wrong" not in guard.stderr() and "Bearer" not in guard.stderr()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_upstream_down_is_a_clear_error_not_a_hang(mode: Literal["legacy", "auto"], tmp_path: Path) -> None:
    """Nothing listens at the URL: the upstream cannot start, so every request is answered at once with an
    error naming the URL and the reason, and the guard exits with status 1, as with a command that cannot
    start (it exited 0: red team 36, finding 7)."""
    url = free_url()
    with anyio.fail_after(TIMEOUT):
        refused = await connect_error(guard_params(url), mode)
        async with raw_guard(tmp_path, url) as guard:
            init = await guard.request(0, "initialize", INIT)
            listed = await guard.request(1, "tools/list")
    reason = f"cannot reach the upstream at {url}: connection refused"
    assert reason in str(refused)
    text = f"mcp-guard: the upstream server could not be started ({reason}); mcp-guard exits"
    assert init["error"] == listed["error"] == {"code": -32603, "message": text}
    assert guard.process.returncode == 1
    assert f"mcp-guard ERROR: {reason}" in guard.stderr().splitlines()


async def test_a_tls_failure_at_start_exits_with_status_1(sse_server: Upstream, tmp_path: Path) -> None:
    """``https://`` to a server that speaks plain HTTP: the TLS handshake fails, which the guard says in
    words (it said "operation not permitted", OpenSSL's code read as the system's), and exits with status 1."""
    url = sse_server.url.replace("http://", "https://")
    with anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, url) as guard:
            init = await guard.request(0, "initialize", INIT)
            await guard.close_stdin()
            await guard.process.wait()
    reason = f"cannot reach the upstream at {url}: the TLS handshake failed (wrong version number)"
    assert (
        init["error"]["message"] == f"mcp-guard: the upstream server could not be started ({reason}); mcp-guard exits"
    )
    assert guard.process.returncode == 1
    assert f"mcp-guard ERROR: {reason}" in guard.stderr().splitlines()


async def test_a_client_that_sends_nothing_still_ends_the_guard(tmp_path: Path) -> None:
    """The endpoint is reached when the guard starts, before the client says anything: an unreachable
    one ends the guard (status 1) whether or not a request comes, as a command that cannot start does."""
    url = free_url()
    with anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, url) as guard:
            await guard.process.wait()  # (the grace for the client's requests passes, stdin still open)
    assert guard.process.returncode == 1
    assert f"mcp-guard ERROR: cannot reach the upstream at {url}: connection refused" in guard.stderr()


async def test_unreachable_upstream_errors_say_what_happened(tmp_path: Path) -> None:
    """The upstream stops after the start (connection refused): forwarded requests and the guard's own
    listing (for a call) both say so; nothing pretends the upstream answered."""
    with http_server(tmp_path) as upstream, anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, upstream.url) as guard:
            await guard.initialize()
            upstream.process.kill()
            upstream.process.wait()
            called = await guard.request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
            pinged = await guard.request(2, "ping")
    reason = f"cannot reach the upstream at {upstream.url}: connection refused"
    assert called["error"] == {"code": -32603, "message": f"mcp-guard could not list the upstream's tools: {reason}"}
    assert pinged["error"] == {"code": -32603, "message": f"mcp-guard: {reason}"}
    assert "answered" not in called["error"]["message"]


class StatusHandler(BaseHTTPRequestHandler):
    """Answers each POST with the status its path names (``/503``; ``/404-rpc``: with a JSON-RPC error as the
    body, for the request's id), each ``OPTIONS`` (the guard reaching the endpoint) with ``204``."""

    def do_OPTIONS(self) -> None:
        self.send_response(204)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        status, _, rpc = self.path.strip("/").partition("-")
        if rpc:
            error = {"code": -32001, "message": "from the server"}
            body, media = (
                json.dumps({"jsonrpc": "2.0", "id": sent.get("id"), "error": error}).encode(),
                "application/json",
            )
        else:
            body, media = b"refused", "text/plain"
        self.send_response(int(status))
        self.send_header("content-type", media)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def status_server() -> Iterator[str]:
    """A local HTTP server of :class:`StatusHandler`; its base URL (``http://127.0.0.1:PORT``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), StatusHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("401", "HTTP 401 Unauthorized: the server wants credentials it did not get, or did not accept"),
        ("403", "HTTP 403 Forbidden: the server refused access with the credentials given"),
        ("404", "HTTP 404 Not Found: there is nothing at this URL: check its path"),
        ("500", "HTTP 500 Internal Server Error: the server failed on its side (its own log may say why)"),
        ("503", "HTTP 503 Service Unavailable: the server is unavailable (down, starting or overloaded)"),
        ("401-rpc", "HTTP 401 Unauthorized with a JSON-RPC error, passed on to the client: the server wants"),
        ("404-rpc", "HTTP 404 Not Found with a JSON-RPC error, passed on to the client (each status"),
    ],
)
async def test_an_error_status_is_said_once_on_stderr_with_what_it_means(
    status_server: str, path: str, said: str, tmp_path: Path
) -> None:
    """Each request is answered (the server's JSON-RPC error, or the guard's naming the status); stderr says
    the status and what it means once, then counts (red team 36, finding 7: nothing was said when the
    server's error body was passed on, and the rest was said once per request)."""
    url = f"{status_server}/{path}"
    with anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, url) as guard:
            answers = [
                await guard.request(n, "initialize" if n == 0 else "ping", INIT if n == 0 else None) for n in range(3)
            ]
    status = int(path.partition("-")[0])
    for answer in answers:
        if path.endswith("-rpc"):
            assert answer["error"] == {"code": -32001, "message": "from the server"}
        else:
            assert answer["error"]["message"].startswith(f"mcp-guard: the upstream answered HTTP {status} ")
    lines = [line for line in guard.stderr().splitlines() if f" {status} " in line]
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"mcp-guard WARNING: the upstream at {url} answered {said}"), lines
    assert lines[0].endswith("(each status is logged once, then counted)")
    assert lines[1].startswith("mcp-guard WARNING: the upstream's failures so far: HTTP ")
    assert "did not answer" not in guard.stderr()
    assert guard.process.returncode == 0


async def test_ended_session_is_answered_then_opened_again(tmp_path: Path) -> None:
    """A 404 for the session id: the request is answered with an error (never re-sent); the next
    request opens a new session with the client's handshake replayed, and the client is told to re-list."""
    with http_server(tmp_path) as upstream, anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, upstream.url) as guard:
            await guard.initialize()
            assert "result" in await guard.request(1, "tools/list")
            session = next(
                r["headers"]["mcp-session-id"] for r in upstream.records() if "mcp-session-id" in r["headers"]
            )
            async with httpx2.AsyncClient() as http:
                ended = await http.delete(
                    upstream.url, headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
                )
            assert ended.status_code == 200
            answer = await guard.request(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
            assert answer["error"]["code"] == -32603
            assert "ended the session (HTTP 404)" in answer["error"]["message"]
            again = await guard.request(3, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}})
            assert again["result"]["content"][0]["text"].endswith("4"), again
            assert any(m.get("method") == "notifications/tools/list_changed" for m in guard.backlog)
            sessions = {r["headers"].get("mcp-session-id") for r in upstream.records()} - {None}
            assert len(sessions) == 2  # a new session was opened


@pytest.mark.parametrize("server_args", [[], ["--event-store"]])
async def test_upstream_crash_mid_call_is_answered(server_args: list[str], tmp_path: Path) -> None:
    """The upstream dies while a call is in flight: the call is answered with an error, the next one too."""
    with http_server(tmp_path, *server_args) as upstream, anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, upstream.url) as guard:
            await guard.initialize()
            assert "result" in await guard.request(0, "tools/list")  # (the call needs no listing of the guard's own)
            await guard.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hold"}})
            while [r["method"] for r in upstream.records()].count("POST") < 4:
                await anyio.sleep(0.05)  # until the call (the fourth POST, after the listing) reached the upstream
            upstream.process.kill()
            upstream.process.wait()
            held = await guard.response(1)
            after = await guard.request(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    assert held["error"]["code"] == -32603
    # Without numbered events the broken stream is the answer; with them, resuming finds nobody listening.
    assert held["error"]["message"] == "mcp-guard: the connection to the upstream broke before it answered" or held[
        "error"
    ]["message"].startswith("mcp-guard: cannot reach the upstream at " + upstream.url + ": ")
    assert after["error"]["message"].startswith("mcp-guard: cannot reach the upstream at " + upstream.url)


async def test_stateless_upstream(tmp_path: Path) -> None:
    """A server without sessions: no session id, the GET stream refused, calls work."""
    with http_server(tmp_path, "--stateless") as upstream:
        with anyio.fail_after(TIMEOUT):
            async with Client(guard_params(upstream.url), mode="legacy") as client:
                added = await client.call_tool("add", {"a": 1, "b": 1})
                listed = await client.list_tools()
        records = upstream.records()
    assert text_of(added) == "2" and len(listed.tools) == 23
    assert all("mcp-session-id" not in r["headers"] for r in records)
    assert "DELETE" not in [r["method"] for r in records]


async def test_request_larger_than_the_upstream_takes(tmp_path: Path) -> None:
    """A 413 from the upstream answers the call with an error naming it."""
    with http_server(tmp_path, "--max-body-bytes", "4096") as upstream, anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, upstream.url) as guard:
            await guard.initialize()
            called = await guard.request(
                1, "tools/call", {"name": "write", "arguments": {"path": "p", "content": "x" * 8000}}
            )
            small = await guard.request(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    assert "HTTP 413" in called["error"]["message"]
    assert small["result"]["content"][0]["text"] == "2"


@pytest.mark.parametrize("answers", ["sse", "json"])
async def test_answer_larger_than_the_cap(
    answers: str, sse_server: Upstream, json_server: Upstream, tmp_path: Path
) -> None:
    """``--max-message-bytes``: a larger answer becomes an error for its request; later ones pass."""
    upstream = sse_server if answers == "sse" else json_server
    with anyio.fail_after(TIMEOUT):
        async with raw_guard(tmp_path, upstream.url, "--max-message-bytes", "50000") as guard:
            await guard.initialize()
            big = await guard.request(1, "tools/call", {"name": "big", "arguments": {"size": 60000}})
            too_long = await guard.request(
                3, "tools/call", {"name": "write", "arguments": {"path": "p", "content": "x" * 60000}}
            )
            small = await guard.request(
                2, "tools/call", {"name": "write", "arguments": {"path": "p", "content": "x" * 10}}
            )
    assert big["error"]["code"] == -32603
    assert "larger than 50000 bytes" in big["error"]["message"]
    assert too_long["error"]["code"] == -32600  # the cap holds for the client's messages too (never forwarded)
    assert small["result"]["content"][0]["text"].startswith("write ran with arguments")


async def test_redirect_within_the_origin_is_followed(sse_server: Upstream) -> None:
    """``/mcp/`` answers 307 to ``/mcp``: followed, body and all."""
    with anyio.fail_after(TIMEOUT):
        async with Client(guard_params(sse_server.url + "/"), mode="legacy") as client:
            added = await client.call_tool("add", {"a": 20, "b": 22})
    assert text_of(added) == "42"


# ---------------------------------------------------------------------------------------------
# The HTTP upstream alone (what the guard's checks would stop before it)


class Direct:
    """A raw conversation with :class:`HttpUpstream`."""

    def __init__(self, upstream: HttpUpstream) -> None:
        self.upstream = upstream
        self.backlog: list[Any] = []

    async def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.upstream.send(json.dumps(message).encode())
        while True:
            answer = json.loads(await self.upstream.receive())
            if type(answer) is dict and answer.get("id") == request_id and "method" not in answer:
                return answer
            self.backlog.append(answer)


async def test_mcp_param_headers_mirrored_after_listing(tmp_path: Path) -> None:
    """2026-07-28: a tool's ``x-mcp-header`` argument goes out as ``Mcp-Param-*`` once the tool was listed.

    Before the listing the upstream refuses the call (``HeaderMismatch``, HTTP 400), and that
    JSON-RPC error is passed on as the server sent it.
    """
    call = {"name": "region", "arguments": {"region": "eu-west", "q": "x"}, "_meta": ENVELOPE}
    with http_server(tmp_path) as upstream:
        with anyio.fail_after(TIMEOUT):
            async with open_http_upstream(upstream.url) as http:
                direct = Direct(http)
                unlisted = await direct.request(1, "tools/call", call)
                await direct.request(2, "tools/list", {"_meta": ENVELOPE})
                listed = await direct.request(3, "tools/call", call)
        records = upstream.records()
    assert unlisted["error"]["code"] == -32020
    assert records[0]["status"] == 400
    assert listed["result"]["content"][0]["text"] == 'region ran with arguments: {"region":"eu-west","q":"x"}'
    assert records[2]["headers"]["mcp-param-region"] == "eu-west"


async def test_error_bodies_are_passed_on_for_their_request(sse_server: Upstream) -> None:
    """An HTTP error whose body is a JSON-RPC error with ``id: null`` answers the request that caused it."""
    with anyio.fail_after(TIMEOUT):
        async with open_http_upstream(sse_server.url) as http:
            direct = Direct(http)
            no_session = await direct.request(7, "tools/list")  # no initialize: no session id
    assert no_session["id"] == 7
    assert no_session["error"]["code"] == -32600
    assert "session" in no_session["error"]["message"].lower()
    assert not no_session["error"]["message"].startswith("mcp-guard")


async def test_modern_cancellation_aborts_the_post(tmp_path: Path) -> None:
    """2026-07-28: ``notifications/cancelled`` closes the request's stream, is not POSTed, and is not answered."""
    with http_server(tmp_path) as upstream:
        with anyio.fail_after(TIMEOUT):
            async with open_http_upstream(upstream.url) as http:
                direct = Direct(http)
                await http.send(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": "held",
                            "method": "tools/call",
                            "params": {"name": "hold", "_meta": ENVELOPE},
                        }
                    ).encode()
                )
                await anyio.sleep(0.2)  # lets the POST start; correctness does not depend on it
                await http.send(
                    json.dumps(
                        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "held"}}
                    ).encode()
                )
                after = await direct.request(
                    "next", "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": ENVELOPE}
                )
        records = upstream.records()
    assert after["result"]["content"][0]["text"] == "3"
    assert direct.backlog == []
    assert [r["headers"].get("mcp-method") for r in records if r["method"] == "POST"].count(None) == 0


async def test_close_send_ends_the_stream_after_the_answers(tmp_path: Path, sse_server: Upstream) -> None:
    """After ``close_send`` the request in flight is still answered, then the stream ends."""
    with anyio.fail_after(TIMEOUT):
        async with open_http_upstream(sse_server.url) as http:
            direct = Direct(http)
            await direct.request(0, "initialize", INIT)
            await http.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            await http.send(
                b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","arguments":{"steps":2}}}'
            )
            await http.close_send()
            with pytest.raises(anyio.ClosedResourceError):
                await http.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
            received = []
            with pytest.raises(anyio.EndOfStream):
                while True:
                    received.append(json.loads(await http.receive()))
    assert [m.get("id") for m in received] == [1]


# ---------------------------------------------------------------------------------------------
# Command line


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mcp_guard ARGS`` with no stdin; return the finished process."""
    return subprocess.run(
        [sys.executable, "-m", "mcp_guard", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, **(env or {})},
        cwd=str(HERE.parents[1]),
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--upstream-url", "http://127.0.0.1:9/mcp", "--", "true"], "not both"),
        (["--header", "X-A=1", "--", "true"], "need --upstream-url"),
        (["--upstream-url", "ftp://example.com/mcp"], "http:// or https://"),
        (
            ["--upstream-url", "http://127.0.0.1:9/mcp", "--header-env", "Authorization=NO_SUCH_VAR_4711"],
            "NO_SUCH_VAR_4711",
        ),
        (["--upstream-url", "http://127.0.0.1:9/mcp", "--header", "Mcp-Session-Id=x"], "set by mcp-guard"),
        (["--upstream-url", "http://127.0.0.1:9/mcp", "--header", "Bad Name=x"], "not a valid HTTP header name"),
        (["--upstream-url", "http://127.0.0.1:9/mcp", "--max-message-bytes", "0"], "positive"),
    ],
)
def test_usage_errors(args: list[str], says: str) -> None:
    """Wrong combinations are usage errors (status 2) that say what is wrong."""
    assert "NO_SUCH_VAR_4711" not in os.environ
    done = run_cli("wrap", *args)
    assert done.returncode == 2
    assert says in done.stderr
    assert done.stdout == ""


def test_parse_headers() -> None:
    """Values from the command line and the environment; errors never carry a value."""
    env = {"AUTH": "Bearer abc", "EMPTY": ""}
    assert parse_headers(["X-One=1", "X-Two = two words "], ["Authorization=AUTH"], env) == {
        "X-One": "1",
        "X-Two": "two words",
        "Authorization": "Bearer abc",
    }
    assert parse_headers([], ["X-Empty=EMPTY"], env) == {"X-Empty": ""}
    # One syntax for wrap and check: NAME=VALUE or 'NAME: VALUE'; the name ends at the first '=' or ':'.
    assert parse_headers(["Authorization: Bearer a=b", "X-C=d:e", "X-E:"], ["X-F: AUTH"], env) == {
        "Authorization": "Bearer a=b",
        "X-C": "d:e",
        "X-E": "",
        "X-F": "Bearer abc",
    }
    for values, from_env, says in [
        (["NoEquals"], [], "NAME=VALUE or 'NAME: VALUE'"),
        (["Bearer abc"], [], "no '=' or ':' found"),
        (["Bearer abc: x"], [], "not a valid HTTP header name"),
        (["X-A=1", "x-a=2"], [], "more than once"),
        (["Accept=*/*"], [], "set by mcp-guard"),
        (["Mcp-Param-Region=eu"], [], "set by mcp-guard"),
        (["X-A=caf\u00e9"], [], "printable ASCII"),
        ([], ["X-A=MISSING"], "MISSING"),
        ([], ["X-A"], "NAME=ENVVAR"),
    ]:
        with pytest.raises(ValueError, match=says) as excinfo:
            parse_headers(values, from_env, env)
        assert "Bearer abc" not in str(excinfo.value)
    with pytest.raises(ValueError, match="printable ASCII") as excinfo:
        parse_headers([], ["X-A=BAD"], {"BAD": "sec\nret"})
    assert "sec" not in str(excinfo.value)


def test_connect_failure_finds_the_operating_systems_reason() -> None:
    """httpx says "All connection attempts failed"; the reason below it (per address tried) is what counts."""
    import errno
    import socket

    def chained(cause: BaseException) -> Exception:
        """The chain httpx builds: ConnectError <- httpcore's error(OSError) <- OSError <- the reason(s)."""
        attempts = OSError("All connection attempts failed")
        attempts.__cause__ = cause
        exc = httpx2.ConnectError("All connection attempts failed")
        exc.__cause__ = Exception(attempts)  # httpcore carries the OSError as its argument
        return exc

    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed ('127.0.0.1', 1)")
    assert connect_failure(chained(refused)) == "connection refused"
    both = ExceptionGroup("multiple", [refused, ConnectionRefusedError(errno.ECONNREFUSED, "::1")])
    assert connect_failure(chained(both)) == "connection refused"
    mixed = ExceptionGroup("multiple", [refused, OSError(errno.ENETUNREACH, "x")])
    assert connect_failure(chained(mixed)) == f"connection refused; {os.strerror(errno.ENETUNREACH).lower()}"
    unknown = socket.gaierror(-2, "Name or service not known")
    assert connect_failure(chained(unknown)) == "the host name could not be resolved (Name or service not known)"
    assert connect_failure(httpx2.ConnectError("no reason below")) == "no reason below"
    # TLS: OpenSSL's errno is no system errno (1 read as the system's said "operation not permitted").
    untrusted = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    untrusted.verify_message, untrusted.reason = "self-signed certificate", "CERTIFICATE_VERIFY_FAILED"
    assert (
        connect_failure(chained(untrusted)) == "the server's TLS certificate was not accepted (self-signed certificate)"
    )
    garbled = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
    garbled.reason = "WRONG_VERSION_NUMBER"
    assert connect_failure(chained(garbled)) == "the TLS handshake failed (wrong version number)"


def test_shown_url_hides_credentials() -> None:
    """Logs and messages show scheme, host, port and path only."""
    assert shown_url("https://user:pw@mcp.example.com:8443/v1/mcp?token=abc#x") == "https://mcp.example.com:8443/v1/mcp"
    assert shown_url("http://[::1]:9000/mcp") == "http://[::1]:9000/mcp"
    assert shown_url("https://mcp.example.com/mcp") == "https://mcp.example.com/mcp"


# ---------------------------------------------------------------------------------------------
# Error bodies, through a scripted transport


@asynccontextmanager
async def scripted_upstream(answer: httpx2.Response) -> AsyncIterator[HttpUpstream]:
    """An :class:`HttpUpstream` whose every HTTP request is answered with ``answer`` (no network)."""
    transport = httpx2.MockTransport(lambda request: answer)
    async with httpx2.AsyncClient(transport=transport) as client, anyio.create_task_group() as tg:
        upstream = HttpUpstream(client, "http://127.0.0.1:9/mcp", tg)
        try:
            yield upstream
        finally:
            await upstream.aclose()
            tg.cancel_scope.cancel()


ERROR_LITERALS = b'{"big":1e400,"fine":0.1000000000000000000001,"small":-2.5e-400}'


@pytest.mark.parametrize("request_id", [None, 5], ids=["id-null", "id-given"])
async def test_an_error_body_is_read_with_the_guards_decoder(request_id: int | None) -> None:
    """An HTTP error's JSON-RPC body is decoded as every upstream byte is: its number literals reach the
    client as the server wrote them (plain ``json.loads`` made ``1e400`` an infinity, which cannot be
    written, and the request got the guard's generic ``HTTP 400`` text instead of the server's error)."""
    body = (
        b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"error":{"code":-32602,'
        b'"message":"bad arguments","data":' + ERROR_LITERALS + b"}}"
    )
    answer = httpx2.Response(400, headers={"content-type": "application/json"}, content=body)
    with anyio.fail_after(TIMEOUT):
        async with scripted_upstream(answer) as http:
            await http.send(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}')
            raw = await http.receive()
    assert ERROR_LITERALS in raw
    assert json.loads(raw)["id"] == 5
    assert json.loads(raw)["error"]["message"] == "bad arguments"


async def test_an_error_body_that_is_not_utf8_gets_the_guards_own_error() -> None:
    """Invalid UTF-8 (here UTF-16, which ``json.loads`` of bytes accepts) is not JSON to the guard."""
    body = '{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"from the server"}}'.encode("utf-16")
    answer = httpx2.Response(400, headers={"content-type": "application/json"}, content=body)
    with anyio.fail_after(TIMEOUT):
        async with scripted_upstream(answer) as http:
            await http.send(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}')
            message = json.loads(await http.receive())
    assert message["id"] == 5
    assert message["error"]["code"] == -32603
    assert message["error"]["message"].startswith("mcp-guard: the upstream answered HTTP 400 Bad Request")
