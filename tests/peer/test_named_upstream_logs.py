"""Every log line about a serve upstream names it (trial T4): the HTTP upstream's lines carry its label."""

from __future__ import annotations

import json
import logging
import socket

import anyio
import pytest

from mcp_guard.peer.http_upstream import http_connector, open_http_upstream
from mcp_guard.peer.upstream import UpstreamStartError

pytestmark = pytest.mark.anyio


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_an_http_upstreams_log_lines_start_with_its_label(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_guard")
    with anyio.fail_after(20):
        async with open_http_upstream(f"http://127.0.0.1:{_closed_port()}/mcp", label="upstream web: ") as upstream:
            await upstream.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode())
            await upstream.receive()  # the error answer for the request that could not be delivered
    lines = [r.getMessage() for r in caplog.records]
    assert any("did not answer ping" in x for x in lines), lines
    assert all(x.startswith("upstream web: ") for x in lines), lines


async def test_a_connector_whose_endpoint_cannot_be_reached_raises_a_start_error() -> None:
    """Entering a connection reaches the endpoint first: none there is an :class:`UpstreamStartError` naming
    the URL and the reason, as a command that cannot start is (``wrap`` then exits with status 1)."""
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    connect = http_connector(url, label="upstream web: ")
    with anyio.fail_after(20), pytest.raises(UpstreamStartError) as raised:
        async with connect():
            pass
    assert str(raised.value) == f"cannot reach the upstream at {url}: connection refused"
