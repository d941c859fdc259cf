"""``wrap --http``: ``/health``, ``/ready`` and ``/metrics`` beside ``/mcp``, behind the front's checks."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from tests.e2e.http_guard import INIT, TIMEOUT, call, http_client, open_guard, post, request

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SECRET = "sk-live-SECRET-0123456789abcdef"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_ops_endpoints_on_the_http_front(tmp_path: Path) -> None:
    token = "tok-" + os.urandom(12).hex()
    env = {"GUARD_TEST_TOKEN": token}
    async with open_guard(tmp_path, "--http-token-env", "GUARD_TEST_TOKEN", env=env) as guard, http_client() as client:
        base = guard.url.removesuffix("/mcp")
        auth = {"authorization": f"Bearer {token}"}
        with anyio.fail_after(TIMEOUT):
            for path in ("/health", "/ready", "/metrics"):
                assert (await client.get(base + path)).status_code == 401, path
                assert (await client.get(base + path, headers={**auth, "host": "evil.example"})).status_code == 403
            assert (await client.get(base + "/health", headers=auth)).json() == {"status": "up"}
            ready = await client.get(base + "/ready", headers=auth)  # no session: nothing to wait for
            assert (ready.status_code, ready.json()) == (200, {"ready": True})

            opened = await post(client, guard, request(0, "initialize", INIT), headers=auth)
            session = opened.headers["mcp-session-id"]
            headers = {**auth, "x-api-key": SECRET}
            await post(client, guard, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session, headers)
            refused = await post(client, guard, call(1, "add", {"a": SECRET, "b": 1}), session, headers)
            assert refused.json()["result"]["_meta"]["mcp-guard/rejection"]["kind"] == "validation"
            valid = await post(client, guard, call(2, "add", {"a": 2, "b": 3}), session, headers)
            assert valid.json()["result"].get("isError") is not True
            for n, made_up in enumerate(("user-secret-0001", "ec\u001b[2Jho\u202e")):  # names no server listed
                unknown = await post(client, guard, call(10 + n, made_up, {}), session, headers)
                assert "error" in unknown.json() or unknown.json()["result"].get("isError") is True
            assert (await client.get(base + "/ready", headers=auth)).status_code == 200

            scraped = await client.get(base + "/metrics", headers=auth)
            assert scraped.status_code == 200
            text = scraped.text
            assert 'mcp_guard_calls_total{outcome="rejected",server="",tool="add"} 1.0' in text.splitlines()
            assert 'mcp_guard_calls_total{outcome="ok",server="",tool="add"} 1.0' in text.splitlines()
            assert 'mcp_guard_call_duration_seconds_count{outcome="ok",server=""} 1.0' in text.splitlines()
            assert 'mcp_guard_refusals_total{kind="validation",server=""} 1.0' in text.splitlines()
            # A name no server listed is the client's text: one label for all of them (trial 3 T4).
            assert 'mcp_guard_calls_total{outcome="rejected",server="",tool="_unknown"} 2.0' in text.splitlines()
            assert "user-secret" not in text and "\u001b" not in text and "\u202e" not in text
            assert "mcp_guard_sessions 1.0" in text.splitlines()
            assert SECRET not in text and token not in text
            refused = await client.post(base + "/metrics", headers=auth)
            assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"  # HEAD is served (trial T10)
            assert (await client.head(base + "/metrics", headers=auth)).status_code == 200
