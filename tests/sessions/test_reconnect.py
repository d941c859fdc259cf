"""The relay's upstream seam in process: the harness's scripted upstream (``tests/harness.py``), no processes.

This is what an HTTP upstream (or any transport) gets from the relay: the connector is called
again whenever the upstream has gone away (as soon as the backoff allows: ``peer.connection``),
its failures are answered and backed off, and the connection is entered and left in one task.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_guard.calls.tool_table import ToolTable
from mcp_guard.peer.upstream import UpstreamStartError
from mcp_guard.sessions.relay import Relay, wrap_session
from mcp_guard.wire.messages import BATCH_VERSION, GONE
from tests.harness import INIT, TIMEOUT, Client, MemoryLink, ScriptedUpstream, running_guard

pytestmark = pytest.mark.anyio

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "die")]


class Upstream(ScriptedUpstream):
    """The harness's scripted upstream: ``tools/call`` of ``die`` ends the connection unanswered;
    ``fail`` makes the next connections fail to start."""

    def __init__(self) -> None:
        super().__init__(TOOLS, on_call=self.dying)
        self.fail = False

    def starting(self) -> None:
        if self.fail:
            raise UpstreamStartError("the fake upstream refuses to start")

    @staticmethod
    async def dying(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        if message["params"]["name"] == "die":
            await link.aclose()  # gone: the relay reads the end of the stream
        else:
            await upstream.answer_call(link, message)


def relay_of(client: Any) -> Relay:
    routing = client.guard.routing
    assert isinstance(routing, Relay)
    return routing


async def test_a_gone_upstream_is_reconnected_through_the_connector() -> None:
    upstream = Upstream()
    async with running_guard("wrap", upstream) as client:
        relay = relay_of(client)
        assert "result" in await client.request("tools/list")
        died = await client.call("die", {"secret": "s3cr3t"})
        assert died["error"] == {"code": -32603, "message": GONE}
        assert (await client.call("echo"))["result"]["content"][0]["text"] == "echo ok"
        assert upstream.connections == 2 and relay.restarts == 1
        assert [m.get("method") for m in upstream.by_connection[1]] == [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
        ]
        assert upstream.by_connection[1][0]["params"] == INIT
        assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in client.notifications
    # Each connection was entered and left in one task of the relay's (connectors may hold task groups).
    assert upstream.tasks[0] == upstream.tasks[1] and upstream.tasks[2] == upstream.tasks[3]


async def test_failed_connections_back_off_doubling_up_to_the_cap() -> None:
    upstream = Upstream()
    async with running_guard("wrap", upstream, initialize=False, backoff=(0.2, 0.8)) as client:
        relay = relay_of(client)
        assert "result" in await client.request("tools/list")
        await client.call("die")
        upstream.fail = True
        waits = []
        for request_id in range(10, 14):
            failed = await client.request("ping", request_id=request_id)
            assert failed["error"]["code"] == -32603
            waits.append(failed["error"]["message"].rsplit("after ", 1)[1])
        # The first connection lived under 10 s (one failure): the attempts failed with 0.4, 0.8, 0.8, 0.8 ahead.
        assert waits == ["0.4 s", "0.8 s", "0.8 s", "0.8 s"]
        upstream.fail = False
        assert "result" in await client.request("ping", request_id=20)
        assert relay.restarts == 5 and upstream.connections == 6  # (four of them refused to start)


async def test_a_request_is_answered_at_once_rather_than_wait_out_a_long_backoff() -> None:
    """The next start is more than a second away: the request gets an error now, naming the wait; the upstream
    is started again when the backoff has passed, with no request to prompt it (``peer.connection``: eager)."""
    upstream = Upstream()
    async with running_guard("wrap", upstream, initialize=False, backoff=(1.5, 30.0)) as client:
        relay = relay_of(client)
        assert "result" in await client.request("tools/list")
        await client.call("die")  # lived under 10 s: the next start waits 1.5 s
        with anyio.fail_after(1.0):  # far less than the 1.5 s a held request would wait
            answered = await client.request("ping")
        text = answered["error"]["message"]
        assert answered["error"]["code"] == -32603
        assert text.startswith("mcp-guard: the upstream server went away and failed to start"), text
        assert "1 time(s) in a row; the guard starts it again in 1." in text
        assert upstream.connections == 1 and relay.upstream is None
        with anyio.fail_after(TIMEOUT):
            while relay.upstream is None:  # started again once the 1.5 s have passed, unasked
                await anyio.sleep(0.05)
        assert upstream.connections == 2 and relay.restarts == 1
        assert "result" in await client.request("ping")
        assert upstream.connections == 2


async def test_a_batch_sent_while_the_upstream_restarts_waits_for_it() -> None:
    """A JSON-RPC batch arriving while the upstream is being started again is queued like any message."""
    upstream = Upstream()
    async with running_guard("wrap", upstream, initialize=False, backoff=(0.3, 0.3)) as client:
        assert "result" in await client.request("initialize", {**INIT, "protocolVersion": BATCH_VERSION})
        assert "result" in await client.request("tools/list")
        await client.call("die")
        await client.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        batch = [{"jsonrpc": "2.0", "id": 4, "method": "ping"}, {"jsonrpc": "2.0", "id": 5, "method": "ping"}]
        await client.send(batch)  # the restart is still waiting out its 0.3 s
        flat: list[Any] = []
        with anyio.fail_after(TIMEOUT):
            while len(flat) < 3:
                answer = json.loads(await client.link.receive())
                flat += [m for m in (answer if type(answer) is list else [answer]) if "method" not in m]
        assert sorted(m["id"] for m in flat) == [3, 4, 5]
        assert all(m["result"] == {} for m in flat)


async def test_an_upstream_that_cannot_start_answers_initialize_with_the_cause() -> None:
    """issue 13 item 3: the client's ``initialize`` gets -32603 naming why, then the relay ends with the failure."""
    upstream = Upstream()
    upstream.fail = True
    client = Client()
    relay = wrap_session(client.guard_link, upstream.connect, ToolTable())
    failures: list[Exception] = []

    async def run() -> None:
        try:
            await relay.run()
        except UpstreamStartError as exc:
            failures.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        answer = await client.request("initialize", INIT)
        await client.link.close_send()
    assert answer["error"]["code"] == -32603
    assert answer["error"]["message"] == (
        "mcp-guard: the upstream server could not be started (the fake upstream refuses to start); mcp-guard exits"
    )
    assert len(failures) == 1 and upstream.connections == 1
