"""The relay's upstream seam in process: a connector over memory streams, no processes.

This is what an HTTP upstream (or any transport) gets from the relay: the connector is called
again whenever the upstream has gone away, its failures are answered and backed off, and the
connection is entered and left in one task.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_guard.relay.guard import ToolTable
from mcp_guard.relay.relay import Relay
from mcp_guard.relay.upstream import LineLink, UpstreamStartError
from mcp_guard.wire.messages import GONE
from tests.harness import MemoryLink, link_pair

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


class FakeUpstream:
    """A connector whose servers answer ``initialize``, ``ping``, ``tools/list``, ``tools/call`` (and batches of pings).

    ``tools/call`` of ``die`` ends the connection without answering. ``fail`` makes the next
    connections fail to start. ``received`` holds, per connection, the messages it got.
    """

    def __init__(self) -> None:
        self.fail = False
        self.calls = 0
        self.received: list[list[dict[str, Any]]] = []
        self.tasks: list[str] = []

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[LineLink]:
        self.calls += 1
        if self.fail:
            raise UpstreamStartError("the fake upstream refuses to start")
        relay_side, server_side = link_pair()
        received: list[dict[str, Any]] = []
        self.received.append(received)
        self.tasks.append(repr(anyio.get_current_task().id))
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.serve, server_side, received)
            try:
                yield relay_side
            finally:
                self.tasks.append(repr(anyio.get_current_task().id))  # left in the task it was entered in
                tg.cancel_scope.cancel()
                await relay_side.aclose()

    async def serve(self, link: MemoryLink, received: list[dict[str, Any]]) -> None:
        while True:
            try:
                message = json.loads(await link.receive())
            except anyio.EndOfStream:
                await link.aclose()  # like a server exiting at the end of its input
                return
            if type(message) is list:  # a batch of pings: one batch of answers
                received.extend(message)
                answers = [{"jsonrpc": "2.0", "id": m["id"], "result": {}} for m in message if "id" in m]
                await link.send(json.dumps(answers).encode())
                continue
            received.append(message)
            method, request_id = message.get("method"), message.get("id")
            if request_id is None:
                continue
            result: dict[str, Any]
            if method == "initialize":
                result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "f"}}
            elif method == "tools/list":
                result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "die")]}
            elif method == "tools/call" and message["params"]["name"] == "die":
                await link.aclose()  # gone: the relay reads the end of the stream
                return
            elif method == "tools/call":
                result = {"content": [{"type": "text", "text": "ok"}]}
            else:
                result = {}
            await link.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode())


class ClientSide:
    """The test's side of the relay's client link."""

    def __init__(self) -> None:
        self.relay_link, self.link = link_pair()
        self.received: list[Any] = []

    async def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.link.send(json.dumps(message).encode())
        with anyio.fail_after(TIMEOUT):
            while True:
                got = json.loads(await self.link.receive())
                self.received.append(got)
                if got.get("id") == request_id and "method" not in got:
                    return got


@asynccontextmanager
async def running(upstream: FakeUpstream, **options: Any) -> AsyncIterator[tuple[Relay, ClientSide]]:
    client = ClientSide()
    relay = Relay(client.relay_link, upstream.connect, ToolTable(), **options)
    async with anyio.create_task_group() as tg:
        tg.start_soon(relay.run)
        yield relay, client
        await client.link.close_send()
        with anyio.fail_after(TIMEOUT):
            while relay.upstream is not None or not relay.client_closed:
                await anyio.sleep(0.01)


async def test_a_gone_upstream_is_reconnected_through_the_connector() -> None:
    upstream = FakeUpstream()
    async with running(upstream) as (relay, client):
        assert "result" in await client.request(1, "initialize", INIT)
        assert "result" in await client.request(2, "tools/list")
        died = await client.request(3, "tools/call", {"name": "die", "arguments": {"secret": "s3cr3t"}})
        assert died["error"] == {"code": -32603, "message": GONE}
        assert (await client.request(4, "tools/call", {"name": "echo"}))["result"]["content"][0]["text"] == "ok"
        assert upstream.calls == 2 and relay.restarts == 1
        assert [m.get("method") for m in upstream.received[1]] == [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
        ]
        assert upstream.received[1][0]["params"] == INIT
        assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in client.received
    # Each connection was entered and left in one task of the relay's (connectors may hold task groups).
    assert upstream.tasks[0] == upstream.tasks[1] and upstream.tasks[2] == upstream.tasks[3]


async def test_failed_connections_back_off_doubling_up_to_the_cap() -> None:
    upstream = FakeUpstream()
    async with running(upstream, backoff=(0.2, 0.8)) as (relay, client):
        assert "result" in await client.request(1, "tools/list")
        await client.request(2, "tools/call", {"name": "die"})
        upstream.fail = True
        waits = []
        for request_id in range(10, 14):
            failed = await client.request(request_id, "ping")
            assert failed["error"]["code"] == -32603
            waits.append(failed["error"]["message"].rsplit("after ", 1)[1])
        # The first connection lived under 10 s (one failure): the attempts failed with 0.4, 0.8, 0.8, 0.8 ahead.
        assert waits == ["0.4 s", "0.8 s", "0.8 s", "0.8 s"]
        upstream.fail = False
        assert "result" in await client.request(20, "ping")
        assert relay.restarts == 5 and upstream.calls == 6


async def test_a_request_is_answered_at_once_rather_than_wait_out_a_long_backoff() -> None:
    """The next start is more than a second away: the request gets an error now, naming the wait; the upstream
    is started again when the backoff has passed, with no request to prompt it (``peer.connection``: eager)."""
    upstream = FakeUpstream()
    async with running(upstream, backoff=(1.5, 30.0)) as (relay, client):
        assert "result" in await client.request(1, "tools/list")
        await client.request(2, "tools/call", {"name": "die"})  # lived under 10 s: the next start waits 1.5 s
        with anyio.fail_after(1.0):  # far less than the 1.5 s a held request would wait
            answered = await client.request(3, "ping")
        text = answered["error"]["message"]
        assert answered["error"]["code"] == -32603
        assert text.startswith("mcp-guard: the upstream server went away and failed to start"), text
        assert "1 time(s) in a row; the guard starts it again in 1." in text
        assert upstream.calls == 1 and relay.upstream is None
        with anyio.fail_after(TIMEOUT):
            while relay.upstream is None:  # started again once the 1.5 s have passed, unasked
                await anyio.sleep(0.05)
        assert upstream.calls == 2 and relay.restarts == 1
        assert "result" in await client.request(4, "ping")
        assert upstream.calls == 2


async def test_a_batch_sent_while_the_upstream_restarts_waits_for_it() -> None:
    """A JSON-RPC batch arriving while the upstream is being started again is queued like any message."""
    upstream = FakeUpstream()
    async with running(upstream, backoff=(0.3, 0.3)) as (_relay, client):
        assert "result" in await client.request(1, "tools/list")
        await client.request(2, "tools/call", {"name": "die"})
        await client.link.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode())
        batch = [{"jsonrpc": "2.0", "id": 4, "method": "ping"}, {"jsonrpc": "2.0", "id": 5, "method": "ping"}]
        await client.link.send(json.dumps(batch).encode())  # the restart is still waiting out its 0.3 s
        flat: list[Any] = []
        with anyio.fail_after(TIMEOUT):
            while len(flat) < 3:
                answer = json.loads(await client.link.receive())
                flat += [m for m in (answer if type(answer) is list else [answer]) if "method" not in m]
        assert sorted(m["id"] for m in flat) == [3, 4, 5]
        assert all(m["result"] == {} for m in flat)
