"""What the HTTP front's end-to-end tests share: a guard serving ``--http`` in a process of its own
(:func:`guard_process`, :func:`open_guard` for ``wrap``), an :class:`~mcp_guard.fronts.http.HttpFront` served
in the test's own process (:func:`in_process_front`), raw bytes on a socket (:func:`exchange`), and the
JSON-RPC and HTTP helpers the tests speak through (``httpx``).

A guard process picks a free port and names it on stderr (``serving MCP streamable HTTP at URL``); its
stderr goes to a file that the helpers poll. Upstream processes are the guard's children, found in
``/proc`` (:func:`children`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import Process

from mcp_guard.fronts.http import HttpConfig, HttpFront, serve_front

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SIGMA_SERVER = ROOT / "fixtures" / "sigma" / "server.py"

TIMEOUT = 60.0
"""Hang guard for one test step (generous: the machine is shared)."""

MODERN = "2026-07-28"
PV_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "http-test", "version": "0"}}


# ---------------------------------------------------------------------------------------------
# The guard process


@dataclass
class Guard:
    """A running guard: its process, endpoint URL and stderr file."""

    process: Process
    url: str
    log_path: Path

    @property
    def log(self) -> str:
        """Everything the guard wrote on stderr so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    @property
    def host(self) -> str:
        """``127.0.0.1:PORT``."""
        return self.url.split("/")[2]


@asynccontextmanager
async def guard_process(
    argv: list[str], log_path: Path, *, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[Process, str]]:
    """Run ``argv`` (a guard with ``--http ADDRESS``; stderr to ``log_path``, cwd the repository) until it names
    its endpoint on stderr (``serving MCP streamable HTTP at URL``); yield the process and that URL. On exit:
    SIGTERM (if it still runs), then a kill if it has not ended within :data:`TIMEOUT`."""
    with log_path.open("wb") as log_file:
        process = await anyio.open_process(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log_file,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
        )
    try:
        url = None
        with anyio.fail_after(TIMEOUT):
            while url is None:
                found = re.search(r"serving MCP streamable HTTP at (\S+)", log_path.read_text(errors="replace"))
                if found is not None:
                    url = found.group(1)
                else:
                    assert process.returncode is None, log_path.read_text()
                    await anyio.sleep(0.05)
        yield process, url
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        with anyio.move_on_after(TIMEOUT):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.aclose()


@asynccontextmanager
async def open_guard(
    tmp: Path, *options: str, upstream: Path = SIGMA_SERVER, env: dict[str, str] | None = None
) -> AsyncIterator[Guard]:
    """Start ``mcp-guard wrap --profile standard --http 127.0.0.1:0 OPTIONS -- python UPSTREAM``
    (:func:`guard_process`); stop it (SIGTERM) on exit."""
    log_path = tmp / f"guard-{os.urandom(4).hex()}.log"
    command = [sys.executable, "-m", "mcp_guard", "wrap", "--profile", "standard", "--http", "127.0.0.1:0", *options]
    async with guard_process([*command, "--", sys.executable, str(upstream)], log_path, env=env) as (process, url):
        yield Guard(process, url, log_path)


@asynccontextmanager
async def in_process_front(
    config: HttpConfig, upstream: Path = SIGMA_SERVER
) -> AsyncIterator[tuple[str, int, type[asyncio.Protocol]]]:
    """Serve an :class:`HttpFront` (profile ``standard``) over ``python UPSTREAM`` in this process (its HTTP parser
    is the one this process would pick: httptools, or h11 where ``httptools`` cannot be imported); yield its host,
    port and HTTP protocol class; stopped on exit."""
    guard = HttpFront([sys.executable, str(upstream)], config, profile="standard")
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_front, guard, "in-process front")
        with anyio.fail_after(TIMEOUT):
            while guard.server is None or not guard.server.started:
                await anyio.sleep(0.02)
        host, port = guard.address.split("/")[2].rsplit(":", 1)
        try:
            yield host, int(port), guard.server.config.http_protocol_class
        finally:
            guard.server.should_exit = True


