"""The MCP SDK's OAuth client completes the discovery flow against ``wrap --http --oauth-*`` (issue 27 item 4).

The real command line (``python -m mcp_guard wrap --http ... --oauth-issuer ... --oauth-resource ...``)
in front of the recording stdio server, and the SDK's ``ClientCredentialsOAuthProvider`` (an
``OAuthClientProvider``) on the SDK's streamable HTTP client: its first request is answered 401
with ``resource_metadata``; it reads the guard's RFC 9728 metadata, the test issuer's RFC 8414
metadata, gets a token for the guard's resource (RFC 8707 ``resource``) with the client-credentials
grant, and retries; then it lists tools and calls one. The client-credentials grant stands for the
authorization-code flow, whose browser step a test cannot take; the discovery is the same.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from tests.auth.issuer import AGENT_CLIENT, Issuer, running_issuer

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
RECORDING = HERE.parent / "e2e" / "recording_server.py"
HANG_GUARD = 60


class MemoryStorage:
    """The SDK's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_the_sdks_oauth_client_discovers_gets_a_token_and_calls(issuer: Issuer, tmp_path: Path) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    log_path = tmp_path / "guard.log"
    command = [
        sys.executable,
        "-m",
        "mcp_guard",
        "wrap",
        "--http",
        f"127.0.0.1:{port}",
        "--oauth-issuer",
        issuer.url,
        "--oauth-resource",
        resource,
        "--oauth-scope",
        "mcp:tools",
        "--",
        sys.executable,
        str(RECORDING),
    ]
    with log_path.open("wb") as log_file:
        guard = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log_file)
    try:
        with anyio.fail_after(HANG_GUARD):
            while "serving MCP streamable HTTP at" not in log_path.read_text(errors="replace"):
                assert guard.poll() is None, log_path.read_text(errors="replace")
                await anyio.sleep(0.05)
        provider = ClientCredentialsOAuthProvider(
            server_url=resource,
            storage=MemoryStorage(),
            client_id=AGENT_CLIENT[0],
            client_secret=AGENT_CLIENT[1],
            scope="mcp:tools",
            issuer=issuer.url,
        )
        with anyio.fail_after(HANG_GUARD):
            async with (
                httpx2.AsyncClient(auth=provider, timeout=30) as http,
                Client(streamable_http_client(resource, http_client=http), mode="legacy") as client,
            ):
                tools = await client.list_tools()
                assert "bash" in [tool.name for tool in tools.tools]
                result = await client.call_tool("bash", {"command": "ls"})
                assert result.is_error is False
    finally:
        guard.terminate()
        try:
            guard.wait(15)
        except subprocess.TimeoutExpired:
            guard.kill()
            guard.wait()
    assert issuer.token_resources[:1] == [resource]  # the token was asked for the guard's resource (RFC 8707)
    log = log_path.read_text(errors="replace")
    assert "the no token check failed" in log  # the first request had none: 401, then discovery
