"""The gateway session asks who sent each request (issue 27 item 2): ``GatewaySession.principal_of``.

The HTTP front with OAuth fills the seam (its own tests); here a table of request ids stands in for it,
so one session serves two callers, as the shared 2026-07-28 channel does.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_guard.auth.principal import Principal
from mcp_guard.config import parse_config
from mcp_guard.sessions.gateway import GatewaySession
from tests.harness import TIMEOUT, Client, ScriptedUpstream

pytestmark = pytest.mark.anyio

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("read", "refund")]
ANN = Principal("auth0|ann", "https://id.example", groups=frozenset({"support"}))


async def test_each_request_is_listed_and_judged_for_its_own_caller() -> None:
    rules = {"support-agents": {"match": {"groups": ["support"]}, "deny": ["s/refund"]}}
    data = {"mcpServers": {"s": {"command": "unused"}}, "guard": {"principals": rules}}
    config = parse_config(json.dumps(data), environ={})
    upstream = ScriptedUpstream(TOOLS)
    client = Client()
    guard = GatewaySession(client.guard_link, config, connectors={"s": upstream.connect}, drain_timeout=0.2)
    callers: dict[Any, Principal] = {"ann-list": ANN, "ann-call": ANN}
    guard.principal_of = callers.get
    with anyio.fail_after(TIMEOUT):  # (a hang guard: the session ends once the client closed its side)
        async with anyio.create_task_group() as tg:
            tg.start_soon(guard.run)
            await client.initialize()
            ann = await client.request("tools/list", {}, "ann-list")
            other = await client.request("tools/list", {}, "other-list")
            assert [t["name"] for t in ann["result"]["tools"]] == ["s__read"]
            assert [t["name"] for t in other["result"]["tools"]] == ["s__read", "s__refund"]
            refused = await client.call("s__refund", {}, "ann-call")
            assert refused["result"]["isError"] is True
            assert refused["result"]["_meta"]["mcp-guard/rejection"]["rule"] == "support-agents"
            passed = await client.call("s__refund", {}, "other-call")
            assert passed["result"]["content"][0]["text"] == "refund ok"
            assert len(upstream.calls()) == 1  # the refused call never reached the server
            await client.link.close_send()