def use_parser(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a front started in this process parse HTTP with ``parser``: ``httptools`` (the test is skipped where it
    is not installed), or ``h11`` (as if httptools were not installed: the front falls back to h11)."""
    if parser == "httptools":
        pytest.importorskip("httptools")
    else:
        monkeypatch.setitem(sys.modules, "httptools", None)


async def exchange(host: str, port: int, data: bytes, *, pause: float = 0.0, whole: bool = False) -> bytes:
    """Send raw ``data`` on a new connection (a byte per ``pause`` seconds when given, until an answer comes);
    everything the front sends until it closes the connection, or, with ``whole``, until one response is all
    in (its head, and as many body bytes as its Content-Length says: an SSE stream is cut after its head)."""
    reply = b""
    async with await anyio.connect_tcp(host, port) as stream:
        with anyio.fail_after(TIMEOUT):
            if pause:
                for i in range(len(data)):
                    await stream.send(data[i : i + 1])
                    with anyio.move_on_after(pause):
                        reply += await stream.receive()
                        break
            else:
                with suppress(anyio.BrokenResourceError):
                    await stream.send(data)
            with suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while not (whole and _whole(reply)):
                    reply += await stream.receive()
    return reply


def _whole(reply: bytes) -> bool:
    """Whether one response with a Content-Length is all in (one without: its head is in)."""
    head, found, rest = reply.partition(b"\r\n\r\n")
    if not found:
        return False
    length = re.search(rb"(?i)\r\ncontent-length: (\d+)", head)
    return length is None or len(rest) >= int(length.group(1))


def status_of(reply: bytes) -> int:
    """The status code of a raw HTTP/1.1 reply (it must have one)."""
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", reply)
    assert match is not None, reply[:200]
    return int(match.group(1))


def children(pid: int) -> set[int]:
    """The pids of ``pid``'s child processes (from ``/proc``)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    """Whether a process exists (and is not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def eventually(check: Callable[[], bool], what: str) -> None:
    """Poll ``check`` until it holds (hang guard :data:`TIMEOUT`)."""
    with anyio.fail_after(TIMEOUT):
        while not check():
            await anyio.sleep(0.05)


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counting processes needs /proc")


# ---------------------------------------------------------------------------------------------
# Raw HTTP helpers


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC request."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(request_id: Any, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``tools/call`` request."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return request(request_id, "tools/call", params)


def modern(message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``message`` as a 2026-07-28 request: its ``_meta`` envelope and routing headers."""
    params = dict(message.get("params") or {})
    params["_meta"] = {
        **params.get("_meta", {}),
        PV_KEY: MODERN,
        CAPS_KEY: {},
        INFO_KEY: {"name": "http-test", "version": "0"},
    }
    headers = {"mcp-protocol-version": MODERN, "mcp-method": message["method"]}
    if "name" in params:
        headers["mcp-name"] = params["name"]
    return {**message, "params": params}, headers


async def post(
    client: httpx.AsyncClient,
    guard: Guard,
    message: Any,
    session: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """POST one message (any JSON value, or raw bytes) to the guard's endpoint; the whole answer is read."""
    merged = dict(ACCEPT)
    if session is not None:
        merged["mcp-session-id"] = session
    merged.update(headers or {})
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return await client.post(guard.url, content=body, headers=merged)


def messages_of(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an answer: one JSON body, or the events of an SSE stream."""
    kind = response.headers.get("content-type", "")
    if kind.startswith("application/json"):
        return [response.json()]
    assert kind.startswith("text/event-stream"), kind
    return parse_sse(response.text)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The ``data`` payloads of an SSE text, parsed (comments skipped)."""
    found = []
    data: list[str] = []
    for line in text.splitlines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "" and data:
            found.append(json.loads("\n".join(data)))
            data = []
    return found


async def sse_events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The messages of a streamed SSE answer, as they arrive."""
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []


async def open_session(client: httpx.AsyncClient, guard: Guard) -> str:
    """Initialize a handshake-era session; return its id."""
    answer = await post(client, guard, request(0, "initialize", INIT))
    assert answer.status_code == 200, answer.text
    session = answer.headers["mcp-session-id"]
    assert answer.json()["result"]["protocolVersion"] == "2025-11-25"
    done = await post(client, guard, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert done.status_code == 202
    return session


def text_of(message: dict[str, Any]) -> str:
    """The text of a ``tools/call`` result made of one text content."""
    content = message["result"]["content"]
    assert len(content) == 1
    text: str = content[0]["text"]
    return text


def http_client(**kwargs: Any) -> httpx.AsyncClient:
    """An httpx client with generous timeouts (hang guards only)."""
    return httpx.AsyncClient(timeout=httpx.Timeout(TIMEOUT), **kwargs)
