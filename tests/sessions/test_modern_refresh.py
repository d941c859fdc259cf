"""The gateway's 2026-07-28 era with a slow or hung upstream, and the client's own listen streams at the end.

Red team 34: with one upstream never answering ``tools/list``, every call to the healthy one
waited the full request timeout (the envelope's listings were made under one lock, and each call
listed every upstream), and a call could end up "Unknown tool" for a tool a healthy server lists;
the client's open ``subscriptions/listen`` held the drain at its end for 10 s and was then answered
with a misleading -32603. Scripted upstreams over memory streams, as in ``test_session``.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_guard.sessions.gateway import serve_session
from tests.harness import Client, MemoryLink
from tests.sessions.test_session import MODERN, FakeServer, gateway_config, running

pytestmark = pytest.mark.anyio

README = {"uri": "file:///readme", "name": "readme"}


class SlowServer(FakeServer):
    """A 2026-07-28 server (tools, and resources when given) whose listings of ``hang`` are never answered."""

    def __init__(self, hang: set[str] | None = None, **kwargs: Any) -> None:
        super().__init__(faults={"modern"}, **kwargs)
        self.hang = hang or set()

    async def handle(self, link: MemoryLink, message: dict[str, Any]) -> bool:
        method = message["method"]
        if method in self.hang:
            return True  # never answered
        if method == "server/discover":
            caps: dict[str, Any] = {"tools": {}, **({"resources": {}} if self.resources is not None else {})}
            result = {"supportedVersions": ["2026-07-28"], "capabilities": caps, "resultType": "complete"}
            await self.send(link, {"jsonrpc": "2.0", "id": message["id"], "result": result})
            return True
        if method == "resources/read":
            result = {"contents": [{"uri": message["params"]["uri"], "text": "hello"}]}
            await self.send(link, {"jsonrpc": "2.0", "id": message["id"], "result": result})
            return True
        return await super().handle(link, message)


@pytest.mark.parametrize("method", ["tools/call", "resources/read"])
async def test_a_hung_server_does_not_hold_up_requests_to_the_others(method: str) -> None:
    """b never answers its listings: each request to a (listed again before each use: no ``ttlMs``) is
    answered as soon as a is listed, the first one (its name not known yet) too, and never "unknown"."""
    a = SlowServer(resources=[README])
    b = SlowServer(hang={"tools/list", "resources/list"}, resources=[])
    async with running({"a": a, "b": b}, request_timeout=3.0) as (_session, client):
        if method == "tools/call":
            params: dict[str, Any] = {"name": "a__echo", "arguments": {"text": "x"}, "_meta": MODERN}
        else:
            params = {"uri": README["uri"], "_meta": MODERN}
        for _ in range(3):
            with anyio.fail_after(1.5):  # (it was 3 s each: b's listing timed out first)
                answer = await client.request(method, params)
            assert "result" in answer, answer
        assert a.count("tools/list" if method == "tools/call" else "resources/list") >= 3  # listed before each use


async def test_requests_waiting_for_a_listing_that_failed_are_not_held_up_by_another_try() -> None:
    """Two ``tools/list`` at once while b hangs: both answered when b's listing times out (they were made
    one after the other, the second waiting for a second try), without b's tools."""
    a, b = SlowServer(), SlowServer(hang={"tools/list"})
    async with running({"a": a, "b": b}, request_timeout=1.5) as (_session, client):
        for request_id in (1, 2):
            await client.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {"_meta": MODERN}})
        with anyio.fail_after(2.5):  # (3 s before)
            answers = [await client.answer(1), await client.answer(2)]
        for answer in answers:
            assert [t["name"] for t in answer["result"]["tools"]] == ["a__echo", "a__hang", "a__die"]


async def listen(client: Client, request_id: str) -> None:
    """Open a listen stream for tool list changes; wait for its acknowledgement."""
    params = {"notifications": {"toolsListChanged": True}, "_meta": MODERN}
    await client.send({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params})
    while not any(m["method"] == "notifications/subscriptions/acknowledged" for m in client.notifications):
        await client.read()


async def test_the_clients_listen_stream_does_not_hold_up_the_end() -> None:
    """The client closes its side with its listen stream open: the session ends at once (it waited for
    the drain's 10 s), and the stream ends with it, unanswered (it got a misleading -32603)."""
    client = Client()
    session = serve_session(
        client.guard_link,
        gateway_config({"s": SlowServer()}),
        connectors={"s": SlowServer().connect},
        drain_timeout=5.0,
    )
    done = anyio.Event()

    async def run() -> None:
        await session.run()
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await listen(client, "L")
        await client.link.close_send()
        with anyio.fail_after(2.0):
            await done.wait()
        with anyio.move_on_after(0.2):
            while True:
                await client.read()
        assert not client.answers_to("L")
        tg.cancel_scope.cancel()


async def test_a_listen_stream_for_list_changes_outlives_a_server_that_dies() -> None:
    """A stream asking for list changes alone relies on no server's stream: when a server dies it stays
    open and says the tool list changed (docs/gateway.md, the 2026-07-28 era)."""
    a, b = SlowServer(), SlowServer()
    async with running({"a": a, "b": b}) as (_session, client):
        await listen(client, "L")
        answer = await client.request("tools/call", {"name": "a__die", "arguments": {}, "_meta": MODERN})
        assert answer["error"]["code"] == -32603
        while not any(m["method"] == "notifications/tools/list_changed" for m in client.notifications):
            await client.read()
        answer = await client.request("tools/call", {"name": "b__echo", "arguments": {"text": "x"}, "_meta": MODERN})
        assert "result" in answer
        assert not client.answers_to("L")
