"""The gateway session asks who sent each request (issue 27 item 2): ``Session.principal_of``.

The HTTP front with OAuth fills the seam: its client side is an ``auth.principal.Callers`` (its own tests);
here a client link with a table of request ids stands in for it, so one session serves two callers, as the
shared 2026-07-28 channel does.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_guard.auth.principal import Principal
from mcp_guard.config import parse_config
from mcp_guard.sessions.gateway import serve_session
from tests.harness import TIMEOUT, Client, MemoryLink, ScriptedUpstream

pytestmark = pytest.mark.anyio

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("read", "refund")]
ANN = Principal("auth0|ann", "https://id.example", groups=frozenset({"support"}))


class CallersLink:
    """The guard's end of the client link, knowing who sent each request (an ``auth.principal.Callers``)."""

    def __init__(self, link: MemoryLink, callers: dict[Any, Principal]) -> None:
        self.link = link
        self.callers = callers

    async def receive(self) -> bytes:
        return await self.link.receive()

    async def send(self, line: bytes) -> None:
        await self.link.send(line)

    async def close_send(self) -> None:
        await self.link.close_send()

    async def aclose(self) -> None:
        await self.link.aclose()

    def principal_of(self, request_id: Any) -> Principal | None:
        return self.callers.get(request_id)


@pytest.mark.parametrize("host", [None, "openai-strict"])
async def test_each_request_is_listed_and_judged_for_its_own_caller(host: str | None) -> None:
    """With ``guard.presentFor`` too: a tool a caller's rule denies is refused by that rule (and journaled), not
    answered as unknown because the host was not shown it."""
    rules = {"support-agents": {"match": {"groups": ["support"]}, "deny": ["s/refund"]}}
    guard_settings: dict[str, Any] = {"principals": rules}
    if host is not None:
        guard_settings["presentFor"] = host
    data = {"mcpServers": {"s": {"command": "unused"}}, "guard": guard_settings}
    config = parse_config(json.dumps(data), environ={})
    upstream = ScriptedUpstream(TOOLS)
    client = Client()
    link = CallersLink(client.guard_link, {"ann-list": ANN, "ann-call": ANN})
    guard = serve_session(link, config, connectors={"s": upstream.connect}, drain_timeout=0.2)
    assert guard.callers is link
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
