"""Listing upstreams with the SDK client: stdio and streamable HTTP, raw tools, pages, failures."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_guard.commands.gateway import list_server, list_servers
from mcp_guard.config import GatewayConfig, HttpServer, StdioServer, parse_config

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
SIGMA = ROOT / "fixtures" / "sigma" / "server.py"
RECORDING = ROOT / "tests" / "e2e" / "recording_server.py"
TIMEOUT = 30.0

sys.path.insert(0, str(SIGMA.parent))
from server import build_server  # noqa: E402  (the Sigma fixture server, run in process over HTTP)


def stdio(name: str, *args: str, env: dict[str, str] | None = None) -> StdioServer:
    return StdioServer(name=name, command=sys.executable, args=list(args), env=env or {})


class RequireHeader:
    """ASGI middleware: 401 unless the request carries ``Authorization: Bearer <token>``; records what it saw."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token
        self.seen: list[str | None] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            value = headers.get(b"authorization")
            self.seen.append(value.decode() if value is not None else None)
            if value != f"Bearer {self.token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await self.app(scope, receive, send)


@asynccontextmanager
async def http_upstream(token: str) -> AsyncIterator[tuple[str, RequireHeader]]:
    """The Sigma server over streamable HTTP on a loopback port, behind a bearer token check."""
    app = RequireHeader(build_server().streamable_http_app(), token)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        with anyio.fail_after(TIMEOUT):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp", app
        finally:
            server.should_exit = True
    sock.close()


async def test_stdio_upstream_lists_every_tool() -> None:
    with anyio.fail_after(TIMEOUT):
        listing = await list_server(stdio("sigma", str(SIGMA)))
    assert listing.ok and listing.error is None
    assert listing.server_info == {"name": "sigma-fixture", "version": "1.0.0"}
    assert listing.protocol_version == "2025-11-25"
    files = sorted((SIGMA.parent).glob("*.json")) + sorted((SIGMA.parent / "extra").glob("*.json"))
    assert listing.tools == [json.loads(p.read_text(encoding="utf-8")) for p in files]


async def test_raw_tools_all_pages_env_passed(tmp_path: Path) -> None:
    """Malformed and unknown-field tools come back as sent (no SDK model in the way); every page is read."""
    tools: list[Any] = [{"name": f"t{i}", "inputSchema": {"type": "object"}, "x-vendor": {"i": i}} for i in range(5)]
    tools += [{"name": "no_schema"}, {"name": 7, "inputSchema": "nonsense"}, "not even an object"]
    (tmp_path / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    server = stdio("rec", str(RECORDING), env={"TOOLS_FILE": str(tmp_path / "tools.json"), "PAGE_SIZE": "3"})
    with anyio.fail_after(TIMEOUT):
        listing = await list_server(server)
    assert listing.ok, listing.error
    assert listing.tools == tools


async def test_http_upstream_with_headers_from_the_environment() -> None:
    config = parse_config(
        json.dumps(
            {"mcpServers": {"web": {"url": "http://placeholder/mcp", "headers": {"Authorization": "Bearer ${T}"}}}}
        ),
        environ={"T": "tok-123"},
    )
    headers = config.servers[0].headers  # type: ignore[union-attr]
    with anyio.fail_after(TIMEOUT):
        async with http_upstream("tok-123") as (url, app):
            listing = await list_server(HttpServer(name="web", url=url, headers=headers))
            refused = await list_server(HttpServer(name="web", url=url, headers={"Authorization": "Bearer wrong"}))
    assert listing.ok, listing.error
    assert listing.transport == "http" and len(listing.tools) == 15
    assert set(app.seen) == {"Bearer tok-123", "Bearer wrong"}
    assert refused.status == "failed" and refused.error is not None and "401" in refused.error
    assert "wrong" not in refused.error


FAILURES = [
    (
        "command not found",
        StdioServer(name="x", command="/nonexistent/mcp-server"),
        "cannot start `/nonexistent/mcp-server`: command not found",
    ),
    ("exits at once", stdio("x", "-c", "pass"), "the server closed the connection before it listed its tools"),
    (
        "not an MCP server",
        stdio("x", "-c", "print('hello'); import time; time.sleep(30)"),
        "the server did not list its tools within 3 s",
    ),
    (
        "nobody listening",
        HttpServer(name="x", url="http://127.0.0.1:9/mcp"),
        "cannot reach the server at http://127.0.0.1:9/mcp: connection refused",
    ),
]


@pytest.mark.parametrize(("server", "reason"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
async def test_failures_are_reported_not_raised(server: StdioServer | HttpServer, reason: str) -> None:
    with anyio.fail_after(TIMEOUT):
        listing = await list_server(server, timeout=3.0)
    assert listing.status == "failed" and listing.tools == []
    assert listing.error is not None and listing.error.startswith(reason)


async def test_one_failing_upstream_does_not_affect_the_others() -> None:
    config: GatewayConfig = parse_config(
        json.dumps(
            {
                "mcpServers": {
                    "broken": {"command": "/nonexistent/mcp-server"},
                    "sigma": {"command": sys.executable, "args": [str(SIGMA), "--only-sigma"]},
                    "off": {"command": "/nonexistent", "disabled": True},
                }
            }
        ),
        environ={},
    )
    with anyio.fail_after(TIMEOUT):
        listings = await list_servers(config, timeout=20.0)
    assert [(x.server, x.status, len(x.tools)) for x in listings] == [
        ("broken", "failed", 0),
        ("sigma", "ok", 10),
        ("off", "disabled", 0),
    ]
    assert listings[1].to_json()["tools"][0] == "AskUserQuestion"


LIBRARY = ROOT / "tests" / "e2e" / "library_server.py"


async def test_an_upstream_that_refuses_the_handshake_is_listed_in_the_2026_era() -> None:
    """``initialize`` answered -32022: the listing falls back to ``server/discover`` and lists with the envelope."""
    with anyio.fail_after(TIMEOUT):
        listing = await list_server(stdio("lib", str(LIBRARY), "--name", "alpha", "--modern-only"))
    assert listing.ok, listing.error
    assert listing.protocol_version == "2026-07-28"
    assert listing.server_info == {"name": "library-alpha", "version": "1.0.0"}
    assert [t["name"] for t in listing.tools] == ["echo", "touch", "add_prompt", "retype"]


REFUSES_EVERYTHING = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m:
        error = {"code": -32600, "message": "no " + m["method"]}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": error}), flush=True)
"""


async def test_an_upstream_that_refuses_both_eras_is_reported_with_the_handshake_error() -> None:
    with anyio.fail_after(TIMEOUT):
        listing = await list_server(stdio("x", "-c", REFUSES_EVERYTHING))
    assert listing.status == "failed"
    assert listing.error == "the server answered with an error: no initialize (code -32600)"
