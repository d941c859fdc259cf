"""``mcp-guard serve --metrics-port``: ``/metrics``, ``/health`` and ``/ready`` beside the gateway on stdio.

The gateway process is driven by the raw JSON-RPC client of ``tests/fronts/test_serve.py`` in
front of ``faulty_server.py``; the metrics listener's URL is read from the guard's stderr. What
is proven: the exact counter lines after a valid call, a refused call and an upstream restart;
``/ready`` 503 naming the server not up yet, 200 once it is; no argument value in ``/metrics``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from tests.fronts.test_serve import FAULTY, INIT, READ_TIMEOUT, faulty, serve, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SECRET = "sk-live-SECRET-0123456789abcdef"


async def metrics_url(stderr: Path) -> str:
    with anyio.fail_after(READ_TIMEOUT):
        while True:
            found = re.search(r"metrics: serving .* at (http://\S+)", stderr.read_text(errors="replace"))
            if found:
                return found.group(1)
            await anyio.sleep(0.05)


def lines_of(text: str, prefix: str) -> set[str]:
    return {line for line in text.splitlines() if line.startswith(prefix)}


async def test_metrics_count_calls_refusals_and_restarts(tmp_path: Path) -> None:
    servers = {"faulty": faulty(tmp_path / "faulty.record")}
    guard = {"servers": {"faulty": {"tools": {"echo": {"maxArgumentBytes": 64}}}}}
    config = write_config(tmp_path / "gw.json", servers, guard)
    async with serve(config, "--metrics-port", "0") as client:
        url = await metrics_url(tmp_path / "guard.stderr")
        await client.initialize()
        async with httpx.AsyncClient(timeout=READ_TIMEOUT) as http:
            assert (await http.get(f"{url}/health")).status_code == 200
            assert (await client.call("faulty__echo", {}))["result"]["content"][0]["text"] == "ok"
            refused = await client.call("faulty__echo", {"token": SECRET * 4})
            assert refused["result"]["_meta"]["mcp-guard/rejection"]["kind"] == "too_large"
            crashed = await client.call("faulty__crash", {})
            assert crashed["error"]["code"] == -32603
            with anyio.fail_after(READ_TIMEOUT):
                while "result" not in await client.call("faulty__echo", {}):
                    await anyio.sleep(0.2)
            scraped = await http.get(f"{url}/metrics")
            assert scraped.status_code == 200
            assert scraped.headers["content-type"].startswith("text/plain; version=")
            text = scraped.text
            assert lines_of(text, "mcp_guard_calls_total{") == {
                'mcp_guard_calls_total{outcome="ok",server="faulty",tool="echo"} 2.0',
                'mcp_guard_calls_total{outcome="rejected",server="faulty",tool="echo"} 1.0',
                'mcp_guard_calls_total{outcome="upstream_died",server="faulty",tool="crash"} 1.0',
            } | lines_of(text, 'mcp_guard_calls_total{outcome="upstream_died",server="faulty",tool="echo"}')
            assert lines_of(text, "mcp_guard_refusals_total{") == {
                'mcp_guard_refusals_total{kind="too_large",server="faulty"} 1.0'
            }
            assert lines_of(text, "mcp_guard_upstream_restarts_total{") == {
                'mcp_guard_upstream_restarts_total{server="faulty"} 1.0'
            }
            assert "mcp_guard_sessions 1.0" in text.splitlines()
            assert 'mcp_guard_call_duration_seconds_count{outcome="ok",server="faulty"}' in text
            assert SECRET not in text and "sk-live" not in text


async def test_ready_names_the_server_that_is_not_up(tmp_path: Path) -> None:
    servers = {
        "up": faulty(tmp_path / "up.record"),
        "held": {
            "command": sys.executable,
            "args": [str(FAULTY)],
            "env": {"RECORD_FILE": str(tmp_path / "h"), "HOLD_LIST": "1"},
        },
    }
    config = write_config(tmp_path / "gw.json", servers, {})
    async with serve(config, "--metrics-port", "0") as client:
        url = await metrics_url(tmp_path / "guard.stderr")
        # The answer waits for `held`'s first listing (which never comes): not awaited.
        await client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
        async with httpx.AsyncClient(timeout=READ_TIMEOUT) as http:
            with anyio.fail_after(READ_TIMEOUT):
                while True:
                    ready = await http.get(f"{url}/ready")
                    assert ready.status_code == 503
                    if ready.json() == {"ready": False, "not_ready": ["held"]}:
                        break
                    assert set(ready.json()["not_ready"]) <= {"held", "up"}
                    await anyio.sleep(0.1)
            assert (await http.get(f"{url}/health")).status_code == 200
            refused = await http.post(f"{url}/ready")
            assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"  # RFC 9110: 405 says Allow
            assert (await http.get(f"{url}/mcp")).status_code == 404


async def test_ready_once_every_server_is_up(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"up": faulty(tmp_path / "up.record")}, {})
    async with serve(config, "--metrics-port", "0") as client:
        url = await metrics_url(tmp_path / "guard.stderr")
        async with httpx.AsyncClient(timeout=READ_TIMEOUT) as http:
            before = await http.get(f"{url}/ready")
            await client.initialize()
            await client.tool_names()
            with anyio.fail_after(READ_TIMEOUT):
                while (after := await http.get(f"{url}/ready")).status_code != 200:
                    await anyio.sleep(0.1)
            assert after.json() == {"ready": True}
    # Upstreams start at the client's first message: before it, the server is not up.
    assert before.status_code == 503
    assert before.json() == {"ready": False, "not_ready": ["up"]}
