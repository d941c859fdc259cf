"""One ``initialize`` per session, in ``wrap`` and ``serve`` (the in-memory harness).

MCP: ``initialize`` is the first request of a session, sent once. Red team 37 F8: a second one was forwarded to
the server, and a restart replayed *its* params (docs/wrap.md: "the client's original ``initialize``
parameters"); ``wrap``'s batch gate followed it too. Now it is answered -32600 and goes nowhere.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_guard.sessions.relay import Relay
from mcp_guard.wire.jsonrpc import INVALID_REQUEST
from mcp_guard.wire.messages import ALREADY_INITIALIZED, BATCH_VERSION
from tests.harness import INIT, TIMEOUT, MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "die")]

SECOND = {"protocolVersion": "2024-11-05", "capabilities": {"sampling": {}}, "clientInfo": {"name": "second"}}


class Upstream(ScriptedUpstream):
    """The harness's scripted upstream, whose ``die`` call ends the connection unanswered; ``refuse_init``
    answers the next ``initialize`` with an error."""

    def __init__(self) -> None:
        super().__init__(TOOLS, on_call=self.dying)
        self.refuse_init = False

    def initializes(self) -> list[Any]:
        return [m["params"] for m in self.received if m.get("method") == "initialize"]

    async def handle(self, link: MemoryLink, message: dict[str, Any]) -> bool:
        if message["method"] == "initialize" and self.refuse_init:
            self.refuse_init = False
            error = {"code": -32602, "message": "Unsupported protocol version"}
            await self.send(link, {"jsonrpc": "2.0", "id": message["id"], "error": error})
            return True
        return await super().handle(link, message)

    @staticmethod
    async def dying(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        if message["params"]["name"] == "die":
            await link.aclose()
        else:
            await upstream.answer_call(link, message)


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_second_initialize_is_refused_and_a_restart_replays_the_first(command: str) -> None:
    upstream = Upstream()
    async with running_guard(command, upstream) as client:
        assert "result" in await client.request("tools/list")
        again = await client.request("initialize", SECOND, request_id=9)
        assert again["error"] == {"code": INVALID_REQUEST, "message": ALREADY_INITIALIZED}
        assert "result" in await client.request("ping")  # the session goes on
        assert upstream.initializes() == [INIT]  # never forwarded
        assert (await client.call(name(command, "die")))["error"]["code"] == -32603
        with anyio.fail_after(TIMEOUT):
            echoed = await client.call(name(command, "echo"))  # waits for the restart (0.5 s away)
        assert "result" in echoed, echoed
        assert upstream.connections == 2
        assert upstream.initializes() == [INIT, INIT]  # the restarted server got the first params


async def test_wraps_batch_gate_keeps_the_version_of_the_first_initialize() -> None:
    """A session that negotiated 2025-03-26 keeps its batches after a second initialize asking 2024-11-05."""
    upstream = Upstream()
    async with running_guard("wrap", upstream, initialize=False) as client:
        first = await client.request("initialize", {**INIT, "protocolVersion": BATCH_VERSION})
        assert first["result"]["protocolVersion"] == BATCH_VERSION
        assert "error" in await client.request("initialize", SECOND, request_id=9)
        routing = client.guard.routing
        assert isinstance(routing, Relay) and routing.negotiated == BATCH_VERSION
        await client.send(
            [{"jsonrpc": "2.0", "id": 10, "method": "ping"}, {"jsonrpc": "2.0", "id": 11, "method": "ping"}]
        )
        with anyio.fail_after(TIMEOUT):
            batch = await client.link.receive()
        assert sorted(m["id"] for m in json.loads(batch)) == [10, 11]


async def test_wrap_forwards_an_initialize_after_the_server_refused_the_first() -> None:
    """The server answered the first ``initialize`` with an error: the session is not initialized, and the client
    may try again (another protocol version); that one is what a restart replays."""
    upstream = Upstream()
    upstream.refuse_init = True
    async with running_guard("wrap", upstream, initialize=False) as client:
        refused = await client.request("initialize", SECOND)
        assert refused["error"]["code"] == -32602
        assert "result" in await client.request("initialize", INIT)
        assert upstream.initializes() == [SECOND, INIT]
        assert (await client.call("die"))["error"]["code"] == -32603
        with anyio.fail_after(TIMEOUT):
            assert "result" in await client.call("echo")
        assert upstream.initializes() == [SECOND, INIT, INIT]
