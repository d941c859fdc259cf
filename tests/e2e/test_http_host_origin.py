"""Issue 25 item 3 end to end: one ``Host``, one ``Origin``, over a real socket.

Each bad request of the issue (two ``Host`` lines in either order, a ``Host`` whose port is
not digits, ``localhost:PORT.evil.com``, ``127.0.0.1:PORT, evil.com``, two ``Origin`` lines,
an absolute-form target naming a foreign host) is sent as raw bytes (no HTTP client would
send them) to ``wrap --http`` and to ``serve --http``, as a handshake-era ``initialize`` and
as a 2026-07-28 request; each must be refused (400 for the Host's form, 403 for the Origins
and a foreign authority), and a well-formed request, or an absolute-form target naming the
guard while ``Host`` names another, must pass. In-process, the same under either HTTP parser
(httptools hands the app the path of an absolute-form target only; h11 the whole target).
The log says which check refused, never a header's value.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.fronts.http import HttpConfig
from tests.e2e.http_guard import SIGMA_SERVER, exchange, guard_process, in_process_front, status_of, use_parser

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "host-test", "version": "0"},
}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host-test", "version": "0"}}


def body_of(era: str) -> tuple[bytes, list[tuple[str, str]]]:
    """A request of ``era`` (``handshake``: ``initialize``; ``modern``: a 2026-07-28 ``tools/list``) and its headers."""
    if era == "handshake":
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}).encode(), []
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}
    return json.dumps(message).encode(), [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")]


@dataclass(frozen=True)
class Case:
    """One request: its target and ``Host``/``Origin`` lines (``{hp}`` is the guard's ``127.0.0.1:PORT``)."""

    what: str
    target: str
    lines: tuple[tuple[str, str], ...]
    status: int | None  # None: must pass (neither 400 nor 403)


GOOD = ("Host", "{hp}")
CASES = (
    Case("well formed", "/mcp", (GOOD,), None),
    Case("absolute form naming the guard (Host ignored)", "http://{hp}/mcp", (("Host", "evil.example"),), None),
    Case("two Host lines, ours first", "/mcp", (GOOD, ("Host", "evil.example")), 400),
    Case("two Host lines, ours last", "/mcp", (("Host", "evil.example"), GOOD), 400),
    Case("two equal Host lines", "/mcp", (GOOD, GOOD), 400),
    Case("userinfo-like port", "/mcp", (("Host", "{hp}@evil.example"),), 400),
    Case("port with junk", "/mcp", (("Host", "{hp}junk"),), 400),
    Case("port then a domain", "/mcp", (("Host", "localhost:{port}.evil.com"),), 400),
    Case("a list of hosts", "/mcp", (("Host", "{hp}, evil.com"),), 400),
    Case(
        "two Origin lines, loopback first",
        "/mcp",
        (GOOD, ("Origin", "http://localhost"), ("Origin", "http://evil.example")),
        403,
    ),
    Case(
        "two Origin lines, loopback last",
        "/mcp",
        (GOOD, ("Origin", "http://evil.example"), ("Origin", "http://localhost")),
        403,
    ),
    Case("absolute form naming another host", "http://evil.example/mcp", (GOOD,), 403),
    Case("absolute form naming another host and our port", "http://evil.example:{port}/mcp", (GOOD,), 403),
)
LOG_LINES = (
    "refused an HTTP request: bad request (the request has more than one Host header)",
    "refused an HTTP request: bad request (the Host header is not a valid host[:port])",
    "refused an HTTP request: forbidden (the request has more than one Origin header)",
    "refused an HTTP request: forbidden (the Host header is not an allowed host)",
)


async def send_raw(host: str, port: int, case: Case, era: str) -> tuple[int, bytes]:
    """Send ``case`` as raw HTTP/1.1 bytes; the status and the response (an SSE stream: its head)."""
    hp = f"{host}:{port}"
    body, extra = body_of(era)
    lines = [(name, value.format(hp=hp, port=port)) for name, value in case.lines]
    lines += [
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        *extra,
        ("Content-Length", str(len(body))),
        ("Connection", "close"),
    ]
    head = f"POST {case.target.format(hp=hp, port=port)} HTTP/1.1\r\n"
    data = (head + "".join(f"{n}: {v}\r\n" for n, v in lines) + "\r\n").encode("latin-1") + body
    reply = await exchange(host, port, data, whole=True)
    return status_of(reply), reply


async def judge_all(host: str, port: int, era: str) -> None:
    """Every case against one front, in one era: each refused (or passed) as the issue says."""
    for case in CASES:
        status, reply = await send_raw(host, port, case, era)
        if case.status is None:
            assert status not in (400, 403), (case.what, era, reply[:300])
        else:
            assert status == case.status, (case.what, era, reply[:300])
            # The front's JSON-RPC error, or (two Host lines under h11) the parser's own 400.
            assert b'"error"' in reply or b"Invalid HTTP request" in reply, (case.what, reply[:300])
            assert b"evil" not in reply, (case.what, reply[:300])


@asynccontextmanager
async def guard_at(tmp: Path, argv: list[str]) -> AsyncIterator[tuple[str, int, Path]]:
    """Run ``argv`` (a guard with ``--http 127.0.0.1:0``); yield its host, port and stderr file."""
    log_path = tmp / f"guard-{os.urandom(4).hex()}.log"
    async with guard_process(argv, log_path) as (_process, url):
        found = re.fullmatch(r"http://([\d.]+):(\d+)/mcp", url)
        assert found is not None, url
        yield found.group(1), int(found.group(2)), log_path


def _argv(front: str, tmp: Path) -> list[str]:
    if front == "wrap":
        return [
            sys.executable,
            "-m",
            "mcp_guard",
            "wrap",
            "--http",
            "127.0.0.1:0",
            "--",
            sys.executable,
            str(SIGMA_SERVER),
        ]
    config = tmp / "gateway.json"
    servers: dict[str, Any] = {"sigma": {"command": sys.executable, "args": [str(SIGMA_SERVER)]}}
    config.write_text(json.dumps({"mcpServers": servers, "guard": {"profile": "standard"}}))
    return [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config), "--http", "127.0.0.1:0"]


@pytest.mark.parametrize("front", ["wrap", "serve"])
async def test_each_bad_host_or_origin_is_refused_in_each_era(front: str, tmp_path: Path) -> None:
    async with guard_at(tmp_path, _argv(front, tmp_path)) as (host, port, log_path):
        for era in ("handshake", "modern"):
            await judge_all(host, port, era)
        log = log_path.read_text()
    for line in LOG_LINES:
        assert line in log, (line, log[-2000:])
    assert "evil" not in log, "a header's value reached the log"


@pytest.mark.parametrize("parser", ["httptools", "h11"])
async def test_either_parser_gives_the_same_verdicts(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    use_parser(parser, monkeypatch)
    async with in_process_front(HttpConfig(port=0)) as (host, port, protocol):
        from uvicorn.protocols.http.h11_impl import H11Protocol

        assert issubclass(protocol, H11Protocol) is (parser == "h11")
        for era in ("handshake", "modern"):
            await judge_all(host, port, era)
